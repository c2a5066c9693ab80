/* ga_special_bessel2.h: the Bessel functions of the first and second kinds of orders 0
 * and 1 (j0, j1, y0, y1), of the second kind of integer order (yn), and the modified
 * ones of the second kind (k0, k1) with their scaled forms (k0e = exp(x) k0, k1e), in
 * double precision for every device (conventions as in ga_special_erf.h).
 *
 * Methods, chosen to need no coefficient tables (every constant below is a value of
 * the functions' definitions):
 * - J and Y below x = 2: their power series (Abramowitz & Stegun 9.1.10, 9.1.11),
 *   which lose at most two bits there.
 * - J and Y from 2 to 25: Miller's backward recurrence for J_k from an order N well
 *   above x, normalised by 1 = J_0 + 2 sum J_2k (A&S 9.1.46), and Y0, Y1 from the same
 *   J_k by Neumann's series (A&S 9.1.88, 9.1.89).
 * - J and Y from 25 up (and yn wherever x >= n^2 there): Hankel's asymptotic expansion
 *   (A&S 9.2.5 - 9.2.10), whose smallest term there is about e^-50; the phase
 *   x - (n/2 + 1/4) pi is never formed: cos and sin of x itself (the C library's
 *   exact reduction) are combined with the constant phase's exact cos and sin.
 * - K below x = 1: the series of A&S 9.6.13 (all terms of one sign there).
 * - K above 1: the trapezoidal rule on exp(x) K_n(x) = int_0^inf exp(-x (cosh t - 1))
 *   cosh(n t) dt (A&S 9.6.24), which converges geometrically for this analytic
 *   integrand (Trefethen & Weideman, SIAM Review 56, 2014): a step of 0.2 (and
 *   0.6/sqrt(x) for large x, where the bump narrows) keeps the error below 2^-60, in
 *   about 20 terms, all positive.
 * The J and Y errors are absolute (about 2^-53 of the function's envelope), as every
 * method for them short of tables of their zeros: next to a zero the relative error
 * grows (docs/special.md).
 */
#ifndef GA_SPECIAL_BESSEL2_H
#define GA_SPECIAL_BESSEL2_H

#include <math.h>

#include "ga_config.h"
#include "ga_special_erf.h"

#ifndef GA_SP_EULER
#define GA_SP_EULER 0.57721566490153286061 /* Euler's gamma */
#endif

/* J_n (kind 0) or Y_n (kind 1) of x > 0 for n = 0 or 1 by the power series (x < 2):
 * J_n = (x/2)^n sum t_k, t_k = (-x^2/4)^k / (k! (k+n)!); Y0 and Y1 add the harmonic
 * numbers H_k (digamma(k + 1) = H_k - gamma) of A&S 9.1.13 to the same terms. */
GA_SP_HEAVY double
ga_sp_jy_series(int n, int kind, double x)
{
    double q = -0.25 * x * x, lg = log(0.5 * x) + GA_SP_EULER;
    double t = 1.0, sj = 1.0, sy = n == 0 ? 0.0 : -0.5, h = 0.0;
    for (int k = 1; k < 60; k++) {
        t *= q / ((double)k * (double)(k + n));
        double hk = h + 1.0 / k;
        sj += t;
        /* Y0: -sum H_k t_k (k >= 1); Y1: -(1/2) sum (H_k + H_k+1) t_k (k >= 0) */
        sy -= n == 0 ? hk * t : 0.5 * (hk + hk + 1.0 / (k + 1)) * t;
        h = hk;
        if (fabs(t) < 1e-18 * fabs(sj)) {
            break;
        }
    }
    if (n == 0) {
        return kind == 0 ? sj : (2.0 / GA_SP_PI) * (lg * sj + sy);
    }
    double j = 0.5 * x * sj;
    if (kind == 0) {
        return j;
    }
    /* (pi/2) Y1 = -1/x + (log(x/2) + gamma) J1 - (x/2) (1/2) sum (H_k + H_k+1) t_k */
    return (2.0 / GA_SP_PI) * (-1.0 / x + lg * j + 0.5 * x * sy);
}

/* J0 (which 0), J1 (1), Y0 (2) or Y1 (3) for 2 <= x < 25 by Miller's recurrence.
 * J_{k-1} = (2k/x) J_k - J_{k+1} from J_N+1 = 0, J_N = 1 (N even, x + 30 and more:
 * the neglected J_N+1 is then below 2^-60 of the normalisation); the values grow
 * downward by at most e^40 here, so nothing overflows. */
GA_SP_HEAVY double
ga_sp_jy_miller(int which, double x)
{
    int top = 2 * (int)(0.5 * x + 18.0);
    double jk1 = 0.0, jk = 1.0; /* J_{k+1}, J_k for k = top */
    double norm = 0.0, s0 = 0.0, s1 = 0.0, j1 = 0.0;
    for (int k = top; k >= 1; k--) {
        double jm = (2.0 * k / x) * jk - jk1; /* J_{k-1} */
        if ((k & 1) == 0) {
            /* J_k with k = 2m even: the normalisation and Y0's Neumann sum */
            int m = k / 2;
            norm += 2.0 * jk;
            s0 += (m & 1 ? -jk : jk) / m;
        } else if (k >= 3) {
            /* J_k with k = 2m + 1: Y1's Neumann sum (-1)^m (2m + 1) J_2m+1 / (m (m + 1)) */
            int m = (k - 1) / 2;
            s1 += (m & 1 ? -jk : jk) * (double)k / ((double)m * (m + 1));
        }
        if (k == 1) {
            j1 = jk;
        }
        jk1 = jk;
        jk = jm;
    }
    norm += jk; /* + J_0 */
    double j0 = jk / norm, lg = log(0.5 * x) + GA_SP_EULER;
    j1 /= norm;
    switch (which) {
    case 0:
        return j0;
    case 1:
        return j1;
    case 2: /* (pi/2) Y0 = (log(x/2) + gamma) J0 - 2 sum (-1)^m J_2m / m */
        return (2.0 / GA_SP_PI) * (lg * j0 - 2.0 * s0 / norm);
    default: /* (pi/2) Y1 = -J0/x + (log(x/2) + gamma - 1) J1 - sum ... */
        return (2.0 / GA_SP_PI) * (-j0 / x + (lg - 1.0) * j1 - s1 / norm);
    }
}

/* J_n (kind 0) or Y_n (kind 1) by Hankel's expansion, x >= 25 and x >= n^2:
 * sqrt(2/(pi x)) (P cos w - Q sin w), resp. (P sin w + Q cos w), w = x - (2n+1) pi/4.
 * With c = cos x, s = sin x and n mod 4 = r: cos w and sin w are (+-c +-s)/sqrt 2. */
GA_SP_HEAVY double
ga_sp_jy_hankel(double n, int kind, double x)
{
    double mu = 4.0 * n * n, term = 1.0, p = 1.0, q = 0.0;
    for (int k = 1; k < 80; k++) {
        double odd = 2.0 * k - 1.0;
        double next = term * (mu - odd * odd) / (8.0 * k * x);
        if (fabs(next) > fabs(term) && k > 1) {
            break; /* the asymptotic series' terms grow again: stop at the smallest */
        }
        term = next;
        /* a_k / x^k enters P (k even) or Q (k odd) with the sign (-1)^floor(k/2) */
        double v = (k / 2) & 1 ? -term : term;
        if (k & 1) {
            q += v;
        } else {
            p += v;
        }
        if (fabs(term) < 1e-18) {
            break;
        }
    }
    double c = cos(x), s = sin(x);
    /* w = x - pi/4 - r pi/2: cos w, sin w for r = 0 .. 3 (times sqrt 2) */
    double r = fmod(n, 4.0);
    double cw, sw;
    if (r == 0.0) {
        cw = c + s, sw = s - c;
    } else if (r == 1.0) {
        cw = s - c, sw = -(s + c);
    } else if (r == 2.0) {
        cw = -(c + s), sw = c - s;
    } else {
        cw = c - s, sw = s + c;
    }
    double amp = 1.0 / sqrt(GA_SP_PI * x);
    return kind == 0 ? amp * (p * cw - q * sw) : amp * (p * sw + q * cw);
}

/* J_n (kind 0) or Y_n (kind 1), n = 0 or 1, finite x > 0 */
GA_SP_HEAVY double
ga_sp_jy01(int n, int kind, double x)
{
    if (x < 2.0) {
        return ga_sp_jy_series(n, kind, x);
    }
    if (x < 25.0) {
        return ga_sp_jy_miller(2 * kind + n, x);
    }
    return ga_sp_jy_hankel((double)n, kind, x);
}

/* j0, j1: even and odd; 0 at +-inf (their limit; SciPy 1.17 gives NaN there) */
GA_SP_HEAVY double
ga_sp_j0(double x)
{
    if (x != x) {
        return x;
    }
    x = fabs(x);
    if (x == (double)INFINITY) {
        return 0.0;
    }
    return x == 0.0 ? 1.0 : ga_sp_jy01(0, 0, x);
}

GA_SP_HEAVY double
ga_sp_j1(double x)
{
    if (x != x) {
        return x;
    }
    double ax = fabs(x);
    if (ax == (double)INFINITY) {
        return copysign(0.0, x);
    }
    if (ax < 1e-300) {
        return 0.5 * x; /* J1 = x/2 to 2^-1000; the series' x*x would underflow */
    }
    double v = ga_sp_jy01(1, 0, ax);
    return x < 0.0 ? -v : v;
}

/* y0, y1: NaN below 0, -inf at +-0, 0 at +inf (SciPy: NaN) */
GA_HD static inline double
ga_sp_y_edges(double x, int *done)
{
    *done = 1;
    if (x != x || x < 0.0) {
        return ga_sp_nan();
    }
    if (x == 0.0) {
        return -ga_sp_inf();
    }
    if (x == (double)INFINITY) {
        return 0.0;
    }
    *done = 0;
    return 0.0;
}

GA_SP_HEAVY double
ga_sp_y0(double x)
{
    int done;
    double e = ga_sp_y_edges(x, &done);
    return done ? e : ga_sp_jy01(0, 1, x);
}

GA_SP_HEAVY double
ga_sp_y1(double x)
{
    int done;
    double e = ga_sp_y_edges(x, &done);
    return done ? e : ga_sp_jy01(1, 1, x);
}

/* yn(n, x) for integer n (a fractional n is truncated toward 0, as SciPy's does after
 * its warning): Y_-n = (-1)^n Y_n; Hankel's expansion where x >= 25 and x >= n^2, else
 * the forward recurrence Y_k+1 = (2k/x) Y_k - Y_k-1, which is stable for Y (it grows
 * with k), stopped once it overflows (by k ~ 1.4 x + 40 once k > x: at most n steps,
 * as SciPy's). Past the int range (|n| >= 2^31, inf) Y_n(x) overflows for every
 * x < 1.5e9 (n log(2n / (e x)) > 710): -inf there, as SciPy; NaN above (SciPy's loop
 * does not end there). */
GA_SP_HEAVY double
ga_sp_yn(double n, double x)
{
    if (n != n) {
        return n;
    }
    n = trunc(n);
    double sign = 1.0;
    if (n < 0.0) {
        n = -n;
        sign = fmod(n, 2.0) == 0.0 ? 1.0 : -1.0;
    }
    int done;
    double e = ga_sp_y_edges(x, &done);
    if (done) {
        if (x == (double)INFINITY) {
            return n == (double)INFINITY ? ga_sp_nan() : 0.0; /* 0: the limit */
        }
        return x == 0.0 && n != (double)INFINITY ? sign * e : e;
    }
    if (n > 2147483647.0) {
        return x < 1.5e9 ? (n == (double)INFINITY ? e - ga_sp_inf() : -sign * ga_sp_inf())
                         : ga_sp_nan();
    }
    if (n <= 1.0) {
        return sign * ga_sp_jy01((int)n, 1, x);
    }
    if (x >= 25.0 && x >= n * n) {
        return sign * ga_sp_jy_hankel(n, 1, x);
    }
    double ym = ga_sp_jy01(0, 1, x), y = ga_sp_jy01(1, 1, x);
    long top = (long)n;
    for (long k = 1; k < top && fabs(y) <= 1.79e308; k++) {
        double next = (2.0 * (double)k / x) * y - ym;
        ym = y;
        y = next;
    }
    return sign * y;
}

/* K_n(x) (scaled: exp(x) K_n(x) when `scaled`) for n = 0 or 1 and finite x > 0 */
GA_SP_HEAVY double
ga_sp_kn01(int n, int scaled, double x)
{
    if (x <= 1.0) {
        /* A&S 9.6.13 with t_k = (x^2/4)^k / (k! (k+n)!), L = log(x/2) + gamma:
         * K0 = sum t_k (H_k - L); K1 = 1/x + (x/2) sum t_k (L - (H_k + H_k+1)/2) */
        double q = 0.25 * x * x, lg = log(0.5 * x) + GA_SP_EULER;
        double t = 1.0, h = 0.0;
        double sum = n == 0 ? -lg : lg - 0.5;
        for (int k = 1; k < 40; k++) {
            t *= q / ((double)k * (double)(k + n));
            h += 1.0 / k;
            double add = n == 0 ? t * (h - lg) : t * (lg - h - 0.5 / (k + 1));
            sum += add;
            if (fabs(add) < 1e-18 * fabs(sum)) {
                break;
            }
        }
        double kv = n == 0 ? sum : 1.0 / x + 0.5 * x * sum;
        return scaled ? kv * exp(x) : kv;
    }
    /* the trapezoidal rule on exp(x) K_n(x) = int_0^inf exp(-2x sinh^2(t/2)) cosh(nt) dt
     * (cosh t - 1 written so that it does not cancel) */
    double h = fmin(0.2, 0.6 / sqrt(x)), sum = 0.5;
    for (int k = 1; k < 400; k++) {
        double t = k * h, sh = sinh(0.5 * t);
        double f = exp(-2.0 * x * sh * sh);
        if (n == 1) {
            f *= cosh(t);
        }
        sum += f;
        if (f < 1e-19 * sum) {
            break;
        }
    }
    double kv = h * sum;
    return scaled ? kv : kv * exp(-x);
}

/* k0, k1, k0e, k1e: NaN below 0, inf at +-0, 0 at +inf */
GA_HD static inline double
ga_sp_k_edges(double x, int *done)
{
    *done = 1;
    if (x != x || x < 0.0) {
        return ga_sp_nan();
    }
    if (x == 0.0) {
        return ga_sp_inf();
    }
    if (x == (double)INFINITY) {
        return 0.0;
    }
    *done = 0;
    return 0.0;
}

GA_SP_HEAVY double
ga_sp_k0(double x)
{
    int done;
    double e = ga_sp_k_edges(x, &done);
    return done ? e : ga_sp_kn01(0, 0, x);
}

GA_SP_HEAVY double
ga_sp_k0e(double x)
{
    int done;
    double e = ga_sp_k_edges(x, &done);
    return done ? e : ga_sp_kn01(0, 1, x);
}

GA_SP_HEAVY double
ga_sp_k1(double x)
{
    int done;
    double e = ga_sp_k_edges(x, &done);
    return done ? e : ga_sp_kn01(1, 0, x);
}

GA_SP_HEAVY double
ga_sp_k1e(double x)
{
    int done;
    double e = ga_sp_k_edges(x, &done);
    return done ? e : ga_sp_kn01(1, 1, x);
}

#endif
