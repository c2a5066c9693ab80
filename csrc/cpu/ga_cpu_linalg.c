/* ga_cpu_linalg.c: the linalg entry of the CPU and simulated-GPU backends, LAPACK
 * from the OpenBLAS already loaded for BLAS (ga_blas.c).
 *
 * Fortran LAPACK rather than LAPACKE: every routine exists under the Fortran name in
 * each library gpuarr loads (NumPy's ILP64 OpenBLAS, scipy-openblas32, a system
 * liblapack), and LAPACKE's high-level calls would allocate and, for row-major,
 * transpose behind our back. The descriptor is already column-major
 * (ga_linalg_desc), so each matrix goes to LAPACK as it is.
 *
 * Fortran passes every integer by address, so the integer width of the library
 * decides the type of what we point at: the driver below is compiled twice from
 * ga_cpu_linalg_impl.h, with int32_t (LP64) and int64_t (ILP64) integers. Character
 * arguments carry a hidden length after the last argument (gfortran's convention);
 * we pass 1 for each, which a C-translated LAPACK ignores.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ga_blas.h"
#include "ga_cpu.h"
#include "ga_error.h"
#include "ga_linalg_failure.h"

/* one-letter LAPACK type prefix of a dtype, 0 for dtypes LAPACK has no routine for */
static char
lapack_letter(int dtype)
{
    switch ((ga_dtype)dtype) {
    case GA_FLOAT32:
        return 's';
    case GA_FLOAT64:
        return 'd';
    case GA_COMPLEX64:
        return 'c';
    case GA_COMPLEX128:
        return 'z';
    default:
        return 0;
    }
}

/* `letter` + `name` from the loaded library, or a GA_ERR_UNSUPPORTED that says which
 * routine is missing and how to get a LAPACK */
static int
lapack_fn(char letter, const char *name, void **out)
{
    char full[32];
    full[0] = letter;
    strncpy(full + 1, name, sizeof(full) - 2);
    full[sizeof(full) - 1] = '\0';
    const ga_blas_table *t = ga_blas_get();
    *out = ga_blas_lapack_sym(full);
    if (*out == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED, "gpuarr.linalg needs LAPACK on the CPU and %s; "
                        "install NumPy's wheel (its OpenBLAS has LAPACK) or "
                        "scipy-openblas32, or point GPUARR_BLAS at an OpenBLAS",
                        t ? "the loaded BLAS has no LAPACK routine" : "no BLAS is loaded");
    }
    return GA_OK;
}

/* Does a column-major m x n working matrix hold a NaN? gesdd refuses one (info -4,
 * "argument 4"), which NumPy reports as "SVD did not converge"; other LAPACKs and
 * cuSOLVER's gesvd may iterate on it or return NaN, so every device checks first and
 * gives NumPy's LinAlgError. Complex parts are checked as reals; O(mn) next to the
 * factorisation's O(mn min(m, n)). */
static int
matrix_has_nan(int dtype, const char *a, int64_t elements)
{
    int64_t n = elements * ((dtype == GA_COMPLEX64 || dtype == GA_COMPLEX128) ? 2 : 1);
    if (dtype == GA_FLOAT32 || dtype == GA_COMPLEX64) {
        const float *f = (const float *)a;
        for (int64_t i = 0; i < n; i++) {
            if (f[i] != f[i]) {
                return 1;
            }
        }
        return 0;
    }
    const double *f = (const double *)a;
    for (int64_t i = 0; i < n; i++) {
        if (f[i] != f[i]) {
            return 1;
        }
    }
    return 0;
}

#define LINT int32_t
#define LFN(name) name##_lp64
#include "ga_cpu_linalg_impl.h"
#undef LINT
#undef LFN

#define LINT int64_t
#define LFN(name) name##_ilp64
#include "ga_cpu_linalg_impl.h"
#undef LINT
#undef LFN

int
ga_cpu_linalg(int dev, const ga_linalg_desc *d)
{
    (void)dev;
    if (lapack_letter(d->dtype) == 0) {
        return ga_error(GA_ERR_TYPE, "linalg: LAPACK has no routine for %s",
                        ga_dtype_infos[d->dtype].name);
    }
    const ga_blas_table *t = ga_blas_get();
    if (t != NULL && t->ilp64) {
        return run_ilp64(d);
    }
    return run_lp64(d);
}
