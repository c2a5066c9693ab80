/* ga_fft.h: one-dimensional FFTs along an axis, on the array's device.
 *
 * The core resolves the dtypes (NumPy 2's: float32/float16/complex64 stay single
 * precision, everything else goes to double), moves the axis last, zero-pads or
 * truncates the lines to the transform's input length in a contiguous scratch array,
 * and hands the backend a batch of contiguous lines (ga_fft_desc in ga_backend.h),
 * which cuFFT's cufftPlanMany takes as it is. The normalisation is one elementwise
 * multiply on the device afterwards. No data is read back to the host.
 */
#ifndef GA_FFT_H
#define GA_FFT_H

#include "ga_array.h"
#include "ga_ops.h" /* ga_fft_kind */

#ifdef __cplusplus
extern "C" {
#endif

/* The standard's `norm` argument (values fixed: the binding maps names to them). */
typedef enum {
    GA_FFT_NORM_BACKWARD = 0, /* no scaling forward, 1/n backward */
    GA_FFT_NORM_ORTHO = 1,    /* 1/sqrt(n) both ways */
    GA_FFT_NORM_FORWARD = 2   /* 1/n forward, no scaling backward */
} ga_fft_norm;

/* The transform `kind` (ga_fft_kind: C2C, R2C, C2R) of x along `axis` (negative counts
 * from the end) with n points (n < 0: the axis' length m, or 2 (m - 1) for C2R); for
 * C2C, `inverse` picks the backward transform. The input lines are x's first n
 * elements along the axis (n/2 + 1 for C2R), zero-padded when the axis is shorter.
 * On success `out` is a new array on x's device with x's shape except along `axis`
 * (n, n/2 + 1 or n) and dtype complex64/complex128 (float32/float64 for C2R; float16
 * for C2R of float16 input, as NumPy returns).
 * Errors: GA_ERR_VALUE for n < 1 or a 0-d x, GA_ERR_AXIS, GA_ERR_TYPE for complex
 * input to R2C, GA_ERR_UNSUPPORTED where the backend has no FFT. Nothing is left on
 * error. */
int ga_fft(const ga_array *x, int kind, int inverse, int64_t n, int64_t axis, int norm,
           ga_array *out);

#ifdef __cplusplus
}
#endif

#endif
