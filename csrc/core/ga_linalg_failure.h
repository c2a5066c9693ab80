/* ga_linalg_failure.h: the message of a linalg entry for a matrix that has no answer.
 *
 * ga_backend.h's contract for the `linalg` entry names these texts, and every backend
 * must give the same one (NumPy's LinAlgError texts; tests compare them per device):
 * the CPU and simulated GPUs (cpu/ga_cpu_linalg.c) and the CUDA plugin
 * (cuda/ga_cusolver.cu, compiled by nvcc and, for the emulated plugin, as C++) all
 * take them from here. A static inline function rather than a table in a header: one
 * definition per translation unit, no global to link.
 */
#ifndef GA_LINALG_FAILURE_H
#define GA_LINALG_FAILURE_H

#include "ga_backend.h" /* ga_linalg_op */

#ifdef __cplusplus
extern "C" {
#endif

/* The text for `op` (a ga_linalg_op) when a matrix of the batch has no answer: LU
 * and QR never fail that way, and SVD is the remaining case. */
static inline const char *
ga_linalg_failure_text(int op)
{
    switch (op) {
    case GA_LINALG_SOLVE:
        return "Singular matrix";
    case GA_LINALG_CHOLESKY:
        return "Matrix is not positive definite";
    case GA_LINALG_EIGH:
        return "Eigenvalues did not converge";
    default:
        return "SVD did not converge";
    }
}

#ifdef __cplusplus
}
#endif

#endif
