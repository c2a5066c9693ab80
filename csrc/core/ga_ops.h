/* ga_ops.h: the one list of elementwise operations, reductions and scans (and the
 * other operation codes the core and the backends share: distributions, FFT kinds).
 *
 * GA_ELEMENTWISE_OPS(X): X(ENUM, python_name, nin, out)
 * `out` is what the output holds: SAME (the loop dtype), BOOL, or REAL (the real dtype
 * of a complex loop dtype, the loop dtype otherwise: abs, real, imag). Read through
 * ga_op_arity / ga_op_out / ga_op_out_size below, the one place that says it.
 * Type resolution (which loop dtype and output dtype an op uses for given inputs)
 * lives in ga_elementwise.c; a backend's `elementwise` entry receives operands already
 * converted to the op's loop dtype, with the output's dtype in args[0].dtype.
 * Kernel contract per op family (what the backend may assume):
 *   - arithmetic/math ops: every input has the loop dtype; output has the loop dtype,
 *     except REAL/IMAG/ABS of complex (output real) and the bool-valued ones below.
 *   - comparisons, LOGICAL_*, ISFINITE/ISINF/ISNAN/SIGNBIT: output bool.
 *   - COPY: one input of any dtype, output of any dtype: a cast with NumPy's
 *     unsafe-casting semantics (float->int truncates, complex->real drops imag).
 *   - WHERE: inputs (cond: bool, x, y: loop dtype).
 *   - CLIP: inputs (x, lo, hi) all loop dtype; NaN in x propagates.
 */
#ifndef GA_OPS_H
#define GA_OPS_H

#define GA_ELEMENTWISE_OPS(X)                                                          \
    X(GA_OP_COPY, copy, 1, SAME)                                                       \
    X(GA_OP_NEGATIVE, negative, 1, SAME)                                               \
    X(GA_OP_POSITIVE, positive, 1, SAME)                                               \
    X(GA_OP_ABS, abs, 1, REAL)                                                         \
    X(GA_OP_BITWISE_INVERT, bitwise_invert, 1, SAME)                                   \
    X(GA_OP_LOGICAL_NOT, logical_not, 1, BOOL)                                         \
    X(GA_OP_SQRT, sqrt, 1, SAME)                                                       \
    X(GA_OP_SQUARE, square, 1, SAME)                                                   \
    X(GA_OP_RECIPROCAL, reciprocal, 1, SAME)                                           \
    X(GA_OP_EXP, exp, 1, SAME)                                                         \
    X(GA_OP_EXPM1, expm1, 1, SAME)                                                     \
    X(GA_OP_EXP2, exp2, 1, SAME)                                                       \
    X(GA_OP_LOG, log, 1, SAME)                                                         \
    X(GA_OP_LOG1P, log1p, 1, SAME)                                                     \
    X(GA_OP_LOG2, log2, 1, SAME)                                                       \
    X(GA_OP_LOG10, log10, 1, SAME)                                                     \
    X(GA_OP_SIN, sin, 1, SAME)                                                         \
    X(GA_OP_COS, cos, 1, SAME)                                                         \
    X(GA_OP_TAN, tan, 1, SAME)                                                         \
    X(GA_OP_ASIN, asin, 1, SAME)                                                       \
    X(GA_OP_ACOS, acos, 1, SAME)                                                       \
    X(GA_OP_ATAN, atan, 1, SAME)                                                       \
    X(GA_OP_SINH, sinh, 1, SAME)                                                       \
    X(GA_OP_COSH, cosh, 1, SAME)                                                       \
    X(GA_OP_TANH, tanh, 1, SAME)                                                       \
    X(GA_OP_ASINH, asinh, 1, SAME)                                                     \
    X(GA_OP_ACOSH, acosh, 1, SAME)                                                     \
    X(GA_OP_ATANH, atanh, 1, SAME)                                                     \
    X(GA_OP_CEIL, ceil, 1, SAME)                                                       \
    X(GA_OP_FLOOR, floor, 1, SAME)                                                     \
    X(GA_OP_TRUNC, trunc, 1, SAME)                                                     \
    X(GA_OP_ROUND, round, 1, SAME)                                                     \
    X(GA_OP_SIGN, sign, 1, SAME)                                                       \
    X(GA_OP_SIGNBIT, signbit, 1, BOOL)                                                 \
    X(GA_OP_ISFINITE, isfinite, 1, BOOL)                                               \
    X(GA_OP_ISINF, isinf, 1, BOOL)                                                     \
    X(GA_OP_ISNAN, isnan, 1, BOOL)                                                     \
    X(GA_OP_CONJ, conj, 1, SAME)                                                       \
    X(GA_OP_REAL, real, 1, REAL)                                                       \
    X(GA_OP_IMAG, imag, 1, REAL)                                                       \
    X(GA_OP_ADD, add, 2, SAME)                                                         \
    X(GA_OP_SUBTRACT, subtract, 2, SAME)                                               \
    X(GA_OP_MULTIPLY, multiply, 2, SAME)                                               \
    X(GA_OP_DIVIDE, divide, 2, SAME)                                                   \
    X(GA_OP_FLOOR_DIVIDE, floor_divide, 2, SAME)                                       \
    X(GA_OP_REMAINDER, remainder, 2, SAME)                                             \
    X(GA_OP_POW, pow, 2, SAME)                                                         \
    X(GA_OP_ATAN2, atan2, 2, SAME)                                                     \
    X(GA_OP_HYPOT, hypot, 2, SAME)                                                     \
    X(GA_OP_COPYSIGN, copysign, 2, SAME)                                               \
    X(GA_OP_NEXTAFTER, nextafter, 2, SAME)                                             \
    X(GA_OP_LOGADDEXP, logaddexp, 2, SAME)                                             \
    X(GA_OP_MAXIMUM, maximum, 2, SAME)                                                 \
    X(GA_OP_MINIMUM, minimum, 2, SAME)                                                 \
    X(GA_OP_EQUAL, equal, 2, BOOL)                                                     \
    X(GA_OP_NOT_EQUAL, not_equal, 2, BOOL)                                             \
    X(GA_OP_LESS, less, 2, BOOL)                                                       \
    X(GA_OP_LESS_EQUAL, less_equal, 2, BOOL)                                           \
    X(GA_OP_GREATER, greater, 2, BOOL)                                                 \
    X(GA_OP_GREATER_EQUAL, greater_equal, 2, BOOL)                                     \
    X(GA_OP_LOGICAL_AND, logical_and, 2, BOOL)                                         \
    X(GA_OP_LOGICAL_OR, logical_or, 2, BOOL)                                           \
    X(GA_OP_LOGICAL_XOR, logical_xor, 2, BOOL)                                         \
    X(GA_OP_BITWISE_AND, bitwise_and, 2, SAME)                                         \
    X(GA_OP_BITWISE_OR, bitwise_or, 2, SAME)                                           \
    X(GA_OP_BITWISE_XOR, bitwise_xor, 2, SAME)                                         \
    X(GA_OP_LEFT_SHIFT, bitwise_left_shift, 2, SAME)                                   \
    X(GA_OP_RIGHT_SHIFT, bitwise_right_shift, 2, SAME)                                 \
    X(GA_OP_WHERE, where, 3, SAME)                                                     \
    X(GA_OP_CLIP, clip, 3, SAME)                                                       \
    GA_SPECIAL_OPS_WITH(GA_SP_AS_OP, X)

/* gpuarr.special's functions (after the array API's, so that adding one moves no
 * other code): F(X, ENUM, python_name, nin), applied through F so that the one list
 * makes both the ops above (GA_SP_AS_OP) and the kernels of
 * kernels/ga_special_kernels.h. Every one has float32 and float64 loops only, as
 * SciPy's: integers and float16 promote to float32 (up to 16 bits) or float64. */
#define GA_SPECIAL_OPS_WITH(F, X)                                                      \
    F(X, GA_OP_ERF, erf, 1)                                                            \
    F(X, GA_OP_ERFC, erfc, 1)                                                          \
    F(X, GA_OP_ERFCX, erfcx, 1)                                                        \
    F(X, GA_OP_ERFINV, erfinv, 1)                                                      \
    F(X, GA_OP_NDTR, ndtr, 1)                                                          \
    F(X, GA_OP_NDTRI, ndtri, 1)                                                        \
    F(X, GA_OP_LOG_NDTR, log_ndtr, 1)                                                  \
    F(X, GA_OP_EXPIT, expit, 1)                                                        \
    F(X, GA_OP_LOGIT, logit, 1)                                                        \
    F(X, GA_OP_ENTR, entr, 1)                                                          \
    F(X, GA_OP_GAMMALN, gammaln, 1)                                                    \
    F(X, GA_OP_DIGAMMA, digamma, 1)                                                    \
    F(X, GA_OP_I0, i0, 1)                                                              \
    F(X, GA_OP_I0E, i0e, 1)                                                            \
    F(X, GA_OP_I1, i1, 1)                                                              \
    F(X, GA_OP_I1E, i1e, 1)                                                            \
    F(X, GA_OP_SINC, sinc, 1)                                                          \
    F(X, GA_OP_XLOGY, xlogy, 2)                                                        \
    F(X, GA_OP_XLOG1PY, xlog1py, 2)                                                    \
    F(X, GA_OP_REL_ENTR, rel_entr, 2)                                                  \
    F(X, GA_OP_KL_DIV, kl_div, 2)                                                      \
    F(X, GA_OP_GAMMAINC, gammainc, 2)                                                  \
    F(X, GA_OP_GAMMAINCC, gammaincc, 2)                                                \
    F(X, GA_OP_GAMMAINCINV, gammaincinv, 2)                                            \
    F(X, GA_OP_GAMMAINCCINV, gammainccinv, 2)                                          \
    F(X, GA_OP_BETALN, betaln, 2)                                                      \
    F(X, GA_OP_STDTR, stdtr, 2)                                                        \
    F(X, GA_OP_STDTRIT, stdtrit, 2)                                                    \
    F(X, GA_OP_CHDTR, chdtr, 2)                                                        \
    F(X, GA_OP_CHDTRC, chdtrc, 2)                                                      \
    F(X, GA_OP_CHDTRI, chdtri, 2)                                                      \
    F(X, GA_OP_BETAINC, betainc, 3)                                                    \
    F(X, GA_OP_BETAINCC, betaincc, 3)                                                  \
    F(X, GA_OP_BETAINCINV, betaincinv, 3)                                              \
    F(X, GA_OP_FDTR, fdtr, 3)                                                          \
    F(X, GA_OP_FDTRC, fdtrc, 3)                                                        \
    F(X, GA_OP_FDTRI, fdtri, 3)                                                        \
    /* issue 46, second part: the elementary functions and the gamma family */         \
    F(X, GA_OP_CBRT, cbrt, 1)                                                          \
    F(X, GA_OP_EXP10, exp10, 1)                                                        \
    F(X, GA_OP_COSM1, cosm1, 1)                                                        \
    F(X, GA_OP_EXPREL, exprel, 1)                                                      \
    F(X, GA_OP_SINDG, sindg, 1)                                                        \
    F(X, GA_OP_COSDG, cosdg, 1)                                                        \
    F(X, GA_OP_TANDG, tandg, 1)                                                        \
    F(X, GA_OP_COTDG, cotdg, 1)                                                        \
    F(X, GA_OP_RADIAN, radian, 3)                                                      \
    F(X, GA_OP_BOXCOX, boxcox, 2)                                                      \
    F(X, GA_OP_BOXCOX1P, boxcox1p, 2)                                                  \
    F(X, GA_OP_INV_BOXCOX, inv_boxcox, 2)                                              \
    F(X, GA_OP_INV_BOXCOX1P, inv_boxcox1p, 2)                                          \
    F(X, GA_OP_HUBER, huber, 2)                                                        \
    F(X, GA_OP_PSEUDO_HUBER, pseudo_huber, 2)                                          \
    F(X, GA_OP_GAMMA, gamma, 1)                                                        \
    F(X, GA_OP_GAMMASGN, gammasgn, 1)                                                  \
    F(X, GA_OP_RGAMMA, rgamma, 1)                                                      \
    F(X, GA_OP_LOGGAMMA, loggamma, 1)                                                  \
    F(X, GA_OP_POCH, poch, 2)                                                          \
    F(X, GA_OP_BINOM, binom, 2)                                                        \
    F(X, GA_OP_ZETA, zeta, 2)                                                          \
    F(X, GA_OP_RIEMANN_ZETA, riemann_zeta, 1)                                          \
    F(X, GA_OP_ZETAC, zetac, 1)                                                        \
    /* Bessel J, Y, K; exponential and elliptic integrals; Spence's function */         \
    F(X, GA_OP_J0, j0, 1)                                                              \
    F(X, GA_OP_J1, j1, 1)                                                              \
    F(X, GA_OP_Y0, y0, 1)                                                              \
    F(X, GA_OP_Y1, y1, 1)                                                              \
    F(X, GA_OP_YN, yn, 2)                                                              \
    F(X, GA_OP_K0, k0, 1)                                                              \
    F(X, GA_OP_K0E, k0e, 1)                                                            \
    F(X, GA_OP_K1, k1, 1)                                                              \
    F(X, GA_OP_K1E, k1e, 1)                                                            \
    F(X, GA_OP_EXP1, exp1, 1)                                                          \
    F(X, GA_OP_EXPI, expi, 1)                                                          \
    F(X, GA_OP_EXPN, expn, 2)                                                          \
    F(X, GA_OP_ELLIPK, ellipk, 1)                                                      \
    F(X, GA_OP_ELLIPKM1, ellipkm1, 1)                                                  \
    F(X, GA_OP_SPENCE, spence, 1)                                                      \
    /* Kummer's confluent hypergeometric function; associated Legendre functions */     \
    F(X, GA_OP_HYP1F1, hyp1f1, 3)                                                      \
    F(X, GA_OP_LPMV, lpmv, 3)
#define GA_SP_AS_OP(X, E, name, nin) X(E, name, nin, SAME)

/* the first and last of them (type resolution and the CPU's cost model test ranges) */
#define GA_OP_SPECIAL_FIRST GA_OP_ERF
#define GA_OP_SPECIAL_LAST GA_OP_LPMV

typedef enum {
#define GA_X_ENUM(e, name, nin, out) e,
    GA_ELEMENTWISE_OPS(GA_X_ENUM)
#undef GA_X_ENUM
        GA_NOPS
} ga_op;

enum { GA_OUT_SAME = 0, GA_OUT_BOOL = 1, GA_OUT_REAL = 2 };

/* constexpr in C++ (the CUDA kernels size their operands at compile time) */
#ifdef __cplusplus
#define GA_OPS_FN static constexpr
#else
#define GA_OPS_FN static inline
#endif

/* Number of inputs of `op` (0 for an unknown op). */
GA_OPS_FN int
ga_op_arity(int op)
{
    switch (op) {
#define GA_X_ARITY(e, name, nin, out)                                                  \
    case e:                                                                            \
        return nin;
        GA_ELEMENTWISE_OPS(GA_X_ARITY)
#undef GA_X_ARITY
    default:
        return 0;
    }
}

/* GA_OUT_SAME, GA_OUT_BOOL or GA_OUT_REAL (the list's `out` column). */
GA_OPS_FN int
ga_op_out(int op)
{
    switch (op) {
#define GA_X_OUT(e, name, nin, out)                                                    \
    case e:                                                                            \
        return GA_OUT_##out;
        GA_ELEMENTWISE_OPS(GA_X_OUT)
#undef GA_X_OUT
    default:
        return GA_OUT_SAME;
    }
}

/* Bytes of one output element of `op` for a loop dtype of `size` bytes. */
GA_OPS_FN int
ga_op_out_size(int op, int loop_is_complex, int size)
{
    return ga_op_out(op) == GA_OUT_BOOL                       ? 1
           : ga_op_out(op) == GA_OUT_REAL && loop_is_complex ? size / 2
                                                              : size;
}

/* Reductions: X(ENUM, name). MEAN, VAR, STD are composed by the core from SUM. */
#define GA_REDUCE_OPS(X)                                                               \
    X(GA_RED_SUM, sum)                                                                 \
    X(GA_RED_PROD, prod)                                                               \
    X(GA_RED_MAX, max)                                                                 \
    X(GA_RED_MIN, min)                                                                 \
    X(GA_RED_ARGMAX, argmax)                                                           \
    X(GA_RED_ARGMIN, argmin)                                                           \
    X(GA_RED_ALL, all)                                                                 \
    X(GA_RED_ANY, any)

typedef enum {
#define GA_X_ENUM(e, name) e,
    GA_REDUCE_OPS(GA_X_ENUM)
#undef GA_X_ENUM
        GA_NREDUCE
} ga_reduce_op;

/* Scans along one axis; the binding's names come from the same list. */
#define GA_SCAN_OPS(X)                                                                 \
    X(GA_SCAN_CUMSUM, cumsum)                                                          \
    X(GA_SCAN_CUMPROD, cumprod)

typedef enum {
#define GA_X_ENUM(e, name) e,
    GA_SCAN_OPS(GA_X_ENUM)
#undef GA_X_ENUM
        GA_NSCAN
} ga_scan_op;

/* Distributions of random numbers (ga_random and the backends' random entry); the
 * binding's names come from the same list. */
#define GA_RAND_DISTS(X)                                                               \
    X(GA_RAND_UNIFORM, uniform)                                                        \
    X(GA_RAND_NORMAL, normal)                                                          \
    X(GA_RAND_INTEGERS, integers)
typedef enum {
#define GA_X_ENUM(e, name) e,
    GA_RAND_DISTS(GA_X_ENUM)
#undef GA_X_ENUM
} ga_rand_dist;

/* The transforms of the backends' fft entry (ga_fft_desc in ga_backend.h; values
 * fixed: part of the ABI). */
typedef enum {
    GA_FFT_C2C = 0, /* complex -> complex, n -> n */
    GA_FFT_R2C = 1, /* real -> complex, n -> n/2 + 1 (the non-negative frequencies) */
    GA_FFT_C2R = 2  /* complex -> real, n/2 + 1 -> n (the inverse of R2C) */
} ga_fft_kind;

#ifdef __cplusplus
extern "C" {
#endif
extern const char *const ga_op_names[GA_NOPS];
extern const int ga_op_nin[GA_NOPS];
extern const char *const ga_reduce_names[GA_NREDUCE];
#ifdef __cplusplus
}
#endif

#endif
