/* k_elementwise.cu: every elementwise operation and cast on a CUDA device.
 *
 * The scalar math is ga_elementwise_math.h's (the same functions the CPU backend
 * calls), so this file only adds the iteration: one kernel template over a functor,
 * instantiated once per entry of GA_KERNEL_LIST (op, loop dtype) and GA_CAST_LIST
 * (from, to), and a host table [op][dtype] / [from][to] of launchers. No per-element
 * switch.
 *
 * Memory traffic: an elementwise op reads nin elements and writes one; it is memory
 * bound for every op here, so the kernel's job is coalesced access and nothing else.
 */
#include "k_common.cuh"

#include <atomic>

/* ---- operand widths known at compile time ----
 * Each functor states the byte size of its output and inputs (0 = unused), so that the
 * kernel loads and stores whole typed words instead of bytes, and the vector path knows
 * how many elements one 16-byte access holds. The output dtype follows
 * ga_elementwise_math.h's contract: bool for comparisons, logical_* and the float
 * tests; the real dtype for abs/real/imag of complex; the loop dtype otherwise. The
 * launcher checks it against the loop's output dtype before every launch. */
static constexpr int
ga_ew_out_size(int op, int dt, int dt_size)
{
    return ga_op_out_size(op, dt == GA_COMPLEX64 || dt == GA_COMPLEX128, dt_size);
}

/* A register-sized word of S bytes (S = 1, 2, 4, 8, 16), aligned to min(S, 16). */
template <int S> struct ga_word;
template <> struct ga_word<1> {
    typedef uint8_t type;
};
template <> struct ga_word<2> {
    typedef uint16_t type;
};
template <> struct ga_word<4> {
    typedef uint32_t type;
};
template <> struct ga_word<8> {
    typedef uint64_t type;
};
struct alignas(16) ga_word16 {
    uint64_t lo, hi;
};
template <> struct ga_word<16> {
    typedef ga_word16 type;
};
/* A 16-byte element (complex128) is aligned to 8 only: two 64-bit accesses. */
struct alignas(8) ga_word16x8 {
    uint64_t lo, hi;
};

/* Aligned typed access. Under nvcc a plain dereference (one LDG/STG of the word's
 * width); the emulated build goes through memcpy, the host compiler's spelling of the
 * same load. */
template <class W>
static GA_HD inline W
ga_ldw(const char *p)
{
#ifdef GA_CUDA_EMULATION
    W v;
    memcpy(&v, p, sizeof(W));
    return v;
#else
    return *reinterpret_cast<const W *>(p);
#endif
}

template <class W>
static GA_HD inline void
ga_stw(char *p, W v)
{
#ifdef GA_CUDA_EMULATION
    memcpy(p, &v, sizeof(W));
#else
    *reinterpret_cast<W *>(p) = v;
#endif
}

/* One element of S bytes as a value (S = 0: an unused operand). */
template <int S> struct ga_elem {
    typedef typename std::conditional<S == 16, ga_word16x8,
                                      typename ga_word<(S == 0 ? 1 : S)>::type>::type type;
};

/* Divide by a fixed divisor with a multiply and a shift (Granlund and Montgomery):
 * for 0 <= n < 2^32, n / d == (umulhi(n, m) + n) >> s. The magic numbers are
 * computed once per launch on the host. */
typedef struct {
    uint32_t d, m, s;
} ga_fastdiv;

static inline ga_fastdiv
ga_fastdiv_make(uint32_t d)
{
    ga_fastdiv f;
    uint32_t s = 0;
    while (s < 32 && (1ULL << s) < d) {
        s++;
    }
    f.d = d;
    f.s = s;
    f.m = (uint32_t)((((1ULL << s) - d) << 32) / d + 1);
    return f;
}

static GA_HD inline uint32_t
ga_fastdiv_div(const ga_fastdiv &f, uint32_t n)
{
    uint64_t t = ((uint64_t)n * f.m) >> 32;
    return (uint32_t)((t + n) >> f.s);
}

/* What an elementwise kernel receives (by value: about 0.9 KB of parameter space, and
 * no host pointer ever dereferenced on the device). Scalar operands carry their value;
 * for them `data` is NULL and the kernel reads `value` once. */
enum { GA_EW_VECTOR = 0, GA_EW_STRIDED32 = 1, GA_EW_STRIDED64 = 2 };
typedef struct {
    int64_t n;
    int32_t ndim;
    int32_t mode;
    char *data[GA_MAXARGS];
    ga_scalar_bytes value[GA_MAXARGS];
    int64_t shape[GA_MAXDIMS];
    ga_fastdiv div[GA_MAXDIMS];
    int64_t strides[GA_MAXARGS][GA_MAXDIMS];
} ga_ew_params;

/* Operand `a`'s element at byte offset `off`, or its scalar value. */
template <int S>
static GA_DEV inline typename ga_elem<S>::type
ga_ew_get(const ga_ew_params &p, int a, int64_t off)
{
    typedef typename ga_elem<S>::type E;
    if (S == 0 || p.data[a] == NULL) {
        E v;
        memcpy(&v, p.value[a].bytes, sizeof(E));
        return v;
    }
    return ga_ldw<E>(p.data[a] + off);
}

/* Apply F to element values: the functor's memcpy loads from these locals become
 * register moves. */
template <class F>
static GA_DEV inline typename ga_elem<F::SO>::type
ga_ew_apply(typename ga_elem<F::SA>::type a, typename ga_elem<F::SB>::type b,
            typename ga_elem<F::SC>::type c)
{
    typename ga_elem<F::SO>::type o;
    F::apply((char *)&o, (const char *)&a, (const char *)&b, (const char *)&c);
    return o;
}

/* Element K of a vector word holding several S-byte elements. */
template <int S, class W>
static GA_DEV inline typename ga_elem<S>::type
ga_ew_part(const W &w, int k)
{
    typename ga_elem<S>::type v;
    memcpy(&v, (const char *)&w + k * S, sizeof(v));
    return v;
}

template <int S> struct ga_vec_word {
    typedef typename ga_word<(S == 0 ? 1 : S)>::type type;
};

/* Elements of the widest operand that fill one 16-byte word (K of the vector path). */
static GA_HD constexpr int
ga_ew_per_word(int so, int sa, int sb, int sc)
{
    return (so > sa ? so : sa) > (sb > sc ? sb : sc)
               ? ((so > sa ? so : sa) >= 16 ? 1 : 16 / (so > sa ? so : sa))
               : ((sb > sc ? sb : sc) >= 16 ? 1 : 16 / (sb > sc ? sb : sc));
}

/* One kernel per functor, two paths chosen per launch by the host:
 *  - GA_EW_VECTOR: every array operand is contiguous and 16-byte aligned. Each thread
 *    takes K = 16 / (widest element) consecutive elements: one 16-byte load per operand
 *    of the widest type, narrower operands one load of K elements. The last n % K
 *    elements are done one by one (typed, element-aligned).
 *  - GA_EW_STRIDED32/64: any layout whose operands are aligned to their element size;
 *    the multi-index comes from precomputed fast divisors (32-bit when n < 2^32).
 * Unaligned operands never reach this kernel (the host stages them, see below).
 * A grid-stride loop covers n with the grid the occupancy allows. */
template <class F>
__global__ void
k_elementwise(ga_ew_params p)
{
    constexpr int SO = F::SO, SA = F::SA, SB = F::SB, SC = F::SC;
    typedef typename ga_elem<SA>::type EA;
    typedef typename ga_elem<SB>::type EB;
    typedef typename ga_elem<SC>::type EC;
    typedef typename ga_elem<SO>::type EO;
    if (p.mode == GA_EW_VECTOR) {
        constexpr int K = ga_ew_per_word(SO, SA, SB, SC);
        typedef typename ga_vec_word<K * SO>::type VO;
        typedef typename ga_vec_word<K * SA>::type VA;
        typedef typename ga_vec_word<K * SB>::type VB;
        typedef typename ga_vec_word<K * SC>::type VC;
        const int64_t nv = p.n / K;
        for (int64_t v = ga_gtid(); v < nv; v += ga_gstride()) {
            VA wa = VA();
            VB wb = VB();
            VC wc = VC();
            if (SA != 0 && p.data[1] != NULL) {
                wa = ga_ldw<VA>(p.data[1] + v * (K * SA));
            }
            if (SB != 0 && p.data[2] != NULL) {
                wb = ga_ldw<VB>(p.data[2] + v * (K * SB));
            }
            if (SC != 0 && p.data[3] != NULL) {
                wc = ga_ldw<VC>(p.data[3] + v * (K * SC));
            }
            VO wo;
#pragma unroll
            for (int k = 0; k < K; k++) {
                EA a = p.data[1] != NULL ? ga_ew_part<SA>(wa, k) : ga_ew_get<SA>(p, 1, 0);
                EB b = p.data[2] != NULL ? ga_ew_part<SB>(wb, k) : ga_ew_get<SB>(p, 2, 0);
                EC c = p.data[3] != NULL ? ga_ew_part<SC>(wc, k) : ga_ew_get<SC>(p, 3, 0);
                EO o = ga_ew_apply<F>(a, b, c);
                memcpy((char *)&wo + k * SO, &o, SO);
            }
            ga_stw<VO>(p.data[0] + v * (K * SO), wo);
        }
        /* the tail: fewer than K elements, one thread each */
        const int64_t i = nv * K + ga_gtid();
        if (i < p.n) {
            EO o = ga_ew_apply<F>(ga_ew_get<SA>(p, 1, i * SA), ga_ew_get<SB>(p, 2, i * SB),
                                  ga_ew_get<SC>(p, 3, i * SC));
            ga_stw<EO>(p.data[0] + i * SO, o);
        }
        return;
    }
    for (int64_t i = ga_gtid(); i < p.n; i += ga_gstride()) {
        int64_t off[GA_MAXARGS] = {0, 0, 0, 0};
        if (p.mode == GA_EW_STRIDED32) {
            uint32_t rest = (uint32_t)i;
            for (int d = p.ndim - 1; d >= 0; d--) {
                uint32_t q = ga_fastdiv_div(p.div[d], rest);
                int64_t idx = (int64_t)(rest - q * p.div[d].d);
                rest = q;
#pragma unroll
                for (int a = 0; a < GA_MAXARGS; a++) {
                    off[a] += idx * p.strides[a][d];
                }
            }
        }
        else {
            int64_t rest = i;
            GA_NO_UNROLL /* 64-bit divisions: see ga_offset */
            for (int d = p.ndim - 1; d >= 0; d--) {
                int64_t q = rest / p.shape[d];
                int64_t idx = rest - q * p.shape[d];
                rest = q;
#pragma unroll
                for (int a = 0; a < GA_MAXARGS; a++) {
                    off[a] += idx * p.strides[a][d];
                }
            }
        }
        EO o = ga_ew_apply<F>(ga_ew_get<SA>(p, 1, off[1]), ga_ew_get<SB>(p, 2, off[2]),
                              ga_ew_get<SC>(p, 3, off[3]));
        ga_stw<EO>(p.data[0] + off[0], o);
    }
}

/* Unaligned operands (a foreign DLPack tensor with an odd byte offset) are copied to
 * or from an aligned contiguous scratch buffer, element bytes one at a time: the only
 * byte-wide kernel, and off the common path. */
typedef struct {
    int64_t n;
    int32_t ndim;
    int32_t itemsize;
    int64_t shape[GA_MAXDIMS];
    int64_t src_strides[GA_MAXDIMS];
    int64_t dst_strides[GA_MAXDIMS];
    const char *src;
    char *dst;
} ga_restride;

__global__ void
k_restride_bytes(ga_restride r)
{
    for (int64_t i = ga_gtid(); i < r.n; i += ga_gstride()) {
        const char *s = r.src + ga_offset(r.ndim, r.shape, r.src_strides, i);
        char *d = r.dst + ga_offset(r.ndim, r.shape, r.dst_strides, i);
        GA_NO_UNROLL /* off the common path: one copy of the loop, not 62 byte loads */
        for (int b = 0; b < r.itemsize; b++) {
            d[b] = s[b];
        }
    }
}

/* The grid for n items of a grid-stride kernel: as many blocks as can be resident on
 * every multiprocessor at once (the occupancy calculator's answer times the SM count),
 * fewer when n needs fewer. The answer depends on the kernel and the device only, so
 * it is asked once per (kernel, device) and kept in `per_sm` (0: not asked yet, -1:
 * the calculator failed): the runtime call costs microseconds, as much as a small
 * operation's whole host time. */
typedef void (*ga_ew_kernel)(ga_ew_params);

static unsigned
ga_ew_grid(int dev, void (*kernel)(ga_ew_params), std::atomic<int> *per_sm_cache,
           int64_t items, unsigned block)
{
    unsigned grid, blk;
    ga_cuda_launch_dims(dev, items, &grid, &blk);
    if (dev < 0 || dev >= GA_MAX_DEVICES) {
        return grid;
    }
    int per_sm = per_sm_cache[dev].load(std::memory_order_relaxed);
    if (per_sm == 0) {
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, (int)block,
                                                          0) != cudaSuccess ||
            per_sm <= 0) {
            (void)cudaGetLastError(); /* not sticky; fall back to 8 blocks per SM */
            per_sm = -1;
        }
        per_sm_cache[dev].store(per_sm, std::memory_order_relaxed);
    }
    const int sms = ga_cuda_sm_count(dev);
    if (per_sm > 0 && sms > 0) {
        int64_t want = (items + block - 1) / block;
        int64_t cap = (int64_t)per_sm * sms;
        grid = (unsigned)(want < 1 ? 1 : want < cap ? want : cap);
    }
    return grid;
}

static int
ga_ew_restride(int dev, cudaStream_t stream, const ga_restride &r)
{
    unsigned block = 256;
    unsigned grid, blk;
    ga_cuda_launch_dims(dev, r.n, &grid, &blk);
    GA_LAUNCH(k_restride_bytes, grid, block, 0, stream, r);
    GA_CUDA_TRY(cudaGetLastError());
    return GA_OK;
}

static bool
ga_ew_aligned(uint64_t v, int size)
{
    uint64_t align = (uint64_t)(size >= 8 ? 8 : size);
    return v % align == 0;
}

typedef int (*ga_ew_launcher)(int dev, const ga_loop *loop);

/* What the host needs to know of one k_elementwise<F>: its operand sizes, the
 * elements per vector word, and the kernel. */
typedef struct {
    int sizes[GA_MAXARGS]; /* F::SO, F::SA, F::SB, F::SC */
    int per_word; /* K of the vector path */
    ga_ew_kernel kernel;
    std::atomic<int> *per_sm; /* GA_MAX_DEVICES: ga_ew_grid's cache */
} ga_ew_kind;

/* The launch of any k_elementwise<F>, written once: a template per functor would make
 * the host compiler build ~1000 copies of it (most of the plugin's host compile time,
 * which is on the critical path of `pip install`). */
static int
ga_ew_run(int dev, const ga_loop *loop, const ga_ew_kind &kind)
{
    const int *sizes = kind.sizes;
    cudaStream_t stream;
    GA_TRY(ga_cuda_stream(dev, &stream));
    if (ga_k_itemsize(loop->args[0].dtype) != sizes[0]) {
        return ga_error(GA_ERR_VALUE, "%s: output dtype %s does not match the kernel",
                        "elementwise", ga_k_dtype_name(loop->args[0].dtype));
    }
    ga_ew_params p;
    memset(&p, 0, sizeof(p));
    p.n = loop->size;
    p.ndim = loop->ndim;
    for (int d = 0; d < loop->ndim; d++) {
        /* the 32-bit divisors are used only when n < 2^32, so every extent fits */
        p.shape[d] = loop->shape[d];
        p.div[d] = ga_fastdiv_make((uint32_t)(loop->shape[d] <= UINT32_MAX ? loop->shape[d]
                                                                          : 1));
    }
    /* Operands: scalars by value; arrays aligned to their element size, else staged
     * through a contiguous scratch buffer. */
    bool vector = loop->ndim <= 1;
    void *scratch[GA_MAXARGS] = {NULL, NULL, NULL, NULL};
    size_t scratch_bytes[GA_MAXARGS] = {0, 0, 0, 0};
    int st = GA_OK;
    for (int a = 0; a < GA_MAXARGS; a++) {
        const ga_operand *op = &loop->args[a];
        if (a >= loop->nargs || sizes[a] == 0) {
            continue;
        }
        if (op->is_scalar) {
            p.value[a] = op->value;
            continue;
        }
        bool aligned = ga_ew_aligned((uint64_t)(uintptr_t)op->data, sizes[a]);
        for (int d = 0; d < loop->ndim; d++) {
            p.strides[a][d] = op->strides[d];
            aligned = aligned && ga_ew_aligned((uint64_t)op->strides[d], sizes[a]);
        }
        p.data[a] = op->data;
        if (!aligned) {
            scratch_bytes[a] = (size_t)loop->size * (size_t)sizes[a];
            st = ga_cuda_alloc(dev, scratch_bytes[a], &scratch[a]);
            if (st != GA_OK) {
                goto done;
            }
            int64_t step = sizes[a];
            for (int d = loop->ndim - 1; d >= 0; d--) {
                p.strides[a][d] = loop->shape[d] > 1 ? step : 0;
                step *= loop->shape[d];
            }
            p.data[a] = (char *)scratch[a];
            if (a > 0) {
                ga_restride r;
                memset(&r, 0, sizeof(r));
                r.n = loop->size;
                r.ndim = loop->ndim;
                r.itemsize = sizes[a];
                for (int d = 0; d < loop->ndim; d++) {
                    r.shape[d] = loop->shape[d];
                    r.src_strides[d] = op->strides[d];
                    r.dst_strides[d] = p.strides[a][d];
                }
                r.src = op->data;
                r.dst = p.data[a];
                st = ga_ew_restride(dev, stream, r);
                if (st != GA_OK) {
                    goto done;
                }
            }
        }
        if (((uintptr_t)p.data[a] % 16) != 0 ||
            (loop->ndim == 1 && loop->shape[0] > 1 && p.strides[a][0] != sizes[a])) {
            vector = false;
        }
    }
    {
        unsigned block = 256;
        int64_t items = p.n;
        if (vector) {
            const int K = kind.per_word;
            p.mode = GA_EW_VECTOR;
            items = p.n / K > (int64_t)(K - 1) ? p.n / K : (int64_t)(K - 1);
        }
        else {
            p.mode = p.n <= (int64_t)UINT32_MAX ? GA_EW_STRIDED32 : GA_EW_STRIDED64;
        }
        unsigned grid = ga_ew_grid(dev, kind.kernel, kind.per_sm, items, block);
        GA_LAUNCH(kind.kernel, grid, block, 0, stream, p);
        cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess) {
            st = ga_cuda_error(err, "k_elementwise", __FILE__, __LINE__);
            goto done;
        }
    }
    if (scratch[0] != NULL) {
        /* an unaligned output: copy the result from the scratch buffer */
        ga_restride r;
        memset(&r, 0, sizeof(r));
        r.n = loop->size;
        r.ndim = loop->ndim;
        r.itemsize = sizes[0];
        for (int d = 0; d < loop->ndim; d++) {
            r.shape[d] = loop->shape[d];
            r.src_strides[d] = p.strides[0][d];
            r.dst_strides[d] = loop->args[0].strides[d];
        }
        r.src = p.data[0];
        r.dst = loop->args[0].data;
        st = ga_ew_restride(dev, stream, r);
    }
done:
    /* stream-ordered: the allocator hands these out again only to later work on the
     * same stream */
    for (int a = 0; a < GA_MAXARGS; a++) {
        if (scratch[a] != NULL) {
            ga_cuda_free(dev, scratch[a], scratch_bytes[a]);
        }
    }
    return st;
}

template <class F>
static int
ga_ew_launch(int dev, const ga_loop *loop)
{
    static std::atomic<int> per_sm[GA_MAX_DEVICES]; /* zero: not asked yet */
    static const ga_ew_kind kind = {{F::SO, F::SA, F::SB, F::SC},
                                    ga_ew_per_word(F::SO, F::SA, F::SB, F::SC),
                                    k_elementwise<F>, per_sm};
    return ga_ew_run(dev, loop, kind);
}

/* One functor per (op, dtype) and per cast, each a thin wrapper of the shared math. */
#define GA_X_FUNCTOR(OPE, opname, DTE, dtname)                                          \
    struct ga_f_##opname##_##dtname {                                                  \
        static constexpr int SI = (int)sizeof(ga_storage<DTE>::type);                  \
        static constexpr int NIN = ga_op_arity(OPE);                                   \
        static constexpr int SO = ga_ew_out_size(OPE, DTE, SI);                        \
        static constexpr int SA = OPE == GA_OP_WHERE ? 1 : SI;                         \
        static constexpr int SB = NIN >= 2 ? SI : 0;                                   \
        static constexpr int SC = NIN >= 3 ? SI : 0;                                   \
        static GA_HD void                                                              \
        apply(char *o, const char *a, const char *b, const char *c)                    \
        {                                                                              \
            ga_k_##opname##_##dtname(o, a, b, c);                                      \
        }                                                                              \
    };
GA_KERNEL_LIST(GA_X_FUNCTOR)
#undef GA_X_FUNCTOR

#define GA_X_CAST_FUNCTOR(FROME, from, TOE, to)                                         \
    struct ga_fc_##from##_##to {                                                       \
        static constexpr int SO = (int)sizeof(ga_storage<TOE>::type);                  \
        static constexpr int SA = (int)sizeof(ga_storage<FROME>::type);                \
        static constexpr int SB = 0;                                                   \
        static constexpr int SC = 0;                                                   \
        static GA_HD void                                                              \
        apply(char *o, const char *a, const char *b, const char *c)                    \
        {                                                                              \
            (void)b;                                                                   \
            (void)c;                                                                   \
            ga_k_cast_##from##_##to(o, a);                                             \
        }                                                                              \
    };
GA_CAST_LIST(GA_X_CAST_FUNCTOR)
#undef GA_X_CAST_FUNCTOR

/* A same-dtype COPY is a byte copy of the element: one functor per element size, so it
 * works even for a pair the cast list leaves out. */
template <int SIZE> struct ga_f_bytes {
    static constexpr int SO = SIZE;
    static constexpr int SA = SIZE;
    static constexpr int SB = 0;
    static constexpr int SC = 0;
    static GA_HD void
    apply(char *o, const char *a, const char *b, const char *c)
    {
        (void)b;
        (void)c;
        memcpy(o, a, SIZE);
    }
};

typedef struct {
    ga_ew_launcher op[GA_NOPS][GA_NTYPES];
    ga_ew_launcher cast[GA_NTYPES][GA_NTYPES];
} ga_ew_table;

static ga_ew_table
ga_ew_build_table(void)
{
    ga_ew_table t;
    memset(&t, 0, sizeof(t));
#define GA_X_ENTRY(OPE, opname, DTE, dtname)                                            \
    t.op[OPE][DTE] = ga_ew_launch<ga_f_##opname##_##dtname>;
    GA_KERNEL_LIST(GA_X_ENTRY)
#undef GA_X_ENTRY
#define GA_X_CAST_ENTRY(FROME, from, TOE, to)                                           \
    t.cast[FROME][TOE] = ga_ew_launch<ga_fc_##from##_##to>;
    GA_CAST_LIST(GA_X_CAST_ENTRY)
#undef GA_X_CAST_ENTRY
    for (int d = 0; d < GA_NTYPES; d++) {
        if (t.cast[d][d] != NULL) {
            continue;
        }
        switch (ga_k_itemsize(d)) {
        case 1:
            t.cast[d][d] = ga_ew_launch<ga_f_bytes<1>>;
            break;
        case 2:
            t.cast[d][d] = ga_ew_launch<ga_f_bytes<2>>;
            break;
        case 4:
            t.cast[d][d] = ga_ew_launch<ga_f_bytes<4>>;
            break;
        case 8:
            t.cast[d][d] = ga_ew_launch<ga_f_bytes<8>>;
            break;
        default:
            t.cast[d][d] = ga_ew_launch<ga_f_bytes<16>>;
            break;
        }
    }
    return t;
}

extern "C" int
ga_cuda_elementwise(int dev, int op, const ga_loop *loop)
{
    /* built once, on first use (C++ guarantees a thread-safe initialisation) */
    static const ga_ew_table table = ga_ew_build_table();
    if (op < 0 || op >= GA_NOPS || loop->nargs < 1 || loop->nargs > GA_MAXARGS) {
        return ga_error(GA_ERR_VALUE, "elementwise: bad operation %d or operand count %d",
                        op, (int)loop->nargs);
    }
    if (loop->size <= 0) {
        return GA_OK;
    }
    ga_ew_launcher fn = NULL;
    int out_dt = loop->args[0].dtype;
    if (op == GA_OP_COPY) {
        if (loop->nargs != 2) {
            return ga_error(GA_ERR_VALUE, "copy: expected 2 operands, got %d",
                            (int)loop->nargs);
        }
        int in_dt = loop->args[1].dtype;
        if (in_dt >= 0 && in_dt < GA_NTYPES && out_dt >= 0 && out_dt < GA_NTYPES) {
            fn = table.cast[in_dt][out_dt];
        }
        if (fn == NULL) {
            return ga_error(GA_ERR_UNSUPPORTED,
                            "the CUDA backend has no cast from %s to %s",
                            ga_k_dtype_name(in_dt), ga_k_dtype_name(out_dt));
        }
        return fn(dev, loop);
    }
    /* The loop dtype is the inputs' (the output may be bool or real); the last input
     * always has it (WHERE's bool condition comes first). */
    int loop_dt = loop->nargs >= 2 ? loop->args[loop->nargs - 1].dtype : out_dt;
    if (loop_dt >= 0 && loop_dt < GA_NTYPES) {
        fn = table.op[op][loop_dt];
    }
    if (fn == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED, "%s is not supported for %s on a CUDA device",
                        ga_k_op_name(op), ga_k_dtype_name(loop_dt));
    }
    return fn(dev, loop);
}
