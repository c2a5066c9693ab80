/* ga_reduce.h: reductions, scans and the statistics composed from them (mean, var,
 * std), on the device of their input.
 *
 * The core validates axes, picks the result dtype (NumPy 2 rules), handles empty
 * reductions itself (identity or ValueError), allocates the result on the input's
 * device and hands the backend a ga_reduce_desc / ga_scan_desc built directly from the
 * input's strides (strided, negative-stride and broadcast views are never copied).
 * Axes are given as a bit mask (bit i = axis i), built by ga_reduce_axes().
 */
#ifndef GA_REDUCE_H
#define GA_REDUCE_H

#include <stdint.h>

#include "ga_array.h"
#include "ga_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Normalise `naxes` axes (negative ones count from the end) into a mask; naxes < 0
 * means every axis. GA_ERR_INDEX for an axis out of range ("axis 2 is out of bounds
 * for array of dimension 2"), GA_ERR_VALUE for a repeated axis. */
int ga_reduce_axes(int ndim, int naxes, const int64_t *axes, uint32_t *mask);

/* The dtype a reduction produces: dtype >= 0 is the caller's choice (SUM/PROD), else
 * NumPy 2's default (sum of bool/small ints -> int64, of small unsigned -> uint64). */
int ga_reduce_result_dtype(ga_reduce_op op, ga_dtype in, int dtype, ga_dtype *out);

/* out = op over the axes in `mask` of `in`; `dtype` -1 for the default. ARGMAX/ARGMIN
 * take at most one axis (all axes: the flat C-order index). MAX/MIN/ARG* of an empty
 * reduction are GA_ERR_VALUE. */
int ga_reduce(ga_reduce_op op, const ga_array *in, uint32_t mask, int keepdims, int dtype,
              ga_array *out);

/* Mean, and variance / standard deviation with `correction` (ddof) subtracted from
 * the count. Integers give float64, float16 computes in float32 and returns float16,
 * complex var/std are real. dtype -1 for the default, else a float or complex type. */
int ga_mean(const ga_array *in, uint32_t mask, int keepdims, int dtype, ga_array *out);
int ga_var(const ga_array *in, uint32_t mask, int keepdims, double correction, int dtype,
           int take_sqrt, ga_array *out);

/* Cumulative sum/product along `axis` (already normalised, 0 <= axis < ndim). The
 * result dtype follows sum/prod (int64 for small ints); include_initial prepends the
 * identity along the axis. */
int ga_scan(ga_scan_op op, const ga_array *in, int axis, int dtype, int include_initial,
            ga_array *out);

/* Fill every element of `a` with the real value v (cast to a's dtype), on a's device. */
int ga_fill_value(ga_array *a, double v);

/* out = op(x, y) on x's device through the backend's elementwise entry; y may be NULL
 * for unary ops. `out` must already exist with the right shape; inputs must have the
 * op's loop dtype (see ga_ops.h). Used to compose mean/var/std/norms. */
int ga_elementwise_raw(int op, ga_array *out, const ga_array *x, const ga_array *y);
/* out = op(x, scalar v) with v given as a double in x's dtype. */
int ga_elementwise_scalar(int op, ga_array *out, const ga_array *x, double v);

#ifdef __cplusplus
}
#endif

#endif
