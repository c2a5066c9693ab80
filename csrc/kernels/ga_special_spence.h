/* ga_special_spence.h: Spence's function spence(x) = int_1^x log t / (1 - t) dt =
 * Li2(1 - x), the dilogarithm at 1 - x, for real x >= 0, in double precision for every
 * device (conventions as in ga_special_erf.h).
 *
 * Method: the dilogarithm's series Li2(y) = sum y^k / k^2, only ever for 0 <= y <= 1/2
 * (at most 50 terms, all positive), reached through its reflection and inversion
 * identities (Lewin, Polylogarithms and Associated Functions, 1981, 1.11-1.12),
 * written in x so that 1 - x is formed only where it is exact (1/2 <= x <= 2):
 *   0 <= x < 1/2:  pi^2/6 - log x log(1 - x) - Li2(x)
 *   1/2 <= x <= 1: Li2(1 - x)
 *   1 < x <= 2:    -Li2((x - 1)/x) - log(x)^2 / 2
 *   x > 2:         -pi^2/6 - log(x - 1)^2 / 2 + Li2(1/x) + log(x/(x - 1))^2 / 2
 * Next to x = 1 (its root) spence(x) ~ 1 - x, kept to a few ulp.
 */
#ifndef GA_SPECIAL_SPENCE_H
#define GA_SPECIAL_SPENCE_H

#include <math.h>

#include "ga_config.h"
#include "ga_special_erf.h"

#define GA_SP_PI2_6 1.64493406684822643647 /* pi^2 / 6 */

/* Li2(y) for 0 <= y <= 1/2 by its series */
GA_SP_HEAVY double
ga_sp_li2_series(double y)
{
    double p = y, sum = y;
    for (int k = 2; k < 80; k++) {
        p *= y;
        double add = p / ((double)k * k);
        sum += add;
        if (add < 1e-17 * sum) {
            break;
        }
    }
    return sum;
}

/* spence(x): NaN below 0 and at NaN, pi^2/6 at 0, -inf at inf */
GA_SP_HEAVY double
ga_sp_spence(double x)
{
    if (x != x || x < 0.0) {
        return ga_sp_nan();
    }
    if (x == 0.0) {
        return GA_SP_PI2_6;
    }
    if (x < 0.5) {
        return GA_SP_PI2_6 - log(x) * log1p(-x) - ga_sp_li2_series(x);
    }
    if (x <= 1.0) {
        return ga_sp_li2_series(1.0 - x);
    }
    if (x <= 2.0) {
        double l = log(x);
        return -ga_sp_li2_series((x - 1.0) / x) - 0.5 * l * l;
    }
    if (x == (double)INFINITY) {
        return -x;
    }
    double l1 = log(x - 1.0), l2 = log1p(1.0 / (x - 1.0)); /* log(x / (x - 1)) */
    return -GA_SP_PI2_6 - 0.5 * l1 * l1 + ga_sp_li2_series(1.0 / x) + 0.5 * l2 * l2;
}

#endif
