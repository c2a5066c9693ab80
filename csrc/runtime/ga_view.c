/* ga_view.c: views that only change (shape, strides, offset), and reshape/concat. */
#include "ga_view.h"

#include <string.h>

#include "ga_error.h"
#include "ga_transfer.h"

int
ga_normalize_axis(int64_t axis, int ndim, int *out)
{
    if (axis < -(int64_t)ndim || axis >= ndim) {
        return ga_error(GA_ERR_VALUE, "axis %lld is out of bounds for array of dimension %d",
                        (long long)axis, ndim);
    }
    *out = (int)(axis < 0 ? axis + ndim : axis);
    return GA_OK;
}

/* Normalise a list of distinct axes for an array of `ndim` dims into flags. */
static int
axes_to_flags(int naxes, const int64_t *axes, int ndim, int *flags, const char *what)
{
    memset(flags, 0, sizeof(int) * GA_MAXDIMS);
    for (int i = 0; i < naxes; i++) {
        int a;
        GA_TRY(ga_normalize_axis(axes[i], ndim, &a));
        if (flags[a]) {
            return ga_error(GA_ERR_VALUE, "%s: repeated axis %lld", what, (long long)axes[i]);
        }
        flags[a] = 1;
    }
    return GA_OK;
}

int
ga_copy_new(const ga_array *x, ga_array *out)
{
    GA_TRY(ga_array_empty(out, ga_array_device(x), (ga_dtype)x->dtype, x->ndim, x->shape));
    int st = ga_copy_same_device(out, x);
    if (st != GA_OK) {
        ga_array_release(out);
    }
    return st;
}

/* Strides for viewing x (size > 0) with a new shape without copying, or 0 when the
 * memory layout does not allow it. Length-1 axes of x are ignored; then groups of
 * old axes whose sizes multiply to a group of new axes must be contiguous among
 * themselves, and the new axes of the group get strides from the group's last
 * (fastest) old axis. */
static int
nocopy_strides(const ga_array *x, int nd, const int64_t *shape, int64_t *strides)
{
    int64_t os[GA_MAXDIMS], ost[GA_MAXDIMS];
    int ond = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (x->shape[i] != 1) {
            os[ond] = x->shape[i];
            ost[ond] = x->strides[i];
            ond++;
        }
    }
    int oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < nd && oi < ond) {
        int64_t np_ = shape[ni], op = os[oi];
        while (np_ != op) {
            if (np_ < op) {
                np_ *= shape[nj++];
            }
            else {
                op *= os[oj++];
            }
        }
        for (int k = oi; k < oj - 1; k++) {
            if (ost[k] != os[k + 1] * ost[k + 1]) {
                return 0;
            }
        }
        strides[nj - 1] = ost[oj - 1];
        for (int k = nj - 1; k > ni; k--) {
            strides[k - 1] = strides[k] * shape[k];
        }
        ni = nj++;
        oi = oj++;
    }
    /* trailing length-1 new axes */
    int64_t last = ni > 0 ? strides[ni - 1] : ga_dtype_itemsize((ga_dtype)x->dtype);
    for (int k = ni; k < nd; k++) {
        strides[k] = last;
    }
    return 1;
}

int
ga_view_reshape(const ga_array *x, int ndim, const int64_t *shape, int copy, ga_array *out)
{
    char b1[256];
    if (ndim > GA_MAXDIMS) {
        return ga_error(GA_ERR_VALUE, "reshape: too many dimensions: %d (gpuarr supports up "
                        "to %d)", ndim, GA_MAXDIMS);
    }
    int64_t size = ga_array_size(x), known = 1, newshape[GA_MAXDIMS];
    int unknown = -1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            /* NumPy reads any negative entry as "unknown", not only -1 */
            if (unknown >= 0) {
                return ga_error(GA_ERR_VALUE, "can only specify one unknown dimension");
            }
            unknown = i;
        }
        else if (__builtin_mul_overflow(known, shape[i], &known)) {
            known = -1; /* cannot match any real size */
            break;
        }
        newshape[i] = shape[i];
    }
    if (unknown >= 0) {
        if (known > 0 && size % known == 0) {
            newshape[unknown] = size / known;
            known = size;
        }
        else {
            known = -1;
        }
    }
    if (known != size) {
        return ga_error(GA_ERR_VALUE, "cannot reshape array of size %lld into shape %s",
                        (long long)size, ga_shape_str(ndim, shape, b1, sizeof(b1)));
    }
    int64_t strides[GA_MAXDIMS];
    int itemsize = ga_dtype_itemsize((ga_dtype)x->dtype);
    int can_view = 1;
    if (size == 0) {
        ga_contiguous_strides(ndim, newshape, itemsize, strides);
    }
    else {
        can_view = nocopy_strides(x, ndim, newshape, strides);
    }
    ga_array src;
    if (copy == 1 || !can_view) {
        if (copy == 0) {
            return ga_error(GA_ERR_VALUE,
                            "reshape with copy=False: this array's memory layout does not "
                            "allow viewing it with shape %s; use copy=None to allow a copy",
                            ga_shape_str(ndim, newshape, b1, sizeof(b1)));
        }
        GA_TRY(ga_copy_new(x, &src));
        ga_contiguous_strides(ndim, newshape, itemsize, strides);
    }
    else {
        ga_array_view(&src, x);
    }
    *out = src;
    out->ndim = ndim;
    memcpy(out->shape, newshape, sizeof(int64_t) * (size_t)ndim);
    memcpy(out->strides, strides, sizeof(int64_t) * (size_t)ndim);
    return GA_OK;
}

int
ga_view_permute(const ga_array *x, int naxes, const int64_t *axes, ga_array *out)
{
    int flags[GA_MAXDIMS];
    if (naxes != x->ndim) {
        return ga_error(GA_ERR_VALUE,
                        "permute_dims: axes don't match array: got %d axes for an array of "
                        "dimension %d",
                        naxes, x->ndim);
    }
    GA_TRY(axes_to_flags(naxes, axes, x->ndim, flags, "permute_dims"));
    ga_array v = *x;
    for (int i = 0; i < naxes; i++) {
        int a = (int)(axes[i] < 0 ? axes[i] + x->ndim : axes[i]);
        v.shape[i] = x->shape[a];
        v.strides[i] = x->strides[a];
    }
    ga_array_view(out, &v);
    return GA_OK;
}

int
ga_view_squeeze(const ga_array *x, int naxes, const int64_t *axes, ga_array *out)
{
    int flags[GA_MAXDIMS];
    if (axes != NULL) {
        GA_TRY(axes_to_flags(naxes, axes, x->ndim, flags, "squeeze"));
        for (int i = 0; i < x->ndim; i++) {
            if (flags[i] && x->shape[i] != 1) {
                return ga_error(GA_ERR_VALUE,
                                "cannot select an axis to squeeze out which has size not "
                                "equal to one (axis %d has size %lld)",
                                i, (long long)x->shape[i]);
            }
        }
    }
    else {
        for (int i = 0; i < x->ndim; i++) {
            flags[i] = x->shape[i] == 1;
        }
    }
    ga_array v = *x;
    int nd = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (!flags[i]) {
            v.shape[nd] = x->shape[i];
            v.strides[nd] = x->strides[i];
            nd++;
        }
    }
    v.ndim = nd;
    ga_array_view(out, &v);
    return GA_OK;
}

int
ga_view_expand_dims(const ga_array *x, int naxes, const int64_t *axes, ga_array *out)
{
    int flags[GA_MAXDIMS];
    int nd = x->ndim + naxes;
    if (nd > GA_MAXDIMS) {
        return ga_error(GA_ERR_VALUE, "expand_dims: the result would have %d dimensions "
                        "(gpuarr supports up to %d)", nd, GA_MAXDIMS);
    }
    GA_TRY(axes_to_flags(naxes, axes, nd, flags, "expand_dims"));
    ga_array v = *x;
    int src = 0;
    for (int i = 0; i < nd; i++) {
        if (flags[i]) {
            v.shape[i] = 1;
            v.strides[i] = 0;
        }
        else {
            v.shape[i] = x->shape[src];
            v.strides[i] = x->strides[src];
            src++;
        }
    }
    v.ndim = nd;
    ga_array_view(out, &v);
    return GA_OK;
}

int
ga_view_flip(const ga_array *x, int naxes, const int64_t *axes, ga_array *out)
{
    int flags[GA_MAXDIMS];
    if (axes != NULL) {
        GA_TRY(axes_to_flags(naxes, axes, x->ndim, flags, "flip"));
    }
    else {
        for (int i = 0; i < x->ndim; i++) {
            flags[i] = 1;
        }
    }
    ga_array v = *x;
    for (int i = 0; i < x->ndim; i++) {
        if (flags[i] && x->shape[i] > 0) {
            v.offset += (x->shape[i] - 1) * x->strides[i];
            v.strides[i] = -x->strides[i];
        }
    }
    ga_array_view(out, &v);
    return GA_OK;
}

int
ga_view_broadcast_to(const ga_array *x, int ndim, const int64_t *shape, ga_array *out)
{
    char b1[256], b2[256];
    if (ndim > GA_MAXDIMS) {
        return ga_error(GA_ERR_VALUE, "broadcast_to: too many dimensions: %d", ndim);
    }
    int lead = ndim - x->ndim;
    int ok = lead >= 0;
    ga_array v = *x;
    for (int i = 0; ok && i < ndim; i++) {
        int j = i - lead;
        if (shape[i] < 0) {
            return ga_error(GA_ERR_VALUE, "broadcast_to: negative dimension %lld in shape %s",
                            (long long)shape[i], ga_shape_str(ndim, shape, b1, sizeof(b1)));
        }
        if (j < 0 || (x->shape[j] == 1 && shape[i] != 1)) {
            v.strides[i] = 0;
        }
        else if (x->shape[j] == shape[i]) {
            v.strides[i] = x->strides[j];
        }
        else {
            ok = 0;
        }
        v.shape[i] = shape[i];
    }
    if (!ok) {
        return ga_error(GA_ERR_SHAPE, "cannot broadcast an array of shape %s to shape %s",
                        ga_shape_str(x->ndim, x->shape, b1, sizeof(b1)),
                        ga_shape_str(ndim, shape, b2, sizeof(b2)));
    }
    v.ndim = ndim;
    int64_t size;
    if (ga_shape_size(ndim, v.shape, ga_dtype_itemsize((ga_dtype)x->dtype), &size) !=
        GA_OK) {
        return ga_error(GA_ERR_VALUE,
                        "broadcast_to: an array of shape %s is too big (its "
                        "size in bytes does not fit in 64 bits)",
                        ga_shape_str(ndim, shape, b1, sizeof(b1)));
    }
    /* Read-only, as in NumPy: a write through a stride-0 axis would write one element
     * many times (on a GPU, a race). */
    v.readonly = 1;
    ga_array_view(out, &v);
    return GA_OK;
}

int
ga_concat(int n, const ga_array *const *arrays, int64_t axis, ga_array *out)
{
    if (n < 1) {
        return ga_error(GA_ERR_VALUE, "need at least one array to concatenate");
    }
    const ga_array *a0 = arrays[0];
    if (a0->ndim == 0) {
        return ga_error(GA_ERR_VALUE, "zero-dimensional arrays cannot be concatenated");
    }
    int ax;
    GA_TRY(ga_normalize_axis(axis, a0->ndim, &ax));
    ga_dtype dt = (ga_dtype)a0->dtype;
    int64_t shape[GA_MAXDIMS];
    memcpy(shape, a0->shape, sizeof(int64_t) * (size_t)a0->ndim);
    shape[ax] = 0;
    for (int k = 0; k < n; k++) {
        const ga_array *a = arrays[k];
        GA_TRY(ga_check_same_device("concat", a0, a));
        if (a->ndim != a0->ndim) {
            return ga_error(GA_ERR_VALUE,
                            "all the input arrays must have same number of dimensions, but "
                            "the array at index 0 has %d dimension(s) and the array at "
                            "index %d has %d dimension(s)",
                            a0->ndim, k, a->ndim);
        }
        for (int i = 0; i < a->ndim; i++) {
            if (i != ax && a->shape[i] != a0->shape[i]) {
                return ga_error(GA_ERR_VALUE,
                                "all the input array dimensions except for the "
                                "concatenation axis must match exactly, but along "
                                "dimension %d, the array at index 0 has size %lld and the "
                                "array at index %d has size %lld",
                                i, (long long)a0->shape[i], k, (long long)a->shape[i]);
            }
        }
        if (__builtin_add_overflow(shape[ax], a->shape[ax], &shape[ax])) {
            return ga_error(GA_ERR_NOMEM, "concat: the result is too big");
        }
        dt = ga_promote(dt, (ga_dtype)a->dtype);
    }
    ga_array res;
    GA_TRY(ga_array_empty(&res, ga_array_device(a0), dt, a0->ndim, shape));
    /* Copy each input into its slab of the result: a view of `res` offset along axis. */
    int64_t at = 0;
    for (int k = 0; k < n; k++) {
        const ga_array *a = arrays[k];
        if (a->shape[ax] == 0) {
            continue;
        }
        ga_array slab = res;
        slab.offset += at * res.strides[ax];
        slab.shape[ax] = a->shape[ax];
        int st = ga_copy_same_device(&slab, a);
        if (st != GA_OK) {
            ga_array_release(&res);
            return st;
        }
        at += a->shape[ax];
    }
    *out = res;
    return GA_OK;
}
