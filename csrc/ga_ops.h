/* ga_ops.h: the one list of elementwise operations, reductions and scans.
 *
 * GA_ELEMENTWISE_OPS(X): X(ENUM, python_name, nin)
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
    X(GA_OP_COPY, copy, 1)                                                             \
    X(GA_OP_NEGATIVE, negative, 1)                                                     \
    X(GA_OP_POSITIVE, positive, 1)                                                     \
    X(GA_OP_ABS, abs, 1)                                                               \
    X(GA_OP_BITWISE_INVERT, bitwise_invert, 1)                                         \
    X(GA_OP_LOGICAL_NOT, logical_not, 1)                                               \
    X(GA_OP_SQRT, sqrt, 1)                                                             \
    X(GA_OP_SQUARE, square, 1)                                                         \
    X(GA_OP_RECIPROCAL, reciprocal, 1)                                                 \
    X(GA_OP_EXP, exp, 1)                                                               \
    X(GA_OP_EXPM1, expm1, 1)                                                           \
    X(GA_OP_EXP2, exp2, 1)                                                             \
    X(GA_OP_LOG, log, 1)                                                               \
    X(GA_OP_LOG1P, log1p, 1)                                                           \
    X(GA_OP_LOG2, log2, 1)                                                             \
    X(GA_OP_LOG10, log10, 1)                                                           \
    X(GA_OP_SIN, sin, 1)                                                               \
    X(GA_OP_COS, cos, 1)                                                               \
    X(GA_OP_TAN, tan, 1)                                                               \
    X(GA_OP_ASIN, asin, 1)                                                             \
    X(GA_OP_ACOS, acos, 1)                                                             \
    X(GA_OP_ATAN, atan, 1)                                                             \
    X(GA_OP_SINH, sinh, 1)                                                             \
    X(GA_OP_COSH, cosh, 1)                                                             \
    X(GA_OP_TANH, tanh, 1)                                                             \
    X(GA_OP_ASINH, asinh, 1)                                                           \
    X(GA_OP_ACOSH, acosh, 1)                                                           \
    X(GA_OP_ATANH, atanh, 1)                                                           \
    X(GA_OP_CEIL, ceil, 1)                                                             \
    X(GA_OP_FLOOR, floor, 1)                                                           \
    X(GA_OP_TRUNC, trunc, 1)                                                           \
    X(GA_OP_ROUND, round, 1)                                                           \
    X(GA_OP_SIGN, sign, 1)                                                             \
    X(GA_OP_SIGNBIT, signbit, 1)                                                       \
    X(GA_OP_ISFINITE, isfinite, 1)                                                     \
    X(GA_OP_ISINF, isinf, 1)                                                           \
    X(GA_OP_ISNAN, isnan, 1)                                                           \
    X(GA_OP_CONJ, conj, 1)                                                             \
    X(GA_OP_REAL, real, 1)                                                             \
    X(GA_OP_IMAG, imag, 1)                                                             \
    X(GA_OP_ADD, add, 2)                                                               \
    X(GA_OP_SUBTRACT, subtract, 2)                                                     \
    X(GA_OP_MULTIPLY, multiply, 2)                                                     \
    X(GA_OP_DIVIDE, divide, 2)                                                         \
    X(GA_OP_FLOOR_DIVIDE, floor_divide, 2)                                             \
    X(GA_OP_REMAINDER, remainder, 2)                                                   \
    X(GA_OP_POW, pow, 2)                                                               \
    X(GA_OP_ATAN2, atan2, 2)                                                           \
    X(GA_OP_HYPOT, hypot, 2)                                                           \
    X(GA_OP_COPYSIGN, copysign, 2)                                                     \
    X(GA_OP_NEXTAFTER, nextafter, 2)                                                   \
    X(GA_OP_LOGADDEXP, logaddexp, 2)                                                   \
    X(GA_OP_MAXIMUM, maximum, 2)                                                       \
    X(GA_OP_MINIMUM, minimum, 2)                                                       \
    X(GA_OP_EQUAL, equal, 2)                                                           \
    X(GA_OP_NOT_EQUAL, not_equal, 2)                                                   \
    X(GA_OP_LESS, less, 2)                                                             \
    X(GA_OP_LESS_EQUAL, less_equal, 2)                                                 \
    X(GA_OP_GREATER, greater, 2)                                                       \
    X(GA_OP_GREATER_EQUAL, greater_equal, 2)                                           \
    X(GA_OP_LOGICAL_AND, logical_and, 2)                                               \
    X(GA_OP_LOGICAL_OR, logical_or, 2)                                                 \
    X(GA_OP_LOGICAL_XOR, logical_xor, 2)                                               \
    X(GA_OP_BITWISE_AND, bitwise_and, 2)                                               \
    X(GA_OP_BITWISE_OR, bitwise_or, 2)                                                 \
    X(GA_OP_BITWISE_XOR, bitwise_xor, 2)                                               \
    X(GA_OP_LEFT_SHIFT, bitwise_left_shift, 2)                                         \
    X(GA_OP_RIGHT_SHIFT, bitwise_right_shift, 2)                                       \
    X(GA_OP_WHERE, where, 3)                                                           \
    X(GA_OP_CLIP, clip, 3)

typedef enum {
#define GA_X_ENUM(e, name, nin) e,
    GA_ELEMENTWISE_OPS(GA_X_ENUM)
#undef GA_X_ENUM
        GA_NOPS
} ga_op;

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
