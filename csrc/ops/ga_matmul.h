/* ga_matmul.h: matrix products (matmul, tensordot, vecdot) and the one function that
 * maps row-major operands onto a column-major BLAS call (ga_gemm_desc).
 *
 * The same plan drives OpenBLAS on the CPU and cuBLAS on GPUs, so the CPU tests check
 * the argument mapping cuBLAS receives.
 */
#ifndef GA_GEMM_H
#define GA_GEMM_H

#include <stdint.h>

#include "ga_array.h"
#include "ga_backend.h"

/* One row-major matrix operand of a batched product. */
typedef struct {
    const char *data;     /* element [0, 0] of batch member 0 */
    int64_t rows, cols;   /* A: m x k, B: k x n, C: m x n */
    int64_t row_stride;   /* bytes between rows (may be anything when rows == 1) */
    int64_t col_stride;   /* bytes between columns */
    int64_t batch_stride; /* bytes between batch members (0: the same matrix) */
} ga_gemm_operand;

#define GA_GEMM_COPY_A 1
#define GA_GEMM_COPY_B 2
#define GA_GEMM_COPY_C 4

#ifdef __cplusplus
extern "C" {
#endif

/* Fill `g` so that a column-major GEMM computes C[i] = A[i] @ B[i] (row-major) for
 * i < batch, with alpha 1, beta 0. Transposed, sliced and batch-broadcast operands
 * are passed without copies whenever one of their strides is 1 element and the other
 * is a valid leading dimension. Otherwise `*need_copy` gets GA_GEMM_COPY_A/B/C for
 * each operand that must first be made C-contiguous (then plan again); g is filled
 * only when *need_copy is 0. GA_ERR_SHAPE for inconsistent sizes. */
int ga_gemm_plan(ga_dtype dtype, const ga_gemm_operand *a, const ga_gemm_operand *b,
                 const ga_gemm_operand *c, int64_t batch, ga_gemm_desc *g, int *need_copy);

/* NumPy's matmul: 1-d operands are promoted to matrices and the added axis removed;
 * batch axes broadcast; dtypes promote (NumPy 2 rules). Result on the operands'
 * device (GA_ERR_MISMATCH if they differ). */
int ga_matmul(const ga_array *a, const ga_array *b, ga_array *out);

/* Sum over pairs of axes: axes_a[i] of a with axes_b[i] of b (n pairs, normalised
 * and checked here); result shape: a's free axes then b's. */
int ga_tensordot(const ga_array *a, const ga_array *b, int n, const int64_t *axes_a,
                 const int64_t *axes_b, ga_array *out);

/* sum(conj(x1) * x2) along `axis` of the broadcast shape (negative counts from the
 * end); both must have the same size there. */
int ga_vecdot(const ga_array *x1, const ga_array *x2, int axis, ga_array *out);

#ifdef __cplusplus
}
#endif

#endif
