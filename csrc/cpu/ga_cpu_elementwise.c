/* ga_cpu_elementwise.c: elementwise kernels and casts on the CPU.
 *
 * Every inner loop is instantiated from GA_KERNEL_LIST / GA_CAST_LIST
 * (ga_elementwise_math.h), the same lists the CUDA kernels come from, into tables
 * indexed by [op][dtype] and [from][to]: one table lookup per call, no per-element
 * switch. Each loop has fast paths with compile-time strides (all operands contiguous;
 * one binary operand a scalar) that the compiler vectorises, and a general strided
 * path.
 *
 * CMakeLists.txt builds this file with -fno-trapping-math -fno-math-errno: without
 * them float selects (clamps, NaN checks) and sqrt keep loops out of SIMD.
 */
#include <stdint.h>
#include <string.h>

#include "ga_cpu.h"
#include "ga_cpu_loop.h"
#include "ga_error.h"
#include "ga_elementwise_math.h"
#include "ga_vmath.h"

/* Loops compiled for AVX-512, AVX2+FMA and baseline x86-64; the loader picks one for
 * the machine at run time (GCC function multiversioning), so nothing ships built for
 * one CPU only. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define GA_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define GA_SIMD_CLONES
#endif

/* compile-time constants of a kernel, folded away in each instantiation */
static inline int64_t
dtype_size(int d)
{
    switch (d) {
#define GA_X_SIZE(e, nm, k, size, ch, ctype)                                           \
    case e:                                                                            \
        return size;
        GA_DTYPES(GA_X_SIZE)
#undef GA_X_SIZE
    default:
        return 1;
    }
}

static inline int64_t
out_size(int op, int d)
{
    return ga_op_out_size(op, d == GA_COMPLEX64 || d == GA_COMPLEX128, (int)dtype_size(d));
}

/* One inner loop per (op, dtype). WHERE's condition is 1 byte wide while its other
 * inputs are not, so WHERE takes the general path only. */
#define GA_X_LOOP_ATTR(ATTR, pfx, E, o, D, d)                                          \
    ATTR static void pfx##_##o##_##d(char **p, const int64_t *s, int64_t n, void *ctx)  \
    {                                                                                  \
        (void)ctx;                                                                     \
        const int nin = ga_op_arity(E);                                                \
        const int64_t osz = out_size(E, D), isz = dtype_size(D);                       \
        char *out = p[0];                                                              \
        const char *a = p[1];                                                          \
        const char *b = nin > 1 ? p[2] : NULL;                                         \
        const char *c = nin > 2 ? p[3] : NULL;                                         \
        int64_t so = s[0], sa = s[1];                                                  \
        int64_t sb = nin > 1 ? s[2] : 0, sc = nin > 2 ? s[3] : 0;                      \
        if (E != GA_OP_WHERE && so == osz && sa == isz && (nin < 2 || sb == isz) &&    \
            (nin < 3 || sc == isz)) {                                                  \
            GA_IVDEP for (int64_t i = 0; i < n; i++)                                   \
            {                                                                          \
                ga_k_##o##_##d(out + i * osz, a + i * isz, nin > 1 ? b + i * isz : b,  \
                               nin > 2 ? c + i * isz : c);                             \
            }                                                                          \
            return;                                                                    \
        }                                                                              \
        if (E != GA_OP_WHERE && nin == 2 && so == osz && sa == isz && sb == 0) {       \
            GA_IVDEP for (int64_t i = 0; i < n; i++)                                   \
            {                                                                          \
                ga_k_##o##_##d(out + i * osz, a + i * isz, b, c);                      \
            }                                                                          \
            return;                                                                    \
        }                                                                              \
        if (E != GA_OP_WHERE && nin == 2 && so == osz && sa == 0 && sb == isz) {       \
            GA_IVDEP for (int64_t i = 0; i < n; i++)                                   \
            {                                                                          \
                ga_k_##o##_##d(out + i * osz, a, b + i * isz, c);                      \
            }                                                                          \
            return;                                                                    \
        }                                                                              \
        for (int64_t i = 0; i < n; i++) {                                              \
            ga_k_##o##_##d(out + i * so, a + i * sa, nin > 1 ? b + i * sb : b,         \
                           nin > 2 ? c + i * sc : c);                                  \
        }                                                                              \
    }
#define GA_X_LOOP(E, o, D, d) GA_X_LOOP_ATTR(, loop, E, o, D, d)
GA_KERNEL_LIST(GA_X_LOOP)
#undef GA_X_LOOP

/* The float32/float64 loops that programs run most, compiled again for AVX-512 and
 * AVX2+FMA and chosen at run time: the baseline (SSE2) build moves 16 bytes per
 * instruction, a quarter of what AVX-512 does on data in cache. */
#define GA_HOT_FLOATS(X, E, o) X(E, o, GA_FLOAT32, float32) X(E, o, GA_FLOAT64, float64)
#define GA_HOT_LIST(X)                                                                 \
    GA_HOT_FLOATS(X, GA_OP_ADD, add)                                                   \
    GA_HOT_FLOATS(X, GA_OP_SUBTRACT, subtract)                                         \
    GA_HOT_FLOATS(X, GA_OP_MULTIPLY, multiply)                                         \
    GA_HOT_FLOATS(X, GA_OP_DIVIDE, divide)                                             \
    GA_HOT_FLOATS(X, GA_OP_NEGATIVE, negative)                                         \
    GA_HOT_FLOATS(X, GA_OP_ABS, abs)                                                   \
    GA_HOT_FLOATS(X, GA_OP_SQUARE, square)                                             \
    GA_HOT_FLOATS(X, GA_OP_SQRT, sqrt)                                                 \
    GA_HOT_FLOATS(X, GA_OP_MAXIMUM, maximum)                                           \
    GA_HOT_FLOATS(X, GA_OP_MINIMUM, minimum)                                           \
    GA_HOT_FLOATS(X, GA_OP_EQUAL, equal)                                               \
    GA_HOT_FLOATS(X, GA_OP_NOT_EQUAL, not_equal)                                       \
    GA_HOT_FLOATS(X, GA_OP_LESS, less)                                                 \
    GA_HOT_FLOATS(X, GA_OP_LESS_EQUAL, less_equal)                                     \
    GA_HOT_FLOATS(X, GA_OP_GREATER, greater)                                           \
    GA_HOT_FLOATS(X, GA_OP_GREATER_EQUAL, greater_equal)
#define GA_X_HOT(E, o, D, d) GA_X_LOOP_ATTR(GA_SIMD_CLONES, hot, E, o, D, d)
GA_HOT_LIST(GA_X_HOT)
#undef GA_X_HOT

static const ga_cpu_inner_fn hot_loops[GA_NOPS][GA_NTYPES] = {
#define GA_X_ENTRY(E, o, D, d) [E][D] = hot_##o##_##d,
    GA_HOT_LIST(GA_X_ENTRY)
#undef GA_X_ENTRY
};

static const ga_cpu_inner_fn kernel_loops[GA_NOPS][GA_NTYPES] = {
#define GA_X_ENTRY(E, o, D, d) [E][D] = loop_##o##_##d,
    GA_KERNEL_LIST(GA_X_ENTRY)
#undef GA_X_ENTRY
};

/* --- SIMD loops for exp, log, sin, cos, tanh and pow --------------------------------
 *
 * ga_vmath.h's functions are straight-line code that vectorises; these loops are
 * compiled for AVX-512, AVX2+FMA and baseline x86-64, and the loader picks one for the
 * machine at run time (GCC function multiversioning), so nothing ships built for one
 * CPU only. (sqrt needs nothing of this: it is one instruction, and its loops are
 * among the hot loops above.) Strided operands are gathered into a stack block first,
 * so the math still runs in SIMD.
 *
 * A function whose vector path covers only part of the inputs (sin/cos: |x| < 1e6)
 * has an `ok` predicate: each block of inputs is checked first (a vectorised OR of
 * compares, ~1 instruction per element), and a block holding an input outside it is
 * computed element by element, libm's function (`slow`) for those inputs. Elsewhere
 * `ok` is the constant 1 and the check compiles away. The check reads the block
 * before anything is written, so out may be in (in-place operations). */
#define GA_VBLOCK 512

static inline int
vok_all_float32(float x)
{
    (void)x;
    return 1;
}

static inline int
vok_all_float64(double x)
{
    (void)x;
    return 1;
}

#define GA_X_VLOOP(name, dt, T, fn, ok, slow)                                          \
    GA_SIMD_CLONES static void name##_contig(char *out, const char *in, int64_t n)     \
    {                                                                                  \
        const int64_t sz = (int64_t)sizeof(T);                                         \
        for (int64_t i0 = 0; i0 < n; i0 += GA_VBLOCK) {                                \
            int64_t m = n - i0 < GA_VBLOCK ? n - i0 : GA_VBLOCK;                       \
            char *o = out + i0 * sz;                                                   \
            const char *x = in + i0 * sz;                                              \
            int bad = 0;                                                               \
            for (int64_t j = 0; j < m; j++) {                                          \
                bad |= !ok(ga_ld_##dt(x + j * sz));                                    \
            }                                                                          \
            if (!bad) {                                                                \
                GA_IVDEP for (int64_t j = 0; j < m; j++)                               \
                {                                                                      \
                    ga_st_##dt(o + j * sz, fn(ga_ld_##dt(x + j * sz)));                \
                }                                                                      \
                continue;                                                              \
            }                                                                          \
            for (int64_t j = 0; j < m; j++) {                                          \
                T v = ga_ld_##dt(x + j * sz);                                          \
                ga_st_##dt(o + j * sz, ok(v) ? fn(v) : slow(v));                       \
            }                                                                          \
        }                                                                              \
    }                                                                                  \
    static void name(char **p, const int64_t *s, int64_t n, void *ctx)                 \
    {                                                                                  \
        (void)ctx;                                                                     \
        const int64_t sz = (int64_t)sizeof(T);                                         \
        if (s[0] == sz && s[1] == sz) {                                                \
            name##_contig(p[0], p[1], n);                                              \
            return;                                                                    \
        }                                                                              \
        T buf[GA_VBLOCK];                                                              \
        for (int64_t i = 0; i < n; i += GA_VBLOCK) {                                   \
            int64_t m = n - i < GA_VBLOCK ? n - i : GA_VBLOCK;                         \
            const char *in = p[1] + i * s[1];                                          \
            for (int64_t j = 0; j < m; j++) {                                          \
                buf[j] = ga_ld_##dt(in + j * s[1]);                                    \
            }                                                                          \
            name##_contig((char *)buf, (const char *)buf, m);                          \
            char *out = p[0] + i * s[0];                                               \
            for (int64_t j = 0; j < m; j++) {                                          \
                ga_st_##dt(out + j * s[0], buf[j]);                                    \
            }                                                                          \
        }                                                                              \
    }
GA_X_VLOOP(vloop_exp_float32, float32, float, ga_vexpf, vok_all_float32, ga_vexpf)
GA_X_VLOOP(vloop_log_float32, float32, float, ga_vlogf, vok_all_float32, ga_vlogf)
GA_X_VLOOP(vloop_sin_float32, float32, float, ga_vsinf, ga_vsinf_fast_ok, sinf)
GA_X_VLOOP(vloop_cos_float32, float32, float, ga_vcosf, ga_vsinf_fast_ok, cosf)
GA_X_VLOOP(vloop_tanh_float32, float32, float, ga_vtanhf, vok_all_float32, ga_vtanhf)
GA_X_VLOOP(vloop_exp_float64, float64, double, ga_vexp, vok_all_float64, ga_vexp)
GA_X_VLOOP(vloop_log_float64, float64, double, ga_vlog, vok_all_float64, ga_vlog)
GA_X_VLOOP(vloop_sin_float64, float64, double, ga_vsin, ga_vsin_fast_ok, sin)
GA_X_VLOOP(vloop_cos_float64, float64, double, ga_vcos, ga_vsin_fast_ok, cos)
GA_X_VLOOP(vloop_tanh_float64, float64, double, ga_vtanh, vok_all_float64, ga_vtanh)
#undef GA_X_VLOOP

/* Binary: both operands contiguous, or one of them a scalar (x ** 2.5 broadcasts the
 * exponent with stride 0), each its own vectorised loop; other layouts gathered. */
#define GA_X_VLOOP2(name, dt, T, fn)                                                   \
    GA_SIMD_CLONES static void name##_vv(char *out, const char *a, const char *b,      \
                                         int64_t n)                                    \
    {                                                                                  \
        const int64_t sz = (int64_t)sizeof(T);                                         \
        GA_IVDEP for (int64_t i = 0; i < n; i++)                                       \
        {                                                                              \
            T x = ga_ld_##dt(a + i * sz), y = ga_ld_##dt(b + i * sz);                 \
            ga_st_##dt(out + i * sz, fn(x, y));                                        \
        }                                                                              \
    }                                                                                  \
    GA_SIMD_CLONES static void name##_vs(char *out, const char *a, T y, int64_t n)     \
    {                                                                                  \
        const int64_t sz = (int64_t)sizeof(T);                                         \
        GA_IVDEP for (int64_t i = 0; i < n; i++)                                       \
        {                                                                              \
            ga_st_##dt(out + i * sz, fn(ga_ld_##dt(a + i * sz), y));                   \
        }                                                                              \
    }                                                                                  \
    GA_SIMD_CLONES static void name##_sv(char *out, T x, const char *b, int64_t n)     \
    {                                                                                  \
        const int64_t sz = (int64_t)sizeof(T);                                         \
        GA_IVDEP for (int64_t i = 0; i < n; i++)                                       \
        {                                                                              \
            ga_st_##dt(out + i * sz, fn(x, ga_ld_##dt(b + i * sz)));                   \
        }                                                                              \
    }                                                                                  \
    static void name(char **p, const int64_t *s, int64_t n, void *ctx)                 \
    {                                                                                  \
        (void)ctx;                                                                     \
        const int64_t sz = (int64_t)sizeof(T);                                         \
        if (s[0] == sz && s[1] == sz && s[2] == sz) {                                  \
            name##_vv(p[0], p[1], p[2], n);                                            \
            return;                                                                    \
        }                                                                              \
        if (s[0] == sz && s[1] == sz && s[2] == 0) {                                   \
            name##_vs(p[0], p[1], ga_ld_##dt(p[2]), n);                                \
            return;                                                                    \
        }                                                                              \
        if (s[0] == sz && s[1] == 0 && s[2] == sz) {                                   \
            name##_sv(p[0], ga_ld_##dt(p[1]), p[2], n);                                \
            return;                                                                    \
        }                                                                              \
        T bx[GA_VBLOCK], by[GA_VBLOCK];                                                \
        for (int64_t i = 0; i < n; i += GA_VBLOCK) {                                   \
            int64_t m = n - i < GA_VBLOCK ? n - i : GA_VBLOCK;                         \
            const char *a = p[1] + i * s[1], *b = p[2] + i * s[2];                     \
            for (int64_t j = 0; j < m; j++) {                                          \
                bx[j] = ga_ld_##dt(a + j * s[1]);                                      \
                by[j] = ga_ld_##dt(b + j * s[2]);                                      \
            }                                                                          \
            name##_vv((char *)bx, (const char *)bx, (const char *)by, m);              \
            char *out = p[0] + i * s[0];                                               \
            for (int64_t j = 0; j < m; j++) {                                          \
                ga_st_##dt(out + j * s[0], bx[j]);                                     \
            }                                                                          \
        }                                                                              \
    }
GA_X_VLOOP2(vloop_pow_any_float32, float32, float, ga_vpowf)
#undef GA_X_VLOOP2

/* float64 pow over blocks of GA_VBLOCK elements: a block whose every (x, y)
 * ga_vpow_fast_ok accepts runs the vector loop; in any other, those elements take the
 * shared element math's ga_fpow, libm's pow but x * x for y == 2 (zeros, negative x,
 * infinities, NaN, results out of the normal range) */
GA_SIMD_CLONES static void
vpow_block_float64(double *out, const double *x, const double *y, int64_t m)
{
    int bad = 0;
    for (int64_t j = 0; j < m; j++) {
        bad |= !ga_vpow_fast_ok(x[j], y[j]);
    }
    if (!bad) {
        GA_IVDEP for (int64_t j = 0; j < m; j++)
        {
            out[j] = ga_vpow(x[j], y[j]);
        }
        return;
    }
    for (int64_t j = 0; j < m; j++) {
        out[j] = ga_vpow_fast_ok(x[j], y[j]) ? ga_vpow(x[j], y[j]) : ga_fpow(x[j], y[j]);
    }
}

/* Contiguous operands are read in place; other layouts (a scalar exponent, strided
 * views) are gathered a block at a time. */
static void
vloop_pow_any_float64(char **p, const int64_t *s, int64_t n, void *ctx)
{
    (void)ctx;
    const int64_t sz = (int64_t)sizeof(double);
    int direct = s[0] == sz && s[1] == sz && s[2] == sz;
    double bx[GA_VBLOCK], by[GA_VBLOCK], bo[GA_VBLOCK];
    for (int64_t i = 0; i < n; i += GA_VBLOCK) {
        int64_t m = n - i < GA_VBLOCK ? n - i : GA_VBLOCK;
        if (direct) {
            vpow_block_float64((double *)(void *)(p[0] + i * sz),
                               (const double *)(const void *)(p[1] + i * sz),
                               (const double *)(const void *)(p[2] + i * sz), m);
            continue;
        }
        const char *a = p[1] + i * s[1], *b = p[2] + i * s[2];
        for (int64_t j = 0; j < m; j++) {
            bx[j] = ga_ld_float64(a + j * s[1]);
            by[j] = ga_ld_float64(b + j * s[2]);
        }
        vpow_block_float64(bo, bx, by, m);
        char *out = p[0] + i * s[0];
        for (int64_t j = 0; j < m; j++) {
            ga_st_float64(out + j * s[0], bo[j]);
        }
    }
}

/* x ** 2 with a scalar 2 (a variance's, a squared error's) is x * x, which is what
 * ga_fpow and ga_vpowf compute for y == 2 (one rounding): a multiply per element
 * instead of a pow evaluated and then replaced (20 ms for 10^7 float32, 2 with this). */
#define GA_X_POW_SQUARE(name, dt, T, general)                                          \
    GA_SIMD_CLONES static void name##_square(char *out, const char *a, int64_t n)      \
    {                                                                                  \
        const int64_t sz = (int64_t)sizeof(T);                                         \
        GA_IVDEP for (int64_t i = 0; i < n; i++)                                       \
        {                                                                              \
            T x = ga_ld_##dt(a + i * sz);                                              \
            ga_st_##dt(out + i * sz, x * x);                                           \
        }                                                                              \
    }                                                                                  \
    static void name(char **p, const int64_t *s, int64_t n, void *ctx)                 \
    {                                                                                  \
        const int64_t sz = (int64_t)sizeof(T);                                         \
        if (s[2] == 0 && ga_ld_##dt(p[2]) == (T)2) {                                   \
            if (s[0] == sz && s[1] == sz) {                                            \
                name##_square(p[0], p[1], n);                                          \
                return;                                                                \
            }                                                                          \
            for (int64_t i = 0; i < n; i++) {                                          \
                T x = ga_ld_##dt(p[1] + i * s[1]);                                     \
                ga_st_##dt(p[0] + i * s[0], x * x);                                    \
            }                                                                          \
            return;                                                                    \
        }                                                                              \
        general(p, s, n, ctx);                                                         \
    }
GA_X_POW_SQUARE(vloop_pow_float32, float32, float, vloop_pow_any_float32)
GA_X_POW_SQUARE(vloop_pow_float64, float64, double, vloop_pow_any_float64)
#undef GA_X_POW_SQUARE

static ga_cpu_inner_fn
simd_loop(int op, int dt)
{
    if (dt == GA_FLOAT32) {
        switch (op) {
        case GA_OP_EXP:
            return vloop_exp_float32;
        case GA_OP_LOG:
            return vloop_log_float32;
        case GA_OP_SIN:
            return vloop_sin_float32;
        case GA_OP_COS:
            return vloop_cos_float32;
        case GA_OP_TANH:
            return vloop_tanh_float32;
        case GA_OP_POW:
            return vloop_pow_float32;
        default:
            return NULL;
        }
    }
    if (dt == GA_FLOAT64) {
        switch (op) {
        case GA_OP_EXP:
            return vloop_exp_float64;
        case GA_OP_LOG:
            return vloop_log_float64;
        case GA_OP_SIN:
            return vloop_sin_float64;
        case GA_OP_COS:
            return vloop_cos_float64;
        case GA_OP_TANH:
            return vloop_tanh_float64;
        case GA_OP_POW:
            return vloop_pow_float64;
        default:
            return NULL;
        }
    }
    return NULL;
}

#define GA_X_CAST(F, f, T, t)                                                          \
    static void cast_##f##_##t(char **p, const int64_t *s, int64_t n, void *ctx)       \
    {                                                                                  \
        (void)ctx;                                                                     \
        const int64_t osz = dtype_size(T), isz = dtype_size(F);                        \
        char *out = p[0];                                                              \
        const char *in = p[1];                                                         \
        if (s[0] == osz && s[1] == isz) {                                              \
            GA_IVDEP for (int64_t i = 0; i < n; i++)                                   \
            {                                                                          \
                ga_k_cast_##f##_##t(out + i * osz, in + i * isz);                      \
            }                                                                          \
            return;                                                                    \
        }                                                                              \
        for (int64_t i = 0; i < n; i++) {                                              \
            ga_k_cast_##f##_##t(out + i * s[0], in + i * s[1]);                        \
        }                                                                              \
    }
GA_CAST_LIST(GA_X_CAST)
#undef GA_X_CAST

static const ga_cpu_inner_fn cast_loops[GA_NTYPES][GA_NTYPES] = {
#define GA_X_ENTRY(F, f, T, t) [F][T] = cast_##f##_##t,
    GA_CAST_LIST(GA_X_ENTRY)
#undef GA_X_ENTRY
};

/* Same-dtype copies move bytes; a contiguous one is a single memcpy. */
static void
copy_bytes(char **p, const int64_t *s, int64_t n, void *ctx)
{
    int64_t size = (int64_t)(intptr_t)ctx;
    if (s[0] == size && s[1] == size) {
        memmove(p[0], p[1], (size_t)(n * size));
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        memcpy(p[0] + i * s[0], p[1] + i * s[1], (size_t)size);
    }
}

/* WHERE moves bytes: one loop per element size, without a branch on the condition
 * (both values are loaded and a mask picks one). The shared kernel's branch is
 * mispredicted half the time on a random condition: 115 us for 32k float32 elements
 * (ReLU's gradient), 20 times a comparison's cost; a loop over a mask runs at the
 * speed of a multiply and vectorises where the operands are contiguous or scalars. */
static inline void
where_select(char *out, const char *cond, const char *x, const char *y, int64_t so,
             int64_t sc, int64_t sx, int64_t sy, int64_t n, size_t size)
{
#define GA_X_SELECT(T)                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                  \
        T u, v;                                                                        \
        memcpy(&u, x + i * sx, sizeof u);                                              \
        memcpy(&v, y + i * sy, sizeof v);                                              \
        T m = (T)0 - (T)(cond[i * sc] != 0);                                           \
        u = (T)((u & m) | (v & (T)~m));                                                \
        memcpy(out + i * so, &u, sizeof u);                                            \
    }
    switch (size) {
    case 1:
        GA_X_SELECT(uint8_t)
        break;
    case 2:
        GA_X_SELECT(uint16_t)
        break;
    case 4:
        GA_X_SELECT(uint32_t)
        break;
    default: /* 8, and each half of 16 (complex128) */
        GA_X_SELECT(uint64_t)
        break;
    }
#undef GA_X_SELECT
}

/* The common layouts with constant strides, which the compiler vectorises, compiled
 * for AVX-512 and AVX2 too (the baseline build widens the 1-byte condition to 4 and
 * 8 bytes with SSE2 only): a fused where reads its operands from cache, where the
 * baseline loop cost 4 times a multiply per element. */
#define GA_X_WHERE_LAYOUT(name, sx, sy)                                                \
    GA_SIMD_CLONES static void name(char **p, int64_t n, size_t size)                  \
    {                                                                                  \
        switch (size) {                                                                \
        case 1:                                                                        \
            where_select(p[0], p[1], p[2], p[3], 1, 1, (sx) * 1, (sy) * 1, n, 1);      \
            break;                                                                     \
        case 2:                                                                        \
            where_select(p[0], p[1], p[2], p[3], 2, 1, (sx) * 2, (sy) * 2, n, 2);      \
            break;                                                                     \
        case 4:                                                                        \
            where_select(p[0], p[1], p[2], p[3], 4, 1, (sx) * 4, (sy) * 4, n, 4);      \
            break;                                                                     \
        default:                                                                       \
            where_select(p[0], p[1], p[2], p[3], 8, 1, (sx) * 8, (sy) * 8, n, 8);      \
            break;                                                                     \
        }                                                                              \
    }
GA_X_WHERE_LAYOUT(where_vv, 1, 1)
GA_X_WHERE_LAYOUT(where_vs, 1, 0)
GA_X_WHERE_LAYOUT(where_sv, 0, 1)
#undef GA_X_WHERE_LAYOUT

static void
where_bytes(char **p, const int64_t *s, int64_t n, void *ctx)
{
    size_t size = (size_t)(intptr_t)ctx, half = size == 16 ? 8 : size;
    int64_t w = (int64_t)half;
    if (size != 16 && s[0] == w && s[1] == 1 && s[2] == w && s[3] == w) {
        where_vv(p, n, half);
    }
    else if (size != 16 && s[0] == w && s[1] == 1 && s[2] == w && s[3] == 0) {
        where_vs(p, n, half);
    }
    else if (size != 16 && s[0] == w && s[1] == 1 && s[2] == 0 && s[3] == w) {
        where_sv(p, n, half);
    }
    else {
        for (size_t off = 0; off < size; off += half) {
            where_select(p[0] + off, p[1], p[2] + off, p[3] + off, s[0], s[1], s[2], s[3],
                         n, half);
        }
    }
}

/* Relative time per element (see ga_cpu_run_loop_parallel): math-library functions
 * and complex arithmetic cost several times a simple operation. */
static int
op_cost(int op, int dt)
{
    if (dt == GA_COMPLEX64 || dt == GA_COMPLEX128) {
        return 8;
    }
    if (simd_loop(op, dt) != NULL) {
        return 2; /* the SIMD math: a few times an add, not a libm call */
    }
    switch (op) {
    case GA_OP_EXP: case GA_OP_EXPM1: case GA_OP_EXP2: case GA_OP_LOG: case GA_OP_LOG1P:
    case GA_OP_LOG2: case GA_OP_LOG10: case GA_OP_SIN: case GA_OP_COS: case GA_OP_TAN:
    case GA_OP_ASIN: case GA_OP_ACOS: case GA_OP_ATAN: case GA_OP_SINH: case GA_OP_COSH:
    case GA_OP_TANH: case GA_OP_ASINH: case GA_OP_ACOSH: case GA_OP_ATANH: case GA_OP_POW:
    case GA_OP_ATAN2: case GA_OP_HYPOT: case GA_OP_LOGADDEXP:
        return 8;
    default:
        /* gpuarr.special: libm calls, series and iterations (tens of them) */
        return op >= GA_OP_SPECIAL_FIRST && op <= GA_OP_SPECIAL_LAST ? 32 : 1;
    }
}

int
ga_cpu_elementwise_loop(int op, int in_dt, int out_dt, ga_cpu_inner_fn *fn, void **ctx,
                        int *cost)
{
    if (op < 0 || op >= GA_NOPS || in_dt < 0 || in_dt >= GA_NTYPES || out_dt < 0 ||
        out_dt >= GA_NTYPES) {
        return ga_error(GA_ERR_RUNTIME, "internal: bad elementwise call (op %d)", op);
    }
    *ctx = NULL;
    *cost = 1;
    if (op == GA_OP_COPY) {
        *fn = in_dt == out_dt ? copy_bytes : cast_loops[in_dt][out_dt];
        if (in_dt == out_dt) {
            *ctx = (void *)(intptr_t)ga_dtype_itemsize((ga_dtype)in_dt);
        }
        return GA_OK;
    }
    if (op == GA_OP_WHERE) {
        *fn = where_bytes;
        *ctx = (void *)(intptr_t)ga_dtype_itemsize((ga_dtype)in_dt);
        return GA_OK;
    }
    *fn = simd_loop(op, in_dt);
    if (*fn == NULL) {
        *fn = hot_loops[op][in_dt];
    }
    if (*fn == NULL) {
        *fn = kernel_loops[op][in_dt];
    }
    if (*fn == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED, "%s has no CPU kernel for %s", ga_op_names[op],
                        ga_dtype_infos[in_dt].name);
    }
    *cost = op_cost(op, in_dt);
    return GA_OK;
}

int
ga_cpu_elementwise(int dev, int op, const ga_loop *loop)
{
    (void)dev;
    if (op < 0 || op >= GA_NOPS || loop->nargs < 2) {
        return ga_error(GA_ERR_RUNTIME, "internal: bad elementwise call (op %d)", op);
    }
    ga_cpu_inner_fn fn;
    void *ctx;
    int cost;
    GA_TRY(ga_cpu_elementwise_loop(op, loop->args[op == GA_OP_WHERE ? 2 : 1].dtype,
                                   loop->args[0].dtype, &fn, &ctx, &cost));
    ga_cpu_run_loop_parallel(loop, fn, ctx, cost);
    return GA_OK;
}
