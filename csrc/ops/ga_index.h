/* ga_index.h: x[key] and x[key] = value in the core, with NumPy's rules.
 *
 * The binding turns a Python key into a list of ga_key items (ints, slices, None,
 * Ellipsis, integer or bool arrays on x's device, or host data to upload). Basic items
 * (ints, slices, None, Ellipsis) only give views. Integer and bool arrays ("advanced"
 * indices) give copies through the backend's gather/scatter: bool masks become integer
 * indices through nonzero, whose count comes from a SUM reduction read back to the host
 * (one small device-to-host read on a GPU, counted by the ledger).
 *
 * Result shape (NumPy's rule): the index arrays broadcast to one shape B; when the
 * advanced items (ints count as advanced when any array is present) are next to each
 * other in the key, B replaces them in place, otherwise B comes first.
 */
#ifndef GA_INDEX_H
#define GA_INDEX_H

#include "ga_array.h"
#include "ga_backend.h"

typedef enum {
    GA_KEY_INT = 0,
    GA_KEY_SLICE = 1,
    GA_KEY_NEWAXIS = 2,
    GA_KEY_ELLIPSIS = 3,
    GA_KEY_ARRAY = 4 /* integer or bool array on x's device */
} ga_key_kind;

typedef struct {
    int32_t kind;
    int64_t value;             /* INT */
    int64_t start, stop, step; /* SLICE, as PySlice_Unpack gives them (clamped
                                  sentinels for missing bounds) */
    const ga_array *array;     /* ARRAY, borrowed */
    int32_t host;              /* ARRAY: host data (a Python list, a NumPy array) on the
                                  CPU: the core checks its indices on the host, then
                                  copies it to x's device if x is elsewhere */
} ga_key;

#ifdef __cplusplus
extern "C" {
#endif

/* out = x[keys]: a view when every key is basic, else a new array. */
int ga_index_get(const ga_array *x, int nkeys, const ga_key *keys, ga_array *out);

/* x[keys] = value. `value` is an array on x's device (broadcast to the indexed shape,
 * cast to x's dtype), or NULL, and then `scalar` holds one element already in x's
 * dtype. Refuses read-only x. A value that overlaps x is copied first. */
int ga_index_set(ga_array *x, int nkeys, const ga_key *keys, const ga_array *value,
                 const ga_scalar_bytes *scalar);

/* Coordinates of the nonzero elements of x, in C order: an int64 (count, ndim)
 * array on x's device (non-bool x is compared with zero via a cast to bool). */
int ga_nonzero(const ga_array *x, ga_array *out);

/* Elements of x at integer `indices` along `axis` (has_axis 0: of x flattened).
 * `host`: indices is host data on the CPU (as ga_key.host). */
int ga_take(const ga_array *x, const ga_array *indices, int has_axis, int64_t axis,
            int host, ga_array *out);

#ifdef __cplusplus
}
#endif

#endif
