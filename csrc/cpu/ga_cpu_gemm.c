/* ga_cpu_gemm.c: batched column-major GEMM on the CPU.
 *
 * float32/64 and complex go to the BLAS loaded by ga_blas.c when there is one (and the
 * sizes fit its 32-bit integers). Everything else (integers, bool, float16, and every
 * type when no BLAS is loaded) runs the portable kernel below: operands are packed
 * block by block into a working type (float for float16/32, double, complex double,
 * uint64 for integers: wrapping arithmetic mod 2^64 truncates to the same result as
 * NumPy's wrapping in the narrow type), multiplied with an inner loop over contiguous
 * rows of the packed A block (it vectorises), and written back with a cast. The
 * thread pool (ga_cpu_loop.h) splits the (batch, column block, row block) tasks; each
 * C element is computed by one task in a fixed order, so results do not depend on the
 * thread count.
 * BLAS is never called from inside a pool job (it has threads of its own).
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ga_blas.h"
#include "ga_cpu.h"
#include "ga_cpu_convert.h"
#include "ga_cpu_loop.h"
#include "ga_error.h"
#include "ga_platform.h"

#define MC 128
#define KC 256
#define NC 64

typedef ga_c128 cplx;

typedef enum { W_F32, W_F64, W_C128, W_U64 } wkind;

static wkind
wkind_of(int dt)
{
    switch (ga_dtype_kind((ga_dtype)dt)) {
    case GA_KIND_FLOAT:
        return dt == GA_FLOAT64 ? W_F64 : W_F32;
    case GA_KIND_COMPLEX:
        return W_C128;
    default:
        return W_U64;
    }
}

/* Operands are packed and the result written back a run at a time through
 * ga_cpu_convert.h: the shared casts, one switch per run. */

/* A run of n elements `stride` bytes apart, converted into the working buffer `w`
 * (n slots of the working type). */
static void
load_run(wkind wk, int dt, const char *src, int64_t stride, int64_t n, void *w)
{
    switch (wk) {
    case W_F32: {
        double tmp[MC > NC ? MC : NC];
        ga_cv_load_f64(dt, src, stride, n, tmp);
        for (int64_t i = 0; i < n; i++) {
            ((float *)w)[i] = (float)tmp[i];
        }
        break;
    }
    case W_F64:
        ga_cv_load_f64(dt, src, stride, n, (double *)w);
        break;
    case W_C128:
        ga_cv_load_c128(dt, src, stride, n, (cplx *)w);
        break;
    case W_U64: /* integers and bool: the bits of int64 and uint64 agree */
        ga_cv_load_i64(dt, src, stride, n, (int64_t *)w, 0);
        break;
    }
}

/* Element (i, p) of op(A) and (p, j) of op(B), as byte addresses. */
static inline const char *
elem_a(const ga_gemm_desc *g, const char *a, int64_t i, int64_t p, int64_t item)
{
    return a + (g->transa ? p + i * g->lda : i + p * g->lda) * item;
}
static inline const char *
elem_b(const ga_gemm_desc *g, const char *b, int64_t p, int64_t j, int64_t item)
{
    return b + (g->transb ? j + p * g->ldb : p + j * g->ldb) * item;
}

/* One block task: C[ic:ic+mc, jc:jc+nc] of batch member `bi`. `ws` is scratch space
 * for the packed panels and the accumulator. */
static void
block_task(const ga_gemm_desc *g, wkind wk, int64_t bi, int64_t ic, int64_t jc,
           void *ws)
{
    int dt = g->dtype;
    int64_t item = ga_dtype_itemsize((ga_dtype)dt);
    const char *a = g->a + bi * g->stride_a * item;
    const char *b = g->b + bi * g->stride_b * item;
    char *c = g->c + bi * g->stride_c * item;
    int64_t mc = g->m - ic < MC ? g->m - ic : MC;
    int64_t nc = g->n - jc < NC ? g->n - jc : NC;
    size_t wsz = wk == W_F32 ? sizeof(float) : wk == W_C128 ? sizeof(cplx) : 8;
    char *ap = (char *)ws;                 /* KC x MC, i fastest */
    char *bp = ap + (size_t)KC * MC * wsz; /* KC x NC, j fastest */
    char *cc = bp + (size_t)KC * NC * wsz; /* NC x MC, i fastest */
    memset(cc, 0, (size_t)MC * NC * wsz);
    /* bytes from A(i, p) to A(i + 1, p), and from B(p, j) to B(p, j + 1) */
    const int64_t a_step = (g->transa ? g->lda : 1) * item;
    const int64_t b_step = (g->transb ? 1 : g->ldb) * item;
    for (int64_t pc = 0; pc < g->k; pc += KC) {
        int64_t kc = g->k - pc < KC ? g->k - pc : KC;
        for (int64_t p = 0; p < kc; p++) {
            load_run(wk, dt, elem_a(g, a, ic, pc + p, item), a_step, mc,
                     ap + (size_t)(p * mc) * wsz);
            load_run(wk, dt, elem_b(g, b, pc + p, jc, item), b_step, nc,
                     bp + (size_t)(p * nc) * wsz);
        }
        /* cc[:, j] += ap[p, :] * bp[p, j]: the inner loop runs over contiguous i */
#define MULADD(W)                                                                      \
    for (int64_t j = 0; j < nc; j++) {                                                 \
        W *cj = (W *)cc + j * mc;                                                      \
        for (int64_t p = 0; p < kc; p++) {                                             \
            W bv = ((const W *)bp)[p * nc + j];                                        \
            const W *ai = (const W *)ap + p * mc;                                      \
            for (int64_t i = 0; i < mc; i++) {                                         \
                cj[i] += ai[i] * bv;                                                   \
            }                                                                          \
        }                                                                              \
    }
        switch (wk) {
        case W_F32:
            MULADD(float)
            break;
        case W_F64:
            MULADD(double)
            break;
        case W_U64:
            MULADD(uint64_t)
            break;
        case W_C128:
            for (int64_t j = 0; j < nc; j++) {
                cplx *cj = (cplx *)cc + j * mc;
                for (int64_t p = 0; p < kc; p++) {
                    cplx bv = ((const cplx *)bp)[p * nc + j];
                    const cplx *ai = (const cplx *)ap + p * mc;
                    for (int64_t i = 0; i < mc; i++) {
                        cj[i].re += ai[i].re * bv.re - ai[i].im * bv.im;
                        cj[i].im += ai[i].re * bv.im + ai[i].im * bv.re;
                    }
                }
            }
            break;
        }
#undef MULADD
    }
    /* C = alpha * acc + beta * C, a column of the block (contiguous in C) at a time */
    for (int64_t j = 0; j < nc; j++) {
        char *dst = c + (ic + (jc + j) * g->ldc) * item;
        switch (wk) {
        case W_F32:
        case W_F64: {
            double v[MC], old[MC];
            for (int64_t i = 0; i < mc; i++) {
                size_t at = (size_t)(j * mc + i);
                v[i] = (wk == W_F32 ? ((float *)cc)[at] : ((double *)cc)[at]) * g->alpha;
            }
            if (g->beta != 0.0) {
                ga_cv_load_f64(dt, dst, item, mc, old);
                for (int64_t i = 0; i < mc; i++) {
                    v[i] += g->beta * old[i];
                }
            }
            ga_cv_store_f64(dt, dst, item, mc, v);
            break;
        }
        case W_C128: {
            cplx v[MC], old[MC];
            for (int64_t i = 0; i < mc; i++) {
                v[i] = ((cplx *)cc)[j * mc + i];
                v[i].re *= g->alpha;
                v[i].im *= g->alpha;
            }
            if (g->beta != 0.0) {
                ga_cv_load_c128(dt, dst, item, mc, old);
                for (int64_t i = 0; i < mc; i++) {
                    v[i].re += g->beta * old[i].re;
                    v[i].im += g->beta * old[i].im;
                }
            }
            ga_cv_store_c128(dt, dst, item, mc, v);
            break;
        }
        case W_U64: { /* wrapping arithmetic in uint64, kept in int64 slots */
            int64_t v[MC], old[MC];
            for (int64_t i = 0; i < mc; i++) {
                uint64_t x = ((uint64_t *)cc)[j * mc + i];
                if (g->alpha != 1.0) {
                    x *= (uint64_t)(int64_t)g->alpha;
                }
                v[i] = (int64_t)x;
            }
            if (g->beta != 0.0) {
                ga_cv_load_i64(dt, dst, item, mc, old, 0);
                for (int64_t i = 0; i < mc; i++) {
                    v[i] = (int64_t)((uint64_t)v[i] +
                                     (uint64_t)(int64_t)g->beta * (uint64_t)old[i]);
                }
            }
            ga_cv_store_i64(dt, dst, item, mc, v, 0);
            break;
        }
        }
    }
}

/* One portable GEMM: tasks are (batch, row block, column block) tiles; each C element
 * is computed by exactly one task, so the split cannot change the result. */
typedef struct {
    const ga_gemm_desc *g;
    wkind wk;
    size_t ws_bytes;
    int64_t mb, nb;
    _Atomic int failed;
} gemm_job;

static void
gemm_task(void *ctx, int64_t t)
{
    gemm_job *J = ctx;
    /* a work space per task: malloc is cheap next to a tile of MC x NC x k
     * multiply-adds, and no task then depends on which thread runs it */
    void *ws = malloc(J->ws_bytes);
    if (ws == NULL) {
        atomic_store(&J->failed, 1);
        return;
    }
    int64_t bi = t / (J->mb * J->nb);
    int64_t r = t % (J->mb * J->nb);
    block_task(J->g, J->wk, bi, (r % J->mb) * MC, (r / J->mb) * NC, ws);
    free(ws);
}

static int
portable_gemm(const ga_gemm_desc *g)
{
    wkind wk = wkind_of(g->dtype);
    size_t wsz = wk == W_F32 ? sizeof(float) : wk == W_C128 ? sizeof(cplx) : 8;
    gemm_job job = {
        .g = g,
        .wk = wk,
        .ws_bytes = ((size_t)KC * MC + (size_t)KC * NC + (size_t)MC * NC) * wsz,
        .mb = (g->m + MC - 1) / MC,
        .nb = (g->n + NC - 1) / NC,
    };
    atomic_init(&job.failed, 0);
    int64_t ntasks = g->batch * job.mb * job.nb;
    double work = (double)g->m * (double)g->n * (double)g->k * (double)g->batch;
    if (work >= 1e6 && ntasks > 1) {
        ga_cpu_parallel_for(ntasks, gemm_task, &job);
    } else {
        for (int64_t t = 0; t < ntasks; t++) {
            gemm_task(&job, t);
        }
    }
    if (atomic_load(&job.failed)) {
        return ga_error(GA_ERR_NOMEM, "matmul: out of memory for the GEMM work space");
    }
    return GA_OK;
}

/* OpenBLAS's thread count is one global setting, but GEMMs may now run on several
 * threads at once (the Python thread for the CPU, a worker per simulated GPU). Calls
 * that want one BLAS thread (small products; a simulated GPU whose share of the cores
 * is one, so two of them multiply side by side instead of queuing for OpenBLAS's
 * thread server) count themselves in; the first saves the setting, the last restores
 * it, so no interleaving of calls can leave OpenBLAS at one thread. */
static ga_mutex blas_threads_mu = GA_MUTEX_INIT;
static int blas_single_users;
static int blas_saved_threads;

static void
blas_single_enter(const ga_blas_table *blas)
{
    ga_mutex_lock(&blas_threads_mu);
    if (blas_single_users++ == 0) {
        blas_saved_threads = blas->get_threads();
        if (blas_saved_threads > 1) {
            blas->set_threads(1);
        }
    }
    ga_mutex_unlock(&blas_threads_mu);
}

static void
blas_single_leave(const ga_blas_table *blas)
{
    ga_mutex_lock(&blas_threads_mu);
    if (--blas_single_users == 0 && blas_saved_threads > 1) {
        blas->set_threads(blas_saved_threads);
    }
    ga_mutex_unlock(&blas_threads_mu);
}

static int
fits_int(const ga_gemm_desc *g)
{
    return g->m <= INT_MAX && g->n <= INT_MAX && g->k <= INT_MAX && g->lda <= INT_MAX &&
           g->ldb <= INT_MAX && g->ldc <= INT_MAX;
}

int
ga_cpu_gemm(int dev, const ga_gemm_desc *g)
{
    (void)dev;
    if (g->m <= 0 || g->n <= 0 || g->batch <= 0) {
        return GA_OK;
    }
    const ga_blas_table *blas = ga_blas_get();
    int dt = g->dtype;
    int blas_type = dt == GA_FLOAT32 || dt == GA_FLOAT64 || dt == GA_COMPLEX64 ||
                    dt == GA_COMPLEX128;
    if (blas == NULL || !blas_type || !fits_int(g) || g->k <= 0) {
        return portable_gemm(g);
    }
    int ta = g->transa ? GA_CBLAS_TRANS : GA_CBLAS_NO_TRANS;
    int tb = g->transb ? GA_CBLAS_TRANS : GA_CBLAS_NO_TRANS;
    int m = (int)g->m, n = (int)g->n, k = (int)g->k;
    int lda = (int)g->lda, ldb = (int)g->ldb, ldc = (int)g->ldc;
    int64_t item = ga_dtype_itemsize((ga_dtype)dt);
    int single = blas->set_threads != NULL &&
                 (g->m * g->n * g->k < GA_BLAS_SMALL_WORK || ga_cpu_thread_share() < 2);
    if (single) {
        blas_single_enter(blas);
    }
    for (int64_t i = 0; i < g->batch; i++) {
        const char *a = g->a + i * g->stride_a * item;
        const char *b = g->b + i * g->stride_b * item;
        char *c = g->c + i * g->stride_c * item;
        switch (dt) {
        case GA_FLOAT32:
            blas->sgemm(GA_CBLAS_COL_MAJOR, ta, tb, m, n, k, (float)g->alpha,
                        (const float *)a, lda, (const float *)b, ldb, (float)g->beta,
                        (float *)c, ldc);
            break;
        case GA_FLOAT64:
            blas->dgemm(GA_CBLAS_COL_MAJOR, ta, tb, m, n, k, g->alpha,
                        (const double *)a, lda, (const double *)b, ldb, g->beta,
                        (double *)c, ldc);
            break;
        case GA_COMPLEX64: {
            float al[2] = {(float)g->alpha, 0.0f}, be[2] = {(float)g->beta, 0.0f};
            blas->cgemm(GA_CBLAS_COL_MAJOR, ta, tb, m, n, k, al, a, lda, b, ldb, be, c,
                        ldc);
            break;
        }
        default: {
            double al[2] = {g->alpha, 0.0}, be[2] = {g->beta, 0.0};
            blas->zgemm(GA_CBLAS_COL_MAJOR, ta, tb, m, n, k, al, a, lda, b, ldb, be, c,
                        ldc);
            break;
        }
        }
    }
    if (single) {
        blas_single_leave(blas);
    }
    return GA_OK;
}
