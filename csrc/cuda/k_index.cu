/* k_index.cu: integer-array indexing (gather, scatter), nonzero and arange on a CUDA
 * device.
 *
 * Bad indices without a host wait: a kernel cannot return a status, so the index
 * kernels write the first out-of-range index they meet into the operation's failure
 * slot (ga_cuda_faults.cu). The gather/scatter call returns at once; the slot's
 * outcome reaches the core's record for that operation at the next host wait on the
 * device, and the core marks the operation's result failed (docs/DESIGN.md, "Failed
 * queued work"). Index arrays made from host data never get here out of range: the
 * core checks them on the host before the upload (ga_index.c).
 */
#include "k_block.cuh"
#include "k_common.cuh"

#include <stdlib.h>
#include <string.h>

/* Element copies by size SZ and alignment A (the element's, or its parts' for
 * complex): accesses A bytes wide, since every operand is element-aligned. */
template <int SZ, int A> struct alignas(A) ga_elem_bytes {
    unsigned char b[SZ];
};

template <int SZ, int A>
static GA_HD inline void
ga_copy_elem(char *dst, const char *src)
{
    ga_elem_bytes<SZ, A> e;
    memcpy(&e, GA_K_ELEMENT(src, A), SZ);
    memcpy(GA_K_ELEMENT(dst, A), &e, SZ);
}

enum { GA_IDX_GATHER = 0, GA_IDX_CHECK = 1, GA_IDX_SCATTER = 2 };

/* One thread per element of the loop (the result for a gather, the value for a
 * scatter). CHECK only validates every index (a scatter runs it first, so that a bad
 * index leaves the destination untouched). SCATTER with index arrays first reads the
 * pending record: stream order makes the CHECK pass's writes visible, and a set record
 * (this scatter's bad index, or an earlier one not yet reported): write nothing. */
template <int SZ, int A>
__global__ void
k_index(const GA_GRID_CONSTANT ga_index_desc d, int mode, ga_k_errrec *err)
{
    const ga_loop &l = d.loop;
    const int nidx = l.nargs - 2;
    if (mode == GA_IDX_SCATTER && nidx > 0 &&
        *(volatile unsigned int *)&err->count != 0u) {
        return;
    }
    for (int64_t i = ga_gtid(); i < l.size; i += ga_gstride()) {
        int64_t off = ga_offset(l.ndim, l.shape, l.args[1].strides, i);
        bool ok = true;
        for (int j = 0; j < nidx; j++) {
            const ga_operand &ix = l.args[2 + j];
            int64_t v;
            if (ix.is_scalar) {
                v = ix.value.i;
            }
            else {
                v = ga_ld<GA_INT64>(ix.data + ga_offset(l.ndim, l.shape, ix.strides, i));
            }
            int64_t w = v < 0 ? v + d.index_dims[j] : v;
            if (w < 0 || w >= d.index_dims[j]) {
                ga_k_report(err, (unsigned)j, v, d.index_dims[j]);
                ok = false;
                break;
            }
            off += w * d.index_strides[j];
        }
        if (!ok || mode == GA_IDX_CHECK) {
            continue;
        }
        char *base = l.args[1].data + off;
        const ga_operand &x = l.args[0];
        if (mode == GA_IDX_GATHER) {
            ga_copy_elem<SZ, A>(x.data + ga_offset(l.ndim, l.shape, x.strides, i), base);
        }
        else if (x.is_scalar) {
            ga_copy_elem<SZ, A>(base, (const char *)x.value.bytes);
        }
        else {
            ga_copy_elem<SZ, A>(base, x.data + ga_offset(l.ndim, l.shape, x.strides, i));
        }
    }
}

static int
ga_index_launch(int dev, const ga_index_desc *d, int mode, ga_k_errrec *err,
                cudaStream_t stream)
{
    unsigned grid, block;
    ga_cuda_launch_dims(dev, d->loop.size, &grid, &block);
    const int dt = d->loop.args[1].dtype;
    const bool cplx = dt == GA_COMPLEX64 || dt == GA_COMPLEX128;
    switch (ga_k_itemsize(dt) * (cplx ? -1 : 1)) {
    case 1:
        GA_LAUNCH((k_index<1, 1>), grid, block, 0, stream, *d, mode, err);
        break;
    case 2:
        GA_LAUNCH((k_index<2, 2>), grid, block, 0, stream, *d, mode, err);
        break;
    case 4:
        GA_LAUNCH((k_index<4, 4>), grid, block, 0, stream, *d, mode, err);
        break;
    case 8:
        GA_LAUNCH((k_index<8, 8>), grid, block, 0, stream, *d, mode, err);
        break;
    case -8: /* complex64: two float parts */
        GA_LAUNCH((k_index<8, 4>), grid, block, 0, stream, *d, mode, err);
        break;
    case -16: /* complex128: two double parts */
        GA_LAUNCH((k_index<16, 8>), grid, block, 0, stream, *d, mode, err);
        break;
    default:
        return ga_error(GA_ERR_TYPE, "indexing: unsupported dtype %s",
                        ga_k_dtype_name(d->loop.args[1].dtype));
    }
    GA_CUDA_TRY(cudaGetLastError());
    return GA_OK;
}

/* The check and the write of one operation share its failure slot
 * (ga_cuda_faults.cu): the check records a bad index there, and the scatter's write
 * pass reads it on the device (stream order makes the check's writes visible) and
 * writes nothing when it is set. No host wait: the slot's outcome reaches `rec` at
 * the next wait on the device. */
static int
ga_index_run(int dev, const ga_index_desc *d, bool scatter, ga_fault_record *rec)
{
    const ga_loop *l = &d->loop;
    if (l->nargs < 2 || l->nargs > GA_MAXARGS) {
        return ga_error(GA_ERR_VALUE, "indexing: bad operand count %d", (int)l->nargs);
    }
    if (l->size <= 0) {
        return GA_OK;
    }
    cudaStream_t stream;
    GA_TRY(ga_cuda_stream(dev, &stream));
    if (l->nargs == 2) {
        /* no index arrays: nothing can be out of range, the record is not kept */
        return ga_index_launch(dev, d, scatter ? GA_IDX_SCATTER : GA_IDX_GATHER, NULL,
                               stream);
    }
    ga_k_errrec *err = NULL;
    GA_TRY(ga_cuda_fault_slot(dev, stream, rec, &err));
    int st = ga_index_launch(dev, d, scatter ? GA_IDX_CHECK : GA_IDX_GATHER, err, stream);
    if (st == GA_OK && scatter) {
        st = ga_index_launch(dev, d, GA_IDX_SCATTER, err, stream);
    }
    if (st != GA_OK) {
        ga_cuda_fault_unslot(dev, err);
    }
    return st;
}

/* A gather writes only its (new) result, so one pass is enough: on a bad index the
 * core marks the result failed. Scatter duplicates: when two elements of the value
 * go to the same place, which one lands is unspecified (NumPy: the last). */
extern "C" int
ga_cuda_index_checked(int dev, const ga_index_desc *d, int scatter, ga_fault_record *rec)
{
    return ga_index_run(dev, d, scatter != 0, rec);
}

/* The table's plain entries: a bad index is reported by the next wait on the device
 * (an ownerless slot), as a GPU's sticky error. The core uses index_checked. */
extern "C" int
ga_cuda_gather(int dev, const ga_index_desc *d)
{
    return ga_index_run(dev, d, false, NULL);
}

extern "C" int
ga_cuda_scatter(int dev, const ga_index_desc *d)
{
    return ga_index_run(dev, d, true, NULL);
}

/* ---- nonzero ----
 * The mask (C order) is cut into tiles so that a block per tile covers every
 * multiprocessor; three launches, no host wait (the core knows `count`, a SUM of the
 * mask, so no count is read back here):
 *   1. k_nonzero_counts: a block per tile counts its true elements;
 *   2. k_nonzero_offsets: one thread turns the counts into each tile's first output
 *      row (an exclusive scan over a few hundred tiles);
 *   3. k_nonzero_write: a block per tile walks it in rounds of GA_NZ_ITEMS consecutive
 *      elements per thread; a block-wide exclusive scan of the threads' counts gives
 *      each thread its first row, and it writes the positions of its true elements. */
static GA_HD inline bool
ga_mask_at(const ga_loop &m, int64_t i)
{
    const ga_operand &a = m.args[0];
    if (a.is_scalar) {
        return a.value.bytes[0] != 0;
    }
    return ga_ld<GA_BOOL>(a.data + ga_offset(m.ndim, m.shape, a.strides, i)) != 0;
}

/* Counting as a block policy (k_block.cuh). */
struct ga_count_pol {
    typedef int64_t acc_t;
    typedef int64_t state_t;
    static GA_HD int64_t
    init(int op)
    {
        (void)op;
        return 0;
    }
    static GA_HD int64_t
    value(const int64_t &v)
    {
        return v;
    }
    static GA_HD int64_t
    combine(int64_t a, int64_t b, int op)
    {
        (void)op;
        return a + b;
    }
};

#define GA_NZ_ITEMS 8

GA_BARRIER_KERNEL void GA_LAUNCH_BOUNDS(GA_RED_BLOCK, 4)
k_nonzero_counts(ga_loop m, int64_t tiles, int64_t *counts)
{
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        int64_t k0, k1, c = 0;
        ga_chunk(m.size, tiles, t, &k0, &k1);
        for (int64_t i = k0 + threadIdx.x; i < k1; i += blockDim.x) {
            c += ga_mask_at(m, i) ? 1 : 0;
        }
        c = ga_block_reduce<ga_count_pol>(c, 0);
        if (threadIdx.x == 0) {
            counts[t] = c;
        }
    }
}

__global__ void
k_nonzero_offsets(int64_t tiles, int64_t *counts)
{
    if (ga_gtid() == 0) {
        int64_t run = 0;
        for (int64_t t = 0; t < tiles; t++) {
            int64_t c = counts[t];
            counts[t] = run;
            run += c;
        }
    }
}

GA_BARRIER_KERNEL void GA_LAUNCH_BOUNDS(GA_RED_BLOCK, 4)
k_nonzero_write(ga_loop m, int64_t tiles, const int64_t *first, int64_t count, int64_t *out)
{
    const int64_t round = (int64_t)blockDim.x * GA_NZ_ITEMS;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        int64_t k0, k1;
        ga_chunk(m.size, tiles, t, &k0, &k1);
        int64_t carry = first[t];
        for (int64_t base = k0; base < k1; base += round) {
            const int64_t j0 = base + (int64_t)threadIdx.x * GA_NZ_ITEMS;
            const int64_t j1 = j0 + GA_NZ_ITEMS < k1 ? j0 + GA_NZ_ITEMS : k1;
            int64_t c = 0;
            for (int64_t j = j0; j < j1; j++) {
                c += ga_mask_at(m, j) ? 1 : 0;
            }
            int64_t total;
            int64_t row = carry + ga_block_exclusive_scan<ga_count_pol>(c, 0, &total);
            /* row < count: the mask changed after the core counted it would write
             * past the result; positions beyond it are dropped, never written */
            for (int64_t j = j0; j < j1 && row < count; j++) {
                if (!ga_mask_at(m, j)) {
                    continue;
                }
                int64_t rem = j;
                for (int k = m.ndim - 1; k >= 0; k--) {
                    out[row * m.ndim + k] = rem % m.shape[k];
                    rem /= m.shape[k];
                }
                row++;
            }
            carry += total;
        }
    }
}

extern "C" int
ga_cuda_nonzero(int dev, const ga_loop *mask, int64_t count, int64_t *out)
{
    if (count <= 0 || mask->ndim == 0 || mask->size <= 0) {
        return GA_OK; /* nothing to write: (0, ndim) or (count, 0) */
    }
    if (mask->args[0].dtype != GA_BOOL) {
        return ga_error(GA_ERR_TYPE, "nonzero: the mask must be bool, not %s",
                        ga_k_dtype_name(mask->args[0].dtype));
    }
    cudaStream_t stream;
    int st = ga_cuda_stream(dev, &stream);
    if (st != GA_OK) {
        return st;
    }
    /* about 4 blocks per multiprocessor, each tile at least one round of its block */
    const int64_t min_tile = (int64_t)GA_RED_BLOCK * GA_NZ_ITEMS;
    int64_t tiles = 4 * (int64_t)ga_cuda_sm_count(dev);
    if (tiles > (mask->size + min_tile - 1) / min_tile) {
        tiles = (mask->size + min_tile - 1) / min_tile;
    }
    int64_t *first = nullptr;
    st = ga_cuda_alloc(dev, (size_t)tiles * sizeof(int64_t), (void **)&first);
    if (st != GA_OK) {
        return st;
    }
    const unsigned blocks = ga_k_blocks_for(tiles);
    GA_LAUNCH(k_nonzero_counts, blocks, GA_RED_BLOCK, 0, stream, *mask, tiles, first);
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) {
        GA_LAUNCH(k_nonzero_offsets, 1, 32, 0, stream, tiles, first);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess) {
        GA_LAUNCH(k_nonzero_write, blocks, GA_RED_BLOCK, 0, stream, *mask, tiles,
                  (const int64_t *)first, count, out);
        err = cudaGetLastError();
    }
    ga_cuda_free(dev, first, (size_t)tiles * sizeof(int64_t)); /* stream-ordered */
    if (err != cudaSuccess) {
        return ga_cuda_error(err, "nonzero launch", __FILE__, __LINE__);
    }
    return GA_OK;
}

/* ---- arange: out[i] = start + i * step ---- */

/* i * step rounded on its own: nvcc would otherwise fuse start + i * step into one
 * FMA, and the GPU's values would differ in the last bit from the CPU's. */
static GA_HD inline double
ga_mul_rn(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

template <int DT>
__global__ void
k_arange(ga_arange_desc d)
{
    constexpr bool is_int = DT != GA_BOOL && DT != GA_FLOAT16 && DT != GA_FLOAT32 &&
                            DT != GA_FLOAT64 && DT != GA_COMPLEX64 && DT != GA_COMPLEX128;
    char *out = d.out;
    const int sz = (int)sizeof(typename ga_storage<DT>::type);
    for (int64_t i = ga_gtid(); i < d.n; i += ga_gstride()) {
        if constexpr (is_int) {
            /* exact, wrapping like a cast */
            uint64_t v = (uint64_t)d.istart + (uint64_t)i * (uint64_t)d.istep;
            ga_st_as(out + i * sz, DT, v);
        }
        else {
            ga_st_as(out + i * sz, DT, d.start + ga_mul_rn((double)i, d.step));
        }
    }
}

typedef void (*ga_arange_kernel)(ga_arange_desc);

extern "C" int
ga_cuda_arange(int dev, const ga_arange_desc *d)
{
    static const ga_arange_kernel kernels[GA_NTYPES] = {
#define GA_X_AR(e, name, kind, size, ch, ctype) k_arange<e>,
        GA_DTYPES(GA_X_AR)
#undef GA_X_AR
    };
    if (d->dtype < 0 || d->dtype >= GA_NTYPES) {
        return ga_error(GA_ERR_TYPE, "arange: bad dtype %d", (int)d->dtype);
    }
    if (d->n <= 0) {
        return GA_OK;
    }
    unsigned grid, block;
    cudaStream_t stream;
    int st = ga_k_setup(dev, d->n, &grid, &block, &stream);
    if (st != GA_OK) {
        return st;
    }
    GA_LAUNCH(kernels[d->dtype], grid, block, 0, stream, *d);
    GA_CUDA_TRY(cudaGetLastError());
    return GA_OK;
}
