/* ga_special_elementary.h: the scalar math of gpuarr.special's elementary functions
 * (cbrt, exp10, cosm1, exprel, the trigonometry in degrees and radian, the Box-Cox
 * transforms, the Huber losses), in double precision for every device.
 *
 * Conventions as in ga_special_erf.h (double in, double out; SciPy 1.17's special
 * values; the float32 kernels round the double result once). None of them loops, so
 * they are small and inlined: each costs a handful of the C library's (CUDA's)
 * functions. exp2 needs no kernel of its own: it is the array API's exp2
 * (python/gpuarr/special.py gives it SciPy's type resolution).
 */
#ifndef GA_SPECIAL_ELEMENTARY_H
#define GA_SPECIAL_ELEMENTARY_H

#include <math.h>

#include "ga_config.h"
#include "ga_special_erf.h"

#define GA_SP_PI_180 1.74532925199432957692e-2 /* pi / 180 */
/* SciPy's degree functions give 0 past 1e14 degrees (their last digit is then worth
 * more than a turn), as Cephes' sindg, cosdg, tandg, cotdg do: the same cut here */
#define GA_SP_DEG_LOSS 1.0e14

/* The CUDA emulator's math shim makes cbrt a macro (its stand-in of CUDA's cbrt), and
 * the op list's token `cbrt` expands with it before the kernels paste ga_sp_ onto it:
 * the function is named through the same expansion, so both sides agree. */
#define GA_SP_PASTE(a, b) a##b
#define GA_SP_NAME(n) GA_SP_PASTE(ga_sp_, n)

GA_HD static inline double
GA_SP_NAME(cbrt)(double x)
{
    return cbrt(x);
}

/* 10^x: pow is within an ulp (2 on CUDA) for every x; exp(x ln 10) would carry
 * x ln 10's rounding, |x| ulp */
GA_HD static inline double
ga_sp_exp10(double x)
{
    return pow(10.0, x);
}

/* cos(x) - 1 as -2 sin(x/2)^2: x/2 is exact and sin keeps its relative accuracy, so
 * there is no cancellation next to any multiple of 2 pi (cos(x) - 1 loses all its
 * digits there) */
GA_HD static inline double
ga_sp_cosm1(double x)
{
    double s = sin(0.5 * x);
    return -2.0 * s * s;
}

/* (exp(x) - 1) / x, 1 at 0; SciPy's values at the ends: -1/x below -709.78 (exp(x)
 * underflows), inf above 717 */
GA_HD static inline double
ga_sp_exprel(double x)
{
    if (fabs(x) < 1e-16) {
        return 1.0;
    }
    if (x < -709.78) {
        return -1.0 / x;
    }
    if (x > 717.0) {
        return ga_sp_inf();
    }
    return expm1(x) / x;
}

/* radian(d, m, s): degrees, arc minutes and arc seconds in radians, through the
 * seconds (pi / 648000 per second) as SciPy computes it */
GA_HD static inline double
ga_sp_radian(double d, double m, double s)
{
    return ((d * 60.0 + m) * 60.0 + s) * 4.84813681109535993590e-6;
}

/* The degree functions reduce the argument exactly (fmod is exact, so is r - 180 for
 * r in [90, 360]) to a first octant, where sin or cos of r * pi/180 has only the
 * product's rounding: sindg(180) is 0 and sindg(30) is sin's value at the rounded
 * pi/6, as in SciPy. r is in [0, 90]. */
GA_HD static inline double
ga_sp_sin_deg_q1(double r)
{
    return r > 45.0 ? cos((90.0 - r) * GA_SP_PI_180) : sin(r * GA_SP_PI_180);
}

GA_HD static inline double
ga_sp_sindg(double x)
{
    if (x != x || fabs(x) == (double)INFINITY) {
        return fabs(x) == (double)INFINITY ? 0.0 : x; /* SciPy: 0 at +-inf */
    }
    double sign = x < 0.0 ? -1.0 : 1.0;
    double r = fmod(fabs(x), 360.0);
    if (fabs(x) > GA_SP_DEG_LOSS) {
        return 0.0;
    }
    if (r >= 180.0) {
        r -= 180.0;
        sign = -sign;
    }
    if (r > 90.0) {
        r = 180.0 - r;
    }
    return sign * ga_sp_sin_deg_q1(r);
}

GA_HD static inline double
ga_sp_cosdg(double x)
{
    if (x != x || fabs(x) == (double)INFINITY) {
        return fabs(x) == (double)INFINITY ? 0.0 : x;
    }
    if (fabs(x) > GA_SP_DEG_LOSS) {
        return 0.0;
    }
    double r = fmod(fabs(x), 360.0);
    if (r > 180.0) {
        r = 360.0 - r;
    }
    /* cos(r) = sin(90 - r); for r in (90, 180] it is -sin(r - 90) */
    return r > 90.0 ? -ga_sp_sin_deg_q1(r - 90.0) : ga_sp_sin_deg_q1(90.0 - r);
}

/* tan of degrees (cot = 0) or cot (cot = 1): the period is 180, folded exactly onto
 * [0, 90] (r -> 180 - r flips the sign); there tan(r) is tan(r pi/180) below 45 and
 * 1 / tan((90 - r) pi/180) above (90 - r is exact for r >= 45), cot the other way
 * round, so that next to a pole the small angle keeps every digit. SciPy's poles are
 * +inf whatever the side (tandg(90), tandg(-90), cotdg(0), cotdg(-0)). */
GA_HD static inline double
ga_sp_tancot_deg(double x, int cot)
{
    if (x != x || fabs(x) == (double)INFINITY) {
        return fabs(x) == (double)INFINITY ? 0.0 : x;
    }
    if (fabs(x) > GA_SP_DEG_LOSS) {
        return 0.0;
    }
    double sign = x < 0.0 ? -1.0 : 1.0;
    double r = fmod(fabs(x), 180.0);
    if (r > 90.0) {
        r = 180.0 - r; /* exact */
        sign = -sign;
    }
    if (r == (cot ? 0.0 : 90.0)) {
        return ga_sp_inf();
    }
    if (r == 45.0) {
        return sign;
    }
    double t;
    if ((r < 45.0) != (cot != 0)) {
        t = tan((cot ? 90.0 - r : r) * GA_SP_PI_180);
    }
    else {
        t = 1.0 / tan((cot ? r : 90.0 - r) * GA_SP_PI_180);
    }
    return t == (double)INFINITY ? t : sign * t;
}

GA_HD static inline double
ga_sp_tandg(double x)
{
    return ga_sp_tancot_deg(x, 0);
}

GA_HD static inline double
ga_sp_cotdg(double x)
{
    return ga_sp_tancot_deg(x, 1);
}

/* The Box-Cox transform (x^l - 1) / l as expm1(l log x) / l, which keeps its digits
 * where l log x is small; log x at l = 0 (and below SciPy's cut |l| < 1e-19, where
 * the two agree to the last bit) */
GA_HD static inline double
ga_sp_boxcox_of_log(double lx, double l)
{
    if (fabs(l) < 1e-19) {
        return lx;
    }
    return expm1(l * lx) / l;
}

GA_HD static inline double
ga_sp_boxcox(double x, double l)
{
    return ga_sp_boxcox_of_log(log(x), l);
}

/* boxcox(1 + x, l) with log1p(x); where log1p(x) is tiny the transform is log1p(x)
 * itself (l log1p(x) would underflow in expm1's argument) */
GA_HD static inline double
ga_sp_boxcox1p(double x, double l)
{
    double lx = log1p(x);
    if (fabs(lx) < 1e-289 && fabs(l) < 1e273) {
        return lx;
    }
    return ga_sp_boxcox_of_log(lx, l);
}

/* log1p(l y), also where the product overflows (log|l| + log|y| then: 1 is nothing
 * beside it), so that (1 + l y)^(1/l) stays finite for a large l */
GA_HD static inline double
ga_sp_log1p_product(double l, double y)
{
    double ly = l * y;
    return fabs(ly) == (double)INFINITY && ly > 0.0 ? log(fabs(l)) + log(fabs(y))
                                                     : log1p(ly);
}

/* the inverses: (1 + l y)^(1/l) (minus 1 for inv_boxcox1p) through log1p, exp and
 * expm1, exp(y) (expm1(y)) at l = 0 */
GA_HD static inline double
ga_sp_inv_boxcox(double y, double l)
{
    if (l == 0.0) {
        return exp(y);
    }
    return exp(ga_sp_log1p_product(l, y) / l);
}

GA_HD static inline double
ga_sp_inv_boxcox1p(double y, double l)
{
    if (l == 0.0) {
        return expm1(y);
    }
    if (fabs(l * y) < 1e-154) { /* log1p(l y) / l is y to the last bit */
        return y;
    }
    return expm1(ga_sp_log1p_product(l, y) / l);
}

/* Huber's loss: r^2 / 2 inside |r| <= delta, delta (|r| - delta / 2) outside; inf for
 * a negative delta, as SciPy */
GA_HD static inline double
ga_sp_huber(double delta, double r)
{
    if (delta < 0.0) {
        return ga_sp_inf();
    }
    if (fabs(r) <= delta) {
        return 0.5 * r * r;
    }
    return delta * (fabs(r) - 0.5 * delta);
}

/* The pseudo-Huber loss delta^2 (sqrt(1 + (r/delta)^2) - 1), written as
 * r^2 / (sqrt(1 + t) + 1) with t = (r/delta)^2: no cancellation for small r/delta;
 * past |r/delta| = 1e8, t overflows first, and delta |r| - delta^2 is the value to
 * the last bit */
GA_HD static inline double
ga_sp_pseudo_huber(double delta, double r)
{
    if (delta < 0.0) {
        return ga_sp_inf();
    }
    if (delta == 0.0 || r == 0.0) {
        return 0.0;
    }
    if (delta == (double)INFINITY) {
        return ga_sp_nan(); /* SciPy's value (its formula's inf * 0) */
    }
    double v = r / delta;
    if (fabs(v) > 1e8) {
        return delta * (fabs(r) - delta);
    }
    return r * r / (sqrt(1.0 + v * v) + 1.0);
}

#endif
