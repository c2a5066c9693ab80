/* ga_cpu_linalg_impl.h: the LAPACK driver of ga_cpu_linalg.c, included once per
 * integer width with LINT (the library's Fortran INTEGER) and LFN (a name suffix).
 * Not a header of its own: it defines static functions of ga_cpu_linalg.c.
 *
 * Each routine takes pointers only; `void *` stands for the element type (the
 * library picks it by the routine's letter) and `void *` real arrays (w, s, rwork)
 * for its real type. */

typedef void (*LFN(gesv_fn))(const LINT *n, const LINT *nrhs, void *a, const LINT *lda,
                             LINT *ipiv, void *b, const LINT *ldb, LINT *info);
typedef void (*LFN(getrf_fn))(const LINT *m, const LINT *n, void *a, const LINT *lda,
                              LINT *ipiv, LINT *info);
typedef void (*LFN(getrs_fn))(const char *trans, const LINT *n, const LINT *nrhs,
                              const void *a, const LINT *lda, const LINT *ipiv, void *b,
                              const LINT *ldb, LINT *info, size_t trans_len);
typedef void (*LFN(potrf_fn))(const char *uplo, const LINT *n, void *a, const LINT *lda,
                              LINT *info, size_t uplo_len);
/* the divide-and-conquer drivers NumPy uses (syevd/heevd, gesdd): for eigenvectors
 * and singular vectors several times faster than syev/gesvd at n = 256 */
typedef void (*LFN(syevd_fn))(const char *jobz, const char *uplo, const LINT *n, void *a,
                              const LINT *lda, void *w, void *work, const LINT *lwork,
                              LINT *iwork, const LINT *liwork, LINT *info, size_t l1,
                              size_t l2);
typedef void (*LFN(heevd_fn))(const char *jobz, const char *uplo, const LINT *n, void *a,
                              const LINT *lda, void *w, void *work, const LINT *lwork,
                              void *rwork, const LINT *lrwork, LINT *iwork,
                              const LINT *liwork, LINT *info, size_t l1, size_t l2);
typedef void (*LFN(dgesdd_fn))(const char *jobz, const LINT *m, const LINT *n, void *a,
                               const LINT *lda, void *s, void *u, const LINT *ldu, void *vt,
                               const LINT *ldvt, void *work, const LINT *lwork, LINT *iwork,
                               LINT *info, size_t l1);
typedef void (*LFN(zgesdd_fn))(const char *jobz, const LINT *m, const LINT *n, void *a,
                               const LINT *lda, void *s, void *u, const LINT *ldu, void *vt,
                               const LINT *ldvt, void *work, const LINT *lwork, void *rwork,
                               LINT *iwork, LINT *info, size_t l1);
typedef void (*LFN(geqrf_fn))(const LINT *m, const LINT *n, void *a, const LINT *lda,
                              void *tau, void *work, const LINT *lwork, LINT *info);
typedef void (*LFN(orgqr_fn))(const LINT *m, const LINT *n, const LINT *k, void *a,
                              const LINT *lda, void *tau, void *work, const LINT *lwork,
                              LINT *info);

/* The size a workspace query (lwork = -1) wrote into work[0]: its real part, in the
 * dtype's precision; at least 1. */
static LINT
LFN(query_size)(int dtype, const void *w)
{
    double v = (dtype == GA_FLOAT32 || dtype == GA_COMPLEX64) ? (double)*(const float *)w
                                                               : *(const double *)w;
    return v < 1 ? 1 : (LINT)v;
}

/* Sizes must fit the library's INTEGER: an LP64 LAPACK cannot index a matrix of more
 * than 2^31 - 1 elements. */
static int
LFN(fits)(const ga_linalg_desc *d)
{
    int64_t lim = sizeof(LINT) == 4 ? INT32_MAX : INT64_MAX;
    return d->m <= lim && d->n <= lim && d->nrhs <= lim && d->m * d->n <= lim &&
           d->m * d->m <= lim && d->n * d->n <= lim;
}

static int
LFN(run)(const ga_linalg_desc *d)
{
    if (!LFN(fits)(d)) {
        return ga_error(GA_ERR_VALUE, "linalg: a %lld x %lld matrix is too large for the "
                        "32-bit LAPACK in use", (long long)d->m, (long long)d->n);
    }
    char t = lapack_letter(d->dtype);
    int cplx = t == 'c' || t == 'z';
    size_t esz = (size_t)ga_dtype_itemsize((ga_dtype)d->dtype);
    size_t rsz = cplx ? esz / 2 : esz;
    LINT m = (LINT)d->m, n = (LINT)d->n, k = m < n ? m : n, info = 0, lwork = -1;
    size_t astep = (size_t)d->m * (size_t)d->n * esz;
    void *fn = NULL, *fn2 = NULL;
    void *work = NULL, *rwork = NULL, *tau = NULL;
    LINT *ipiv = NULL;
    int64_t failed = -1; /* the first matrix without an answer */
    int st = GA_OK;
    double q[2]; /* a workspace query's answer (one element of any dtype) */

    switch ((ga_linalg_op)d->op) {
    case GA_LINALG_SOLVE:
    case GA_LINALG_LU: {
        int solve = d->op == GA_LINALG_SOLVE;
        /* mode 1: a holds A^T; getrf factors it, getrs('T') solves with A */
        int transposed = solve && d->mode == 1;
        void *rs = NULL;
        GA_TRY(lapack_fn(t, solve && !transposed ? "gesv" : "getrf", &fn));
        if (transposed) {
            GA_TRY(lapack_fn(t, "getrs", &rs));
        }
        ipiv = (LINT *)malloc(sizeof(LINT) * (size_t)n);
        if (ipiv == NULL) {
            return ga_error(GA_ERR_NOMEM, "linalg: out of memory for pivots");
        }
        LINT nrhs = (LINT)d->nrhs;
        size_t bstep = (size_t)d->n * (size_t)d->nrhs * esz;
        for (int64_t i = 0; i < d->batch; i++) {
            char *a = d->a + i * astep;
            if (transposed) {
                ((LFN(getrf_fn))fn)(&n, &n, a, &n, ipiv, &info);
                if (info == 0) {
                    ((LFN(getrs_fn))rs)("T", &n, &nrhs, a, &n, ipiv, d->b + i * bstep, &n,
                                        &info, 1);
                }
            }
            else if (solve) {
                ((LFN(gesv_fn))fn)(&n, &nrhs, a, &n, ipiv, d->b + i * bstep, &n, &info);
            }
            else {
                ((LFN(getrf_fn))fn)(&n, &n, a, &n, ipiv, &info);
                for (LINT j = 0; j < n; j++) {
                    d->ipiv[i * n + j] = (int32_t)ipiv[j];
                }
                info = info > 0 ? 0 : info; /* an exact zero pivot is a det of 0 */
            }
            if (info != 0) {
                failed = i;
                break;
            }
        }
        break;
    }
    case GA_LINALG_CHOLESKY: {
        GA_TRY(lapack_fn(t, "potrf", &fn));
        const char *uplo = d->mode ? "U" : "L";
        for (int64_t i = 0; i < d->batch && failed < 0; i++) {
            ((LFN(potrf_fn))fn)(uplo, &n, d->a + i * astep, &n, &info, 1);
            failed = info != 0 ? i : -1;
        }
        break;
    }
    case GA_LINALG_EIGH: {
        GA_TRY(lapack_fn(t, cplx ? "heevd" : "syevd", &fn));
        const char *jobz = d->mode ? "V" : "N";
        /* one query gives all three workspace sizes (work, rwork, iwork) */
        LINT liwork = -1, lrwork = -1, qi = 0;
        double qr[2];
        if (cplx) {
            ((LFN(heevd_fn))fn)(jobz, "L", &n, d->a, &n, d->w, q, &lwork, qr, &lrwork, &qi,
                                &liwork, &info, 1, 1);
            lrwork = LFN(query_size)(d->dtype == GA_COMPLEX64 ? GA_FLOAT32 : GA_FLOAT64, qr);
            rwork = malloc(rsz * (size_t)lrwork);
        }
        else {
            ((LFN(syevd_fn))fn)(jobz, "L", &n, d->a, &n, d->w, q, &lwork, &qi, &liwork,
                                &info, 1, 1);
        }
        lwork = LFN(query_size)(d->dtype, q);
        liwork = qi > 1 ? qi : 1;
        work = malloc(esz * (size_t)lwork);
        ipiv = (LINT *)malloc(sizeof(LINT) * (size_t)liwork); /* iwork */
        if (work == NULL || ipiv == NULL || (cplx && rwork == NULL)) {
            st = ga_error(GA_ERR_NOMEM, "eigh: out of memory for LAPACK's workspace");
            break;
        }
        for (int64_t i = 0; i < d->batch && failed < 0; i++) {
            char *a = d->a + i * astep, *w = d->w + (size_t)i * (size_t)n * rsz;
            if (cplx) {
                ((LFN(heevd_fn))fn)(jobz, "L", &n, a, &n, w, work, &lwork, rwork, &lrwork,
                                    ipiv, &liwork, &info, 1, 1);
            }
            else {
                ((LFN(syevd_fn))fn)(jobz, "L", &n, a, &n, w, work, &lwork, ipiv, &liwork,
                                    &info, 1, 1);
            }
            failed = info != 0 ? i : -1;
        }
        break;
    }
    case GA_LINALG_SVD: {
        GA_TRY(lapack_fn(t, "gesdd", &fn));
        const char *job = d->mode == 0 ? "N" : d->mode == 1 ? "S" : "A";
        LINT ucols = d->mode == 2 ? m : k, vrows = d->mode == 2 ? n : k;
        LINT ldu = m, ldvt = vrows > 0 ? vrows : 1;
        size_t ustep = d->mode ? (size_t)m * (size_t)ucols * esz : 0;
        size_t vstep = d->mode ? (size_t)vrows * (size_t)n * esz : 0;
        /* with job "N" LAPACK touches neither u nor vt but checks ldu/ldvt >= 1 */
        char dummy[16];
        ipiv = (LINT *)malloc(sizeof(LINT) * (size_t)(8 * k > 0 ? 8 * k : 1)); /* iwork */
        if (cplx) {
            /* LAPACK's bound on zgesdd's real workspace (3.7 and later) */
            size_t mx = (size_t)(m > n ? m : n), mn = (size_t)k;
            size_t lr1 = 5 * mn * mn + 5 * mn, lr2 = 2 * mx * mn + 2 * mn * mn + mn;
            size_t lrwork = d->mode == 0 ? 7 * mn : (lr1 > lr2 ? lr1 : lr2);
            rwork = malloc(rsz * (lrwork > 0 ? lrwork : 1));
            ((LFN(zgesdd_fn))fn)(job, &m, &n, d->a, &m, d->w, dummy, &ldu, dummy, &ldvt, q,
                                 &lwork, rwork, ipiv, &info, 1);
        }
        else {
            ((LFN(dgesdd_fn))fn)(job, &m, &n, d->a, &m, d->w, dummy, &ldu, dummy, &ldvt, q,
                                 &lwork, ipiv, &info, 1);
        }
        lwork = LFN(query_size)(d->dtype, q);
        work = malloc(esz * (size_t)lwork);
        if (work == NULL || ipiv == NULL || (cplx && rwork == NULL)) {
            st = ga_error(GA_ERR_NOMEM, "svd: out of memory for LAPACK's workspace");
            break;
        }
        for (int64_t i = 0; i < d->batch && failed < 0; i++) {
            char *a = d->a + i * astep, *s = d->w + (size_t)i * (size_t)k * rsz;
            char *u = d->mode ? d->u + i * ustep : dummy;
            char *vt = d->mode ? d->vh + i * vstep : dummy;
            if (matrix_has_nan(d->dtype, a, d->m * d->n)) {
                info = 1; /* a numerical failure, as NumPy reports it */
                failed = i;
                break;
            }
            if (cplx) {
                ((LFN(zgesdd_fn))fn)(job, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork,
                                     rwork, ipiv, &info, 1);
            }
            else {
                ((LFN(dgesdd_fn))fn)(job, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork,
                                     ipiv, &info, 1);
            }
            failed = info != 0 ? i : -1;
        }
        break;
    }
    case GA_LINALG_QR: {
        GA_TRY(lapack_fn(t, "geqrf", &fn));
        GA_TRY(lapack_fn(t, cplx ? "ungqr" : "orgqr", &fn2));
        LINT qc = (LINT)d->qcols;
        LINT lw2 = -1;
        double q2[2];
        tau = malloc(esz * (size_t)(k > 0 ? k : 1));
        ((LFN(geqrf_fn))fn)(&m, &n, d->a, &m, tau, q, &lwork, &info);
        ((LFN(orgqr_fn))fn2)(&m, &qc, &k, d->b, &m, tau, q2, &lw2, &info);
        lwork = LFN(query_size)(d->dtype, q);
        lw2 = LFN(query_size)(d->dtype, q2);
        lwork = lwork > lw2 ? lwork : lw2;
        work = malloc(esz * (size_t)lwork);
        if (work == NULL || tau == NULL) {
            st = ga_error(GA_ERR_NOMEM, "qr: out of memory for LAPACK's workspace");
            break;
        }
        size_t qstep = (size_t)m * (size_t)qc * esz;
        for (int64_t i = 0; i < d->batch && failed < 0; i++) {
            char *a = d->a + i * astep, *qm = d->b + i * qstep;
            ((LFN(geqrf_fn))fn)(&m, &n, a, &m, tau, work, &lwork, &info);
            /* Q's first k columns start from the reflectors geqrf left below R (the
             * columns are contiguous in column-major order); orgqr builds the rest */
            memcpy(qm, a, (size_t)m * (size_t)k * esz);
            if (info == 0) {
                ((LFN(orgqr_fn))fn2)(&m, &qc, &k, qm, &m, tau, work, &lwork, &info);
            }
            failed = info != 0 ? i : -1;
        }
        break;
    }
    default:
        st = ga_error(GA_ERR_VALUE, "linalg: unknown operation %d", (int)d->op);
    }
    free(ipiv);
    free(work);
    free(rwork);
    free(tau);
    if (st == GA_OK && failed >= 0) {
        /* info < 0 is an argument LAPACK refused: our bug, not the matrix */
        if (info < 0) {
            return ga_error(GA_ERR_RUNTIME, "linalg: LAPACK refused argument %lld (op %d)",
                            (long long)-info, (int)d->op);
        }
        if (d->batch > 1) {
            return ga_error(GA_ERR_LINALG, "%s (matrix %lld of the batch)",
                            ga_linalg_failure_text(d->op), (long long)failed);
        }
        return ga_error(GA_ERR_LINALG, "%s", ga_linalg_failure_text(d->op));
    }
    return st;
}
