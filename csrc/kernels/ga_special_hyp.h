/* ga_special_hyp.h: Kummer's confluent hypergeometric function M(a, b, x) (hyp1f1) and
 * the associated Legendre function P_v^m(x) of integer order m and real degree v
 * (lpmv, the Ferrers function of the first kind with the Condon-Shortley phase, as
 * SciPy's), in double precision for every device (conventions as in
 * ga_special_erf.h).
 *
 * hyp1f1, for real arguments:
 *   - x >= 0: Kummer's series sum_k (a)_k / (b)_k x^k / k! (A&S 13.1.2), summed with a
 *     scale (the sum is kept as v * exp(e)) so that a large sum does not overflow
 *     before a factor exp(x) of Kummer's transformation takes it back; past x = 50,
 *     when its terms decrease at once, the asymptotic expansion for large x
 *     (A&S 13.5.1, the exp(x) term: Gamma(b)/Gamma(a) e^x x^(a-b)
 *     sum_k (b-a)_k (1-a)_k / (k! x^k); the other term is e^-x smaller);
 *   - x < 0: Kummer's transformation M(a, b, x) = e^x M(b - a, b, -x) (A&S 13.1.27),
 *     whose series has terms of one sign when b > 0 and b > a (the direct series
 *     alternates and cancels: M(1, 2, -30) has terms of 1e11 and a sum of 0.03);
 *   - where that series alternates (a < 0) or passes through a small (b)_k (b < 0), it
 *     is summed again in double-double (106 bits), so that a cancellation of up to
 *     1e16 leaves the double's precision (NaN beyond, not a wrong number);
 *   - a a non-positive integer: the series ends (a polynomial, summed directly).
 *
 * lpmv: P_v^m for m >= 0 from the hypergeometric form of the m-th derivative of
 * P_v(x) = F(v + 1, -v; 1; (1 - x)/2) (DLMF 14.3.1 and 14.6.1):
 *   P_v^m(x) = (v+1)_m (-v)_m / (2^m m!) (1 - x^2)^(m/2)
 *              F(v + 1 + m, m - v; m + 1; (1 - x)/2),
 * for degrees v0 + m and v0 + m + 1 (v0 the fractional part of v), then the three-term
 * recurrence in degree (DLMF 14.10.3) up to v, so that the series never has a large
 * degree (whose terms would cancel). A negative degree reflects (P_v = P_{-v-1},
 * DLMF 14.9.5), a negative order through DLMF 14.9.3. The series converges like
 * k^(m-1) z^k in z = (1 - x)/2: slowly next to x = -1, where it is cut off (NaN)
 * after GA_SP_LPMV_TERMS terms (docs/special.md).
 */
#ifndef GA_SPECIAL_HYP_H
#define GA_SPECIAL_HYP_H

#include <math.h>

#include "ga_config.h"
#include "ga_special_erf.h"
#include "ga_special_gamma.h"

/* enough for x up to about 1e5 in the series; past it the asymptotic form applies
 * unless a or b is as large as x, where the function is NaN (docs/special.md) */
#define GA_SP_HYP1F1_TERMS 200000
#define GA_SP_LPMV_TERMS 100000
/* the series' scale step: sums past 1e290 are divided by it, e grows by its log */
#define GA_SP_HYP_BIG 1e290
#define GA_SP_HYP_LOG_BIG 667.7467614837482 /* 290 log(10) */

/* v * exp(e), without overflowing or underflowing exp(e) where the product fits */
GA_SP_HEAVY double
ga_sp_hyp_scaled(double v, double e)
{
    if (e == 0.0 || v == 0.0 || v != v) {
        return v;
    }
    double f = exp(e);
    if (f > 0.0 && f < (double)INFINITY) {
        return v * f;
    }
    return copysign(exp(e + log(fabs(v))), v);
}

/* Kummer's series of M(a, b, y), returned as v with M = v * exp(*e) (*e = 0 unless the
 * sum passed GA_SP_HYP_BIG); NaN if it has not converged within GA_SP_HYP1F1_TERMS */
GA_SP_HEAVY double
ga_sp_hyp1f1_series(double a, double b, double y, double *e)
{
    double sum = 1.0, term = 1.0;
    *e = 0.0;
    for (int k = 0; k < GA_SP_HYP1F1_TERMS; k++) {
        term *= (a + k) / (b + k) * (y / (k + 1));
        sum += term;
        if (term == 0.0) {
            return sum; /* a polynomial: a + k reached 0 */
        }
        /* the tail after this term is below term * r / (1 - r) once the ratio r of
         * consecutive terms is below 1 (it then only falls) */
        double r = fabs((a + k + 1) / (b + k + 1) * (y / (k + 2)));
        if (r < 0.5 && fabs(term) <= 1e-17 * fabs(sum)) {
            return sum;
        }
        if (fabs(sum) > GA_SP_HYP_BIG) {
            sum /= GA_SP_HYP_BIG;
            term /= GA_SP_HYP_BIG;
            *e += GA_SP_HYP_LOG_BIG;
        }
    }
    return ga_sp_nan();
}

/* The asymptotic expansion's M(a, b, y) e^-y for large y > 0 (A&S 13.5.1):
 * Gamma(b)/Gamma(a) y^(a-b) sum_k (b-a)_k (1-a)_k / (k! y^k); *ok = 0 where its terms
 * grow before they reach the double's precision (then the series is used) */
GA_SP_HEAVY double
ga_sp_hyp1f1_asym(double a, double b, double y, int *ok)
{
    double sum = 1.0, term = 1.0;
    *ok = 0;
    for (int k = 0; k < 500; k++) {
        double next = term * ((b - a + k) * (1.0 - a + k) / ((k + 1) * y));
        if (fabs(next) > fabs(term)) {
            return 0.0;
        }
        term = next;
        sum += term;
        if (fabs(term) <= 1e-17 * fabs(sum)) {
            break;
        }
    }
    if (!(fabs(term) <= 1e-17 * fabs(sum))) {
        return 0.0;
    }
    *ok = 1;
    /* the factors one by one where they fit (each within an ulp or two); through
     * logarithms where one overflows (their error then grows with the exponent) */
    double ga = tgamma(a), gb = tgamma(b), p = pow(y, a - b);
    double pre = gb / ga * p;
    if (isfinite(ga) && isfinite(gb) && ga != 0.0 && p > 0.0 && isfinite(p) &&
        isfinite(pre) && pre != 0.0) {
        return pre * sum;
    }
    double sign = ga_sp_gammasgn(a) * ga_sp_gammasgn(b);
    return sign * sum * exp(lgamma(b) - lgamma(a) + (a - b) * log(y));
}

/* M(a, b, y) for y >= 0 as v * exp(*e) */
GA_SP_HEAVY double
ga_sp_hyp1f1_pos(double a, double b, double y, double *e)
{
    int polynomial = a <= 0.0 && a == floor(a);
    if (!polynomial && y > 50.0) {
        int ok;
        double v = ga_sp_hyp1f1_asym(a, b, y, &ok);
        if (ok) {
            *e = y;
            return v;
        }
    }
    return ga_sp_hyp1f1_series(a, b, y, e);
}

/* Double-double numbers (hi + lo, |lo| <= ulp(hi)/2: Dekker's and Knuth's exact sum
 * and product, the product's rounding error from one fma), for the one series below
 * that cancels: written here because the few operations it needs are shorter than a
 * dependency, and they must compile for CUDA as well. */
typedef struct {
    double hi, lo;
} ga_sp_dd;

GA_HD static inline ga_sp_dd
ga_sp_dd_sum(double a, double b)
{
    double s = a + b, bb = s - a;
    ga_sp_dd r = {s, (a - (s - bb)) + (b - bb)};
    return r;
}

GA_HD static inline ga_sp_dd
ga_sp_dd_add(ga_sp_dd x, ga_sp_dd y)
{
    ga_sp_dd s = ga_sp_dd_sum(x.hi, y.hi);
    return ga_sp_dd_sum(s.hi, s.lo + x.lo + y.lo);
}

GA_HD static inline ga_sp_dd
ga_sp_dd_mul(ga_sp_dd x, ga_sp_dd y)
{
    double p = x.hi * y.hi;
    double err = fma(x.hi, y.hi, -p) + (x.hi * y.lo + x.lo * y.hi);
    return ga_sp_dd_sum(p, err);
}

GA_HD static inline ga_sp_dd
ga_sp_dd_div(ga_sp_dd x, ga_sp_dd y)
{
    double q = x.hi / y.hi;
    ga_sp_dd qy = ga_sp_dd_mul(y, ga_sp_dd_sum(q, 0.0));
    double rest = ((x.hi - qy.hi) - qy.lo + x.lo) / y.hi;
    return ga_sp_dd_sum(q, rest);
}

/* Kummer's series for y > 0 and a < 0 not an integer (or b < 0), in double-double: its first
 * terms alternate and cancel (M(-6.06, 0.25, 46.8) = -3.2e12 from terms of 1e19, and
 * the recurrence in a loses as much: M is its smaller solution as a falls), so the
 * terms and the sum carry 106 bits; a cancellation of up to 1e16 still leaves the
 * double's precision. NaN where the sum overflows or has not converged. */
GA_SP_HEAVY double
ga_sp_hyp1f1_series_dd(double a, double b, double y)
{
    ga_sp_dd sum = {1.0, 0.0}, term = {1.0, 0.0};
    ga_sp_dd yy = {y, 0.0};
    double big = 0.0;
    for (int k = 0; k < GA_SP_HYP1F1_TERMS; k++) {
        ga_sp_dd num = ga_sp_dd_mul(ga_sp_dd_sum(a, (double)k), yy);
        ga_sp_dd den = ga_sp_dd_mul(ga_sp_dd_sum(b, (double)k), ga_sp_dd_sum(k + 1.0, 0.0));
        term = ga_sp_dd_div(ga_sp_dd_mul(term, num), den);
        sum = ga_sp_dd_add(sum, term);
        big = fmax(big, fabs(term.hi));
        if (!isfinite(sum.hi)) {
            return ga_sp_nan();
        }
        double r = fabs((a + k + 1) / (b + k + 1) * (y / (k + 2)));
        if (r < 0.5 && fabs(term.hi) <= 1e-17 * fabs(sum.hi)) {
            /* beyond 1e16 the 106 bits no longer leave 53 */
            return big > 1e16 * fabs(sum.hi) ? ga_sp_nan() : sum.hi + sum.lo;
        }
    }
    return ga_sp_nan();
}

/* M(a, b, y) for y > 0 as v * exp(*e), the series' cancelling cases in 106 bits */
GA_SP_HEAVY double
ga_sp_hyp1f1_nonneg(double a, double b, double y, double *e)
{
    double v = ga_sp_hyp1f1_pos(a, b, y, e);
    if (((a < 0.0 && a != floor(a)) || b < 0.0) && *e == 0.0) {
        /* the series took it, and its first terms alternate (a < 0) or grow through
         * a small (b)_k (b < 0): again, in 106 bits */
        return ga_sp_hyp1f1_series_dd(a, b, y);
    }
    return v;
}

/* hyp1f1(a, b, x) = M(a, b, x): inf at b = 0, -1, -2, ... (SciPy's; but 1 - x/b for
 * a = -1), 1 at a = 0 or x = 0, NaN where an argument is NaN or a or x is infinite */
GA_SP_HEAVY double
ga_sp_hyp1f1(double a, double b, double x)
{
    if (a != a || b != b || x != x) {
        return ga_sp_nan();
    }
    if (a == -1.0 && b != 0.0) {
        return 1.0 - x / b; /* SciPy's: before the poles, so M(-1, -1, x) = 1 + x */
    }
    if (b <= 0.0 && b == floor(b)) {
        return ga_sp_inf();
    }
    if (a == 0.0 || x == 0.0) {
        return 1.0;
    }
    if (isinf(a) || isinf(x)) {
        return ga_sp_nan();
    }
    if (isinf(b)) {
        return 1.0; /* every term but the first is 0 */
    }
    if (a == b) {
        return exp(x);
    }
    double e;
    if (x > 0.0) {
        double v = ga_sp_hyp1f1_nonneg(a, b, x, &e);
        return ga_sp_hyp_scaled(v, e);
    }
    /* Kummer's transformation; exp(x) joins the scale so that exp(e + x) is taken
     * once (e and -x cancel exactly in the asymptotic branch, where e = -x) */
    if (a <= 0.0 && a == floor(a) && !(b - a <= 0.0 && b - a == floor(b - a))) {
        /* M(-n, b, x) for x < 0 has terms of one sign when b > 0: sum it directly */
        double v = ga_sp_hyp1f1_series(a, b, x, &e);
        return ga_sp_hyp_scaled(v, e);
    }
    double v = ga_sp_hyp1f1_nonneg(b - a, b, -x, &e);
    return ga_sp_hyp_scaled(v, e + x);
}

/* P_v^m(x) for an integer m >= 0 and |x| <= 1 by the hypergeometric series (header
 * comment); NaN where the series has not converged */
GA_SP_HEAVY double
ga_sp_lpmv_series(double v, int m, double x)
{
    /* (v+1)_m (-v)_m / (2^m m!) (1 - x^2)^(m/2), a factor per step so that neither
     * Pochhammer symbol overflows on its own */
    double s = sqrt((1.0 - x) * (1.0 + x));
    double pre = 1.0;
    for (int j = 0; j < m; j++) {
        pre *= (v + 1.0 + j) * (j - v) / (2.0 * (j + 1)) * s;
    }
    if (pre == 0.0 || !isfinite(pre)) {
        return pre;
    }
    /* in double-double: z = (1 - x)/2 is rounded in double, and the k-th term's
     * z^k carries k times that error (k reaches thousands next to x = -1, where the
     * sum grows as (1 + x)^-m and the recurrence in degree amplifies what is left);
     * the factors v + 1 + m + k and m - v + k are exact in it as well */
    ga_sp_dd z = ga_sp_dd_sum(0.5, -0.5 * x);
    ga_sp_dd sum = {1.0, 0.0}, term = {1.0, 0.0};
    for (int k = 0; k < GA_SP_LPMV_TERMS; k++) {
        ga_sp_dd num =
            ga_sp_dd_mul(ga_sp_dd_sum(v, 1.0 + m + k), ga_sp_dd_sum(-v, (double)(m + k)));
        ga_sp_dd den = ga_sp_dd_sum((double)(m + 1 + k) * (k + 1), 0.0);
        term = ga_sp_dd_mul(ga_sp_dd_div(ga_sp_dd_mul(term, num), den), z);
        sum = ga_sp_dd_add(sum, term);
        if (term.hi == 0.0) {
            return pre * sum.hi; /* an integer degree: a polynomial */
        }
        double kk = k + 1.0;
        double r = fabs((v + 1.0 + m + kk) * (m - v + kk) / ((m + 1.0 + kk) * (kk + 1.0)) * z.hi);
        if (r < 1.0 && fabs(term.hi) * r <= 1e-17 * (1.0 - r) * fabs(sum.hi)) {
            return pre * (sum.hi + sum.lo);
        }
    }
    return ga_sp_nan();
}

/* lpmv(m, v, x) = P_v^m(x): NaN for a fractional m, +-inf at x = -1 for a fractional
 * degree (SciPy's: -inf for m = 0), NaN for |m| or |v| past 2^31 */
GA_SP_HEAVY double
ga_sp_lpmv(double m, double v, double x)
{
    if (m != m || v != v || x != x || m != floor(m) || isinf(m) || isinf(v)) {
        return ga_sp_nan();
    }
    if (fabs(m) >= 2147483647.0 || fabs(v) >= 2147483647.0) {
        return ga_sp_nan();
    }
    if (x == -1.0 && v != floor(v)) {
        return m == 0.0 ? -ga_sp_inf() : ga_sp_inf();
    }
    if (fabs(x) > 1.0) {
        return ga_sp_nan();
    }
    double vx = v < 0.0 ? -v - 1.0 : v;
    int mm = (int)fabs(m);
    int vx_integer = vx == floor(vx);
    if (m < 0.0 && !(vx + m + 1.0 > 0.0 || !vx_integer)) {
        return ga_sp_nan(); /* SciPy's: P_n^-m for m > n integer */
    }
    int nv = (int)vx;
    double v0 = vx - nv;
    double p;
    if (nv > 2 && nv > mm) {
        /* upward in degree from v0 + m and v0 + m + 1 (DLMF 14.10.3) */
        double p0 = ga_sp_lpmv_series(v0 + mm, mm, x);
        double p1 = ga_sp_lpmv_series(v0 + mm + 1.0, mm, x);
        p = p1;
        for (int j = mm + 2; j <= nv; j++) {
            double d = v0 + j;
            p = ((2.0 * d - 1.0) * x * p1 - (d - 1.0 + mm) * p0) / (d - mm);
            p0 = p1;
            p1 = p;
        }
    } else {
        p = ga_sp_lpmv_series(vx, mm, x);
    }
    if (m < 0.0 && isfinite(p)) {
        /* P_v^-m = (-1)^m Gamma(v - m + 1) / Gamma(v + m + 1) P_v^m (DLMF 14.9.3) */
        for (int j = -mm + 1; j <= mm; j++) {
            p /= vx + j;
        }
        if (mm % 2 == 1) {
            p = -p;
        }
    }
    return p;
}

#endif
