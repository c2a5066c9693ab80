/* ga_elementwise_math.h: the scalar math of every elementwise operation and cast,
 * shared by the CPU backend (C11), the CUDA kernels (nvcc) and the CUDA emulation
 * (host C++).
 *
 * Contract (what the CPU loops and the CUDA kernels rely on):
 *   - For every (op, loop dtype) in GA_KERNEL_LIST:
 *       ga_k_<op>_<dtype>(char *out, const char *a, const char *b, const char *c)
 *     reads its inputs (all of the loop dtype, except WHERE's condition `a`, which is
 *     bool) and writes one element of the output dtype the core put in args[0]:
 *     bool for comparisons, logical_*, isfinite/isinf/isnan/signbit; the real dtype
 *     for abs/real/imag of complex; the loop dtype otherwise. Unused inputs are
 *     ignored (pass NULL). On the CPU pointers need no alignment (loads go through
 *     memcpy, which compilers turn into plain loads). In CUDA code every pointer is
 *     aligned to its element (GA_K_ELEMENT, ga_config.h): one load of the element's width.
 *   - For every pair in GA_CAST_LIST: ga_k_cast_<from>_<to>(char *out, const char *in)
 *     with NumPy's unsafe-casting semantics where NumPy defines them: float->int
 *     truncates toward zero; where NumPy leaves the result to the CPU (NaN, +-inf and
 *     values beyond the target's range) every device gives NumPy's x86 result
 *     (INT64_MIN for int64, 300.0 -> int8 is 44, -1.0 -> uint8 is 255: ga_f64_to_<dt>);
 *     int->int wraps (300 -> int8 is 44, -1 -> uint8 is 255); complex->real drops
 *     the imaginary part; anything->bool is `!= 0`.
 *   - Integer division and remainder by zero give 0; INT_MIN // -1 wraps to INT_MIN
 *     (NumPy's result). Shifts by a negative amount or >= the bit width give 0 (or
 *     -1 for >> of a negative value). Integer x ** negative n gives 1 for x == 1,
 *     +-1 for x == -1 and 0 otherwise (NumPy raises; the core rejects negative
 *     scalar exponents, an exponent array cannot raise from a kernel).
 *   - ga_offset(): byte offset of the element with C-order linear index `linear`.
 *
 * Compiles as C11, CUDA C++ and host C++: only GA_HD static inline functions, no
 * <complex.h>, no _Generic, no compound literals, no VLAs.
 */
#ifndef GA_KERNELS_H
#define GA_KERNELS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ga_config.h"
#include "ga_dtype.h"
#include "ga_half.h"
#include "ga_ops.h"

/* --- index arithmetic ------------------------------------------------------------ */

GA_HD static inline int64_t
ga_offset(int ndim, const int64_t *shape, const int64_t *strides, int64_t linear)
{
    int64_t off = 0;
    /* a dimension per step: unrolled, every call site grew to 7 divisions (a GPU has
     * no 64-bit divide instruction) and the reductions' machine code by a third */
    GA_NO_UNROLL
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t n = shape[d];
        int64_t q = linear / n;
        off += (linear - q * n) * strides[d];
        linear = q;
    }
    return off;
}

/* --- loads and stores ------------------------------------------------------------ */

typedef ga_complex64_storage ga_c64;
typedef ga_complex128_storage ga_c128;

#define GA_K_LDST(dt, T, A)                                                            \
    GA_HD static inline T ga_ld_##dt(const char *p)                                    \
    {                                                                                  \
        T v;                                                                           \
        memcpy(&v, GA_K_ELEMENT(p, A), sizeof(T));                                     \
        return v;                                                                      \
    }                                                                                  \
    GA_HD static inline void ga_st_##dt(char *p, T v)                                  \
    {                                                                                  \
        memcpy(GA_K_ELEMENT(p, A), &v, sizeof(T));                                     \
    }
GA_K_LDST(int8, int8_t, sizeof(int8_t))
GA_K_LDST(int16, int16_t, sizeof(int16_t))
GA_K_LDST(int32, int32_t, sizeof(int32_t))
GA_K_LDST(int64, int64_t, sizeof(int64_t))
GA_K_LDST(uint8, uint8_t, sizeof(uint8_t))
GA_K_LDST(uint16, uint16_t, sizeof(uint16_t))
GA_K_LDST(uint32, uint32_t, sizeof(uint32_t))
GA_K_LDST(uint64, uint64_t, sizeof(uint64_t))
GA_K_LDST(float32, float, sizeof(float))
GA_K_LDST(float64, double, sizeof(double))
GA_K_LDST(complex64, ga_c64, 4) /* parts are the unit */
GA_K_LDST(complex128, ga_c128, 8) /* parts are the unit */
#undef GA_K_LDST

GA_HD static inline int
ga_ld_bool(const char *p)
{
    return p[0] != 0;
}
GA_HD static inline void
ga_st_bool(char *p, int v)
{
    p[0] = (char)(v != 0);
}
GA_HD static inline float
ga_ld_float16(const char *p)
{
    uint16_t h;
    memcpy(&h, GA_K_ELEMENT(p, 2), 2);
    return ga_half_to_float(h);
}
GA_HD static inline void
ga_st_float16(char *p, float v)
{
    uint16_t h = ga_float_to_half(v);
    memcpy(GA_K_ELEMENT(p, 2), &h, 2);
}
GA_HD static inline uint16_t
ga_ld_half_bits(const char *p)
{
    uint16_t h;
    memcpy(&h, GA_K_ELEMENT(p, 2), 2);
    return h;
}

/* --- integer helpers --------------------------------------------------------------
 * Arithmetic goes through a wide unsigned type WT (uint32_t up to 32 bits, uint64_t
 * for 64) so that overflow wraps (as in NumPy) instead of being undefined. */

/* x < 0 without a comparison the compiler flags as always false for unsigned types */
#define GA_K_ISNEG(dt, T, SIGNED)                                                      \
    GA_HD static inline int ga_isneg_##dt(T x)                                         \
    {                                                                                  \
        return SIGNED ? (int)((uint64_t)(int64_t)x >> 63) : 0;                         \
    }
GA_K_ISNEG(int8, int8_t, 1)
GA_K_ISNEG(int16, int16_t, 1)
GA_K_ISNEG(int32, int32_t, 1)
GA_K_ISNEG(int64, int64_t, 1)
GA_K_ISNEG(uint8, uint8_t, 0)
GA_K_ISNEG(uint16, uint16_t, 0)
GA_K_ISNEG(uint32, uint32_t, 0)
GA_K_ISNEG(uint64, uint64_t, 0)
#undef GA_K_ISNEG

#define GA_K_INT_HELPERS(dt, T, WT, SIGNED, BITS)                                      \
    GA_HD static inline T ga_ifloordiv_##dt(T a, T b)                                  \
    {                                                                                  \
        if (b == 0) {                                                                  \
            return 0;                                                                  \
        }                                                                              \
        if (SIGNED && b == (T)-1) {                                                    \
            return (T)((WT)0 - (WT)a);                                                 \
        }                                                                              \
        T q = (T)(a / b);                                                              \
        if (SIGNED && (T)(a % b) != 0 && ga_isneg_##dt(a) != ga_isneg_##dt(b)) {         \
            q--;                                                                       \
        }                                                                              \
        return q;                                                                      \
    }                                                                                  \
    GA_HD static inline T ga_irem_##dt(T a, T b)                                       \
    {                                                                                  \
        if (b == 0 || (SIGNED && b == (T)-1)) {                                        \
            return 0;                                                                  \
        }                                                                              \
        T r = (T)(a % b);                                                              \
        if (SIGNED && r != 0 && ga_isneg_##dt(r) != ga_isneg_##dt(b)) {                  \
            r = (T)(r + b);                                                            \
        }                                                                              \
        return r;                                                                      \
    }                                                                                  \
    GA_HD static inline T ga_ipow_##dt(T a, T b)                                       \
    {                                                                                  \
        if (ga_isneg_##dt(b)) {                                                         \
            if (a == 1) {                                                              \
                return 1;                                                              \
            }                                                                          \
            if (SIGNED && a == (T)-1) {                                                \
                return (T)((b & 1) ? -1 : 1);                                          \
            }                                                                          \
            return 0;                                                                  \
        }                                                                              \
        WT base = (WT)a, r = 1;                                                        \
        uint64_t e = (uint64_t)b;                                                      \
        while (e) {                                                                    \
            if (e & 1u) {                                                              \
                r = (WT)(r * base);                                                    \
            }                                                                          \
            base = (WT)(base * base);                                                  \
            e >>= 1;                                                                   \
        }                                                                              \
        return (T)r;                                                                   \
    }                                                                                  \
    GA_HD static inline T ga_ishl_##dt(T a, T b)                                       \
    {                                                                                  \
        if (ga_isneg_##dt(b)) {                                                         \
            return 0;                                                                  \
        }                                                                              \
        if ((uint64_t)b >= (BITS)) {                                                   \
            return 0;                                                                  \
        }                                                                              \
        return (T)((WT)a << (unsigned)b);                                              \
    }                                                                                  \
    GA_HD static inline T ga_ishr_##dt(T a, T b)                                       \
    {                                                                                  \
        if (ga_isneg_##dt(b) || (uint64_t)b >= (BITS)) {                              \
            return (T)(ga_isneg_##dt(a) ? -1 : 0);                                    \
        }                                                                              \
        return (T)(a >> (unsigned)b);                                                  \
    }

GA_K_INT_HELPERS(int8, int8_t, uint32_t, 1, 8)
GA_K_INT_HELPERS(int16, int16_t, uint32_t, 1, 16)
GA_K_INT_HELPERS(int32, int32_t, uint32_t, 1, 32)
GA_K_INT_HELPERS(int64, int64_t, uint64_t, 1, 64)
GA_K_INT_HELPERS(uint8, uint8_t, uint32_t, 0, 8)
GA_K_INT_HELPERS(uint16, uint16_t, uint32_t, 0, 16)
GA_K_INT_HELPERS(uint32, uint32_t, uint32_t, 0, 32)
GA_K_INT_HELPERS(uint64, uint64_t, uint64_t, 0, 64)
#undef GA_K_INT_HELPERS

/* --- float helpers (sfx: f for float, empty for double) --------------------------- */

#define GA_K_FLOAT_HELPERS(CT, sfx)                                                    \
    /* Python's divmod for floats (NumPy's npy_divmod): the remainder takes the sign   \
     * of the divisor, and the quotient is rounded so q*b + r == a as closely as      \
     * possible. Division by zero: quotient a/b, remainder NaN (fmod). */             \
    GA_HD static inline CT ga_fdivmod##sfx(CT a, CT b, CT *mod)                        \
    {                                                                                  \
        CT m = fmod##sfx(a, b);                                                        \
        if (b == 0) {                                                                  \
            *mod = m;                                                                  \
            return a / b;                                                              \
        }                                                                              \
        CT div = (a - m) / b;                                                          \
        if (m != 0) {                                                                  \
            if ((b < 0) != (m < 0)) {                                                  \
                m += b;                                                                \
                div -= (CT)1;                                                          \
            }                                                                          \
        }                                                                              \
        else {                                                                         \
            m = copysign##sfx((CT)0, b);                                               \
        }                                                                              \
        CT fd;                                                                         \
        if (div != 0) {                                                                \
            fd = floor##sfx(div);                                                      \
            if (div - fd > (CT)0.5) {                                                  \
                fd += (CT)1;                                                           \
            }                                                                          \
        }                                                                              \
        else {                                                                         \
            fd = copysign##sfx((CT)0, a / b);                                          \
        }                                                                              \
        *mod = m;                                                                      \
        return fd;                                                                     \
    }                                                                                  \
    /* NumPy's floor division is divmod's quotient everywhere: an infinity over a     \
     * finite number is NaN and -1.0 // inf is -1.0. The array API standard asks for  \
     * floor(a / b) there (inf and -0.0); gpuarr follows NumPy, as array-api-compat    \
     * does for NumPy itself (docs/DESIGN.md, "Undefined corners"). */                 \
    GA_HD static inline CT ga_ffloordiv##sfx(CT a, CT b)                               \
    {                                                                                  \
        CT m;                                                                          \
        return ga_fdivmod##sfx(a, b, &m);                                              \
    }                                                                                  \
    GA_HD static inline CT ga_frem##sfx(CT a, CT b)                                    \
    {                                                                                  \
        CT m;                                                                          \
        ga_fdivmod##sfx(a, b, &m);                                                     \
        return m;                                                                      \
    }                                                                                  \
    GA_HD static inline CT ga_flogaddexp##sfx(CT x, CT y)                              \
    {                                                                                  \
        if (x == y) { /* also +-inf, where x - y would be NaN */                      \
            return x + (CT)0.69314718055994530942;                                     \
        }                                                                              \
        CT d = x - y;                                                                  \
        if (d > 0) {                                                                   \
            return x + log1p##sfx(exp##sfx(-d));                                       \
        }                                                                              \
        if (d <= 0) {                                                                  \
            return y + log1p##sfx(exp##sfx(d));                                        \
        }                                                                              \
        return d; /* NaN */                                                            \
    }                                                                                  \
    GA_HD static inline CT ga_fsign##sfx(CT x)                                         \
    {                                                                                  \
        return x > 0 ? (CT)1 : (x < 0 ? (CT)-1 : (x == 0 ? (CT)0 : x));                \
    }                                                                                  \
    /* x ** 2 is x * x, as NumPy's power fast path computes it: one rounding, the     \
     * same on every device (libm's pow is within 0.52 ulp, CUDA's within 2) */        \
    GA_HD static inline CT ga_fpow##sfx(CT x, CT y)                                    \
    {                                                                                  \
        return y == (CT)2 ? x * x : pow##sfx(x, y);                                    \
    }                                                                                  \
    GA_HD static inline CT ga_fmax##sfx(CT x, CT y)                                    \
    {                                                                                  \
        return (x >= y || x != x) ? x : y;                                             \
    }                                                                                  \
    GA_HD static inline CT ga_fmin##sfx(CT x, CT y)                                    \
    {                                                                                  \
        return (x <= y || x != x) ? x : y;                                             \
    }                                                                                  \
    GA_HD static inline int ga_fisinf##sfx(CT x)                                       \
    {                                                                                  \
        return x == (CT)INFINITY || x == -(CT)INFINITY;                                \
    }                                                                                  \
    GA_HD static inline int ga_fisfinite##sfx(CT x)                                    \
    {                                                                                  \
        return (x - x) == (x - x);                                                     \
    }                                                                                  \
    GA_HD static inline CT ga_fclip##sfx(CT x, CT lo, CT hi)                           \
    {                                                                                  \
        if (x != x) {                                                                  \
            return x;                                                                  \
        }                                                                              \
        CT r = ga_fmax##sfx(x, lo);                                                    \
        return ga_fmin##sfx(r, hi);                                                    \
    }

GA_K_FLOAT_HELPERS(float, f)
GA_K_FLOAT_HELPERS(double, )
#undef GA_K_FLOAT_HELPERS

/* nextafter of float16 works on the bits (float's nextafter steps too finely). */
GA_HD static inline uint16_t
ga_nextafter_half(uint16_t a, uint16_t b)
{
    float fa = ga_half_to_float(a), fb = ga_half_to_float(b);
    if (fa != fa || fb != fb) {
        return (uint16_t)0x7e00u;
    }
    if (fa == fb) {
        return b;
    }
    if ((a & 0x7fffu) == 0) { /* +-0: smallest subnormal toward b */
        return (uint16_t)((b & 0x8000u) | 1u);
    }
    /* away from zero when moving in the direction of a's sign */
    int up = (fa < fb) == ((a & 0x8000u) == 0);
    return (uint16_t)(up ? a + 1 : a - 1);
}

/* --- complex helpers (names: ga_c<op>_<dt>) -------------------------------------- */

#define GA_K_CMATH(dt, CT, RT, sfx)                                                    \
    GA_HD static inline CT ga_cmk_##dt(RT re, RT im)                                   \
    {                                                                                  \
        CT z;                                                                          \
        z.re = re;                                                                     \
        z.im = im;                                                                     \
        return z;                                                                      \
    }                                                                                  \
    GA_HD static inline CT ga_cadd_##dt(CT a, CT b)                                    \
    {                                                                                  \
        return ga_cmk_##dt(a.re + b.re, a.im + b.im);                                  \
    }                                                                                  \
    GA_HD static inline CT ga_csub_##dt(CT a, CT b)                                    \
    {                                                                                  \
        return ga_cmk_##dt(a.re - b.re, a.im - b.im);                                  \
    }                                                                                  \
    GA_HD static inline CT ga_cmul_##dt(CT a, CT b)                                    \
    {                                                                                  \
        return ga_cmk_##dt(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);      \
    }                                                                                  \
    /* Smith's algorithm: scales by the larger component of b, so |b|^2 never         \
     * overflows or underflows on the way; times 1/d as NumPy, so the roundings agree */                                         \
    GA_HD static inline CT ga_cdiv_##dt(CT a, CT b)                                    \
    {                                                                                  \
        RT abr = fabs##sfx(b.re), abi = fabs##sfx(b.im);                               \
        if (abr == 0 && abi == 0) {                                                    \
            return ga_cmk_##dt(a.re / abr, a.im / abi);                                \
        }                                                                              \
        if (abr >= abi) {                                                              \
            RT r = b.im / b.re, scl = (RT)1 / (b.re + b.im * r);                       \
            return ga_cmk_##dt((a.re + a.im * r) * scl, (a.im - a.re * r) * scl);      \
        }                                                                              \
        RT r = b.re / b.im, scl = (RT)1 / (b.re * r + b.im);                           \
        return ga_cmk_##dt((a.re * r + a.im) * scl, (a.im * r - a.re) * scl);          \
    }                                                                                  \
    GA_HD static inline RT ga_cabs_##dt(CT z)                                          \
    {                                                                                  \
        return hypot##sfx(z.re, z.im);                                                 \
    }                                                                                  \
    GA_HD static inline int ga_cnz_##dt(CT z)                                          \
    {                                                                                  \
        return z.re != 0 || z.im != 0;                                                 \
    }                                                                                  \
    GA_HD static inline int ga_cisnan_##dt(CT z)                                       \
    {                                                                                  \
        return z.re != z.re || z.im != z.im;                                           \
    }                                                                                  \
    /* The functions below follow C99/C11 Annex G at infinities, NaN and signed zeros, as \
    NumPy (through the C library) does: each handles the non-finite cases first, then  \
    computes finite arguments with the usual formulas. sin, cos and tan are sinh, cosh \
    and tanh of iz, as Annex G defines them, so their special values follow. */        \
    GA_HD static inline CT ga_cexp_##dt(CT z)                                          \
    {                                                                                  \
        RT x = z.re, y = z.im;                                                         \
        if (ga_fisfinite##sfx(x) && ga_fisfinite##sfx(y)) {                            \
            if (y == 0) { /* keeps exp(x + 0j) exact and inf-safe */                   \
                return ga_cmk_##dt(exp##sfx(x), y);                                    \
            }                                                                          \
            RT e = exp##sfx(x);                                                        \
            return ga_cmk_##dt(e * cos##sfx(y), e * sin##sfx(y));                      \
        }                                                                              \
        if (x != x) { /* NaN + i0 keeps its zero */                                    \
            return ga_cmk_##dt((RT)NAN, y == 0 ? y : (RT)NAN);                         \
        }                                                                              \
        if (ga_fisinf##sfx(x)) {                                                       \
            RT e = x > 0 ? x : (RT)0;                                                  \
            if (y == 0) {                                                              \
                return ga_cmk_##dt(e, y);                                              \
            }                                                                          \
            if (ga_fisfinite##sfx(y)) { /* +-0 or +-inf times cis(y) */                \
                return ga_cmk_##dt(e * cos##sfx(y), e * sin##sfx(y));                  \
            }                                                                          \
            return x > 0 ? ga_cmk_##dt(x, (RT)NAN) : ga_cmk_##dt((RT)0, copysign##sfx((RT)0, y)); \
        }                                                                              \
        return ga_cmk_##dt((RT)NAN, (RT)NAN); /* finite x, y infinite or NaN */        \
    }                                                                                  \
    GA_HD static inline CT ga_clog_##dt(CT z)                                          \
    {                                                                                  \
        return ga_cmk_##dt(log##sfx(ga_cabs_##dt(z)), atan2##sfx(z.im, z.re));         \
    }                                                                                  \
    GA_HD static inline CT ga_csqrt_##dt(CT z)                                         \
    {                                                                                  \
        if (z.re == 0 && z.im == 0) {                                                  \
            return ga_cmk_##dt((RT)0, z.im);                                           \
        }                                                                              \
        if (ga_fisinf##sfx(z.im)) {                                                    \
            return ga_cmk_##dt((RT)INFINITY, z.im);                                    \
        }                                                                              \
        if (z.re != z.re) {                                                            \
            return ga_cmk_##dt(z.re, (RT)NAN);                                         \
        }                                                                              \
        if (ga_fisinf##sfx(z.re)) { /* -inf + iy: 0 + i inf; +inf + iy: inf + i0 */    \
            if (z.im != z.im) {                                                        \
                return z.re > 0 ? z : ga_cmk_##dt((RT)NAN, (RT)INFINITY);              \
            }                                                                          \
            return z.re > 0 ? ga_cmk_##dt(z.re, copysign##sfx((RT)0, z.im))            \
                            : ga_cmk_##dt((RT)0, copysign##sfx(-z.re, z.im));          \
        }                                                                              \
        RT t = sqrt##sfx((fabs##sfx(z.re) + ga_cabs_##dt(z)) * (RT)0.5);               \
        if (z.re >= 0) {                                                               \
            return ga_cmk_##dt(t, z.im / (2 * t));                                     \
        }                                                                              \
        return ga_cmk_##dt(fabs##sfx(z.im) / (2 * t), copysign##sfx(t, z.im));         \
    }                                                                                  \
    GA_HD static inline CT ga_csinh_##dt(CT z)                                         \
    {                                                                                  \
        RT x = z.re, y = z.im;                                                         \
        if (ga_fisfinite##sfx(x) && ga_fisfinite##sfx(y)) {                            \
            if (y == 0) {                                                              \
                return ga_cmk_##dt(sinh##sfx(x), y);                                   \
            }                                                                          \
            return ga_cmk_##dt(sinh##sfx(x) * cos##sfx(y), cosh##sfx(x) * sin##sfx(y)); \
        }                                                                              \
        if (x == 0) { /* +-0 + i(inf or NaN) */                                        \
            return ga_cmk_##dt(x, (RT)NAN);                                            \
        }                                                                              \
        if (ga_fisinf##sfx(x)) {                                                       \
            if (y == 0) {                                                              \
                return ga_cmk_##dt(x, y);                                              \
            }                                                                          \
            if (ga_fisfinite##sfx(y)) {                                                \
                return ga_cmk_##dt(x * cos##sfx(y), (RT)INFINITY * sin##sfx(y));       \
            }                                                                          \
            return ga_cmk_##dt((RT)INFINITY, (RT)NAN); /* the C library's sign: + */   \
        }                                                                              \
        return ga_cmk_##dt((RT)NAN, (x != x && y == 0) ? y : (RT)NAN);                 \
    }                                                                                  \
    GA_HD static inline CT ga_ccosh_##dt(CT z)                                         \
    {                                                                                  \
        RT x = z.re, y = z.im;                                                         \
        if (ga_fisfinite##sfx(x) && ga_fisfinite##sfx(y)) {                            \
            if (y == 0) {                                                              \
                return ga_cmk_##dt(cosh##sfx(x), copysign##sfx((RT)0, x) * y);         \
            }                                                                          \
            return ga_cmk_##dt(cosh##sfx(x) * cos##sfx(y), sinh##sfx(x) * sin##sfx(y)); \
        }                                                                              \
        if (x == 0) { /* +-0 + i(inf or NaN) */                                        \
            return ga_cmk_##dt((RT)NAN, (RT)0);                                        \
        }                                                                              \
        if (ga_fisinf##sfx(x)) {                                                       \
            if (y == 0) {                                                              \
                return ga_cmk_##dt((RT)INFINITY, copysign##sfx((RT)0, x) * y);         \
            }                                                                          \
            if (ga_fisfinite##sfx(y)) {                                                \
                return ga_cmk_##dt((RT)INFINITY * cos##sfx(y), x * sin##sfx(y));       \
            }                                                                          \
            return ga_cmk_##dt((RT)INFINITY, (RT)NAN);                                 \
        }                                                                              \
        return ga_cmk_##dt((RT)NAN, (x != x && y == 0) ? y : (RT)NAN);                 \
    }                                                                                  \
    /* tanh(x+iy) = (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y), as glibc   \
     * (and so NumPy) computes it. The double-angle form, (sinh 2x + i sin 2y) /       \
     * (cosh 2x + cos 2y), takes sin(2y): NaN once 2y overflows (tanh(1 + 1e308j),     \
     * and tan(1e308 + 0j) through tan z = -i tanh(iz)). Past |x| = t (sinh^2 t still  \
     * finite: 354 in double, 44 in float) the real part is sign(x) to working         \
     * precision and the imaginary part 4 sin y cos y e^(-2|x|), divided in two steps  \
     * so that e^(2|x|) never overflows. */                                            \
    GA_HD static inline CT ga_ctanh_##dt(CT z)                                         \
    {                                                                                  \
        RT x = z.re, y = z.im;                                                         \
        if (ga_fisinf##sfx(x)) { /* glibc's sign: sin y cos y past |y| = 1, else y */  \
            int big_y = ga_fisfinite##sfx(y) && fabs##sfx(y) > 1;                      \
            RT s = big_y ? sin##sfx(y) * cos##sfx(y) : y;                              \
            return ga_cmk_##dt(copysign##sfx((RT)1, x), copysign##sfx((RT)0, s));      \
        }                                                                              \
        if (x != x) {                                                                  \
            return ga_cmk_##dt((RT)NAN, y == 0 ? y : (RT)NAN);                         \
        }                                                                              \
        if (!ga_fisfinite##sfx(y)) { /* finite x, y infinite or NaN */                 \
            return ga_cmk_##dt(x == 0 ? x : (RT)NAN, (RT)NAN);                         \
        }                                                                              \
        RT sy = sin##sfx(y), cy = cos##sfx(y);                                         \
        RT t = (RT)(sizeof(RT) == 4 ? 44 : 354);                                       \
        if (fabs##sfx(x) > t) {                                                        \
            RT e2t = exp##sfx(2 * t), rest = fabs##sfx(x) - t;                         \
            RT im = 4 * sy * cy / e2t;                                                 \
            im = rest > t ? im / e2t : im / exp##sfx(2 * rest);                        \
            return ga_cmk_##dt(copysign##sfx((RT)1, x), im);                           \
        }                                                                              \
        RT shx = sinh##sfx(x), chx = cosh##sfx(x);                                     \
        RT d = shx * shx + cy * cy;                                                    \
        return ga_cmk_##dt(shx * chx / d, sy * cy / d);                                \
    }                                                                                  \
    /* sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz) */                   \
    GA_HD static inline CT ga_csin_##dt(CT z)                                          \
    {                                                                                  \
        if (!ga_fisfinite##sfx(z.re) && ga_fisinf##sfx(z.im)) { /* the C library's sign */ \
            return ga_cmk_##dt((RT)NAN, (RT)INFINITY);                                 \
        }                                                                              \
        CT t = ga_csinh_##dt(ga_cmk_##dt(-z.im, z.re));                                \
        return ga_cmk_##dt(t.im, -t.re);                                               \
    }                                                                                  \
    GA_HD static inline CT ga_ccos_##dt(CT z)                                          \
    {                                                                                  \
        return ga_ccosh_##dt(ga_cmk_##dt(-z.im, z.re));                                \
    }                                                                                  \
    GA_HD static inline CT ga_ctan_##dt(CT z)                                          \
    {                                                                                  \
        CT t = ga_ctanh_##dt(ga_cmk_##dt(-z.im, z.re));                                \
        return ga_cmk_##dt(t.im, -t.re);                                               \
    }                                                                                  \
    /* log(2z) + i0 where z*z would overflow (|z| past 1e150, float 1e18): asinh,      \
     * acosh = log(2z) to working precision there */                                   \
    GA_HD static inline int ga_cbig_##dt(CT z)                                         \
    {                                                                                  \
        RT big = (RT)(sizeof(RT) == 4 ? 1e18 : 1e150);                                 \
        return fabs##sfx(z.re) > big || fabs##sfx(z.im) > big;                         \
    }                                                                                  \
    GA_HD static inline CT ga_clog2z_##dt(CT z)                                        \
    {                                                                                  \
        CT r = ga_clog_##dt(z);                                                        \
        r.re += (RT)0.69314718055994530942;                                            \
        return r;                                                                      \
    }                                                                                  \
    /* asinh z = log(z + sqrt(z^2 + 1)), on the right half plane (odd symmetry) */     \
    GA_HD static inline CT ga_casinh_##dt(CT z)                                        \
    {                                                                                  \
        RT x = z.re, y = z.im;                                                         \
        if (x != x) {                                                                  \
            if (y == 0) {                                                              \
                return ga_cmk_##dt((RT)NAN, y);                                        \
            }                                                                          \
            return ga_cmk_##dt(ga_fisinf##sfx(y) ? (RT)INFINITY : (RT)NAN, (RT)NAN);   \
        }                                                                              \
        if (ga_fisinf##sfx(x)) {                                                       \
            return ga_cmk_##dt(x, y != y                  ? (RT)NAN                    \
                                  : ga_fisfinite##sfx(y) ? copysign##sfx((RT)0, y)     \
                                                         : copysign##sfx((RT)0.78539816339744830962, y)); \
        }                                                                              \
        if (ga_fisinf##sfx(y)) {                                                       \
            return ga_cmk_##dt(copysign##sfx((RT)INFINITY, x),                         \
                               copysign##sfx((RT)1.57079632679489661923, y));          \
        }                                                                              \
        if (y != y) {                                                                  \
            return ga_cmk_##dt((RT)NAN, (RT)NAN);                                      \
        }                                                                              \
        /* the axes exactly (a zero part stays a signed zero, as in the C library) */  \
        if (y == 0) {                                                                  \
            return ga_cmk_##dt(asinh##sfx(x), y);                                      \
        }                                                                              \
        if (x == 0 && fabs##sfx(y) <= 1) {                                             \
            return ga_cmk_##dt(x, asin##sfx(y));                                       \
        }                                                                              \
        int neg = signbit(x) != 0;                                                     \
        if (neg) {                                                                     \
            z = ga_cmk_##dt(-x, -y);                                                   \
        }                                                                              \
        CT r;                                                                          \
        if (ga_cbig_##dt(z)) {                                                         \
            r = ga_clog2z_##dt(z);                                                     \
        }                                                                              \
        else {                                                                         \
            CT w = ga_cmul_##dt(z, z);                                                 \
            w.re += 1;                                                                 \
            r = ga_clog_##dt(ga_cadd_##dt(z, ga_csqrt_##dt(w)));                       \
        }                                                                              \
        return neg ? ga_cmk_##dt(-r.re, -r.im) : r;                                    \
    }                                                                                  \
    /* asin z = -i asinh(iz); acos z = pi/2 - asin z */                                \
    GA_HD static inline CT ga_casin_##dt(CT z)                                         \
    {                                                                                  \
        if (ga_fisinf##sfx(z.re) && z.im != z.im) { /* the C library's sign */         \
            return ga_cmk_##dt((RT)NAN, (RT)INFINITY);                                 \
        }                                                                              \
        CT t = ga_casinh_##dt(ga_cmk_##dt(-z.im, z.re));                               \
        return ga_cmk_##dt(t.im, -t.re);                                               \
    }                                                                                  \
    GA_HD static inline CT ga_cacos_##dt(CT z)                                         \
    {                                                                                  \
        CT t = ga_casin_##dt(z);                                                       \
        return ga_cmk_##dt((RT)1.57079632679489661923 - t.re, -t.im);                  \
    }                                                                                  \
    /* acosh z = log(z + sqrt(z + 1) sqrt(z - 1)) */                                   \
    GA_HD static inline CT ga_cacosh_##dt(CT z)                                        \
    {                                                                                  \
        RT x = z.re, y = z.im;                                                         \
        if (x != x) {                                                                  \
            return ga_cmk_##dt(ga_fisinf##sfx(y) ? (RT)INFINITY : (RT)NAN, (RT)NAN);   \
        }                                                                              \
        if (ga_fisinf##sfx(x)) {                                                       \
            if (y != y) {                                                              \
                return ga_cmk_##dt((RT)INFINITY, (RT)NAN);                             \
            }                                                                          \
            RT a = ga_fisfinite##sfx(y) ? (x > 0 ? (RT)0 : (RT)3.14159265358979323846) \
                                        : (x > 0 ? (RT)0.78539816339744830962          \
                                                 : (RT)2.35619449019234492885);        \
            return ga_cmk_##dt((RT)INFINITY, copysign##sfx(a, y));                     \
        }                                                                              \
        if (ga_fisinf##sfx(y)) {                                                       \
            return ga_cmk_##dt((RT)INFINITY, copysign##sfx((RT)1.57079632679489661923, y)); \
        }                                                                              \
        if (y != y) {                                                                  \
            return ga_cmk_##dt((RT)NAN, x == 0 ? (RT)1.57079632679489661923 : (RT)NAN); \
        }                                                                              \
        if (y == 0) { /* the real axis exactly */                                      \
            if (x >= 1) {                                                              \
                return ga_cmk_##dt(acosh##sfx(x), y);                                  \
            }                                                                          \
            if (x <= -1) {                                                             \
                return ga_cmk_##dt(acosh##sfx(-x), copysign##sfx((RT)3.14159265358979323846, y)); \
            }                                                                          \
            return ga_cmk_##dt((RT)0, copysign##sfx(acos##sfx(x), y));                 \
        }                                                                              \
        if (ga_cbig_##dt(z)) {                                                         \
            return ga_clog2z_##dt(z);                                                  \
        }                                                                              \
        CT p = ga_csqrt_##dt(ga_cmk_##dt(x + 1, y));                                   \
        CT m = ga_csqrt_##dt(ga_cmk_##dt(x - 1, y));                                   \
        return ga_clog_##dt(ga_cadd_##dt(z, ga_cmul_##dt(p, m)));                      \
    }                                                                                  \
    /* atanh z = (log(1 + z) - log(1 - z)) / 2; 1/z + i pi/2 where |z| is huge */      \
    GA_HD static inline CT ga_catanh_##dt(CT z)                                        \
    {                                                                                  \
        RT x = z.re, y = z.im;                                                         \
        RT hp = (RT)1.57079632679489661923;                                            \
        if (x != x) {                                                                  \
            return ga_fisinf##sfx(y) ? ga_cmk_##dt((RT)0, copysign##sfx(hp, y))        \
                                     : ga_cmk_##dt((RT)NAN, (RT)NAN);                  \
        }                                                                              \
        if (ga_fisinf##sfx(x) || ga_fisinf##sfx(y)) {                                  \
            return ga_cmk_##dt(copysign##sfx((RT)0, x), y != y ? (RT)NAN : copysign##sfx(hp, y)); \
        }                                                                              \
        if (y != y) {                                                                  \
            return ga_cmk_##dt(x == 0 ? x : (RT)NAN, (RT)NAN);                         \
        }                                                                              \
        if (ga_cbig_##dt(z)) {                                                         \
            CT r = ga_cdiv_##dt(ga_cmk_##dt((RT)1, (RT)0), z);                         \
            return ga_cmk_##dt(x == 0 ? x : r.re, copysign##sfx(hp, y));               \
        }                                                                              \
        if (y == 0 && fabs##sfx(x) <= 1) { /* the axes exactly */                      \
            return ga_cmk_##dt(atanh##sfx(x), y);                                      \
        }                                                                              \
        if (x == 0) {                                                                  \
            return ga_cmk_##dt(x, atan##sfx(y));                                       \
        }                                                                              \
        /* Re = log(|1+z|^2 / |1-z|^2) / 4 as log1p of a quotient (no cancellation near the \
         * imaginary axis, and +-0 stays +-0); Im = arg((1+z)(1-conj z)) / 2 */        \
        RT omx = 1 - x;                                                                \
        RT re = (RT)0.25 * log1p##sfx(4 * x / (omx * omx + y * y));                    \
        return ga_cmk_##dt(re, (RT)0.5 * atan2##sfx(2 * y, omx * (1 + x) - y * y));    \
    }                                                                                  \
    /* atan z = -i atanh(iz) */                                                        \
    GA_HD static inline CT ga_catan_##dt(CT z)                                         \
    {                                                                                  \
        if (ga_fisinf##sfx(z.re) && z.im != z.im) { /* the C library's sign */         \
            return ga_cmk_##dt(copysign##sfx((RT)1.57079632679489661923, z.re), (RT)0); \
        }                                                                              \
        CT t = ga_catanh_##dt(ga_cmk_##dt(-z.im, z.re));                               \
        return ga_cmk_##dt(t.im, -t.re);                                               \
    }                                                                                  \
    /* expm1: Re = expm1(x) cos y - 2 sin^2(y/2) avoids cancellation near 0 (NumPy's   \
     * formula). Annex G has no cexpm1; at a non-finite part or a zero argument the     \
     * array API standard's values are exp(z) - 1 from cexp's Annex G ones, where       \
     * NumPy's formula gives NaN + NaN j (inf + 0j) and -0 + 0j (-0 + 0j). */           \
    GA_HD static inline CT ga_cexpm1_##dt(CT z)                                        \
    {                                                                                  \
        if (!ga_fisfinite##sfx(z.re) || !ga_fisfinite##sfx(z.im) ||                    \
            (z.re == 0 && z.im == 0)) {                                                \
            CT e = ga_cexp_##dt(z);                                                    \
            return ga_cmk_##dt(e.re - 1, e.im);                                        \
        }                                                                              \
        RT s = sin##sfx(z.im * (RT)0.5);                                               \
        return ga_cmk_##dt(expm1##sfx(z.re) * cos##sfx(z.im) - 2 * s * s,              \
                           exp##sfx(z.re) * sin##sfx(z.im));                           \
    }                                                                                  \
    /* log1p: |1+z|^2 = 1 + (2x + x^2 + y^2) near 0; log(1 + z) (NumPy's formula) for  \
     * infinities, NaN and values whose square would overflow */                       \
    GA_HD static inline CT ga_clog1p_##dt(CT z)                                        \
    {                                                                                  \
        if (!ga_fisfinite##sfx(z.re) || !ga_fisfinite##sfx(z.im) || ga_cbig_##dt(z)) { \
            return ga_clog_##dt(ga_cmk_##dt(1 + z.re, z.im));                          \
        }                                                                              \
        RT t = 2 * z.re + z.re * z.re + z.im * z.im;                                   \
        return ga_cmk_##dt((RT)0.5 * log1p##sfx(t), atan2##sfx(z.im, 1 + z.re));       \
    }                                                                                  \
    GA_HD static inline CT ga_cscale_##dt(CT z, RT s)                                  \
    {                                                                                  \
        return ga_cmk_##dt(z.re * s, z.im * s);                                        \
    }                                                                                  \
    /* C's complex multiplication (Annex G.5.1): a product that comes out NaN + i NaN  \
     * while an operand is infinite is recomputed with the infinities as +-1 and the NaNs \
     * as 0, then scaled by infinity. The C library's cpow multiplies this way, so     \
     * pow(inf + nan j, w) is an infinity or zero there; NumPy's multiply does not. */ \
    GA_HD static inline CT ga_cmul_annexg_##dt(CT p, CT q)                             \
    {                                                                                  \
        RT a = p.re, b = p.im, c = q.re, d = q.im;                                     \
        RT ac = a * c, bd = b * d, ad = a * d, bc = b * c;                             \
        RT x = ac - bd, y = ad + bc;                                                   \
        if (x != x && y != y) {                                                        \
            int again = 0;                                                             \
            if (ga_fisinf##sfx(a) || ga_fisinf##sfx(b)) {                              \
                a = copysign##sfx(ga_fisinf##sfx(a) ? (RT)1 : (RT)0, a);               \
                b = copysign##sfx(ga_fisinf##sfx(b) ? (RT)1 : (RT)0, b);               \
                c = c != c ? copysign##sfx((RT)0, c) : c;                              \
                d = d != d ? copysign##sfx((RT)0, d) : d;                              \
                again = 1;                                                             \
            }                                                                          \
            if (ga_fisinf##sfx(c) || ga_fisinf##sfx(d)) {                              \
                c = copysign##sfx(ga_fisinf##sfx(c) ? (RT)1 : (RT)0, c);               \
                d = copysign##sfx(ga_fisinf##sfx(d) ? (RT)1 : (RT)0, d);               \
                a = a != a ? copysign##sfx((RT)0, a) : a;                              \
                b = b != b ? copysign##sfx((RT)0, b) : b;                              \
                again = 1;                                                             \
            }                                                                          \
            if (!again && (ga_fisinf##sfx(ac) || ga_fisinf##sfx(bd) || ga_fisinf##sfx(ad) || \
                           ga_fisinf##sfx(bc))) {                                      \
                a = a != a ? copysign##sfx((RT)0, a) : a;                              \
                b = b != b ? copysign##sfx((RT)0, b) : b;                              \
                c = c != c ? copysign##sfx((RT)0, c) : c;                              \
                d = d != d ? copysign##sfx((RT)0, d) : d;                              \
                again = 1;                                                             \
            }                                                                          \
            if (again) {                                                               \
                x = (RT)INFINITY * (a * c - b * d);                                    \
                y = (RT)INFINITY * (a * d + b * c);                                    \
            }                                                                          \
        }                                                                              \
        return ga_cmk_##dt(x, y);                                                      \
    }                                                                                  \
    /* NumPy's complex power: integer exponents below 100 in magnitude by repeated     \
     * squaring (1, 2 and 3 as plain products, so inf ** 1 is inf), else exp(w log z). */ \
    GA_HD static inline CT ga_cpow_##dt(CT z, CT w)                                    \
    {                                                                                  \
        if (w.re == 0 && w.im == 0) {                                                  \
            return ga_cmk_##dt((RT)1, (RT)0);                                          \
        }                                                                              \
        if (z.re == 0 && z.im == 0) { /* |0 ** w| = 0 ** Re w */                       \
            return w.re > 0 ? ga_cmk_##dt((RT)0, (RT)0) : ga_cmk_##dt((RT)NAN, (RT)NAN); \
        }                                                                              \
        if (w.im == 0 && w.re == floor##sfx(w.re) && fabs##sfx(w.re) < 100) {          \
            int n = (int)w.re, neg = n < 0;                                            \
            if (n == 1) {                                                              \
                return z;                                                              \
            }                                                                          \
            if (n == 2) {                                                              \
                return ga_cmul_##dt(z, z);                                             \
            }                                                                          \
            if (n == 3) {                                                              \
                return ga_cmul_##dt(ga_cmul_##dt(z, z), z);                            \
            }                                                                          \
            unsigned e = (unsigned)(neg ? -n : n);                                     \
            CT r = ga_cmk_##dt((RT)1, (RT)0), base = z;                                \
            while (e) {                                                                \
                if (e & 1u) {                                                          \
                    r = ga_cmul_##dt(r, base);                                         \
                }                                                                      \
                e >>= 1;                                                               \
                if (e) {                                                               \
                    base = ga_cmul_##dt(base, base);                                   \
                }                                                                      \
            }                                                                          \
            return neg ? ga_cdiv_##dt(ga_cmk_##dt((RT)1, (RT)0), r) : r;               \
        }                                                                              \
        return ga_cexp_##dt(ga_cmul_annexg_##dt(w, ga_clog_##dt(z)));                  \
    }                                                                                  \
    /* NumPy's reciprocal: 1 / z by Smith's scaling with the quotient's parts taken   \
     * directly (1/0 is NaN + NaN j there, not the division's inf) */                  \
    GA_HD static inline CT ga_crecip_##dt(CT z)                                        \
    {                                                                                  \
        if (fabs##sfx(z.im) <= fabs##sfx(z.re)) {                                      \
            RT r = z.im / z.re, d = z.re + z.im * r;                                   \
            return ga_cmk_##dt((RT)1 / d, -r / d);                                     \
        }                                                                              \
        RT r = z.re / z.im, d = z.re * r + z.im;                                       \
        return ga_cmk_##dt(r / d, (RT)-1 / d);                                         \
    }                                                                                  \
    /* NumPy's complex order: lexicographic; any NaN compares false */                 \
    GA_HD static inline int ga_cless_##dt(CT a, CT b)                                  \
    {                                                                                  \
        return a.re < b.re || (a.re == b.re && a.im < b.im);                           \
    }                                                                                  \
    GA_HD static inline int ga_cle_##dt(CT a, CT b)                                    \
    {                                                                                  \
        return a.re < b.re || (a.re == b.re && a.im <= b.im);                          \
    }                                                                                  \
    GA_HD static inline CT ga_cmax_##dt(CT a, CT b)                                    \
    {                                                                                  \
        if (ga_cisnan_##dt(a)) {                                                       \
            return a;                                                                  \
        }                                                                              \
        if (ga_cisnan_##dt(b)) {                                                       \
            return b;                                                                  \
        }                                                                              \
        return ga_cle_##dt(b, a) ? a : b;                                              \
    }                                                                                  \
    GA_HD static inline CT ga_cmin_##dt(CT a, CT b)                                    \
    {                                                                                  \
        if (ga_cisnan_##dt(a)) {                                                       \
            return a;                                                                  \
        }                                                                              \
        if (ga_cisnan_##dt(b)) {                                                       \
            return b;                                                                  \
        }                                                                              \
        return ga_cle_##dt(a, b) ? a : b;                                              \
    }                                                                                  \
    GA_HD static inline CT ga_csign_##dt(CT z)                                         \
    {                                                                                  \
        /* NumPy: two infinite parts are NaN, one wins over a NaN in the other       \
         * (sign(nan + inf j) is 1j), then NaN, then zero */                                            \
        if (ga_fisinf##sfx(z.re) && ga_fisinf##sfx(z.im)) {                            \
            return ga_cmk_##dt((RT)NAN, (RT)NAN);                                      \
        }                                                                              \
        if (ga_fisinf##sfx(z.re) || ga_fisinf##sfx(z.im)) {                            \
            RT re = ga_fisinf##sfx(z.re) ? copysign##sfx((RT)1, z.re) : (RT)0;         \
            RT im = ga_fisinf##sfx(z.im) ? copysign##sfx((RT)1, z.im) : (RT)0;         \
            return ga_cscale_##dt(ga_cmk_##dt(re, im), (RT)1 / hypot##sfx(re, im));    \
        }                                                                              \
        if (ga_cisnan_##dt(z)) {                                                       \
            return ga_cmk_##dt((RT)NAN, (RT)NAN);                                      \
        }                                                                              \
        if (z.re == 0 && z.im == 0) {                                                  \
            return ga_cmk_##dt((RT)0, (RT)0);                                          \
        }                                                                              \
        RT a = ga_cabs_##dt(z); /* each part over |z|, as NumPy: -0 + 1j keeps -0 */  \
        return ga_cmk_##dt(z.re / a, z.im / a);                                        \
    }

GA_K_CMATH(complex64, ga_c64, float, f)
GA_K_CMATH(complex128, ga_c128, double, )
#undef GA_K_CMATH

/* --- kernel definitions ----------------------------------------------------------- */

#define GA_K_SIG(op, dt)                                                               \
    GA_HD static inline void ga_k_##op##_##dt(char *out, const char *a, const char *b, \
                                              const char *c)
/* one input of dtype `dt`, compute type CT, result stored with ST */
#define GA_K_U(op, dt, CT, ST, expr)                                                   \
    GA_K_SIG(op, dt)                                                                   \
    {                                                                                  \
        (void)b;                                                                       \
        (void)c;                                                                       \
        CT x = ga_ld_##dt(a);                                                          \
        (void)x;                                                                       \
        ST(out, expr);                                                                 \
    }
#define GA_K_B(op, dt, CT, ST, expr)                                                   \
    GA_K_SIG(op, dt)                                                                   \
    {                                                                                  \
        (void)c;                                                                       \
        CT x = ga_ld_##dt(a);                                                          \
        CT y = ga_ld_##dt(b);                                                          \
        ST(out, expr);                                                                 \
    }
/* WHERE is the same for every dtype: copy the chosen element's bytes. Two copies, not
 * one from a chosen pointer: on a GPU the operands are registers, and a pointer to one
 * of two forces both into local memory (32 bytes of stack for complex128). */
#define GA_K_WHERE(dt, SIZE, ALIGN)                                                    \
    GA_K_SIG(where, dt)                                                                \
    {                                                                                  \
        if (a[0]) {                                                                    \
            memcpy(GA_K_ELEMENT(out, ALIGN), GA_K_ELEMENT(b, ALIGN), SIZE);            \
        }                                                                              \
        else {                                                                         \
            memcpy(GA_K_ELEMENT(out, ALIGN), GA_K_ELEMENT(c, ALIGN), SIZE);            \
        }                                                                              \
    }

/* ops every real dtype (bool, int, float) shares, with a comparison type CT */
#define GA_K_COMMON_REAL(dt, CT, ST)                                                   \
    GA_K_B(equal, dt, CT, ga_st_bool, x == y)                                          \
    GA_K_B(not_equal, dt, CT, ga_st_bool, x != y)                                      \
    GA_K_B(less, dt, CT, ga_st_bool, x < y)                                            \
    GA_K_B(less_equal, dt, CT, ga_st_bool, x <= y)                                     \
    GA_K_B(greater, dt, CT, ga_st_bool, x > y)                                         \
    GA_K_B(greater_equal, dt, CT, ga_st_bool, x >= y)                                  \
    GA_K_B(logical_and, dt, CT, ga_st_bool, x != 0 && y != 0)                          \
    GA_K_B(logical_or, dt, CT, ga_st_bool, x != 0 || y != 0)                           \
    GA_K_B(logical_xor, dt, CT, ga_st_bool, (x != 0) != (y != 0))                      \
    GA_K_U(logical_not, dt, CT, ga_st_bool, x == 0)

/* --- bool --- */
GA_K_COMMON_REAL(bool, int, ga_st_bool)
GA_K_U(abs, bool, int, ga_st_bool, x)
GA_K_U(bitwise_invert, bool, int, ga_st_bool, !x)
GA_K_U(ceil, bool, int, ga_st_bool, x)
GA_K_U(floor, bool, int, ga_st_bool, x)
GA_K_U(trunc, bool, int, ga_st_bool, x)
GA_K_U(signbit, bool, int, ga_st_bool, 0)
GA_K_U(isfinite, bool, int, ga_st_bool, 1)
GA_K_U(isinf, bool, int, ga_st_bool, 0)
GA_K_U(isnan, bool, int, ga_st_bool, 0)
GA_K_U(real, bool, int, ga_st_bool, x)
GA_K_U(imag, bool, int, ga_st_bool, 0)
GA_K_B(add, bool, int, ga_st_bool, x || y)
GA_K_B(multiply, bool, int, ga_st_bool, x && y)
GA_K_B(maximum, bool, int, ga_st_bool, x || y)
GA_K_B(minimum, bool, int, ga_st_bool, x && y)
GA_K_B(bitwise_and, bool, int, ga_st_bool, x & y)
GA_K_B(bitwise_or, bool, int, ga_st_bool, x | y)
GA_K_B(bitwise_xor, bool, int, ga_st_bool, x ^ y)
GA_K_WHERE(bool, 1, 1)
GA_K_SIG(clip, bool)
{
    int x = ga_ld_bool(a), lo = ga_ld_bool(b), hi = ga_ld_bool(c);
    x = x > lo ? x : lo;
    ga_st_bool(out, x < hi ? x : hi);
}

/* --- integers --- */
#define GA_K_INT(dt, T, WT, SIGNED)                                                    \
    GA_K_COMMON_REAL(dt, T, ga_st_##dt)                                                \
    GA_K_U(negative, dt, T, ga_st_##dt, (T)((WT)0 - (WT)x))                            \
    GA_K_U(positive, dt, T, ga_st_##dt, x)                                             \
    GA_K_U(abs, dt, T, ga_st_##dt, (T)(ga_isneg_##dt(x) ? (WT)0 - (WT)x : (WT)x))     \
    GA_K_U(bitwise_invert, dt, T, ga_st_##dt, (T)(~x))                                 \
    GA_K_U(square, dt, T, ga_st_##dt, (T)((WT)x * (WT)x))                              \
    GA_K_U(reciprocal, dt, T, ga_st_##dt, (T)(x == 0 ? 0 : (T)(1 / x)))                \
    GA_K_U(ceil, dt, T, ga_st_##dt, x)                                                 \
    GA_K_U(floor, dt, T, ga_st_##dt, x)                                                \
    GA_K_U(trunc, dt, T, ga_st_##dt, x)                                                \
    GA_K_U(round, dt, T, ga_st_##dt, x)                                                \
    GA_K_U(sign, dt, T, ga_st_##dt, (T)(x > 0 ? 1 : ga_isneg_##dt(x) ? -1 : 0))       \
    GA_K_U(signbit, dt, T, ga_st_bool, ga_isneg_##dt(x))                                \
    GA_K_U(isfinite, dt, T, ga_st_bool, 1)                                             \
    GA_K_U(isinf, dt, T, ga_st_bool, 0)                                                \
    GA_K_U(isnan, dt, T, ga_st_bool, 0)                                                \
    GA_K_U(conj, dt, T, ga_st_##dt, x)                                                 \
    GA_K_U(real, dt, T, ga_st_##dt, x)                                                 \
    GA_K_U(imag, dt, T, ga_st_##dt, (T)0)                                              \
    GA_K_B(add, dt, T, ga_st_##dt, (T)((WT)x + (WT)y))                                 \
    GA_K_B(subtract, dt, T, ga_st_##dt, (T)((WT)x - (WT)y))                            \
    GA_K_B(multiply, dt, T, ga_st_##dt, (T)((WT)x * (WT)y))                            \
    GA_K_B(floor_divide, dt, T, ga_st_##dt, ga_ifloordiv_##dt(x, y))                   \
    GA_K_B(remainder, dt, T, ga_st_##dt, ga_irem_##dt(x, y))                           \
    GA_K_B(pow, dt, T, ga_st_##dt, ga_ipow_##dt(x, y))                                 \
    GA_K_B(maximum, dt, T, ga_st_##dt, x >= y ? x : y)                                 \
    GA_K_B(minimum, dt, T, ga_st_##dt, x <= y ? x : y)                                 \
    GA_K_B(bitwise_and, dt, T, ga_st_##dt, (T)(x & y))                                 \
    GA_K_B(bitwise_or, dt, T, ga_st_##dt, (T)(x | y))                                  \
    GA_K_B(bitwise_xor, dt, T, ga_st_##dt, (T)(x ^ y))                                 \
    GA_K_B(bitwise_left_shift, dt, T, ga_st_##dt, ga_ishl_##dt(x, y))                  \
    GA_K_B(bitwise_right_shift, dt, T, ga_st_##dt, ga_ishr_##dt(x, y))                 \
    GA_K_WHERE(dt, sizeof(T), sizeof(T))                                               \
    GA_K_SIG(clip, dt)                                                                 \
    {                                                                                  \
        T x = ga_ld_##dt(a), lo = ga_ld_##dt(b), hi = ga_ld_##dt(c);                   \
        x = x > lo ? x : lo;                                                           \
        ga_st_##dt(out, x < hi ? x : hi);                                              \
    }

GA_K_INT(int8, int8_t, uint32_t, 1)
GA_K_INT(int16, int16_t, uint32_t, 1)
GA_K_INT(int32, int32_t, uint32_t, 1)
GA_K_INT(int64, int64_t, uint64_t, 1)
GA_K_INT(uint8, uint8_t, uint32_t, 0)
GA_K_INT(uint16, uint16_t, uint32_t, 0)
GA_K_INT(uint32, uint32_t, uint32_t, 0)
GA_K_INT(uint64, uint64_t, uint64_t, 0)
#undef GA_K_INT

/* --- floats (float16 computes in float and rounds once on the store) --- */
#define GA_K_FLOAT(dt, CT, sfx)                                                        \
    GA_K_COMMON_REAL(dt, CT, ga_st_##dt)                                               \
    GA_K_U(negative, dt, CT, ga_st_##dt, -x)                                           \
    GA_K_U(positive, dt, CT, ga_st_##dt, x)                                            \
    GA_K_U(abs, dt, CT, ga_st_##dt, fabs##sfx(x))                                      \
    GA_K_U(sqrt, dt, CT, ga_st_##dt, sqrt##sfx(x))                                     \
    GA_K_U(square, dt, CT, ga_st_##dt, x * x)                                          \
    GA_K_U(reciprocal, dt, CT, ga_st_##dt, (CT)1 / x)                                  \
    GA_K_U(exp, dt, CT, ga_st_##dt, exp##sfx(x))                                       \
    GA_K_U(expm1, dt, CT, ga_st_##dt, expm1##sfx(x))                                   \
    GA_K_U(exp2, dt, CT, ga_st_##dt, exp2##sfx(x))                                     \
    GA_K_U(log, dt, CT, ga_st_##dt, log##sfx(x))                                       \
    GA_K_U(log1p, dt, CT, ga_st_##dt, log1p##sfx(x))                                   \
    GA_K_U(log2, dt, CT, ga_st_##dt, log2##sfx(x))                                     \
    GA_K_U(log10, dt, CT, ga_st_##dt, log10##sfx(x))                                   \
    GA_K_U(sin, dt, CT, ga_st_##dt, sin##sfx(x))                                       \
    GA_K_U(cos, dt, CT, ga_st_##dt, cos##sfx(x))                                       \
    GA_K_U(tan, dt, CT, ga_st_##dt, tan##sfx(x))                                       \
    GA_K_U(asin, dt, CT, ga_st_##dt, asin##sfx(x))                                     \
    GA_K_U(acos, dt, CT, ga_st_##dt, acos##sfx(x))                                     \
    GA_K_U(atan, dt, CT, ga_st_##dt, atan##sfx(x))                                     \
    GA_K_U(sinh, dt, CT, ga_st_##dt, sinh##sfx(x))                                     \
    GA_K_U(cosh, dt, CT, ga_st_##dt, cosh##sfx(x))                                     \
    GA_K_U(tanh, dt, CT, ga_st_##dt, tanh##sfx(x))                                     \
    GA_K_U(asinh, dt, CT, ga_st_##dt, asinh##sfx(x))                                   \
    GA_K_U(acosh, dt, CT, ga_st_##dt, acosh##sfx(x))                                   \
    GA_K_U(atanh, dt, CT, ga_st_##dt, atanh##sfx(x))                                   \
    GA_K_U(ceil, dt, CT, ga_st_##dt, ceil##sfx(x))                                     \
    GA_K_U(floor, dt, CT, ga_st_##dt, floor##sfx(x))                                   \
    GA_K_U(trunc, dt, CT, ga_st_##dt, trunc##sfx(x))                                   \
    GA_K_U(round, dt, CT, ga_st_##dt, rint##sfx(x))                                    \
    GA_K_U(sign, dt, CT, ga_st_##dt, ga_fsign##sfx(x))                                 \
    GA_K_U(isfinite, dt, CT, ga_st_bool, ga_fisfinite##sfx(x))                         \
    GA_K_U(isinf, dt, CT, ga_st_bool, ga_fisinf##sfx(x))                               \
    GA_K_U(isnan, dt, CT, ga_st_bool, x != x)                                          \
    GA_K_U(conj, dt, CT, ga_st_##dt, x)                                                \
    GA_K_U(real, dt, CT, ga_st_##dt, x)                                                \
    GA_K_U(imag, dt, CT, ga_st_##dt, (CT)0)                                            \
    GA_K_B(add, dt, CT, ga_st_##dt, x + y)                                             \
    GA_K_B(subtract, dt, CT, ga_st_##dt, x - y)                                        \
    GA_K_B(multiply, dt, CT, ga_st_##dt, x * y)                                        \
    GA_K_B(divide, dt, CT, ga_st_##dt, x / y)                                          \
    GA_K_B(floor_divide, dt, CT, ga_st_##dt, ga_ffloordiv##sfx(x, y))                  \
    GA_K_B(remainder, dt, CT, ga_st_##dt, ga_frem##sfx(x, y))                          \
    GA_K_B(pow, dt, CT, ga_st_##dt, ga_fpow##sfx(x, y))                                \
    GA_K_B(atan2, dt, CT, ga_st_##dt, atan2##sfx(x, y))                                \
    GA_K_B(hypot, dt, CT, ga_st_##dt, hypot##sfx(x, y))                                \
    GA_K_B(logaddexp, dt, CT, ga_st_##dt, ga_flogaddexp##sfx(x, y))                    \
    GA_K_B(maximum, dt, CT, ga_st_##dt, ga_fmax##sfx(x, y))                            \
    GA_K_B(minimum, dt, CT, ga_st_##dt, ga_fmin##sfx(x, y))                            \
    GA_K_SIG(clip, dt)                                                                 \
    {                                                                                  \
        CT x = ga_ld_##dt(a), lo = ga_ld_##dt(b), hi = ga_ld_##dt(c);                  \
        ga_st_##dt(out, ga_fclip##sfx(x, lo, hi));                                     \
    }

GA_K_FLOAT(float16, float, f)
GA_K_FLOAT(float32, float, f)
GA_K_FLOAT(float64, double, )
#undef GA_K_FLOAT

/* sign-bit ops work on the bits, so they are exact for every float type */
GA_K_U(signbit, float16, float, ga_st_bool, (ga_ld_half_bits(a) & 0x8000u) != 0)
GA_K_SIG(copysign, float16)
{
    (void)c;
    uint16_t x = ga_ld_half_bits(a), y = ga_ld_half_bits(b);
    uint16_t r = (uint16_t)((x & 0x7fffu) | (y & 0x8000u));
    memcpy(GA_K_ELEMENT(out, 2), &r, 2);
}
GA_K_SIG(nextafter, float16)
{
    (void)c;
    uint16_t r = ga_nextafter_half(ga_ld_half_bits(a), ga_ld_half_bits(b));
    memcpy(GA_K_ELEMENT(out, 2), &r, 2);
}
GA_K_WHERE(float16, 2, 2)
GA_K_U(signbit, float32, float, ga_st_bool, copysignf(1.0f, x) < 0)
GA_K_B(copysign, float32, float, ga_st_float32, copysignf(x, y))
GA_K_B(nextafter, float32, float, ga_st_float32, nextafterf(x, y))
GA_K_WHERE(float32, 4, 4)
GA_K_U(signbit, float64, double, ga_st_bool, copysign(1.0, x) < 0)
GA_K_B(copysign, float64, double, ga_st_float64, copysign(x, y))
GA_K_B(nextafter, float64, double, ga_st_float64, nextafter(x, y))
GA_K_WHERE(float64, 8, 8)

/* --- complex --- */
#define GA_K_CPLX(dt, CT, RT, rdt, sfx)                                                \
    GA_K_U(negative, dt, CT, ga_st_##dt, ga_cmk_##dt(-x.re, -x.im))                    \
    GA_K_U(positive, dt, CT, ga_st_##dt, x)                                            \
    GA_K_U(abs, dt, CT, ga_st_##rdt, ga_cabs_##dt(x))                                  \
    GA_K_U(logical_not, dt, CT, ga_st_bool, !ga_cnz_##dt(x))                           \
    GA_K_U(sqrt, dt, CT, ga_st_##dt, ga_csqrt_##dt(x))                                 \
    GA_K_U(square, dt, CT, ga_st_##dt, ga_cmul_##dt(x, x))                             \
    GA_K_U(reciprocal, dt, CT, ga_st_##dt, ga_crecip_##dt(x))                           \
    GA_K_U(exp, dt, CT, ga_st_##dt, ga_cexp_##dt(x))                                   \
    GA_K_U(expm1, dt, CT, ga_st_##dt, ga_cexpm1_##dt(x))                               \
    GA_K_U(exp2, dt, CT, ga_st_##dt,                                                   \
           ga_cexp_##dt(ga_cscale_##dt(x, (RT)0.69314718055994530942)))                \
    GA_K_U(log, dt, CT, ga_st_##dt, ga_clog_##dt(x))                                   \
    GA_K_U(log1p, dt, CT, ga_st_##dt, ga_clog1p_##dt(x))                               \
    GA_K_U(log2, dt, CT, ga_st_##dt,                                                   \
           ga_cscale_##dt(ga_clog_##dt(x), (RT)1.44269504088896340736))                \
    GA_K_U(log10, dt, CT, ga_st_##dt,                                                  \
           ga_cscale_##dt(ga_clog_##dt(x), (RT)0.43429448190325182765))                \
    GA_K_U(sin, dt, CT, ga_st_##dt, ga_csin_##dt(x))                                   \
    GA_K_U(cos, dt, CT, ga_st_##dt, ga_ccos_##dt(x))                                   \
    GA_K_U(tan, dt, CT, ga_st_##dt, ga_ctan_##dt(x))                                   \
    GA_K_U(asin, dt, CT, ga_st_##dt, ga_casin_##dt(x))                                 \
    GA_K_U(acos, dt, CT, ga_st_##dt, ga_cacos_##dt(x))                                 \
    GA_K_U(atan, dt, CT, ga_st_##dt, ga_catan_##dt(x))                                 \
    GA_K_U(sinh, dt, CT, ga_st_##dt, ga_csinh_##dt(x))                                 \
    GA_K_U(cosh, dt, CT, ga_st_##dt, ga_ccosh_##dt(x))                                 \
    GA_K_U(tanh, dt, CT, ga_st_##dt, ga_ctanh_##dt(x))                                 \
    GA_K_U(asinh, dt, CT, ga_st_##dt, ga_casinh_##dt(x))                               \
    GA_K_U(acosh, dt, CT, ga_st_##dt, ga_cacosh_##dt(x))                               \
    GA_K_U(atanh, dt, CT, ga_st_##dt, ga_catanh_##dt(x))                               \
    GA_K_U(round, dt, CT, ga_st_##dt, ga_cmk_##dt(rint##sfx(x.re), rint##sfx(x.im)))   \
    GA_K_U(sign, dt, CT, ga_st_##dt, ga_csign_##dt(x))                                 \
    GA_K_U(isfinite, dt, CT, ga_st_bool,                                               \
           ga_fisfinite##sfx(x.re) && ga_fisfinite##sfx(x.im))                         \
    GA_K_U(isinf, dt, CT, ga_st_bool, ga_fisinf##sfx(x.re) || ga_fisinf##sfx(x.im))    \
    GA_K_U(isnan, dt, CT, ga_st_bool, ga_cisnan_##dt(x))                               \
    GA_K_U(conj, dt, CT, ga_st_##dt, ga_cmk_##dt(x.re, -x.im))                         \
    GA_K_U(real, dt, CT, ga_st_##rdt, x.re)                                            \
    GA_K_U(imag, dt, CT, ga_st_##rdt, x.im)                                            \
    GA_K_B(add, dt, CT, ga_st_##dt, ga_cadd_##dt(x, y))                                \
    GA_K_B(subtract, dt, CT, ga_st_##dt, ga_csub_##dt(x, y))                           \
    GA_K_B(multiply, dt, CT, ga_st_##dt, ga_cmul_##dt(x, y))                           \
    GA_K_B(divide, dt, CT, ga_st_##dt, ga_cdiv_##dt(x, y))                             \
    GA_K_B(pow, dt, CT, ga_st_##dt, ga_cpow_##dt(x, y))                                \
    GA_K_B(maximum, dt, CT, ga_st_##dt, ga_cmax_##dt(x, y))                            \
    GA_K_B(minimum, dt, CT, ga_st_##dt, ga_cmin_##dt(x, y))                            \
    GA_K_B(equal, dt, CT, ga_st_bool, x.re == y.re && x.im == y.im)                    \
    GA_K_B(not_equal, dt, CT, ga_st_bool, x.re != y.re || x.im != y.im)                \
    GA_K_B(less, dt, CT, ga_st_bool, ga_cless_##dt(x, y))                              \
    GA_K_B(less_equal, dt, CT, ga_st_bool, ga_cle_##dt(x, y))                          \
    GA_K_B(greater, dt, CT, ga_st_bool, ga_cless_##dt(y, x))                           \
    GA_K_B(greater_equal, dt, CT, ga_st_bool, ga_cle_##dt(y, x))                       \
    GA_K_B(logical_and, dt, CT, ga_st_bool, ga_cnz_##dt(x) && ga_cnz_##dt(y))          \
    GA_K_B(logical_or, dt, CT, ga_st_bool, ga_cnz_##dt(x) || ga_cnz_##dt(y))           \
    GA_K_B(logical_xor, dt, CT, ga_st_bool, ga_cnz_##dt(x) != ga_cnz_##dt(y))          \
    GA_K_WHERE(dt, sizeof(CT), sizeof(CT) / 2) /* complex parts are the unit */

GA_K_CPLX(complex64, ga_c64, float, float32, f)
GA_K_CPLX(complex128, ga_c128, double, float64, )
#undef GA_K_CPLX
#undef GA_K_COMMON_REAL
#undef GA_K_WHERE
#undef GA_K_B
#undef GA_K_U

/* --- casts -------------------------------------------------------------------------
 * Every source is read as one of four exact intermediates: int64 (bool and signed
 * ints), uint64 (unsigned ints), double (float16/32/64: exact), or a pair of doubles
 * (complex). Each target has one writer per intermediate, so an int64 -> float32
 * cast rounds once (not via double). */

/* float -> integer, the one rule of every path (astype, setitem from an array,
 * reductions and scans with an integer dtype=, on every device): NumPy's results on
 * x86, written out so every device gives them. C leaves a conversion of NaN or of a
 * value beyond the target's range undefined; NumPy gives what x86's truncating
 * conversion (cvttsd2si) gives, the "integer indefinite" INT_MIN of its 32- or
 * 64-bit form, and narrower targets keep the low bits of the 32-bit result:
 *   int64: truncate toward zero; NaN and out of range give INT64_MIN;
 *   int32: the same with INT32_MIN;
 *   int8, int16, uint8, uint16: the int32 result, wrapped (300.0 -> int8 is 44,
 *     -1.0 -> uint8 is 255, NaN and inf -> 0);
 *   uint32: the int64 result, wrapped (-1.0 -> 4294967295);
 *   uint64: values from 2^63 up convert as (v - 2^63) + 2^63, the rest as int64
 *     (the two-range sequence compilers emit: -1.0 -> 2^64 - 1, inf -> 0, NaN -> 2^63).
 * NumPy's own SIMD loops differ from this for uint32 on some inputs (a NaN in a long
 * array); the scalar results are the ones kept. The bounds compare as doubles
 * (both are exact powers of two). */
GA_HD static inline int64_t
ga_f64_cvt_i64(double v)
{
    /* selects, not a branch (a GPU scan's loads were moved into each conversion's
     * branch, one load in flight); the C conversion only ever sees a value in range */
    const int ok = v >= -9223372036854775808.0 && v < 9223372036854775808.0;
    const int64_t r = (int64_t)(ok ? v : 0.0);
    return ok ? r : INT64_MIN;
}
GA_HD static inline int32_t
ga_f64_cvt_i32(double v)
{
    const int ok = v > -2147483649.0 && v < 2147483648.0;
    const int32_t r = (int32_t)(ok ? v : 0.0);
    return ok ? r : INT32_MIN;
}
#define GA_K_F2I(dt, T, CVT, UT)                                                       \
    GA_HD static inline T ga_f64_to_##dt(double v)                                     \
    {                                                                                  \
        return (T)(UT)CVT(v);                                                          \
    }
GA_K_F2I(int8, int8_t, ga_f64_cvt_i32, uint32_t)
GA_K_F2I(int16, int16_t, ga_f64_cvt_i32, uint32_t)
GA_K_F2I(int32, int32_t, ga_f64_cvt_i32, uint32_t)
GA_K_F2I(int64, int64_t, ga_f64_cvt_i64, uint64_t)
GA_K_F2I(uint8, uint8_t, ga_f64_cvt_i32, uint32_t)
GA_K_F2I(uint16, uint16_t, ga_f64_cvt_i32, uint32_t)
GA_K_F2I(uint32, uint32_t, ga_f64_cvt_i64, uint64_t)
#undef GA_K_F2I
GA_HD static inline uint64_t
ga_f64_to_uint64(double v)
{
    if (v >= 9223372036854775808.0) {
        return (uint64_t)ga_f64_cvt_i64(v - 9223372036854775808.0) ^ (UINT64_C(1) << 63);
    }
    return (uint64_t)ga_f64_cvt_i64(v);
}

#define GA_K_W_INT(dt, T)                                                              \
    GA_HD static inline void ga_w_i_##dt(char *o, int64_t v)                           \
    {                                                                                  \
        ga_st_##dt(o, (T)v);                                                           \
    }                                                                                  \
    GA_HD static inline void ga_w_u_##dt(char *o, uint64_t v)                          \
    {                                                                                  \
        ga_st_##dt(o, (T)v);                                                           \
    }                                                                                  \
    GA_HD static inline void ga_w_d_##dt(char *o, double v)                            \
    {                                                                                  \
        ga_st_##dt(o, ga_f64_to_##dt(v));                                              \
    }                                                                                  \
    GA_HD static inline void ga_w_c_##dt(char *o, double re, double im)                \
    {                                                                                  \
        (void)im;                                                                      \
        ga_w_d_##dt(o, re);                                                            \
    }
GA_K_W_INT(int8, int8_t)
GA_K_W_INT(int16, int16_t)
GA_K_W_INT(int32, int32_t)
GA_K_W_INT(int64, int64_t)
GA_K_W_INT(uint8, uint8_t)
GA_K_W_INT(uint16, uint16_t)
GA_K_W_INT(uint32, uint32_t)
GA_K_W_INT(uint64, uint64_t)
#undef GA_K_W_INT

GA_HD static inline void
ga_w_i_bool(char *o, int64_t v)
{
    ga_st_bool(o, v != 0);
}
GA_HD static inline void
ga_w_u_bool(char *o, uint64_t v)
{
    ga_st_bool(o, v != 0);
}
GA_HD static inline void
ga_w_d_bool(char *o, double v)
{
    ga_st_bool(o, v != 0);
}
GA_HD static inline void
ga_w_c_bool(char *o, double re, double im)
{
    ga_st_bool(o, re != 0 || im != 0);
}

#define GA_K_W_FLT(dt, T, FROM_D)                                                      \
    GA_HD static inline void ga_w_i_##dt(char *o, int64_t v)                           \
    {                                                                                  \
        ga_st_##dt(o, (T)v);                                                           \
    }                                                                                  \
    GA_HD static inline void ga_w_u_##dt(char *o, uint64_t v)                          \
    {                                                                                  \
        ga_st_##dt(o, (T)v);                                                           \
    }                                                                                  \
    GA_HD static inline void ga_w_d_##dt(char *o, double v)                            \
    {                                                                                  \
        FROM_D;                                                                        \
    }                                                                                  \
    GA_HD static inline void ga_w_c_##dt(char *o, double re, double im)                \
    {                                                                                  \
        (void)im;                                                                      \
        ga_w_d_##dt(o, re);                                                            \
    }
GA_K_W_FLT(float32, float, ga_st_float32(o, (float)v))
GA_K_W_FLT(float64, double, ga_st_float64(o, v))
#undef GA_K_W_FLT
/* integers reach float16 through float: every integer float16 can hold below its
 * overflow threshold is exact in float, so this rounds once */
GA_HD static inline void
ga_w_i_float16(char *o, int64_t v)
{
    ga_st_float16(o, (float)v);
}
GA_HD static inline void
ga_w_u_float16(char *o, uint64_t v)
{
    ga_st_float16(o, (float)v);
}
GA_HD static inline void
ga_w_d_float16(char *o, double v)
{
    uint16_t h = ga_double_to_half(v);
    memcpy(GA_K_ELEMENT(o, 2), &h, 2);
}
GA_HD static inline void
ga_w_c_float16(char *o, double re, double im)
{
    (void)im;
    ga_w_d_float16(o, re);
}

#define GA_K_W_CPLX(dt, CT, RT)                                                        \
    GA_HD static inline void ga_w_i_##dt(char *o, int64_t v)                           \
    {                                                                                  \
        ga_st_##dt(o, ga_cmk_##dt((RT)v, (RT)0));                                      \
    }                                                                                  \
    GA_HD static inline void ga_w_u_##dt(char *o, uint64_t v)                          \
    {                                                                                  \
        ga_st_##dt(o, ga_cmk_##dt((RT)v, (RT)0));                                      \
    }                                                                                  \
    GA_HD static inline void ga_w_d_##dt(char *o, double v)                            \
    {                                                                                  \
        ga_st_##dt(o, ga_cmk_##dt((RT)v, (RT)0));                                      \
    }                                                                                  \
    GA_HD static inline void ga_w_c_##dt(char *o, double re, double im)                \
    {                                                                                  \
        ga_st_##dt(o, ga_cmk_##dt((RT)re, (RT)im));                                    \
    }
GA_K_W_CPLX(complex64, ga_c64, float)
GA_K_W_CPLX(complex128, ga_c128, double)
#undef GA_K_W_CPLX

/* which intermediate each source dtype reads as */
#define GA_K_READ_bool(dt, in, to, o) ga_w_i_##to(o, (int64_t)ga_ld_bool(in))
#define GA_K_READ_int8(dt, in, to, o) ga_w_i_##to(o, (int64_t)ga_ld_int8(in))
#define GA_K_READ_int16(dt, in, to, o) ga_w_i_##to(o, (int64_t)ga_ld_int16(in))
#define GA_K_READ_int32(dt, in, to, o) ga_w_i_##to(o, (int64_t)ga_ld_int32(in))
#define GA_K_READ_int64(dt, in, to, o) ga_w_i_##to(o, ga_ld_int64(in))
#define GA_K_READ_uint8(dt, in, to, o) ga_w_u_##to(o, (uint64_t)ga_ld_uint8(in))
#define GA_K_READ_uint16(dt, in, to, o) ga_w_u_##to(o, (uint64_t)ga_ld_uint16(in))
#define GA_K_READ_uint32(dt, in, to, o) ga_w_u_##to(o, (uint64_t)ga_ld_uint32(in))
#define GA_K_READ_uint64(dt, in, to, o) ga_w_u_##to(o, ga_ld_uint64(in))
#define GA_K_READ_float16(dt, in, to, o) ga_w_d_##to(o, (double)ga_ld_float16(in))
#define GA_K_READ_float32(dt, in, to, o) ga_w_d_##to(o, (double)ga_ld_float32(in))
#define GA_K_READ_float64(dt, in, to, o) ga_w_d_##to(o, ga_ld_float64(in))
#define GA_K_READ_complex64(dt, in, to, o)                                             \
    do {                                                                               \
        ga_c64 z_ = ga_ld_complex64(in);                                               \
        ga_w_c_##to(o, (double)z_.re, (double)z_.im);                                  \
    } while (0)
#define GA_K_READ_complex128(dt, in, to, o)                                            \
    do {                                                                               \
        ga_c128 z_ = ga_ld_complex128(in);                                             \
        ga_w_c_##to(o, z_.re, z_.im);                                                  \
    } while (0)

/* GA_CAST_LIST(X): X(GA_FROM, from, GA_TO, to) for all 14 x 14 pairs */
#define GA_CAST_TO_ALL(X, F, f)                                                        \
    X(F, f, GA_BOOL, bool)                                                             \
    X(F, f, GA_INT8, int8)                                                             \
    X(F, f, GA_INT16, int16)                                                           \
    X(F, f, GA_INT32, int32)                                                           \
    X(F, f, GA_INT64, int64)                                                           \
    X(F, f, GA_UINT8, uint8)                                                           \
    X(F, f, GA_UINT16, uint16)                                                         \
    X(F, f, GA_UINT32, uint32)                                                         \
    X(F, f, GA_UINT64, uint64)                                                         \
    X(F, f, GA_FLOAT16, float16)                                                       \
    X(F, f, GA_FLOAT32, float32)                                                       \
    X(F, f, GA_FLOAT64, float64)                                                       \
    X(F, f, GA_COMPLEX64, complex64)                                                   \
    X(F, f, GA_COMPLEX128, complex128)
#define GA_CAST_LIST(X)                                                                \
    GA_CAST_TO_ALL(X, GA_BOOL, bool)                                                   \
    GA_CAST_TO_ALL(X, GA_INT8, int8)                                                   \
    GA_CAST_TO_ALL(X, GA_INT16, int16)                                                 \
    GA_CAST_TO_ALL(X, GA_INT32, int32)                                                 \
    GA_CAST_TO_ALL(X, GA_INT64, int64)                                                 \
    GA_CAST_TO_ALL(X, GA_UINT8, uint8)                                                 \
    GA_CAST_TO_ALL(X, GA_UINT16, uint16)                                               \
    GA_CAST_TO_ALL(X, GA_UINT32, uint32)                                               \
    GA_CAST_TO_ALL(X, GA_UINT64, uint64)                                               \
    GA_CAST_TO_ALL(X, GA_FLOAT16, float16)                                             \
    GA_CAST_TO_ALL(X, GA_FLOAT32, float32)                                             \
    GA_CAST_TO_ALL(X, GA_FLOAT64, float64)                                             \
    GA_CAST_TO_ALL(X, GA_COMPLEX64, complex64)                                         \
    GA_CAST_TO_ALL(X, GA_COMPLEX128, complex128)

#define GA_K_DEF_CAST(F, from, T, to)                                                  \
    GA_HD static inline void ga_k_cast_##from##_##to(char *out, const char *in)        \
    {                                                                                  \
        GA_K_READ_##from(from, in, to, out);                                           \
    }
GA_CAST_LIST(GA_K_DEF_CAST)
#undef GA_K_DEF_CAST

/* gpuarr.special's kernels (their own header: the family is as long as this file) */
#include "ga_special_kernels.h"

/* --- the list of (op, loop dtype) kernels ------------------------------------------
 * X(GA_OP_ENUM, opname, GA_DTYPE_ENUM, dtypename). Groups of dtypes: */
#define GA_KL_BOOL(X, E, o) X(E, o, GA_BOOL, bool)
#define GA_KL_INTS(X, E, o)                                                            \
    X(E, o, GA_INT8, int8)                                                             \
    X(E, o, GA_INT16, int16)                                                           \
    X(E, o, GA_INT32, int32)                                                           \
    X(E, o, GA_INT64, int64)                                                           \
    X(E, o, GA_UINT8, uint8)                                                           \
    X(E, o, GA_UINT16, uint16)                                                         \
    X(E, o, GA_UINT32, uint32)                                                         \
    X(E, o, GA_UINT64, uint64)
#define GA_KL_FLOATS(X, E, o)                                                          \
    X(E, o, GA_FLOAT16, float16)                                                       \
    X(E, o, GA_FLOAT32, float32)                                                       \
    X(E, o, GA_FLOAT64, float64)
#define GA_KL_CPLX(X, E, o)                                                            \
    X(E, o, GA_COMPLEX64, complex64)                                                   \
    X(E, o, GA_COMPLEX128, complex128)
#define GA_KL_INEXACT(X, E, o) GA_KL_FLOATS(X, E, o) GA_KL_CPLX(X, E, o)
#define GA_KL_REAL(X, E, o) GA_KL_INTS(X, E, o) GA_KL_FLOATS(X, E, o)
#define GA_KL_NUMERIC(X, E, o) GA_KL_REAL(X, E, o) GA_KL_CPLX(X, E, o)
#define GA_KL_ALL(X, E, o) GA_KL_BOOL(X, E, o) GA_KL_NUMERIC(X, E, o)
#define GA_KL_BOOLINT(X, E, o) GA_KL_BOOL(X, E, o) GA_KL_INTS(X, E, o)
#define GA_KL_BOOLREAL(X, E, o) GA_KL_BOOL(X, E, o) GA_KL_REAL(X, E, o)

/* Which loop dtypes each op has. The core's type resolution (ga_elementwise.c) maps
 * every input dtype NumPy accepts onto one of these (e.g. sqrt of int16 -> float32,
 * divide of ints -> float64, floor_divide of bool -> int8). */
#define GA_KERNEL_LIST(X)                                                              \
    GA_KL_NUMERIC(X, GA_OP_NEGATIVE, negative)                                         \
    GA_KL_NUMERIC(X, GA_OP_POSITIVE, positive)                                         \
    GA_KL_ALL(X, GA_OP_ABS, abs)                                                       \
    GA_KL_BOOLINT(X, GA_OP_BITWISE_INVERT, bitwise_invert)                             \
    GA_KL_ALL(X, GA_OP_LOGICAL_NOT, logical_not)                                       \
    GA_KL_INEXACT(X, GA_OP_SQRT, sqrt)                                                 \
    GA_KL_NUMERIC(X, GA_OP_SQUARE, square)                                             \
    GA_KL_NUMERIC(X, GA_OP_RECIPROCAL, reciprocal)                                     \
    GA_KL_INEXACT(X, GA_OP_EXP, exp)                                                   \
    GA_KL_INEXACT(X, GA_OP_EXPM1, expm1)                                               \
    GA_KL_INEXACT(X, GA_OP_EXP2, exp2)                                                 \
    GA_KL_INEXACT(X, GA_OP_LOG, log)                                                   \
    GA_KL_INEXACT(X, GA_OP_LOG1P, log1p)                                               \
    GA_KL_INEXACT(X, GA_OP_LOG2, log2)                                                 \
    GA_KL_INEXACT(X, GA_OP_LOG10, log10)                                               \
    GA_KL_INEXACT(X, GA_OP_SIN, sin)                                                   \
    GA_KL_INEXACT(X, GA_OP_COS, cos)                                                   \
    GA_KL_INEXACT(X, GA_OP_TAN, tan)                                                   \
    GA_KL_INEXACT(X, GA_OP_ASIN, asin)                                                 \
    GA_KL_INEXACT(X, GA_OP_ACOS, acos)                                                 \
    GA_KL_INEXACT(X, GA_OP_ATAN, atan)                                                 \
    GA_KL_INEXACT(X, GA_OP_SINH, sinh)                                                 \
    GA_KL_INEXACT(X, GA_OP_COSH, cosh)                                                 \
    GA_KL_INEXACT(X, GA_OP_TANH, tanh)                                                 \
    GA_KL_INEXACT(X, GA_OP_ASINH, asinh)                                               \
    GA_KL_INEXACT(X, GA_OP_ACOSH, acosh)                                               \
    GA_KL_INEXACT(X, GA_OP_ATANH, atanh)                                               \
    GA_KL_BOOLREAL(X, GA_OP_CEIL, ceil)                                                \
    GA_KL_BOOLREAL(X, GA_OP_FLOOR, floor)                                              \
    GA_KL_BOOLREAL(X, GA_OP_TRUNC, trunc)                                              \
    GA_KL_NUMERIC(X, GA_OP_ROUND, round)                                               \
    GA_KL_NUMERIC(X, GA_OP_SIGN, sign)                                                 \
    GA_KL_BOOLREAL(X, GA_OP_SIGNBIT, signbit)                                          \
    GA_KL_ALL(X, GA_OP_ISFINITE, isfinite)                                             \
    GA_KL_ALL(X, GA_OP_ISINF, isinf)                                                   \
    GA_KL_ALL(X, GA_OP_ISNAN, isnan)                                                   \
    GA_KL_NUMERIC(X, GA_OP_CONJ, conj)                                                 \
    GA_KL_ALL(X, GA_OP_REAL, real)                                                     \
    GA_KL_ALL(X, GA_OP_IMAG, imag)                                                     \
    GA_KL_ALL(X, GA_OP_ADD, add)                                                       \
    GA_KL_NUMERIC(X, GA_OP_SUBTRACT, subtract)                                         \
    GA_KL_ALL(X, GA_OP_MULTIPLY, multiply)                                             \
    GA_KL_INEXACT(X, GA_OP_DIVIDE, divide)                                             \
    GA_KL_REAL(X, GA_OP_FLOOR_DIVIDE, floor_divide)                                    \
    GA_KL_REAL(X, GA_OP_REMAINDER, remainder)                                          \
    GA_KL_NUMERIC(X, GA_OP_POW, pow)                                                   \
    GA_KL_FLOATS(X, GA_OP_ATAN2, atan2)                                                \
    GA_KL_FLOATS(X, GA_OP_HYPOT, hypot)                                                \
    GA_KL_FLOATS(X, GA_OP_COPYSIGN, copysign)                                          \
    GA_KL_FLOATS(X, GA_OP_NEXTAFTER, nextafter)                                        \
    GA_KL_FLOATS(X, GA_OP_LOGADDEXP, logaddexp)                                        \
    GA_KL_ALL(X, GA_OP_MAXIMUM, maximum)                                               \
    GA_KL_ALL(X, GA_OP_MINIMUM, minimum)                                               \
    GA_KL_ALL(X, GA_OP_EQUAL, equal)                                                   \
    GA_KL_ALL(X, GA_OP_NOT_EQUAL, not_equal)                                           \
    GA_KL_ALL(X, GA_OP_LESS, less)                                                     \
    GA_KL_ALL(X, GA_OP_LESS_EQUAL, less_equal)                                         \
    GA_KL_ALL(X, GA_OP_GREATER, greater)                                               \
    GA_KL_ALL(X, GA_OP_GREATER_EQUAL, greater_equal)                                   \
    GA_KL_ALL(X, GA_OP_LOGICAL_AND, logical_and)                                       \
    GA_KL_ALL(X, GA_OP_LOGICAL_OR, logical_or)                                         \
    GA_KL_ALL(X, GA_OP_LOGICAL_XOR, logical_xor)                                       \
    GA_KL_BOOLINT(X, GA_OP_BITWISE_AND, bitwise_and)                                   \
    GA_KL_BOOLINT(X, GA_OP_BITWISE_OR, bitwise_or)                                     \
    GA_KL_BOOLINT(X, GA_OP_BITWISE_XOR, bitwise_xor)                                   \
    GA_KL_INTS(X, GA_OP_LEFT_SHIFT, bitwise_left_shift)                                \
    GA_KL_INTS(X, GA_OP_RIGHT_SHIFT, bitwise_right_shift)                              \
    GA_KL_ALL(X, GA_OP_WHERE, where)                                                   \
    GA_KL_BOOLREAL(X, GA_OP_CLIP, clip)                                                \
    GA_SPECIAL_KERNEL_LIST(X)

#endif
