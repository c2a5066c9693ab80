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
#include "k_lookback.cuh"

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

/* The byte offset of loop element i in an operand: one multiply for a one-dimensional
 * loop (what ga_loop_coalesce leaves of contiguous operands), where ga_offset would
 * spend a 64-bit division (a GPU has no divide instruction: dozens of them). */
static GA_HD inline int64_t
ga_loop_offset(const ga_loop &l, const int64_t *strides, int64_t i)
{
    return l.ndim == 1 ? i * strides[0] : ga_offset(l.ndim, l.shape, strides, i);
}

enum { GA_IDX_GATHER = 0, GA_IDX_CHECK = 1, GA_IDX_SCATTER = 2 };

/* Elements per thread and iteration of k_index's one-dimensional path: their index
 * loads, then their element loads, are independent and in flight together. */
#define GA_IDX_UNROLL 4

/* One thread per element of the loop (the result for a gather, the value for a
 * scatter). CHECK only validates every index (a scatter runs it first, so that a bad
 * index leaves the destination untouched). SCATTER with index arrays first reads the
 * pending record: stream order makes the CHECK pass's writes visible, and a set record
 * (this scatter's bad index, or an earlier one not yet reported): write nothing. */
/* k_index over a one-dimensional loop (x[idx] with a 1-d index, x[mask]): offsets are
 * multiplies, and GA_IDX_UNROLL elements go at a time: their index loads together, then
 * their element loads together (each into a register first: a store between two loads
 * would keep the second from being issued before it, as they may alias), then the
 * stores. */
template <int SZ, int A>
static GA_DEV inline void
ga_index_1d(const ga_index_desc &d, int mode, ga_k_errrec *err)
{
    const ga_loop &l = d.loop;
    const int nidx = l.nargs - 2;
    const ga_operand &x = l.args[0];
    const int64_t s1 = l.args[1].strides[0], sx = x.strides[0];
    const int64_t stride = ga_gstride();
    /* 16-byte elements (complex128) two at a time: 32 bytes in flight, within 64
     * registers (four spilled under k_index's launch bounds) */
    constexpr int GA_IDX_U = SZ >= 16 ? 2 : GA_IDX_UNROLL;
    for (int64_t i0 = ga_gtid(); i0 < l.size; i0 += GA_IDX_U * stride) {
        int64_t off[GA_IDX_U];
        bool ok[GA_IDX_U];
#pragma unroll
        for (int u = 0; u < GA_IDX_U; u++) {
            const int64_t i = i0 + u * stride;
            ok[u] = i < l.size;
            off[u] = i * s1;
        }
        for (int j = 0; j < nidx; j++) {
            const ga_operand &ix = l.args[2 + j];
            int64_t v[GA_IDX_U];
#pragma unroll
            for (int u = 0; u < GA_IDX_U; u++) {
                const int64_t i = i0 + u * stride;
                v[u] = ix.is_scalar || !ok[u] ? ix.value.i
                                              : ga_ld<GA_INT64>(ix.data + i * ix.strides[0]);
            }
#pragma unroll
            for (int u = 0; u < GA_IDX_U; u++) {
                const int64_t w = v[u] < 0 ? v[u] + d.index_dims[j] : v[u];
                if (ok[u] && (w < 0 || w >= d.index_dims[j])) {
                    ga_k_report(err, (unsigned)j, v[u], d.index_dims[j]);
                    ok[u] = false;
                }
                /* a rejected index adds nothing: w * stride of one outside the
                 * axis (up to INT64_MAX, uint64's clamp in ga_index.c) overflows */
                off[u] += (ok[u] ? w : 0) * d.index_strides[j];
            }
        }
        if (mode == GA_IDX_CHECK) {
            continue;
        }
        ga_elem_bytes<SZ, A> e[GA_IDX_U] = {};
#pragma unroll
        for (int u = 0; u < GA_IDX_U; u++) {
            const int64_t i = i0 + u * stride;
            const char *src = mode == GA_IDX_GATHER ? l.args[1].data + off[u]
                              : x.is_scalar         ? (const char *)x.value.bytes
                                                    : x.data + i * sx;
            if (ok[u]) {
                memcpy(&e[u], GA_K_ELEMENT(src, A), SZ);
            }
        }
#pragma unroll
        for (int u = 0; u < GA_IDX_U; u++) {
            const int64_t i = i0 + u * stride;
            char *dst = mode == GA_IDX_GATHER ? x.data + i * sx : l.args[1].data + off[u];
            if (ok[u]) {
                memcpy(GA_K_ELEMENT(dst, A), &e[u], SZ);
            }
        }
    }
}

/* Launched with ga_cuda_launch_dims's 256 threads; 4 resident blocks (50% occupancy)
 * cap registers at 64 (16-byte elements four at a time took 86: 25%; two at a time,
 * ga_index_1d, fit). */
template <int SZ, int A>
__global__ void GA_LAUNCH_BOUNDS(256, 4)
k_index(const GA_GRID_CONSTANT ga_index_desc d, int mode, ga_k_errrec *err)
{
    const ga_loop &l = d.loop;
    const int nidx = l.nargs - 2;
    if (mode == GA_IDX_SCATTER && nidx > 0 &&
        *(volatile unsigned int *)&err->count != 0u) {
        return;
    }
    if (l.ndim == 1) {
        ga_index_1d<SZ, A>(d, mode, err);
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
 * One launch (k_nonzero), no host wait (the core knows `count`, a SUM of the mask, so
 * no count is read back here): a block per tile of GA_NZ_TILE mask elements (C
 * order), tiles taken from an atomic counter. Each thread owns GA_NZ_PER_THREAD
 * consecutive elements: 16-byte mask loads, GA_NZ_WORDS of them in flight, when the
 * mask is C-contiguous and 16-byte aligned (a byte at a time otherwise), turned into a
 * bit per element and counted with a popcount; a block-wide exclusive scan of the
 * threads' counts, the tile's prefix from the look-back over the tree of tile counts
 * (k_lookback.cuh, as the scans'), then each thread writes the positions of its true
 * elements from its first row on. Before issue 29: three launches (counts, a serial
 * thread over the tile counts, positions) with a 64-bit division per mask byte. */
static GA_HD inline bool
ga_mask_at(const ga_loop &m, int64_t i)
{
    const ga_operand &a = m.args[0];
    if (a.is_scalar) {
        return a.value.bytes[0] != 0;
    }
    return ga_ld<GA_BOOL>(a.data + ga_loop_offset(m, a.strides, i)) != 0;
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

#define GA_NZ_WORDS 4 /* 16-byte mask words a thread loads at once */
#define GA_NZ_PER_THREAD (16 * GA_NZ_WORDS)
#define GA_NZ_TILE ((int64_t)GA_RED_BLOCK * GA_NZ_PER_THREAD)

/* Bit k of the result: byte k of the 16 is nonzero (any nonzero byte is true, as
 * ga_ld<GA_BOOL> != 0 reads it). */
static GA_DEV inline unsigned
ga_nz_bits16(const uint4 &w)
{
    const unsigned v[4] = {w.x, w.y, w.z, w.w};
    unsigned bits = 0;
#pragma unroll
    for (int q = 0; q < 4; q++) {
        /* the high bit of each byte: set when the byte is nonzero */
        const unsigned t = (((v[q] & 0x7f7f7f7fu) + 0x7f7f7f7fu) | v[q]) & 0x80808080u;
        const unsigned nib = (t >> 7 & 1u) | (t >> 14 & 2u) | (t >> 21 & 4u) | (t >> 28 & 8u);
        bits |= nib << (4 * q);
    }
    return bits;
}

GA_BARRIER_KERNEL void GA_LAUNCH_BOUNDS(GA_RED_BLOCK, 4)
k_nonzero(ga_loop m, int contiguous, ga_scan_tree t, int64_t count, int64_t *out)
{
    __shared__ int64_t tile_pre;
    __shared__ unsigned long long tile_id;
    const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
    const unsigned long long tiles = (unsigned long long)t.tiles;
    for (;;) {
        if (threadIdx.x == 0) {
            tile_id = atomicAdd(t.next, 1ull);
        }
        __syncthreads();
        const unsigned long long id = tile_id;
        __syncthreads(); /* read by all before thread 0 takes the next one */
        if (id >= tiles) {
            return;
        }
        const int64_t j0 = (int64_t)id * GA_NZ_TILE + (int64_t)threadIdx.x * GA_NZ_PER_THREAD;
        unsigned long long bits = 0; /* bit k: element j0 + k is true */
        if (contiguous && j0 + GA_NZ_PER_THREAD <= m.size) {
            const uint4 *w = (const uint4 *)(m.args[0].data + j0);
            uint4 x[GA_NZ_WORDS];
#pragma unroll
            for (int u = 0; u < GA_NZ_WORDS; u++) {
                x[u] = ga_ld_vec(w + u);
            }
#pragma unroll
            for (int u = 0; u < GA_NZ_WORDS; u++) {
                bits |= (unsigned long long)ga_nz_bits16(x[u]) << (16 * u);
            }
        }
        else {
            GA_NO_UNROLL /* the strided path: an offset per element */
            for (int k = 0; k < GA_NZ_PER_THREAD; k++) {
                if (j0 + k < m.size && ga_mask_at(m, j0 + k)) {
                    bits |= 1ull << k;
                }
            }
        }
        int64_t total;
        const int64_t before = ga_block_exclusive_scan<ga_count_pol>(
            (int64_t)__popcll(bits), 0, &total);
        if (warp == 0) {
            int64_t pre = 0;
            if (t.levels > 0) {
                bool has;
                ga_scan_publish<int64_t>(t, 0, (int64_t)id, total, 0); /* before waiting */
                pre = ga_scan_prefix<int64_t>(t, 0, (int64_t)id, (int64_t)0, 0, &has);
                pre = has ? pre : 0;
            }
            if (lane == 0) {
                tile_pre = pre;
            }
        }
        __syncthreads();
        int64_t row = tile_pre + before;
        /* row < count: a mask changed after the core counted it would write past the
         * result; positions beyond it are dropped, never written */
        while (bits != 0 && row < count) {
            const int k = __ffsll((long long)bits) - 1;
            bits &= bits - 1;
            int64_t rem = j0 + k;
            GA_NO_UNROLL
            for (int d = m.ndim - 1; d >= 0; d--) {
                out[row * m.ndim + d] = rem % m.shape[d];
                rem /= m.shape[d];
            }
            row++;
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
    GA_TRY(ga_cuda_stream(dev, &stream));
    /* C-contiguous and 16-byte aligned: mask byte j is data[j], read 16 at a time */
    const ga_operand &a = mask->args[0];
    bool contiguous = !a.is_scalar && (uintptr_t)a.data % 16 == 0;
    int64_t step = 1;
    for (int d = mask->ndim - 1; d >= 0 && contiguous; d--) {
        contiguous = mask->shape[d] == 1 || a.strides[d] == step;
        step *= mask->shape[d];
    }
    const int64_t tiles = (mask->size + GA_NZ_TILE - 1) / GA_NZ_TILE;
    ga_scan_tree t;
    void *scratch = nullptr;
    size_t bytes = 0;
    GA_TRY(ga_scan_tree_alloc<int64_t>(dev, stream, 1, tiles, &t, &scratch, &bytes));
    GA_LAUNCH(k_nonzero, ga_k_blocks_for(tiles), GA_RED_BLOCK, 0, stream, *mask,
              contiguous ? 1 : 0, t, count, out);
    cudaError_t err = cudaGetLastError();
    ga_cuda_free(dev, scratch, bytes); /* stream-ordered */
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
