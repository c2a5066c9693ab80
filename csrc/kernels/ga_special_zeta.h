/* ga_special_zeta.h: the scalar math of gpuarr.special's zeta functions: Hurwitz's
 * zeta(s, q), Riemann's zeta(s) and zetac(s) = zeta(s) - 1 (polygamma is made of
 * zeta and digamma in python/gpuarr/special.py, as SciPy makes it), in double
 * precision for every device.
 *
 * Conventions as in ga_special_erf.h (double in, double out; SciPy 1.17's special
 * values; methods cited at each function, the code written here; accuracy in
 * docs/special.md). Loops have fixed caps, so a kernel thread always finishes.
 */
#ifndef GA_SPECIAL_ZETA_H
#define GA_SPECIAL_ZETA_H

#include <math.h>

#include "ga_config.h"
#include "ga_special_erf.h"
#include "ga_special_gamma.h"

/* The Euler-Maclaurin tail of sum_k (q + k)^-s from a = q + N on:
 * a^(1-s)/(s-1) + a^-s/2 + sum_j B_2j/(2j)! s (s+1)...(s+2j-2) a^(-s-2j+1)
 * (Abramowitz & Stegun 23.1.30). Each term is about (s + 2j)^2 / (2 pi a)^2 of the
 * one before; the caller makes a >= 0.75 (s + 24), where that is below 1/20 for
 * j <= 12, so twelve reach 2^-53. The coefficients B_2j/(2j)! are written out
 * (Bernoulli numbers: facts; a static table in a __host__ __device__ function would
 * need a memory space). */
GA_SP_HEAVY double
ga_sp_zeta_em_tail(double s, double a)
{
    double w = pow(a, -s), sum = pow(a, 1.0 - s) / (s - 1.0) + 0.5 * w;
    double fac = s * w / a, a2 = 1.0 / (a * a), k = s + 1.0;
    double t;
#define GA_SP_ZETA_EM_STEP(coef)                                                       \
    t = (coef) * fac;                                                                  \
    sum += t;                                                                          \
    if (fabs(t) < GA_SP_EPS * 0.5 * fabs(sum)) {                                       \
        return sum;                                                                    \
    }                                                                                  \
    fac *= k * (k + 1.0) * a2;                                                         \
    k += 2.0;
    GA_SP_ZETA_EM_STEP(0.08333333333333333)
    GA_SP_ZETA_EM_STEP(-0.001388888888888889)
    GA_SP_ZETA_EM_STEP(3.306878306878307e-05)
    GA_SP_ZETA_EM_STEP(-8.267195767195768e-07)
    GA_SP_ZETA_EM_STEP(2.08767569878681e-08)
    GA_SP_ZETA_EM_STEP(-5.284190138687493e-10)
    GA_SP_ZETA_EM_STEP(1.3382536530684679e-11)
    GA_SP_ZETA_EM_STEP(-3.3896802963225827e-13)
    GA_SP_ZETA_EM_STEP(8.586062056277845e-15)
    GA_SP_ZETA_EM_STEP(-2.174868698558062e-16)
    GA_SP_ZETA_EM_STEP(5.5090028283602295e-18)
    GA_SP_ZETA_EM_STEP(-1.3954464685812522e-19)
#undef GA_SP_ZETA_EM_STEP
    return sum;
}

/* Hurwitz's zeta(s, q) = sum_{k >= 0} (q + k)^-s for s > 1: the first terms summed
 * directly (they end the sum where they fall below 2^-53 of it: large s) until
 * q + N >= 0.75 (s + 24), then the Euler-Maclaurin tail. SciPy's values: inf at s = 1
 * and at the poles q = 0, -1, ...; NaN for s < 1, and for q < 0 unless s is an
 * integer (q^-s is not real otherwise). */
GA_SP_HEAVY double
ga_sp_zeta(double s, double q)
{
    /* SciPy's order of the checks: the pole at s = 1, s < 1, the poles of q, NaN */
    if (s == 1.0) {
        return ga_sp_inf();
    }
    if (s < 1.0) {
        return ga_sp_nan();
    }
    if (q <= 0.0 && q == floor(q)) {
        return ga_sp_inf();
    }
    if (s != s || q != q || (q < 0.0 && s != floor(s))) {
        return s + q + ga_sp_nan();
    }
    if (s == (double)INFINITY) {
        return q > 1.0 ? 0.0 : q == 1.0 ? 1.0 : ga_sp_inf();
    }
    if (q == (double)INFINITY) {
        return 0.0;
    }
    double sum = 0.0, a = q;
    double need = 0.75 * (s + 24.0);
    /* the direct part: at most need - q terms, and where they are many (s large)
     * each is e^-(4/3) of the one before or less, so the break comes early */
    for (int k = 0; k < 100000 && (a < need || k < 1); k++) {
        double t = pow(a, -s);
        sum += t;
        a += 1.0;
        if (fabs(t) < GA_SP_EPS * 0.5 * fabs(sum) && a > 0.0) {
            return sum;
        }
    }
    return sum + ga_sp_zeta_em_tail(s, a);
}

/* Riemann's zeta(s) - 1 (zetac), with the sum from k = 2 on for s > 1 (so that the
 * small result keeps its digits); zeta(s) itself is 1 + zetac there. For 0 <= s < 1
 * through Dirichlet's eta(s) = (1 - 2^(1-s)) zeta(s), summed with P. Borwein's
 * acceleration of alternating series ("An efficient algorithm for the Riemann zeta
 * function", 2000, algorithm 2; n = 24 gives an error below 5.8^-24 ~ 1e-18); below
 * -1 the functional equation zeta(s) = 2 (2 pi)^(s-1) sin(pi s / 2) Gamma(1 - s)
 * zeta(1 - s) (A&S 23.2.6). */
GA_SP_HEAVY double
ga_sp_zeta_eta(double s)
{
    /* d_k = n sum_{i <= k} (n + i - 1)! 4^i / ((n - i)! (2i)!), term by term */
    const int n = 24;
    double term = 1.0 / n, d = n * term, dn = 0.0;
    for (int i = 1; i <= n; i++) {
        term *= 4.0 * (n + i - 1) * (n - i + 1) / ((2.0 * i) * (2.0 * i - 1.0));
        dn += term;
    }
    dn = n * (dn + 1.0 / n);
    double sum = 0.0, sign = 1.0;
    term = 1.0 / n;
    for (int k = 0; k < n; k++) {
        sum += sign * (d - dn) * pow(k + 1.0, -s);
        sign = -sign;
        term *= 4.0 * (n + k) * (n - k) / ((2.0 * k + 2.0) * (2.0 * k + 1.0));
        d += n * term;
    }
    return -sum / dn;
}

GA_SP_HEAVY double
ga_sp_riemann_zeta_below1(double s)
{
    if (s >= -1.0) {
        /* 1 - 2^(1-s) as -expm1((1-s) log 2), exact in its small values near s = 1;
         * down to -1 (where the functional equation's zeta(1 - s) nears its pole) the
         * accelerated eta series still converges as fast */
        return ga_sp_zeta_eta(s) / -expm1((1.0 - s) * 0.69314718055994530942);
    }
    if (s == -(double)INFINITY) {
        return ga_sp_nan();
    }
    double r = 1.0 - s, z = 1.0 + ga_sp_zeta(r, 2.0); /* zeta(1 - s), 1 - s > 1 */
    double sn = ga_sp_sinpi(0.5 * s); /* exactly 0 at the trivial zeros -2, -4, ... */
    if (sn == 0.0) {
        return 0.0;
    }
    if (r < 170.0) {
        return 2.0 * pow(2.0 * GA_SP_PI, s - 1.0) * sn * tgamma(r) * z;
    }
    /* Gamma(1 - s) and (2 pi)^(s-1) over- and underflow apart: in logs */
    return 2.0 * sn * z * exp((s - 1.0) * 1.83787706640934548356 + lgamma(r));
}

GA_SP_HEAVY double
ga_sp_zetac(double s)
{
    if (s != s) {
        return s;
    }
    if (s > 1.0) {
        return ga_sp_zeta(s, 2.0);
    }
    if (s == 1.0) {
        return ga_sp_inf();
    }
    return ga_sp_riemann_zeta_below1(s) - 1.0;
}

GA_SP_HEAVY double
ga_sp_riemann_zeta(double s)
{
    if (s != s) {
        return s;
    }
    if (s > 1.0) {
        return 1.0 + ga_sp_zeta(s, 2.0);
    }
    if (s == 1.0) {
        return ga_sp_inf();
    }
    return ga_sp_riemann_zeta_below1(s);
}

#endif
