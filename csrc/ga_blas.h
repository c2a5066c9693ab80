/* ga_blas.h: a CPU BLAS loaded at run time (dlopen), for float and complex GEMM.
 *
 * The prototypes are declared here by hand (cblas.h lives in a different place for
 * every vendor). The library is OpenBLAS from the scipy-openblas32 wheel (symbols
 * `scipy_cblas_sgemm`, ...), whose path the Python package gives at import, or any
 * library exporting plain `cblas_sgemm`. 32-bit integers (LP64). Without a library,
 * the portable kernel in ga_cpu_gemm.c runs.
 */
#ifndef GA_BLAS_H
#define GA_BLAS_H

#define GA_CBLAS_COL_MAJOR 102
#define GA_CBLAS_NO_TRANS 111
#define GA_CBLAS_TRANS 112

typedef void (*ga_sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
                            const float *a, int lda, const float *b, int ldb, float beta,
                            float *c, int ldc);
typedef void (*ga_dgemm_fn)(int order, int ta, int tb, int m, int n, int k, double alpha,
                            const double *a, int lda, const double *b, int ldb, double beta,
                            double *c, int ldc);
/* complex: alpha and beta point to (re, im) pairs of the element type */
typedef void (*ga_cgemm_fn)(int order, int ta, int tb, int m, int n, int k,
                            const void *alpha, const void *a, int lda, const void *b,
                            int ldb, const void *beta, void *c, int ldc);

typedef struct {
    ga_sgemm_fn sgemm;
    ga_dgemm_fn dgemm;
    ga_cgemm_fn cgemm, zgemm;
    char path[512];
    char prefix[16]; /* "scipy_" or "" */
} ga_blas_table;

#ifdef __cplusplus
extern "C" {
#endif

/* Load the BLAS at `path` (NULL: stop using any BLAS). On failure the previous state
 * is kept and GA_ERR_RUNTIME says why (dlerror). Call with the GIL held, never while a
 * GEMM runs. */
int ga_blas_load(const char *path);
/* The BLAS in use, or NULL for the portable kernel. */
const ga_blas_table *ga_blas_get(void);

#ifdef __cplusplus
}
#endif

#endif
