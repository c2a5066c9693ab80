/* ga_special_kernels.h: the elementwise kernels of gpuarr.special's functions, made
 * from core/ga_ops.h's GA_SPECIAL_OPS_WITH list: for each op `name` of arity n,
 * ga_k_<name>_float32 and ga_k_<name>_float64 (the GA_K_SIG contract of
 * ga_elementwise_math.h), each calling ga_sp_<name> of the family headers in double
 * and rounding once on the store. float32 computes in double as SciPy's float32
 * loops do: the iterative functions (incomplete gamma and beta, their inverses) have
 * no float algorithm worth its error analysis, and the result is then the correctly
 * rounded double one. GA_SPECIAL_KERNEL_LIST joins GA_KERNEL_LIST.
 *
 * Included by ga_elementwise_math.h after its loads, stores and GA_K_SIG.
 */
#ifndef GA_SPECIAL_KERNELS_H
#define GA_SPECIAL_KERNELS_H

#include <math.h>

#include "ga_ops.h"
#include "ga_special_bessel.h"
#include "ga_special_bessel2.h"
#include "ga_special_elementary.h"
#include "ga_special_elliptic.h"
#include "ga_special_erf.h"
#include "ga_special_expint.h"
#include "ga_special_gamma.h"
#include "ga_special_hyp.h"
#include "ga_special_spence.h"
#include "ga_special_zeta.h"

/* erf and erfc are the C library's (CUDA's on a GPU), under the family's names */
GA_HD static inline double
ga_sp_erf(double x)
{
    return erf(x);
}

GA_HD static inline double
ga_sp_erfc(double x)
{
    return erfc(x);
}

#define GA_SP_K1(name, dt, T)                                                          \
    GA_K_SIG(name, dt)                                                                 \
    {                                                                                  \
        (void)b;                                                                       \
        (void)c;                                                                       \
        ga_st_##dt(out, (T)ga_sp_##name((double)ga_ld_##dt(a)));                       \
    }
#define GA_SP_K2(name, dt, T)                                                          \
    GA_K_SIG(name, dt)                                                                 \
    {                                                                                  \
        (void)c;                                                                       \
        ga_st_##dt(out, (T)ga_sp_##name((double)ga_ld_##dt(a), (double)ga_ld_##dt(b)));\
    }
#define GA_SP_K3(name, dt, T)                                                          \
    GA_K_SIG(name, dt)                                                                 \
    {                                                                                  \
        ga_st_##dt(out, (T)ga_sp_##name((double)ga_ld_##dt(a), (double)ga_ld_##dt(b),  \
                                        (double)ga_ld_##dt(c)));                       \
    }
#define GA_SP_AS_KDEF(X, E, name, nin)                                                 \
    GA_SP_K##nin(name, float32, float) GA_SP_K##nin(name, float64, double)
GA_SPECIAL_OPS_WITH(GA_SP_AS_KDEF, _)
#undef GA_SP_AS_KDEF
#undef GA_SP_K1
#undef GA_SP_K2
#undef GA_SP_K3

/* the (op, loop dtype) pairs, in GA_KERNEL_LIST's form */
#define GA_SP_AS_KL(X, E, name, nin) X(E, name, GA_FLOAT32, float32) X(E, name, GA_FLOAT64, float64)
#define GA_SPECIAL_KERNEL_LIST(X) GA_SPECIAL_OPS_WITH(GA_SP_AS_KL, X)

#endif
