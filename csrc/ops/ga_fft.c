/* ga_fft.c: FFTs along an axis in the core (contract in ga_fft.h). */
#include "ga_fft.h"

#include <math.h>

#include "ga_backend.h"
#include "ga_cast.h"
#include "ga_creation.h"
#include "ga_device.h"
#include "ga_elementwise.h"
#include "ga_error.h"
#include "ga_fault.h"
#include "ga_transfer.h"
#include "ga_view.h"

static const char *
kind_name(int kind, int inverse)
{
    switch (kind) {
    case GA_FFT_R2C:
        return "rfft";
    case GA_FFT_C2R:
        return "irfft";
    default:
        return inverse ? "ifft" : "fft";
    }
}

/* The complex dtype the transform runs in, NumPy 2's choice: single precision
 * stays single (float16 is computed as float32, as NumPy does), the rest (float64,
 * integers, bool) goes to double. */
static int
complex_dtype(const ga_array *x, int kind, int inverse, ga_dtype *out)
{
    ga_dtype t = (ga_dtype)x->dtype;
    if (kind == GA_FFT_R2C && ga_dtype_infos[t].kind == GA_KIND_COMPLEX) {
        return ga_error(
            GA_ERR_TYPE,
            "rfft needs real input, got %s: pass x.real (drop the imaginary "
            "part) or use fft for complex input",
            ga_dtype_infos[t].name);
    }
    (void)inverse;
    switch (t) {
    case GA_COMPLEX64:
    case GA_FLOAT32:
    case GA_FLOAT16:
        *out = GA_COMPLEX64;
        return GA_OK;
    default:
        *out = GA_COMPLEX128;
        return GA_OK;
    }
}

/* buf = x's lines (axis last in x) cut or zero-padded to `len`, in dtype t,
 * C-contiguous, and a scratch copy whenever `own` (the backend may write it). */
static int
input_lines(const ga_array *x, int64_t len, ga_dtype t, int own, ga_array *buf)
{
    int last = x->ndim - 1;
    int64_t m = x->shape[last];
    if (!own && m == len && x->dtype == (int32_t)t) {
        return ga_contiguous(x, buf);
    }
    int64_t shape[GA_MAXDIMS];
    for (int d = 0; d < x->ndim; d++) {
        shape[d] = x->shape[d];
    }
    shape[last] = len;
    if (m < len) {
        ga_scalar_bytes zero = {0};
        GA_TRY(ga_full(buf, ga_array_device(x), t, x->ndim, shape, &zero));
    } else {
        GA_TRY(ga_array_empty(buf, ga_array_device(x), t, x->ndim, shape));
    }
    int64_t keep = m < len ? m : len;
    ga_array src, dst;
    ga_array_view(&src, x);
    ga_array_view(&dst, buf);
    src.shape[last] = keep;
    dst.shape[last] = keep;
    int st = ga_copy_same_device(&dst, &src);
    ga_array_release(&src);
    ga_array_release(&dst);
    if (st != GA_OK) {
        ga_array_release(buf);
    }
    return st;
}

/* The factor `norm` asks for after an unscaled transform of n points. */
static double
norm_scale(int norm, int forward, int64_t n)
{
    switch (norm) {
    case GA_FFT_NORM_ORTHO:
        return 1.0 / sqrt((double)n);
    case GA_FFT_NORM_FORWARD:
        return forward ? 1.0 / (double)n : 1.0;
    default:
        return forward ? 1.0 : 1.0 / (double)n;
    }
}

int
ga_fft(const ga_array *x, int kind, int inverse, int64_t n, int64_t axis, int norm,
       ga_array *out)
{
    const char *name = kind_name(kind, inverse);
    if (kind != GA_FFT_C2C && kind != GA_FFT_R2C && kind != GA_FFT_C2R) {
        return ga_error(GA_ERR_VALUE, "fft: unknown transform kind %d", kind);
    }
    if (norm != GA_FFT_NORM_BACKWARD && norm != GA_FFT_NORM_ORTHO &&
        norm != GA_FFT_NORM_FORWARD) {
        return ga_error(GA_ERR_VALUE, "%s: unknown norm code %d", name, norm);
    }
    if (x->ndim == 0) {
        return ga_error(GA_ERR_VALUE,
                        "%s of a 0-d array: it has no axis to transform "
                        "along; pass an array with at least one dimension",
                        name);
    }
    int ax;
    GA_TRY(ga_normalize_axes(x->ndim, 1, &axis, &ax));
    int64_t m = x->shape[ax];
    if (n < 0) {
        n = kind == GA_FFT_C2R ? 2 * (m - 1) : m;
    }
    if (n < 1) {
        return ga_error(
            GA_ERR_VALUE,
            "%s: invalid number of data points (%lld); n must be at least 1 "
            "(the axis has length %lld: pass n explicitly)",
            name, (long long)n, (long long)m);
    }
    ga_dtype cdt = GA_COMPLEX128;
    GA_TRY(complex_dtype(x, kind, inverse, &cdt));
    ga_dtype rdt = ga_dtype_real_of(cdt);
    const ga_backend *be;
    GA_TRY(ga_device_backend(ga_array_device(x), &be));
    if (be->fft == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED,
                        "%s is not implemented on %s devices yet; transform on the CPU "
                        "(x.to(gpuarr.cpu())) or a simulated GPU",
                        name, be->name);
    }

    ga_fft_desc d = {
        .kind = kind, .dtype = (int32_t)cdt, .inverse = inverse != 0, .n = n};
    int64_t in_len = 0, out_len = 0;
    ga_fft_line_lengths(&d, &in_len, &out_len); /* the kind was checked above */

    /* the axis last: a view, then the lines in a contiguous buffer */
    int64_t perm[GA_MAXDIMS], back[GA_MAXDIMS];
    int k = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (i != ax) {
            perm[k++] = i;
        }
    }
    perm[k] = ax;
    for (int i = 0; i < x->ndim; i++) {
        back[i] = i < ax ? i : (i == ax ? x->ndim - 1 : i - 1);
    }
    ga_array xv = {0}, buf = {0}, res = {0}, scaled = {0};
    int st = ga_view_permute(x, x->ndim, perm, &xv);
    if (st != GA_OK) {
        return st;
    }
    st = input_lines(&xv, in_len, kind == GA_FFT_R2C ? rdt : cdt, kind == GA_FFT_C2R,
                     &buf);
    if (st != GA_OK) {
        goto done;
    }
    int64_t shape[GA_MAXDIMS];
    for (int i = 0; i < x->ndim; i++) {
        shape[i] = xv.shape[i];
    }
    shape[x->ndim - 1] = out_len;
    st = ga_array_empty(&res, ga_array_device(x), kind == GA_FFT_C2R ? rdt : cdt,
                        x->ndim, shape);
    if (st != GA_OK) {
        goto done;
    }
    d.batch = ga_array_size(&buf) / in_len;
    d.in = ga_array_data(&buf);
    d.out = ga_array_data(&res);
    if (d.batch > 0) {
        ga_device_count_work(ga_array_device(x), GA_WORK_FFT, 1);
        st = ga_backend_status(be, be->fft(ga_device_local(ga_array_device(x)), &d));
        if (st != GA_OK) {
            goto done;
        }
        ga_fault_flow(&res, &buf);
    }
    int forward = kind == GA_FFT_R2C || (kind == GA_FFT_C2C && !inverse);
    double scale = norm_scale(norm, forward, n);
    if (scale != 1.0 && d.batch > 0) {
        ga_ew_arg args[2] = {
            {.array = &res},
            {.array = NULL, .dtype = -1, .kind = GA_PYSCALAR_FLOAT, .re = scale},
        };
        st = ga_elementwise(GA_OP_MULTIPLY, 2, args, &res, &scaled);
        ga_array_release(&scaled);
        if (st != GA_OK) {
            goto done;
        }
    }
    if (kind == GA_FFT_C2R && x->dtype == GA_FLOAT16) {
        /* NumPy 2 computes in float32 and returns the real float16 it was given */
        ga_array half;
        st = ga_astype(&res, GA_FLOAT16, &half);
        if (st != GA_OK) {
            goto done;
        }
        ga_array_release(&res);
        res = half;
    }
    st = ga_view_permute(&res, x->ndim, back, out);
done:
    ga_array_release(&xv);
    ga_array_release(&buf);
    ga_array_release(&res);
    return st;
}
