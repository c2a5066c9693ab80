/* ga_special_gamma.h: the scalar math of gpuarr.special's gamma and beta families
 * (gammaln, digamma, the regularized incomplete gamma and beta functions and their
 * inverses, betaln) and the distributions SciPy builds on them (stdtr, stdtrit,
 * chdtr, chdtrc, chdtri, fdtr, fdtrc, fdtri), in double precision for every device.
 *
 * Conventions as in ga_special_erf.h (double in, double out; SciPy 1.17's special
 * values; methods cited at each function, the code written here; accuracy in
 * docs/special.md). The iterative pieces (series, continued fractions, Newton and
 * Halley steps) have fixed iteration caps, so a kernel thread always finishes.
 */
#ifndef GA_SPECIAL_GAMMA_H
#define GA_SPECIAL_GAMMA_H

#include <math.h>

#include "ga_config.h"
#include "ga_special_erf.h"

#define GA_SP_EPS 1.1102230246251565e-16 /* 2^-53 */
#define GA_SP_TINY 1e-300
#define GA_SP_LN_SQRT2PI 0.91893853320467274178 /* log(sqrt(2 pi)) */

/* gammaln(x) = log|Gamma(x)|: the C library's lgamma (CUDA's on a GPU); -inf at
 * -inf, as SciPy */
GA_SP_HEAVY double
ga_sp_gammaln(double x)
{
    if (x == -(double)INFINITY) {
        return x;
    }
    return lgamma(x);
}

/* The rest of Stirling's series: lgamma(a) - (log sqrt(2 pi) + (a - 1/2) log a - a)
 * for a >= 10 (Abramowitz & Stegun 6.1.41; five terms are below 2^-53 there). */
GA_HD static inline double
ga_sp_stirling_rest(double a)
{
    double z = 1.0 / (a * a);
    return (1.0 / 12.0 - z * (1.0 / 360.0 - z * (1.0 / 1260.0 - z * (1.0 / 1680.0 -
            z * (1.0 / 1188.0))))) / a;
}

/* log1p(t) - t, without the cancellation near 0 (its Taylor series there) */
GA_SP_HEAVY double
ga_sp_log1pmx(double t)
{
    if (fabs(t) < 0.25) {
        double term = t, sum = 0.0;
        for (int k = 2; k < 40; k++) {
            term *= -t;
            double add = term / k;
            sum += add;
            if (fabs(add) < GA_SP_EPS * fabs(sum)) {
                break;
            }
        }
        return sum;
    }
    return log1p(t) - t;
}

/* digamma(x). Near the positive root x0 = 1.4616..., its Taylor series (coefficients
 * (-1)^(n+1) zeta(n+1, x0), computed with mpmath), so that the small values there
 * keep their digits; elsewhere the recurrence psi(x) = psi(x + 1) - 1/x up to 10 and
 * the asymptotic series with Bernoulli numbers (A&S 6.3.18); below 0 the reflection
 * psi(x) = psi(1 - x) - pi cot(pi x) with an exactly reduced cot. */
GA_SP_HEAVY double
ga_sp_digamma(double x)
{
    if (x != x || x == (double)INFINITY) {
        return x;
    }
    if (x == 0.0) {
        return copysign(ga_sp_inf(), -x); /* -inf at +0, +inf at -0, as SciPy */
    }
    double acc = 0.0;
    if (x < 0.0) {
        if (x == floor(x)) {
            return ga_sp_nan(); /* the poles, and -inf */
        }
        acc = -GA_SP_PI * ga_sp_cospi(x) / ga_sp_sinpi(x);
        x = 1.0 - x;
    }
    double d = x - 1.4616321449683622;
    if (fabs(d) < 0.2) {
        d -= 9.549995429965697e-17; /* the root's next 53 bits */
        /* Horner over the 22 coefficients, highest first (no table: a static array
         * in a __host__ __device__ function needs a memory space in CUDA) */
        double s = -0.00016170622091974803;
        s = s * d + 0.00023635601564027053;
        s = s * d + -0.0003454680251063077;
        s = s * d + 0.000504953265834602;
        s = s * d + -0.0007380709389960052;
        s = s * d + 0.0010788252019162967;
        s = s * d + -0.0015769367714301972;
        s = s * d + 0.002305126326734928;
        s = s * d + -0.003369801655439328;
        s = s * d + 0.004926781395729853;
        s = s * d + -0.007204534386356869;
        s = s * d + 0.010538791616612175;
        s = s * d + -0.01542476590494896;
        s = s * d + 0.022597648232218104;
        s = s * d + -0.03316112647484736;
        s = s * d + 0.04880428816414311;
        s = s * d + -0.07219956125645471;
        s = s * d + 0.10782405069126237;
        s = s * d + -0.16394270544240652;
        s = s * d + 0.258499760955651;
        s = s * d + -0.4427631689835921;
        s = s * d + 0.9676722454476212;
        return acc + s * d;
    }
    while (x < 10.0) {
        acc -= 1.0 / x;
        x += 1.0;
    }
    double z = 1.0 / (x * x);
    double tail = z * (1.0 / 12.0 - z * (1.0 / 120.0 - z * (1.0 / 252.0 - z * (1.0 / 240.0 -
                  z * (1.0 / 132.0 - z * (691.0 / 32760.0 - z / 12.0))))));
    return acc + (log(x) - 0.5 / x - tail);
}

/* log(x^a e^-x / Gamma(a)), the prefix of both incomplete gamma functions. For a >= 10
 * in the form a (log1p(t) - t) + log(a)/2 - log sqrt(2 pi) - stirling_rest(a) with
 * t = x/a - 1: a log x - x - lgamma(a) loses |a log x| ulp to cancellation near x = a,
 * where the result is O(log a). */
GA_SP_HEAVY double
ga_sp_igam_logprefix(double a, double x)
{
    if (a < 10.0 || fabs(x - a) > 0.5 * a) {
        /* far from a the result is large, and so may its error be; t would also
         * carry x - a's rounding into log1p(t) near t = -1 */
        return a * log(x) - x - lgamma(a);
    }
    return a * ga_sp_log1pmx((x - a) / a) + 0.5 * log(a) - GA_SP_LN_SQRT2PI -
           ga_sp_stirling_rest(a);
}

/* The regularized incomplete gamma functions P(a, x) (returned) and Q = 1 - P (in
 * *q), each computed directly where it is the smaller: the power series of P for
 * x < a + 1, the continued fraction of Q (Lentz's method) beyond (Numerical Recipes
 * 6.2, Press et al.). */
GA_SP_HEAVY double
ga_sp_igam_pq(double a, double x, double *q)
{
    if (a != a || x != x || a < 0.0 || x < 0.0) {
        *q = ga_sp_nan();
        return *q;
    }
    if (a == 0.0) {
        if (x == 0.0) {
            *q = ga_sp_nan();
            return *q;
        }
        *q = 0.0;
        return 1.0;
    }
    if (x == 0.0) {
        *q = 1.0;
        return 0.0;
    }
    if (x == (double)INFINITY) {
        if (a == (double)INFINITY) {
            *q = ga_sp_nan();
            return *q;
        }
        *q = 0.0;
        return 1.0;
    }
    if (a == (double)INFINITY) {
        *q = 1.0;
        return 0.0;
    }
    double lp = ga_sp_igam_logprefix(a, x);
    if (x < a + 1.0) {
        double term = 1.0 / a, sum = term;
        for (int n = 1; n < 10000; n++) {
            term *= x / (a + n);
            sum += term;
            if (term < sum * GA_SP_EPS) {
                break;
            }
        }
        double p = sum * exp(lp);
        p = p > 1.0 ? 1.0 : p;
        *q = 1.0 - p;
        return p;
    }
    double b = x + 1.0 - a, c = 1.0 / GA_SP_TINY, d = 1.0 / b, h = d;
    for (int i = 1; i < 10000; i++) {
        double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        d = fabs(d) < GA_SP_TINY ? GA_SP_TINY : d;
        c = b + an / c;
        c = fabs(c) < GA_SP_TINY ? GA_SP_TINY : c;
        d = 1.0 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < GA_SP_EPS) {
            break;
        }
    }
    double qq = exp(lp) * h;
    qq = qq > 1.0 ? 1.0 : qq;
    *q = qq;
    return 1.0 - qq;
}

GA_SP_HEAVY double
ga_sp_gammainc(double a, double x)
{
    double q;
    return ga_sp_igam_pq(a, x, &q);
}

GA_SP_HEAVY double
ga_sp_gammaincc(double a, double x)
{
    double q;
    ga_sp_igam_pq(a, x, &q);
    return q;
}

/* The x with P(a, x) = p (and Q(a, x) = q = 1 - p; the caller passes both, each exact
 * where it is the smaller). Deep in the lower tail P ~ x^a / Gamma(a + 1) (relative
 * error O(x)), which is the answer itself below x = 1e-17 and the start otherwise;
 * in the upper tail the start solves Q ~ x^(a-1) e^-x / Gamma(a) by fixed-point steps;
 * between them Numerical Recipes' start (6.2.1: Wilson-Hilferty). Then Newton steps
 * on log P = log p (or log Q = log q, whichever side is the smaller), which stay well
 * scaled in both tails, inside a bracket that a geometric bisection falls back on. */
GA_SP_HEAVY double
ga_sp_igam_solve(double a, double p, double q)
{
    if (a != a || p != p || q != q || a < 0.0 || !(p >= 0.0 && p <= 1.0)) {
        return ga_sp_nan();
    }
    if (p == 0.0) {
        return 0.0;
    }
    if (q == 0.0) {
        return ga_sp_inf();
    }
    if (a == 0.0 || a == (double)INFINITY) {
        return ga_sp_nan();
    }
    int use_q = p > 0.5;
    if (a > 1e15) { /* P(a, x) is the normal CDF of (x - a) / sqrt(a) to O(a^-1/2) */
        return a + sqrt(a) * (use_q ? -ga_sp_ndtri(q) : ga_sp_ndtri(p));
    }
    double x, small = exp((log(p) + lgamma(a + 1.0)) / a);
    if (!use_q && small < 1e-17) {
        return small;
    }
    if (!use_q && small < a) {
        x = small;
    }
    else if (use_q && q < 1e-8) {
        double lq = log(q) + lgamma(a);
        x = a + 1.0 - lq;
        for (int i = 0; i < 4; i++) {
            x = (a - 1.0) * log(x) - lq;
            x = x > 1e-3 ? x : 1e-3;
        }
    }
    else if (a > 1.0) {
        double pp = use_q ? q : p;
        double t = sqrt(-2.0 * log(pp));
        double z = (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t;
        z = use_q ? z : -z;
        double w = 1.0 - 1.0 / (9.0 * a) + z / (3.0 * sqrt(a));
        x = a * w * w * w;
        x = x > 1e-3 ? x : 1e-3;
    }
    else {
        double t = 1.0 - a * (0.253 + a * 0.12);
        x = p < t ? pow(p / t, 1.0 / a) : 1.0 - log1p(-(p - t) / (1.0 - t));
    }
    double lo = 0.0, hi = ga_sp_inf(), target = log(use_q ? q : p);
    for (int it = 0; it < 200; it++) {
        double qx, px = ga_sp_igam_pq(a, x, &qx);
        double r = use_q ? qx : px;
        double f = log(r) - target; /* increasing in x for P, decreasing for Q */
        double fp = use_q ? -f : f;  /* as log P - log p: positive means x too big */
        if (fp > 0.0) {
            hi = x;
        }
        else if (fp < 0.0) {
            lo = x;
        }
        else {
            return x;
        }
        /* d log P / dx = dens / P, d log Q / dx = -dens / Q */
        double slope = exp(ga_sp_igam_logprefix(a, x) - log(x) - log(r));
        double nx = x - (use_q ? -f : f) / slope;
        if (!(nx > lo && nx < hi) || !(slope > 0.0) || slope == (double)INFINITY) {
            nx = hi == (double)INFINITY ? 4.0 * (x > lo ? x : lo) + 1.0
                 : lo > 0.0             ? sqrt(lo * hi)
                                        : 0.0625 * hi;
        }
        if (fabs(nx - x) <= 2.0 * GA_SP_EPS * fabs(nx) ||
            (hi < (double)INFINITY && hi - lo <= 2.0 * GA_SP_EPS * hi)) {
            return nx;
        }
        x = nx;
    }
    return x;
}

GA_SP_HEAVY double
ga_sp_gammaincinv(double a, double y)
{
    return ga_sp_igam_solve(a, y, 1.0 - y);
}

GA_SP_HEAVY double
ga_sp_gammainccinv(double a, double y)
{
    return ga_sp_igam_solve(a, 1.0 - y, y);
}

/* betaln(a, b) = log|B(a, b)|. Where both are >= 10, from Stirling's series (the
 * lgamma sum cancels to a small result there, losing |lgamma(a + b)| ulp); where only
 * a is, lgamma(b) plus lgamma(a) - lgamma(a + b) in the same form; else the lgammas
 * (A&S 6.1.41, 6.2.2). */
GA_SP_HEAVY double
ga_sp_betaln(double a, double b)
{
    if (a == -(double)INFINITY || b == -(double)INFINITY) {
        return ga_sp_inf(); /* SciPy's value, NaN beside it included */
    }
    if (a != a || b != b) {
        return a + b;
    }
    if (a < b) {
        double t = a;
        a = b;
        b = t;
    }
    /* a >= b from here */
    if (a == (double)INFINITY) { /* SciPy's values: B -> 0 for a finite b > 0 */
        return b == (double)INFINITY ? ga_sp_nan() : b > 0.0 ? -ga_sp_inf() : ga_sp_inf();
    }
    if (b >= 10.0) {
        double s = a + b;
        return GA_SP_LN_SQRT2PI - 0.5 * log(b) - (a - 0.5) * log1p(b / a) +
               b * log(b / s) + ga_sp_stirling_rest(a) + ga_sp_stirling_rest(b) -
               ga_sp_stirling_rest(s);
    }
    if (a >= 10.0 && b > 0.0) {
        double s = a + b;
        return lgamma(b) - (a - 0.5) * log1p(b / a) - b * log(s) + b +
               ga_sp_stirling_rest(a) - ga_sp_stirling_rest(s);
    }
    return lgamma(a) + lgamma(b) - lgamma(a + b);
}

/* The continued fraction of I_x(a, b) (Numerical Recipes 6.4, Lentz's method);
 * converges fast for x < (a + 1) / (a + b + 2) */
GA_SP_HEAVY double
ga_sp_betacf(double a, double b, double x)
{
    double qab = a + b, qap = a + 1.0, qam = a - 1.0, c = 1.0;
    double d = 1.0 - qab * x / qap;
    d = fabs(d) < GA_SP_TINY ? GA_SP_TINY : d;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m < 10000; m++) {
        double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = fabs(d) < GA_SP_TINY ? GA_SP_TINY : d;
        c = 1.0 + aa / c;
        c = fabs(c) < GA_SP_TINY ? GA_SP_TINY : c;
        d = 1.0 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = fabs(d) < GA_SP_TINY ? GA_SP_TINY : d;
        c = 1.0 + aa / c;
        c = fabs(c) < GA_SP_TINY ? GA_SP_TINY : c;
        d = 1.0 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < GA_SP_EPS) {
            break;
        }
    }
    return h;
}

/* I_x(a, b), the regularized incomplete beta function (returned), and 1 - I (in *c),
 * given x and xc = 1 - x each computed directly by the caller (stdtr and fdtr have
 * both without a subtraction). The one on the fraction's fast side is computed
 * directly: I_x(a, b), or I_xc(b, a) = 1 - I_x(a, b). The prefix x^a xc^b / B(a, b)
 * goes through logs. */
GA_SP_HEAVY double
ga_sp_ibeta_pair2(double a, double b, double x, double xc, double *c)
{
    if (a != a || b != b || x != x || a < 0.0 || b < 0.0 || x < 0.0 || x > 1.0 ||
        (a == 0.0 && b == 0.0) || (a == (double)INFINITY && b == (double)INFINITY)) {
        *c = ga_sp_nan();
        return *c;
    }
    if (a == 0.0 || b == (double)INFINITY) { /* all the mass at 0 */
        *c = x > 0.0 ? 0.0 : 1.0;
        return 1.0 - *c;
    }
    if (b == 0.0 || a == (double)INFINITY) { /* all the mass at 1 */
        *c = x < 1.0 ? 1.0 : 0.0;
        return 1.0 - *c;
    }
    if (x == 0.0 || xc == 0.0) {
        *c = x == 0.0 ? 1.0 : 0.0;
        return 1.0 - *c;
    }
    double lp = a * log(x) + b * log(xc) - ga_sp_betaln(a, b);
    if (x < (a + 1.0) / (a + b + 2.0)) {
        double i = exp(lp) * ga_sp_betacf(a, b, x) / a;
        i = i > 1.0 ? 1.0 : i;
        *c = 1.0 - i;
        return i;
    }
    double ic = exp(lp) * ga_sp_betacf(b, a, xc) / b;
    ic = ic > 1.0 ? 1.0 : ic;
    *c = ic;
    return 1.0 - ic;
}

/* the same for a given x alone: 1 - x is exact from 1/2 up, and below it the fast
 * side is nearly always I_x's own */
GA_SP_HEAVY double
ga_sp_ibeta_pair(double a, double b, double x, double *c)
{
    return ga_sp_ibeta_pair2(a, b, x, 1.0 - x, c);
}

GA_SP_HEAVY double
ga_sp_betainc(double a, double b, double x)
{
    double c;
    return ga_sp_ibeta_pair(a, b, x, &c);
}

GA_SP_HEAVY double
ga_sp_betaincc(double a, double b, double x)
{
    double c;
    ga_sp_ibeta_pair(a, b, x, &c);
    return c;
}

/* The x with I_x(a, b) = p (and 1 - I = q = 1 - p). Numerical Recipes' start (6.4:
 * A&S 26.5.22 for a, b >= 1, the two power laws otherwise) and Halley steps on the
 * smaller of I - p and (1 - I) - q, inside a bracket that bisection falls back on. */
GA_SP_HEAVY double
ga_sp_ibeta_solve(double a, double b, double p, double q)
{
    if (a != a || b != b || p != p || a <= 0.0 || b <= 0.0 || !(p >= 0.0 && p <= 1.0)) {
        return ga_sp_nan();
    }
    if (p == 0.0) {
        return 0.0;
    }
    if (q == 0.0) {
        return 1.0;
    }
    if (a == (double)INFINITY || b == (double)INFINITY) {
        /* SciPy's values: 0 for a == 1 beside an infinite b, NaN otherwise */
        return a == 1.0 ? 0.0 : ga_sp_nan();
    }
    int use_q = p > 0.5;
    double x;
    /* Deep in a tail I ~ x^a / (a B(a, b)) (or 1 - I ~ (1-x)^b / (b B(a, b))), with
     * relative error O(x): below 1e-17 that is the answer (in logs: p a B underflows) */
    double lbeta0 = ga_sp_betaln(a, b);
    if (!use_q) {
        double small = exp((log(p) + log(a) + lbeta0) / a);
        if (small < 1e-17) {
            return small;
        }
    }
    else {
        double small = exp((log(q) + log(b) + lbeta0) / b);
        if (small < 1e-17) {
            return 1.0 - small;
        }
    }
    if (a >= 1.0 && b >= 1.0) {
        double pp = use_q ? q : p;
        double t = sqrt(-2.0 * log(pp));
        double z = (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t;
        z = use_q ? -z : z;
        double al = (z * z - 3.0) / 6.0;
        double h = 2.0 / (1.0 / (2.0 * a - 1.0) + 1.0 / (2.0 * b - 1.0));
        double w = z * sqrt(al + h) / h -
                   (1.0 / (2.0 * b - 1.0) - 1.0 / (2.0 * a - 1.0)) *
                       (al + 5.0 / 6.0 - 2.0 / (3.0 * h));
        x = a / (a + b * exp(2.0 * w));
    }
    else {
        double lna = log(a / (a + b)), lnb = log(b / (a + b));
        double t = exp(a * lna) / a, u = exp(b * lnb) / b, w = t + u;
        if (p < t / w) {
            x = pow(a * w * p, 1.0 / a);
        }
        else {
            x = 1.0 - pow(b * w * q, 1.0 / b);
        }
    }
    double lo = 0.0, hi = 1.0, lbeta = ga_sp_betaln(a, b);
    if (!(x > lo && x < hi)) {
        x = 0.5;
    }
    for (int it = 0; it < 200; it++) {
        double cx, ix = ga_sp_ibeta_pair(a, b, x, &cx);
        double errp = use_q ? q - cx : ix - p; /* as I - p */
        if (errp > 0.0) {
            hi = x;
        }
        else if (errp < 0.0) {
            lo = x;
        }
        else {
            return x;
        }
        double dens = exp((a - 1.0) * log(x) + (b - 1.0) * log1p(-x) - lbeta);
        double nx;
        if (dens > 0.0 && dens < (double)INFINITY) {
            double u = errp / dens;
            double corr = u * ((a - 1.0) / x - (b - 1.0) / (1.0 - x));
            corr = corr < 1.0 ? corr : 1.0;
            nx = x - u / (1.0 - 0.5 * corr);
        }
        else {
            nx = 0.5 * (lo + hi);
        }
        if (!(nx > lo && nx < hi)) {
            nx = 0.5 * (lo + hi);
        }
        if (fabs(nx - x) <= 4.0 * GA_SP_EPS * fabs(nx) || hi - lo <= GA_SP_EPS * hi) {
            return nx;
        }
        x = nx;
    }
    return x;
}

GA_SP_HEAVY double
ga_sp_betaincinv(double a, double b, double y)
{
    return ga_sp_ibeta_solve(a, b, y, 1.0 - y);
}

/* stdtr(df, t): Student's t CDF, 0.5 I_x(df/2, 1/2) below 0 and 1 minus it above,
 * x = df / (df + t^2) (A&S 26.7.1). x and 1 - x = t^2 / (df + t^2) are both computed
 * directly, so neither side goes through 1 - (something near 1). */
GA_SP_HEAVY double
ga_sp_stdtr(double df, double t)
{
    if (df != df || t != t || df <= 0.0) {
        return ga_sp_nan();
    }
    if (df > 1e17) { /* the t distribution is the normal one to O(1 / df) */
        return ga_sp_ndtr(t);
    }
    if (fabs(t) == (double)INFINITY) {
        return t > 0.0 ? 1.0 : 0.0;
    }
    double t2 = t * t;
    double x = df / (df + t2), z = t2 / (df + t2);
    if (t2 == (double)INFINITY) {
        x = 0.0;
        z = 1.0;
    }
    double c, tail = 0.5 * ga_sp_ibeta_pair2(0.5 * df, 0.5, x, z, &c);
    return t < 0.0 ? tail : 0.5 + 0.5 * c;
}

/* stdtrit(df, p): the t with stdtr(df, t) = p, through the inverse incomplete beta
 * on the same two sides as stdtr */
GA_SP_HEAVY double
ga_sp_stdtrit(double df, double p)
{
    if (df != df || p != p || df <= 0.0 || p < 0.0 || p > 1.0) {
        return ga_sp_nan();
    }
    if (df > 1e17) {
        return ga_sp_ndtri(p);
    }
    if (p == 0.0 || p == 1.0) {
        return p == 0.0 ? -ga_sp_inf() : ga_sp_inf();
    }
    if (p > 0.25 && p < 0.75) {
        if (p == 0.5) {
            return 0.0;
        }
        double c = fabs(2.0 * p - 1.0); /* the central mass, exact */
        double z = ga_sp_ibeta_solve(0.5, 0.5 * df, c, 1.0 - c);
        double t = sqrt(df * z / (1.0 - z));
        return p < 0.5 ? -t : t;
    }
    double tail = p < 0.5 ? p : 1.0 - p; /* 1 - p exact for p >= 1/2 */
    double x = ga_sp_ibeta_solve(0.5 * df, 0.5, 2.0 * tail, 1.0 - 2.0 * tail);
    double t = sqrt(df * (1.0 - x) / x);
    if (x < 1e-250) {
        /* x ~ df / t^2 underflows (or has lost its digits): from I_x(df/2, 1/2) ~
         * x^(df/2) / ((df/2) B(df/2, 1/2)), t = sqrt(df / x), in logs */
        double lx = (log(2.0 * tail) + log(0.5 * df) + ga_sp_betaln(0.5 * df, 0.5)) /
                    (0.5 * df);
        t = exp(0.5 * (log(df) - lx));
    }
    return p < 0.5 ? -t : t;
}

/* chdtr(v, x) = P(v/2, x/2), chdtrc = Q(v/2, x/2): the chi-square CDF and its
 * complement; chdtri(v, p) = 2 Q^-1(v/2, p) */
GA_SP_HEAVY double
ga_sp_chdtr(double v, double x)
{
    return ga_sp_gammainc(0.5 * v, 0.5 * x);
}

GA_SP_HEAVY double
ga_sp_chdtrc(double v, double x)
{
    return ga_sp_gammaincc(0.5 * v, 0.5 * x);
}

GA_SP_HEAVY double
ga_sp_chdtri(double v, double p)
{
    return 2.0 * ga_sp_gammainccinv(0.5 * v, p);
}

/* fdtr(dfn, dfd, x) = I_w(dfn/2, dfd/2) with w = dfn x / (dfd + dfn x), fdtrc its
 * complement; w and 1 - w = dfd / (dfd + dfn x) both computed directly */
GA_SP_HEAVY double
ga_sp_fdtr(double dfn, double dfd, double x)
{
    if (dfn != dfn || dfd != dfd || x != x || dfn <= 0.0 || dfd <= 0.0 || x < 0.0 ||
        dfn == (double)INFINITY || dfd == (double)INFINITY) {
        return ga_sp_nan();
    }
    if (x == (double)INFINITY) {
        return 1.0;
    }
    double c, s = dfd + dfn * x;
    return ga_sp_ibeta_pair2(0.5 * dfn, 0.5 * dfd, dfn * x / s, dfd / s, &c);
}

GA_SP_HEAVY double
ga_sp_fdtrc(double dfn, double dfd, double x)
{
    if (dfn != dfn || dfd != dfd || x != x || dfn <= 0.0 || dfd <= 0.0 || x < 0.0 ||
        dfn == (double)INFINITY || dfd == (double)INFINITY) {
        return ga_sp_nan();
    }
    if (x == (double)INFINITY) {
        return 0.0;
    }
    double c, s = dfd + dfn * x;
    ga_sp_ibeta_pair2(0.5 * dfn, 0.5 * dfd, dfn * x / s, dfd / s, &c);
    return c;
}

/* fdtri(dfn, dfd, p): the x with fdtr(dfn, dfd, x) = p; w = I^-1(p) and
 * 1 - w = I^-1(dfd/2, dfn/2, 1 - p) on the side where each is the smaller */
GA_SP_HEAVY double
ga_sp_fdtri(double dfn, double dfd, double p)
{
    if (dfn != dfn || dfd != dfd || p != p || dfn <= 0.0 || dfd <= 0.0 || p < 0.0 ||
        p > 1.0 || dfn == (double)INFINITY || dfd == (double)INFINITY) {
        return ga_sp_nan();
    }
    double w = ga_sp_ibeta_solve(0.5 * dfn, 0.5 * dfd, p, 1.0 - p);
    if (w > 0.5) {
        double wc = ga_sp_ibeta_solve(0.5 * dfd, 0.5 * dfn, 1.0 - p, p);
        return dfd * w / (dfn * wc);
    }
    return dfd * w / (dfn * (1.0 - w));
}

/* --- Gamma itself and its relatives (gamma, gammasgn, rgamma, loggamma of a real
 * argument, poch, binom) -------------------------------------------------------- */

/* Gamma(x): the C library's tgamma (CUDA's on a GPU): inf at +0, -inf at -0, NaN at
 * the negative integers and -inf, as SciPy */
GA_HD static inline double
ga_sp_gamma(double x)
{
    return tgamma(x);
}

/* the sign of Gamma(x): 1 for x > 0 (and +0), -1 on (-1, 0) (and -0), alternating
 * with floor(x) below; NaN at the poles and -inf, as SciPy */
GA_HD static inline double
ga_sp_gammasgn(double x)
{
    if (x != x) {
        return x;
    }
    if (x > 0.0 || (x == 0.0 && !signbit(x))) {
        return 1.0;
    }
    if (x == 0.0) {
        return -1.0;
    }
    double f = floor(x);
    if (f == x) {
        return ga_sp_nan();
    }
    return fmod(f, 2.0) == 0.0 ? 1.0 : -1.0;
}

/* 1 / Gamma(x): 0 at the poles and at +-inf; 1/tgamma while Gamma is finite,
 * sign / exp(lgamma) beyond (Gamma overflows or underflows there, its reciprocal
 * may not) */
GA_SP_HEAVY double
ga_sp_rgamma(double x)
{
    if (x != x) {
        return x;
    }
    if (fabs(x) == (double)INFINITY || (x <= 0.0 && x == floor(x))) {
        return x == 0.0 ? x : 0.0;
    }
    if (fabs(x) < 170.0) {
        return 1.0 / tgamma(x);
    }
    return ga_sp_gammasgn(x) * exp(-lgamma(x));
}

/* loggamma of a real x: log Gamma(x) for x > 0, inf at 0, NaN below (the result is
 * complex there; SciPy's real loop says NaN) */
GA_HD static inline double
ga_sp_loggamma(double x)
{
    if (x == 0.0) {
        return ga_sp_inf();
    }
    return x < 0.0 ? ga_sp_nan() : lgamma(x);
}

/* log(Gamma(a + m) / Gamma(a)) for a, a + m >= 10, from Stirling's series as betaln
 * does: the difference of two large lgammas would lose their size in ulps */
GA_HD static inline double
ga_sp_lpoch_stirling(double a, double m)
{
    double s = a + m;
    return (a - 0.5) * log1p(m / a) + m * log(s) - m + ga_sp_stirling_rest(s) -
           ga_sp_stirling_rest(a);
}

/* Pochhammer's (a)_m = Gamma(a + m) / Gamma(a). An integer m up to 64 in size is a
 * product of |m| factors (within |m| ulp, exact for integers); otherwise, for
 * positive a and a + m, the gamma ratio while both are finite, Stirling's form in
 * logs past it; at poles: 0 where only a is one (1/Gamma(a) = 0), inf where only
 * a + m is, and the ratio of the two reflected gammas where both are
 * ((a)_m = (-1)^m Gamma(1 - a) / Gamma(1 - a - m)). */
GA_SP_HEAVY double
ga_sp_poch(double a, double m)
{
    if (a != a || m != m) {
        return a + m;
    }
    if (m == 0.0) {
        return 1.0;
    }
    double s = a + m;
    int a_pole = a <= 0.0 && a == floor(a), s_pole = s <= 0.0 && s == floor(s);
    if (fabs(a) == (double)INFINITY || fabs(m) == (double)INFINITY) {
        /* SciPy's values: (inf)_m = inf for m > 0; (-inf)_1 = -inf; 0 (signed as
         * the product) for a negative integer m; (a)_(+-inf) = 0 at the poles of
         * Gamma(a), (a)_inf = inf for a > 0; NaN otherwise */
        if (fabs(a) == (double)INFINITY && fabs(m) == (double)INFINITY) {
            return ga_sp_nan();
        }
        if (fabs(m) == (double)INFINITY) {
            return a_pole ? 0.0 : a > 0.0 && m > 0.0 ? m : ga_sp_nan();
        }
        if (m < 0.0 && m == floor(m)) {
            return fmod(m, 2.0) == 0.0 || a > 0.0 ? 0.0 : -0.0;
        }
        return a > 0.0 && m > 0.0 ? a : m == 1.0 ? a : ga_sp_nan();
    }
    if (a_pole && s_pole && m != floor(m)) {
        return ga_sp_nan(); /* a + m rounded onto a pole: SciPy's NaN */
    }
    if (m == floor(m) && fabs(m) <= 64.0) {
        /* the product has a zero factor where only a + m is a pole (inf, the sign of
         * the zero), none where both are (their ratio), one where only a is (0) */
        double r = 1.0;
        if (m > 0.0) {
            for (int k = 0; k < (int)m; k++) {
                r *= a + k;
            }
            return r;
        }
        for (int k = 1; k <= (int)-m; k++) {
            r *= a - k;
        }
        return r == 0.0 ? ga_sp_inf() : 1.0 / r;
    }
    if (a_pole || s_pole) {
        if (a_pole && s_pole) { /* m is an integer here, and large */
            double sign = fmod(m, 2.0) == 0.0 ? 1.0 : -1.0;
            return sign * exp(lgamma(1.0 - a) - lgamma(1.0 - s));
        }
        return a_pole ? 0.0 : ga_sp_inf();
    }
    if (a > 0.0 && s > 0.0) {
        if (a < 170.0 && s < 170.0) {
            return tgamma(s) / tgamma(a);
        }
        if (a >= 10.0 && s >= 10.0) {
            return exp(ga_sp_lpoch_stirling(a, m));
        }
    }
    double g = fabs(s) < 170.0 && fabs(a) < 170.0 ? tgamma(s) * ga_sp_rgamma(a)
                                                  : ga_sp_nan();
    if (g == g && fabs(g) < (double)INFINITY && g != 0.0) {
        return g;
    }
    return ga_sp_gammasgn(s) * ga_sp_gammasgn(a) * exp(lgamma(s) - lgamma(a));
}

/* The binomial coefficient of real n and k, Gamma(n + 1) / (Gamma(k + 1)
 * Gamma(n - k + 1)), as SciPy defines it: NaN for a negative integer n; for an
 * integer k of the smaller side under 20 (k -> n - k when n is a nonnegative
 * integer) the product of k factors (n - k + i) / i; 0 for a negative integer k;
 * otherwise 1 / ((n + 1) B(n - k + 1, k + 1)) through betaln where the beta's
 * arguments are positive, and the gammas with their signs where they are not. */
GA_SP_HEAVY double
ga_sp_binom(double n, double k)
{
    if (n != n || k != k) {
        return n + k;
    }
    if (n < 0.0 && n == floor(n)) {
        return ga_sp_nan();
    }
    if (k == floor(k) && fabs(k) < 1e15) {
        double kk = k;
        if (n == floor(n) && n >= 0.0 && kk > 0.5 * n) {
            kk = n - kk;
        }
        if (kk < 0.0) {
            return 0.0;
        }
        if (kk < 20.0) {
            double r = 1.0;
            for (int i = 1; i <= (int)kk; i++) {
                r *= (n - (kk - i)) / i; /* the factor n - j, j exact: n itself last */
            }
            return r;
        }
    }
    if (fabs(k) == (double)INFINITY || fabs(n) == (double)INFINITY) {
        return ga_sp_nan(); /* SciPy's value */
    }
    double a = n - k + 1.0, b = k + 1.0;
    if (n + 1.0 > 0.0 && a > 0.0 && b > 0.0) {
        return exp(-log(n + 1.0) - ga_sp_betaln(a, b));
    }
    if (n < 0.0 && b > 0.0) {
        /* the reflection Gamma(z) = pi / (sin(pi z) Gamma(1 - z)) of Gamma(n + 1) and
         * Gamma(n - k + 1) leaves positive arguments only: binom(n, k) =
         * sin(pi (n - k + 1)) / sin(pi (n + 1)) / ((k - n) B(k + 1, -n)) */
        /* sin(pi (n - k + 1)) from the fractional parts, each exact, so that the
         * rounding of n - k does not count where the sine is near a zero */
        double fn = floor(n), fk = floor(k), r = (n - fn) - (k - fk);
        double sa = fmod(fn - fk + 1.0, 2.0) == 0.0 ? ga_sp_sinpi(r) : -ga_sp_sinpi(r);
        return sa / ga_sp_sinpi(n + 1.0) * exp(-log(k - n) - ga_sp_betaln(b, -n));
    }
    if ((a <= 0.0 && a == floor(a)) || (b <= 0.0 && b == floor(b))) {
        return 0.0; /* a pole of Gamma(k + 1) or Gamma(n - k + 1) in the denominator */
    }
    return ga_sp_gammasgn(n + 1.0) * ga_sp_gammasgn(a) * ga_sp_gammasgn(b) *
           exp(lgamma(n + 1.0) - lgamma(a) - lgamma(b));
}

#endif
