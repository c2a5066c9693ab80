/* ga_index.c: basic indexing as views, advanced indexing through gather/scatter. */
#include "ga_index.h"

#include <string.h>

#include "ga_cast.h"
#include "ga_elementwise.h"
#include "ga_error.h"
#include "ga_fault.h"
#include "ga_loop.h"
#include "ga_reduce.h"
#include "ga_transfer.h"
#include "ga_view.h"

/* What a key resolves to: a view of x (basic items applied) plus integer index
 * arrays, each indexing one axis of that view. */
typedef struct {
    ga_array view; /* shares x's storage; holds no reference of its own */
    int nidx;
    ga_array idx[GA_MAXDIMS]; /* int64, on x's device, owned */
    int idx_axis[GA_MAXDIMS]; /* the view axis each index array runs along */
    int has_adv;
    int adjacent; /* advanced items next to each other in the key */
    int adv_pos;  /* view axes before the first advanced item */
    int unchecked; /* an index array came from the device: only the kernel sees it */
} index_plan;

/* What a gather or scatter is, for its failure record (ga_fault.h): the name the
 * user knows it by, and the storage whose contents it writes. */
typedef struct {
    const char *what;
    ga_storage *target;
} index_call;

static void
plan_release(index_plan *p)
{
    for (int j = 0; j < p->nidx; j++) {
        ga_array_release(&p->idx[j]);
    }
    p->nidx = 0;
}

static int
backend_of(const ga_array *x, const ga_backend **be)
{
    return ga_device_backend(ga_array_device(x), be);
}


/* PySlice_AdjustIndices' arithmetic: clamp (start, stop) to a dim of `len` and count
 * the selected elements. */
static int64_t
slice_adjust(int64_t len, int64_t *start, int64_t *stop, int64_t step)
{
    if (*start < 0) {
        *start += len;
        if (*start < 0) {
            *start = step < 0 ? -1 : 0;
        }
    }
    else if (*start >= len) {
        *start = step < 0 ? len - 1 : len;
    }
    if (*stop < 0) {
        *stop += len;
        if (*stop < 0) {
            *stop = step < 0 ? -1 : 0;
        }
    }
    else if (*stop >= len) {
        *stop = step < 0 ? len - 1 : len;
    }
    if (step < 0) {
        return *stop < *start ? (*start - *stop - 1) / (-step) + 1 : 0;
    }
    return *start < *stop ? (*stop - *start - 1) / step + 1 : 0;
}

/* Number of true elements of a bool array: a SUM reduction on the device, read back
 * (a small device-to-host read for a GPU). */
static int
count_true(const ga_array *mask, int64_t *count)
{
    int64_t size = ga_array_size(mask);
    if (size == 0) {
        *count = 0;
        return GA_OK;
    }
    const ga_backend *be;
    GA_TRY(backend_of(mask, &be));
    if (be->reduce == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED, "boolean indexing needs a sum, which the %s "
                        "backend does not support", be->name);
    }
    ga_array c;
    int64_t noshape[1] = {0};
    GA_TRY(ga_array_empty(&c, ga_array_device(mask), GA_INT64, 0, noshape));
    ga_reduce_desc r;
    memset(&r, 0, sizeof(r));
    r.op = GA_RED_SUM;
    r.in_dtype = GA_BOOL;
    r.out_dtype = GA_INT64;
    r.out_ndim = 0;
    r.red_ndim = mask->ndim;
    r.out_size = 1;
    r.red_size = size;
    memcpy(r.red_shape, mask->shape, sizeof(int64_t) * (size_t)mask->ndim);
    memcpy(r.in_red_strides, mask->strides, sizeof(int64_t) * (size_t)mask->ndim);
    r.in = ga_array_data(mask);
    r.out = ga_array_data(&c);
    ga_device_count_work(ga_array_device(mask), GA_WORK_REDUCE, 1);
    int st = ga_backend_status(be, be->reduce(ga_device_local(ga_array_device(mask)), &r));
    if (st == GA_OK) {
        ga_fault_flow(&c, mask); /* a failed mask's count is no count */
        st = ga_read_to_host(&c, count, sizeof(*count));
    }
    ga_array_release(&c);
    return st;
}

/* (count, ndim) int64 coordinates of the true elements of a bool array (ndim >= 1). */
static int
mask_nonzero(const ga_array *mask, ga_array *out)
{
    int64_t count;
    GA_TRY(count_true(mask, &count));
    int64_t shape[2] = {count, mask->ndim};
    GA_TRY(ga_array_empty(out, ga_array_device(mask), GA_INT64, 2, shape));
    if (count == 0) {
        return GA_OK;
    }
    const ga_backend *be;
    int st = backend_of(mask, &be);
    if (st == GA_OK && be->nonzero == NULL) {
        st = ga_error(GA_ERR_UNSUPPORTED, "nonzero is not supported by the %s backend",
                      be->name);
    }
    if (st == GA_OK) {
        /* Not coalesced: the kernel reports coordinates in the mask's own axes. */
        ga_loop loop;
        ga_loop_init(&loop, mask);
        ga_device_count_work(ga_array_device(mask), GA_WORK_INDEX, 1);
        st = ga_backend_status(be, be->nonzero(ga_device_local(ga_array_device(mask)), &loop,
                                            count, (int64_t *)ga_array_data(out)));
    }
    if (st == GA_OK) {
        ga_fault_flow(out, mask);
    }
    if (st != GA_OK) {
        ga_array_release(out);
    }
    return st;
}

int
ga_nonzero(const ga_array *x, ga_array *out)
{
    if (x->ndim == 0) {
        return ga_error(GA_ERR_VALUE, "nonzero of a 0-d array is not allowed: use "
                        "nonzero(atleast_1d(x)) or x.reshape(1)");
    }
    if (x->dtype == GA_BOOL) {
        return mask_nonzero(x, out);
    }
    ga_array b;
    GA_TRY(ga_array_empty(&b, ga_array_device(x), GA_BOOL, x->ndim, x->shape));
    int st = ga_copy_same_device(&b, x); /* the cast to bool is x != 0 */
    if (st == GA_OK) {
        st = mask_nonzero(&b, out);
    }
    ga_array_release(&b);
    return st;
}

/* An integer index array as int64 (a view when it already is).
 * A uint64 value above INT64_MAX would wrap to a negative index and silently read
 * from the end (2**64 - 1 as x[-1]); it is clamped to INT64_MAX instead, which no
 * axis reaches, so the kernels' bounds check reports it as out of bounds. The clamp
 * is one elementwise pass on the device: no host read, no wait. */
static int
as_int64(const ga_array *a, ga_array *out)
{
    if (a->dtype == GA_INT64) {
        return ga_element_aligned(a, out);
    }
    GA_TRY(ga_array_empty(out, ga_array_device(a), GA_INT64, a->ndim, a->shape));
    int st;
    if (a->dtype == GA_UINT64) {
        ga_ew_arg in[2];
        memset(in, 0, sizeof(in));
        in[0].array = a;
        in[0].dtype = -1;
        in[1].dtype = -1; /* a Python int: minimum stays uint64 (NEP 50) */
        in[1].kind = GA_PYSCALAR_INT;
        in[1].i = INT64_MAX;
        ga_array res;
        st = ga_elementwise(GA_OP_MINIMUM, 2, in, out, &res);
        if (st == GA_OK) {
            ga_array_release(&res);
        }
    }
    else {
        st = ga_copy_same_device(out, a);
    }
    if (st != GA_OK) {
        ga_array_release(out);
    }
    return st;
}

/* Host data used as an index along axis `ax` of x (ga_key.host): integer indices are
 * checked here, on every device (NumPy's message, with the axis), before the upload
 * to a GPU, so that an out-of-range one is an IndexError at
 * this call with no device round trip (an index array already on a GPU is checked by
 * the kernel instead, and its error is deferred: docs/DESIGN.md). `out` is the data
 * on x's device (bool masks are uploaded as they are). */
static int
upload_host_index(const ga_array *x, int ax, const ga_array *a, ga_array *out)
{
    int same = ga_device_eq(ga_array_device(a), ga_array_device(x));
    if (a->dtype == GA_BOOL || !ga_dtype_is_integer((ga_dtype)a->dtype)) {
        if (same) {
            ga_array_view(out, a);
            return GA_OK;
        }
        return ga_copy_to_device(a, ga_array_device(x), out);
    }
    ga_array c;
    GA_TRY(as_int64(a, &c));
    ga_array cc;
    int st = ga_contiguous(&c, &cc);
    ga_array_release(&c);
    GA_TRY(st);
    /* the host array's own memory: ga_contiguous finished writing it (the CPU
     * backend runs each operation to completion before returning) */
    const int64_t *v = (const int64_t *)ga_array_data(&cc);
    int64_t size = ga_array_size(&cc), n = x->shape[ax];
    for (int64_t i = 0; i < size; i++) {
        if (v[i] < -n || v[i] >= n) {
            long long bad = (long long)v[i]; /* v dies with cc */
            ga_array_release(&cc);
            return ga_error(GA_ERR_INDEX, "index %lld is out of bounds for axis %d with "
                            "size %lld", bad, ax, (long long)n);
        }
    }
    if (same) {
        *out = cc; /* x is on the CPU too: checked, nothing to upload */
        return GA_OK;
    }
    st = ga_copy_to_device(&cc, ga_array_device(x), out);
    ga_array_release(&cc);
    return st;
}

static int
push_axis(ga_array *v, int64_t n, int64_t stride)
{
    if (v->ndim >= GA_MAXDIMS) {
        return ga_error(GA_ERR_INDEX, "indexing: the result would have more than %d "
                        "dimensions", GA_MAXDIMS);
    }
    v->shape[v->ndim] = n;
    v->strides[v->ndim] = stride;
    v->ndim++;
    return GA_OK;
}

/* A bool mask over view axes [first, view->ndim) of p->view becomes index arrays.
 * Axes that are contiguous among themselves are merged first, so the common
 * x[x > 0] needs one index array however many dims x has. */
static int
plan_add_mask(index_plan *p, const ga_array *mask, int first)
{
    ga_array *v = &p->view;
    int k = v->ndim - first;
    int mergeable = k > 1;
    for (int i = first; mergeable && i < v->ndim - 1; i++) {
        if (v->strides[i] != v->strides[i + 1] * v->shape[i + 1]) {
            mergeable = 0;
        }
    }
    ga_array m, coords;
    if (mergeable) {
        int64_t n = 1;
        for (int i = first; i < v->ndim; i++) {
            n *= v->shape[i];
        }
        int64_t stride = v->strides[v->ndim - 1];
        v->ndim = first;
        GA_TRY(push_axis(v, n, stride));
        GA_TRY(ga_view_reshape(mask, 1, &n, -1, &m));
    }
    else {
        /* a 0-d mask already got its length-1 axis: view it with that shape */
        int64_t one = 1;
        GA_TRY(ga_view_reshape(mask, mask->ndim == 0 ? 1 : mask->ndim,
                               mask->ndim == 0 ? &one : mask->shape, -1, &m));
    }
    int st = mask_nonzero(&m, &coords);
    ga_array_release(&m);
    if (st != GA_OK) {
        return st;
    }
    int ncols = (int)coords.shape[1];
    for (int c = 0; c < ncols; c++) {
        ga_array col;
        ga_array_view(&col, &coords);
        col.ndim = 1;
        col.offset += c * (int64_t)sizeof(int64_t);
        col.strides[0] = coords.strides[0];
        p->idx[p->nidx] = col;
        p->idx_axis[p->nidx] = first + c;
        p->nidx++;
    }
    ga_array_release(&coords);
    return GA_OK;
}

static int
plan_build(const ga_array *x, int nkeys, const ga_key *keys, index_plan *p)
{
    memset(p, 0, sizeof(*p));
    int consumed = 0, nellipsis = 0;
    for (int k = 0; k < nkeys; k++) {
        switch (keys[k].kind) {
        case GA_KEY_INT:
        case GA_KEY_SLICE:
            consumed++;
            break;
        case GA_KEY_ELLIPSIS:
            nellipsis++;
            break;
        case GA_KEY_ARRAY:
            p->has_adv = 1;
            consumed += keys[k].array->dtype == GA_BOOL ? keys[k].array->ndim : 1;
            break;
        default:
            break;
        }
    }
    if (nellipsis > 1) {
        return ga_error(GA_ERR_INDEX, "an index can only have a single ellipsis ('...')");
    }
    if (consumed > x->ndim) {
        return ga_error(GA_ERR_INDEX,
                        "too many indices for array: array is %d-dimensional, but %d were "
                        "indexed",
                        x->ndim, consumed);
    }
    p->view = *x;
    p->view.ndim = 0;
    p->adjacent = 1;
    int ax = 0;   /* next axis of x */
    int run = 0;  /* 0: no advanced item yet, 1: in the first run, 2: run ended */
    int st = GA_OK;
    for (int k = 0; k < nkeys && st == GA_OK; k++) {
        const ga_key *key = &keys[k];
        int adv = key->kind == GA_KEY_ARRAY || (key->kind == GA_KEY_INT && p->has_adv);
        if (adv) {
            if (run == 0) {
                p->adv_pos = p->view.ndim;
            }
            else if (run == 2) {
                p->adjacent = 0;
            }
            run = 1;
        }
        else if (run == 1 && (key->kind == GA_KEY_SLICE ||
                              (key->kind == GA_KEY_ELLIPSIS && x->ndim > consumed))) {
            run = 2;
        }
        switch (key->kind) {
        case GA_KEY_INT: {
            int64_t i = key->value, n = x->shape[ax];
            if (i < -n || i >= n) {
                return ga_error(GA_ERR_INDEX, "index %lld is out of bounds for axis %d with "
                                "size %lld", (long long)i, ax, (long long)n);
            }
            p->view.offset += (i < 0 ? i + n : i) * x->strides[ax];
            ax++;
            break;
        }
        case GA_KEY_SLICE: {
            int64_t start = key->start, stop = key->stop, step = key->step;
            if (step == 0) {
                return ga_error(GA_ERR_VALUE, "slice step cannot be zero");
            }
            int64_t n = slice_adjust(x->shape[ax], &start, &stop, step);
            if (n > 0) {
                p->view.offset += start * x->strides[ax];
            }
            st = push_axis(&p->view, n, x->strides[ax] * step);
            ax++;
            break;
        }
        case GA_KEY_NEWAXIS:
            st = push_axis(&p->view, 1, 0);
            break;
        case GA_KEY_ELLIPSIS:
            for (int e = 0; e < x->ndim - consumed && st == GA_OK; e++, ax++) {
                st = push_axis(&p->view, x->shape[ax], x->strides[ax]);
            }
            break;
        case GA_KEY_ARRAY: {
            const ga_array *a = key->array;
            ga_array up;
            int have_up = 0;
            if (key->host && ga_array_device(a).kind == GA_DEV_CPU) {
                /* a bool mask spans a->ndim axes from ax; its shape check is below */
                st = upload_host_index(x, ax, a, &up);
                if (st != GA_OK) {
                    break;
                }
                have_up = 1;
                a = &up;
            }
            st = ga_check_same_device("indexing", x, a);
            if (st != GA_OK) {
                if (have_up) {
                    ga_array_release(&up);
                }
                break;
            }
            if (a->dtype == GA_BOOL) {
                int first = p->view.ndim;
                if (a->ndim == 0) {
                    st = push_axis(&p->view, 1, 0);
                }
                for (int i = 0; i < a->ndim && st == GA_OK; i++, ax++) {
                    if (a->shape[i] != x->shape[ax]) {
                        plan_release(p);
                        if (have_up) {
                            ga_array_release(&up);
                        }
                        return ga_error(GA_ERR_INDEX,
                                        "boolean index did not match indexed array along "
                                        "axis %d; size of axis is %lld but size of "
                                        "corresponding boolean axis is %lld",
                                        ax, (long long)x->shape[ax], (long long)a->shape[i]);
                    }
                    st = push_axis(&p->view, x->shape[ax], x->strides[ax]);
                }
                if (st == GA_OK) {
                    st = plan_add_mask(p, a, first);
                }
            }
            else if (ga_dtype_is_integer((ga_dtype)a->dtype)) {
                p->unchecked |= !have_up;
                st = push_axis(&p->view, x->shape[ax], x->strides[ax]);
                if (st == GA_OK) {
                    st = as_int64(a, &p->idx[p->nidx]);
                }
                if (st == GA_OK) {
                    p->idx_axis[p->nidx++] = p->view.ndim - 1;
                }
                ax++;
            }
            else {
                st = ga_error(GA_ERR_INDEX, "arrays used as indices must be of integer (or "
                              "boolean) type, not %s", ga_dtype_infos[a->dtype].name);
            }
            if (have_up) {
                ga_array_release(&up); /* p->idx holds its own reference */
            }
            break;
        }
        default:
            st = ga_error(GA_ERR_RUNTIME, "internal: unknown index kind %d", key->kind);
        }
    }
    /* the axes no key reached (an implicit trailing ellipsis) */
    for (; st == GA_OK && ax < x->ndim; ax++) {
        st = push_axis(&p->view, x->shape[ax], x->strides[ax]);
    }
    if (st != GA_OK) {
        plan_release(p);
    }
    return st;
}

/* The shape of an advanced-index result and where each of its axes comes from. */
typedef struct {
    int ndim;
    int64_t shape[GA_MAXDIMS];
    int nb;    /* broadcast index dims */
    int bpos;  /* result axis where they start */
    int src[GA_MAXDIMS]; /* view axis for the other result axes, -1 for B axes */
} adv_layout;

static int
plan_layout(const index_plan *p, adv_layout *L)
{
    int64_t b[GA_MAXDIMS];
    int nb = 0;
    char s1[256], s2[256];
    for (int j = 0; j < p->nidx; j++) {
        int nd;
        int64_t tmp[GA_MAXDIMS];
        if (ga_broadcast_shapes(nb, b, p->idx[j].ndim, p->idx[j].shape, &nd, tmp) != GA_OK) {
            return ga_error(GA_ERR_INDEX, "shape mismatch: indexing arrays could not be "
                            "broadcast together with shapes %s %s",
                            ga_shape_str(nb, b, s1, sizeof(s1)),
                            ga_shape_str(p->idx[j].ndim, p->idx[j].shape, s2, sizeof(s2)));
        }
        nb = nd;
        memcpy(b, tmp, sizeof(int64_t) * (size_t)nd);
    }
    int indexed[GA_MAXDIMS] = {0};
    for (int j = 0; j < p->nidx; j++) {
        indexed[p->idx_axis[j]] = 1;
    }
    int rest = 0;
    for (int v = 0; v < p->view.ndim; v++) {
        rest += !indexed[v];
    }
    if (nb + rest > GA_MAXDIMS) {
        return ga_error(GA_ERR_INDEX, "indexing: the result would have %d dimensions "
                        "(gpuarr supports up to %d)", nb + rest, GA_MAXDIMS);
    }
    int r = 0;
    int before = p->adjacent ? p->adv_pos : 0;
    for (int v = 0; v < before; v++) {
        if (!indexed[v]) {
            L->src[r] = v;
            L->shape[r++] = p->view.shape[v];
        }
    }
    L->bpos = r;
    L->nb = nb;
    for (int i = 0; i < nb; i++) {
        L->src[r] = -1;
        L->shape[r++] = b[i];
    }
    for (int v = before; v < p->view.ndim; v++) {
        if (!indexed[v]) {
            L->src[r] = v;
            L->shape[r++] = p->view.shape[v];
        }
    }
    L->ndim = r;
    return GA_OK;
}

/* Strides of index array `a` inside the result layout (0 off the B axes). */
static void
index_operand(const adv_layout *L, const ga_array *a, ga_operand *op)
{
    memset(op, 0, sizeof(*op));
    op->data = ga_array_data(a);
    op->dtype = GA_INT64;
    int lead = L->nb - a->ndim;
    for (int i = 0; i < L->nb; i++) {
        int jj = i - lead;
        op->strides[L->bpos + i] = (jj < 0 || a->shape[jj] == 1) ? 0 : a->strides[jj];
    }
}

/* Run gather/scatter over the layout's shape with the given index arrays, each
 * with its (dim, byte stride) of `base`. args0 is the result or the value. With
 * `unchecked` index arrays (from the device) on a backend that reports through
 * records, the operation gets a failure origin and call->target depends on it; the
 * target depends on x's and the index arrays' own dependencies too. */
static int
run_index_kernel(const ga_array *x, int scatter, const adv_layout *L, const ga_array *view,
                 char *base, int nidx, const ga_array *idx, const int64_t *dims,
                 const int64_t *strides, const ga_operand *args0, int unchecked,
                 const index_call *call)
{
    const ga_backend *be;
    GA_TRY(backend_of(x, &be));
    int (*fn)(int, const ga_index_desc *) = scatter ? be->scatter : be->gather;
    if (fn == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED, "%s is not supported by the %s backend",
                        scatter ? "scatter" : "gather", be->name);
    }
    ga_index_desc d;
    memset(&d, 0, sizeof(d));
    d.loop.ndim = L->ndim;
    d.loop.nargs = 2 + nidx;
    d.loop.size = 1;
    for (int r = 0; r < L->ndim; r++) {
        d.loop.shape[r] = L->shape[r];
        d.loop.size *= L->shape[r];
    }
    if (d.loop.size == 0) {
        /* nothing to move, but an empty result still depends on its inputs */
        for (int j = 0; j < nidx && !scatter; j++) {
            ga_fault_flow_into(call->target, &idx[j]);
        }
        if (!scatter) {
            ga_fault_flow_into(call->target, x);
        }
        return GA_OK;
    }
    d.loop.args[0] = *args0;
    ga_operand *b = &d.loop.args[1];
    b->data = base;
    b->dtype = x->dtype;
    for (int r = 0; r < L->ndim; r++) {
        b->strides[r] = L->src[r] < 0 ? 0 : view->strides[L->src[r]];
    }
    for (int j = 0; j < nidx; j++) {
        index_operand(L, &idx[j], &d.loop.args[2 + j]);
        d.index_dims[j] = dims[j];
        d.index_strides[j] = strides[j];
    }
    ga_loop_coalesce(&d.loop);
    int dev = ga_device_local(ga_array_device(x));
    ga_device_count_work(ga_array_device(x), GA_WORK_INDEX, 1);
    int st;
    if (unchecked && nidx > 0 && be->index_checked != NULL) {
        ga_fault *f;
        GA_TRY(ga_fault_begin(ga_array_device(x), call->what, &f));
        st = ga_backend_status(be, be->index_checked(dev, &d, scatter, ga_fault_record_of(f)));
        if (st != GA_OK) {
            ga_fault_cancel(f);
            return st;
        }
        if (ga_fault_sync_checks()) {
            /* for debugging: wait, and fail here as the CPU would */
            st = ga_synchronize(ga_array_device(x));
            int fst = ga_fault_settled_now(f);
            GA_TRY(st);
            GA_TRY(fst);
        }
        else {
            ga_fault_queued(f, call->target);
        }
    }
    else {
        GA_TRY(ga_backend_status(be, fn(dev, &d)));
    }
    if (!scatter) {
        ga_fault_flow_into(call->target, x);
    }
    for (int j = 0; j < nidx; j++) {
        ga_fault_flow_into(call->target, &idx[j]);
    }
    return GA_OK;
}

/* More index arrays than one kernel takes: fold them into one array of byte offsets
 * from the lowest address they can reach, O = sum_j T_j[i_j] with T_j = arange(d_j) *
 * s_j. Each T_j[i_j] is a one-index gather (it wraps and checks the index), and the
 * sum is an int64 add. */
static int
fold_indices(const ga_array *x, const index_plan *p, const adv_layout *L, ga_array *offsets,
             int64_t *lo_out, int64_t *span_out, const index_call *call)
{
    const ga_backend *be;
    GA_TRY(backend_of(x, &be));
    if (be->arange == NULL || be->elementwise == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED, "indexing with more than %d index arrays is not "
                        "supported by the %s backend", GA_MAXARGS - 2, be->name);
    }
    int dev = ga_device_local(ga_array_device(x));
    int64_t lo = 0, span = 1;
    for (int j = 0; j < p->nidx; j++) {
        int64_t d = p->view.shape[p->idx_axis[j]], s = p->view.strides[p->idx_axis[j]];
        int64_t reach = d > 0 ? (d - 1) * s : 0;
        lo += reach < 0 ? reach : 0;
        span += reach < 0 ? -reach : reach;
    }
    /* a layout with only the B axes: each gather makes a B-shaped int64 array */
    adv_layout B = *L;
    B.ndim = L->nb;
    B.bpos = 0;
    for (int i = 0; i < L->nb; i++) {
        B.shape[i] = L->shape[L->bpos + i];
        B.src[i] = -1;
    }
    ga_array acc, part, table;
    GA_TRY(ga_array_empty(&acc, ga_array_device(x), GA_INT64, B.ndim, B.shape));
    int st = GA_OK;
    for (int j = 0; j < p->nidx && st == GA_OK; j++) {
        int64_t d = p->view.shape[p->idx_axis[j]], s = p->view.strides[p->idx_axis[j]];
        st = ga_array_empty(&table, ga_array_device(x), GA_INT64, 1, &d);
        if (st != GA_OK) {
            break;
        }
        if (d > 0) {
            ga_arange_desc a;
            memset(&a, 0, sizeof(a));
            a.dtype = GA_INT64;
            a.n = d;
            a.out = ga_array_data(&table);
            a.istart = j == 0 ? -lo : 0;
            a.istep = s;
            ga_device_count_work(ga_array_device(x), GA_WORK_INDEX, 1);
            st = ga_backend_status(be, be->arange(dev, &a));
        }
        if (st == GA_OK && j > 0) {
            st = ga_array_empty(&part, ga_array_device(x), GA_INT64, B.ndim, B.shape);
        }
        ga_array *dst = j == 0 ? &acc : &part;
        if (st == GA_OK) {
            ga_operand out;
            memset(&out, 0, sizeof(out));
            out.data = ga_array_data(dst);
            out.dtype = GA_INT64;
            memcpy(out.strides, dst->strides, sizeof(int64_t) * (size_t)dst->ndim);
            int64_t eight = sizeof(int64_t);
            ga_array tview = table;
            tview.ndim = 0;
            /* the gather's base is the table itself; its element type is int64 */
            ga_array tx = *x;
            tx.dtype = GA_INT64;
            index_call fold = {call->what, dst->storage};
            st = run_index_kernel(&tx, 0, &B, &tview, ga_array_data(&table), 1, &p->idx[j],
                                  &d, &eight, &out, p->unchecked, &fold);
        }
        if (st == GA_OK && j > 0) {
            ga_loop loop;
            ga_loop_init(&loop, &acc);
            st = ga_loop_add_array(&loop, &acc);
            if (st == GA_OK) {
                st = ga_loop_add_array(&loop, &part);
            }
            if (st == GA_OK && loop.size > 0) {
                ga_loop_coalesce(&loop);
                ga_device_count_work(ga_array_device(x), GA_WORK_ELEMENTWISE, 1);
                st = ga_backend_status(be, be->elementwise(dev, GA_OP_ADD, &loop));
            }
            if (st == GA_OK) {
                ga_fault_flow(&acc, &part);
            }
        }
        if (j > 0) {
            ga_array_release(&part);
        }
        ga_array_release(&table);
    }
    if (st != GA_OK) {
        ga_array_release(&acc);
        return st;
    }
    *offsets = acc;
    *lo_out = lo;
    *span_out = span;
    return GA_OK;
}

/* An empty result whose index arrays are not empty (x[:, [5]] of a (0, 3) array):
 * the kernels never see the indices, but NumPy still reports one out of range. Their
 * minimum and maximum are read back (a rare case; a small counted read on a GPU). */
static int
check_indices_of_empty_result(const index_plan *p, const adv_layout *L)
{
    int64_t size = 1, bsize = 1;
    int nb = 0;
    int64_t b[GA_MAXDIMS];
    for (int r = 0; r < L->ndim; r++) {
        size *= L->shape[r];
    }
    for (int j = 0; j < p->nidx; j++) {
        int nd;
        int64_t tmp[GA_MAXDIMS];
        GA_TRY(ga_broadcast_shapes(nb, b, p->idx[j].ndim, p->idx[j].shape, &nd, tmp));
        nb = nd;
        memcpy(b, tmp, sizeof(int64_t) * (size_t)nd);
    }
    for (int r = 0; r < nb; r++) {
        bsize *= b[r];
    }
    if (size != 0 || bsize == 0) {
        return GA_OK;
    }
    for (int j = 0; j < p->nidx; j++) {
        const ga_array *ix = &p->idx[j];
        int64_t n = p->view.shape[p->idx_axis[j]], ext[2];
        uint32_t mask = ix->ndim == 0 ? 0 : (uint32_t)((1u << ix->ndim) - 1);
        for (int k = 0; k < 2; k++) {
            ga_array r;
            GA_TRY(ga_reduce(k ? GA_RED_MAX : GA_RED_MIN, ix, mask, 0, -1, &r));
            int st = ga_read_to_host(&r, &ext[k], sizeof(int64_t));
            ga_array_release(&r);
            GA_TRY(st);
        }
        for (int k = 0; k < 2; k++) {
            if (ext[k] < -n || ext[k] >= n) {
                return ga_error(GA_ERR_INDEX,
                                "index %lld is out of bounds for axis %d with "
                                "size %lld",
                                (long long)ext[k], p->idx_axis[j], (long long)n);
            }
        }
    }
    return GA_OK;
}

/* Gather or scatter for a resolved plan; args0 is the result/value operand over L. */
static int
plan_run(const ga_array *x, const index_plan *p, const adv_layout *L, int scatter,
         const ga_operand *args0, const index_call *call)
{
    GA_TRY(check_indices_of_empty_result(p, L));
    int64_t dims[GA_MAXDIMS], strides[GA_MAXDIMS];
    if (p->nidx <= GA_MAXARGS - 2) {
        for (int j = 0; j < p->nidx; j++) {
            dims[j] = p->view.shape[p->idx_axis[j]];
            strides[j] = p->view.strides[p->idx_axis[j]];
        }
        return run_index_kernel(x, scatter, L, &p->view, ga_array_data(&p->view), p->nidx,
                                p->idx, dims, strides, args0, p->unchecked, call);
    }
    int64_t size = 1;
    for (int r = 0; r < L->ndim; r++) {
        size *= L->shape[r];
    }
    if (size == 0) {
        return GA_OK;
    }
    ga_array offsets;
    int64_t lo = 0, span = 1, one = 1;
    GA_TRY(fold_indices(x, p, L, &offsets, &lo, &span, call));
    /* The offsets are in range by construction: their own check happened in the fold
     * (and its failures are among the offsets' dependencies). But where a fold gather
     * failed on the device, its part of the offsets is whatever that gather left, so
     * device-made indices are clamped into [0, span): the kernel below then never
     * reports an error of its own (a second, meaningless one) nor reaches outside the
     * view, and its result or destination depends on the fold's failure and reads as
     * failed. Two elementwise launches, only for 3+ index arrays from the device. */
    int st = GA_OK;
    if (p->unchecked) {
        ga_ew_arg clip[3];
        memset(clip, 0, sizeof(clip));
        clip[0].array = &offsets;
        for (int k = 1; k < 3; k++) {
            clip[k].dtype = GA_INT64;
            clip[k].kind = GA_PYSCALAR_INT;
            clip[k].i = k == 1 ? 0 : span - 1;
            clip[k].re = (double)clip[k].i;
        }
        ga_array clipped;
        st = ga_elementwise(GA_OP_CLIP, 3, clip, &offsets, &clipped);
        if (st == GA_OK) {
            ga_array_release(&clipped);
            /* and aligned for the element (every true offset is a multiple of the
             * itemsize, a power of two: views of gpuarr's memory are aligned) */
            ga_ew_arg mask[2];
            memset(mask, 0, sizeof(mask));
            mask[0].array = &offsets;
            mask[1].dtype = GA_INT64;
            mask[1].kind = GA_PYSCALAR_INT;
            mask[1].i = -(int64_t)ga_dtype_itemsize(x->dtype);
            mask[1].re = (double)mask[1].i;
            st = ga_elementwise(GA_OP_BITWISE_AND, 2, mask, &offsets, &clipped);
            if (st == GA_OK) {
                ga_array_release(&clipped);
            }
        }
    }
    if (st == GA_OK && ga_array_size(&p->view) == 0) {
        /* an empty x: every index was out of range, and the fold's gathers failed; no
         * element to reach (the result, unwritten, depends on their failure) */
        ga_fault_flow_into(call->target, &offsets);
    }
    else if (st == GA_OK) {
        st = run_index_kernel(x, scatter, L, &p->view, ga_array_data(&p->view) + lo, 1,
                              &offsets, &span, &one, args0, 0, call);
    }
    ga_array_release(&offsets);
    return st;
}

static int
index_get(const ga_array *x, int nkeys, const ga_key *keys, const char *what,
          ga_array *out)
{
    index_plan p;
    GA_TRY(plan_build(x, nkeys, keys, &p));
    if (!p.has_adv) {
        ga_array_view(out, &p.view);
        return GA_OK;
    }
    if (ga_needs_element_staging(x)) {
        /* the gather kernel loads whole elements: gather from an aligned copy */
        plan_release(&p);
        ga_array xa;
        GA_TRY(ga_element_aligned(x, &xa));
        int st = index_get(&xa, nkeys, keys, what, out);
        ga_array_release(&xa);
        return st;
    }
    adv_layout L;
    int st = plan_layout(&p, &L);
    ga_array res;
    if (st == GA_OK) {
        st = ga_array_empty(&res, ga_array_device(x), (ga_dtype)x->dtype, L.ndim, L.shape);
    }
    if (st == GA_OK) {
        ga_operand o;
        memset(&o, 0, sizeof(o));
        o.data = ga_array_data(&res);
        o.dtype = res.dtype;
        memcpy(o.strides, res.strides, sizeof(int64_t) * (size_t)res.ndim);
        index_call call = {what, res.storage};
        st = plan_run(x, &p, &L, 0, &o, &call);
        if (st == GA_OK) {
            *out = res;
        }
        else {
            ga_array_release(&res);
        }
    }
    plan_release(&p);
    return st;
}

int
ga_index_get(const ga_array *x, int nkeys, const ga_key *keys, ga_array *out)
{
    return index_get(x, nkeys, keys, "x[index]", out);
}

/* The value for an assignment into `target_shape`: broadcastable (after dropping
 * leading length-1 axes, as NumPy allows), in x's dtype, not overlapping x, and
 * element-aligned when a scatter kernel will load it. */
static int
prepare_value(const ga_array *x, const ga_array *value, int nd, const int64_t *shape,
              int scatter, ga_array *out)
{
    GA_TRY(ga_check_same_device("assignment", x, value));
    ga_array v = *value;
    while (v.ndim > nd && v.shape[0] == 1) {
        memmove(v.shape, v.shape + 1, sizeof(int64_t) * (size_t)(v.ndim - 1));
        memmove(v.strides, v.strides + 1, sizeof(int64_t) * (size_t)(v.ndim - 1));
        v.ndim--;
    }
    int ok = v.ndim <= nd;
    for (int i = 0; ok && i < v.ndim; i++) {
        int64_t vd = v.shape[v.ndim - 1 - i], td = shape[nd - 1 - i];
        ok = vd == td || vd == 1;
    }
    if (!ok) {
        char b1[256], b2[256];
        return ga_error(GA_ERR_SHAPE, "could not broadcast input array from shape %s into "
                        "shape %s",
                        ga_shape_str(value->ndim, value->shape, b1, sizeof(b1)),
                        ga_shape_str(nd, shape, b2, sizeof(b2)));
    }
    /* A value that shares bytes with x (a view of it, or another wrapper of the same
     * host memory) could be overwritten while it is read (x[1:] = x[:-1]); a cast
     * needs a copy anyway. */
    if (v.dtype != x->dtype || ga_array_overlap(&v, x)) {
        GA_TRY(ga_array_empty(out, ga_array_device(x), (ga_dtype)x->dtype, v.ndim, v.shape));
        int st = ga_copy_same_device(out, &v);
        if (st != GA_OK) {
            ga_array_release(out);
        }
        return st;
    }
    if (scatter) {
        return ga_element_aligned(&v, out); /* the scatter loads whole elements */
    }
    ga_array_view(out, &v); /* the copy kernel stages unaligned operands itself */
    return GA_OK;
}

int
ga_index_set(ga_array *x, int nkeys, const ga_key *keys, const ga_array *value,
             const ga_scalar_bytes *scalar)
{
    if (!ga_array_writeable(x)) {
        return ga_error(GA_ERR_VALUE, "assignment destination is read-only");
    }
    ga_array_note_write(x);
    index_plan p;
    GA_TRY(plan_build(x, nkeys, keys, &p));
    if (p.has_adv && ga_needs_element_staging(x)) {
        /* the scatter kernel stores whole elements: assign into an aligned copy, then
         * copy it back (the copy kernel takes unaligned operands, so a basic index,
         * which only copies, needs none of this) */
        plan_release(&p);
        ga_array xa;
        GA_TRY(ga_element_aligned(x, &xa));
        int st = ga_index_set(&xa, nkeys, keys, value, scalar);
        if (st == GA_OK) {
            st = ga_copy_same_device(x, &xa);
        }
        ga_array_release(&xa);
        return st;
    }
    adv_layout L;
    int st = GA_OK;
    /* An int64 index array that is a view of x's memory (x[x[:3]] = v) would be read
     * while the scatter writes x: copy it first, as NumPy does. */
    for (int j = 0; j < p.nidx && st == GA_OK; j++) {
        if (ga_array_overlap(&p.idx[j], x)) {
            ga_array c;
            st = ga_astype(&p.idx[j], GA_INT64, &c);
            if (st == GA_OK) {
                ga_array_release(&p.idx[j]);
                p.idx[j] = c;
            }
        }
    }
    int nd;
    const int64_t *shape;
    if (st == GA_OK && p.has_adv) {
        st = plan_layout(&p, &L);
        nd = L.ndim;
        shape = L.shape;
    }
    else {
        nd = p.view.ndim;
        shape = p.view.shape;
    }
    ga_array v;
    int have_v = 0;
    if (st == GA_OK && value != NULL) {
        st = prepare_value(x, value, nd, shape, p.has_adv, &v);
        have_v = st == GA_OK;
    }
    if (st == GA_OK) {
        ga_loop loop;
        memset(&loop, 0, sizeof(loop));
        loop.ndim = nd;
        memcpy(loop.shape, shape, sizeof(int64_t) * (size_t)nd);
        loop.nargs = 0;
        if (have_v) {
            ga_loop_add_array(&loop, &v); /* shape already checked */
        }
        else {
            ga_loop_add_scalar(&loop, (ga_dtype)x->dtype, scalar);
        }
        if (p.has_adv) {
            index_call call = {"x[index] = value", x->storage};
            st = plan_run(x, &p, &L, 1, &loop.args[0], &call);
            if (st == GA_OK && have_v) {
                ga_fault_flow(x, &v);
            }
        }
        else if (have_v) {
            /* a plain copy into the view (v is already x's dtype and apart from x) */
            st = ga_copy_same_device(&p.view, &v);
        }
        else {
            /* a scalar into the view */
            ga_loop cl;
            ga_loop_init(&cl, &p.view);
            cl.args[1] = loop.args[0];
            cl.nargs = 2;
            const ga_backend *be;
            st = backend_of(x, &be);
            if (st == GA_OK && cl.size > 0) {
                ga_loop_coalesce(&cl);
                ga_device_count_work(ga_array_device(x), GA_WORK_ELEMENTWISE, 1);
                st = ga_backend_status(be, be->elementwise(ga_device_local(ga_array_device(x)),
                                                        GA_OP_COPY, &cl));
            }
        }
    }
    if (have_v) {
        ga_array_release(&v);
    }
    plan_release(&p);
    return st;
}

int
ga_take(const ga_array *x, const ga_array *indices, int has_axis, int64_t axis,
        int host, ga_array *out)
{
    if (!ga_dtype_is_integer((ga_dtype)indices->dtype)) {
        return ga_error(GA_ERR_INDEX, "take: indices must be an integer array, not %s",
                        ga_dtype_infos[indices->dtype].name);
    }
    ga_array src;
    int ax = 0;
    if (has_axis) {
        GA_TRY(ga_normalize_axis(axis, x->ndim, &ax));
        ga_array_view(&src, x);
    }
    else {
        int64_t minus1 = -1;
        GA_TRY(ga_view_reshape(x, 1, &minus1, -1, &src));
    }
    ga_key keys[GA_MAXDIMS];
    memset(keys, 0, sizeof(keys));
    for (int i = 0; i < ax; i++) {
        keys[i].kind = GA_KEY_SLICE;
        keys[i].start = 0;
        keys[i].stop = INT64_MAX;
        keys[i].step = 1;
    }
    keys[ax].kind = GA_KEY_ARRAY;
    keys[ax].array = indices;
    keys[ax].host = host;
    int st = index_get(&src, ax + 1, keys, "take", out);
    ga_array_release(&src);
    return st;
}
