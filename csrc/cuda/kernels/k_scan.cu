/* k_scan.cu: cumulative sums and products (cumsum, cumprod) on a CUDA device.
 *
 * A scan runs along the last axis of ga_scan_desc (the core moves the axis there):
 * `rows` rows of `len` elements, each addressed through the strides. The partial
 * results are ga_reduce_math.h's: accumulated in the scan's accumulator A (double
 * for floating outputs, complex128 for complex ones, 64-bit integers otherwise) and
 * rounded once into the output; a row's first partial result is its first element
 * itself (NumPy's accumulate copies it), so no combine ever involves an identity.
 *
 * Three kernels, chosen by the shape (ga_scan_launch_op), each launched with at least
 * as many blocks as the scan has tiles of work (TILE elements; up to GA_SCAN_FILL,
 * more than any GPU's multiprocessors; issue 45):
 *   - k_scan_cols, lines across the lanes: scans along an outer axis (neighbouring
 *     lines are neighbours in memory, so a warp's loads are coalesced at every step)
 *     and rows of at most GA_SCAN_SERIAL_MAX elements. A tile is 32 x 8 / ws lines by
 *     ws x IT steps (8 warps, ws of them along the scan); a line longer than a tile is
 *     cut into chunks, each looking back to the chunks before it in its line through
 *     the tree below (a tile of 32 columns by 64 rows looks back to the 64 rows above
 *     it). Where one round covers a line, a thread holds all of it (ws = 1); with one
 *     chunk a line there is no look-back and no scratch.
 *   - k_scan_warps, a warp per row, for rows shorter than two tiles: rounds of 32 x
 *     ITEMS elements, each lane scanning ITEMS consecutive ones after a warp-striped
 *     (coalesced) load transposed through shared memory, the lanes' totals combined
 *     by a warp shuffle scan, a carry from round to round. 8 warps a block, fewer
 *     where the rows are too few to give a block per tile of work otherwise.
 *   - k_scan_tiles, a block per tile of GA_SCAN_WARPS x 32 x IT elements (8 warps
 *     of the above), one pass: each block takes the next tile from an atomic counter,
 *     scans it, publishes its total and finds the total of everything before it in its
 *     row by a look-back over a fixed tree of tile totals (below), then writes. One
 *     launch, each element read once and written once, no host wait. Rows of two
 *     tiles or more, and rows of half a tile or more where a warp each is too few.
 * What keeps a round lean (tools/cuda_report.py reads the SASS; issue 29): the IT loads
 * are issued together, unpredicated (past the row's end they read its last element
 * again) and converted after (ga_scan_raw); where the scan has an exact identity
 * (ga_scan_exact: all but complex products) it stands in for what is not there, so
 * there are no "empty" flags to shuffle and select; the usual output dtype
 * (ga_scan_out) is written by unrolled typed stores, any other through the dtype
 * switch; and a tile's items wait in shared memory while warp 0 looks back.
 *
 * The look-back tree. CUB's decoupled look-back combines each tile's predecessors as
 * it finds them (some as inclusive prefixes, some as totals), so a float scan's
 * rounding depends on the timing of the blocks. Here the grouping is fixed: tile
 * totals are the leaves (level 0) of a tree of fan-out 32; the total of a level-l
 * node is the fold, in order, of its (up to) 32 children, computed by whichever child
 * arrives last (an atomic counter per node) and published with a flag. The prefix
 * of tile i is the fold, top level first, of the preceding siblings of i's ancestor
 * at each level (each a warp-wide fold of at most 31 published totals): a cover of
 * tiles [0, i) whose grouping depends on i alone. So a scan gives the same bits on
 * every run, every GPU and the emulator (tests/cuda/test_cuda_scans.py). A tile waits only
 * for totals of tiles with smaller ids, taken from the counter by blocks that are
 * running or done, and publishes its own total before it waits: the wait ends on any
 * schedule. (The emulator runs blocks one after another: with ids taken in running
 * order every wait is over before it starts; a wait that is not is reported there as
 * a deadlock by __nanosleep.) Depth: 32^levels >= tiles per row, 3 levels for 2^26
 * float32 elements.
 */
#include "k_block.cuh"
#include "k_common.cuh"
#include "k_lookback.cuh"

#include "ga_reduce_math.h"

/* Consecutive elements a thread scans per round: 8 (4 for 16-byte accumulators, which
 * hold complex128 partial results: 8 of them would not fit the 64 registers). */
template <class A> struct ga_scan_items {
    static constexpr int value = sizeof(A) > 8 ? 4 : 8;
};
/* k_scan_tiles keeps more live state than the other two (the tile loop, the look-back
 * tree, the carry), and under its 64-register cap (4 blocks of 256 per multiprocessor,
 * 50% occupancy) ptxas spilled 4 to 16 bytes with the items above in the wheel's build
 * (every SASS target assembled from compute_75 PTX) for float, float16 or complex
 * elements converted into 64-bit integer sums on sm_120: those take half as many per
 * round in a tile. (complex128 sums spilled with 4 too, on sm_75 and sm_80, until the
 * tile's items waited in shared memory instead of registers while warp 0 looks back.) */
template <int DT, class A> struct ga_scan_tile_items {
    static constexpr bool FLOAT_TO_INT =
        std::is_integral<A>::value && (DT == GA_FLOAT16 || DT == GA_FLOAT32 ||
                                       DT == GA_FLOAT64 || DT == GA_COMPLEX64 ||
                                       DT == GA_COMPLEX128);
    static constexpr int value =
        FLOAT_TO_INT ? ga_scan_items<A>::value / 2 : ga_scan_items<A>::value;
};
#define GA_SCAN_WARPS (GA_RED_BLOCK / 32)
/* Rows up to this many elements go across the lanes (k_scan_cols): a warp along
 * such a row would leave most lanes idle. */
#define GA_SCAN_SERIAL_MAX 16

/* Whether the scan (A, PROD) has an identity that every combine leaves exact, so that
 * the warp and tile kernels need no "empty" flags: -0.0 for float sums (-0 + x is x for
 * every x, -0 included, where +0 + -0 would be +0), 0 for integer sums, 1 for real
 * products. A complex product has none ((1+0j) * (-inf+0.5j) is -inf+nanj) and keeps
 * the flags. With the identity standing in for what is not there (lanes past a row's
 * end, the carry at its start), every combine the flags skipped becomes x op id or
 * id op x, which is x: the same bits as the flagged code, with fewer instructions
 * (no flag shuffles and selects: tools/cuda_report.py counts them). */
template <class A, int PROD> struct ga_scan_exact {
    static constexpr bool value = !(PROD && std::is_same<A, ga_cd>::value);
};
template <class A, int PROD>
static GA_DEV inline A
ga_scan_id()
{
    if constexpr (PROD) {
        return ga_rm_identity<A>(1);
    }
    else if constexpr (std::is_same<A, double>::value) {
        return -0.0;
    }
    else if constexpr (std::is_same<A, ga_cd>::value) {
        A z;
        z.re = -0.0;
        z.im = -0.0;
        return z;
    }
    else {
        return (A)0;
    }
}

/* The output dtype a scan of DT into A writes unless told otherwise (NumPy's
 * cumsum/cumprod: floats and complex keep their dtype, integers and bool widen to the
 * 64-bit accumulator). The tile kernel stores that dtype with an unrolled loop of
 * typed stores; any other output goes through the run-time dtype switch. */
template <int DT, class A> struct ga_scan_out {
    static constexpr bool FLOATING = DT == GA_FLOAT16 || DT == GA_FLOAT32 ||
                                     DT == GA_FLOAT64;
    static constexpr bool CPLX = DT == GA_COMPLEX64 || DT == GA_COMPLEX128;
    static constexpr int value =
        std::is_same<A, int64_t>::value    ? GA_INT64
        : std::is_same<A, uint64_t>::value ? GA_UINT64
        : std::is_same<A, double>::value   ? (FLOATING ? DT : GA_FLOAT64)
                                           : (CPLX ? DT : GA_COMPLEX128);
};

/* Element e of a warp's 32 x IT stretch in the transpose buffer: one padding slot per
 * lane's run of IT, so the blocked reads below do not all hit one bank. */
template <int IT>
static GA_DEV inline int
ga_tpos(int e)
{
    return e + (int)((unsigned)e / (unsigned)IT); /* e >= 0: a shift, no sign fix-up */
}

/* How a thread holds an element between its load and its conversion to A (loads go
 * first, all IT of them, and conversions after: a conversion at its load, float ->
 * int64 with its branches, kept nvcc from issuing the next load before it):
 *   - narrower than 32 bits: widened to a register of its own (raw bytes or halves
 *     were packed into one register, each load waiting for the one before it);
 *   - complex128 into a real accumulator: its real part alone, all the conversion
 *     reads (the whole element, 8 of them in flight, spilled registers);
 *   - complex128 into complex128 (`direct`): converted at the load.
 */
template <int DT, class A> struct ga_scan_raw {
    typedef typename ga_storage<DT>::type T;
    static constexpr bool RE_ONLY = sizeof(T) > 8 && sizeof(A) <= 8;
    static constexpr bool direct = sizeof(T) > 8 && !RE_ONLY;
    typedef typename std::conditional<
        RE_ONLY, double,
        typename std::conditional<(sizeof(T) < 4), uint32_t, T>::type>::type type;
    static GA_DEV inline type
    load(const char *p)
    {
        if constexpr (RE_ONLY) {
            return ga_ld<GA_FLOAT64>(p);
        }
        else {
            return (type)ga_ld<DT>(p);
        }
    }
    static GA_DEV inline A
    to_acc(type r)
    {
        T t;
        if constexpr (RE_ONLY) {
            t.re = r;
            t.im = 0.0;
        }
        else {
            t = (T)r;
        }
        return ga_ld_as<DT, A>((const char *)&t);
    }
};

/* The warp's stretch [base, base + 32 IT) of a row, clipped to `end`: loaded
 * warp-striped (lane l reads base + l, base + 32 + l, ...: each load instruction of
 * the warp is one coalesced access, and the IT loads are independent, in flight
 * together), converted to A, and handed back blocked through `sm` (lane l gets
 * elements l IT .. l IT + IT - 1 in x, `fill` where the row has ended). Returns how
 * many of its IT are in the row. */
template <int DT, class A, int IT>
static GA_DEV inline int
ga_scan_load_warp(const char *in, int64_t is, int64_t base, int64_t end, A *sm,
                  A (&x)[IT], A fill)
{
    const int lane = (int)threadIdx.x % 32;
    typedef ga_scan_raw<DT, A> R;
    if constexpr (!R::direct) {
        /* past the end, the row's last element again (the stretch holds at least
         * one), so no load is predicated: predicated loads of bytes into one
         * register went one after another */
        typename R::type raw[IT];
#pragma unroll
        for (int k = 0; k < IT; k++) {
            const int64_t j = base + k * 32 + lane;
            raw[k] = R::load(in + (j < end ? j : end - 1) * is);
        }
#pragma unroll
        for (int k = 0; k < IT; k++) {
            const int e = k * 32 + lane;
            sm[ga_tpos<IT>(e)] = base + e < end ? R::to_acc(raw[k]) : fill;
        }
    }
    else {
#pragma unroll
        for (int k = 0; k < IT; k++) {
            const int e = k * 32 + lane;
            const int64_t j = base + e < end ? base + e : end - 1;
            const A v = ga_ld_as<DT, A>(in + j * is);
            sm[ga_tpos<IT>(e)] = base + e < end ? v : fill;
        }
    }
    __syncwarp();
#pragma unroll
    for (int k = 0; k < IT; k++) {
        x[k] = sm[ga_tpos<IT>(lane * IT + k)];
    }
    __syncwarp();
    const int64_t n = end - base - (int64_t)lane * IT;
    return n <= 0 ? 0 : n >= IT ? IT : (int)n;
}

/* The reverse, in two steps: ga_scan_stage puts lane l's y (elements l IT ..) into
 * `sm`; ga_scan_emit then stores the stretch warp-striped (coalesced), element e as
 * map(sm[e]) (the tile kernel adds its carry there, so its items wait in shared memory,
 * not in registers, while warp 0 looks back), into the output dtype: OUT, known at
 * compile time (the scan's usual output, ga_scan_out), as IT unrolled typed stores
 * through one running pointer; or, with OUT < 0, `dt` at run time, in a loop that is
 * not unrolled since each store is the dtype's switch (ga_rm_store). The caller puts a
 * __syncwarp (or a barrier) between the two. */
template <class A, int IT>
static GA_DEV inline void
ga_scan_stage(A *sm, const A (&y)[IT])
{
    const int lane = (int)threadIdx.x % 32;
#pragma unroll
    for (int k = 0; k < IT; k++) {
        sm[ga_tpos<IT>(lane * IT + k)] = y[k];
    }
}

template <class A, int IT, int OUT, class F>
static GA_DEV inline void
ga_scan_emit(char *out, int64_t os, int dt, int64_t base, int64_t end, const A *sm,
             F map)
{
    const int lane = (int)threadIdx.x % 32;
    if constexpr (OUT >= 0) {
        (void)dt;
        char *p = out + (base + lane) * os;
        const int64_t step = 32 * os;
#pragma unroll
        for (int k = 0; k < IT; k++) {
            const int e = k * 32 + lane;
            if (base + e < end) {
                ga_st_as<A>(p, OUT, map(sm[ga_tpos<IT>(e)]));
            }
            p += step;
        }
    }
    else {
        GA_NO_UNROLL
        for (int k = 0; k < IT; k++) {
            const int e = k * 32 + lane;
            if (base + e < end) {
                ga_rm_store(out + (base + e) * os, dt, map(sm[ga_tpos<IT>(e)]));
            }
        }
    }
}

/* ga_scan_emit with the output dtype a constant where it is the scan's usual one (a
 * branch per round, taken the same way by every thread of the launch), for real and
 * integer partial results (complex128 ones: the unrolled stores spilled registers). */
template <int DT, class A, int IT, class F>
static GA_DEV inline void
ga_scan_emit_any(char *out, int64_t os, int dt, int64_t base, int64_t end, const A *sm,
                 F map)
{
    constexpr int OUT = ga_scan_out<DT, A>::value;
    if (sizeof(A) <= 8 && dt == OUT) {
        ga_scan_emit<A, IT, OUT>(out, os, dt, base, end, sm, map);
    }
    else {
        ga_scan_emit<A, IT, -1>(out, os, dt, base, end, sm, map);
    }
}

/* Stage, then emit as they are: a warp's round of k_scan_warps. */
template <int DT, class A, int IT>
static GA_DEV inline void
ga_scan_store_any(char *out, int64_t os, int dt, int64_t base, int64_t end, A *sm,
                  const A (&y)[IT])
{
    ga_scan_stage<A, IT>(sm, y);
    __syncwarp();
    ga_scan_emit_any<DT, A, IT>(out, os, dt, base, end, sm, [](A v) { return v; });
    __syncwarp();
}

/* One warp's round: x (this lane's n items of the stretch) becomes the scan of the
 * row so far, from `carry` (the partial result before the stretch; `ch` false at the
 * start of a row). Returns the stretch's total (and *th whether there is one). */
template <class A, int IT>
static GA_DEV inline A
ga_scan_warp_round(A (&x)[IT], int n, A carry, bool ch, int prod, bool *th)
{
    const int lane = (int)threadIdx.x % 32;
    A part = x[0];
#pragma unroll
    for (int k = 1; k < IT; k++) {
        if (k < n) {
            part = ga_rm_sp(part, x[k], prod);
        }
    }
    bool has = n > 0;
    const A inc = ga_warp_scan_incl(part, has, prod);
    const A ex = ga_shfl_up(inc, 1);
    const bool exh = __shfl_up_sync(0xffffffffu, has ? 1 : 0, 1u) != 0 && lane > 0;
    const bool toth = __shfl_sync(0xffffffffu, has ? 1 : 0, 31) != 0;
    const A tot = ga_shfl_by_idx(inc, 31);
    A acc = ga_scan_cat(carry, ch, ex, exh, prod);
    bool ah = ch || exh;
#pragma unroll
    for (int k = 0; k < IT; k++) {
        acc = ga_scan_cat(acc, ah, x[k], true, prod);
        ah = true;
        x[k] = acc;
    }
    *th = toth;
    return tot;
}

/* ga_scan_warp_round for an exact identity (ga_scan_exact): the lanes' items past
 * the row's end hold the identity, so no counts and no flags; the same bits. */
template <class A, int IT, int PROD>
static GA_DEV inline A
ga_scan_warp_round_exact(A (&x)[IT], A carry)
{
    const int lane = (int)threadIdx.x % 32;
    A part = x[0];
#pragma unroll
    for (int k = 1; k < IT; k++) {
        part = ga_rm_sp(part, x[k], PROD);
    }
    A inc = part;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        const A y = ga_shfl_up(inc, d);
        if (lane >= d) {
            inc = ga_rm_sp(y, inc, PROD);
        }
    }
    A acc = ga_shfl_up(inc, 1);
    acc = lane > 0 ? ga_rm_sp(carry, acc, PROD) : carry;
#pragma unroll
    for (int k = 0; k < IT; k++) {
        acc = ga_rm_sp(acc, x[k], PROD);
        x[k] = acc;
    }
    return ga_shfl_by_idx(inc, 31);
}

/* The address of row `row`'s first element. */
static GA_DEV inline int64_t
ga_scan_row_off(const ga_scan_desc &s, const int64_t *strides, int64_t row)
{
    return ga_offset(s.ndim - 1, s.shape, strides, row);
}

/* ---- lines across the lanes: columns, and rows too short for a warp ---- */

/* How k_scan_cols cuts the lines (the scanned runs; rows of ga_scan_desc) into tiles:
 * a block's 8 warps stand `ws` deep along the scan axis and 8 / ws lines-of-32 wide, so
 * a tile is 32 x 8 / ws lines by ws x IT steps (at most 256 x IT elements, a tile of
 * k_scan_tiles), and a line of `chunks` tiles looks back to its earlier chunks through
 * the tree of k_lookback.cuh. (No second path where a thread walks a long line in
 * rounds, as k_scan_rows did: a second copy of the load, conversion and dtype-switch
 * store code in each of the kernel's instantiations, for compile time.) */
typedef struct {
    int ws;
    int64_t chunks;
} ga_scan_cols_geom;

/* The store of a thread's n results (y[0..n) at k0 ..) into the output: unrolled typed
 * stores for the usual output dtype (real and integer partial results), else the
 * run-time dtype switch over `mine`, this thread's row of a shared buffer (a dynamic
 * index into y would put y in local memory). */
template <int DT, class A, int IT>
static GA_DEV inline void
ga_scan_store_line(char *out, int64_t os, int dt, int64_t k0, int n, const A (&y)[IT],
                   A *mine)
{
    constexpr int OUT = ga_scan_out<DT, A>::value;
    if (sizeof(A) <= 8 && dt == OUT) {
#pragma unroll
        for (int k = 0; k < IT; k++) {
            if (k < n) {
                ga_st_as<A>(out + (k0 + k) * os, OUT, y[k]);
            }
        }
        return;
    }
#pragma unroll
    for (int k = 0; k < IT; k++) {
        mine[k] = y[k];
    }
    GA_NO_UNROLL
    for (int k = 0; k < n; k++) {
        ga_rm_store(out + (k0 + k) * os, dt, mine[k]);
    }
}

/* A thread's IT steps of its line from k0, loaded together (unpredicated: past the
 * end, the line's last element again) and converted after (ga_scan_raw). */
template <int DT, class A, int IT>
static GA_DEV inline void
ga_scan_load_line(const char *in, int64_t is, int64_t k0, int64_t len, A (&x)[IT])
{
    typedef ga_scan_raw<DT, A> R;
    if constexpr (R::direct) {
#pragma unroll
        for (int k = 0; k < IT; k++) {
            x[k] = ga_ld_as<DT, A>(in + (k0 + k < len ? k0 + k : len - 1) * is);
        }
    }
    else {
        typename R::type raw[IT];
#pragma unroll
        for (int k = 0; k < IT; k++) {
            raw[k] = R::load(in + (k0 + k < len ? k0 + k : len - 1) * is);
        }
#pragma unroll
        for (int k = 0; k < IT; k++) {
            x[k] = R::to_acc(raw[k]);
        }
    }
}

template <int DT, class A, int PROD>
GA_BARRIER_KERNEL void GA_LAUNCH_BOUNDS(GA_RED_BLOCK, 4)
k_scan_cols(ga_scan_desc s, int64_t lines, ga_scan_cols_geom g, ga_scan_tree t)
{
    constexpr int IT = ga_scan_tile_items<DT, A>::value;
    constexpr int LPW = 32 / GA_SCAN_WARPS; /* a warp's share of a tile's 32 lines */
    __shared__ A staged[GA_RED_BLOCK][IT + 1]; /* run-time dtype stores (own row only) */
    __shared__ A ptot[GA_SCAN_WARPS][32];      /* each thread's total of its IT steps */
    __shared__ int ptoth[GA_SCAN_WARPS][32];
    __shared__ A lpre[32]; /* a line's earlier chunks (when there are any) */
    __shared__ int lpreh[32];
    __shared__ unsigned long long tile_id;
    const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
    const int ws = g.ws, grp = warp / ws, part = warp % ws;
    const int nd = s.ndim;
    const int64_t len = s.shape[nd - 1];
    const int64_t is = s.in_strides[nd - 1], os = s.out_strides[nd - 1];
    const int64_t lpt = (int64_t)32 * (GA_SCAN_WARPS / ws); /* lines per tile */
    const unsigned long long total =
        (unsigned long long)((lines + lpt - 1) / lpt * g.chunks);
    A *mine = staged[threadIdx.x];
    for (unsigned long long next = blockIdx.x;; next += gridDim.x) {
        /* ids in order from the counter where tiles look back (a tile waits only for
         * smaller ids, taken by running blocks); the grid's stride where none does */
        unsigned long long tid = next;
        if (t.next != nullptr) {
            if (threadIdx.x == 0) {
                tile_id = atomicAdd(t.next, 1ull);
            }
            __syncthreads();
            tid = tile_id;
            __syncthreads();
        }
        if (tid >= total) {
            return;
        }
        const int64_t lg = (int64_t)(tid / (unsigned long long)g.chunks);
        const int64_t c = (int64_t)(tid % (unsigned long long)g.chunks);
        const int64_t line = lg * lpt + grp * 32 + lane;
        const bool valid = line < lines;
        const int64_t at = valid ? line : lines - 1; /* loads stay unpredicated */
        const char *in = s.in + ga_scan_row_off(s, s.in_strides, at);
        char *out = s.out + ga_scan_row_off(s, s.out_strides, at);
        A x[IT];
        /* IT steps of the line per thread, the block's parts of it added up in
         * shared memory, the chunks before by the look-back tree: the carry of each
         * thread is the fold of the earlier chunks (top level first, k_lookback.cuh)
         * then of the parts before it, in order; its items after it, one by one. So
         * the grouping depends on the shape alone: the same bits on every run. */
        const int64_t k0 = (c * ws + part) * IT;
        ga_scan_load_line<DT, A, IT>(in, is, k0, len, x);
        const int64_t left = valid ? len - k0 : 0;
        const int n = left <= 0 ? 0 : left >= IT ? IT : (int)left;
        A pt = x[0];
#pragma unroll
        for (int k = 1; k < IT; k++) {
            if (k < n) {
                pt = ga_rm_sp(pt, x[k], PROD);
            }
        }
        ptot[warp][lane] = pt;
        ptoth[warp][lane] = n > 0;
        __syncthreads();
        if (t.levels > 0) {
            /* the items wait in shared memory while the warps look back (in registers
             * they spilled under the 64-register cap, as k_scan_tiles' did) */
#pragma unroll
            for (int k = 0; k < IT; k++) {
                mine[k] = x[k];
            }
            /* (ws is GA_SCAN_WARPS here: one group of 32 lines; each warp publishes the
             * chunk's total of LPW lines before any look-back waits) */
            for (int j = warp * LPW; j < warp * LPW + LPW; j++) {
                if (lg * 32 + j >= lines) {
                    break;
                }
                bool h = lane < GA_SCAN_WARPS && ptoth[lane % GA_SCAN_WARPS][j] != 0;
                const A v = ga_warp_fold(ptot[lane % GA_SCAN_WARPS][j], h, PROD);
                ga_scan_publish<A>(t, lg * 32 + j, c, v, PROD);
            }
            for (int j = warp * LPW; j < warp * LPW + LPW; j++) {
                if (lg * 32 + j >= lines) {
                    break;
                }
                bool ph = false;
                const A pre = ga_scan_prefix<A>(t, lg * 32 + j, c, ptot[0][j], PROD, &ph);
                if (lane == 0) {
                    lpre[j] = pre;
                    lpreh[j] = ph;
                }
            }
            __syncthreads();
#pragma unroll
            for (int k = 0; k < IT; k++) {
                x[k] = mine[k];
            }
        }
        A carry = pt;
        bool ch = false;
        if (t.levels > 0) {
            carry = lpre[lane];
            ch = lpreh[lane] != 0;
        }
        for (int q = grp * ws; q < warp; q++) {
            carry = ga_scan_cat(carry, ch, ptot[q][lane], ptoth[q][lane] != 0, PROD);
            ch = ch || ptoth[q][lane] != 0;
        }
#pragma unroll
        for (int k = 0; k < IT; k++) {
            carry = ga_scan_cat(carry, ch, x[k], true, PROD);
            ch = true;
            x[k] = carry;
        }
        ga_scan_store_line<DT, A, IT>(out, os, s.out_dtype, k0, n, x, mine);
        __syncthreads(); /* ptot and lpre are read before the next tile writes them */
    }
}

/* ---- a warp per row ---- */

template <int DT, class A, int PROD>
GA_BARRIER_KERNEL void GA_LAUNCH_BOUNDS(GA_RED_BLOCK, 4)
k_scan_warps(ga_scan_desc s, int64_t rows)
{
    constexpr int IT = ga_scan_items<A>::value;
    __shared__ A sm[GA_SCAN_WARPS][32 * (IT + 1)];
    const int warp = (int)threadIdx.x / 32;
    const int nd = s.ndim;
    constexpr int prod = PROD; /* the op a constant: no sum-or-product select per step */
    const int64_t len = s.shape[nd - 1];
    const int64_t is = s.in_strides[nd - 1], os = s.out_strides[nd - 1];
    const int wpb = (int)blockDim.x / 32; /* fewer than 8 where rows are few */
    const int64_t step = (int64_t)gridDim.x * wpb;
    for (int64_t row = (int64_t)blockIdx.x * wpb + warp; row < rows;
         row += step) {
        const char *in = s.in + ga_scan_row_off(s, s.in_strides, row);
        char *out = s.out + ga_scan_row_off(s, s.out_strides, row);
        constexpr bool EXACT = ga_scan_exact<A, PROD>::value;
        const A id = ga_scan_id<A, PROD>();
        A carry = id;
        bool ch = false;
        for (int64_t base = 0; base < len; base += 32 * IT) {
            A x[IT];
            const int n =
                ga_scan_load_warp<DT, A, IT>(in, is, base, len, sm[warp], x, id);
            if constexpr (EXACT) {
                (void)n;
                const A tot = ga_scan_warp_round_exact<A, IT, PROD>(x, carry);
                ga_scan_store_any<DT, A, IT>(out, os, s.out_dtype, base, len, sm[warp],
                                             x);
                carry = ga_rm_sp(carry, tot, prod);
            }
            else {
                bool th;
                const A tot = ga_scan_warp_round<A, IT>(x, n, carry, ch, prod, &th);
                ga_scan_store_any<DT, A, IT>(out, os, s.out_dtype, base, len, sm[warp],
                                             x);
                carry = ga_scan_cat(carry, ch, tot, th, prod);
                ch = ch || th;
            }
        }
    }
}

/* ---- a block per tile, one pass ---- */

template <int DT, class A, int PROD>
GA_BARRIER_KERNEL void GA_LAUNCH_BOUNDS(GA_RED_BLOCK, 4)
k_scan_tiles(ga_scan_desc s, int64_t rows, ga_scan_tree t)
{
    constexpr int IT = ga_scan_tile_items<DT, A>::value;
    constexpr int64_t TILE = (int64_t)GA_SCAN_WARPS * 32 * IT;
    __shared__ A sm[GA_SCAN_WARPS][32 * (IT + 1)];
    __shared__ A wpre[GA_SCAN_WARPS]; /* each warp's total, then the warps before it */
    __shared__ int wpre_has[GA_SCAN_WARPS];
    __shared__ A tile_pre;
    __shared__ int tile_pre_has;
    __shared__ unsigned long long tile_id;
    const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
    const int nd = s.ndim;
    constexpr int prod = PROD; /* the op a constant: no sum-or-product select per step */
    const int64_t len = s.shape[nd - 1];
    const int64_t is = s.in_strides[nd - 1], os = s.out_strides[nd - 1];
    const unsigned long long total = (unsigned long long)(rows * t.tiles);
    constexpr bool EXACT = ga_scan_exact<A, PROD>::value;
    const A id = ga_scan_id<A, PROD>();
    for (;;) {
        if (threadIdx.x == 0) {
            tile_id = atomicAdd(t.next, 1ull);
        }
        __syncthreads();
        const unsigned long long tid = tile_id;
        __syncthreads(); /* read by all before thread 0 takes the next one */
        if (tid >= total) {
            return;
        }
        const int64_t row = (int64_t)tid / t.tiles, i = (int64_t)tid % t.tiles;
        const int64_t k0 = i * TILE, k1 = k0 + TILE < len ? k0 + TILE : len;
        const char *in = s.in + ga_scan_row_off(s, s.in_strides, row);
        char *out = s.out + ga_scan_row_off(s, s.out_strides, row);
        const int64_t base = k0 + (int64_t)warp * 32 * IT;

        A x[IT];
        const int n = ga_scan_load_warp<DT, A, IT>(in, is, base, k1, sm[warp], x, id);
        bool th = true;
        A wt;
        if constexpr (EXACT) {
            (void)n;
            wt = ga_scan_warp_round_exact<A, IT, PROD>(x, id);
        }
        else {
            wt = ga_scan_warp_round<A, IT>(x, n, x[0], false, prod, &th);
        }
        /* the items wait in shared memory while warp 0 looks back (in registers
         * they spilled under the 64-register cap) */
        ga_scan_stage<A, IT>(sm[warp], x);
        if (lane == 0) {
            wpre[warp] = wt;
            wpre_has[warp] = th;
        }
        __syncthreads();
        if (warp == 0) {
            /* the warps' totals: exclusive prefixes for each warp, and the tile's */
            bool h = lane < GA_SCAN_WARPS && wpre_has[lane];
            A v = lane < GA_SCAN_WARPS ? wpre[lane] : (EXACT ? id : wt);
            A ex, agg;
            bool exh = true;
            if constexpr (EXACT) {
                A inc = v;
#pragma unroll
                for (int d = 1; d < GA_SCAN_WARPS; d *= 2) {
                    const A y = ga_shfl_up(inc, d);
                    if (lane >= d) {
                        inc = ga_rm_sp(y, inc, PROD);
                    }
                }
                ex = ga_shfl_up(inc, 1);
                ex = lane > 0 ? ex : id;
                agg = ga_shfl_by_idx(inc, GA_SCAN_WARPS - 1);
            }
            else {
                const A inc = ga_warp_scan_incl(v, h, prod);
                ex = ga_shfl_up(inc, 1);
                exh = __shfl_up_sync(0xffffffffu, h ? 1 : 0, 1u) != 0 && lane > 0;
                agg = ga_shfl_by_idx(inc, GA_SCAN_WARPS - 1);
            }
            if (lane < GA_SCAN_WARPS) {
                wpre[lane] = ex;
                wpre_has[lane] = exh;
            }
            bool ph = false;
            A pre = agg;
            if (t.levels > 0) {
                ga_scan_publish<A>(t, row, i, agg, prod); /* before any wait */
                pre = ga_scan_prefix<A>(t, row, i, agg, prod, &ph);
            }
            if (lane == 0) {
                tile_pre = EXACT && !ph ? id : pre;
                tile_pre_has = ph;
            }
        }
        __syncthreads();
        /* this warp's start: the tiles before, then the warps before in this tile,
         * put in front of each item (its scan from the warp's stretch start) */
        if constexpr (EXACT) {
            const A carry = ga_rm_sp(tile_pre, wpre[warp], PROD);
            ga_scan_emit_any<DT, A, IT>(out, os, s.out_dtype, base, k1, sm[warp],
                                        [carry](A v) { return ga_rm_sp(carry, v, PROD); });
        }
        else {
            const A carry = ga_scan_cat(tile_pre, tile_pre_has != 0, wpre[warp],
                                        wpre_has[warp] != 0, prod);
            const bool ch = tile_pre_has != 0 || wpre_has[warp] != 0;
            ga_scan_emit_any<DT, A, IT>(
                out, os, s.out_dtype, base, k1, sm[warp],
                [carry, ch](A v) { return ga_scan_cat(carry, ch, v, true, PROD); });
        }
        /* (the next tile's barriers come before its loads overwrite sm) */
    }
}

/* ---- host side ---- */

typedef int (*ga_scan_launcher)(int dev, const ga_scan_desc *s, int64_t rows);

/* Geometry (tests/cuda/test_cuda_scans.py and tests/cuda/test_cuda_scan_budgets.py
 * count it): one launch whatever the shape, no host wait, and at least
 * min(GA_SCAN_FILL, tiles of work) blocks, a tile of work being TILE elements (what a
 * block of k_scan_tiles or k_scan_cols holds at most). GA_SCAN_FILL is more than any
 * GPU's multiprocessors, so that the choice of kernel, and with it the grouping of a
 * float scan's terms, depends on the shape alone: the same bits on every GPU. */
#define GA_SCAN_FILL 1024

template <int DT, class A, int PROD>
static int
ga_scan_launch_op(int dev, const ga_scan_desc *s, int64_t rows)
{
    cudaStream_t stream;
    int st = ga_cuda_stream(dev, &stream);
    if (st != GA_OK) {
        return st;
    }
    const int nd = s->ndim;
    const int64_t len = s->shape[nd - 1];
    constexpr int IT = ga_scan_tile_items<DT, A>::value;
    constexpr int64_t TILE = (int64_t)GA_SCAN_WARPS * 32 * IT;
    const int64_t work = (rows * len + TILE - 1) / TILE; /* (an array's size: no overflow) */
    const int64_t fill = work < GA_SCAN_FILL ? work : GA_SCAN_FILL;
    /* an outer-axis scan: neighbouring rows are neighbouring elements, a lane each
     * (with fewer rows than a warp, lanes would idle) */
    bool outer = false;
    for (int k = nd - 2; k >= 0; k--) {
        if (s->shape[k] > 1) {
            outer =
                llabs(s->in_strides[k]) < llabs(s->in_strides[nd - 1]) && rows >= 32;
            break;
        }
    }
    ga_scan_tree t;
    memset(&t, 0, sizeof(t));
    void *scratch = nullptr;
    size_t bytes = 0;
    if (len <= GA_SCAN_SERIAL_MAX || outer) {
        /* k_scan_cols: tiles of ws x IT steps (a thread per line where one round
         * covers it), chunks of a long line looking back to the ones before */
        ga_scan_cols_geom g;
        g.ws = 1;
        while (g.ws < GA_SCAN_WARPS && (int64_t)g.ws * IT < len) {
            g.ws *= 2;
        }
        g.chunks = (len + (int64_t)g.ws * IT - 1) / ((int64_t)g.ws * IT);
        const int64_t lpt = (int64_t)32 * (GA_SCAN_WARPS / g.ws);
        if (g.chunks > 1) {
            GA_TRY(ga_scan_tree_alloc<A>(dev, stream, rows, g.chunks, &t, &scratch,
                                         &bytes));
        }
        GA_LAUNCH((k_scan_cols<DT, A, PROD>), ga_k_blocks_for((rows + lpt - 1) / lpt *
                                                              g.chunks),
                  GA_RED_BLOCK, 0, stream, *s, rows, g, t);
    }
    else if (len >= 2 * TILE ||
             (len >= TILE / 2 && (rows + GA_SCAN_WARPS - 1) / GA_SCAN_WARPS < fill)) {
        /* rows of a tile or more, too few for a block per 8: a block per tile (a row
         * of at least half a tile keeps at least half of each block busy) */
        const int64_t tiles = (len + TILE - 1) / TILE;
        GA_TRY(ga_scan_tree_alloc<A>(dev, stream, rows, tiles, &t, &scratch, &bytes));
        GA_LAUNCH((k_scan_tiles<DT, A, PROD>), ga_k_blocks_for(rows * tiles),
                  GA_RED_BLOCK, 0, stream, *s, rows, t);
    }
    else {
        /* a warp per row, 8 a block, or fewer where that leaves blocks too few (rows
         * under half a tile: 2 a block are always enough) */
        int64_t wpb = GA_SCAN_WARPS;
        while (wpb > 1 && (rows + wpb - 1) / wpb < fill) {
            wpb /= 2;
        }
        GA_LAUNCH((k_scan_warps<DT, A, PROD>), ga_k_blocks_for((rows + wpb - 1) / wpb),
                  (unsigned)(32 * wpb), 0, stream, *s, rows);
    }
    cudaError_t err = cudaGetLastError();
    if (scratch != nullptr) {
        ga_cuda_free(dev, scratch, bytes); /* stream-ordered, like the reductions' */
    }
    if (err != cudaSuccess) {
        return ga_cuda_error(err, "scan launch", __FILE__, __LINE__);
    }
    return GA_OK;
}

/* A kernel per op (PROD: cumulative_prod), so that each step is the op's own
 * arithmetic: with the op a run-time flag, every step computed both the sum and the
 * product and selected one (twice the instructions of a tile, tools/cuda_report.py). */
template <int DT, class A>
static int
ga_scan_launch(int dev, const ga_scan_desc *s, int64_t rows)
{
    return ga_rm_is_prod(s->op, 1) ? ga_scan_launch_op<DT, A, 1>(dev, s, rows)
                                   : ga_scan_launch_op<DT, A, 0>(dev, s, rows);
}

/* Scans accumulate floats in double (complex in complex128) whatever the output, as
 * the CPU's do (ga_reduce_math.h): a float32 running sum of many terms drifts. A scan
 * reads and writes every element once, so the wider arithmetic costs no bandwidth. */
enum { GA_SACC_I64, GA_SACC_U64, GA_SACC_F64, GA_SACC_C128, GA_NSACC };

static int
ga_scan_acc_kind(int out_dt)
{
    switch (out_dt) {
    case GA_UINT8:
    case GA_UINT16:
    case GA_UINT32:
    case GA_UINT64:
        return GA_SACC_U64;
    case GA_FLOAT16:
    case GA_FLOAT32:
    case GA_FLOAT64:
        return GA_SACC_F64;
    case GA_COMPLEX64:
    case GA_COMPLEX128:
        return GA_SACC_C128;
    default:
        return GA_SACC_I64;
    }
}

typedef struct {
    ga_scan_launcher fn[GA_NTYPES][GA_NSACC];
} ga_scan_table;

static ga_scan_table
ga_scan_build_table(void)
{
    ga_scan_table t;
#define GA_X_SCAN(e, name, kind, size, ch, ctype)                                      \
    t.fn[e][GA_SACC_I64] = ga_scan_launch<e, int64_t>;                                 \
    t.fn[e][GA_SACC_U64] = ga_scan_launch<e, uint64_t>;                                \
    t.fn[e][GA_SACC_F64] = ga_scan_launch<e, double>;                                  \
    t.fn[e][GA_SACC_C128] = ga_scan_launch<e, ga_cd>;
    GA_DTYPES(GA_X_SCAN)
#undef GA_X_SCAN
    return t;
}

extern "C" int
ga_cuda_scan(int dev, const ga_scan_desc *s)
{
    static const ga_scan_table table = ga_scan_build_table();
    if (s->in_dtype < 0 || s->in_dtype >= GA_NTYPES || s->out_dtype < 0 ||
        s->out_dtype >= GA_NTYPES || s->ndim < 1 || s->ndim > GA_MAXDIMS) {
        return ga_error(GA_ERR_VALUE, "scan: bad descriptor (dtypes %d -> %d, ndim %d)",
                        (int)s->in_dtype, (int)s->out_dtype, (int)s->ndim);
    }
    if (s->op != GA_SCAN_CUMSUM && s->op != GA_SCAN_CUMPROD) {
        return ga_error(GA_ERR_VALUE, "scan: unknown operation %d", (int)s->op);
    }
    int64_t rows = 1;
    for (int k = 0; k < s->ndim; k++) {
        if (s->shape[k] == 0) {
            return GA_OK;
        }
        if (k < s->ndim - 1) {
            rows *= s->shape[k];
        }
    }
    return table.fn[s->in_dtype][ga_scan_acc_kind(s->out_dtype)](dev, s, rows);
}
