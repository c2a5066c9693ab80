/* k_sort.cu: stable segmented sort and binary search on a CUDA device (contracts:
 * ga_sort_desc / ga_search_desc in ga_backend.h; the CPU twin is ga_cpu_sort.c).
 *
 * The sort is a merge sort in which every element computes its own destination
 * ("merge by rank"): in a merge of a left run L and a right run R, an element of L at
 * offset i in L lands at i + (number of R elements strictly before it), an element of
 * R at offset j lands at j + (number of L elements not after it). Both counts are a
 * binary search in the sibling run. The tie rule (L uses the lower bound in R, R the
 * upper bound in L) puts equal keys of L before those of R, which is what makes the
 * merge stable, and no two elements get the same destination. Each element is one
 * independent thread of work: no merge path to partition, no serial merge loop.
 *
 *   1. k_sort_tiles: one block of 256 threads sorts a tile of GA_SORT_TILE (1024)
 *      elements in shared memory, 4 per thread, by the same rank rule from runs of 1
 *      up to the tile (10 rounds of: binary search, barrier, scatter, barrier).
 *      Rows shorter than a tile share a block: each row gets a segment of the next
 *      power of two >= n, so 100000 rows of 8 are 782 blocks of 128 rows, not 100000
 *      blocks with 8 busy threads. A row longer than a tile is cut into tiles.
 *   2. k_sort_merge: one launch per doubling of the run width from the tile up to the
 *      row, one thread per element over a grid-stride loop sized from the
 *      multiprocessor count, ping-ponging between two buffers. Runs never cross a row
 *      (the run arithmetic is on positions within the row), so many rows of any
 *      length merge in the same launch.
 *
 * Cost: 1 + ceil(log2(n / 1024)) launches, no host wait (scratch from the caching
 * allocator, freed stream-ordered). Each merge pass reads and writes every key (and
 * position when indices are wanted) once, plus log2(run) probes of the sibling run;
 * the probes of neighbouring threads hit neighbouring addresses in the last steps of
 * their searches, and the first steps hit the same few addresses (cache hits).
 * For 2^20 float32: 1 tile launch + 10 merge passes. A merge-path (co-rank per block,
 * then a shared-memory merge) would make the probes coalesced; the rank rule is
 * simpler and already O(n log n) with every thread busy.
 *
 * The order is the CPU's and NumPy's: ascending or descending with NaNs last either
 * way; -0.0 == 0.0 (a tie, so the input order stays); complex numbers by NaN class
 * (no NaN, NaN imaginary part, NaN real part, both) then real then imaginary part.
 * Keys move as stored (the sorted values are the keys themselves); positions within
 * the row move beside them only when indices are asked for.
 */
#include "k_common.cuh"

/* Threads of a tile-sorting block, elements per thread, and the tile they sort. */
#define GA_SORT_THREADS 256
#define GA_SORT_ITEMS 4
#define GA_SORT_TILE (GA_SORT_THREADS * GA_SORT_ITEMS)
#define GA_SORT_TILE_SHIFT 10 /* log2 of the tile */

/* ---- the order ---- */

template <bool DESC, class F>
static GA_HD inline bool
ga_sort_before_float(F a, F b)
{
    /* a NaN is before nothing; a number is before a NaN */
    return (DESC ? a > b : a < b) || (b != b && a == a);
}

template <bool DESC, class C>
static GA_HD inline bool
ga_sort_before_complex(C a, C b)
{
    const int ca = (a.re != a.re) * 2 + (a.im != a.im);
    const int cb = (b.re != b.re) * 2 + (b.im != b.im);
    if (ca != cb) {
        return ca < cb; /* NaN classes ascend in either direction: NaNs last */
    }
    if (ca == 0) {
        return DESC ? (a.re > b.re || (a.re == b.re && a.im > b.im))
                    : (a.re < b.re || (a.re == b.re && a.im < b.im));
    }
    if (ca == 1) {
        return DESC ? a.re > b.re : a.re < b.re;
    }
    if (ca == 2) {
        return DESC ? a.im > b.im : a.im < b.im;
    }
    return false;
}

/* a strictly before b in the sort order of dtype DT. */
template <int DT, bool DESC>
static GA_HD inline bool
ga_sort_before(typename ga_storage<DT>::type a, typename ga_storage<DT>::type b)
{
    if constexpr (DT == GA_FLOAT16) {
        return ga_sort_before_float<DESC>(ga_half_to_float(a), ga_half_to_float(b));
    }
    else if constexpr (DT == GA_FLOAT32 || DT == GA_FLOAT64) {
        return ga_sort_before_float<DESC>(a, b);
    }
    else if constexpr (DT == GA_COMPLEX64 || DT == GA_COMPLEX128) {
        return ga_sort_before_complex<DESC>(a, b);
    }
    else {
        return DESC ? a > b : a < b;
    }
}

/* The first position p in [lo, hi) of s at which v belongs: UPPER false, the first
 * key not before v (lower bound); UPPER true, the first key v is before (upper
 * bound). hi when there is none. Works on shared or global memory. */
template <int DT, bool DESC, bool UPPER, class I>
static GA_HD inline I
ga_sort_bound(const typename ga_storage<DT>::type *s, I lo, I hi,
              typename ga_storage<DT>::type v)
{
    while (lo < hi) {
        const I mid = lo + (hi - lo) / 2;
        const bool right = UPPER ? !ga_sort_before<DT, DESC>(v, s[mid])
                                 : ga_sort_before<DT, DESC>(s[mid], v);
        if (right) {
            lo = mid + 1;
        }
        else {
            hi = mid;
        }
    }
    return lo;
}

/* Where the element at position p of a row of n lands when the runs of width w
 * (a power of two) are merged pairwise: the rank rule at the top of this file. */
template <int DT, bool DESC, class I>
static GA_HD inline I
ga_sort_rank_dest(const typename ga_storage<DT>::type *row, I p, I n, I w,
                  typename ga_storage<DT>::type v)
{
    const I pair = p & ~(2 * w - 1);
    if (p - pair < w) {
        const I lo = pair + w;
        const I hi = pair + 2 * w < n ? pair + 2 * w : n;
        if (lo >= hi) {
            return p; /* the last run of the row has no sibling yet */
        }
        return p + (ga_sort_bound<DT, DESC, false>(row, lo, hi, v) - lo);
    }
    return p - w + (ga_sort_bound<DT, DESC, true>(row, pair, pair + w, v) - pair);
}

/* ---- 1. tiles in shared memory ---- */

/* Block b sorts GA_SORT_TILE / seg segments of seg = 2^seg_shift (<= the tile)
 * slots. Segment s is part s % tiles_per_row of row s / tiles_per_row, its positions
 * [part * seg, part * seg + seg) clipped to the row's n; slots past the row hold
 * nothing and take no part. The sorted segments go to out_keys / out_idx (either may
 * be NULL) at the same positions: runs of `seg` sorted within each row.
 * Registers: a thread keeps its 4 keys, positions and destinations across the barrier
 * of a round (complex128: 4 x 16 bytes of keys), so the 64-bit slot arithmetic is
 * done once per block (a 64-bit division per slot spilled complex128 on every
 * architecture) and a slot's row and start follow with a shift: a block covers
 * either whole rows (tiles_per_row 1, start 0) or one part of one row (one segment). */
template <int DT, bool DESC>
GA_BARRIER_KERNEL void GA_LAUNCH_BOUNDS(GA_SORT_THREADS, 4)
k_sort_tiles(const typename ga_storage<DT>::type *keys, int64_t rows, int64_t n,
             int seg_shift, int64_t tiles_per_row, int64_t blocks, typename ga_storage<DT>::type *out_keys,
             int64_t *out_idx)
{
    typedef typename ga_storage<DT>::type T;
    __shared__ T sk[GA_SORT_TILE];
    __shared__ int si[GA_SORT_TILE]; /* position within the segment */
    const int seg = 1 << seg_shift;
    for (int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
        const int64_t s0 = b << (GA_SORT_TILE_SHIFT - seg_shift); /* first segment */
        const int64_t row0 = s0 / tiles_per_row;
        const int64_t start = (s0 - row0 * tiles_per_row) << seg_shift;
        const int64_t left = n - start;
        const int full = (int)(left < seg ? left : seg);
        int len[GA_SORT_ITEMS]; /* elements in each slot's segment */
#pragma unroll
        for (int k = 0; k < GA_SORT_ITEMS; k++) {
            const int v = (int)threadIdx.x + k * GA_SORT_THREADS;
            const int64_t row = row0 + (v >> seg_shift);
            len[k] = row < rows ? full : 0;
            if ((v & (seg - 1)) < len[k]) {
                sk[v] = keys[row * n + start + (v & (seg - 1))];
                si[v] = v & (seg - 1);
            }
        }
        __syncthreads();
        for (int w = 1; w < seg; w *= 2) {
            T key[GA_SORT_ITEMS];
            int pos[GA_SORT_ITEMS], dst[GA_SORT_ITEMS];
#pragma unroll
            for (int k = 0; k < GA_SORT_ITEMS; k++) {
                const int v = (int)threadIdx.x + k * GA_SORT_THREADS;
                const int q = v & (seg - 1), base = v - q;
                dst[k] = -1;
                if (q < len[k]) {
                    key[k] = sk[v];
                    pos[k] = si[v];
                    dst[k] = base + ga_sort_rank_dest<DT, DESC>(sk + base, q, len[k], w,
                                                                key[k]);
                }
            }
            __syncthreads(); /* every search has read the runs before any moves */
#pragma unroll
            for (int k = 0; k < GA_SORT_ITEMS; k++) {
                if (dst[k] >= 0) {
                    sk[dst[k]] = key[k];
                    si[dst[k]] = pos[k];
                }
            }
            __syncthreads();
        }
#pragma unroll
        for (int k = 0; k < GA_SORT_ITEMS; k++) {
            const int v = (int)threadIdx.x + k * GA_SORT_THREADS;
            const int q = v & (seg - 1);
            if (q < len[k]) {
                const int64_t row_start = (row0 + (v >> seg_shift)) * n + start;
                if (out_keys != nullptr) {
                    out_keys[row_start + q] = sk[v];
                }
                if (out_idx != nullptr) {
                    out_idx[row_start + q] = start + si[v];
                }
            }
        }
        __syncthreads(); /* the tile is read out before the next one is loaded */
    }
}

/* ---- 2. merge passes in global memory ---- */

/* Merge the sorted runs of width w of every row pairwise: in (keys, idx) -> out.
 * idx / out_idx are NULL when no indices are wanted. */
template <int DT, bool DESC>
__global__ void GA_LAUNCH_BOUNDS(256, 4)
k_sort_merge(const typename ga_storage<DT>::type *keys, const int64_t *idx, int64_t rows,
             int64_t n, int64_t w, typename ga_storage<DT>::type *out_keys,
             int64_t *out_idx)
{
    typedef typename ga_storage<DT>::type T;
    const int64_t total = rows * n;
    for (int64_t g = ga_gtid(); g < total; g += ga_gstride()) {
        const int64_t row = g / n, base = row * n;
        const T v = keys[g];
        const int64_t dst = base + ga_sort_rank_dest<DT, DESC>(keys + base, g - base, n,
                                                               w, v);
        out_keys[dst] = v;
        if (out_idx != nullptr) {
            out_idx[dst] = idx[g];
        }
    }
}

/* ---- host side ---- */

template <int DT, bool DESC>
static int
ga_sort_launch(int dev, const ga_sort_desc *d)
{
    typedef typename ga_storage<DT>::type T;
    cudaStream_t stream;
    int st = ga_cuda_stream(dev, &stream);
    if (st != GA_OK) {
        return st;
    }
    const int64_t rows = d->rows, n = d->n, total = rows * n;
    int passes = 0;
    for (int64_t w = GA_SORT_TILE; w < n; w *= 2) {
        passes++;
    }
    /* Pass p (1-based) writes buffer p % 2 and the tiles write buffer 0, so the output
     * arrays are buffer `passes % 2` and scratch holds the other (and the keys when
     * only indices are wanted: the merges compare keys). */
    const int fin = passes % 2;
    T *kb[2] = {nullptr, nullptr};
    int64_t *ib[2] = {nullptr, nullptr};
    kb[fin] = (T *)d->values;
    ib[fin] = d->indices;
    const bool need_keys = passes > 0;
    const int64_t key_bufs = need_keys ? (d->values != nullptr ? 1 : 2) : 0;
    const int64_t idx_bufs = passes > 0 && d->indices != nullptr ? 1 : 0;
    if (total > (int64_t)(SIZE_MAX / 64)) {
        return ga_error(GA_ERR_VALUE, "sort: %lld elements are too many to sort",
                        (long long)total);
    }
    const size_t idx_bytes = (size_t)(idx_bufs * total) * sizeof(int64_t);
    const size_t key_bytes = (size_t)total * sizeof(T);
    const size_t bytes = idx_bytes + (size_t)key_bufs * key_bytes;
    char *scratch = nullptr;
    if (bytes > 0) {
        st = ga_cuda_alloc(dev, bytes, (void **)&scratch);
        if (st != GA_OK) {
            return st;
        }
        if (idx_bufs > 0) {
            ib[1 - fin] = (int64_t *)scratch;
        }
        char *k = scratch + idx_bytes; /* int64 first: both stay aligned */
        if (kb[fin] == nullptr) {
            kb[fin] = (T *)k;
            k += key_bytes;
        }
        kb[1 - fin] = (T *)k;
    }

    /* 1. tiles: a segment per row (its power of two) when rows are short */
    int seg_shift = GA_SORT_TILE_SHIFT;
    int64_t tiles_per_row = (n + GA_SORT_TILE - 1) / GA_SORT_TILE;
    if (n <= GA_SORT_TILE) {
        seg_shift = 0;
        while ((1 << seg_shift) < n) {
            seg_shift++;
        }
        tiles_per_row = 1;
    }
    const int64_t segs = rows * tiles_per_row;
    const int64_t per_tile = (int64_t)1 << (GA_SORT_TILE_SHIFT - seg_shift);
    const int64_t blocks = (segs + per_tile - 1) / per_tile;
    GA_LAUNCH((k_sort_tiles<DT, DESC>), ga_k_blocks_for(blocks), GA_SORT_THREADS, 0, stream,
              (const T *)d->keys, rows, n, seg_shift, tiles_per_row, blocks, kb[0], ib[0]);
    cudaError_t err = cudaGetLastError();

    /* 2. merges: a grid-stride loop over every element of every row */
    unsigned grid, block;
    ga_cuda_launch_dims(dev, total, &grid, &block);
    int p = 0;
    for (int64_t w = GA_SORT_TILE; w < n && err == cudaSuccess; w *= 2) {
        const int from = p % 2, to = 1 - from;
        GA_LAUNCH((k_sort_merge<DT, DESC>), grid, block, 0, stream, (const T *)kb[from],
                  (const int64_t *)ib[from], rows, n, w, kb[to], ib[to]);
        err = cudaGetLastError();
        p++;
    }
    if (scratch != nullptr) {
        ga_cuda_free(dev, scratch, bytes); /* stream-ordered: after the last pass */
    }
    if (err != cudaSuccess) {
        return ga_cuda_error(err, "sort launch", __FILE__, __LINE__);
    }
    return GA_OK;
}

/* One thread per value: its insertion point into the n ascending keys. */
template <int DT>
__global__ void GA_LAUNCH_BOUNDS(256, 4)
k_searchsorted(const typename ga_storage<DT>::type *sorted, int64_t n,
               const typename ga_storage<DT>::type *values, int64_t m, int right,
               int64_t *out)
{
    for (int64_t i = ga_gtid(); i < m; i += ga_gstride()) {
        const typename ga_storage<DT>::type v = values[i];
        out[i] = right ? ga_sort_bound<DT, false, true, int64_t>(sorted, 0, n, v)
                       : ga_sort_bound<DT, false, false, int64_t>(sorted, 0, n, v);
    }
}

template <int DT>
static int
ga_search_launch(int dev, const ga_search_desc *d)
{
    typedef typename ga_storage<DT>::type T;
    unsigned grid, block;
    cudaStream_t stream;
    int st = ga_k_setup(dev, d->m, &grid, &block, &stream);
    if (st != GA_OK) {
        return st;
    }
    GA_LAUNCH(k_searchsorted<DT>, grid, block, 0, stream, (const T *)d->sorted, d->n,
              (const T *)d->values, d->m, (int)d->right, d->out);
    GA_CUDA_TRY(cudaGetLastError());
    return GA_OK;
}

typedef int (*ga_sort_launcher)(int dev, const ga_sort_desc *d);
typedef int (*ga_search_launcher)(int dev, const ga_search_desc *d);

extern "C" int
ga_cuda_sort(int dev, const ga_sort_desc *d)
{
    static const ga_sort_launcher table[GA_NTYPES][2] = {
#define GA_X_SORT(e, name, kind, size, ch, ctype)                                      \
    {ga_sort_launch<e, false>, ga_sort_launch<e, true>},
        GA_DTYPES(GA_X_SORT)
#undef GA_X_SORT
    };
    if (d->dtype < 0 || d->dtype >= GA_NTYPES) {
        return ga_error(GA_ERR_TYPE, "sort: unsupported dtype %d", (int)d->dtype);
    }
    if (d->rows <= 0 || d->n <= 0 || (d->values == nullptr && d->indices == nullptr)) {
        return GA_OK;
    }
    int done = 0;
    int st = ga_cuda_radix_sort(dev, d, &done); /* numeric keys, rows past a tile */
    if (done || st != GA_OK) {
        return st;
    }
    return table[d->dtype][d->descending != 0](dev, d);
}

extern "C" int
ga_cuda_searchsorted(int dev, const ga_search_desc *d)
{
    static const ga_search_launcher table[GA_NTYPES] = {
#define GA_X_SEARCH(e, name, kind, size, ch, ctype) ga_search_launch<e>,
        GA_DTYPES(GA_X_SEARCH)
#undef GA_X_SEARCH
    };
    if (d->dtype < 0 || d->dtype >= GA_NTYPES) {
        return ga_error(GA_ERR_TYPE, "searchsorted: unsupported dtype %d", (int)d->dtype);
    }
    if (d->m <= 0) {
        return GA_OK;
    }
    return table[d->dtype](dev, d);
}
