/* ga_cuda_emu_math.h: the emulated device's transcendental functions.
 *
 * Included at the end of ga_cuda_emu.h (emulated plugin only). A GPU's sinf is not the
 * host's sinf: the CUDA C++ Programming Guide ("Mathematical Functions" appendix, the
 * single- and double-precision tables) bounds each function's error in ulps against
 * the correctly rounded result, and the device's results differ from glibc's within
 * those bounds. If the emulator ran host libm, a test demanding bit-identical floats
 * across devices would pass here and fail on the first GPU. So every transcendental
 * function the device code calls returns the correctly rounded result moved by a
 * deterministic 0..k ulps, k the Guide's bound for that function:
 *   - the reference is computed in a wider type (float functions in double, double
 *     functions in long double) and rounded once, so it is the correctly rounded
 *     value; when the wide value lies within 1/64 ulp of a rounding midpoint that
 *     rounding may be wrong by one ulp, and the move is then at most k-1 ulps (so
 *     the result never leaves the bound). Without a wider long double (some
 *     platforms), double functions keep host math;
 *   - the move (-k..k steps of nextafter) comes from a hash of the argument bits and
 *     the function, so the same input always gives the same output, as on a GPU;
 *   - left exact: NaN, infinities, zeros, any result the wide reference says is
 *     exactly representable (exp(0)=1, log(1)=0, cos(0)=1, pow(2,3)=8, hypot(3,4)=5:
 *     CUDA returns these exactly), atan2 on an axis (+-0, +-pi/2, +-pi, documented);
 *   - a move never crosses zero, never overflows to infinity and never leaves the
 *     function's range (|sin|, |cos|, |tanh| <= 1);
 *   - correctly rounded operations stay exact: + - * /, sqrt (-prec-div and
 *     -prec-sqrt are nvcc's defaults), fmod, floor/ceil/trunc/rint, fabs, copysign.
 * The kernels' source is unchanged: macros rename the calls (expf -> ga_emu_expf) for
 * the rest of each emulated translation unit, after <cmath> has been included, and
 * std:: gets the same names so a std::exp(x) in a later header still compiles.
 */
#ifndef GA_CUDA_EMU_MATH_H
#define GA_CUDA_EMU_MATH_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cmath>
#include <limits>

/* splitmix64's finaliser: every input bit moves every output bit */
static inline uint64_t
ga_emu_math_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t
ga_emu_math_bits(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof(b));
    return b;
}

static inline uint64_t
ga_emu_math_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof(b));
    return b;
}

/* The function's id and its argument bits, mixed: a different move per function. */
template <typename T>
static inline uint64_t
ga_emu_math_hash(unsigned id, T x, T y)
{
    uint64_t h = ga_emu_math_mix(0x6761656d75ULL + id);
    h = ga_emu_math_mix(h ^ ga_emu_math_bits(x));
    return ga_emu_math_mix(h ^ ga_emu_math_bits(y));
}

/* Round the wide reference `w` to T and move it by up to `k` ulps (see the header).
 * `lim` bounds the result's magnitude (the function's range). */
template <typename T, typename W>
static inline T
ga_emu_math_device(W w, unsigned k, uint64_t h, T lim)
{
    T c = (T)w;
    if (!std::isfinite(c) || c == 0 || (W)c == w || k == 0) {
        return c;
    }
    /* distance from c to w in ulps of c on w's side: at most 1/2 since c = round(w) */
    T side = std::nextafter(c, w > (W)c ? std::numeric_limits<T>::infinity()
                                        : -std::numeric_limits<T>::infinity());
    W frac = std::fabs(w - (W)c) / std::fabs((W)side - (W)c);
    if (frac > (W)0.5 - (W)1 / 64) {
        k -= 1; /* c may be the other neighbour of the exact value */
    }
    int steps = (int)(h % (2 * k + 1)) - (int)k;
    T dir = steps > 0 ? std::numeric_limits<T>::infinity()
                      : -std::numeric_limits<T>::infinity();
    T r = c;
    for (int i = 0; i < std::abs(steps); i++) {
        T n = std::nextafter(r, dir);
        if (!std::isfinite(n) || n == 0 || std::signbit(n) != std::signbit(c) ||
            std::fabs(n) > lim) {
            break;
        }
        r = n;
    }
    return r;
}

#if LDBL_MANT_DIG > DBL_MANT_DIG
#define GA_EMU_MATH_WIDE_DOUBLE 1
#else
#define GA_EMU_MATH_WIDE_DOUBLE 0
#endif

/* One unary function: name, id, the Guide's bound for float and for double, the range
 * limit. The float overload of the unsuffixed name is C++'s std::name(float). */
#define GA_EMU_MATH1(name, id, kf, kd, lim)                                            \
    static inline float ga_emu_##name##f(float x)                                      \
    {                                                                                  \
        return ga_emu_math_device<float, double>(                                      \
            ::name((double)x), kf, ga_emu_math_hash(id, x, 0.0f), (float)(lim));       \
    }                                                                                  \
    static inline double ga_emu_##name(double x)                                       \
    {                                                                                  \
        if (!GA_EMU_MATH_WIDE_DOUBLE) {                                                \
            return ::name(x);                                                          \
        }                                                                              \
        return ga_emu_math_device<double, long double>(::name##l((long double)x), kd,  \
                                                       ga_emu_math_hash(id, x, 0.0),   \
                                                       (double)(lim));                 \
    }                                                                                  \
    static inline float ga_emu_##name(float x)                                         \
    {                                                                                  \
        return ga_emu_##name##f(x);                                                    \
    }

#define GA_EMU_MATH2(name, id, kf, kd)                                                 \
    static inline float ga_emu_##name##f(float x, float y)                             \
    {                                                                                  \
        return ga_emu_math_device<float, double>(::name((double)x, (double)y), kf,     \
                                                 ga_emu_math_hash(id, x, y),           \
                                                 (float)INFINITY);                     \
    }                                                                                  \
    static inline double ga_emu_##name(double x, double y)                             \
    {                                                                                  \
        if (!GA_EMU_MATH_WIDE_DOUBLE) {                                                \
            return ::name(x, y);                                                       \
        }                                                                              \
        return ga_emu_math_device<double, long double>(                                \
            ::name##l((long double)x, (long double)y), kd, ga_emu_math_hash(id, x, y), \
            (double)INFINITY);                                                         \
    }                                                                                  \
    static inline float ga_emu_##name(float x, float y)                                \
    {                                                                                  \
        return ga_emu_##name##f(x, y);                                                 \
    }

/* Maximum ulp errors from the CUDA C++ Programming Guide's tables (single, double). */
GA_EMU_MATH1(exp, 1, 2, 1, INFINITY)
GA_EMU_MATH1(exp2, 2, 2, 1, INFINITY)
GA_EMU_MATH1(expm1, 3, 1, 1, INFINITY)
GA_EMU_MATH1(log, 4, 1, 1, INFINITY)
GA_EMU_MATH1(log2, 5, 1, 1, INFINITY)
GA_EMU_MATH1(log10, 6, 2, 1, INFINITY)
GA_EMU_MATH1(log1p, 7, 1, 1, INFINITY)
GA_EMU_MATH1(sin, 8, 2, 2, 1)
GA_EMU_MATH1(cos, 9, 2, 2, 1)
GA_EMU_MATH1(tan, 10, 4, 2, INFINITY)
GA_EMU_MATH1(asin, 11, 2, 2, INFINITY)
GA_EMU_MATH1(acos, 12, 2, 2, INFINITY)
GA_EMU_MATH1(atan, 13, 2, 2, INFINITY)
GA_EMU_MATH1(sinh, 14, 3, 2, INFINITY)
GA_EMU_MATH1(cosh, 15, 2, 1, INFINITY)
GA_EMU_MATH1(tanh, 16, 2, 1, 1)
GA_EMU_MATH1(asinh, 17, 3, 3, INFINITY)
GA_EMU_MATH1(acosh, 18, 4, 3, INFINITY)
GA_EMU_MATH1(atanh, 19, 3, 2, INFINITY)
GA_EMU_MATH1(cbrt, 20, 1, 1, INFINITY)
GA_EMU_MATH2(pow, 21, 4, 2)
GA_EMU_MATH2(hypot, 22, 3, 2)
#undef GA_EMU_MATH1
#undef GA_EMU_MATH2

/* atan2 on an axis returns +-0, +-pi/2 or +-pi as documented (rounded once, as the
 * host does); elsewhere 3 ulps (float) and 2 (double). */
static inline float
ga_emu_atan2f(float y, float x)
{
    if (y == 0 || x == 0) {
        return ::atan2f(y, x);
    }
    return ga_emu_math_device<float, double>(
        ::atan2((double)y, (double)x), 3, ga_emu_math_hash(23, y, x), (float)INFINITY);
}
static inline double
ga_emu_atan2(double y, double x)
{
    if (!GA_EMU_MATH_WIDE_DOUBLE || y == 0 || x == 0) {
        return ::atan2(y, x);
    }
    return ga_emu_math_device<double, long double>(
        ::atan2l((long double)y, (long double)x), 2, ga_emu_math_hash(23, y, x),
        (double)INFINITY);
}
static inline float
ga_emu_atan2(float y, float x)
{
    return ga_emu_atan2f(y, x);
}

/* std::name(x) in code after this point (a later standard header, a host helper)
 * means the device's function too, and still compiles. */
namespace std
{
#define GA_EMU_MATH_STD(name)                                                          \
    using ::ga_emu_##name;                                                             \
    using ::ga_emu_##name##f;
GA_EMU_MATH_STD(exp)
GA_EMU_MATH_STD(exp2)
GA_EMU_MATH_STD(expm1)
GA_EMU_MATH_STD(log)
GA_EMU_MATH_STD(log2)
GA_EMU_MATH_STD(log10)
GA_EMU_MATH_STD(log1p)
GA_EMU_MATH_STD(sin)
GA_EMU_MATH_STD(cos)
GA_EMU_MATH_STD(tan)
GA_EMU_MATH_STD(asin)
GA_EMU_MATH_STD(acos)
GA_EMU_MATH_STD(atan)
GA_EMU_MATH_STD(sinh)
GA_EMU_MATH_STD(cosh)
GA_EMU_MATH_STD(tanh)
GA_EMU_MATH_STD(asinh)
GA_EMU_MATH_STD(acosh)
GA_EMU_MATH_STD(atanh)
GA_EMU_MATH_STD(cbrt)
GA_EMU_MATH_STD(pow)
GA_EMU_MATH_STD(hypot)
GA_EMU_MATH_STD(atan2)
#undef GA_EMU_MATH_STD
} // namespace std

/* From here on the emulated translation unit calls the device's functions. */
#define exp ga_emu_exp
#define expf ga_emu_expf
#define exp2 ga_emu_exp2
#define exp2f ga_emu_exp2f
#define expm1 ga_emu_expm1
#define expm1f ga_emu_expm1f
#define log ga_emu_log
#define logf ga_emu_logf
#define log2 ga_emu_log2
#define log2f ga_emu_log2f
#define log10 ga_emu_log10
#define log10f ga_emu_log10f
#define log1p ga_emu_log1p
#define log1pf ga_emu_log1pf
#define sin ga_emu_sin
#define sinf ga_emu_sinf
#define cos ga_emu_cos
#define cosf ga_emu_cosf
#define tan ga_emu_tan
#define tanf ga_emu_tanf
#define asin ga_emu_asin
#define asinf ga_emu_asinf
#define acos ga_emu_acos
#define acosf ga_emu_acosf
#define atan ga_emu_atan
#define atanf ga_emu_atanf
#define sinh ga_emu_sinh
#define sinhf ga_emu_sinhf
#define cosh ga_emu_cosh
#define coshf ga_emu_coshf
#define tanh ga_emu_tanh
#define tanhf ga_emu_tanhf
#define asinh ga_emu_asinh
#define asinhf ga_emu_asinhf
#define acosh ga_emu_acosh
#define acoshf ga_emu_acoshf
#define atanh ga_emu_atanh
#define atanhf ga_emu_atanhf
#define cbrt ga_emu_cbrt
#define cbrtf ga_emu_cbrtf
#define pow ga_emu_pow
#define powf ga_emu_powf
#define hypot ga_emu_hypot
#define hypotf ga_emu_hypotf
#define atan2 ga_emu_atan2
#define atan2f ga_emu_atan2f

#endif
