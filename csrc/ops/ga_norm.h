/* ga_norm.h: vector and matrix norms, composed on the device from reductions and
 * elementwise kernels (the result stays on the input's device). */
#ifndef GA_NORM_H
#define GA_NORM_H

#include <stdint.h>

#include "ga_array.h"

#ifdef __cplusplus
extern "C" {
#endif

/* (sum |x|^ord)^(1/ord) over the axes in `mask`; ord may be +-INFINITY (max/min of
 * |x|) or 0 (count of nonzeros). Integers are computed in float64; the result is
 * real. */
int ga_vector_norm(const ga_array *x, uint32_t mask, int keepdims, double ord, ga_array *out);

/* Matrix norms over the axes (row_axis, col_axis), both normalised and distinct:
 * kind 'f' Frobenius, '1' (ord 1 / -1 by `sign`), 'i' (ord inf / -inf by sign). */
int ga_matrix_norm(const ga_array *x, int row_axis, int col_axis, int keepdims, char kind,
                   int sign, ga_array *out);

#ifdef __cplusplus
}
#endif

#endif
