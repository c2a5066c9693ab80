/* ga_special_elliptic.h: the complete elliptic integral of the first kind K(m)
 * (ellipk) and K(1 - p) (ellipkm1, accurate next to m = 1, where 1 - m would round),
 * in double precision for every device (conventions as in ga_special_erf.h).
 *
 * Method: Gauss's arithmetic-geometric mean, K(m) = pi / (2 AGM(1, sqrt(1 - m)))
 * (Abramowitz & Stegun 17.6): each step is a mean and a square root, so the result is
 * within a few ulp, and the mean converges quadratically (about 5 steps for
 * 0 <= m < 0.99, 10 or so next to m = 1 or for m -> -inf).
 */
#ifndef GA_SPECIAL_ELLIPTIC_H
#define GA_SPECIAL_ELLIPTIC_H

#include <math.h>

#include "ga_config.h"
#include "ga_special_erf.h"

/* pi / (2 AGM(1, b)) for finite b > 0 */
GA_SP_HEAVY double
ga_sp_agm_k(double b)
{
    double a = 1.0;
    /* start from the larger mean so that a step never underflows b * a: AGM is
     * symmetric and homogeneous, AGM(1, b) = b AGM(1/b, 1) */
    double scale = 1.0;
    if (b > 1.0) {
        scale = 1.0 / b;
        a = scale;
        b = 1.0;
    }
    for (int i = 0; i < 64 && fabs(a - b) > 1e-16 * a; i++) {
        double m = 0.5 * (a + b);
        b = sqrt(a * b);
        a = m;
    }
    return scale * GA_SP_PI / (a + b);
}

/* ellipkm1(p) = K(1 - p): NaN below 0, inf at 0, 0 at inf */
GA_SP_HEAVY double
ga_sp_ellipkm1(double p)
{
    if (p != p || p < 0.0) {
        return ga_sp_nan();
    }
    if (p == 0.0) {
        return ga_sp_inf();
    }
    if (p == (double)INFINITY) {
        return 0.0;
    }
    return ga_sp_agm_k(sqrt(p));
}

/* ellipk(m) = K(m): NaN above 1, inf at 1, 0 at -inf */
GA_SP_HEAVY double
ga_sp_ellipk(double m)
{
    if (m != m || m > 1.0) {
        return ga_sp_nan();
    }
    return ga_sp_ellipkm1(1.0 - m);
}

#endif
