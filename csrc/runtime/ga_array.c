/* ga_array.c: storage blocks, shapes and views. */
#include "ga_array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_backend.h"
#include "ga_error.h"
#include "ga_live.h"
#include "ga_fault.h"
#include "ga_copy_queue.h"
#include "ga_host_ready.h"

int ga_storage_watching;
static void (*watch_new)(ga_storage *s);
static void (*watch_reach)(ga_storage *s);

void
ga_storage_set_watch(void (*on_new)(ga_storage *s), void (*on_reach)(ga_storage *s))
{
    watch_new = on_new;
    watch_reach = on_reach;
}

void
ga_storage_reached_slow(ga_storage *s)
{
    if (watch_reach != NULL) {
        watch_reach(s);
    }
}

static void
storage_made(ga_storage *s)
{
    if (__atomic_load_n(&ga_storage_watching, __ATOMIC_RELAXED) != 0 && watch_new != NULL) {
        watch_new(s);
    }
}

int
ga_storage_new(ga_device device, size_t nbytes, ga_storage **out)
{
    const ga_backend *be;
    /* an allocation touches no pending host block: no fence (ga_host_ready.h) */
    GA_TRY(ga_device_backend_nowait(device, &be));
    ga_storage *s = (ga_storage *)calloc(1, sizeof(*s));
    if (s == NULL) {
        return ga_error(GA_ERR_NOMEM, "out of host memory for an array header");
    }
    int st = ga_device_arrays_alloc(device, nbytes);
    if (st != GA_OK) {
        free(s);
        return st;
    }
    void *ptr = NULL;
    st = ga_backend_status(be, be->alloc(ga_device_local(device), nbytes, &ptr));
    if (st != GA_OK) {
        ga_device_arrays_free(device, nbytes);
        free(s);
        return st;
    }
    s->refcount = 1;
    s->device = device;
    s->data = ptr;
    s->nbytes = nbytes;
    ga_live_add(s);
    if (device.kind == GA_DEV_GPU) {
        ga_fault_device_used(device); /* the exit report waits only for used GPUs */
    }
    storage_made(s);
    *out = s;
    return GA_OK;
}

int
ga_storage_wrap(ga_device device, void *data, size_t nbytes, void (*release)(void *),
                void *owner, int readonly, ga_storage **out)
{
    ga_storage *s = (ga_storage *)calloc(1, sizeof(*s));
    if (s == NULL) {
        return ga_error(GA_ERR_NOMEM, "out of host memory for an array header");
    }
    s->refcount = 1;
    s->device = device;
    s->data = data;
    s->nbytes = nbytes;
    s->release = release;
    s->owner = owner;
    s->readonly = readonly;
    ga_live_add(s);
    storage_made(s);
    *out = s;
    return GA_OK;
}

static void storage_free(ga_storage *s);

void
ga_storage_decref(ga_storage *s)
{
    if (s == NULL || --s->refcount > 0 || s->plan_holds > 0) {
        return;
    }
    storage_free(s);
}

void
ga_storage_plan_release(ga_storage *s)
{
    if (--s->plan_holds == 0 && s->refcount == 0) {
        storage_free(s);
    }
}

static void
storage_free(ga_storage *s)
{
    ga_live_remove(s);
    if (s->pending != NULL) {
        ga_host_ready_release(s); /* a queued copy still uses the block */
    }
    if (s->faults != NULL) {
        ga_faultset_release(s->faults);
    }
    /* a queued copy to the host still reads it: the block's next user waits for it */
    if (s->copy_ticket != 0) {
        ga_copy_queue_fence_slow(s, s->release != NULL);
    }
    if (s->release != NULL) {
        s->release(s->owner);
    } else {
        const ga_backend *be;
        /* The device existed when the block was made, so this cannot fail. */
        if (ga_device_backend_nowait(s->device, &be) == GA_OK) {
            be->free(ga_device_local(s->device), s->data, s->nbytes);
        }
        ga_device_arrays_free(s->device, s->nbytes);
    }
    free(s);
}

int
ga_shape_size(int ndim, const int64_t *shape, int itemsize, int64_t *size)
{
    int64_t n = 1;
    int overflow = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            return ga_error(GA_ERR_VALUE,
                            "negative dimensions are not allowed (got %lld)",
                            (long long)shape[i]);
        }
    }
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) {
            *size = 0;
            return GA_OK;
        }
        if (__builtin_mul_overflow(n, shape[i], &n)) {
            overflow = 1;
        }
    }
    int64_t bytes;
    if (overflow ||
        __builtin_mul_overflow(n, (int64_t)(itemsize > 0 ? itemsize : 1), &bytes)) {
        char buf[256];
        return ga_error(
            GA_ERR_NOMEM,
            "array of shape %s is too big: its size in bytes does not fit in "
            "64 bits",
            ga_shape_str(ndim, shape, buf, sizeof(buf)));
    }
    *size = n;
    return GA_OK;
}

void
ga_contiguous_strides(int ndim, const int64_t *shape, int itemsize, int64_t *strides)
{
    int64_t s = itemsize;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= shape[i] > 0 ? shape[i] : 1;
    }
}

const char *
ga_shape_str(int ndim, const int64_t *shape, char *buf, size_t n)
{
    size_t used = 0;
    used += (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < ndim && used < n; i++) {
        used += (size_t)snprintf(buf + used, n - used, "%s%lld", i ? ", " : "",
                                 (long long)shape[i]);
    }
    if (used < n) {
        snprintf(buf + used, n - used, ndim == 1 ? ",)" : ")");
    }
    return buf;
}

int
ga_broadcast_shapes(int nd1, const int64_t *s1, int nd2, const int64_t *s2, int *nd_out,
                    int64_t *out)
{
    int nd = nd1 > nd2 ? nd1 : nd2;
    int64_t tmp[GA_MAXDIMS];
    for (int i = 0; i < nd; i++) {
        int i1 = i - (nd - nd1), i2 = i - (nd - nd2);
        int64_t d1 = i1 >= 0 ? s1[i1] : 1, d2 = i2 >= 0 ? s2[i2] : 1;
        if (d1 == d2 || d2 == 1) {
            tmp[i] = d1;
        } else if (d1 == 1) {
            tmp[i] = d2;
        } else {
            char b1[256], b2[256];
            return ga_error(
                GA_ERR_SHAPE,
                "operands could not be broadcast together with shapes %s %s",
                ga_shape_str(nd1, s1, b1, sizeof(b1)),
                ga_shape_str(nd2, s2, b2, sizeof(b2)));
        }
    }
    memcpy(out, tmp, sizeof(int64_t) * (size_t)nd);
    *nd_out = nd;
    return GA_OK;
}

int
ga_normalize_axes(int ndim, int naxes, const int64_t *in, int *out)
{
    for (int i = 0; i < naxes; i++) {
        if (in[i] < -(int64_t)ndim || in[i] >= ndim) {
            return ga_error(GA_ERR_AXIS,
                            "axis %lld is out of bounds for array of dimension %d",
                            (long long)in[i], ndim);
        }
        out[i] = (int)(in[i] < 0 ? in[i] + ndim : in[i]);
        for (int j = 0; j < i; j++) {
            if (out[j] == out[i]) {
                return ga_error(GA_ERR_VALUE, "duplicate value in 'axis': axis %d is given twice",
                                out[i]);
            }
        }
    }
    return GA_OK;
}

int
ga_array_empty(ga_array *a, ga_device device, ga_dtype dtype, int ndim,
               const int64_t *shape)
{
    int64_t size;
    if (ndim > GA_MAXDIMS) {
        return ga_error(GA_ERR_VALUE,
                        "too many dimensions: %d (gpuarr supports up to %d)", ndim,
                        GA_MAXDIMS);
    }
    GA_TRY(ga_shape_size(ndim, shape, ga_dtype_itemsize(dtype), &size));
    memset(a, 0, sizeof(*a));
    GA_TRY(ga_storage_new(device, (size_t)size * (size_t)ga_dtype_itemsize(dtype),
                          &a->storage));
    a->offset = 0;
    a->ndim = ndim;
    a->dtype = dtype;
    memcpy(a->shape, shape, sizeof(int64_t) * (size_t)ndim);
    ga_contiguous_strides(ndim, shape, ga_dtype_itemsize(dtype), a->strides);
    return GA_OK;
}

void
ga_array_view(ga_array *dst, const ga_array *src)
{
    if (dst != src) {
        memcpy(dst, src, sizeof(*dst));
    }
    ga_storage_incref(dst->storage);
}

void
ga_array_release(ga_array *a)
{
    if (a->storage != NULL) {
        ga_storage_decref(a->storage);
        a->storage = NULL;
    }
}

int64_t
ga_array_size(const ga_array *a)
{
    int64_t n = 1;
    for (int i = 0; i < a->ndim; i++) {
        n *= a->shape[i];
    }
    return n;
}

int
ga_array_is_c_contiguous(const ga_array *a)
{
    int64_t s = ga_dtype_itemsize(a->dtype);
    for (int i = a->ndim - 1; i >= 0; i--) {
        if (a->shape[i] == 0) {
            return 1;
        }
        if (a->shape[i] != 1 && a->strides[i] != s) {
            return 0;
        }
        s *= a->shape[i];
    }
    return 1;
}

int
ga_array_element_aligned(const ga_array *a)
{
    int64_t align = ga_dtype_itemsize(a->dtype);
    if (ga_dtype_kind(a->dtype) == GA_KIND_COMPLEX) {
        align /= 2;
    }
    if ((uint64_t)(uintptr_t)ga_array_data(a) % (uint64_t)align != 0) {
        return 0;
    }
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] > 1 && a->strides[i] % align != 0) {
            return 0;
        }
    }
    return 1;
}

int
ga_array_is_f_contiguous(const ga_array *a)
{
    int64_t s = ga_dtype_itemsize(a->dtype);
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] == 0) {
            return 1;
        }
        if (a->shape[i] != 1 && a->strides[i] != s) {
            return 0;
        }
        s *= a->shape[i];
    }
    return 1;
}

void
ga_array_extent(const ga_array *a, int64_t *lo, int64_t *hi)
{
    int64_t l = 0, h = ga_dtype_itemsize(a->dtype);
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] == 0) {
            *lo = 0;
            *hi = 0;
            return;
        }
        int64_t span = a->strides[i] * (a->shape[i] - 1);
        if (span < 0) {
            l += span;
        } else {
            h += span;
        }
    }
    *lo = l;
    *hi = h;
}

/* Addresses, not storages, are compared: two arrays wrapping overlapping host buffers
 * (NumPy views) are different storages. Views on different devices never overlap. */
int
ga_array_overlap(const ga_array *a, const ga_array *b)
{
    if (!ga_device_eq(ga_array_device(a), ga_array_device(b))) {
        return 0;
    }
    int64_t alo, ahi, blo, bhi;
    ga_array_extent(a, &alo, &ahi);
    ga_array_extent(b, &blo, &bhi);
    if (ahi <= alo || bhi <= blo) {
        return 0;
    }
    const char *pa = ga_array_data(a), *pb = ga_array_data(b);
    return pa + alo < pb + bhi && pb + blo < pa + ahi;
}

int
ga_array_same_view(const ga_array *out, const ga_array *in)
{
    if (ga_array_data(in) != ga_array_data(out) || in->ndim != out->ndim ||
        in->dtype != out->dtype) {
        return 0;
    }
    for (int d = 0; d < in->ndim; d++) {
        if (in->shape[d] != out->shape[d] ||
            (in->shape[d] > 1 && in->strides[d] != out->strides[d])) {
            return 0;
        }
    }
    return 1;
}

int
ga_check_same_device(const char *what, const ga_array *a, const ga_array *b)
{
    ga_device da = ga_array_device(a), db = ga_array_device(b);
    if (ga_device_eq(da, db)) {
        return GA_OK;
    }
    char s1[32], s2[32];
    ga_device_str(da, s1, sizeof(s1));
    ga_device_str(db, s2, sizeof(s2));
    return ga_error(
        GA_ERR_MISMATCH,
        "%s: the operands live on different devices, %s and %s. gpuarr never "
        "moves data implicitly: move one explicitly first, e.g. y.to(x.device) "
        "(here y.to(%s)) or x.to(%s)",
        what, s1, s2, s1, s2);
}
