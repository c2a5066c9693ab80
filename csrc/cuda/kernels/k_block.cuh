/* k_block.cuh: block-wide combines with warp shuffles, for kernels whose blocks
 * cooperate (reductions, scans, nonzero).
 *
 * A "policy" P names the combine: P::acc_t (plain data), P::init(op) and
 * P::value(state) (together the identity), P::combine(a, b, op) (associative). Every
 * thread of the block calls these functions (they contain barriers), and blockDim.x
 * is a multiple of 32. The policies' arithmetic (identities, combines, NaN rules) is
 * ga_reduce_math.h's, shared with the CPU backend; this file only moves partial
 * results between threads and keeps the combine order (lower lane first).
 */
#ifndef GA_K_BLOCK_CUH
#define GA_K_BLOCK_CUH

#include "k_common.cuh"

/* Shuffle plain data of any size down (or up) `delta` lanes of a full warp, a
 * register at a time (the hardware moves 32-bit registers; accumulators such as
 * argmax's (value, index) are wider than one). */
template <bool UP, class T>
static GA_DEV inline T
ga_shfl_by(T v, int delta)
{
    typedef typename std::conditional<sizeof(T) % 8 == 0, unsigned long long,
                                      unsigned>::type word;
    constexpr int words = (int)((sizeof(T) + sizeof(word) - 1) / sizeof(word));
    word w[words] = {};
    memcpy(w, &v, sizeof(T));
    for (int i = 0; i < words; i++) {
        w[i] = UP ? __shfl_up_sync(0xffffffffu, w[i], (unsigned)delta)
                  : __shfl_down_sync(0xffffffffu, w[i], (unsigned)delta);
    }
    memcpy(&v, w, sizeof(T));
    return v;
}
/* Lane `src`'s v, for every lane of a full warp (any plain data). */
template <class T>
static GA_DEV inline T
ga_shfl_by_idx(T v, int src)
{
    typedef typename std::conditional<sizeof(T) % 8 == 0, unsigned long long,
                                      unsigned>::type word;
    constexpr int words = (int)((sizeof(T) + sizeof(word) - 1) / sizeof(word));
    word w[words] = {};
    memcpy(w, &v, sizeof(T));
    for (int i = 0; i < words; i++) {
        w[i] = __shfl_sync(0xffffffffu, w[i], src);
    }
    memcpy(&v, w, sizeof(T));
    return v;
}
template <class T>
static GA_DEV inline T
ga_shfl_down(T v, int delta)
{
    return ga_shfl_by<false>(v, delta);
}
template <class T>
static GA_DEV inline T
ga_shfl_up(T v, int delta)
{
    return ga_shfl_by<true>(v, delta);
}

/* Part i of `parts` equal consecutive parts of [0, len): [*lo, *hi) (empty past the
 * end). How split reductions, tiled scans and nonzero cut their range. */
static GA_HD inline void
ga_chunk(int64_t len, int64_t parts, int64_t i, int64_t *lo, int64_t *hi)
{
    const int64_t size = (len + parts - 1) / parts;
    *lo = i * size < len ? i * size : len;
    *hi = *lo + size < len ? *lo + size : len;
}

/* The identity of a policy's combine (the partial result of no elements). */
template <class P>
static GA_HD inline typename P::acc_t
ga_red_identity(int op)
{
    return P::value(P::init(op));
}

/* Combine one partial result per thread into a value valid in thread 0. Each warp
 * folds its 32 lanes with shuffles (registers only, no barrier), warp 0 folds the
 * warps' results: two barriers per call instead of the log2(block) of a tree in
 * shared memory. Every thread of the block must call it; blockDim.x is a multiple
 * of 32. */
template <class P>
static GA_DEV inline typename P::acc_t
ga_block_reduce(typename P::acc_t v, int op)
{
    __shared__ typename P::acc_t warp_part[32];
    const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
    const int nwarps = (int)blockDim.x / 32;
    for (int h = 16; h > 0; h /= 2) {
        v = P::combine(v, ga_shfl_down(v, h), op);
    }
    if (nwarps == 1) {
        return v;
    }
    if (lane == 0) {
        warp_part[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        v = lane < nwarps ? warp_part[lane] : ga_red_identity<P>(op);
        for (int h = 16; h > 0; h /= 2) {
            v = P::combine(v, ga_shfl_down(v, h), op);
        }
    }
    __syncthreads(); /* warp_part is read before a later call overwrites it */
    return v;
}

/* Exclusive scan of one value per thread over the block; *total gets the combine of
 * all of them. Every thread of the block must call it; blockDim.x is a multiple of 32. */
template <class P>
static GA_DEV inline typename P::acc_t
ga_block_exclusive_scan(typename P::acc_t v, int op, typename P::acc_t *total)
{
    typedef typename P::acc_t acc_t;
    __shared__ acc_t warp_incl[32];
    const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
    const int nwarps = (int)blockDim.x / 32;
    acc_t inc = v;
    for (int d = 1; d < 32; d *= 2) {
        acc_t y = ga_shfl_up(inc, d);
        if (lane >= d) {
            inc = P::combine(y, inc, op);
        }
    }
    acc_t excl = ga_shfl_up(inc, 1);
    if (lane == 0) {
        excl = ga_red_identity<P>(op);
    }
    if (lane == 31) {
        warp_incl[warp] = inc;
    }
    __syncthreads();
    if (warp == 0) {
        acc_t w = lane < nwarps ? warp_incl[lane] : ga_red_identity<P>(op);
        for (int d = 1; d < 32; d *= 2) {
            acc_t y = ga_shfl_up(w, d);
            if (lane >= d) {
                w = P::combine(y, w, op);
            }
        }
        warp_incl[lane] = w; /* inclusive over the warps */
    }
    __syncthreads();
    if (warp > 0) {
        excl = P::combine(warp_incl[warp - 1], excl, op);
    }
    *total = warp_incl[nwarps - 1];
    __syncthreads(); /* warp_incl is read before a later call overwrites it */
    return excl;
}

#endif
