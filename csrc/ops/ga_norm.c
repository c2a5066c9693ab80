/* ga_norm.c: norms from |x|, reductions and a final power, all on x's device. */
#include "ga_norm.h"

#include <math.h>
#include <string.h>

#include "ga_error.h"
#include "ga_fused.h"
#include "ga_reduce.h"
#include "ga_transfer.h"

/* |x| in a real float dtype (integers and bool become float64, as in NumPy). */
static int
abs_float(const ga_array *x, ga_array *out)
{
    ga_dtype t = (ga_dtype)x->dtype;
    ga_dtype ft = ga_dtype_is_inexact(t) ? t : GA_FLOAT64;
    ga_array xf;
    if (ft != t) {
        GA_TRY(ga_array_empty(&xf, ga_array_device(x), ft, x->ndim, x->shape));
        int st = ga_copy_same_device(&xf, x);
        if (st != GA_OK) {
            ga_array_release(&xf);
            return st;
        }
    }
    else {
        ga_array_view(&xf, x);
    }
    int st = ga_array_empty(out, ga_array_device(x), ga_dtype_real_of(ft), x->ndim, x->shape);
    if (st == GA_OK) {
        st = ga_elementwise_raw(GA_OP_ABS, out, &xf, NULL);
        if (st != GA_OK) {
            ga_array_release(out);
        }
    }
    ga_array_release(&xf);
    return st;
}

/* sum(x * x) over every axis as a fused program (ga_fused_reduce): on the CPU and
 * simulated GPUs the squares are summed as they are made, with no temporary;
 * GA_ERR_UNSUPPORTED where the device cannot (CUDA), with nothing run. */
static int
fused_sum_of_squares(const ga_array *x, int keepdims, ga_array *s)
{
    ga_fused_prog g;
    memset(&g, 0, sizeof(g));
    g.nin = 1;
    g.nregs = 2;
    g.ninstr = 1;
    g.result = 1;
    g.reg_dtype[0] = g.reg_dtype[1] = (int8_t)x->dtype;
    g.instr[0].op = GA_OP_MULTIPLY;
    g.instr[0].dtype = (int16_t)x->dtype;
    g.instr[0].dst = 1;
    const ga_array *in[1] = {x};
    return ga_fused_reduce(&g, in, GA_RED_SUM, keepdims, s);
}

/* The 2-norm of real floats: sqrt(sum(x * x)), without |x| (one pass and one
 * temporary fewer: the norm of exercise 3's loop; over every axis of a float32 or
 * float64 x, no temporary at all where the device reduces a fused program). */
static int
real_two_norm(const ga_array *x, uint32_t mask, int keepdims, ga_array *out)
{
    ga_array sq, s;
    int full = x->dtype == GA_FLOAT32 || x->dtype == GA_FLOAT64;
    for (int i = 0; i < x->ndim; i++) {
        full = full && (mask >> i) & 1u;
    }
    int st = full ? fused_sum_of_squares(x, keepdims, &s) : GA_ERR_UNSUPPORTED;
    if (st == GA_ERR_UNSUPPORTED) {
        GA_TRY(ga_array_empty(&sq, ga_array_device(x), (ga_dtype)x->dtype, x->ndim,
                              x->shape));
        st = ga_elementwise_raw(GA_OP_MULTIPLY, &sq, x, x);
        if (st == GA_OK) {
            st = ga_reduce(GA_RED_SUM, &sq, mask, keepdims, (ga_dtype)x->dtype, &s);
        }
        ga_array_release(&sq);
    }
    if (st != GA_OK) {
        return st;
    }
    st = ga_elementwise_raw(GA_OP_SQRT, &s, &s, NULL);
    if (st != GA_OK) {
        ga_array_release(&s);
        return st;
    }
    *out = s;
    return GA_OK;
}

int
ga_vector_norm(const ga_array *x, uint32_t mask, int keepdims, double ord, ga_array *out)
{
    if (ord == 2 && ga_dtype_kind((ga_dtype)x->dtype) == GA_KIND_FLOAT) {
        return real_two_norm(x, mask, keepdims, out);
    }
    ga_array a, s;
    GA_TRY(abs_float(x, &a));
    ga_dtype rt = (ga_dtype)a.dtype;
    int st;
    if (isinf(ord)) {
        st = ga_reduce(ord > 0 ? GA_RED_MAX : GA_RED_MIN, &a, mask, keepdims, -1, out);
        ga_array_release(&a);
        return st;
    }
    if (ord == 0) {
        ga_array nz;
        st = ga_array_empty(&nz, ga_array_device(x), GA_BOOL, a.ndim, a.shape);
        if (st == GA_OK) {
            st = ga_elementwise_scalar(GA_OP_NOT_EQUAL, &nz, &a, 0.0);
            if (st == GA_OK) {
                st = ga_reduce(GA_RED_SUM, &nz, mask, keepdims, rt, out);
            }
            ga_array_release(&nz);
        }
        ga_array_release(&a);
        return st;
    }
    if (ord == 1) {
        st = ga_reduce(GA_RED_SUM, &a, mask, keepdims, rt, out);
        ga_array_release(&a);
        return st;
    }
    if (ord == 2) {
        st = ga_elementwise_raw(GA_OP_MULTIPLY, &a, &a, &a);
    }
    else {
        st = ga_elementwise_scalar(GA_OP_POW, &a, &a, ord);
    }
    if (st == GA_OK) {
        st = ga_reduce(GA_RED_SUM, &a, mask, keepdims, rt, &s);
    }
    ga_array_release(&a);
    if (st != GA_OK) {
        return st;
    }
    st = ord == 2 ? ga_elementwise_raw(GA_OP_SQRT, &s, &s, NULL)
                  : ga_elementwise_scalar(GA_OP_POW, &s, &s, 1.0 / ord);
    if (st != GA_OK) {
        ga_array_release(&s);
        return st;
    }
    *out = s;
    return GA_OK;
}

/* Drop the two (length-1) matrix axes of a keepdims result: a contiguous view. */
static void
squeeze_two(ga_array *r, int ax1, int ax2)
{
    int q = 0;
    for (int i = 0; i < r->ndim; i++) {
        if (i != ax1 && i != ax2) {
            r->shape[q++] = r->shape[i];
        }
    }
    r->ndim = q;
    ga_contiguous_strides(q, r->shape, ga_dtype_itemsize(r->dtype), r->strides);
}

int
ga_matrix_norm(const ga_array *x, int row_axis, int col_axis, int keepdims, char kind,
               int sign, ga_array *out)
{
    uint32_t both = (1u << row_axis) | (1u << col_axis);
    if (kind == 'f') {
        return ga_vector_norm(x, both, keepdims, 2.0, out);
    }
    ga_array a, s;
    GA_TRY(abs_float(x, &a));
    /* ord 1: max over columns of the column sums (sum over rows); inf: over rows */
    int sum_axis = kind == '1' ? row_axis : col_axis;
    int other = kind == '1' ? col_axis : row_axis;
    int st = ga_reduce(GA_RED_SUM, &a, 1u << sum_axis, 1, (ga_dtype)a.dtype, &s);
    ga_array_release(&a);
    if (st != GA_OK) {
        return st;
    }
    st = ga_reduce(sign > 0 ? GA_RED_MAX : GA_RED_MIN, &s, 1u << other, 1, -1, out);
    ga_array_release(&s);
    if (st != GA_OK) {
        return st;
    }
    if (!keepdims) {
        squeeze_two(out, row_axis, col_axis);
    }
    return GA_OK;
}
