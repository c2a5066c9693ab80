/* ga_linalg.c: validation, column-major working copies and the backend call behind
 * gpuarr.linalg's factorisations (ga_linalg.h). */
#include "ga_linalg.h"

#include <string.h>

#include "ga_backend.h"
#include "ga_error.h"
#include "ga_fault.h"
#include "ga_transfer.h"
#include "ga_view.h"

/* NumPy's linalg dtype rule: inexact types stay (float16 is refused, as NumPy does:
 * LAPACK has no half precision), everything else is computed in float64. */
static int
linalg_dtype(const char *what, const ga_array *x, ga_dtype *t)
{
    ga_dtype d = (ga_dtype)x->dtype;
    if (d == GA_FLOAT16) {
        return ga_error(GA_ERR_TYPE, "linalg.%s: array type float16 is unsupported in "
                        "linalg; convert it with x.astype(gpuarr.float32) first", what);
    }
    *t = ga_dtype_is_inexact(d) ? d : GA_FLOAT64;
    return GA_OK;
}

static int
check_matrices(const char *what, const ga_array *x, int square)
{
    if (x->ndim < 2) {
        return ga_error(GA_ERR_VALUE, "linalg.%s: %d-dimensional array given. Array must "
                        "be at least two-dimensional (a matrix or a stack of them)",
                        what, x->ndim);
    }
    if (square && x->shape[x->ndim - 1] != x->shape[x->ndim - 2]) {
        return ga_error(GA_ERR_VALUE, "linalg.%s: Last 2 dimensions of the array must be "
                        "square (got shape %lld x %lld)", what,
                        (long long)x->shape[x->ndim - 2], (long long)x->shape[x->ndim - 1]);
    }
    return GA_OK;
}

/* swap the last two axes of a (a view: storage and offset stay) */
static void
swap_last(ga_array *a)
{
    int i = a->ndim - 2, j = a->ndim - 1;
    int64_t s = a->shape[i], st = a->strides[i];
    a->shape[i] = a->shape[j];
    a->strides[i] = a->strides[j];
    a->shape[j] = s;
    a->strides[j] = st;
}

/* product of the batch axes (all but the last two) */
static int64_t
batch_of(const ga_array *a)
{
    int64_t b = 1;
    for (int i = 0; i < a->ndim - 2; i++) {
        b *= a->shape[i];
    }
    return b;
}

/* A new array holding x (..., m, n) in dtype t, the working copy LAPACK and cuSOLVER
 * need anyway (they overwrite their input), so it also does the cast and
 * materialises broadcast batch axes. `colmajor`: column-major, C-contiguous storage
 * of shape (..., n, m) returned as the transposed view (..., m, n); else C order
 * (each matrix's memory is its transpose column-major: SOLVE's mode 1). */
static int
working_copy(const ga_array *x, ga_dtype t, int colmajor, ga_array *out)
{
    int64_t shape[GA_MAXDIMS];
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    if (colmajor) {
        shape[x->ndim - 2] = x->shape[x->ndim - 1];
        shape[x->ndim - 1] = x->shape[x->ndim - 2];
    }
    GA_TRY(ga_array_empty(out, ga_array_device(x), t, x->ndim, shape));
    if (colmajor) {
        swap_last(out);
    }
    int st = ga_array_size(out) ? ga_copy_same_device(out, x) : GA_OK;
    if (st != GA_OK) {
        ga_array_release(out);
    }
    return st;
}

static int
colmajor_copy(const ga_array *x, ga_dtype t, ga_array *out)
{
    return working_copy(x, t, 1, out);
}

/* A new column-major output (..., rows, cols) (see colmajor_copy), uninitialised. */
static int
colmajor_empty(ga_device dev, ga_dtype t, int nb, const int64_t *batch, int64_t rows,
               int64_t cols, ga_array *out)
{
    int64_t shape[GA_MAXDIMS];
    memcpy(shape, batch, sizeof(int64_t) * (size_t)nb);
    shape[nb] = cols;
    shape[nb + 1] = rows;
    GA_TRY(ga_array_empty(out, dev, t, nb + 2, shape));
    swap_last(out);
    return GA_OK;
}

/* Hand d to the backend of src's device, unless the batch has nothing to compute.
 * `src` is the working copy the backend factors (it carries the input's
 * dependencies, ga_fault.h); the outputs o1..o3 (may be NULL) get them too. A
 * backend that fails on a failed input (garbage read as a singular matrix) reports
 * the input's own failure instead. */
static int
run(const char *what, const ga_array *src, ga_linalg_desc *d, ga_array *o1, ga_array *o2,
    ga_array *o3)
{
    if (d->batch == 0 || d->m == 0 || d->n == 0) {
        return GA_OK;
    }
    ga_device dev = ga_array_device(src);
    const ga_backend *be;
    GA_TRY(ga_device_backend(dev, &be));
    if (be->linalg == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED, "linalg.%s is not implemented on %s devices "
                        "yet; move the array to the CPU with x.to(gpuarr.cpu()) first",
                        what, be->name);
    }
    ga_device_count_work(dev, GA_WORK_LINALG, 1);
    int st = ga_backend_status(be, be->linalg(ga_device_local(dev), d));
    if (st != GA_OK) {
        /* (the backend's message stays in the buffer when src depends on nothing) */
        int fst = ga_fault_check(src);
        return fst != GA_OK ? fst : st;
    }
    ga_array *outs[3] = {o1, o2, o3};
    for (int i = 0; i < 3; i++) {
        if (outs[i] != NULL) {
            ga_fault_flow(outs[i], src);
        }
    }
    return GA_OK;
}

static void
desc_init(ga_linalg_desc *d, int op, ga_dtype t, const ga_array *a)
{
    memset(d, 0, sizeof(*d));
    d->op = op;
    d->dtype = t;
    d->batch = batch_of(a);
    d->m = a->shape[a->ndim - 2];
    d->n = a->shape[a->ndim - 1];
    d->a = ga_array_data(a);
}

int
ga_linalg_solve(const ga_array *a, const ga_array *b, ga_array *x)
{
    GA_TRY(ga_check_same_device("solve", a, b));
    GA_TRY(check_matrices("solve", a, 1));
    if (b->ndim < 1) {
        return ga_error(GA_ERR_VALUE, "linalg.solve: x2 must have at least one dimension");
    }
    ga_dtype ta = GA_FLOAT64, tb = GA_FLOAT64;
    GA_TRY(linalg_dtype("solve", a, &ta));
    GA_TRY(linalg_dtype("solve", b, &tb));
    ga_dtype t = ga_promote(ta, tb);
    int64_t n = a->shape[a->ndim - 1];
    /* a 1-D x2 is one vector (n,) for every matrix; otherwise (..., n, k) matrices */
    int vector = b->ndim == 1;
    ga_array bm = *b;
    if (vector) {
        bm.ndim = 2;
        bm.shape[1] = 1;
        bm.strides[1] = 0;
    }
    int64_t rows = bm.shape[bm.ndim - 2], k = bm.shape[bm.ndim - 1];
    if (rows != n) {
        return ga_error(GA_ERR_SHAPE, "linalg.solve: x1 is %lld x %lld but x2 has %lld "
                        "%s; x2 must be (n,) or (..., n, k) with n = %lld", (long long)n,
                        (long long)n, (long long)rows, vector ? "elements" : "rows",
                        (long long)n);
    }
    int nb;
    int64_t shape[GA_MAXDIMS];
    GA_TRY(ga_broadcast_shapes(a->ndim - 2, a->shape, bm.ndim - 2, bm.shape, &nb, shape));
    if (nb + 2 > GA_MAXDIMS) {
        return ga_error(GA_ERR_VALUE, "linalg.solve: too many dimensions");
    }
    ga_array av, bv, lu;
    shape[nb] = n;
    shape[nb + 1] = n;
    GA_TRY(ga_view_broadcast_to(a, nb + 2, shape, &av));
    shape[nb + 1] = k;
    int st = ga_view_broadcast_to(&bm, nb + 2, shape, &bv);
    if (st != GA_OK) {
        ga_array_release(&av);
        return st;
    }
    /* A's working copy in C order, each matrix's memory A^T column-major: a plain copy
     * where A is C-contiguous (a transposing one costs several times more), and the
     * backend factors A^T and solves with its transpose (mode 1, ga_linalg_op) */
    st = working_copy(&av, t, 0, &lu);
    if (st == GA_OK) {
        st = colmajor_copy(&bv, t, x);
        if (st == GA_OK) {
            ga_linalg_desc d;
            desc_init(&d, GA_LINALG_SOLVE, t, &lu);
            d.mode = 1;
            d.nrhs = k;
            d.b = ga_array_data(x);
            st = run("solve", &lu, &d, x, NULL, NULL);
            if (st != GA_OK) {
                ga_array_release(x);
            }
        }
        ga_array_release(&lu);
    }
    ga_array_release(&av);
    ga_array_release(&bv);
    if (st == GA_OK && vector) {
        /* storage (..., 1, n) C-contiguous: the same bytes as the (..., n) result */
        x->ndim = nb + 1;
        x->shape[nb] = n;
        x->strides[nb] = ga_dtype_itemsize(t);
    }
    return st;
}

int
ga_linalg_lu(const ga_array *a, ga_array *lu, ga_array *piv)
{
    GA_TRY(check_matrices("det", a, 1));
    ga_dtype t = GA_FLOAT64;
    GA_TRY(linalg_dtype("det", a, &t));
    GA_TRY(colmajor_copy(a, t, lu));
    int64_t shape[GA_MAXDIMS];
    memcpy(shape, a->shape, sizeof(int64_t) * (size_t)(a->ndim - 1));
    int st = ga_array_empty(piv, ga_array_device(a), GA_INT32, a->ndim - 1, shape);
    if (st != GA_OK) {
        ga_array_release(lu);
        return st;
    }
    ga_linalg_desc d;
    desc_init(&d, GA_LINALG_LU, t, lu);
    d.ipiv = (int32_t *)ga_array_data(piv);
    st = run("det", lu, &d, piv, NULL, NULL);
    if (st != GA_OK) {
        ga_array_release(lu);
        ga_array_release(piv);
    }
    return st;
}

int
ga_linalg_cholesky(const ga_array *a, int upper, ga_array *out)
{
    GA_TRY(check_matrices("cholesky", a, 1));
    ga_dtype t = GA_FLOAT64;
    GA_TRY(linalg_dtype("cholesky", a, &t));
    GA_TRY(colmajor_copy(a, t, out));
    ga_linalg_desc d;
    desc_init(&d, GA_LINALG_CHOLESKY, t, out);
    d.mode = upper ? 1 : 0;
    int st = run("cholesky", out, &d, NULL, NULL, NULL);
    if (st != GA_OK) {
        ga_array_release(out);
    }
    return st;
}

int
ga_linalg_eigh(const ga_array *a, int vectors, ga_array *w, ga_array *v)
{
    GA_TRY(check_matrices(vectors ? "eigh" : "eigvalsh", a, 1));
    ga_dtype t = GA_FLOAT64;
    GA_TRY(linalg_dtype(vectors ? "eigh" : "eigvalsh", a, &t));
    GA_TRY(colmajor_copy(a, t, v));
    int st = ga_array_empty(w, ga_array_device(a), ga_dtype_real_of(t), a->ndim - 1,
                            a->shape);
    if (st != GA_OK) {
        ga_array_release(v);
        return st;
    }
    ga_linalg_desc d;
    desc_init(&d, GA_LINALG_EIGH, t, v);
    d.mode = vectors ? 1 : 0;
    d.w = ga_array_data(w);
    st = run(vectors ? "eigh" : "eigvalsh", v, &d, w, NULL, NULL);
    if (st != GA_OK || !vectors) {
        ga_array_release(v);
    }
    if (st != GA_OK) {
        ga_array_release(w);
    }
    return st;
}

int
ga_linalg_svd(const ga_array *a, int mode, ga_array *u, ga_array *s, ga_array *vh)
{
    const char *what = mode ? "svd" : "svdvals";
    GA_TRY(check_matrices(what, a, 0));
    ga_dtype t = GA_FLOAT64;
    GA_TRY(linalg_dtype(what, a, &t));
    int nb = a->ndim - 2;
    int64_t m = a->shape[nb], n = a->shape[nb + 1], k = m < n ? m : n;
    ga_device dev = ga_array_device(a);
    ga_array work;
    GA_TRY(colmajor_copy(a, t, &work));
    int64_t shape[GA_MAXDIMS];
    memcpy(shape, a->shape, sizeof(int64_t) * (size_t)nb);
    shape[nb] = k;
    int have_u = 0, have_vh = 0;
    int st = ga_array_empty(s, dev, ga_dtype_real_of(t), nb + 1, shape);
    int have_s = st == GA_OK;
    if (st == GA_OK && mode) {
        st = colmajor_empty(dev, t, nb, a->shape, m, mode == 2 ? m : k, u);
        have_u = st == GA_OK;
        if (st == GA_OK) {
            st = colmajor_empty(dev, t, nb, a->shape, mode == 2 ? n : k, n, vh);
            have_vh = st == GA_OK;
        }
    }
    if (st == GA_OK) {
        ga_linalg_desc d;
        desc_init(&d, GA_LINALG_SVD, t, &work);
        d.mode = mode;
        d.w = ga_array_data(s);
        d.u = mode ? ga_array_data(u) : NULL;
        d.vh = mode ? ga_array_data(vh) : NULL;
        st = run(what, &work, &d, s, mode ? u : NULL, mode ? vh : NULL);
    }
    ga_array_release(&work);
    if (st != GA_OK) {
        if (have_s) {
            ga_array_release(s);
        }
        if (have_u) {
            ga_array_release(u);
        }
        if (have_vh) {
            ga_array_release(vh);
        }
    }
    return st;
}

int
ga_linalg_qr(const ga_array *a, int complete, ga_array *q, ga_array *r)
{
    GA_TRY(check_matrices("qr", a, 0));
    ga_dtype t = GA_FLOAT64;
    GA_TRY(linalg_dtype("qr", a, &t));
    int nb = a->ndim - 2;
    int64_t m = a->shape[nb], n = a->shape[nb + 1], k = m < n ? m : n;
    int64_t qcols = complete ? m : k;
    GA_TRY(colmajor_copy(a, t, r));
    int st = colmajor_empty(ga_array_device(a), t, nb, a->shape, m, qcols, q);
    if (st != GA_OK) {
        ga_array_release(r);
        return st;
    }
    ga_linalg_desc d;
    desc_init(&d, GA_LINALG_QR, t, r);
    d.qcols = qcols;
    d.b = ga_array_data(q);
    st = run("qr", r, &d, q, NULL, NULL);
    if (st != GA_OK) {
        ga_array_release(q);
        ga_array_release(r);
    }
    return st;
}
