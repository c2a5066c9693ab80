/* k_radix.cu: a stable LSD radix sort for rows of numeric keys (bool, integers,
 * float16/32/64) longer than a merge-sort tile (issue 29 item 3). Complex keys, short
 * rows and rows of 2^30 or more elements stay with k_sort.cu's merge sort, which
 * ga_cuda_sort (k_sort.cu) calls otherwise.
 *
 * Keys become unsigned integers of their width whose order is the sort's order:
 *   integers: the sign bit flipped; bool and unsigned: as they are;
 *   floats: -0.0 becomes +0.0 (a tie, as NumPy orders them), every NaN all ones (last,
 *   ties among themselves), other values the usual flip (negatives: all bits inverted,
 *   positives: the sign bit set);
 *   descending: every key but a NaN's inverted (numbers descend, NaNs stay last, and a
 *   stable sort of inverted keys keeps equal ones in input order).
 * Sorted integer keys map back to their values exactly. Float keys do not (the sign of
 * a zero, a NaN's payload), so a float sort moves the original bits beside the key.
 * Positions (argsort) move beside the key as 32-bit words and are widened when written.
 *
 * Onesweep (Adinets and Merrill, "Onesweep: A Faster Least Significant Digit Radix Sort
 * for GPUs", 2022): one launch counts every 8-bit digit of every pass (k_radix_hist, a
 * 256-bin histogram per row and pass, in shared memory then one atomic per bin and
 * block), then one launch per digit (k_radix_pass): a block per tile of 2048 keys
 * (1024 of 8 bytes), tiles taken in order from an atomic counter;
 *   1. each warp loads its 32 x 8 (or 4) keys warp-striped (coalesced, the loads
 *      independent), in the tile's order (warp, round, lane);
 *   2. ranks them by digit, stably: per round, __match_any_sync finds the lanes with
 *      the same digit, the lowest of them advances the warp's counter for it;
 *   3. thread d (one per digit) turns the warps' counts into offsets, publishes the
 *      tile's count of d and looks back over earlier tiles of the row for their counts
 *      (decoupled look-back: a flag and a 30-bit count in one word per tile and digit;
 *      integer sums, so the result does not depend on what it finds where);
 *   4. every key goes to row offset + digit start (an exclusive scan of the row's
 *      histogram) + earlier tiles' count + earlier warps' count + its rank.
 * 1 + bytes-per-key launches (float32: 5), no host wait; the lookback words are zeroed
 * by one cudaMemsetAsync per pass. Before: a merge sort of 1 + log2(n / 1024) passes
 * with ~20 dependent probes per element per pass (2^26 float32: 17 launches).
 */
#include "k_block.cuh"
#include "k_common.cuh"
#include "k_lookback.cuh"

#define GA_RADIX_WARPS (GA_RED_BLOCK / 32)
#define GA_RADIX_BINS 256

/* Keys a thread ranks per tile (their loads independent, in flight together): 8, or 4
 * of 8 bytes (keys, original bits, positions and ranks in registers within the 64 a
 * thread has at 50% occupancy), and the tile of a block. */
template <class K> struct ga_radix_items {
    static constexpr int value = sizeof(K) == 8 ? 4 : 8;
    static constexpr int64_t tile = (int64_t)GA_RED_BLOCK * value;
};

/* Sums of 64-bit counts as a block policy (k_block.cuh). */
struct ga_count_u64_pol {
    typedef unsigned long long acc_t;
    typedef unsigned long long state_t;
    static GA_HD unsigned long long
    init(int op)
    {
        (void)op;
        return 0;
    }
    static GA_HD unsigned long long
    value(const unsigned long long &v)
    {
        return v;
    }
    static GA_HD unsigned long long
    combine(unsigned long long a, unsigned long long b, int op)
    {
        (void)op;
        return a + b;
    }
};

/* The unsigned key type of an element size. */
template <int SIZE> struct ga_radix_uint;
template <> struct ga_radix_uint<1> {
    typedef uint8_t type;
};
template <> struct ga_radix_uint<2> {
    typedef uint16_t type;
};
template <> struct ga_radix_uint<4> {
    typedef uint32_t type;
};
template <> struct ga_radix_uint<8> {
    typedef uint64_t type;
};

/* Element bits -> key (the order of the sort; see the top of the file). */
template <int DT, class K>
static GA_HD inline K
ga_radix_key(K bits, bool desc)
{
    constexpr K top = (K)((K)1 << (8 * sizeof(K) - 1));
    if constexpr (DT == GA_FLOAT16 || DT == GA_FLOAT32 || DT == GA_FLOAT64) {
        constexpr K exp = DT == GA_FLOAT16   ? (K)0x7c00u
                          : DT == GA_FLOAT32 ? (K)0x7f800000u
                                             : (K)0x7ff0000000000000ull;
        const K mag = (K)(bits & (K)~top);
        if (mag > exp) {
            return (K)~(K)0; /* NaN: last, both directions */
        }
        if (mag == 0) {
            bits = 0; /* -0.0 ties with +0.0 */
        }
        const K k = (bits & top) ? (K)~bits : (K)(bits | top);
        return desc ? (K)~k : k;
    }
    else if constexpr (DT == GA_INT8 || DT == GA_INT16 || DT == GA_INT32 || DT == GA_INT64) {
        const K k = (K)(bits ^ top);
        return desc ? (K)~k : k;
    }
    else {
        return desc ? (K)~bits : bits;
    }
}

/* Key -> element bits, for the types whose keys are one to one (not floats). */
template <int DT, class K>
static GA_HD inline K
ga_radix_unkey(K k, bool desc)
{
    constexpr K top = (K)((K)1 << (8 * sizeof(K) - 1));
    k = desc ? (K)~k : k;
    if constexpr (DT == GA_INT8 || DT == GA_INT16 || DT == GA_INT32 || DT == GA_INT64) {
        return (K)(k ^ top);
    }
    else {
        return k;
    }
}

template <int DT> static constexpr bool ga_radix_is_float()
{
    return DT == GA_FLOAT16 || DT == GA_FLOAT32 || DT == GA_FLOAT64;
}

/* What one sort moves, decided on the host. */
typedef struct {
    int64_t rows, n, tiles; /* tiles per row */
    int desc;
    int passes;             /* bytes of the key */
    const char *in;         /* the keys as given */
    char *out_values;       /* or NULL */
    int64_t *out_indices;   /* or NULL */
    int with_idx;           /* positions move beside the keys */
    int with_bits;          /* the original bits move beside the keys (floats) */
    unsigned long long *hist; /* [rows][passes][256] */
} ga_radix_job;

/* ---- 1. the histograms of every digit ---- */

/* Block b counts the tiles [b * per, (b + 1) * per) of all rows' tiles (in row order),
 * in shared memory, and adds its counts to the row's histograms when the row changes
 * and at the end. */
template <int DT>
GA_BARRIER_KERNEL void GA_LAUNCH_BOUNDS(GA_RED_BLOCK, 4)
k_radix_hist(ga_radix_job j, int64_t per)
{
    typedef typename ga_radix_uint<(int)sizeof(typename ga_storage<DT>::type)>::type K;
    constexpr int P = (int)sizeof(K), IT = ga_radix_items<K>::value;
    constexpr int64_t TILE = ga_radix_items<K>::tile;
    __shared__ unsigned cnt[P][GA_RADIX_BINS];
    const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
    const int64_t total = j.rows * j.tiles;
    for (int64_t b = blockIdx.x; b * per < total; b += gridDim.x) {
        const int64_t t0 = b * per, t1 = t0 + per < total ? t0 + per : total;
        int64_t row = t0 / j.tiles;
        for (int i = (int)threadIdx.x; i < P * GA_RADIX_BINS; i += (int)blockDim.x) {
            cnt[i / GA_RADIX_BINS][i % GA_RADIX_BINS] = 0;
        }
        __syncthreads();
        for (int64_t t = t0; t < t1; t++) {
            if (t / j.tiles != row) { /* flush the previous row's counts */
                __syncthreads();         /* every count of its last tile is in */
                for (int i = (int)threadIdx.x; i < P * GA_RADIX_BINS; i += (int)blockDim.x) {
                    const unsigned c = cnt[i / GA_RADIX_BINS][i % GA_RADIX_BINS];
                    if (c != 0) {
                        atomicAdd(j.hist + (row * P) * GA_RADIX_BINS + i,
                                  (unsigned long long)c);
                    }
                    cnt[i / GA_RADIX_BINS][i % GA_RADIX_BINS] = 0;
                }
                row = t / j.tiles;
                __syncthreads();
            }
            const int64_t base = (t % j.tiles) * TILE + warp * 32 * IT;
            const K *in = (const K *)j.in + row * j.n;
            K x[IT];
#pragma unroll
            for (int k = 0; k < IT; k++) {
                const int64_t e = base + k * 32 + lane;
                x[k] = e < j.n ? in[e] : (K)0;
            }
#pragma unroll
            for (int k = 0; k < IT; k++) {
                if (base + k * 32 + lane < j.n) {
                    const K key = ga_radix_key<DT, K>(x[k], j.desc != 0);
#pragma unroll
                    for (int p = 0; p < P; p++) {
                        atomicAdd(&cnt[p][(key >> (8 * p)) & 0xff], 1u);
                    }
                }
            }
        }
        __syncthreads();
        for (int i = (int)threadIdx.x; i < P * GA_RADIX_BINS; i += (int)blockDim.x) {
            const unsigned c = cnt[i / GA_RADIX_BINS][i % GA_RADIX_BINS];
            if (c != 0) {
                atomicAdd(j.hist + (row * P) * GA_RADIX_BINS + i, (unsigned long long)c);
            }
        }
        __syncthreads(); /* counted out before the next range clears them */
    }
}

/* ---- 2. one pass per digit ---- */

/* The lookback word of (tile, digit): flag in bits 30-31 (0: not yet, 1: the tile's
 * own count, 2: the count of the row up to and including the tile), count below. */
#define GA_RADIX_FLAG_OWN 0x40000000u
#define GA_RADIX_FLAG_ALL 0x80000000u
#define GA_RADIX_COUNT 0x3fffffffu

/* Pass `pass` (digit `pass` from the least significant) from (keys, bits, idx) to
 * the next buffers, or to the outputs when `last`. In the first pass the keys are
 * made from the input and the payload is implicit (position, original bits). */
template <int DT>
GA_BARRIER_KERNEL void GA_LAUNCH_BOUNDS(GA_RED_BLOCK, 4)
k_radix_pass(ga_radix_job j, int pass, const void *keys_in, const void *bits_in,
             const unsigned *idx_in, void *keys_out, void *bits_out, unsigned *idx_out,
             unsigned *look, unsigned long long *next)
{
    typedef typename ga_radix_uint<(int)sizeof(typename ga_storage<DT>::type)>::type K;
    constexpr int P = (int)sizeof(K), IT = ga_radix_items<K>::value;
    constexpr int64_t TILE = ga_radix_items<K>::tile;
    __shared__ unsigned wcnt[GA_RADIX_WARPS][GA_RADIX_BINS]; /* counts, then offsets */
    __shared__ unsigned start[GA_RADIX_BINS]; /* where the tile's keys of a digit go */
    __shared__ unsigned long long tile_id;
    const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
    const int d = (int)threadIdx.x; /* the digit thread d looks after (256 threads) */
    const bool first = pass == 0, last = pass == P - 1, desc = j.desc != 0;
    const int shift = 8 * pass;
    const unsigned long long total = (unsigned long long)(j.rows * j.tiles);
    for (;;) {
        if (threadIdx.x == 0) {
            tile_id = atomicAdd(next, 1ull);
        }
        for (int w = 0; w < GA_RADIX_WARPS; w++) {
            wcnt[w][d] = 0;
        }
        __syncthreads();
        const unsigned long long id = tile_id;
        __syncthreads(); /* read by all before thread 0 takes the next one */
        if (id >= total) {
            return;
        }
        const int64_t row = (int64_t)id / j.tiles, i = (int64_t)id % j.tiles;
        const int64_t base = i * TILE + warp * 32 * IT;
        const int64_t at = row * j.n; /* the row's first element in every buffer */

        /* 1. the warp's keys and payload, warp-striped */
        K key[IT], bits[IT];
        unsigned idx[IT];
#pragma unroll
        for (int k = 0; k < IT; k++) {
            const int64_t e = base + k * 32 + lane;
            const bool in = e < j.n;
            if (first) {
                bits[k] = in ? ((const K *)j.in)[at + e] : (K)0;
                key[k] = ga_radix_key<DT, K>(bits[k], desc);
                idx[k] = (unsigned)e;
            }
            else {
                key[k] = in ? ((const K *)keys_in)[at + e] : (K)0;
                bits[k] = j.with_bits && in ? ((const K *)bits_in)[at + e] : (K)0;
                idx[k] = j.with_idx && in ? idx_in[at + e] : 0u;
            }
        }

        /* 2. stable ranks within the warp, by digit */
        unsigned rank[IT];
#pragma unroll
        for (int k = 0; k < IT; k++) {
            const bool in = base + k * 32 + lane < j.n;
            const unsigned dig = in ? (unsigned)((key[k] >> shift) & 0xff) : 256u + lane;
            const unsigned peers = __match_any_sync(0xffffffffu, dig);
            const unsigned c = in ? wcnt[warp][dig] : 0u;
            rank[k] = c + (unsigned)__popc(peers & ((1u << lane) - 1u));
            __syncwarp();
            if (in && (peers & ((1u << lane) - 1u)) == 0u) { /* the lowest such lane */
                wcnt[warp][dig] = c + (unsigned)__popc(peers);
            }
            __syncwarp();
        }
        __syncthreads();

        /* 3. thread d: the warps' offsets for digit d, the tile's count, the look-back */
        unsigned count = 0;
        for (int w = 0; w < GA_RADIX_WARPS; w++) {
            const unsigned c = wcnt[w][d];
            wcnt[w][d] = count;
            count += c;
        }
        unsigned *word = look + (size_t)id * GA_RADIX_BINS + d;
        unsigned before = 0;
        if (i == 0) {
            ga_vstore(word, GA_RADIX_FLAG_ALL | count);
        }
        else {
            ga_vstore(word, GA_RADIX_FLAG_OWN | count);
            for (const unsigned *w = word - GA_RADIX_BINS;; w -= GA_RADIX_BINS) {
                unsigned v;
                while (((v = ga_vload(w)) & (GA_RADIX_FLAG_OWN | GA_RADIX_FLAG_ALL)) == 0u) {
                    __nanosleep(64);
                }
                before += v & GA_RADIX_COUNT;
                if (v & GA_RADIX_FLAG_ALL) {
                    break;
                }
            }
            ga_vstore(word, GA_RADIX_FLAG_ALL | (before + count));
        }
        /* where digit d starts in the row: the digits below it, over the whole row */
        const unsigned long long h = j.hist[(row * P + pass) * GA_RADIX_BINS + d];
        unsigned long long all;
        const unsigned long long below =
            ga_block_exclusive_scan<ga_count_u64_pol>(h, 0, &all);
        start[d] = (unsigned)below + before;
        __syncthreads();

        /* 4. every key to its place */
#pragma unroll
        for (int k = 0; k < IT; k++) {
            if (base + k * 32 + lane >= j.n) {
                continue;
            }
            const unsigned dig = (unsigned)((key[k] >> shift) & 0xff);
            const int64_t to = at + (int64_t)(start[dig] + wcnt[warp][dig] + rank[k]);
            if (!last) {
                ((K *)keys_out)[to] = key[k];
                if (j.with_bits) {
                    ((K *)bits_out)[to] = bits[k];
                }
                if (j.with_idx) {
                    idx_out[to] = idx[k];
                }
                continue;
            }
            if (j.out_values != nullptr) {
                ((K *)j.out_values)[to] = j.with_bits ? bits[k]
                                                      : ga_radix_unkey<DT, K>(key[k], desc);
            }
            if (j.out_indices != nullptr) {
                j.out_indices[to] = (int64_t)idx[k];
            }
        }
        __syncthreads(); /* wcnt and start are read before the next tile clears them */
    }
}

/* ---- host side ---- */

template <int DT>
static int
ga_radix_launch(int dev, const ga_sort_desc *d)
{
    typedef typename ga_radix_uint<(int)sizeof(typename ga_storage<DT>::type)>::type K;
    constexpr int P = (int)sizeof(K);
    constexpr int64_t TILE = ga_radix_items<K>::tile;
    cudaStream_t stream;
    GA_TRY(ga_cuda_stream(dev, &stream));
    ga_radix_job j;
    memset(&j, 0, sizeof(j));
    j.rows = d->rows;
    j.n = d->n;
    j.tiles = (d->n + TILE - 1) / TILE;
    j.desc = d->descending != 0;
    j.passes = P;
    j.in = d->keys;
    j.out_values = d->values;
    j.out_indices = d->indices;
    j.with_idx = d->indices != nullptr;
    j.with_bits = ga_radix_is_float<DT>() && d->values != nullptr;
    const int64_t total = j.rows * j.tiles, elems = j.rows * j.n;
    /* scratch: histograms, tile counters (zeroed), look-back words, then the ping-pong
     * buffers between passes (one for two passes, two for more) */
    const int bufs = P >= 3 ? 2 : P - 1;
    const size_t hist_b = (size_t)(j.rows * P * GA_RADIX_BINS) * 8u;
    const size_t next_b = (size_t)P * 8u;
    const size_t look_b = (size_t)total * GA_RADIX_BINS * 4u;
    const size_t key_b = ((size_t)elems * sizeof(K) + 15) / 16 * 16;
    const size_t idx_b = ((size_t)elems * 4u + 15) / 16 * 16;
    const size_t per_buf = key_b + (j.with_bits ? key_b : 0) + (j.with_idx ? idx_b : 0);
    const size_t bytes = hist_b + next_b + look_b + (size_t)bufs * per_buf;
    char *scratch = nullptr;
    GA_TRY(ga_cuda_alloc(dev, bytes, (void **)&scratch));
    j.hist = (unsigned long long *)scratch;
    unsigned long long *next = (unsigned long long *)(scratch + hist_b);
    unsigned *look = (unsigned *)(scratch + hist_b + next_b);
    char *buf[2] = {nullptr, nullptr};
    for (int b = 0; b < bufs; b++) {
        buf[b] = scratch + hist_b + next_b + look_b + (size_t)b * per_buf;
    }
    cudaError_t err = cudaMemsetAsync(scratch, 0, hist_b + next_b, stream);
    if (err == cudaSuccess) {
        const int64_t blocks = total < 8LL * ga_cuda_sm_count(dev) ? total
                                                                    : 8LL * ga_cuda_sm_count(dev);
        const int64_t per = (total + blocks - 1) / blocks;
        GA_LAUNCH(k_radix_hist<DT>, (unsigned)((total + per - 1) / per), GA_RED_BLOCK, 0,
                  stream, j, per);
        err = cudaGetLastError();
    }
    for (int p = 0; p < P && err == cudaSuccess; p++) {
        char *from = p > 0 ? buf[(p - 1) % 2] : nullptr;
        char *to = p < P - 1 ? buf[p % 2] : nullptr;
        err = cudaMemsetAsync(look, 0, look_b, stream);
        if (err != cudaSuccess) {
            break;
        }
        GA_LAUNCH(k_radix_pass<DT>, ga_k_blocks_for(total), GA_RED_BLOCK, 0, stream, j, p,
                  (const void *)from, (const void *)(from ? from + key_b : nullptr),
                  (const unsigned *)(from ? from + key_b + (j.with_bits ? key_b : 0)
                                          : nullptr),
                  (void *)to, (void *)(to ? to + key_b : nullptr),
                  (unsigned *)(to ? to + key_b + (j.with_bits ? key_b : 0) : nullptr), look,
                  next + p);
        err = cudaGetLastError();
    }
    ga_cuda_free(dev, scratch, bytes); /* stream-ordered: after the last pass */
    if (err != cudaSuccess) {
        return ga_cuda_error(err, "radix sort launch", __FILE__, __LINE__);
    }
    return GA_OK;
}

/* The radix sort of d when its dtype has radix keys and its rows are longer than a
 * merge-sort tile (1024) and shorter than 2^30 (the look-back's 30-bit counts):
 * *done = 1 and a status; else *done = 0 and nothing queued. */
extern "C" int
ga_cuda_radix_sort(int dev, const ga_sort_desc *d, int *done)
{
    *done = 0;
    if (d->n <= 1024 || d->n >= ((int64_t)1 << 30)) {
        return GA_OK;
    }
    int (*fn)(int, const ga_sort_desc *) = nullptr;
    switch (d->dtype) {
#define GA_X_RADIX(e)                                                                  \
    case e:                                                                            \
        fn = ga_radix_launch<e>;                                                       \
        break;
        GA_X_RADIX(GA_BOOL)
        GA_X_RADIX(GA_INT8)
        GA_X_RADIX(GA_INT16)
        GA_X_RADIX(GA_INT32)
        GA_X_RADIX(GA_INT64)
        GA_X_RADIX(GA_UINT8)
        GA_X_RADIX(GA_UINT16)
        GA_X_RADIX(GA_UINT32)
        GA_X_RADIX(GA_UINT64)
        GA_X_RADIX(GA_FLOAT16)
        GA_X_RADIX(GA_FLOAT32)
        GA_X_RADIX(GA_FLOAT64)
#undef GA_X_RADIX
    default:
        return GA_OK; /* complex: the merge sort's order by NaN class */
    }
    *done = 1;
    return fn(dev, d);
}
