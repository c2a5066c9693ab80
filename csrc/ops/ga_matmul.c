/* ga_matmul.c: matmul, tensordot and vecdot, and the row-major -> column-major GEMM
 * plan shared by every backend. */
#include "ga_matmul.h"

#include <string.h>

#include "ga_cast.h"
#include "ga_error.h"
#include "ga_fault.h"
#include "ga_profiler.h"
#include "ga_reduce.h"
#include "ga_transfer.h"

static inline int64_t
max1(int64_t v)
{
    return v > 1 ? v : 1;
}

/* A p x q matrix Y whose element strides are si (along p) and sj (along q), as a
 * column-major BLAS operand: trans 0 when Y itself is column-major (unit stride along
 * p), trans 1 when its transpose is. Strides along length-1 axes never matter. */
static int
fit(int64_t p, int64_t q, int64_t si, int64_t sj, int allow_trans, int32_t *trans,
    int64_t *ld)
{
    if (p <= 1 || si == 1) {
        int64_t l = q <= 1 ? max1(p) : sj;
        if (l >= max1(p)) {
            *trans = 0;
            *ld = l;
            return 1;
        }
    }
    if (allow_trans && (q <= 1 || sj == 1)) {
        int64_t l = p <= 1 ? max1(q) : si;
        if (l >= max1(q)) {
            *trans = 1;
            *ld = l;
            return 1;
        }
    }
    return 0;
}

/* Byte strides -> element strides; 0 when a stride is not a multiple of the item. */
static int
elem_strides(const ga_gemm_operand *x, int64_t item, int64_t *rs, int64_t *cs, int64_t *bs)
{
    if (x->row_stride % item || x->col_stride % item || x->batch_stride % item) {
        return 0;
    }
    *rs = x->row_stride / item;
    *cs = x->col_stride / item;
    *bs = x->batch_stride / item;
    return 1;
}

/* The plan; *swapped says whether g->a is B's data (the row-major mapping). */
static int
plan(ga_dtype dtype, const ga_gemm_operand *a, const ga_gemm_operand *b,
     const ga_gemm_operand *c, int64_t batch, ga_gemm_desc *g, int *need_copy, int *swapped)
{
    int64_t m = a->rows, k = a->cols, n = b->cols;
    if (b->rows != k || c->rows != m || c->cols != n) {
        return ga_error(GA_ERR_SHAPE, "gemm plan: inconsistent sizes A %lldx%lld, B "
                        "%lldx%lld, C %lldx%lld", (long long)a->rows, (long long)a->cols,
                        (long long)b->rows, (long long)b->cols, (long long)c->rows,
                        (long long)c->cols);
    }
    int64_t item = ga_dtype_itemsize(dtype);
    int64_t ars = 0, acs = 0, abs_ = 0, brs = 0, bcs = 0, bbs = 0, crs = 0, ccs = 0, cbs = 0;
    int copy = 0;
    if (!elem_strides(a, item, &ars, &acs, &abs_)) {
        copy |= GA_GEMM_COPY_A;
    }
    if (!elem_strides(b, item, &brs, &bcs, &bbs)) {
        copy |= GA_GEMM_COPY_B;
    }
    if (!elem_strides(c, item, &crs, &ccs, &cbs)) {
        copy |= GA_GEMM_COPY_C;
    }
    /* Strided-batched BLAS/cuBLAS take no negative batch stride (x[::-1] @ y): such an
     * operand is made contiguous first, before it reaches the library. */
    if (batch > 1 && abs_ < 0) {
        copy |= GA_GEMM_COPY_A;
    }
    if (batch > 1 && bbs < 0) {
        copy |= GA_GEMM_COPY_B;
    }
    if (batch > 1 && cbs < 0) {
        copy |= GA_GEMM_COPY_C;
    }
    if (copy) {
        *need_copy = copy;
        return GA_OK;
    }
    memset(g, 0, sizeof(*g));
    int32_t tc;
    int64_t ldc;
    int32_t t1 = 0, t2 = 0;
    int64_t ld1 = 1, ld2 = 1;
    /* C row-major (unit column stride): the column-major product is
     * C^T (n x m) = B^T (n x k) * A^T (k x m). */
    if (fit(n, m, ccs, crs, 0, &tc, &ldc)) {
        *swapped = 1;
        g->m = n;
        g->n = m;
        if (!fit(n, k, bcs, brs, 1, &t1, &ld1)) {
            copy |= GA_GEMM_COPY_B;
        }
        if (!fit(k, m, acs, ars, 1, &t2, &ld2)) {
            copy |= GA_GEMM_COPY_A;
        }
        g->a = b->data;
        g->stride_a = bbs;
        g->b = a->data;
        g->stride_b = abs_;
    }
    /* C column-major: C (m x n) = A (m x k) * B (k x n). */
    else if (fit(m, n, crs, ccs, 0, &tc, &ldc)) {
        *swapped = 0;
        g->m = m;
        g->n = n;
        if (!fit(m, k, ars, acs, 1, &t1, &ld1)) {
            copy |= GA_GEMM_COPY_A;
        }
        if (!fit(k, n, brs, bcs, 1, &t2, &ld2)) {
            copy |= GA_GEMM_COPY_B;
        }
        g->a = a->data;
        g->stride_a = abs_;
        g->b = b->data;
        g->stride_b = bbs;
    }
    else {
        copy |= GA_GEMM_COPY_C;
    }
    *need_copy = copy;
    if (copy) {
        return GA_OK;
    }
    g->dtype = dtype;
    g->k = k;
    g->transa = t1;
    g->lda = ld1;
    g->transb = t2;
    g->ldb = ld2;
    g->c = (char *)c->data;
    g->ldc = ldc;
    g->stride_c = cbs;
    g->batch = batch;
    g->alpha = 1.0;
    g->beta = 0.0;
    return GA_OK;
}

int
ga_gemm_plan(ga_dtype dtype, const ga_gemm_operand *a, const ga_gemm_operand *b,
             const ga_gemm_operand *c, int64_t batch, ga_gemm_desc *g, int *need_copy)
{
    int swapped = 0;
    return plan(dtype, a, b, c, batch, g, need_copy, &swapped);
}



static int batched_gemm_aligned(const ga_array *a, const ga_array *b, ga_array *c);

/* The product of a (..., m, k) and b (..., k, n) into c (..., m, n), all of one dtype
 * and device, batch axes already broadcast to c's (a/b strides 0 there). c is always
 * our own output (aligned); a and b are staged when unaligned (ga_element_aligned). */
static int
batched_gemm(const ga_array *a, const ga_array *b, ga_array *c)
{
    if (!ga_needs_element_staging(a) && !ga_needs_element_staging(b)) {
        return batched_gemm_aligned(a, b, c);
    }
    ga_array aa, ba;
    GA_TRY(ga_element_aligned(a, &aa));
    int st = ga_element_aligned(b, &ba);
    if (st == GA_OK) {
        st = batched_gemm_aligned(&aa, &ba, c);
        ga_array_release(&ba);
    }
    ga_array_release(&aa);
    return st;
}

static int
batched_gemm_aligned(const ga_array *a, const ga_array *b, ga_array *c)
{
    int nd = c->ndim;
    int nb = nd - 2;
    int64_t m = c->shape[nd - 2], n = c->shape[nd - 1], k = a->shape[nd - 1];
    const ga_backend *be;
    GA_TRY(ga_device_backend(ga_array_device(c), &be));
    if (be->gemm == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED, "matmul is not supported by the %s backend",
                        be->name);
    }
    /* coalesce the batch axes over all three operands; the innermost run becomes the
     * descriptor's batch and the rest are looped here */
    int64_t shp[GA_MAXDIMS], sa[GA_MAXDIMS], sb[GA_MAXDIMS], sc[GA_MAXDIMS];
    int q = 0;
    for (int i = 0; i < nb; i++) {
        if (c->shape[i] == 1) {
            continue;
        }
        if (q > 0 && sa[q - 1] == a->strides[i] * c->shape[i] &&
            sb[q - 1] == b->strides[i] * c->shape[i] &&
            sc[q - 1] == c->strides[i] * c->shape[i]) {
            shp[q - 1] *= c->shape[i];
            sa[q - 1] = a->strides[i];
            sb[q - 1] = b->strides[i];
            sc[q - 1] = c->strides[i];
            continue;
        }
        shp[q] = c->shape[i];
        sa[q] = a->strides[i];
        sb[q] = b->strides[i];
        sc[q] = c->strides[i];
        q++;
    }
    int64_t batch = q > 0 ? shp[q - 1] : 1;
    ga_gemm_operand A = {ga_array_data(a), m, k, a->strides[nd - 2], a->strides[nd - 1],
                         q > 0 ? sa[q - 1] : 0};
    ga_gemm_operand B = {ga_array_data(b), k, n, b->strides[nd - 2], b->strides[nd - 1],
                         q > 0 ? sb[q - 1] : 0};
    ga_gemm_operand C = {ga_array_data(c), m, n, c->strides[nd - 2], c->strides[nd - 1],
                         q > 0 ? sc[q - 1] : 0};
    ga_gemm_desc g;
    int need = 0, swapped = 0;
    GA_TRY(plan((ga_dtype)c->dtype, &A, &B, &C, batch, &g, &need, &swapped));
    if (need) {
        /* c is always our own contiguous output; a and b can be made contiguous */
        ga_array ac, bc;
        if (need & GA_GEMM_COPY_C) {
            return ga_error(GA_ERR_RUNTIME, "matmul: internal error, output not plannable");
        }
        GA_TRY(ga_contiguous(a, &ac));
        int st = ga_contiguous(b, &bc);
        if (st == GA_OK) {
            st = batched_gemm(&ac, &bc, c);
            ga_array_release(&bc);
        }
        ga_array_release(&ac);
        return st;
    }
    int64_t outer = 1;
    for (int i = 0; i < q - 1; i++) {
        outer *= shp[i];
    }
    const char *a0 = g.a, *b0 = g.b;
    char *c0 = g.c;
    for (int64_t o = 0; o < outer; o++) {
        int64_t rem = o, offa = 0, offb = 0, offc = 0;
        for (int i = q - 2; i >= 0; i--) {
            int64_t idx = rem % shp[i];
            rem /= shp[i];
            offa += idx * sa[i];
            offb += idx * sb[i];
            offc += idx * sc[i];
        }
        g.a = a0 + (swapped ? offb : offa);
        g.b = b0 + (swapped ? offa : offb);
        g.c = c0 + offc;
        ga_device_count_work(ga_array_device(c), GA_WORK_GEMM, g.batch);
        if (ga_describe_on()) {
            int64_t mnk[4] = {g.batch, g.m, g.n, g.k}, it = ga_dtype_itemsize(g.dtype);
            ga_prof_describe("matmul", g.dtype, 4, mnk,
                             g.batch * it * (g.m * g.k + g.k * g.n + g.m * g.n));
        }
        GA_TRY(ga_backend_status(be, be->gemm(ga_device_local(ga_array_device(c)), &g)));
    }
    ga_fault_flow(c, a);
    ga_fault_flow(c, b);
    return GA_OK;
}

/* a's shape as (batch..., rows, cols) right-aligned to nb batch axes, with stride 0
 * on broadcast batch axes. */
static void
batch_view(const ga_array *x, int nb, const int64_t *bshape, int64_t rows, int64_t cols,
           int64_t rs, int64_t cs, ga_array *v)
{
    *v = *x;
    int xb = x->ndim - 2;
    v->ndim = nb + 2;
    for (int i = 0; i < nb; i++) {
        int j = i - (nb - xb);
        v->shape[i] = bshape[i];
        v->strides[i] = (j >= 0 && x->shape[j] != 1) ? x->strides[j] : 0;
    }
    v->shape[nb] = rows;
    v->shape[nb + 1] = cols;
    v->strides[nb] = rs;
    v->strides[nb + 1] = cs;
}

int
ga_matmul(const ga_array *a_in, const ga_array *b_in, ga_array *out)
{
    GA_TRY(ga_check_same_device("matmul", a_in, b_in));
    if (a_in->ndim == 0 || b_in->ndim == 0) {
        return ga_error(GA_ERR_VALUE, "matmul: Input operand %d does not have enough "
                        "dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->"
                        "(n?,m?) requires 1); use multiply (*) for scalars",
                        a_in->ndim == 0 ? 0 : 1);
    }
    ga_dtype t = ga_promote((ga_dtype)a_in->dtype, (ga_dtype)b_in->dtype);
    /* matrices: a 1-d a is a row (1, k), a 1-d b is a column (k, 1) */
    ga_array a = *a_in, b = *b_in;
    if (a.ndim == 1) {
        a.ndim = 2;
        a.shape[1] = a.shape[0];
        a.strides[1] = a.strides[0];
        a.shape[0] = 1;
        a.strides[0] = 0;
    }
    if (b.ndim == 1) {
        b.ndim = 2;
        b.shape[1] = 1;
        b.strides[1] = 0;
    }
    int64_t m = a.shape[a.ndim - 2], k = a.shape[a.ndim - 1];
    int64_t kb = b.shape[b.ndim - 2], n = b.shape[b.ndim - 1];
    if (k != kb) {
        return ga_error(GA_ERR_SHAPE, "matmul: Input operand 1 has a mismatch in its core "
                        "dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size "
                        "%lld is different from %lld)", (long long)kb, (long long)k);
    }
    int nb;
    int64_t bshape[GA_MAXDIMS];
    GA_TRY(ga_broadcast_shapes(a.ndim - 2, a.shape, b.ndim - 2, b.shape, &nb, bshape));
    if (nb + 2 > GA_MAXDIMS) {
        return ga_error(GA_ERR_VALUE, "matmul: too many dimensions");
    }
    /* result shape (NumPy drops the axes added for 1-d operands) */
    int64_t oshape[GA_MAXDIMS];
    int ond = nb;
    memcpy(oshape, bshape, sizeof(int64_t) * (size_t)nb);
    if (a_in->ndim > 1) {
        oshape[ond++] = m;
    }
    if (b_in->ndim > 1) {
        oshape[ond++] = n;
    }
    GA_TRY(ga_array_empty(out, ga_array_device(a_in), t, ond, oshape));
    if (ga_array_size(out) == 0) {
        ga_fault_flow(out, a_in); /* an empty result depends on its inputs too */
        ga_fault_flow(out, b_in);
        return GA_OK;
    }
    int st;
    if (k == 0) {
        st = ga_fill_value(out, 0.0);
        goto done;
    }
    ga_array ac = {0}, bc = {0};
    st = ga_as_dtype(&a, t, &ac);
    if (st == GA_OK) {
        st = ga_as_dtype(&b, t, &bc);
    }
    if (st == GA_OK) {
        ga_array av, bv, cv;
        int64_t item = ga_dtype_itemsize(t);
        batch_view(&ac, nb, bshape, m, k, ac.strides[ac.ndim - 2], ac.strides[ac.ndim - 1],
                   &av);
        batch_view(&bc, nb, bshape, k, n, bc.strides[bc.ndim - 2], bc.strides[bc.ndim - 1],
                   &bv);
        /* the output seen as (batch..., m, n), C-contiguous */
        cv = *out;
        cv.ndim = nb + 2;
        memcpy(cv.shape, bshape, sizeof(int64_t) * (size_t)nb);
        cv.shape[nb] = m;
        cv.shape[nb + 1] = n;
        ga_contiguous_strides(nb + 2, cv.shape, (int)item, cv.strides);
        st = batched_gemm(&av, &bv, &cv);
    }
    ga_array_release(&ac);
    ga_array_release(&bc);
done:
    if (st != GA_OK) {
        ga_array_release(out);
        return ga_error_context(st, "matmul");
    }
    ga_fault_flow(out, a_in); /* also when k == 0 (zeros computed from them) */
    ga_fault_flow(out, b_in);
    return GA_OK;
}

int
ga_tensordot(const ga_array *a, const ga_array *b, int n, const int64_t *axes_a,
             const int64_t *axes_b, ga_array *out)
{
    GA_TRY(ga_check_same_device("tensordot", a, b));
    if (n < 0 || n > a->ndim || n > b->ndim) {
        return ga_error(GA_ERR_VALUE, "tensordot: cannot contract %d axes of arrays with "
                        "%d and %d dimensions", n, a->ndim, b->ndim);
    }
    uint32_t ma = 0, mb = 0;
    int ia[GA_MAXDIMS], ib[GA_MAXDIMS];
    for (int i = 0; i < n; i++) {
        int64_t x = axes_a[i], y = axes_b[i];
        if (x < -a->ndim || x >= a->ndim || y < -b->ndim || y >= b->ndim) {
            return ga_error(GA_ERR_INDEX, "tensordot: axis out of range (%lld for %d "
                            "dimensions, %lld for %d)", (long long)x, a->ndim,
                            (long long)y, b->ndim);
        }
        ia[i] = (int)(x < 0 ? x + a->ndim : x);
        ib[i] = (int)(y < 0 ? y + b->ndim : y);
        if ((ma >> ia[i]) & 1u || (mb >> ib[i]) & 1u) {
            return ga_error(GA_ERR_VALUE, "tensordot: repeated axis");
        }
        ma |= 1u << ia[i];
        mb |= 1u << ib[i];
        if (a->shape[ia[i]] != b->shape[ib[i]]) {
            return ga_error(GA_ERR_SHAPE, "tensordot: shape-mismatch for sum (axis %d of "
                            "size %lld with axis %d of size %lld)", ia[i],
                            (long long)a->shape[ia[i]], ib[i], (long long)b->shape[ib[i]]);
        }
    }
    /* a permuted to (free..., contracted...), b to (contracted..., free...) */
    ga_array ap = *a, bp = *b;
    int64_t M = 1, N = 1, K = 1;
    int64_t oshape[GA_MAXDIMS];
    int ond = 0, q = 0;
    for (int i = 0; i < a->ndim; i++) {
        if (!((ma >> i) & 1u)) {
            ap.shape[q] = a->shape[i];
            ap.strides[q++] = a->strides[i];
            M *= a->shape[i];
            oshape[ond++] = a->shape[i];
        }
    }
    for (int i = 0; i < n; i++) {
        ap.shape[q] = a->shape[ia[i]];
        ap.strides[q++] = a->strides[ia[i]];
        K *= a->shape[ia[i]];
    }
    q = 0;
    for (int i = 0; i < n; i++) {
        bp.shape[q] = b->shape[ib[i]];
        bp.strides[q++] = b->strides[ib[i]];
    }
    for (int i = 0; i < b->ndim; i++) {
        if (!((mb >> i) & 1u)) {
            bp.shape[q] = b->shape[i];
            bp.strides[q++] = b->strides[i];
            N *= b->shape[i];
            if (ond >= GA_MAXDIMS) {
                return ga_error(GA_ERR_VALUE, "tensordot: the result would have more than "
                                "%d dimensions", GA_MAXDIMS);
            }
            oshape[ond++] = b->shape[i];
        }
    }
    ga_array ac, bc;
    GA_TRY(ga_contiguous(&ap, &ac));
    int st = ga_contiguous(&bp, &bc);
    if (st != GA_OK) {
        ga_array_release(&ac);
        return st;
    }
    /* contiguous: (M, K) and (K, N) views are free */
    ga_array a2 = ac, b2 = bc, r;
    a2.ndim = 2;
    a2.shape[0] = M;
    a2.shape[1] = K;
    ga_contiguous_strides(2, a2.shape, ga_dtype_itemsize(a2.dtype), a2.strides);
    b2.ndim = 2;
    b2.shape[0] = K;
    b2.shape[1] = N;
    ga_contiguous_strides(2, b2.shape, ga_dtype_itemsize(b2.dtype), b2.strides);
    st = ga_matmul(&a2, &b2, &r);
    ga_array_release(&ac);
    ga_array_release(&bc);
    if (st != GA_OK) {
        return st;
    }
    r.ndim = ond;
    memcpy(r.shape, oshape, sizeof(int64_t) * (size_t)ond);
    ga_contiguous_strides(ond, r.shape, ga_dtype_itemsize(r.dtype), r.strides);
    *out = r;
    return GA_OK;
}

int
ga_vecdot(const ga_array *x1, const ga_array *x2, int axis, ga_array *out)
{
    GA_TRY(ga_check_same_device("vecdot", x1, x2));
    if (x1->ndim == 0 || x2->ndim == 0) {
        return ga_error(GA_ERR_VALUE, "vecdot: the operands need at least one dimension");
    }
    int nd;
    int64_t shape[GA_MAXDIMS];
    GA_TRY(ga_broadcast_shapes(x1->ndim, x1->shape, x2->ndim, x2->shape, &nd, shape));
    if (axis < -nd || axis >= nd) {
        return ga_error(GA_ERR_INDEX, "vecdot: axis %d is out of bounds for the broadcast "
                        "shape of dimension %d", axis, nd);
    }
    if (axis < 0) {
        axis += nd;
    }
    int j1 = axis - (nd - x1->ndim), j2 = axis - (nd - x2->ndim);
    int64_t n1 = j1 >= 0 ? x1->shape[j1] : 1, n2 = j2 >= 0 ? x2->shape[j2] : 1;
    if (n1 != n2) {
        return ga_error(GA_ERR_SHAPE, "vecdot: the vectors along axis %d have different "
                        "sizes (%lld and %lld)", axis - nd, (long long)n1, (long long)n2);
    }
    /* full broadcast views with the axis moved last: x1 as (..., 1, k), x2 as (..., k, 1) */
    ga_array v1 = *x1, v2 = *x2;
    int q = 0;
    for (int i = 0; i < nd; i++) {
        if (i == axis) {
            continue;
        }
        int a1 = i - (nd - x1->ndim), a2 = i - (nd - x2->ndim);
        v1.shape[q] = v2.shape[q] = shape[i];
        v1.strides[q] = (a1 >= 0 && x1->shape[a1] != 1) ? x1->strides[a1] : 0;
        v2.strides[q] = (a2 >= 0 && x2->shape[a2] != 1) ? x2->strides[a2] : 0;
        q++;
    }
    v1.ndim = v2.ndim = q + 2;
    v1.shape[q] = 1;
    v1.strides[q] = 0;
    v1.shape[q + 1] = n1;
    v1.strides[q + 1] = j1 >= 0 ? x1->strides[j1] : 0;
    v2.shape[q] = n1;
    v2.strides[q] = j2 >= 0 ? x2->strides[j2] : 0;
    v2.shape[q + 1] = 1;
    v2.strides[q + 1] = 0;
    ga_array conj = {0};
    const ga_array *left = &v1;
    if (ga_dtype_kind((ga_dtype)x1->dtype) == GA_KIND_COMPLEX) {
        GA_TRY(ga_array_empty(&conj, ga_array_device(x1), (ga_dtype)x1->dtype, v1.ndim,
                              v1.shape));
        int st = ga_elementwise_raw(GA_OP_CONJ, &conj, &v1, NULL);
        if (st != GA_OK) {
            ga_array_release(&conj);
            return ga_error_context(st, "vecdot");
        }
        left = &conj;
    }
    ga_array r;
    int st = ga_matmul(left, &v2, &r);
    ga_array_release(&conj);
    if (st != GA_OK) {
        return st;
    }
    r.ndim -= 2; /* drop the (1, 1) matrix axes */
    *out = r;
    return GA_OK;
}
