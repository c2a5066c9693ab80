/* ga_blas.c: loading a CPU BLAS at run time (dlopen, LoadLibrary: ga_platform.h). */
#include "ga_blas.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ga_error.h"
#include "ga_platform.h"

static ga_blas_table table;
static int loaded;

static void *
find(void *h, const char *prefix, const char *name, const char *suffix)
{
    char sym[64];
    snprintf(sym, sizeof(sym), "%scblas_%s%s", prefix, name, suffix);
    return ga_dl_sym(h, sym);
}

/* ILP64 builds (64-bit integers; NumPy's own OpenBLAS, symbols `scipy_cblas_sgemm64_`)
 * are called through these adapters, so the rest of gpuarr sees one LP64 table.
 * Sharing NumPy's library matters: two OpenBLAS thread pools in one process each
 * keep a worker spinning after a call, and on a 2-core machine they take turns
 * (a 256x256 sgemm went from 0.2 ms to 18 ms when NumPy's and ours alternated). */
typedef void (*sgemm64_fn)(int order, int ta, int tb, int64_t m, int64_t n, int64_t k,
                           float alpha, const float *a, int64_t lda, const float *b,
                           int64_t ldb, float beta, float *c, int64_t ldc);
typedef void (*dgemm64_fn)(int order, int ta, int tb, int64_t m, int64_t n, int64_t k,
                           double alpha, const double *a, int64_t lda, const double *b,
                           int64_t ldb, double beta, double *c, int64_t ldc);
typedef void (*cgemm64_fn)(int order, int ta, int tb, int64_t m, int64_t n, int64_t k,
                           const void *alpha, const void *a, int64_t lda, const void *b,
                           int64_t ldb, const void *beta, void *c, int64_t ldc);
static sgemm64_fn sgemm64;
static dgemm64_fn dgemm64;
static cgemm64_fn cgemm64, zgemm64;

static void
sgemm_ilp64(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a,
            int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
    sgemm64(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

static void
dgemm_ilp64(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a,
            int lda, const double *b, int ldb, double beta, double *c, int ldc)
{
    dgemm64(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

static void
cgemm_ilp64(int order, int ta, int tb, int m, int n, int k, const void *alpha,
            const void *a, int lda, const void *b, int ldb, const void *beta, void *c,
            int ldc)
{
    cgemm64(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

static void
zgemm_ilp64(int order, int ta, int tb, int m, int n, int k, const void *alpha,
            const void *a, int lda, const void *b, int ldb, const void *beta, void *c,
            int ldc)
{
    zgemm64(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* OpenBLAS's openblas_set/get_num_threads under the same naming scheme */
static void
find_threads(void *h, const char *prefix, const char *suffix, ga_blas_table *t)
{
    char sym[64];
    snprintf(sym, sizeof(sym), "%sopenblas_set_num_threads%s", prefix, suffix);
    t->set_threads = (ga_blas_set_threads_fn)ga_dl_sym(h, sym);
    snprintf(sym, sizeof(sym), "%sopenblas_get_num_threads%s", prefix, suffix);
    t->get_threads = (ga_blas_get_threads_fn)ga_dl_sym(h, sym);
    if (t->set_threads == NULL || t->get_threads == NULL) {
        t->set_threads = NULL;
        t->get_threads = NULL;
    }
}

/* Load `h` as an LP64 (ILP64) BLAS whose names start with `prefix`: 1 if it is one. */
static int
try_lp64(void *h, const char *path, const char *prefix)
{
    ga_blas_table t;
    memset(&t, 0, sizeof(t));
    t.sgemm = (ga_sgemm_fn)find(h, prefix, "sgemm", "");
    t.dgemm = (ga_dgemm_fn)find(h, prefix, "dgemm", "");
    t.cgemm = (ga_cgemm_fn)find(h, prefix, "cgemm", "");
    t.zgemm = (ga_cgemm_fn)find(h, prefix, "zgemm", "");
    if (!(t.sgemm && t.dgemm && t.cgemm && t.zgemm)) {
        return 0;
    }
    find_threads(h, prefix, "", &t);
    t.handle = h;
    snprintf(t.path, sizeof(t.path), "%s", path);
    snprintf(t.prefix, sizeof(t.prefix), "%s", prefix);
    table = t;
    loaded = 1;
    return 1;
}

static int
try_ilp64(void *h, const char *path, const char *prefix)
{
    sgemm64_fn s64 = (sgemm64_fn)find(h, prefix, "sgemm", "64_");
    dgemm64_fn d64 = (dgemm64_fn)find(h, prefix, "dgemm", "64_");
    cgemm64_fn c64 = (cgemm64_fn)find(h, prefix, "cgemm", "64_");
    cgemm64_fn z64 = (cgemm64_fn)find(h, prefix, "zgemm", "64_");
    if (!(s64 && d64 && c64 && z64)) {
        return 0;
    }
    ga_blas_table t;
    memset(&t, 0, sizeof(t));
    sgemm64 = s64;
    dgemm64 = d64;
    cgemm64 = c64;
    zgemm64 = z64;
    t.sgemm = sgemm_ilp64;
    t.dgemm = dgemm_ilp64;
    t.cgemm = cgemm_ilp64;
    t.zgemm = zgemm_ilp64;
    /* openblas_set/get_num_threads take and return a C int in ILP64 builds too (only
     * their Fortran forms use the 64-bit integer) */
    find_threads(h, prefix, "64_", &t);
    t.handle = h;
    t.ilp64 = 1;
    snprintf(t.path, sizeof(t.path), "%s", path);
    snprintf(t.prefix, sizeof(t.prefix), "%s", prefix);
    table = t;
    loaded = 1;
    return 1;
}

int
ga_blas_load(const char *path)
{
    if (path == NULL) {
        loaded = 0;
        return GA_OK;
    }
    /* The handle is never closed: OpenBLAS keeps worker threads that must not lose
     * their code, and reloading the same path returns the same handle anyway. */
    char why[1024];
    void *h = ga_dl_open(path, why, sizeof(why));
    if (h == NULL) {
        return ga_error(GA_ERR_RUNTIME, "cannot load the BLAS library %s: %s", path, why);
    }
    /* Each naming scheme, LP64 then ILP64: scipy-openblas's prefixed names first,
     * because NumPy's ILP64 OpenBLAS for Windows also exports its 64-bit-integer
     * functions under the plain names (cblas_sgemm, dgesv_) that an LP64 library
     * uses; read as LP64 they compute garbage. */
    static const char *const prefixes[] = {"scipy_", ""};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        if (try_lp64(h, path, prefixes[i]) || try_ilp64(h, path, prefixes[i])) {
            return GA_OK;
        }
    }
    return ga_error(GA_ERR_RUNTIME, "%s has no cblas_sgemm/dgemm/cgemm/zgemm (nor the "
                    "scipy_-prefixed names of scipy-openblas, nor their 64_ ILP64 forms)",
                    path);
}

const ga_blas_table *
ga_blas_get(void)
{
    return loaded ? &table : NULL;
}

void *
ga_blas_lapack_sym(const char *name)
{
    if (!loaded) {
        return NULL;
    }
    char sym[64];
    snprintf(sym, sizeof(sym), "%s%s_%s", table.prefix, name, table.ilp64 ? "64_" : "");
    return ga_dl_sym(table.handle, sym);
}

void *
ga_blas_lapack_lookup(const char *name, int *ilp64)
{
    *ilp64 = loaded && table.ilp64;
    return ga_blas_lapack_sym(name);
}
