/* ga_reduce.c: reductions and scans, dispatched to the input's device. */
#include "ga_reduce.h"

#include <string.h>

#include "ga_backend.h"
#include "ga_cast.h"
#include "ga_error.h"
#include "ga_fault.h"
#include "ga_loop.h"
#include "ga_profiler.h"
#include "ga_scalar.h"
#include "ga_transfer.h"

static int
backend_of(const ga_array *a, const ga_backend **be)
{
    return ga_device_backend(ga_array_device(a), be);
}


int
ga_reduce_axes(int ndim, int naxes, const int64_t *axes, uint32_t *mask)
{
    if (naxes < 0) {
        *mask = ndim >= 32 ? 0xffffffffu : ((1u << ndim) - 1u);
        return GA_OK;
    }
    uint32_t m = 0;
    for (int i = 0; i < naxes; i++) {
        int64_t a = axes[i];
        if (a < -ndim || a >= ndim) {
            return ga_error(GA_ERR_INDEX, "axis %lld is out of bounds for array of dimension %d",
                            (long long)a, ndim);
        }
        if (a < 0) {
            a += ndim;
        }
        if (m & (1u << a)) {
            return ga_error(GA_ERR_VALUE, "duplicate value in 'axis' (axis %lld)",
                            (long long)axes[i]);
        }
        m |= 1u << a;
    }
    *mask = m;
    return GA_OK;
}

int
ga_reduce_result_dtype(ga_reduce_op op, ga_dtype in, int dtype, ga_dtype *out)
{
    switch (op) {
    case GA_RED_SUM:
    case GA_RED_PROD:
        if (dtype >= 0) {
            *out = (ga_dtype)dtype;
        }
        else if (in == GA_BOOL || ga_dtype_kind(in) == GA_KIND_INT) {
            *out = GA_INT64;
        }
        else if (ga_dtype_kind(in) == GA_KIND_UINT) {
            *out = GA_UINT64;
        }
        else {
            *out = in;
        }
        return GA_OK;
    case GA_RED_ARGMAX:
    case GA_RED_ARGMIN:
        *out = GA_INT64;
        break;
    case GA_RED_ALL:
    case GA_RED_ANY:
        *out = GA_BOOL;
        break;
    default:
        *out = in;
        break;
    }
    if (dtype >= 0 && dtype != (int)*out) {
        return ga_error(GA_ERR_TYPE, "%s does not take a dtype (it returns %s)",
                        ga_reduce_names[op], ga_dtype_infos[*out].name);
    }
    return GA_OK;
}

static void
scalar_bytes(ga_dtype t, double v, ga_scalar_bytes *b)
{
    ga_scalar_value s;
    memset(&s, 0, sizeof(s));
    s.kind = GA_KIND_FLOAT;
    s.re = v;
    ga_scalar_write(t, &s, b);
}

static int
run_loop(int op, ga_loop *loop, const ga_array *out)
{
    const ga_backend *be;
    GA_TRY(backend_of(out, &be));
    if (be->elementwise == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED, "%s is not supported by the %s backend",
                        ga_op_names[op], be->name);
    }
    ga_loop_coalesce(loop);
    ga_device_count_work(ga_array_device(out), GA_WORK_ELEMENTWISE, 1);
    return ga_backend_status(be, be->elementwise(ga_device_local(ga_array_device(out)), op, loop));
}

int
ga_fill_value(ga_array *a, double v)
{
    if (ga_array_size(a) == 0) {
        return GA_OK;
    }
    ga_loop loop;
    ga_scalar_bytes b;
    scalar_bytes((ga_dtype)a->dtype, v, &b);
    ga_loop_init(&loop, a);
    ga_loop_add_scalar(&loop, (ga_dtype)a->dtype, &b);
    return run_loop(GA_OP_COPY, &loop, a);
}

int
ga_elementwise_raw(int op, ga_array *out, const ga_array *x, const ga_array *y)
{
    GA_TRY(ga_check_same_device(ga_op_names[op], out, x));
    if (y != NULL) {
        GA_TRY(ga_check_same_device(ga_op_names[op], x, y));
    }
    if (ga_array_size(out) == 0) {
        ga_fault_flow(out, x);
        if (y != NULL) {
            ga_fault_flow(out, y);
        }
        return GA_OK;
    }
    ga_loop loop;
    ga_loop_init(&loop, out);
    GA_TRY(ga_loop_add_array(&loop, x));
    if (y != NULL) {
        GA_TRY(ga_loop_add_array(&loop, y));
    }
    GA_TRY(run_loop(op, &loop, out));
    ga_fault_flow(out, x);
    if (y != NULL) {
        ga_fault_flow(out, y);
    }
    return GA_OK;
}

int
ga_elementwise_scalar(int op, ga_array *out, const ga_array *x, double v)
{
    GA_TRY(ga_check_same_device(ga_op_names[op], out, x));
    if (ga_array_size(out) == 0) {
        ga_fault_flow(out, x);
        return GA_OK;
    }
    ga_loop loop;
    ga_scalar_bytes b;
    scalar_bytes((ga_dtype)x->dtype, v, &b);
    ga_loop_init(&loop, out);
    GA_TRY(ga_loop_add_array(&loop, x));
    ga_loop_add_scalar(&loop, (ga_dtype)x->dtype, &b);
    GA_TRY(run_loop(op, &loop, out));
    ga_fault_flow(out, x);
    return GA_OK;
}

/* Shape of the result: the kept axes (and 1s for reduced ones with keepdims). */
static int
result_shape(const ga_array *in, uint32_t mask, int keepdims, int64_t *shape)
{
    int nd = 0;
    for (int i = 0; i < in->ndim; i++) {
        if (mask & (1u << i)) {
            if (keepdims) {
                shape[nd++] = 1;
            }
        }
        else {
            shape[nd++] = in->shape[i];
        }
    }
    return nd;
}

static int reduce_aligned(ga_reduce_op op, const ga_array *in, uint32_t mask, int keepdims,
                          int dtype, ga_array *out);

int
ga_reduce(ga_reduce_op op, const ga_array *in, uint32_t mask, int keepdims, int dtype,
          ga_array *out)
{
    int st;
    if (!ga_needs_element_staging(in)) {
        st = reduce_aligned(op, in, mask, keepdims, dtype, out);
    }
    else {
        ga_array a;
        GA_TRY(ga_element_aligned(in, &a));
        st = reduce_aligned(op, &a, mask, keepdims, dtype, out);
        ga_array_release(&a);
    }
    if (st == GA_OK) {
        ga_fault_flow(out, in);
    }
    return st;
}

static int
reduce_aligned(ga_reduce_op op, const ga_array *in, uint32_t mask, int keepdims, int dtype,
               ga_array *out)
{
    ga_dtype odt;
    GA_TRY(ga_reduce_result_dtype(op, (ga_dtype)in->dtype, dtype, &odt));
    if (in->ndim < 32) {
        mask &= (1u << in->ndim) - 1u;
    }
    int is_arg = op == GA_RED_ARGMAX || op == GA_RED_ARGMIN;
    int nred = 0;
    int64_t red_size = 1;
    for (int i = 0; i < in->ndim; i++) {
        if (mask & (1u << i)) {
            nred++;
            red_size *= in->shape[i];
        }
    }
    /* argmax over several axes (or all of a >1-d array): a flat C-order index over the
     * reduced axes, which is what the descriptor defines */
    int64_t shape[GA_MAXDIMS];
    int ond = result_shape(in, mask, keepdims, shape);
    int64_t out_size = 1;
    for (int i = 0; i < ond; i++) {
        out_size *= shape[i];
    }
    if (red_size == 0 && /* NumPy refuses even when the result is empty */
        (op == GA_RED_MAX || op == GA_RED_MIN || is_arg)) {
        if (is_arg) {
            return ga_error(GA_ERR_VALUE, "attempt to get %s of an empty sequence",
                            ga_reduce_names[op]);
        }
        return ga_error(GA_ERR_VALUE,
                        "zero-size array to reduction operation %s which has no identity",
                        op == GA_RED_MAX ? "maximum" : "minimum");
    }
    const ga_backend *be;
    GA_TRY(backend_of(in, &be));
    GA_TRY(ga_array_empty(out, ga_array_device(in), odt, ond, shape));
    if (out_size == 0) {
        return GA_OK;
    }
    int st;
    if (red_size == 0) {
        double ident = (op == GA_RED_PROD || op == GA_RED_ALL) ? 1.0 : 0.0;
        st = ga_fill_value(out, ident);
        goto done;
    }
    ga_reduce_desc r;
    memset(&r, 0, sizeof(r));
    r.op = op;
    r.in_dtype = in->dtype;
    r.out_dtype = odt;
    r.in = ga_array_data(in);
    r.out = ga_array_data(out);
    r.red_size = red_size;
    r.out_size = out_size;
    int oax = 0;
    for (int i = 0; i < in->ndim; i++) {
        if (mask & (1u << i)) {
            r.red_shape[r.red_ndim] = in->shape[i];
            r.in_red_strides[r.red_ndim] = in->strides[i];
            r.red_ndim++;
            if (keepdims) {
                oax++;
            }
        }
        else {
            r.out_shape[r.out_ndim] = in->shape[i];
            r.in_out_strides[r.out_ndim] = in->strides[i];
            r.out_strides[r.out_ndim] = out->strides[oax];
            r.out_ndim++;
            oax++;
        }
    }
    (void)nred;
    if (be->reduce == NULL) {
        st = ga_error(GA_ERR_UNSUPPORTED, "%s is not supported by the %s backend",
                      ga_reduce_names[op], be->name);
        goto done;
    }
    ga_device_count_work(ga_array_device(in), GA_WORK_REDUCE, 1);
    if (ga_describe_on()) { /* the input's shape (the result's is smaller) */
        ga_prof_describe(ga_reduce_names[op], r.out_dtype, in->ndim, in->shape,
                         ga_array_size(in) * ga_dtype_itemsize((ga_dtype)r.in_dtype) +
                             r.out_size * ga_dtype_itemsize((ga_dtype)r.out_dtype));
    }
    st = ga_backend_status(be, be->reduce(ga_device_local(ga_array_device(in)), &r));
done:
    if (st != GA_OK) {
        ga_array_release(out);
    }
    return st;
}


static int64_t
count_reduced(const ga_array *in, uint32_t mask)
{
    int64_t n = 1;
    for (int i = 0; i < in->ndim; i++) {
        if (mask & (1u << i)) {
            n *= in->shape[i];
        }
    }
    return n;
}

/* The dtype statistics are computed in (float16 -> float32, ints -> float64). */
static int
stat_dtypes(const char *what, ga_dtype in, int dtype, ga_dtype *compute, ga_dtype *result)
{
    ga_dtype r;
    if (dtype >= 0) {
        if (!ga_dtype_is_inexact((ga_dtype)dtype)) {
            return ga_error(GA_ERR_TYPE, "%s: dtype must be a floating or complex type, "
                            "not %s", what, ga_dtype_infos[dtype].name);
        }
        r = (ga_dtype)dtype;
    }
    else {
        r = ga_dtype_is_inexact(in) ? in : GA_FLOAT64;
    }
    *result = r;
    *compute = r == GA_FLOAT16 ? GA_FLOAT32 : r;
    if (ga_dtype_kind(in) == GA_KIND_COMPLEX && ga_dtype_kind(*compute) != GA_KIND_COMPLEX) {
        *compute = ga_dtype_complex_of(*compute);
    }
    return GA_OK;
}

static int
finish_cast(ga_array *tmp, ga_dtype result, ga_array *out)
{
    if (tmp->dtype == (int32_t)result) {
        *out = *tmp;
        return GA_OK;
    }
    int st = ga_as_dtype(tmp, result, out);
    ga_array_release(tmp);
    return st;
}

int
ga_mean(const ga_array *in, uint32_t mask, int keepdims, int dtype, ga_array *out)
{
    ga_dtype compute = GA_FLOAT64, result = GA_FLOAT64;
    GA_TRY(stat_dtypes("mean", (ga_dtype)in->dtype, dtype, &compute, &result));
    ga_array s;
    GA_TRY(ga_reduce(GA_RED_SUM, in, mask, keepdims, compute, &s));
    int st = ga_elementwise_scalar(GA_OP_DIVIDE, &s, &s, (double)count_reduced(in, mask));
    if (st != GA_OK) {
        ga_array_release(&s);
        return st;
    }
    return finish_cast(&s, result, out);
}

int
ga_var(const ga_array *in, uint32_t mask, int keepdims, double correction, int dtype,
       int take_sqrt, ga_array *out)
{
    const char *what = take_sqrt ? "std" : "var";
    ga_dtype compute = GA_FLOAT64, result = GA_FLOAT64;
    GA_TRY(stat_dtypes(what, (ga_dtype)in->dtype, dtype, &compute, &result));
    result = ga_dtype_real_of(result);
    ga_dtype real = ga_dtype_real_of(compute);
    int64_t n = count_reduced(in, mask);
    ga_array x = {0}, m = {0}, d = {0}, a = {0}, s = {0};
    int st = ga_as_dtype(in, compute, &x);
    if (st != GA_OK) {
        return st;
    }
    /* mean with keepdims so it broadcasts against x */
    st = ga_reduce(GA_RED_SUM, &x, mask, 1, compute, &m);
    if (st == GA_OK) {
        st = ga_elementwise_scalar(GA_OP_DIVIDE, &m, &m, (double)n);
    }
    if (st == GA_OK) {
        st = ga_array_empty(&d, ga_array_device(in), compute, in->ndim, in->shape);
    }
    if (st == GA_OK) {
        st = ga_elementwise_raw(GA_OP_SUBTRACT, &d, &x, &m);
    }
    if (st == GA_OK && real != compute) {
        /* |d|^2 for complex deviations */
        st = ga_array_empty(&a, ga_array_device(in), real, in->ndim, in->shape);
        if (st == GA_OK) {
            st = ga_elementwise_raw(GA_OP_ABS, &a, &d, NULL);
        }
        ga_array_release(&d);
        d = a;
        memset(&a, 0, sizeof(a));
    }
    if (st == GA_OK) {
        st = ga_elementwise_raw(GA_OP_MULTIPLY, &d, &d, &d);
    }
    if (st == GA_OK) {
        st = ga_reduce(GA_RED_SUM, &d, mask, keepdims, real, &s);
    }
    if (st == GA_OK) {
        double denom = (double)n - correction;
        /* a NaN correction gives NaN, as in NumPy (denom > 0 is false for NaN) */
        st = ga_elementwise_scalar(GA_OP_DIVIDE, &s, &s,
                                   denom > 0 || denom != denom ? denom : 0.0);
    }
    if (st == GA_OK && take_sqrt) {
        st = ga_elementwise_raw(GA_OP_SQRT, &s, &s, NULL);
    }
    ga_array_release(&x);
    ga_array_release(&m);
    ga_array_release(&d);
    if (st != GA_OK) {
        ga_array_release(&s);
        return ga_error_context(st, what);
    }
    return finish_cast(&s, result, out);
}

static int scan_aligned(ga_scan_op op, const ga_array *in, int axis, int dtype,
                        int include_initial, ga_array *out);

int
ga_scan(ga_scan_op op, const ga_array *in, int axis, int dtype, int include_initial,
        ga_array *out)
{
    int st;
    if (!ga_needs_element_staging(in)) {
        st = scan_aligned(op, in, axis, dtype, include_initial, out);
    }
    else {
        ga_array a;
        GA_TRY(ga_element_aligned(in, &a));
        st = scan_aligned(op, &a, axis, dtype, include_initial, out);
        ga_array_release(&a);
    }
    if (st == GA_OK) {
        ga_fault_flow(out, in);
    }
    return st;
}

static int
scan_aligned(ga_scan_op op, const ga_array *in, int axis, int dtype, int include_initial,
             ga_array *out)
{
    if (in->ndim == 0 || axis < 0 || axis >= in->ndim) {
        return ga_error(GA_ERR_INDEX, "axis %d is out of bounds for array of dimension %d",
                        axis, in->ndim);
    }
    ga_dtype odt;
    GA_TRY(ga_reduce_result_dtype(op == GA_SCAN_CUMSUM ? GA_RED_SUM : GA_RED_PROD,
                                  (ga_dtype)in->dtype, dtype, &odt));
    int64_t shape[GA_MAXDIMS];
    memcpy(shape, in->shape, sizeof(int64_t) * (size_t)in->ndim);
    if (include_initial) {
        shape[axis] += 1;
    }
    const ga_backend *be;
    GA_TRY(backend_of(in, &be));
    GA_TRY(ga_array_empty(out, ga_array_device(in), odt, in->ndim, shape));
    int st = GA_OK;
    ga_array body = *out; /* a borrowed view of the part the scan writes */
    if (include_initial) {
        ga_array first = *out;
        first.shape[axis] = 1;
        st = ga_fill_value(&first, op == GA_SCAN_CUMPROD ? 1.0 : 0.0);
        body.shape[axis] -= 1;
        body.offset += body.strides[axis];
    }
    if (st == GA_OK && ga_array_size(in) > 0) {
        ga_scan_desc s;
        memset(&s, 0, sizeof(s));
        s.op = op;
        s.in_dtype = in->dtype;
        s.out_dtype = odt;
        s.ndim = in->ndim;
        s.in = ga_array_data(in);
        s.out = ga_array_data(&body);
        /* the scan axis goes last */
        int k = 0;
        for (int i = 0; i < in->ndim; i++) {
            if (i != axis) {
                s.shape[k] = in->shape[i];
                s.in_strides[k] = in->strides[i];
                s.out_strides[k] = body.strides[i];
                k++;
            }
        }
        s.shape[k] = in->shape[axis];
        s.in_strides[k] = in->strides[axis];
        s.out_strides[k] = body.strides[axis];
        if (be->scan == NULL) {
            st = ga_error(GA_ERR_UNSUPPORTED, "cumulative operations are not supported by "
                          "the %s backend", be->name);
        }
        else {
            ga_device_count_work(ga_array_device(in), GA_WORK_REDUCE, 1);
            st = ga_backend_status(be, be->scan(ga_device_local(ga_array_device(in)), &s));
        }
    }
    if (st != GA_OK) {
        ga_array_release(out);
    }
    return st;
}
