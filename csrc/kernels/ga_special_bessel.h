/* ga_special_bessel.h: the modified Bessel functions of the first kind of orders 0 and
 * 1 (i0, i1) and their exponentially scaled forms (i0e = exp(-|x|) i0, i1e), in
 * double precision for every device (conventions as in ga_special_erf.h).
 *
 * Method: below |x| = 20, the power series sum (x^2/4)^k / (k! (k+n)!) (A&S 9.6.10),
 * whose terms are all positive, so the sum rounds to a few ulp; its ~45 terms are
 * the price of needing no coefficient tables. From 20 up, Hankel's asymptotic
 * expansion e^x / sqrt(2 pi x) sum (-1)^k a_k(n) / x^k (A&S 9.7.1), whose smallest
 * term there is about e^-40. The scaled forms are what both compute; i0 and i1 apply
 * exp(|x|) in two halves so they overflow where the functions do (|x| ~ 713.99), not
 * where exp does (709.78).
 */
#ifndef GA_SPECIAL_BESSEL_H
#define GA_SPECIAL_BESSEL_H

#include <math.h>

#include "ga_config.h"
#include "ga_special_erf.h"

/* I_n(|x|) by its power series (n = 0 or 1, |x| < 20) */
GA_SP_HEAVY double
ga_sp_bessel_series(int n, double x)
{
    x = fabs(x);
    double q = 0.25 * x * x;
    double term = n == 0 ? 1.0 : 0.5 * x, sum = term;
    for (int k = 1; k < 200; k++) {
        term *= q / ((double)k * (double)(k + n));
        sum += term;
        if (term < sum * 1e-17) {
            break;
        }
    }
    return sum;
}

/* exp(-|x|) I_n(|x|) for n = 0 or 1 and finite x */
GA_SP_HEAVY double
ga_sp_bessel_ie(int n, double x)
{
    x = fabs(x);
    if (x < 20.0) {
        return ga_sp_bessel_series(n, x) * exp(-x);
    }
    double mu = 4.0 * n * n, term = 1.0, sum = 1.0;
    for (int k = 1; k < 40; k++) {
        double odd = 2.0 * k - 1.0;
        term *= -(mu - odd * odd) / (8.0 * k * x);
        sum += term;
        if (fabs(term) < sum * 1e-17) {
            break;
        }
    }
    return sum / sqrt(2.0 * GA_SP_PI * x);
}

GA_SP_HEAVY double
ga_sp_i0e(double x)
{
    if (x != x) {
        return x;
    }
    return fabs(x) == (double)INFINITY ? 0.0 : ga_sp_bessel_ie(0, x);
}

GA_SP_HEAVY double
ga_sp_i1e(double x)
{
    if (x != x) {
        return x;
    }
    if (fabs(x) == (double)INFINITY) {
        return copysign(0.0, x);
    }
    return copysign(ga_sp_bessel_ie(1, x), x);
}

/* i0, i1: the scaled value times exp(|x|), in two halves (see the header) */
GA_SP_HEAVY double
ga_sp_i0(double x)
{
    if (x != x || fabs(x) == (double)INFINITY) {
        return fabs(x);
    }
    if (fabs(x) < 20.0) {
        return ga_sp_bessel_series(0, x);
    }
    double h = exp(0.5 * fabs(x));
    return ga_sp_bessel_ie(0, x) * h * h;
}

GA_SP_HEAVY double
ga_sp_i1(double x)
{
    if (x != x || fabs(x) == (double)INFINITY) {
        return x;
    }
    if (fabs(x) < 20.0) {
        return copysign(ga_sp_bessel_series(1, x), x);
    }
    double h = exp(0.5 * fabs(x));
    return copysign(ga_sp_bessel_ie(1, x) * h * h, x);
}

#endif
