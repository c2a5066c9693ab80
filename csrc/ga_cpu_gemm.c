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
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ga_blas.h"
#include "ga_cpu.h"
#include "ga_cpu_loop.h"
#include "ga_error.h"
#include "ga_half.h"

#define MC 128
#define KC 256
#define NC 64

typedef struct {
    double re, im;
} cplx;

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

static inline double
rd_f(int dt, const char *p)
{
    switch (dt) {
    case GA_FLOAT16: {
        uint16_t h;
        memcpy(&h, p, 2);
        return ga_half_to_float(h);
    }
    case GA_FLOAT32: {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    default: {
        double d;
        memcpy(&d, p, 8);
        return d;
    }
    }
}

static inline cplx
rd_c(int dt, const char *p)
{
    cplx c;
    if (dt == GA_COMPLEX64) {
        float f[2];
        memcpy(f, p, sizeof(f));
        c.re = f[0];
        c.im = f[1];
    } else {
        memcpy(&c, p, sizeof(c));
    }
    return c;
}

static inline uint64_t
rd_u(int dt, const char *p)
{
    switch (dt) {
    case GA_BOOL:
        return *(const uint8_t *)p != 0;
    case GA_INT8:
        return (uint64_t)(int64_t) * (const int8_t *)p;
    case GA_UINT8:
        return *(const uint8_t *)p;
    case GA_INT16: {
        int16_t v;
        memcpy(&v, p, 2);
        return (uint64_t)(int64_t)v;
    }
    case GA_UINT16: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case GA_INT32: {
        int32_t v;
        memcpy(&v, p, 4);
        return (uint64_t)(int64_t)v;
    }
    case GA_UINT32: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
}

static inline void
wr_u(int dt, char *p, uint64_t v)
{
    if (dt == GA_BOOL) {
        *(uint8_t *)p = v != 0;
        return;
    }
    /* little-endian: the low bytes are the truncated value */
    memcpy(p, &v, (size_t)ga_dtype_itemsize((ga_dtype)dt));
}

static inline void
wr_f(int dt, char *p, double v)
{
    if (dt == GA_FLOAT16) {
        uint16_t h = ga_float_to_half((float)v);
        memcpy(p, &h, 2);
    } else if (dt == GA_FLOAT32) {
        float f = (float)v;
        memcpy(p, &f, 4);
    } else {
        memcpy(p, &v, 8);
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
    for (int64_t pc = 0; pc < g->k; pc += KC) {
        int64_t kc = g->k - pc < KC ? g->k - pc : KC;
        for (int64_t p = 0; p < kc; p++) {
            for (int64_t i = 0; i < mc; i++) {
                const char *s = elem_a(g, a, ic + i, pc + p, item);
                size_t at = (size_t)(p * mc + i);
                switch (wk) {
                case W_F32:
                    ((float *)ap)[at] = (float)rd_f(dt, s);
                    break;
                case W_F64:
                    ((double *)ap)[at] = rd_f(dt, s);
                    break;
                case W_C128:
                    ((cplx *)ap)[at] = rd_c(dt, s);
                    break;
                case W_U64:
                    ((uint64_t *)ap)[at] = rd_u(dt, s);
                    break;
                }
            }
            for (int64_t j = 0; j < nc; j++) {
                const char *s = elem_b(g, b, pc + p, jc + j, item);
                size_t at = (size_t)(p * nc + j);
                switch (wk) {
                case W_F32:
                    ((float *)bp)[at] = (float)rd_f(dt, s);
                    break;
                case W_F64:
                    ((double *)bp)[at] = rd_f(dt, s);
                    break;
                case W_C128:
                    ((cplx *)bp)[at] = rd_c(dt, s);
                    break;
                case W_U64:
                    ((uint64_t *)bp)[at] = rd_u(dt, s);
                    break;
                }
            }
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
    /* C = alpha * acc + beta * C */
    for (int64_t j = 0; j < nc; j++) {
        for (int64_t i = 0; i < mc; i++) {
            char *dst = c + ((ic + i) + (jc + j) * g->ldc) * item;
            size_t at = (size_t)(j * mc + i);
            switch (wk) {
            case W_F32:
            case W_F64: {
                double v = wk == W_F32 ? ((float *)cc)[at] : ((double *)cc)[at];
                v *= g->alpha;
                if (g->beta != 0.0) {
                    v += g->beta * rd_f(dt, dst);
                }
                wr_f(dt, dst, v);
                break;
            }
            case W_C128: {
                cplx v = ((cplx *)cc)[at];
                v.re *= g->alpha;
                v.im *= g->alpha;
                if (g->beta != 0.0) {
                    cplx o = rd_c(dt, dst);
                    v.re += g->beta * o.re;
                    v.im += g->beta * o.im;
                }
                if (dt == GA_COMPLEX64) {
                    float f[2] = {(float)v.re, (float)v.im};
                    memcpy(dst, f, sizeof(f));
                } else {
                    memcpy(dst, &v, sizeof(v));
                }
                break;
            }
            case W_U64: {
                uint64_t v = ((uint64_t *)cc)[at];
                if (g->alpha != 1.0) {
                    v *= (uint64_t)(int64_t)g->alpha;
                }
                if (g->beta != 0.0) {
                    v += (uint64_t)(int64_t)g->beta * rd_u(dt, dst);
                }
                wr_u(dt, dst, v);
                break;
            }
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
static pthread_mutex_t blas_threads_mu = PTHREAD_MUTEX_INITIALIZER;
static int blas_single_users;
static int blas_saved_threads;

static void
blas_single_enter(const ga_blas_table *blas)
{
    pthread_mutex_lock(&blas_threads_mu);
    if (blas_single_users++ == 0) {
        blas_saved_threads = blas->get_threads();
        if (blas_saved_threads > 1) {
            blas->set_threads(1);
        }
    }
    pthread_mutex_unlock(&blas_threads_mu);
}

static void
blas_single_leave(const ga_blas_table *blas)
{
    pthread_mutex_lock(&blas_threads_mu);
    if (--blas_single_users == 0 && blas_saved_threads > 1) {
        blas->set_threads(blas_saved_threads);
    }
    pthread_mutex_unlock(&blas_threads_mu);
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
