/* ga_creation.h: making arrays with their values on the device itself.
 *
 * Every function here writes through the device's backend (elementwise COPY from a
 * scalar operand, `arange`, `random`), so no element crosses from the host: creating
 * a 10^8-element array on a GPU moves a handful of bytes of parameters only.
 * On error, the output array is left released (zeroed) and nothing leaks.
 */
#ifndef GA_CREATION_H
#define GA_CREATION_H

#include "ga_array.h"
#include "ga_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- scalars in a dtype's storage bytes ---------------------------------------------
 */

/* (re, im) converted to `dtype` with NumPy's unsafe-cast rules (float -> int
 * truncates; complex -> real drops the imaginary part; bool is value != 0).
 * GA_ERR_VALUE for NaN or infinity into an integer type; GA_ERR_OVERFLOW for a value
 * out of the integer type's range. */
int ga_scalar_from_double(ga_dtype dtype, double re, double im, ga_scalar_bytes *out);
/* An exact integer: GA_ERR_OVERFLOW when `dtype` cannot hold it (integers); floats
 * round to nearest. `is_unsigned` says v holds a uint64 above INT64_MAX. */
int ga_scalar_from_int(ga_dtype dtype, int64_t v, int is_unsigned,
                       ga_scalar_bytes *out);

/* --- filling ------------------------------------------------------------------------
 */

/* Every element of `a` (any strides) = value (storage bytes in a's dtype). */
int ga_fill(ga_array *a, const ga_scalar_bytes *value);
/* A new C-contiguous array filled with `value` (bytes in `dtype`). */
int ga_full(ga_array *out, ga_device device, ga_dtype dtype, int ndim,
            const int64_t *shape, const ga_scalar_bytes *value);
/* How many elements arange(start, stop, step) has: ceil((stop - start) / step), at
 * least 0, from the integer arguments when `integer` (exact, no overflow) and from the
 * float ones otherwise. GA_ERR_VALUE for a zero step, a non-finite float or a count
 * beyond what any array can hold. */
int ga_arange_count(int integer, double start, double stop, double step, int64_t istart,
                    int64_t istop, int64_t istep, int64_t *n);
/* A new array of n elements, out[i] = start + i * step (see ga_arange_desc). */
int ga_arange(ga_array *out, ga_device device, ga_dtype dtype, int64_t n, double start,
              double step, int64_t istart, int64_t istep);
/* num evenly spaced values from start to stop (the last is stop exactly when
 * endpoint and num > 1), NumPy's linspace for floating and complex dtypes. */
int ga_linspace(ga_array *out, ga_device device, ga_dtype dtype, int64_t num,
                double start, double stop, int endpoint);
/* The n x m matrix with ones on diagonal k (k > 0 above the main diagonal). */
int ga_eye(ga_array *out, ga_device device, ga_dtype dtype, int64_t n, int64_t m,
           int64_t k);

/* --- random numbers -----------------------------------------------------------------
 */

/* The process's one random state: (seed, counter). */
void ga_random_get_state(uint64_t *seed, uint64_t *counter);
void ga_random_set_state(uint64_t seed, uint64_t counter);
/* A new C-contiguous array of random numbers (ga_philox.h's mapping) made on
 * `device`; the counter advances by the number of elements. For INTEGERS, a and b
 * are unused and lo < hi; for UNIFORM (a, b) = (low, high), NORMAL (mean, std). */
int ga_random(ga_array *out, ga_device device, ga_dtype dtype, int dist, int ndim,
              const int64_t *shape, double a, double b, int64_t lo, int64_t hi);

/* --- summaries for printing ---------------------------------------------------------
 */

/* A new C-contiguous array on src's device holding only the corners NumPy shows of
 * a summarised array: along every axis longer than 2 * edge, the first and last
 * `edge` elements. Copies inside the device only (no transfer). */
int ga_summary_gather(const ga_array *src, int64_t edge, ga_array *out);

#ifdef __cplusplus
}
#endif

#endif
