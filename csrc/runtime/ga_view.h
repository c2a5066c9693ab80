/* ga_view.h: new views of an array's storage (no data moves), and the few shape
 * functions that need a copy (reshape when the strides do not allow a view, concat).
 *
 * Every function fills `out` with a new reference to a storage (release it with
 * ga_array_release); on error `out` is left untouched and holds nothing.
 * Axes are given as NumPy does: negative values count from the end.
 */
#ifndef GA_VIEW_H
#define GA_VIEW_H

#include "ga_array.h"

#ifdef __cplusplus
extern "C" {
#endif

/* axis in [-ndim, ndim) -> [0, ndim), else GA_ERR_VALUE ("axis 3 is out of bounds
 * for array of dimension 2"). */
int ga_normalize_axis(int64_t axis, int ndim, int *out);

/* A fresh C-contiguous copy of x on x's device (never a view). */
int ga_copy_new(const ga_array *x, ga_array *out);

/* reshape: `shape` may hold one -1 (any negative, as in NumPy; inferred). copy: -1 = a view when the strides
 * allow it, else a copy; 0 = never copy (GA_ERR_VALUE when a copy is needed);
 * 1 = always copy. */
int ga_view_reshape(const ga_array *x, int ndim, const int64_t *shape, int copy,
                    ga_array *out);

/* Reorder the axes: out.shape[i] = x.shape[axes[i]]; axes is a permutation. */
int ga_view_permute(const ga_array *x, int naxes, const int64_t *axes, ga_array *out);

/* Drop the given length-1 axes (axes == NULL: every length-1 axis). */
int ga_view_squeeze(const ga_array *x, int naxes, const int64_t *axes, ga_array *out);

/* Insert length-1 axes at the given positions of the result (ndim + naxes dims). */
int ga_view_expand_dims(const ga_array *x, int naxes, const int64_t *axes, ga_array *out);

/* Reverse the order of elements along the given axes (axes == NULL: all), a view
 * with negative strides. */
int ga_view_flip(const ga_array *x, int naxes, const int64_t *axes, ga_array *out);

/* A read-only-in-spirit broadcast view of x with `shape` (stride 0 along broadcast
 * axes). GA_ERR_SHAPE when x cannot be broadcast to shape. */
int ga_view_broadcast_to(const ga_array *x, int ndim, const int64_t *shape, ga_array *out);

/* Join arrays along an existing axis into a new array on their (common) device, with
 * the promoted dtype. n >= 1; every array has the same ndim (>= 1) and the same shape
 * except along `axis`. */
int ga_concat(int n, const ga_array *const *arrays, int64_t axis, ga_array *out);

#ifdef __cplusplus
}
#endif

#endif
