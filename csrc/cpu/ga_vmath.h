/* ga_vmath.h: vectorisable exp, log, sin, cos, tanh and pow for the CPU backend.
 *
 * libm's functions are calls a compiler cannot vectorise. These are straight-line
 * code (no branches, no tables, no calls) that GCC turns into SIMD loops; the loops in
 * ga_cpu_elementwise.c are compiled for AVX-512, AVX2+FMA and baseline x86-64 and the
 * loader picks one at run time. CPU only: the CUDA build keeps ga_k_*
 * (ga_elementwise_math.h), whose math is CUDA's.
 *
 * Contract, per function: the result for every input (subnormals, +-0, +-inf, NaN
 * included) is within the stated bound of the exact result, measured against a
 * high-precision reference in tests/perf/test_perf_math.py; special values are exactly
 * what NumPy (libm) gives. "ulp" is the spacing of the result's dtype at the exact
 * value. The project builds with -ffp-contract=off, so every clone (AVX-512, AVX2,
 * SSE2) computes the same bits: no fused multiply-add is formed behind our back.
 *
 * Where a branch-free path cannot be exact (sin/cos of |x| >= 1e6 need a
 * multi-word reduction by pi/2: Payne-Hanek), the function has a `_fast_ok`
 * predicate: the loop checks a block of inputs with it (a vectorised OR) and computes
 * a block that holds such an input element by element, libm's function for those
 * inputs. That is rare (|x| >= 1e6, inf, NaN) and costs one compare per element
 * otherwise.
 *
 * Bounds, stated [in brackets], and the largest error measured over ~10^6 inputs per
 * function (every binade, subnormals, thresholds; tests/perf/test_perf_math.py):
 *   float32 exp  [1] 0.50   computed in double, as the four below:
 *   float32 log  [1] 0.50   computed in double: the float result is the correctly
 *   float32 sin  [1] 0.50   rounded one but where the exact value lies within
 *   float32 cos  [1] 0.50   ~1e-11 relative of a rounding boundary
 *   float32 tanh [1] 0.50
 *   float32 pow  [1] 0.50
 *   float64 exp  [1] 0.82   float64 log [1] 0.72
 *   float64 sin  [1] 0.83   float64 cos [1] 0.82   (|x| < 1e6; libm's above)
 *   float64 tanh [2] 1.71
 *   float64 pow  [1] 0.64 (in double-double where ga_vpow_fast_ok, libm elsewhere;
 *                          NumPy's SIMD pow measures 0.75 on the same inputs)
 */
#ifndef GA_VMATH_H
#define GA_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The long functions (float64 pow and its parts) are forced inline: GCC kept ga_vpow
 * out of line, a scalar call per element (70 ns); inlined, it vectorises in each SIMD
 * clone of its loop. */
#if defined(__GNUC__)
#define GA_VM_INLINE static inline __attribute__((always_inline))
#else
#define GA_VM_INLINE static inline
#endif

/* --- bit casts (memcpy: one register move after optimisation) --- */

static inline double
ga_vm_f64(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof(d));
    return d;
}

static inline uint64_t
ga_vm_u64(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof(b));
    return b;
}

static inline float
ga_vm_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof(f));
    return f;
}

static inline uint32_t
ga_vm_u32(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof(b));
    return b;
}

/* Adding 1.5 * 2^52 to |t| < 2^51 rounds t to an integer n (ties to even) and leaves
 * n in the low mantissa bits, two's complement: (bits + c) << 52 moves n + c into the
 * exponent field whatever the high bits were. */
#define GA_VM_SHIFT 6755399441055744.0
/* ln 2 in two parts: k * LN2_HI is exact for |k| < 2^20 (32 significant bits) */
#define GA_VM_LN2_HI 6.93147180369123816490e-01
#define GA_VM_LN2_LO 1.90821492927058770002e-10

/* an integer e < 2^52 as a double (AVX2 has no 64-bit integer conversion) */
static inline double
ga_vm_u2d(uint64_t e)
{
    return ga_vm_f64(0x4330000000000000ULL | e) - 4503599627370496.0;
}

/* 2^n for an integer n + 1023 in [1, 2046], from kf = n + GA_VM_SHIFT */
static inline double
ga_vm_pow2(double kf)
{
    return ga_vm_f64((ga_vm_u64(kf) + 1023u) << 52);
}

/* ========================= float64 ========================= */

/* exp's polynomial: exp(r) - 1 = r + r^2 q(r) for |r| <= ln2/2, q from the Taylor
 * series to degree 13 (truncation 4e-18 relative) */
GA_VM_INLINE double
ga_vm_exp_q(double r)
{
    double q = 1.0 / 6227020800.0; /* 1/13! */
    q = q * r + 1.0 / 479001600.0;
    q = q * r + 1.0 / 39916800.0;
    q = q * r + 1.0 / 3628800.0;
    q = q * r + 1.0 / 362880.0;
    q = q * r + 1.0 / 40320.0;
    q = q * r + 1.0 / 5040.0;
    q = q * r + 1.0 / 720.0;
    q = q * r + 1.0 / 120.0;
    q = q * r + 1.0 / 24.0;
    q = q * r + 1.0 / 6.0;
    q = q * r + 0.5;
    return q;
}

/* p * 2^k for an integer k in [-1076, 1024], as two normal powers of two (so that
 * neither overflows nor goes subnormal; the last multiply rounds once) */
GA_VM_INLINE double
ga_vm_scale2(double p, double k)
{
    double k1f = k * 0.5 + GA_VM_SHIFT; /* k1 = rint(k/2), k2 = k - k1 */
    double k2f = (k - (k1f - GA_VM_SHIFT)) + GA_VM_SHIFT;
    return p * ga_vm_pow2(k1f) * ga_vm_pow2(k2f);
}

/* exp, float64: [1 ulp]. exp(x) = 2^k exp(r), x = k ln2 + r, |r| <= ln2/2, r kept as
 * r + c (c: the rounding error of r); exp(r) by its Taylor series to degree 13
 * (truncation 4e-18 relative). 2^k is applied as two normal powers of two, so that
 * k = 1024 (results near DBL_MAX) and k down to -1076 (subnormal results, rounded
 * once by the last multiply) need no branch. Inputs are clamped to [-746, 710],
 * beyond which the result is 0 or inf anyway; NaN passes the clamps. */
static inline double
ga_vexp(double x)
{
    x = x < -746.0 ? -746.0 : x;
    x = x > 710.0 ? 710.0 : x;
    double kf = x * 1.44269504088896338700e+00 + GA_VM_SHIFT;
    double k = kf - GA_VM_SHIFT;
    double hi = x - k * GA_VM_LN2_HI; /* exact */
    double lo = k * GA_VM_LN2_LO;
    double r = hi - lo;
    double c = (hi - r) - lo;
    double q = ga_vm_exp_q(r);
    double em1 = r + (r * r * q + c * (1.0 + r)); /* exp(r + c) - 1 */
    double p = 1.0 + em1;
    return ga_vm_scale2(p, k);
}

/* log, float64: [1 ulp]. fdlibm's e_log.c without its branches: x = 2^k (1 + f),
 * 1 + f in [sqrt(1/2), sqrt(2)); log(1+f) = f - f^2/2 + s (f^2/2 + R(s^2)) with
 * s = f / (2 + f) and fdlibm's minimax R (error < 2^-58.45). Subnormal inputs are
 * scaled by 2^54 first; the special inputs are selected at the end. */
static inline double
ga_vlog(double x)
{
    int sub = x < 2.2250738585072014e-308;
    double xs = sub ? x * 18014398509481984.0 : x; /* 2^54 */
    double kadj = sub ? -54.0 : 0.0;
    const uint64_t off = 0x3fe6a09e667f3bcdULL; /* sqrt(1/2) */
    uint64_t b = ga_vm_u64(xs);
    uint64_t e = (b - off + ((uint64_t)1024 << 52)) >> 52; /* exponent + 1024, >= 0 */
    double k = ga_vm_u2d(e) - 1024.0 + kadj;
    double z = ga_vm_f64(b - ((e - 1024u) << 52));
    double f = z - 1.0;
    double s = f / (2.0 + f);
    double z2 = s * s, w = z2 * z2;
    double t1 = w * (3.999999999940941908e-01 +
                     w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
    double t2 =
        z2 * (6.666666666666735130e-01 +
              w * (2.857142874366239149e-01 +
                   w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
    double R = t2 + t1;
    double hfsq = 0.5 * f * f;
    double r = k * GA_VM_LN2_HI - ((hfsq - (s * (hfsq + R) + k * GA_VM_LN2_LO)) - f);
    r = x > 0.0 ? r : (x == 0.0 ? -INFINITY : NAN);
    return x == INFINITY ? x : r;
}

/* pi/2 in four parts; the first three have 33 significant bits, so k * part is exact
 * for |k| < 2^20 (fdlibm's pio2_1, pio2_2, pio2_3, pio2_3t) */
#define GA_VM_PIO2_1 1.57079632673412561417e+00
#define GA_VM_PIO2_2 6.07710050630396597660e-11
#define GA_VM_PIO2_3 2.02226624871116645580e-21
#define GA_VM_PIO2_3T 8.47842766036889956997e-32
#define GA_VM_2_PI 6.36619772367581382433e-01

/* fdlibm's __kernel_sin / __kernel_cos minimax polynomials on [-pi/4, pi/4] (error
 * < 2^-58), evaluated at hi + lo */
static inline double
ga_vm_ksin(double x, double y)
{
    double z = x * x, v = z * x;
    double r =
        8.33333333332248946124e-03 +
        z * (-1.98412698298579493134e-04 +
             z * (2.75573137070700676789e-06 +
                  z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)));
    return x - ((z * (0.5 * y - v * r) - y) - v * -1.66666666666666324348e-01);
}

static inline double
ga_vm_kcos(double x, double y)
{
    double z = x * x;
    double r = z * (4.16666666666666019037e-02 +
                    z * (-1.38888888888741095749e-03 +
                         z * (2.48015872894767294178e-05 +
                              z * (-2.75573143513906633035e-07 +
                                   z * (2.08757232129817482790e-09 +
                                        z * -1.13596475577881948265e-11)))));
    /* fdlibm subtracts a chosen qx from both halves of 1 - z/2 where |x| >= 0.3, so
     * that 1 - qx is exact and z/2 - qx loses nothing: qx = |x|/4 with its low word
     * cleared, 0.28125 above 0.78125, 0 below 0.3 (the plain formula) */
    double ax = fabs(x);
    double q4 =
        ga_vm_f64((ga_vm_u64(ax) - ((uint64_t)2 << 52)) & 0xffffffff00000000ULL);
    double qx = ax < 0.3 ? 0.0 : (ax > 0.78125 ? 0.28125 : q4);
    double hz = 0.5 * z - qx;
    double a = 1.0 - qx;
    return a - (hz - (z * r - x * y));
}

/* The sin/cos vector path covers |x| < 1e6 (|k| < 2^20, so k * PIO2_n is exact);
 * larger, infinite and NaN inputs go to libm (which reduces exactly). */
static inline int
ga_vsin_fast_ok(double x)
{
    return fabs(x) < 1e6;
}

/* x - k pi/2 as hi + lo, exactly enough for any double |x| < 1e6: x - k PIO2_1 is
 * exact (Sterbenz), the two next subtractions keep their rounding errors (two-sum),
 * so r is known to ~2^-100 absolute however close x lies to a multiple of pi/2.
 * Returns k + GA_VM_SHIFT (its low bits are the quadrant). */
static inline double
ga_vm_rem_pio2(double x, double *hi, double *lo)
{
    double kf = x * GA_VM_2_PI + GA_VM_SHIFT;
    double k = kf - GA_VM_SHIFT;
    double a = x - k * GA_VM_PIO2_1;
    double w = k * GA_VM_PIO2_2;
    double b = a - w;
    double bb = b - a;
    double e1 = (a - (b - bb)) + (-w - bb);
    double w3 = k * GA_VM_PIO2_3;
    double c = b - w3;
    double cc = c - b;
    double e2 = (b - (c - cc)) + (-w3 - cc);
    double l = (e1 + e2) - k * GA_VM_PIO2_3T;
    double h = c + l;
    *hi = h;
    *lo = (c - h) + l;
    return kf;
}

/* sin and cos of x = k pi/2 + r: quadrant k mod 4 picks the polynomial (mask select)
 * and the sign (xor into the sign bit) */
static inline double
ga_vm_sincos_select(double s, double c, uint64_t q)
{
    uint64_t m = (uint64_t)0 - (q & 1);
    uint64_t v = (ga_vm_u64(c) & m) | (ga_vm_u64(s) & ~m);
    return ga_vm_f64(v ^ ((q & 2) << 62));
}

/* sin, float64: [1 ulp] for |x| < 1e6 (libm beyond: see ga_vsin_fast_ok) */
static inline double
ga_vsin(double x)
{
    double hi, lo;
    uint64_t q = ga_vm_u64(ga_vm_rem_pio2(x, &hi, &lo));
    double r = ga_vm_sincos_select(ga_vm_ksin(hi, lo), ga_vm_kcos(hi, lo), q);
    return fabs(x) < 1.4901161193847656e-08
               ? x
               : r; /* 2^-26: sin x rounds to x; keeps -0 */
}

/* cos, float64: [1 ulp] for |x| < 1e6 (libm beyond) */
static inline double
ga_vcos(double x)
{
    double hi, lo;
    uint64_t q = ga_vm_u64(ga_vm_rem_pio2(x, &hi, &lo)) + 1;
    return ga_vm_sincos_select(ga_vm_ksin(hi, lo), ga_vm_kcos(hi, lo), q);
}

/* tanh, float64: [2 ulp]. tanh|x| = -e / (e + 2) with e = expm1(-2|x|) in (-1, 0]
 * (glibc's formula), |x| clamped to 22 where tanh is 1 to double precision; tanh x = x
 * below 2^-28. expm1(y) = 2^k (expm1(r) + 1) - 1 with y = k ln2 + r, expm1(r) by its
 * Taylor series to degree 13. */
static inline double
ga_vtanh(double x)
{
    double ax = fabs(x);
    ax = ax > 22.0 ? 22.0 : ax; /* NaN passes */
    double y = -2.0 * ax;
    double kf = y * 1.44269504088896338700e+00 + GA_VM_SHIFT;
    double k = kf - GA_VM_SHIFT;
    double hi = y - k * GA_VM_LN2_HI;
    double lo = k * GA_VM_LN2_LO;
    double r = hi - lo;
    double c = (hi - r) - lo;
    double q = ga_vm_exp_q(r);
    double p = r + (r * r * q + c * (1.0 + r)); /* expm1(r + c) */
    /* e = 2^k p + (2^k - 1), both terms exact (k in [-64, 0]); e and e + 2 are kept
     * as double-doubles (two-sum) and the quotient corrected once: the roundings of
     * e and e + 2 would otherwise cost an ulp each where tanh is near 1 */
    double s = ga_vm_pow2(kf);
    double A = s * p, B = s - 1.0;
    double eh = A + B;
    double bb = eh - A;
    double el = (A - (eh - bb)) + (B - bb);
    double dh = eh + 2.0;
    double dl = (2.0 - dh) + eh;
    double qt = -eh / dh;
    double t = qt + (-el - qt * (dl + el)) / dh;
    t = ax < 3.7252902984619141e-09 ? ax : t; /* 2^-28 */
    return copysign(t, x);
}

/* ========================= float32 ========================= */

/* exp, float32: [1 ulp], computed in double so that the only error reaching the float
 * is its final rounding (0.5 ulp + ~1e-11 relative: the correctly rounded float but
 * within ~1e-11 of a rounding boundary). A float-arithmetic version (Cephes' expf,
 * 16 lanes of AVX-512 instead of 8) ran about twice as fast but was 0.97 ulp off at
 * worst, and printed exp(4.693147) as 109.196304 where the book and NumPy show
 * 109.1963: the chapter's printed outputs win over speed here.
 * exp(x) = 2^n * 2^f with x * log2(e) = n + f, n an integer, |f| <= 1/2. Outside
 * [-104, 89] the float result is 0 or inf anyway; clamping there keeps 2^n a normal
 * double; NaN passes the comparisons. */
static inline float
ga_vexpf(float xf)
{
    float xc = xf < -104.0f ? -104.0f : xf;
    xc = xc > 89.0f ? 89.0f : xc;
    double x = (double)xc;
    const double shift = 6755399441055744.0; /* 1.5 * 2^52: adding it rounds to an integer */
    double t = x * 1.4426950408889634074;
    double k = t + shift;
    double n = k - shift;
    double f = t - n;
    /* 2^f = sum (f ln 2)^i / i!, to degree 9: truncation < 1e-11 for |f| <= 1/2,
     * far below the 6e-8 of a float's half ulp */
    double p = 1.0178086009239696e-07;
    p = p * f + 1.3215486790144305e-06;
    p = p * f + 1.5252733804059838e-05;
    p = p * f + 0.00015403530393381606;
    p = p * f + 0.0013333558146428441;
    p = p * f + 0.0096181291076284769;
    p = p * f + 0.055504108664821576;
    p = p * f + 0.24022650695910069;
    p = p * f + 0.69314718055994529;
    p = p * f + 1;
    /* the low bits of k hold n (two's complement); shifted into the exponent field
     * they make 2^n exactly, for n + 1023 in [1, 2046] */
    double scale = ga_vm_f64((ga_vm_u64(k) + 1023u) << 52);
    return (float)(p * scale);
}

/* log of a positive normal double to ~2e-14 relative (the float32 functions' log):
 * x = 2^k z, z in [sqrt(1/2), sqrt(2)), log z = 2 atanh(s), s = (z-1)/(z+1),
 * |s| < 0.172, the series to s^15. */
static inline double
ga_vm_log_lowp(double x)
{
    const uint64_t off = 0x3fe6a09e667f3bcdULL; /* sqrt(1/2) */
    uint64_t b = ga_vm_u64(x);
    uint64_t e = (b - off + ((uint64_t)1024 << 52)) >> 52;
    double k = ga_vm_u2d(e) - 1024.0;
    double z = ga_vm_f64(b - ((e - 1024u) << 52));
    double s = (z - 1.0) / (z + 1.0);
    double s2 = s * s;
    double p = 2.0 / 15.0;
    p = p * s2 + 2.0 / 13.0;
    p = p * s2 + 2.0 / 11.0;
    p = p * s2 + 2.0 / 9.0;
    p = p * s2 + 2.0 / 7.0;
    p = p * s2 + 2.0 / 5.0;
    p = p * s2 + 2.0 / 3.0;
    p = p * s2 + 2.0;
    return k * 0.69314718055994530942 + s * p;
}

/* 2^t to ~1e-11 relative for t in [-200, 200] (clamped there; NaN passes): the
 * float32 functions' exponential */
static inline double
ga_vm_exp2_lowp(double t)
{
    t = t < -200.0 ? -200.0 : t;
    t = t > 200.0 ? 200.0 : t;
    double kf = t + GA_VM_SHIFT;
    double f = t - (kf - GA_VM_SHIFT);
    /* 2^f = sum (f ln 2)^i / i!, |f| <= 1/2, to degree 9: truncation < 1e-11 */
    double p = 1.0178086009239696e-07;
    p = p * f + 1.3215486790144305e-06;
    p = p * f + 1.5252733804059838e-05;
    p = p * f + 0.00015403530393381606;
    p = p * f + 0.0013333558146428441;
    p = p * f + 0.0096181291076284769;
    p = p * f + 0.055504108664821576;
    p = p * f + 0.24022650695910069;
    p = p * f + 0.69314718055994529;
    p = p * f + 1;
    return p * ga_vm_pow2(kf);
}

/* log, float32: [1 ulp], in double (a float is a normal double, subnormals too) */
static inline float
ga_vlogf(float xf)
{
    float rf = (float)ga_vm_log_lowp((double)xf);
    rf = xf > 0.0f ? rf : (xf == 0.0f ? -INFINITY : NAN);
    return xf == INFINITY ? xf : rf;
}

/* float32 sin/cos: the same quadrant scheme as float64, in double. A float |x| < 1e6
 * reduces accurately enough with three parts of pi/2 and plain subtractions: each
 * rounding is relative to the (small) remainder, not to x. */
static inline int
ga_vsinf_fast_ok(float x)
{
    return fabsf(x) < 1e6f;
}

static inline double
ga_vm_rem_pio2_lowp(double x, uint64_t *q)
{
    double kf = x * GA_VM_2_PI + GA_VM_SHIFT;
    double k = kf - GA_VM_SHIFT;
    *q = ga_vm_u64(kf);
    return ((x - k * GA_VM_PIO2_1) - k * GA_VM_PIO2_2) - k * GA_VM_PIO2_3;
}

/* sin, float32: [1 ulp] for |x| < 1e6 (libm beyond) */
static inline float
ga_vsinf(float xf)
{
    uint64_t q;
    double r = ga_vm_rem_pio2_lowp((double)xf, &q);
    float v = (float)ga_vm_sincos_select(ga_vm_ksin(r, 0.0), ga_vm_kcos(r, 0.0), q);
    return fabsf(xf) < 2.44140625e-4f ? xf : v; /* 2^-12: sin x rounds to x; keeps -0 */
}

/* cos, float32: [1 ulp] for |x| < 1e6 (libm beyond) */
static inline float
ga_vcosf(float xf)
{
    uint64_t q;
    double r = ga_vm_rem_pio2_lowp((double)xf, &q);
    return (float)ga_vm_sincos_select(ga_vm_ksin(r, 0.0), ga_vm_kcos(r, 0.0), q + 1);
}

/* tanh, float32: [1 ulp], in double: 1 - 2 / (e^2|x| + 1) (absolute error ~1e-11,
 * relative < 2e-10 for |x| >= 1/16), its Taylor series to x^9 below 1/16 (truncation
 * < 1e-14 relative). Saturates to +-1 through the clamp of 2^t; NaN passes. */
static inline float
ga_vtanhf(float xf)
{
    double x = (double)xf;
    double ax = fabs(x);
    double d = ga_vm_exp2_lowp(2.0 * ax * 1.44269504088896338700e+00);
    double big = 1.0 - 2.0 / (d + 1.0);
    double z = x * x;
    double small =
        x + x * z * (-1.0 / 3 + z * (2.0 / 15 + z * (-17.0 / 315 + z * (62.0 / 2835))));
    return (float)copysign(ax < 0.0625 ? small : big, x);
}

/* Whether y (a double) is an integer, and an odd one; any |y| >= 2^52 is an integer,
 * any |y| >= 2^53 even. */
static inline int
ga_vm_is_int(double y)
{
    double ay = fabs(y);
    double t = (ay + 4503599627370496.0) - 4503599627370496.0; /* rint below 2^52 */
    return ay >= 4503599627370496.0 || t == ay;
}

static inline int
ga_vm_is_odd(double y)
{
    double h = 0.5 * fabs(y);
    double t = (h + 4503599627370496.0) - 4503599627370496.0;
    return ga_vm_is_int(y) && h < 4503599627370496.0 && t != h;
}

/* pow, float32: [1 ulp], in double: |x|^y = 2^(y log2|x|) (y log2|x| to ~1e-14
 * absolute where the result is a finite float), then C99's (NumPy's) rules: the sign
 * from an odd integer y, NaN for x < 0 and a finite non-integer y, pow(x, +-0) = 1
 * and pow(1, y) = 1 even for NaN, pow(-1, +-inf) = 1. Zero and infinite x and y fall
 * out of the arithmetic: log2 0 = -inf, 2^-inf = 0, 2^inf = inf. */
static inline float
ga_vpowf(float xf, float yf)
{
    double x = (double)xf, y = (double)yf;
    double ax = fabs(x);
    double l = ga_vm_log_lowp(ax) * 1.44269504088896338700e+00;
    l = ax == 0.0 ? -INFINITY : l;
    l = ax == INFINITY ? INFINITY : l;
    l = x != x ? x : l;
    double m = ga_vm_exp2_lowp(y * l); /* 2^+-200 round to inf and 0 as floats */
    /* every test in double: a float compare would mix 16-lane and 8-lane masks,
     * which GCC does not vectorise */
    m = ga_vm_u64(x) >> 63 && ga_vm_is_odd(y) ? -m : m;
    m = x < 0.0 && x > -INFINITY && fabs(y) < INFINITY && !ga_vm_is_int(y) ? NAN : m;
    m = x == 1.0 || y == 0.0 || (x == -1.0 && fabs(y) == INFINITY) ? 1.0 : m;
    m = y == 2.0 ? x * x : m; /* exact in double: one rounding, as ga_fpow's x * x */
    return (float)m;
}

/* ========================= float64 pow ========================= */

/* a * b = p + e exactly (Dekker's product: -ffp-contract=off forms no fused
 * multiply-add, and the baseline clone has none), for |a|, |b| < 2^995 */
GA_VM_INLINE void
ga_vm_two_prod(double a, double b, double *p, double *e)
{
    const double split = 134217729.0; /* 2^27 + 1 */
    double ta = split * a, ah = ta - (ta - a), al = a - ah;
    double tb = split * b, bh = tb - (tb - b), bl = b - bh;
    *p = a * b;
    *e = ((ah * bh - *p) + ah * bl + al * bh) + al * bl;
}

/* log x as hi + lo to ~2^-68 relative, for a positive normal finite x: x = 2^k z,
 * z in [sqrt(1/2), sqrt(2)), log z = 2 atanh(s) with s = f / (2 + f), f = z - 1
 * (exact). s, its powers to s^5 and the terms 2 s^3 / 3 and 2 s^5 / 5 in
 * double-double (they carry the digits a large y multiplies: with the s^5 term in
 * double, pow was 0.92 ulp off at x near sqrt 2, y near 1000), the series' rest
 * 2 s^7 (1/7 + s^2/9 + ...) in double: it is below 2e-6 of log z. */
GA_VM_INLINE void
ga_vm_log_dd(double x, double *hi, double *lo)
{
    const uint64_t off = 0x3fe6a09e667f3bcdULL; /* sqrt(1/2) */
    uint64_t b = ga_vm_u64(x);
    uint64_t e = (b - off + ((uint64_t)1024 << 52)) >> 52;
    double k = ga_vm_u2d(e) - 1024.0;
    double z = ga_vm_f64(b - ((e - 1024u) << 52));
    double f = z - 1.0;
    double dh = 2.0 + f, dl = f - (dh - 2.0); /* 2 + f = dh + dl */
    double inv = 1.0 / dh, sh = f * inv, p, pe; /* one division: sl takes sh's error */
    ga_vm_two_prod(sh, dh, &p, &pe);
    double sl = (((f - p) - pe) - sh * dl) * inv; /* s = sh + sl */
    double s2h, s2l, s3h, s3l, t3h, t3l;
    ga_vm_two_prod(sh, sh, &s2h, &s2l);
    s2l += 2.0 * sh * sl;
    ga_vm_two_prod(s2h, sh, &s3h, &s3l);
    s3l += s2h * sl + s2l * sh;
    const double c3h = 6.66666666666666629659e-01, c3l = 3.70074341541718826e-17; /* 2/3 */
    ga_vm_two_prod(c3h, s3h, &t3h, &t3l);
    t3l += c3h * s3l + c3l * s3h;
    double s5h, s5l, t5h, t5l;
    ga_vm_two_prod(s3h, s2h, &s5h, &s5l);
    s5l += s3h * s2l + s3l * s2h;
    const double c5h = 4.00000000000000022204e-01, c5l = -2.22044604925031308e-17; /* 2/5 */
    ga_vm_two_prod(c5h, s5h, &t5h, &t5l);
    t5l += c5h * s5l + c5l * s5h;
    /* 2 (1/7 + s^2/9 + ... + s^16/23): truncated below 2^-50 of itself */
    double q = 2.0 / 23.0;
    q = q * s2h + 2.0 / 21.0;
    q = q * s2h + 2.0 / 19.0;
    q = q * s2h + 2.0 / 17.0;
    q = q * s2h + 2.0 / 15.0;
    q = q * s2h + 2.0 / 13.0;
    q = q * s2h + 2.0 / 11.0;
    q = q * s2h + 2.0 / 9.0;
    q = q * s2h + 2.0 / 7.0;
    double rest = s5h * s2h * q;
    /* 2s + t3 + t5 + rest + k ln2, summed from the largest part */
    double a = 2.0 * sh, u = a + t3h;
    double ul = (t3h - (u - a)) + (((2.0 * sl + t3l) + (t5l + rest)) + t5h); /* |a| > |t3h| */
    double kh = k * GA_VM_LN2_HI;                          /* exact */
    double v = kh + u, bv = v - kh;
    double vl = ((kh - (v - bv)) + (u - bv)) + (ul + k * GA_VM_LN2_LO); /* two-sum */
    *hi = v + vl;
    *lo = vl - (*hi - v);
}

/* Whether ga_vpow handles (x, y): x positive, normal and finite, y finite, and
 * |y log2 x| < 1000 (|log2 x| <= |exponent| + 1), so the result is a normal double.
 * Everything else (zeros, negative x, infinities, NaN, subnormal x, results that
 * overflow or go subnormal) is libm's pow, element by element: C99's rules exactly
 * as NumPy gives them. */
GA_VM_INLINE int
ga_vpow_fast_ok(double x, double y)
{
    double ex = ga_vm_u2d(ga_vm_u64(x) >> 52) - 1023.0; /* x > 0: the biased exponent */
    return x >= 2.2250738585072014e-308 && x < INFINITY && fabs(y) < INFINITY &&
           fabs(y) * (fabs(ex) + 1.0) < 1000.0;
}

/* pow, float64: [1 ulp] where ga_vpow_fast_ok. x^y = exp(t), t = y log x as th + tl
 * (log x to ~2^-68 relative, y times it exactly, so that a large |t| keeps its last
 * digits: an error of d in t is d relative in x^y), then exp as ga_vexp with tl
 * added to the reduction's correction c (taken times e^r), and 1 + r kept exact so
 * that the sum rounds once (ga_vexp's two roundings measure 0.82 ulp; this 0.5x).
 * y == 2 is x * x and y == 1 is x (one rounding, as NumPy's and libm's pow give). */
GA_VM_INLINE double
ga_vpow(double x, double y)
{
    double lh, ll, th, te;
    ga_vm_log_dd(x, &lh, &ll);
    ga_vm_two_prod(y, lh, &th, &te);
    double tl = te + y * ll;
    double kf = th * 1.44269504088896338700e+00 + GA_VM_SHIFT;
    double k = kf - GA_VM_SHIFT;
    double hi = th - k * GA_VM_LN2_HI; /* exact */
    double lo = k * GA_VM_LN2_LO;
    double r = hi - lo;
    double c = ((hi - r) - lo) + tl;
    double w = r * r * ga_vm_exp_q(r);
    double a = 1.0 + r, al = r - (a - 1.0); /* 1 + r exactly */
    /* exp(r + c) = (1 + r) + w + c e^r, rounded once */
    double m = ga_vm_scale2(a + (al + (w + c * ((1.0 + r) + w))), k);
    m = y == 1.0 ? x : m;
    return y == 2.0 ? x * x : m;
}

#endif /* GA_VMATH_H */
