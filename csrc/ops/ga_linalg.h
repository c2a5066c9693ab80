/* ga_linalg.h: the factorisations of gpuarr.linalg (solve, LU, Cholesky, Hermitian
 * eigen, SVD, QR) over batches of matrices (..., M, N).
 *
 * Each function validates (square where it must be, one device, a dtype LAPACK
 * serves), makes a column-major working copy on the input's device (the backends'
 * LAPACK and cuSOLVER are column-major: ga_linalg_desc), hands the backend one
 * descriptor for the whole batch, and returns the results as views of that
 * column-major storage (a transposed view: no copy back). Dtypes as NumPy's linalg:
 * float32, float64, complex64, complex128 stay; integers and bool are computed in
 * float64; float16 is a GA_ERR_TYPE. Real outputs of complex input (eigenvalues,
 * singular values) have the real dtype.
 *
 * Empty batches and 0-sized matrices never reach the backend: the outputs are
 * allocated with their shapes and left as they are (callers fill the identities
 * NumPy returns for an SVD or QR with one zero dimension).
 *
 * A matrix without an answer gives GA_ERR_LINALG (ga_backend.h says which text).
 * On error every output is released.
 */
#ifndef GA_LINALG_H
#define GA_LINALG_H

#include "ga_array.h"

#ifdef __cplusplus
extern "C" {
#endif

/* x = a^-1 b. a: (..., n, n); b: (..., n, k), or (n,) as one vector (the array API's
 * rule: then x is (..., n)); batch axes broadcast. */
int ga_linalg_solve(const ga_array *a, const ga_array *b, ga_array *x);

/* LU with partial pivoting of a (..., n, n): lu holds L (unit diagonal, below) and U
 * (on and above), piv (..., n) int32 the 1-based row swaps. Singular is no error. */
int ga_linalg_lu(const ga_array *a, ga_array *lu, ga_array *piv);

/* a = L L^H: `out` holds L in its lower triangle (upper: U = L^H in its upper
 * triangle); the other triangle is unspecified (the caller zeroes it). */
int ga_linalg_cholesky(const ga_array *a, int upper, ga_array *out);

/* Eigenvalues w (..., n) ascending, real dtype, of the Hermitian a, read from its
 * lower triangle; with `vectors`, v (..., n, n) has the eigenvectors as columns. */
int ga_linalg_eigh(const ga_array *a, int vectors, ga_array *w, ga_array *v);

/* a (..., m, n) = u diag(s) vh; s (..., k) descending, k = min(m, n). mode 0: s only
 * (u, vh untouched); 1: u (..., m, k), vh (..., k, n); 2: u (..., m, m), vh (..., n, n). */
int ga_linalg_svd(const ga_array *a, int mode, ga_array *u, ga_array *s, ga_array *vh);

/* a (..., m, n) = q r: q (..., m, k) (complete: (..., m, m)); r (..., m, n) holds R in
 * its upper triangle, reflectors below (the caller takes triu of its first k rows,
 * or all m when complete). */
int ga_linalg_qr(const ga_array *a, int complete, ga_array *q, ga_array *r);

#ifdef __cplusplus
}
#endif

#endif
