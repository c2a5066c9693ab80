/* ga_blas.h: a CPU BLAS loaded at run time (dlopen), for float and complex GEMM.
 *
 * The prototypes are declared here by hand (cblas.h lives in a different place for
 * every vendor). The library is OpenBLAS from the scipy-openblas32 wheel (symbols
 * `scipy_cblas_sgemm`, ...), whose path the Python package gives at import, or any
 * library exporting plain `cblas_sgemm`. 32-bit integers (LP64); an ILP64 library
 * (NumPy's bundled OpenBLAS, `scipy_cblas_sgemm64_`) is called through adapters, so
 * the table below always has the LP64 signatures. Without a library, the portable
 * kernel in ga_cpu_gemm.c runs.
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

typedef void (*ga_blas_set_threads_fn)(int n);
typedef int (*ga_blas_get_threads_fn)(void);

typedef struct {
    ga_sgemm_fn sgemm;
    ga_dgemm_fn dgemm;
    ga_cgemm_fn cgemm, zgemm;
    /* OpenBLAS's thread count (NULL for other libraries) */
    ga_blas_set_threads_fn set_threads;
    ga_blas_get_threads_fn get_threads;
    char path[512];
    char prefix[16]; /* "scipy_" or "" */
    /* LAPACK (ga_cpu_linalg.c): the library's handle and its integer width. Fortran
     * LAPACK passes every integer by address, so an ILP64 library (64-bit integers,
     * symbols `scipy_dgetrf_64_`) needs 64-bit integers in memory, not adapters. */
    void *handle;
    int ilp64;
} ga_blas_table;

/* Below this many multiply-adds (m * n * k) a GEMM runs on one BLAS thread: a 64x64
 * product takes a few microseconds on one core, less than handing half of it to a
 * worker costs. From 2^19 (a 100x100 product is 2^20) OpenBLAS uses its threads as it
 * does under NumPy: on an idle second core that is faster (exercise 3 of the chapter
 * runs 1000 of them), and when that core is busy both libraries wait alike. */
#define GA_BLAS_SMALL_WORK ((int64_t)1 << 19)

#ifdef __cplusplus
extern "C" {
#endif

/* Load the BLAS at `path` (NULL: stop using any BLAS). On failure the previous state
 * is kept and GA_ERR_RUNTIME says why (dlerror). Call with the GIL held, never while a
 * GEMM runs. */
int ga_blas_load(const char *path);
/* The BLAS in use, or NULL for the portable kernel. */
const ga_blas_table *ga_blas_get(void);
/* The Fortran LAPACK routine `name` ("dgetrf") of the BLAS in use, with its naming
 * scheme (`scipy_dgetrf_`, `dgetrf_`, `scipy_dgetrf_64_` for ILP64), or NULL. */
void *ga_blas_lapack_sym(const char *name);
/* The same, also saying whether the library's integers are 64-bit: the lookup the core
 * hands the emulated CUDA plugin for its cuSOLVER reference (ga_cuda_emu_cusolver.cpp). */
void *ga_blas_lapack_lookup(const char *name, int *ilp64);

#ifdef __cplusplus
}
#endif

#endif
