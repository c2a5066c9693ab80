/* ga_special_erf.h: the scalar math of gpuarr.special's error-function family and the
 * other elementary pieces (the normal distribution, the logistic function, x*log(y)
 * forms, the entropies, sinc), in double precision for every device.
 *
 * Every function takes and returns double: the float32 kernels widen, call these and
 * round once, as SciPy's float32 loops do (its 'f->f' loops run the double code), so
 * a float32 result is the correctly rounded double one in nearly every case. Special
 * values (inf, NaN, the ends of a domain) follow scipy.special 1.17, except where
 * docs/special.md lists a difference. The methods are cited at each function; the
 * code is written here (gpuarr takes no Cephes or Boost source text), and the
 * accuracy measured against SciPy is in docs/special.md.
 *
 * Compiles as C11, CUDA C++ and host C++ (GA_HD static inline only).
 */
#ifndef GA_SPECIAL_ERF_H
#define GA_SPECIAL_ERF_H

#include <math.h>

#include "ga_config.h"

/* The functions with loops (series, continued fractions, Newton steps) are not
 * inlined: each of the 2 x 37 kernels would otherwise carry its own copy into every
 * loop variant of the CPU table (four per kernel) and every CUDA functor, which took
 * the CPU's elementwise file from seconds to many minutes to compile. A call per
 * element is nothing beside their tens of iterations. */
#if defined(__CUDACC__)
#define GA_SP_NOINLINE __noinline__ __attribute__((unused))
#elif defined(__GNUC__) || defined(__clang__)
#define GA_SP_NOINLINE __attribute__((noinline, unused))
#else
#define GA_SP_NOINLINE
#endif
/* static, not static inline (GCC refuses noinline on an inline function); `unused`
 * keeps a file that includes the header without calling them free of warnings */
#define GA_SP_HEAVY GA_HD GA_SP_NOINLINE static

#define GA_SP_PI 3.14159265358979323846
#define GA_SP_SQRT2 1.41421356237309504880
#define GA_SP_SQRTPI 1.77245385090551602730
#define GA_SP_SQRT2PI 2.50662827463100050242
#define GA_SP_SQRT_PI_2 1.25331413731550025121 /* sqrt(pi / 2) */

GA_HD static inline double
ga_sp_nan(void)
{
    return (double)NAN;
}

GA_HD static inline double
ga_sp_inf(void)
{
    return (double)INFINITY;
}

/* exp(s * x * x) without the rounding of x * x: x = hi + lo with hi holding 26 bits,
 * so hi * hi is exact and the small rest goes through a second exp. exp(x*x) with a
 * rounded x*x is off by |x*x| ulp (25 ulp at x = 5); this is within 2. */
GA_HD static inline double
ga_sp_expx2(double x, double s)
{
    x = fabs(x);
    double hi = ldexp(floor(ldexp(x, 20)), -20); /* x < 2^6 keeps it at 26 bits */
    if (x >= 64.0) {
        return exp(s * x * x);
    }
    double lo = x - hi;
    return exp(s * hi * hi) * exp(s * (2.0 * hi * lo + lo * lo));
}

/* sin(pi * x), exact in the argument: x is reduced mod 2 exactly before the product
 * with pi rounds (sin(pi * x) of the rounded product is wrong near every integer). */
GA_HD static inline double
ga_sp_sinpi(double x)
{
    if (!(fabs(x) < 4503599627370496.0)) { /* 2^52: every such double is an integer */
        return x != x || fabs(x) == (double)INFINITY ? ga_sp_nan() : 0.0 * x;
    }
    double r = x - 2.0 * rint(0.5 * x); /* exact; r in [-1, 1] */
    if (r > 0.5) {
        r = 1.0 - r;
    }
    else if (r < -0.5) {
        r = -1.0 - r;
    }
    return sin(GA_SP_PI * r);
}

/* cos(pi * x), reduced the same way */
GA_HD static inline double
ga_sp_cospi(double x)
{
    if (!(fabs(x) < 4503599627370496.0)) {
        return x != x || fabs(x) == (double)INFINITY ? ga_sp_nan() : 1.0;
    }
    double r = fabs(x - 2.0 * rint(0.5 * x)); /* in [0, 1] */
    if (r > 0.5) {
        return -sin(GA_SP_PI * (r - 0.5));
    }
    return sin(GA_SP_PI * (0.5 - r));
}

/* erfcx(x) = exp(x^2) erfc(x). Below 26 the library's erfc (relative accuracy
 * to its underflow at 26.5) times the exact-argument exp; above it the asymptotic
 * series 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k (Abramowitz & Stegun 7.1.23),
 * whose terms fall below 2^-53 by k = 8 there. */
GA_SP_HEAVY double
ga_sp_erfcx(double x)
{
    if (x != x) {
        return x;
    }
    if (x < 26.0) {
        if (x < -26.7) {
            return ga_sp_inf();
        }
        return ga_sp_expx2(x, 1.0) * erfc(x);
    }
    if (x == (double)INFINITY) {
        return 0.0;
    }
    double w = 1.0 / (2.0 * x * x), term = 1.0, sum = 1.0;
    for (int k = 1; k <= 10; k++) {
        term *= -(2.0 * k - 1.0) * w;
        sum += term;
    }
    return sum / (x * GA_SP_SQRTPI);
}

/* ndtr(x): the standard normal CDF, 0.5 * erfc(-x / sqrt(2)). Below -3 as
 * 0.5 erfcx(-x / sqrt2) exp(-x^2 / 2) with the exact-argument exp: erfc of the rounded
 * x / sqrt2 is off by up to 2 (x^2 / 2) ulp (700 at x = -37), erfcx is slowly
 * varying and does not care. */
GA_SP_HEAVY double
ga_sp_ndtr(double x)
{
    double z = x / GA_SP_SQRT2;
    if (fabs(z) < 0.5) {
        return 0.5 + 0.5 * erf(z);
    }
    if (x < -3.0 && x > -40.0) {
        return 0.5 * ga_sp_erfcx(-z) * ga_sp_expx2(x, -0.5);
    }
    return 0.5 * erfc(-z);
}

/* log(ndtr(x)). Below -1, through erfcx: ndtr(x) = erfcx(t) exp(-t^2) / 2 with
 * t = -x / sqrt(2), so the log is log(erfcx(t) / 2) - x^2 / 2, finite down to
 * -1.8e154 where ndtr itself underflowed long before; above 0, log1p of the upper
 * tail ndtr(-x). */
GA_SP_HEAVY double
ga_sp_log_ndtr(double x)
{
    if (x != x) {
        return x;
    }
    if (x < -1.0) {
        if (x == -(double)INFINITY) {
            return x;
        }
        return log(0.5 * ga_sp_erfcx(-x / GA_SP_SQRT2)) - 0.5 * x * x;
    }
    if (x > 0.0) {
        return log1p(-ga_sp_ndtr(-x));
    }
    return log(ga_sp_ndtr(x));
}

/* P. J. Acklam's rational approximation of the normal quantile (relative error
 * below 1.15e-9 over (0, 1)), for the lower half p <= 0.5; the caller refines it. */
GA_HD static inline double
ga_sp_ndtri_acklam(double p)
{
    if (p < 0.02425) {
        double q = sqrt(-2.0 * log(p));
        return (((((-7.784894002430293e-03 * q - 3.223964580411365e-01) * q -
                   2.400758277161838e+00) * q - 2.549732539343734e+00) * q +
                 4.374664141464968e+00) * q + 2.938163982698783e+00) /
               ((((7.784695709041462e-03 * q + 3.224671290700398e-01) * q +
                  2.445134137142996e+00) * q + 3.754408661907416e+00) * q + 1.0);
    }
    double q = p - 0.5, r = q * q;
    return (((((-3.969683028665376e+01 * r + 2.209460984245205e+02) * r -
               2.759285104469687e+02) * r + 1.383577518672690e+02) * r -
             3.066479806614716e+01) * r + 2.506628277459239e+00) * q /
           (((((-5.447609879822406e+01 * r + 1.615858368580409e+02) * r -
               1.556989798598866e+02) * r + 6.680131188771972e+01) * r -
             1.328068155288572e+01) * r + 1.0);
}

/* ndtri(p) for p <= 0.5: Acklam's start and two Newton steps, each quadratic (1e-9
 * -> 1e-18 -> exact). Near the centre the equation is 0.5 erf(x/sqrt2) = p - 0.5
 * (p - 0.5 exact, erf relative near 0, so tiny results keep their digits); in the
 * tail it is log_ndtr(x) = log(p), whose slope 1/(sqrt(pi/2) erfcx(-x/sqrt2)) stays
 * finite where ndtr and the density underflow. */
GA_SP_HEAVY double
ga_sp_ndtri_lower(double p)
{
    double x = ga_sp_ndtri_acklam(p);
    for (int i = 0; i < 2; i++) {
        if (p > 0.08) {
            double f = 0.5 * erf(x / GA_SP_SQRT2) - (p - 0.5);
            x -= f * GA_SP_SQRT2PI * ga_sp_expx2(x, 0.5);
        }
        else {
            double f = ga_sp_log_ndtr(x) - log(p);
            x -= f * GA_SP_SQRT_PI_2 * ga_sp_erfcx(-x / GA_SP_SQRT2);
        }
    }
    return x;
}

/* ndtri(p): the standard normal quantile; the upper half is -ndtri(1 - p), and
 * 1 - p is exact there */
GA_SP_HEAVY double
ga_sp_ndtri(double p)
{
    if (!(p >= 0.0 && p <= 1.0)) {
        return ga_sp_nan();
    }
    if (p == 0.0) {
        return -ga_sp_inf();
    }
    if (p == 1.0) {
        return ga_sp_inf();
    }
    if (p > 0.5) {
        return -ga_sp_ndtri_lower(1.0 - p);
    }
    return ga_sp_ndtri_lower(p);
}

/* erfinv(y). Near 0, Newton on erf(x) = y from erfinv's Taylor start (erf's relative
 * accuracy keeps tiny y's digits); beyond 1/2, erfinv(y) = -ndtri((1 - |y|)/2)/sqrt2,
 * where 1 - |y| is exact. */
GA_SP_HEAVY double
ga_sp_erfinv(double y)
{
    double a = fabs(y);
    if (!(a <= 1.0)) {
        return ga_sp_nan();
    }
    if (a == 1.0) {
        return copysign(ga_sp_inf(), y);
    }
    if (a > 0.5) {
        return copysign(-ga_sp_ndtri_lower(0.5 * (1.0 - a)) / GA_SP_SQRT2, y);
    }
    if (a < 1e-9) {
        return y * (0.5 * GA_SP_SQRTPI) * (1.0 + (GA_SP_PI / 12.0) * y * y);
    }
    double x = ga_sp_ndtri_lower(0.5 * (1.0 - a)) / -GA_SP_SQRT2;
    for (int i = 0; i < 2; i++) {
        x -= (erf(x) - a) * (0.5 * GA_SP_SQRTPI) * ga_sp_expx2(x, 1.0);
    }
    return copysign(x, y);
}

/* expit(x) = 1 / (1 + exp(-x)), written so that exp never overflows */
GA_HD static inline double
ga_sp_expit(double x)
{
    if (x >= 0.0) {
        return 1.0 / (1.0 + exp(-x));
    }
    double e = exp(x);
    return e / (1.0 + e);
}

/* logit(p) = log(p / (1 - p)). In [1/4, 3/4], log1p((2p - 1) / (1 - p)): 2p - 1 is
 * exact there, so the log near 0 keeps its digits; outside, log(p) - log1p(-p). */
GA_SP_HEAVY double
ga_sp_logit(double p)
{
    if (!(p >= 0.0 && p <= 1.0)) {
        return ga_sp_nan();
    }
    if (p >= 0.25 && p <= 0.75) {
        return log1p((2.0 * p - 1.0) / (1.0 - p));
    }
    return log(p) - log1p(-p);
}

/* x * log(y), 0 where x == 0 (unless y is NaN) */
GA_HD static inline double
ga_sp_xlogy(double x, double y)
{
    if (x == 0.0 && y == y) {
        return 0.0;
    }
    return x * log(y);
}

/* x * log1p(y), 0 where x == 0 (unless y is NaN) */
GA_HD static inline double
ga_sp_xlog1py(double x, double y)
{
    if (x == 0.0 && y == y) {
        return 0.0;
    }
    return x * log1p(y);
}

/* entr(x) = -x log(x); 0 at 0, -inf below */
GA_HD static inline double
ga_sp_entr(double x)
{
    if (x != x) {
        return x;
    }
    if (x > 0.0) {
        return -x * log(x);
    }
    return x == 0.0 ? 0.0 : -ga_sp_inf();
}

/* x log(x / y) for x, y > 0: the ratio's log where the ratio is a normal number,
 * log1p of the relative difference near 1 (no cancellation), and the difference of
 * the logs where the ratio over- or underflows */
GA_HD static inline double
ga_sp_xlog_ratio(double x, double y)
{
    double r = x / y;
    if (r > 0.5 && r < 2.0) {
        return x * log1p((x - y) / y);
    }
    if (r > 2.2250738585072014e-308 && r < (double)INFINITY) {
        return x * log(r);
    }
    return x * (log(x) - log(y));
}

/* rel_entr(x, y): x log(x / y) for x, y > 0, 0 for x == 0 <= y, inf otherwise */
GA_SP_HEAVY double
ga_sp_rel_entr(double x, double y)
{
    if (x != x || y != y) {
        return ga_sp_nan();
    }
    if (x > 0.0 && y > 0.0) {
        return ga_sp_xlog_ratio(x, y);
    }
    return x == 0.0 && y >= 0.0 ? 0.0 : ga_sp_inf();
}

/* kl_div(x, y): x log(x / y) - x + y for x, y > 0, y for x == 0 <= y, inf otherwise.
 * Near x = y the three terms cancel: with d = (x - y) / y it is
 * y ((1 + d) log1p(d) - d) = y sum_{k>=2} (-d)^k / (k (k - 1)), summed directly for
 * |d| < 1/2. */
GA_SP_HEAVY double
ga_sp_kl_div(double x, double y)
{
    if (x != x || y != y) {
        return ga_sp_nan();
    }
    if (x > 0.0 && y > 0.0) {
        double d = (x - y) / y;
        if (fabs(d) < 0.5) {
            double p = -d, s = 0.0;
            for (int k = 2; k < 60; k++) {
                p *= -d;
                double add = p / ((double)k * (double)(k - 1));
                s += add;
                if (fabs(add) <= 1e-17 * fabs(s)) {
                    break;
                }
            }
            return y * s;
        }
        return ga_sp_xlog_ratio(x, y) - x + y;
    }
    return x == 0.0 && y >= 0.0 ? y : ga_sp_inf();
}

/* sinc(x) = sin(pi x) / (pi x), 1 at 0 (NumPy's normalized sinc, which
 * scipy.special.sinc is), with the exactly reduced sin(pi x) */
GA_SP_HEAVY double
ga_sp_sinc(double x)
{
    if (x == 0.0) {
        return 1.0;
    }
    return ga_sp_sinpi(x) / (GA_SP_PI * x); /* NaN at +-inf, as NumPy's */
}

#endif
