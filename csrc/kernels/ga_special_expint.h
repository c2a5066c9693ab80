/* ga_special_expint.h: the exponential integrals E1 (exp1), Ei (expi) and E_n of
 * integer order (expn), in double precision for every device (conventions as in
 * ga_special_erf.h).
 *
 * Methods (no coefficient tables):
 * - E_n(x) for x <= 1: its power series (Abramowitz & Stegun 5.1.12 for n, 5.1.11
 *   for E1), whose terms shrink from the first.
 * - E_n(x) for x > 1: the continued fraction of A&S 5.1.22 in its even form (Press et
 *   al., Numerical Recipes 3rd ed., 6.3), evaluated backward from a fixed depth,
 *   times exp(-x).
 * - Ei(x) for x > 0: the series gamma + log x + sum x^k / (k k!) (A&S 5.1.10) up to
 *   x = 40, all terms positive; above, the asymptotic series e^x/x sum k!/x^k (A&S
 *   5.1.51), whose smallest term there is below 2^-56; e^x applied in halves so that
 *   Ei overflows where it does (x ~ 716), not where exp does. Ei(-x) = -E1(x).
 * The series next to Ei's root (x ~ 0.3725) cancels: the error there is absolute.
 */
#ifndef GA_SPECIAL_EXPINT_H
#define GA_SPECIAL_EXPINT_H

#include <math.h>

#include "ga_config.h"
#include "ga_special_erf.h"

#ifndef GA_SP_EULER
#define GA_SP_EULER 0.57721566490153286061 /* Euler's gamma */
#endif

/* E_n(x) for integer n >= 0 and x > 1 by the continued fraction (the even form of
 * A&S 5.1.22: exp(-x) / (x+n- 1n/(x+n+2- 2(n+1)/(x+n+4- ...)))), evaluated from its
 * tail: backward, each step a division of positive numbers, so the rounding does not
 * build up as it does in the forward (Lentz) order next to x = 1 (60 ulp there).
 * Its truncation error falls like exp(-4 sqrt(N x)): 30 + 160/x terms reach 2^-53
 * (measured against mpmath for n = 1 .. 300, x = 1 .. 600). */
GA_SP_HEAVY double
ga_sp_expn_cf(double n, double x)
{
    int top = 30 + (int)(160.0 / x);
    double t = 0.0;
    for (int i = top; i >= 1; i--) {
        t = (double)i * (n - 1.0 + i) / (x + n + 2.0 * i - t);
    }
    return exp(-x) / (x + n - t);
}

/* E_n(x) for integer n >= 1 and 0 < x <= 1 by its series (A&S 5.1.12):
 * E_n(x) = (-x)^(n-1)/(n-1)! (psi(n) - log x) - sum_{k != n-1} (-x)^k / ((k-n+1) k!),
 * psi(n) = -gamma + H_(n-1) */
GA_SP_HEAVY double
ga_sp_expn_series(double n, double x)
{
    double m = n - 1.0, lx = log(x);
    /* psi(n) = -gamma + H_(n-1), needed only for the k = n - 1 term, which is below
     * x^m / m! and so negligible past m = 200 (nor summed then) */
    double psi = -GA_SP_EULER;
    for (int k = 1; k <= m && k <= 200; k++) {
        psi += 1.0 / k;
    }
    /* the k = 0 term: -1/(1 - n), or psi(1) - log x for E1 */
    double sum = m != 0.0 ? 1.0 / m : psi - lx;
    double fact = 1.0; /* (-x)^k / k!, shrinking for x <= 1 */
    for (int k = 1; k < 400; k++) {
        fact *= -x / k;
        double add = k == m ? fact * (psi - lx) : -fact / (k - m);
        sum += add;
        /* stop once this term and every later one (the k = m term included) are
         * below the sum's last bit */
        if (fabs(fact) * (1.0 + fabs(psi - lx)) < 1e-17 * fabs(sum)) {
            break;
        }
    }
    return sum;
}

/* expn(n, x): n truncated toward 0 as SciPy's (NaN past the int range or below 0);
 * NaN for x < 0; at x = 0, 1/(n - 1) (inf for n <= 1); 0 at x = inf */
GA_SP_HEAVY double
ga_sp_expn(double n, double x)
{
    if (n != n || x != x || n < 0.0 || n > 2147483647.0 || x < 0.0) {
        return ga_sp_nan();
    }
    n = trunc(n);
    if (x == 0.0) {
        return n <= 1.0 ? ga_sp_inf() : 1.0 / (n - 1.0);
    }
    if (x == (double)INFINITY) {
        return 0.0;
    }
    if (n == 0.0) {
        return exp(-x) / x;
    }
    if (x > 1.0) {
        return ga_sp_expn_cf(n, x);
    }
    return ga_sp_expn_series(n, x);
}

/* exp1(x) = E1(x): NaN below 0 (its real part is -Ei(-x); SciPy: NaN) */
GA_SP_HEAVY double
ga_sp_exp1(double x)
{
    return ga_sp_expn(1.0, x);
}

/* Ei(x) for x > 0 */
GA_SP_HEAVY double
ga_sp_ei_pos(double x)
{
    if (x <= 40.0) {
        double term = 1.0, sum = 0.0;
        for (int k = 1; k < 200; k++) {
            term *= x / k;
            double add = term / k;
            sum += add;
            if (add < 1e-17 * sum) {
                break;
            }
        }
        return GA_SP_EULER + log(x) + sum;
    }
    double term = 1.0, sum = 1.0;
    for (int k = 1; k < 60; k++) {
        double next = term * k / x;
        if (next > term) {
            break;
        }
        term = next;
        sum += term;
        if (term < 1e-17 * sum) {
            break;
        }
    }
    double h = exp(0.5 * x);
    return (h * (sum / x)) * h;
}

/* expi(x) = Ei(x): -inf at 0, -E1(-x) below 0 (-0 at -inf), inf at inf */
GA_SP_HEAVY double
ga_sp_expi(double x)
{
    if (x != x) {
        return x;
    }
    if (x == 0.0) {
        return -ga_sp_inf();
    }
    if (x < 0.0) {
        return -ga_sp_expn(1.0, -x);
    }
    return x == (double)INFINITY ? x : ga_sp_ei_pos(x);
}

#endif
