/* k_reduce.cu: reductions (sum, prod, max, min, argmax, argmin, all, any) on a CUDA
 * device (scans: k_scan.cu).
 *
 * A reduction is described by the core as out[o] = reduce_r in[o, r], with the input
 * addressed through two stride sets (ga_backend.h). Each operation is a small policy
 * (how to load an element, combine two partial results, store the result); three
 * kernel templates run every policy:
 *   - k_reduce_block: a block per output (and split, below). Each thread folds a
 *     strided slice of the reduced elements serially (Kahan-compensated for floating
 *     sums), then the block combines its partials: warp shuffles within each warp,
 *     then warp 0 over the warps (pairwise in shape). For reductions along the inner
 *     axis, where a block's threads read neighbouring elements.
 *   - k_reduce_cols: a thread per output (and split), no barriers. For reductions
 *     over an outer axis, where neighbouring outputs are neighbours in memory (then
 *     neighbouring threads read neighbouring addresses: coalesced, whereas a block per
 *     output would read with the reduced stride), and for short reductions.
 *   - k_reduce_finish (a block per output, after k_reduce_block) or
 *     k_reduce_finish_cols (a thread per output, after k_reduce_cols): when the
 *     outputs alone would leave multiprocessors idle (a sum of a whole array has one
 *     output), the reduced range is split so that the first kernel's grid covers every
 *     multiprocessor; each split writes its partial result to scratch memory and this
 *     second kernel combines them (two launches, no host wait, no atomics: the result
 *     does not depend on the order blocks ran in).
 * What the policies compute (identities, combines, NaN rules, the conversion of the
 * result to the output dtype) is ga_reduce_math.h's, the same functions the CPU
 * backend calls: the policies only say which accumulator to keep and how to load.
 */
#include "k_block.cuh"
#include "k_common.cuh"

#include "ga_reduce_math.h"

/* ---- a thread's serial sum: Kahan-compensated in a floating accumulator (exact
 * types need no compensation); ga_reduce_math.h's arithmetic ---- */

static GA_HD inline void
ga_kahan(float &s, float &c, float x)
{
    ga_rm_kahan_f32(&s, &c, x);
}
static GA_HD inline void
ga_kahan(double &s, double &c, double x)
{
    ga_rm_kahan_f64(&s, &c, x);
}
template <class C>
static GA_HD inline void
ga_kahan(C &s, C &c, C x)
{
    ga_kahan(s.re, c.re, x.re);
    ga_kahan(s.im, c.im, x.im);
}
static GA_HD inline void
ga_kahan(int64_t &s, int64_t &c, int64_t x)
{
    (void)c;
    s = ga_rm_sum_i64(s, x);
}
static GA_HD inline void
ga_kahan(uint64_t &s, uint64_t &c, uint64_t x)
{
    (void)c;
    s = ga_rm_sum_u64(s, x);
}

/* ---- values compared by max/min/argmax/argmin (ordered by ga_rm_takes) ---- */

template <int DT> struct ga_cmpval {
    typedef typename ga_storage<DT>::type type;
};
template <> struct ga_cmpval<GA_FLOAT16> {
    typedef float type; /* decoded: every half is exactly a float */
};
/* Values narrower than int compare as int: an accumulator {uint8_t, int64_t} (and,
 * once loads became typed, {int16_t, int64_t}) that a warp shuffle moves through
 * registers made nvcc spill the block reduction to local memory, {int, int64_t} does
 * not (cuobjdump -res-usage). */
template <> struct ga_cmpval<GA_BOOL> {
    typedef int type;
};
template <> struct ga_cmpval<GA_INT8> {
    typedef int type;
};
template <> struct ga_cmpval<GA_UINT8> {
    typedef int type;
};
template <> struct ga_cmpval<GA_INT16> {
    typedef int type;
};
template <> struct ga_cmpval<GA_UINT16> {
    typedef int type;
};

template <int DT>
static GA_HD inline typename ga_cmpval<DT>::type
ga_ld_cmp(const char *p)
{
    if constexpr (DT == GA_FLOAT16) {
        return ga_half_to_float(ga_ld<DT>(p));
    }
    else {
        return ga_ld<DT>(p);
    }
}

/* ---- the policies ----
 * Each has: acc_t (plain data: it lives in shared memory), state_t (a thread's serial
 * accumulator), ESIZE (the element's bytes), init(op), load(p, r) -> acc_t,
 * push(state, x, op), value(state),
 * combine(a, b, op) (associative), store(p, out_dtype, acc). `op` is the ga_reduce_op;
 * pairs of ops that differ only in direction share a policy. */

/* SUM and PROD of dtype DT accumulated in A (the accumulator of the output dtype). */
template <int DT, class A> struct ga_rp_sum {
    typedef A acc_t;
    static constexpr int DTYPE = DT;
    static constexpr int ESIZE = (int)sizeof(typename ga_storage<DT>::type);
    typedef struct {
        A s, c;
    } state_t;
    static GA_HD state_t
    init(int op)
    {
        state_t st;
        st.s = ga_rm_identity<A>(ga_rm_is_prod(op, 0));
        st.c = ga_rm_identity<A>(0);
        return st;
    }
    static GA_HD acc_t
    load(const char *p, int64_t r)
    {
        (void)r;
        return ga_ld_as<DT, A>(p);
    }
    /* a real element in a complex sum: its imaginary part is +0.0 */
    static constexpr bool REAL_INTO_COMPLEX = !std::is_arithmetic<A>::value &&
                                              DT != GA_COMPLEX64 && DT != GA_COMPLEX128;
    static GA_HD void
    push(state_t &st, acc_t x, int op)
    {
        if (ga_rm_is_prod(op, 0)) {
            st.s = ga_rm_sp(st.s, x, 1);
        }
        else if constexpr (REAL_INTO_COMPLEX) {
            /* Kahan's steps on +0.0 terms keep s.im and c.im +0.0 (0 - 0, 0 + 0): the
             * same bits without them. Half the work and registers: the full complex
             * step spilled 4 bytes on sm_120 in the wheel's build (sums of 1- to 4-byte
             * elements) */
            ga_kahan(st.s.re, st.c.re, x.re);
        }
        else {
            ga_kahan(st.s, st.c, x);
        }
    }
    static GA_HD acc_t
    value(const state_t &st)
    {
        return st.s;
    }
    static GA_HD acc_t
    combine(acc_t a, acc_t b, int op)
    {
        return ga_rm_sp(a, b, ga_rm_is_prod(op, 0));
    }
    static GA_HD void
    store(char *p, int dt, acc_t v)
    {
        ga_rm_store(p, dt, v);
    }
};

/* Policies whose thread state is just a partial result. */
template <class Self, class Acc> struct ga_rp_simple {
    typedef Acc acc_t;
    typedef Acc state_t;
    static GA_HD void
    push(state_t &st, acc_t x, int op)
    {
        st = Self::combine(st, x, op);
    }
    static GA_HD acc_t
    value(const state_t &st)
    {
        return st;
    }
};

/* MAX and MIN: ga_rm_takes's rule (NaN wins, the earlier one on ties). The identity
 * is "no element yet" (a flag), since a dtype's lowest value is not an identity for
 * NaN-aware max. `a` is the earlier partial result in every combine (lower lane,
 * lower split). */
template <int DT> struct ga_ext_acc {
    typename ga_cmpval<DT>::type v;
    int has;
};
template <int DT>
struct ga_rp_ext : ga_rp_simple<ga_rp_ext<DT>, ga_ext_acc<DT>> {
    typedef ga_ext_acc<DT> acc_t;
    static constexpr int DTYPE = DT;
    static constexpr int ESIZE = (int)sizeof(typename ga_storage<DT>::type);
    static GA_HD acc_t
    init(int op)
    {
        (void)op;
        acc_t a;
        memset(&a, 0, sizeof(a));
        return a;
    }
    static GA_HD acc_t
    load(const char *p, int64_t r)
    {
        (void)r;
        acc_t a;
        a.v = ga_ld_cmp<DT>(p);
        a.has = 1;
        return a;
    }
    static GA_HD acc_t
    combine(acc_t a, acc_t b, int op)
    {
        return b.has && (!a.has || ga_rm_takes(a.v, b.v, op == GA_RED_MAX)) ? b : a;
    }
    static GA_HD void
    store(char *p, int dt, acc_t a)
    {
        ga_rm_store(p, dt, a.v); /* exact: the value came from an element of dt */
    }
};

/* ARGMAX and ARGMIN: the flat index (C order over the reduced axes) of the extreme
 * element; the first one on ties, and the first NaN if there is one. The combine
 * (ga_rm_arg_takes) is a selection under a total order (NaN above everything, then
 * value, then the smaller index), so the tree may combine partials in any grouping. */
template <int DT> struct ga_arg_acc {
    typename ga_cmpval<DT>::type v;
    int64_t i; /* -1: no element yet */
};
template <int DT>
struct ga_rp_arg : ga_rp_simple<ga_rp_arg<DT>, ga_arg_acc<DT>> {
    typedef ga_arg_acc<DT> acc_t;
    static constexpr int DTYPE = DT;
    static constexpr int ESIZE = (int)sizeof(typename ga_storage<DT>::type);
    static GA_HD acc_t
    init(int op)
    {
        (void)op;
        acc_t a;
        memset(&a, 0, sizeof(a));
        a.i = -1;
        return a;
    }
    static GA_HD acc_t
    load(const char *p, int64_t r)
    {
        acc_t a;
        a.v = ga_ld_cmp<DT>(p);
        a.i = r;
        return a;
    }
    static GA_HD acc_t
    combine(acc_t a, acc_t b, int op)
    {
        if (a.i < 0) {
            return b;
        }
        if (b.i < 0) {
            return a;
        }
        return ga_rm_arg_takes(a.v, a.i, b.v, b.i, op == GA_RED_ARGMAX) ? b : a;
    }
    /* A thread pushes its elements in increasing index order, so the later one is
     * always x: ga_rm_takes alone decides (the first NaN stays, ties keep the earlier),
     * without the index comparison of a combine in any order. Lighter: argmax of
     * complex128 with combine here spilled 12 bytes on sm_120 in the wheel's build. */
    static GA_HD void
    push(acc_t &st, acc_t x, int op)
    {
        if (st.i < 0 || ga_rm_takes(st.v, x.v, op == GA_RED_ARGMAX)) {
            st = x;
        }
    }
    static GA_HD void
    store(char *p, int dt, acc_t a)
    {
        ga_rm_store_i64(p, dt, a.i < 0 ? (int64_t)0 : a.i);
    }
};

/* The truth of an element of dtype DT: the shared cast to bool (nonzero; NaN is
 * true; complex: either part nonzero), as the CPU's reductions read it. */
template <int DT> struct ga_truth;
#define GA_X_TRUTH(e, name, kind, size, ch, ctype)                                     \
    template <> struct ga_truth<e> {                                                   \
        static GA_HD int                                                               \
        of(const char *p)                                                              \
        {                                                                              \
            char t;                                                                    \
            ga_k_cast_##name##_bool(&t, p);                                            \
            return t;                                                                  \
        }                                                                              \
    };
GA_DTYPES(GA_X_TRUTH)
#undef GA_X_TRUTH

/* ALL and ANY: ga_rm_bool_combine over the elements' truth. */
template <int DT>
struct ga_rp_bool : ga_rp_simple<ga_rp_bool<DT>, int> {
    typedef int acc_t;
    static constexpr int DTYPE = DT;
    static constexpr int ESIZE = (int)sizeof(typename ga_storage<DT>::type);
    static GA_HD acc_t
    init(int op)
    {
        return ga_rm_bool_identity(op);
    }
    static GA_HD acc_t
    load(const char *p, int64_t r)
    {
        (void)r;
        return ga_truth<DT>::of(p);
    }
    static GA_HD acc_t
    combine(acc_t a, acc_t b, int op)
    {
        return ga_rm_bool_combine(a, b, op);
    }
    static GA_HD void
    store(char *p, int dt, acc_t a)
    {
        ga_rm_store_i64(p, dt, a != 0);
    }
};

/* ---- the kernels ---- */

static GA_HD inline int64_t
ga_red_offset(const ga_reduce_desc &d, int64_t r)
{
    return d.red_ndim == 1 ? r * d.in_red_strides[0]
                           : ga_offset(d.red_ndim, d.red_shape, d.in_red_strides, r);
}

/* Where a partial result goes: the output itself when the reduction is not split,
 * else slot [s][o] of the scratch array `partial` for k_reduce_finish. */
template <class P>
static GA_DEV inline void
ga_red_put(const ga_reduce_desc &d, typename P::acc_t *partial, int64_t s, int64_t o,
           typename P::acc_t v)
{
    if (partial != nullptr) {
        partial[s * d.out_size + o] = v;
    }
    else {
        P::store(d.out + ga_offset(d.out_ndim, d.out_shape, d.out_strides, o), d.out_dtype,
                 v);
    }
}

/* Independent loads in flight per thread in the reductions' main loops (the static
 * report's rule: at least 4, tools/cuda_report.py). */
#define GA_RED_UNROLL 4

/* An element of the input as stored (its dtype's storage type). The main loops load
 * these first and convert them (P::load from the register copy) after all of a round's
 * loads are issued: a conversion at the load (float -> int64 has branches) kept nvcc
 * from issuing the next load before it, one load in flight instead of GA_RED_UNROLL. */
template <class P> using ga_red_raw = typename ga_storage<P::DTYPE>::type;

template <int ES> struct ga_red_bits;
template <> struct ga_red_bits<1> {
    typedef uint8_t type;
};
template <> struct ga_red_bits<2> {
    typedef uint16_t type;
};
template <> struct ga_red_bits<4> {
    typedef uint32_t type;
};
template <> struct ga_red_bits<8> {
    typedef uint64_t type;
};

/* The word of the contiguous path's loads: 16 bytes, except 4 elements for elements of
 * 1 and 2 bytes (4 and 8 bytes): with 16 or 8 of them per 16-byte word, a round of
 * GA_RED_UNROLL words was 32 to 64 pushes, and nvcc issued the later loads among the
 * pushes of the first (1 to 3 in flight); 16 pushes a round, as for float32, keep the
 * four in flight (16 bytes a thread: the 16 KB per multiprocessor at 50% occupancy
 * that hide DRAM's latency). */
template <int BYTES> struct ga_red_word; /* a word of BYTES bytes, by 32-bit parts */
template <> struct ga_red_word<16> {
    typedef uint4 type;
    static GA_DEV uint32_t
    part(const type &w, int q)
    {
        return q == 0 ? w.x : q == 1 ? w.y : q == 2 ? w.z : w.w;
    }
};
template <> struct ga_red_word<8> {
    typedef uint2 type;
    static GA_DEV uint32_t
    part(const type &w, int q)
    {
        return q == 0 ? w.x : w.y;
    }
};
template <> struct ga_red_word<4> {
    typedef uint32_t type;
    static GA_DEV uint32_t
    part(const type &w, int q)
    {
        (void)q;
        return w;
    }
};
template <> struct ga_red_word<2> {
    typedef uint16_t type;
    static GA_DEV uint32_t
    part(const type &w, int q)
    {
        (void)q;
        return w;
    }
};

/* Whether a policy's push converts a floating element into an integer sum (a
 * conversion with range checks per element). */
template <class P> struct ga_red_converts {
    static constexpr bool value = false;
};
template <int DT, class A> struct ga_red_converts<ga_rp_sum<DT, A>> {
    static constexpr bool FLOAT_DT = DT == GA_COMPLEX64 || DT == GA_COMPLEX128 ||
                                     DT == GA_FLOAT16 || DT == GA_FLOAT32 ||
                                     DT == GA_FLOAT64;
    static constexpr bool value = std::is_integral<A>::value && FLOAT_DT;
};

/* The word of policy P's contiguous loads. Sums that convert (above) take 2 elements a
 * word where others take 4: with 16 such pushes a round, ptxas spilled 4 bytes under
 * the 64-register cap on sm_120 in the wheel's build (every target assembled from
 * compute_75 PTX: int64 sums of float32).
 * The loads stay 4 in flight; 8 bytes each at 50% occupancy are 32 KB per
 * multiprocessor, still twice the 16 KB that hide DRAM's latency. */
template <class P> struct ga_red_word_of {
    static constexpr int ES = P::ESIZE;
    static constexpr int FULL = ES == 1 ? 4 : ES == 2 ? 8 : 16;
    static constexpr int BYTES =
        ga_red_converts<P>::value && FULL / ES == 4 ? FULL / 2 : FULL;
    typedef typename ga_red_word<BYTES>::type type;
};

/* Element k of the BYTES / ESIZE a word holds, taken out with shifts: reading it
 * through a char pointer into the word made nvcc keep the words in local memory (80
 * bytes of stack, an STL.128 per word: tools/cuda_report.py). k is a constant once the
 * caller's loop is unrolled. */
template <class P>
static GA_DEV inline ga_red_raw<P>
ga_red_word_elem(const typename ga_red_word_of<P>::type &w, int k)
{
    constexpr int ES = P::ESIZE;
    typedef ga_red_word<ga_red_word_of<P>::BYTES> WB;
    ga_red_raw<P> v;
    if constexpr (ES == 16) {
        memcpy(&v, &w, sizeof(v));
    }
    else if constexpr (ES == 8) {
        const uint64_t b = k == 0 ? ((uint64_t)w.y << 32 | w.x) : ((uint64_t)w.w << 32 | w.z);
        memcpy(&v, &b, sizeof(v));
    }
    else {
        const uint32_t word = WB::part(w, k * ES / 4);
        const typename ga_red_bits<ES>::type b =
            (typename ga_red_bits<ES>::type)(word >> (8 * (k * ES % 4)));
        memcpy(&v, &b, sizeof(v));
    }
    return v;
}

/* Push the V = BYTES / ESIZE elements of a word w (elements r, r + 1, ...). */
template <class P>
static GA_DEV inline void
ga_red_push_word(typename P::state_t &st, const typename ga_red_word_of<P>::type &w,
                 int64_t r, int op)
{
    constexpr int V = ga_red_word_of<P>::BYTES / P::ESIZE;
#pragma unroll
    for (int k = 0; k < V; k++) {
        const ga_red_raw<P> e = ga_red_word_elem<P>(w, k);
        P::push(st, P::load((const char *)&e, r + k), op);
    }
}

/* A thread's share of a cooperative fold of elements [r0, r1) of the row at `in`:
 * elements lane0, lane0 + step, ... (a block: step = blockDim.x; a warp: 32), pushed
 * into st in increasing order. GA_RED_UNROLL independent loads per iteration. When the
 * reduced axis is contiguous the loads are words of V elements (ga_red_word; word lane0,
 * lane0 + step, ...), after a scalar head up to the first 16-byte boundary and before
 * a scalar tail (each shorter than V <= step, so one element per thread at most). */
template <class P>
static GA_DEV inline void
ga_red_fold(const ga_reduce_desc &d, const char *in, int64_t r0, int64_t r1, int lane0,
            int step, typename P::state_t &st)
{
    const int op = d.op;
    constexpr int ES = P::ESIZE;
    if (d.red_ndim == 1 && d.in_red_strides[0] == ES && ES <= 16 && 16 % ES == 0) {
        typedef typename ga_red_word_of<P>::type W;
        constexpr int V = ga_red_word_of<P>::BYTES / ES;
        const uintptr_t a = (uintptr_t)(in + r0 * ES);
        int64_t head = (int64_t)((16 - a % 16) % 16) / ES;
        head = head < r1 - r0 ? head : r1 - r0;
        if (lane0 < head) {
            P::push(st, P::load(in + (r0 + lane0) * ES, r0 + lane0), op);
        }
        const int64_t b0 = r0 + head, nw = (r1 - b0) / V;
        const W *w = (const W *)(in + b0 * ES);
        int64_t v = lane0;
        for (; v + (GA_RED_UNROLL - 1) * step < nw; v += GA_RED_UNROLL * step) {
            W x[GA_RED_UNROLL];
#pragma unroll
            for (int u = 0; u < GA_RED_UNROLL; u++) {
                x[u] = ga_ld_vec(w + v + u * step);
            }
#pragma unroll
            for (int u = 0; u < GA_RED_UNROLL; u++) {
                ga_red_push_word<P>(st, x[u], b0 + (v + u * step) * V, op);
            }
        }
        /* fewer than GA_RED_UNROLL rounds left: not unrolled (nvcc unrolled it into a
         * chain of dependent loads, which the report took for the main loop) */
        GA_NO_UNROLL
        for (; v < nw; v += step) {
            ga_red_push_word<P>(st, ga_ld_vec(w + v), b0 + v * V, op);
        }
        const int64_t t = b0 + nw * V + lane0;
        if (t < r1) {
            P::push(st, P::load(in + t * ES, t), op);
        }
        return;
    }
    int64_t r = r0 + lane0;
    for (; r + (GA_RED_UNROLL - 1) * step < r1; r += GA_RED_UNROLL * step) {
        /* the offsets first (64-bit divisions, a call each where red_ndim > 1): made
         * between the loads, they kept the last load from issuing before the first
         * push */
        int64_t off[GA_RED_UNROLL];
#pragma unroll
        for (int u = 0; u < GA_RED_UNROLL; u++) {
            off[u] = ga_red_offset(d, r + u * step);
        }
        ga_red_raw<P> x[GA_RED_UNROLL];
#pragma unroll
        for (int u = 0; u < GA_RED_UNROLL; u++) {
            x[u] = ga_ld<P::DTYPE>(in + off[u]);
        }
#pragma unroll
        for (int u = 0; u < GA_RED_UNROLL; u++) {
            P::push(st, P::load((const char *)&x[u], r + u * step), op);
        }
    }
    GA_NO_UNROLL
    for (; r < r1; r += step) {
        P::push(st, P::load(in + ga_red_offset(d, r), r), op);
    }
}

/* A block per (output, split): its threads fold the split's elements with a stride
 * of the block (neighbouring threads read neighbouring elements, or 16-byte words, when
 * the reduced axis is contiguous), then the block combines them. For reductions along
 * the inner axis longer than GA_RED_WARP_MAX. */
/* 4 blocks of 256 per multiprocessor (50% occupancy) caps registers at 64 */
template <class P>
GA_BARRIER_KERNEL void GA_LAUNCH_BOUNDS(GA_RED_BLOCK, 4)
k_reduce_block(ga_reduce_desc d, int64_t splits, typename P::acc_t *partial)
{
    const int t = (int)threadIdx.x;
    const int64_t items = d.out_size * splits;
    for (int64_t b = blockIdx.x; b < items; b += gridDim.x) {
        const int64_t o = b / splits, s = b % splits;
        int64_t r0, r1;
        ga_chunk(d.red_size, splits, s, &r0, &r1);
        const char *in = d.in + ga_offset(d.out_ndim, d.out_shape, d.in_out_strides, o);
        typename P::state_t st = P::init(d.op);
        ga_red_fold<P>(d, in, r0, r1, t, (int)blockDim.x, st);
        typename P::acc_t v = ga_block_reduce<P>(P::value(st), d.op);
        if (t == 0) {
            ga_red_put<P>(d, partial, s, o, v);
        }
    }
}

/* A warp per output, 8 outputs per block: for inner-axis reductions of more than
 * GA_RED_SERIAL_MAX and at most GA_RED_WARP_MAX elements, where a block per output
 * would leave most of its threads idle. Lanes fold as a block's threads do, then a
 * shuffle tree (lower lane first). Never split: rows this short are many or small. */
template <class P>
GA_BARRIER_KERNEL void GA_LAUNCH_BOUNDS(GA_RED_BLOCK, 4)
k_reduce_warps(ga_reduce_desc d)
{
    const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
    const int warps = (int)blockDim.x / 32;
    for (int64_t o = (int64_t)blockIdx.x * warps + warp; o < d.out_size;
         o += (int64_t)gridDim.x * warps) {
        const char *in = d.in + ga_offset(d.out_ndim, d.out_shape, d.in_out_strides, o);
        typename P::state_t st = P::init(d.op);
        ga_red_fold<P>(d, in, 0, d.red_size, lane, 32, st);
        typename P::acc_t v = P::value(st);
        for (int h = 16; h > 0; h /= 2) {
            v = P::combine(v, ga_shfl_down(v, h), d.op);
        }
        if (lane == 0) {
            P::store(d.out + ga_offset(d.out_ndim, d.out_shape, d.out_strides, o),
                     d.out_dtype, v);
        }
    }
}

/* A thread per (output, split), the splits along the grid's y: neighbouring threads
 * own neighbouring outputs, so when those are neighbours in memory (a reduction along
 * an outer axis) every step of the serial fold reads coalesced. Also the kernel for
 * short reductions, where a block per output would leave most threads idle. Launched
 * with ga_cuda_launch_dims's 256 threads; 4 resident blocks cap registers at 64. */
template <class P>
__global__ void GA_LAUNCH_BOUNDS(256, 4)
k_reduce_cols(ga_reduce_desc d, int64_t splits, typename P::acc_t *partial)
{
    for (int64_t s = blockIdx.y; s < splits; s += gridDim.y) {
        int64_t r0, r1;
        ga_chunk(d.red_size, splits, s, &r0, &r1);
        for (int64_t o = ga_gtid(); o < d.out_size; o += ga_gstride()) {
            const char *in =
                d.in + ga_offset(d.out_ndim, d.out_shape, d.in_out_strides, o);
            typename P::state_t st = P::init(d.op);
            if (d.red_ndim == 1) {
                /* GA_RED_UNROLL independent loads, then their pushes */
                const int64_t step = d.in_red_strides[0];
                int64_t r = r0;
                for (; r + GA_RED_UNROLL <= r1; r += GA_RED_UNROLL) {
                    ga_red_raw<P> x[GA_RED_UNROLL];
#pragma unroll
                    for (int u = 0; u < GA_RED_UNROLL; u++) {
                        x[u] = ga_ld<P::DTYPE>(in + (r + u) * step);
                    }
#pragma unroll
                    for (int u = 0; u < GA_RED_UNROLL; u++) {
                        P::push(st, P::load((const char *)&x[u], r + u), d.op);
                    }
                }
                GA_NO_UNROLL
                for (; r < r1; r++) {
                    P::push(st, P::load(in + r * step, r), d.op);
                }
            }
            else {
                /* not unrolled: four copies of the index arithmetic (64-bit divisions)
                 * made this kernel 40% of the reductions' machine code */
                for (int64_t r = r0; r < r1; r++) {
                    P::push(st, P::load(in + ga_red_offset(d, r), r), d.op);
                }
            }
            ga_red_put<P>(d, partial, s, o, P::value(st));
        }
    }
}

/* Second pass of a split reduction: a block per output combines its `splits`
 * partial results and stores the value. No atomics, so the result does not depend on
 * the order in which blocks ran. */
template <class P>
GA_BARRIER_KERNEL void GA_LAUNCH_BOUNDS(GA_RED_BLOCK, 4)
k_reduce_finish(ga_reduce_desc d, int64_t splits, const typename P::acc_t *partial)
{
    const int t = (int)threadIdx.x;
    for (int64_t o = blockIdx.x; o < d.out_size; o += gridDim.x) {
        typename P::acc_t v = ga_red_identity<P>(d.op);
        for (int64_t s = t; s < splits; s += blockDim.x) {
            v = P::combine(v, partial[s * d.out_size + o], d.op);
        }
        v = ga_block_reduce<P>(v, d.op);
        if (t == 0) {
            P::store(d.out + ga_offset(d.out_ndim, d.out_shape, d.out_strides, o),
                     d.out_dtype, v);
        }
    }
}

/* Second pass after a split k_reduce_cols (many outputs): a thread per output folds
 * its `splits` partial results in split order. Slot [s][o] puts neighbouring outputs
 * side by side, so each step reads coalesced; a block per output (k_reduce_finish)
 * would leave all but `splits` of its threads idle and take a barrier per output. */
template <class P>
__global__ void GA_LAUNCH_BOUNDS(256, 4)
k_reduce_finish_cols(ga_reduce_desc d, int64_t splits, const typename P::acc_t *partial)
{
    for (int64_t o = ga_gtid(); o < d.out_size; o += ga_gstride()) {
        typename P::acc_t v = partial[o];
        for (int64_t s = 1; s < splits; s++) {
            v = P::combine(v, partial[s * d.out_size + o], d.op);
        }
        P::store(d.out + ga_offset(d.out_ndim, d.out_shape, d.out_strides, o), d.out_dtype,
                 v);
    }
}

typedef int (*ga_red_launcher)(int dev, const ga_reduce_desc *d);

/* Reductions this short go to one thread each: a block of GA_RED_BLOCK threads would
 * leave most of them idle, and a serial Kahan sum of 64 terms loses nothing. */
#define GA_RED_SERIAL_MAX 64
/* Inner-axis reductions up to this long go to a warp each (k_reduce_warps): 8 rounds
 * of 32 lanes x 8 elements (float32, 16-byte loads) at most; longer ones to a block. */
#define GA_RED_WARP_MAX 2048
/* Resident blocks of GA_RED_BLOCK threads per multiprocessor the launch bounds allow:
 * a grid of that many per multiprocessor keeps every one busy. */
#define GA_RED_BLOCKS_PER_SM 4
/* A split must be worth its block: at least this many elements per thread of the
 * block kernel, per thread of the column kernel. */
#define GA_RED_MIN_PER_THREAD 8
#define GA_RED_MIN_PER_COL 32

/* Splits of the reduced range that give a grid of about GA_RED_BLOCKS_PER_SM blocks
 * per multiprocessor when `blocks` (the grid without splitting) is fewer, limited so
 * each split keeps `min_per_split` elements. 1: do not split. */
static int64_t
ga_red_splits(int dev, int64_t blocks, int64_t red_size, int64_t min_per_split)
{
    const int64_t target = (int64_t)GA_RED_BLOCKS_PER_SM * ga_cuda_sm_count(dev);
    if (blocks >= target) {
        return 1;
    }
    int64_t splits = (target + blocks - 1) / blocks;
    if (splits > red_size / min_per_split) {
        splits = red_size / min_per_split;
    }
    return splits < 2 ? 1 : splits;
}

/* Geometry (documented in tests/cuda/test_cuda_budgets.py, which counts it): an outer-axis
 * or short reduction runs k_reduce_cols, an inner-axis one of up to GA_RED_WARP_MAX
 * elements k_reduce_warps, any other k_reduce_block; when the grid of the first or the
 * last would leave multiprocessors idle the reduced range is split over more blocks and
 * a finish kernel combines the splits: at most 2 launches, no host wait. */
template <class P>
static int
ga_red_launch(int dev, const ga_reduce_desc *d)
{
    typedef typename P::acc_t acc_t;
    cudaStream_t stream;
    int st = ga_cuda_stream(dev, &stream);
    if (st != GA_OK) {
        return st;
    }
    /* an outer-axis reduction: neighbouring outputs are neighbouring input elements
     * (with fewer than a warp of outputs a column thread would idle its warp) */
    bool outer = d->out_ndim >= 1 && d->red_ndim >= 1 &&
                 llabs(d->in_out_strides[d->out_ndim - 1]) <
                     llabs(d->in_red_strides[d->red_ndim - 1]) &&
                 d->out_size >= 32;
    bool cols = d->red_size <= GA_RED_SERIAL_MAX || outer;
    if (!cols && d->red_size <= GA_RED_WARP_MAX) {
        const int64_t warps = GA_RED_BLOCK / 32;
        GA_LAUNCH(k_reduce_warps<P>, ga_k_blocks_for((d->out_size + warps - 1) / warps),
                  GA_RED_BLOCK, 0, stream, *d);
        GA_CUDA_TRY(cudaGetLastError());
        return GA_OK;
    }
    int64_t splits;
    unsigned grid_x, block;
    if (cols) {
        ga_cuda_launch_dims(dev, d->out_size, &grid_x, &block);
        splits = d->red_size <= GA_RED_SERIAL_MAX
                     ? 1
                     : ga_red_splits(dev, grid_x, d->red_size, GA_RED_MIN_PER_COL);
    }
    else {
        grid_x = ga_k_blocks_for(d->out_size);
        block = GA_RED_BLOCK;
        splits = ga_red_splits(dev, grid_x, d->red_size,
                               (int64_t)GA_RED_BLOCK * GA_RED_MIN_PER_THREAD);
    }
    acc_t *partial = nullptr;
    if (splits > 1) {
        st = ga_cuda_alloc(dev, (size_t)(d->out_size * splits) * sizeof(acc_t),
                           (void **)&partial);
        if (st != GA_OK) {
            return st;
        }
    }
    if (cols) {
        GA_LAUNCH(k_reduce_cols<P>, dim3(grid_x, (unsigned)splits), block, 0, stream, *d,
                  splits, partial);
    }
    else {
        GA_LAUNCH(k_reduce_block<P>, ga_k_blocks_for(d->out_size * splits), block, 0,
                  stream, *d, splits, partial);
    }
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess && splits > 1 && cols) {
        GA_LAUNCH(k_reduce_finish_cols<P>, grid_x, block, 0, stream, *d, splits,
                  (const acc_t *)partial);
        err = cudaGetLastError();
    }
    else if (err == cudaSuccess && splits > 1) {
        GA_LAUNCH(k_reduce_finish<P>, ga_k_blocks_for(d->out_size), GA_RED_BLOCK, 0,
                  stream, *d, splits, (const acc_t *)partial);
        err = cudaGetLastError();
    }
    if (partial != nullptr) {
        /* stream-ordered: the block is reused only by work queued after this */
        ga_cuda_free(dev, partial, (size_t)(d->out_size * splits) * sizeof(acc_t));
    }
    if (err != cudaSuccess) {
        return ga_cuda_error(err, "reduction launch", __FILE__, __LINE__);
    }
    return GA_OK;
}

/* Accumulator kinds of SUM/PROD, chosen by the output dtype. */
enum { GA_ACC_I64, GA_ACC_U64, GA_ACC_F32, GA_ACC_F64, GA_ACC_C64, GA_ACC_C128, GA_NACC };

static int
ga_acc_kind(int out_dt)
{
    switch (out_dt) {
    case GA_UINT8:
    case GA_UINT16:
    case GA_UINT32:
    case GA_UINT64:
        return GA_ACC_U64;
    case GA_FLOAT16: /* half sums accumulate in float, as NumPy's do */
    case GA_FLOAT32:
        return GA_ACC_F32;
    case GA_FLOAT64:
        return GA_ACC_F64;
    case GA_COMPLEX64:
        return GA_ACC_C64;
    case GA_COMPLEX128:
        return GA_ACC_C128;
    default:
        return GA_ACC_I64;
    }
}

typedef struct {
    ga_red_launcher sum[GA_NTYPES][GA_NACC];
    ga_red_launcher ext[GA_NTYPES];
    ga_red_launcher arg[GA_NTYPES];
    ga_red_launcher boolean[GA_NTYPES];
} ga_red_table;

static ga_red_table
ga_red_build_table(void)
{
    ga_red_table t;
#define GA_X_RED(e, name, kind, size, ch, ctype)                                       \
    t.sum[e][GA_ACC_I64] = ga_red_launch<ga_rp_sum<e, int64_t>>;                       \
    t.sum[e][GA_ACC_U64] = ga_red_launch<ga_rp_sum<e, uint64_t>>;                      \
    t.sum[e][GA_ACC_F32] = ga_red_launch<ga_rp_sum<e, float>>;                         \
    t.sum[e][GA_ACC_F64] = ga_red_launch<ga_rp_sum<e, double>>;                        \
    t.sum[e][GA_ACC_C64] = ga_red_launch<ga_rp_sum<e, ga_cf>>;                         \
    t.sum[e][GA_ACC_C128] = ga_red_launch<ga_rp_sum<e, ga_cd>>;                        \
    t.ext[e] = ga_red_launch<ga_rp_ext<e>>;                                            \
    t.arg[e] = ga_red_launch<ga_rp_arg<e>>;                                            \
    t.boolean[e] = ga_red_launch<ga_rp_bool<e>>;
    GA_DTYPES(GA_X_RED)
#undef GA_X_RED
    return t;
}

extern "C" int
ga_cuda_reduce(int dev, const ga_reduce_desc *d)
{
    static const ga_red_table table = ga_red_build_table();
    if (d->in_dtype < 0 || d->in_dtype >= GA_NTYPES || d->out_dtype < 0 ||
        d->out_dtype >= GA_NTYPES) {
        return ga_error(GA_ERR_VALUE, "reduce: bad dtypes %d -> %d", (int)d->in_dtype,
                        (int)d->out_dtype);
    }
    if (d->out_size <= 0) {
        return GA_OK;
    }
    if (d->red_size <= 0) {
        return ga_error(GA_ERR_VALUE, "reduce: the core handles empty reductions");
    }
    switch (d->op) {
    case GA_RED_SUM:
    case GA_RED_PROD:
        return table.sum[d->in_dtype][ga_acc_kind(d->out_dtype)](dev, d);
    case GA_RED_MAX:
    case GA_RED_MIN:
        return table.ext[d->in_dtype](dev, d);
    case GA_RED_ARGMAX:
    case GA_RED_ARGMIN:
        return table.arg[d->in_dtype](dev, d);
    case GA_RED_ALL:
    case GA_RED_ANY:
        return table.boolean[d->in_dtype](dev, d);
    default:
        return ga_error(GA_ERR_VALUE, "reduce: unknown operation %d", (int)d->op);
    }
}
