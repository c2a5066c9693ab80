/* ga_sort.h: sorting along the last axis and binary search, on the array's device.
 *
 * Both hand the backend contiguous rows (a copy first when x is not C-contiguous) and
 * never read data back to the host. A backend without the entry gives
 * GA_ERR_UNSUPPORTED with a message saying what to do instead (every backend has it
 * now: ga_cpu_sort.c for the CPU and simulated GPUs, cuda/k_sort.cu for CUDA).
 */
#ifndef GA_SORT_H
#define GA_SORT_H

#include "ga_array.h"

/* Stable sort of x (ndim >= 1) along its last axis; NaNs last. On success `values`
 * (x's dtype) and/or `indices` (int64, positions within each row) are new arrays of
 * x's shape on x's device; pass NULL for one not wanted. Nothing is left on error. */
int ga_sort_last(const ga_array *x, int descending, ga_array *values, ga_array *indices);

/* Insertion points of `values` (any shape) into the 1-D ascending `sorted` (same
 * dtype, same device): a new int64 array of values' shape in `out`. */
int ga_searchsorted(const ga_array *sorted, const ga_array *values, int right,
                    ga_array *out);

#endif
