/* ga_cast.h: dtype casts of whole arrays (astype, and a view when nothing changes)
 * and NumPy's same_kind casting rule.
 *
 * A cast is a copy through the device's copy loop (ga_copy_same_device), which casts
 * between any two dtypes. The elementwise operations, the reductions, matmul, the FFTs
 * and indexing all cast their operands through here, so none of them calls another
 * for a cast.
 */
#ifndef GA_CAST_H
#define GA_CAST_H

#include "ga_array.h"
#include "ga_dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A new array with x's values cast to `t` (NumPy's unsafe casting), on x's device.
 * Always a new array, also when the dtype is the same. */
int ga_astype(const ga_array *x, ga_dtype t, ga_array *out);

/* x as dtype `t`: a view of x (a new reference) when it already has that dtype, else
 * a cast copy as ga_astype makes. */
int ga_as_dtype(const ga_array *x, ga_dtype t, ga_array *out);

/* NumPy's can_cast(from, to, "same_kind"). */
int ga_can_cast_same_kind(ga_dtype from, ga_dtype to);

#ifdef __cplusplus
}
#endif

#endif
