/* k_lookback.cuh: the one-pass look-back over a fixed tree of tile totals, shared by
 * the kernels that cut rows into tiles and need each tile's prefix: scans (k_scan.cu)
 * and nonzero (k_index.cu). The tree and why it is fixed: k_scan.cu's header.
 *
 * A kernel using it: a block per tile, tile ids taken in order from t.next (an atomic
 * counter), so a tile only waits for tiles with smaller ids; warp 0 calls
 * ga_scan_publish (the tile's total) and then ga_scan_prefix (the total of the tiles
 * before it in its row), all 32 lanes together. Partial results are of any plain type
 * A combined by ga_rm_sp(a, b, prod) (ga_reduce_math.h), with "empty" flags instead
 * of identities.
 */
#ifndef GA_K_LOOKBACK_CUH
#define GA_K_LOOKBACK_CUH

#include "k_block.cuh"
#include "k_common.cuh"

#include "ga_reduce_math.h"

#define GA_SCAN_LEVELS 8 /* 32^8 tiles per row: more than any array holds */

/* a earlier, b later; either may be empty (no element yet) */
template <class A>
static GA_HD inline A
ga_scan_cat(A a, bool ha, A b, bool hb, int prod)
{
    return !ha ? b : !hb ? a : ga_rm_sp(a, b, prod);
}

/* Inclusive scan over the warp's lanes in lane order of (v, has): empty lanes (only
 * at the end of a stretch) pass their predecessors' result on. */
template <class A>
static GA_DEV inline A
ga_warp_scan_incl(A v, bool &has, int prod)
{
    const int lane = (int)threadIdx.x % 32;
    for (int d = 1; d < 32; d *= 2) {
        const A y = ga_shfl_up(v, d);
        const bool yh = __shfl_up_sync(0xffffffffu, has ? 1 : 0, (unsigned)d) != 0;
        if (lane >= d && yh) {
            v = has ? ga_rm_sp(y, v, prod) : y;
            has = true;
        }
    }
    return v;
}

/* Fold of the lanes' (v, has) in lane order, by a fixed tree (the same grouping on
 * every run): valid in lane 0, broadcast to all. */
template <class A>
static GA_DEV inline A
ga_warp_fold(A v, bool &has, int prod)
{
    for (int d = 16; d > 0; d /= 2) {
        const A y = ga_shfl_down(v, d);
        const bool yh = __shfl_down_sync(0xffffffffu, has ? 1 : 0, (unsigned)d) != 0;
        v = ga_scan_cat(v, has, y, yh, prod);
        has = has || yh;
    }
    has = __shfl_sync(0xffffffffu, has ? 1 : 0, 0) != 0;
    return ga_shfl_by_idx(v, 0);
}

/* The look-back tree of one launch (scratch memory, see the top of the file). Level l
 * has count[l] nodes per row; node j of row r is entry r * count[l] + j of agg[l]
 * (A), flag[l] (nonzero once agg is published) and, for l >= 1, arrived[l] (children
 * that have published). `next` hands out tile ids. */
typedef struct {
    int levels;    /* 0: a tile is a whole row, nothing to look back at */
    int64_t tiles; /* per row */
    int64_t count[GA_SCAN_LEVELS];
    char *agg[GA_SCAN_LEVELS];
    unsigned *flag[GA_SCAN_LEVELS];
    unsigned *arrived[GA_SCAN_LEVELS];
    unsigned long long *next;
} ga_scan_tree;

/* Accesses to the tree that other blocks make or read while this one runs: volatile
 * (past the non-coherent L1), ordered by __threadfence: value, fence, flag on the
 * writing side; flag, fence, value on the reading side. */
template <class T>
static GA_DEV inline T
ga_vload(const T *p)
{
    typedef typename std::conditional<sizeof(T) % 8 == 0, unsigned long long,
                                      unsigned>::type word;
    word w[sizeof(T) / sizeof(word)];
    for (unsigned i = 0; i < sizeof(T) / sizeof(word); i++) {
        w[i] = ((const volatile word *)p)[i];
    }
    T v;
    memcpy(&v, w, sizeof(T));
    return v;
}

template <class T>
static GA_DEV inline void
ga_vstore(T *p, T v)
{
    typedef typename std::conditional<sizeof(T) % 8 == 0, unsigned long long,
                                      unsigned>::type word;
    word w[sizeof(T) / sizeof(word)];
    memcpy(w, &v, sizeof(T));
    for (unsigned i = 0; i < sizeof(T) / sizeof(word); i++) {
        ((volatile word *)p)[i] = w[i];
    }
}

/* Warp 0: publish tile i's total and, for every node this tile is the last child of to
 * arrive, that node's total (the fold of its children, in order). */
template <class A>
static GA_DEV inline void
ga_scan_publish(const ga_scan_tree &t, int64_t row, int64_t i, A v, int prod)
{
    const int lane = (int)threadIdx.x % 32;
    int64_t node = i;
    for (int l = 0; l < t.levels; l++) {
        const int64_t at = row * t.count[l] + node;
        if (lane == 0) {
            ga_vstore((A *)t.agg[l] + at, v);
            __threadfence();
            ga_vstore(t.flag[l] + at, 1u);
        }
        if (l + 1 >= t.levels) {
            return;
        }
        const int64_t parent = node / 32, first = parent * 32;
        const int64_t kids = t.count[l] - first < 32 ? t.count[l] - first : 32;
        unsigned last = 0;
        if (lane == 0) {
            last = atomicAdd(t.arrived[l + 1] + row * t.count[l + 1] + parent, 1u) ==
                   (unsigned)kids - 1u;
        }
        if (__shfl_sync(0xffffffffu, last, 0) == 0u) {
            return; /* a sibling still comes: it will fold the node */
        }
        __threadfence(); /* the children's totals, published before their arrivals */
        bool has = lane < kids;
        A kv = v;
        if (has) {
            kv = ga_vload((const A *)t.agg[l] + row * t.count[l] + first + lane);
        }
        v = ga_warp_fold(kv, has, prod);
        node = parent;
    }
}

/* Warp 0: the fold of every tile before tile i of the row (*has false for tile 0),
 * waiting for each total it needs (published by tiles with smaller ids). `seed` is any
 * value of A (what an empty result holds). */
template <class A>
static GA_DEV inline A
ga_scan_prefix(const ga_scan_tree &t, int64_t row, int64_t i, A seed, int prod,
               bool *has)
{
    const int lane = (int)threadIdx.x % 32;
    A pre = seed;
    bool ph = false;
    for (int l = t.levels - 1; l >= 0; l--) {
        const int64_t node = i >> (5 * l);
        const int before = (int)(node % 32);
        if (before == 0) {
            continue;
        }
        const bool mine = lane < before;
        const int64_t at = row * t.count[l] + (node - before) + lane;
        for (;;) {
            const unsigned f = mine ? ga_vload(t.flag[l] + at) : 1u;
            if (__all_sync(0xffffffffu, f != 0u)) {
                break;
            }
            __nanosleep(64);
        }
        __threadfence();
        A v = pre;
        bool vh = mine;
        if (mine) {
            v = ga_vload((const A *)t.agg[l] + at);
        }
        v = ga_warp_fold(v, vh, prod);
        pre = ga_scan_cat(pre, ph, v, vh, prod);
        ph = ph || vh;
    }
    *has = ph;
    return pre;
}

/* ---- host side ---- */

/* The look-back tree's scratch for `rows` rows of `tiles` tiles: the zeroed words
 * (tile counter, flags, arrival counters) first, the totals after them. */
template <class A>
static inline int
ga_scan_tree_alloc(int dev, cudaStream_t stream, int64_t rows, int64_t tiles,
                   ga_scan_tree *t, void **scratch, size_t *bytes)
{
    memset(t, 0, sizeof(*t));
    t->tiles = tiles;
    int levels = 0;
    for (int64_t c = tiles; tiles > 1 && levels < GA_SCAN_LEVELS;) {
        t->count[levels++] = c;
        if (c <= 32) {
            break;
        }
        c = (c + 31) / 32;
    }
    t->levels = levels;
    size_t words = 2; /* the 64-bit tile counter */
    size_t aggs = 0;
    for (int l = 0; l < levels; l++) {
        words += (size_t)(rows * t->count[l]) * (l > 0 ? 2 : 1);
        aggs += (size_t)(rows * t->count[l]);
    }
    const size_t zeroed = (words * sizeof(unsigned) + 15) / 16 * 16;
    *bytes = zeroed + aggs * sizeof(A);
    int st = ga_cuda_alloc(dev, *bytes, scratch);
    if (st != GA_OK) {
        return st;
    }
    char *p = (char *)*scratch;
    t->next = (unsigned long long *)p;
    unsigned *w = (unsigned *)p + 2;
    char *a = p + zeroed;
    for (int l = 0; l < levels; l++) {
        const size_t n = (size_t)(rows * t->count[l]);
        t->flag[l] = w;
        w += n;
        if (l > 0) {
            t->arrived[l] = w;
            w += n;
        }
        t->agg[l] = a;
        a += n * sizeof(A);
    }
    cudaError_t err = cudaMemsetAsync(p, 0, zeroed, stream);
    if (err != cudaSuccess) {
        ga_cuda_free(dev, *scratch, *bytes);
        return ga_cuda_error(err, "cudaMemsetAsync(scan tree)", __FILE__, __LINE__);
    }
    return GA_OK;
}

#endif
