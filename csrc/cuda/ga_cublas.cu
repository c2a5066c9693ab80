/* ga_cublas.cu: GEMM on a device; cuBLAS for floating types, a kernel for the rest.
 *
 * cuBLAS is not linked: loading it costs about 200 MB of memory and up to half a
 * second, and a missing libcublas must not stop the plugin (or gpuarr) from loading.
 * It is dlopen'ed at the first floating GEMM, of the plugin's CUDA major version, from
 * the folders of ga_cublas_paths.h (the pip wheel beside gpuarr, $CUDA_HOME, the
 * loader's search, the build's toolkit). The exported names are the _v2 ones. The
 * emulated build takes the reference implementations of ga_cuda_emu_cublas.cpp
 * instead.
 */
#include "ga_cuda.h"

#ifndef GA_CUDA_EMULATION
#include <cublas_v2.h> /* types and prototypes only */
#endif
#include "ga_cublas_paths.h"
#include "ga_cuda_libs.h"

#include <limits.h>
#include <stdio.h>

#include <mutex>

namespace {

/* spelled out: C++ sees cublasGemmStridedBatchedEx overloaded (computeType as an
 * enum or as the legacy cudaDataType) */
typedef cublasStatus_t (*gemm_ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                     int, int, int, const void *, const void *, cudaDataType,
                                     int, long long, const void *, cudaDataType, int,
                                     long long, const void *, void *, cudaDataType, int,
                                     long long, int, cublasComputeType_t, cublasGemmAlgo_t);

struct cublas_api {
    decltype(&cublasCreate_v2) create;
    decltype(&cublasSetStream_v2) set_stream;
    decltype(&cublasSgemmStridedBatched) sgemm;
    decltype(&cublasDgemmStridedBatched) dgemm;
    decltype(&cublasCgemmStridedBatched) cgemm;
    decltype(&cublasZgemmStridedBatched) zgemm;
    gemm_ex_fn gemm_ex;
};

std::mutex api_lock;
cublas_api api;
int api_state; /* 0 not tried, 1 loaded, -1 failed (reason kept) */
char api_error[900];
cublasHandle_t handles[GA_MAX_DEVICES];
cudaStream_t bound[GA_MAX_DEVICES]; /* the stream each handle is set to */

#ifndef GA_CUDA_EMULATION
/* The CUDA major version the plugin was built with: cuBLAS must match it. */
constexpr int cuda_major = CUDART_VERSION / 1000;

/* libcublas from the folders of ga_cublas_paths.h, with libcublasLt first from the
 * same folder: that satisfies libcublas's dependency on it even when the folder is
 * not on the loader's path. */
void *
open_cublas(void)
{
    char tried[700] = "";
    void *h = ga_cuda_lib_open(ga_cublas_wheel_dir(cuda_major), "libcublas.so",
                               cuda_major, "libcublasLt.so", tried, sizeof(tried));
    if (h == NULL) {
        snprintf(api_error, sizeof(api_error),
                 "cuBLAS (libcublas.so.%d) could not be loaded, so GEMM cannot run on a "
                 "GPU. Install it with `pip install gpuarr[cuda%d]` (the %s wheel) or the "
                 "CUDA %d toolkit. Tried: %s",
                 cuda_major, cuda_major, cuda_major >= 13 ? "nvidia-cublas" : "nvidia-cublas-cu12",
                 cuda_major, tried);
    }
    return h;
}

template <typename F>
int
sym(void *h, const char *name, F *out)
{
    return ga_cuda_lib_fn(h, name, out, "cuBLAS", cuda_major, api_error,
                          sizeof(api_error));
}
#endif

int
load_api(void)
{
    std::lock_guard<std::mutex> g(api_lock);
    if (api_state == 0) {
#ifdef GA_CUDA_EMULATION
        api.create = cublasCreate_v2;
        api.set_stream = cublasSetStream_v2;
        api.sgemm = cublasSgemmStridedBatched;
        api.dgemm = cublasDgemmStridedBatched;
        api.cgemm = cublasCgemmStridedBatched;
        api.zgemm = cublasZgemmStridedBatched;
        api.gemm_ex = static_cast<gemm_ex_fn>(cublasGemmStridedBatchedEx);
        api_state = 1;
#else
        void *h = open_cublas();
        api_state = -1;
        if (h != NULL && sym(h, "cublasCreate_v2", &api.create) == 0 &&
            sym(h, "cublasSetStream_v2", &api.set_stream) == 0 &&
            sym(h, "cublasSgemmStridedBatched", &api.sgemm) == 0 &&
            sym(h, "cublasDgemmStridedBatched", &api.dgemm) == 0 &&
            sym(h, "cublasCgemmStridedBatched", &api.cgemm) == 0 &&
            sym(h, "cublasZgemmStridedBatched", &api.zgemm) == 0 &&
            sym(h, "cublasGemmStridedBatchedEx", &api.gemm_ex) == 0) {
            api_state = 1;
        }
#endif
    }
    if (api_state != 1) {
        return ga_error(GA_ERR_CUDA, "%s", api_error);
    }
    return GA_OK;
}

const char *
status_name(cublasStatus_t s)
{
    switch ((int)s) {
    case 0:
        return "CUBLAS_STATUS_SUCCESS";
    case 1:
        return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 3:
        return "CUBLAS_STATUS_ALLOC_FAILED";
    case 7:
        return "CUBLAS_STATUS_INVALID_VALUE";
    case 8:
        return "CUBLAS_STATUS_ARCH_MISMATCH";
    case 11:
        return "CUBLAS_STATUS_MAPPING_ERROR";
    case 13:
        return "CUBLAS_STATUS_EXECUTION_FAILED";
    case 14:
        return "CUBLAS_STATUS_INTERNAL_ERROR";
    case 15:
        return "CUBLAS_STATUS_NOT_SUPPORTED";
    case 16:
        return "CUBLAS_STATUS_LICENSE_ERROR";
    }
    return "CUBLAS_STATUS_UNKNOWN";
}

int
cublas_error(cublasStatus_t s, const char *what)
{
    const char *extra = "";
#ifdef GA_CUDA_EMULATION
    extra = ga_emu_take_error_detail();
#endif
    return ga_error(s == CUBLAS_STATUS_ALLOC_FAILED ? GA_ERR_OOM_DEVICE : GA_ERR_CUDA,
                    "cuBLAS error %s in %s%s%s", status_name(s), what, extra[0] ? "; " : "",
                    extra);
}

/* The device's cuBLAS handle, bound to its stream. */
int
handle_for(int dev, cudaStream_t stream, cublasHandle_t *out)
{
    GA_TRY(load_api());
    std::lock_guard<std::mutex> g(api_lock);
    if (handles[dev] == NULL) {
        cublasHandle_t h = NULL;
        cublasStatus_t s = api.create(&h);
        if (s != CUBLAS_STATUS_SUCCESS) {
            return cublas_error(s, "cublasCreate");
        }
        s = api.set_stream(h, stream);
        if (s != CUBLAS_STATUS_SUCCESS) {
            return cublas_error(s, "cublasSetStream");
        }
        handles[dev] = h;
        bound[dev] = stream;
    }
    if (bound[dev] != stream) {
        /* the capture stream of a CUDA graph, or the device's stream again after it */
        cublasStatus_t s = api.set_stream(handles[dev], stream);
        if (s != CUBLAS_STATUS_SUCCESS) {
            return cublas_error(s, "cublasSetStream");
        }
        bound[dev] = stream;
    }
    *out = handles[dev];
    return GA_OK;
}

/* --- integer and bool GEMM ------------------------------------------------------------ */

/* One thread per element of C (grid-stride over batch * m * n), same column-major
 * convention as cuBLAS. Integers wrap like NumPy's: the products are summed modulo
 * 2^64, whose low bits are what T's own wrapping arithmetic would give. No tiling:
 * integer matmul is rare in the chapter and memory-bound at its sizes. */
template <typename T>
__global__ void
k_gemm_int(int transa, int transb, int64_t m, int64_t n, int64_t k, const T *a, int64_t lda,
           int64_t sa, const T *b, int64_t ldb, int64_t sb, T *c, int64_t ldc, int64_t sc,
           int64_t batch, int64_t alpha, int64_t beta)
{
    int64_t total = m * n * batch;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += step) {
        int64_t i = idx % m;
        int64_t j = (idx / m) % n;
        int64_t bi = idx / (m * n);
        /* row i of op(A) and column j of op(B) as a start and a step: the transposes
         * are decided once, not in every step of the loop (which nvcc unrolled into
         * four variants, 254 loads per kernel) */
        const T *ab = a + bi * sa + (transa ? i * lda : i);
        const T *bb = b + bi * sb + (transb ? j : j * ldb);
        const int64_t as = transa ? 1 : lda, bs = transb ? ldb : 1;
        uint64_t acc = 0;
        for (int64_t l = 0; l < k; l++) {
            acc += (uint64_t)(int64_t)ab[l * as] * (uint64_t)(int64_t)bb[l * bs];
        }
        T *out = c + bi * sc + i + j * ldc;
        uint64_t r = (uint64_t)alpha * acc;
        if (beta != 0) {
            r += (uint64_t)beta * (uint64_t)(int64_t)*out;
        }
        *out = (T)r;
    }
}

/* bool: C = OR over l of (A and B), NumPy's matmul for booleans. */
__global__ void
k_gemm_bool(int transa, int transb, int64_t m, int64_t n, int64_t k, const uint8_t *a,
            int64_t lda, int64_t sa, const uint8_t *b, int64_t ldb, int64_t sb, uint8_t *c,
            int64_t ldc, int64_t sc, int64_t batch, int64_t beta)
{
    int64_t total = m * n * batch;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += step) {
        int64_t i = idx % m;
        int64_t j = (idx / m) % n;
        int64_t bi = idx / (m * n);
        const uint8_t *ab = a + bi * sa + (transa ? i * lda : i);
        const uint8_t *bb = b + bi * sb + (transb ? j : j * ldb);
        const int64_t as = transa ? 1 : lda, bs = transb ? ldb : 1;
        uint8_t acc = 0;
        for (int64_t l = 0; l < k && !acc; l++) {
            acc = (ab[l * as] != 0) & (bb[l * bs] != 0);
        }
        uint8_t *out = c + bi * sc + i + j * ldc;
        *out = (uint8_t)(acc || (beta != 0 && *out != 0));
    }
}

template <typename T>
int
gemm_int(int dev, cudaStream_t s, const ga_gemm_desc *g)
{
    unsigned grid, block;
    ga_cuda_launch_dims(dev, g->m * g->n * g->batch, &grid, &block);
    GA_LAUNCH(k_gemm_int<T>, grid, block, 0, s, g->transa, g->transb, g->m, g->n, g->k,
              (const T *)g->a, g->lda, g->stride_a, (const T *)g->b, g->ldb, g->stride_b,
              (T *)g->c, g->ldc, g->stride_c, g->batch, (int64_t)g->alpha, (int64_t)g->beta);
    GA_CUDA_TRY(cudaGetLastError());
    return GA_OK;
}

int
fits_int(const ga_gemm_desc *g)
{
    return g->m <= INT_MAX && g->n <= INT_MAX && g->k <= INT_MAX && g->lda <= INT_MAX &&
           g->ldb <= INT_MAX && g->ldc <= INT_MAX;
}

int
gemm_bool(int dev, cudaStream_t s, const ga_gemm_desc *g)
{
    unsigned grid, block;
    ga_cuda_launch_dims(dev, g->m * g->n * g->batch, &grid, &block);
    GA_LAUNCH(k_gemm_bool, grid, block, 0, s, g->transa, g->transb, g->m, g->n, g->k,
              (const uint8_t *)g->a, g->lda, g->stride_a, (const uint8_t *)g->b, g->ldb,
              g->stride_b, (uint8_t *)g->c, g->ldc, g->stride_c, g->batch,
              (int64_t)(g->beta != 0));
    GA_CUDA_TRY(cudaGetLastError());
    return GA_OK;
}

}  // namespace

extern "C" int
ga_cuda_gemm(int dev, const ga_gemm_desc *g)
{
    if (g->m == 0 || g->n == 0 || g->batch == 0) {
        return GA_OK;
    }
    if (g->m < 0 || g->n < 0 || g->k < 0 || g->batch < 0) {
        return ga_error(GA_ERR_VALUE, "internal: negative GEMM size");
    }
    cudaStream_t s = NULL;
    GA_TRY(ga_cuda_stream(dev, &s));
    /* bool and integer types: the portable kernels (cuBLAS has none), one case per
     * dtype of GA_DTYPES; floating types fall through to cuBLAS below */
    switch (g->dtype) {
#define GA_X_GEMM_PORTABLE(e, name, kind, size, ch, ctype)                             \
    case e:                                                                            \
        if constexpr (kind == GA_KIND_BOOL) {                                          \
            return gemm_bool(dev, s, g);                                               \
        }                                                                              \
        else if constexpr (kind == GA_KIND_INT || kind == GA_KIND_UINT) {              \
            return gemm_int<ctype>(dev, s, g);                                         \
        }                                                                              \
        break;
        GA_DTYPES(GA_X_GEMM_PORTABLE)
#undef GA_X_GEMM_PORTABLE
    default:
        break;
    }
    if (!fits_int(g)) {
        return ga_error(GA_ERR_VALUE,
                        "matrix dimensions of %lld x %lld x %lld (leading dimensions %lld, "
                        "%lld, %lld) exceed cuBLAS's 32-bit sizes; split the product",
                        (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->lda,
                        (long long)g->ldb, (long long)g->ldc);
    }
    cublasHandle_t h = NULL;
    GA_TRY(handle_for(dev, s, &h));
    cublasOperation_t ta = g->transa ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = g->transb ? CUBLAS_OP_T : CUBLAS_OP_N;
    int m = (int)g->m, n = (int)g->n, k = (int)g->k;
    int lda = (int)g->lda, ldb = (int)g->ldb, ldc = (int)g->ldc;
    int isz = ga_dtype_itemsize((ga_dtype)g->dtype);
    /* cuBLAS counts the batch in an int: run chunks of at most INT_MAX */
    for (int64_t done = 0; done < g->batch;) {
        int nb = g->batch - done > INT_MAX ? INT_MAX : (int)(g->batch - done);
        const char *a = g->a + done * g->stride_a * isz;
        const char *b = g->b + done * g->stride_b * isz;
        char *c = g->c + done * g->stride_c * isz;
        cublasStatus_t st;
        const char *what;
        switch (g->dtype) { /* one cuBLAS entry point per floating type */
        case GA_FLOAT32: {
            float al = (float)g->alpha, be = (float)g->beta;
            what = "cublasSgemmStridedBatched";
            st = api.sgemm(h, ta, tb, m, n, k, &al, (const float *)a, lda, g->stride_a,
                           (const float *)b, ldb, g->stride_b, &be, (float *)c, ldc,
                           g->stride_c, nb);
            break;
        }
        case GA_FLOAT64: {
            double al = g->alpha, be = g->beta;
            what = "cublasDgemmStridedBatched";
            st = api.dgemm(h, ta, tb, m, n, k, &al, (const double *)a, lda, g->stride_a,
                           (const double *)b, ldb, g->stride_b, &be, (double *)c, ldc,
                           g->stride_c, nb);
            break;
        }
        case GA_COMPLEX64: {
            cuComplex al, be;
            al.x = (float)g->alpha;
            al.y = 0;
            be.x = (float)g->beta;
            be.y = 0;
            what = "cublasCgemmStridedBatched";
            st = api.cgemm(h, ta, tb, m, n, k, &al, (const cuComplex *)a, lda, g->stride_a,
                           (const cuComplex *)b, ldb, g->stride_b, &be, (cuComplex *)c, ldc,
                           g->stride_c, nb);
            break;
        }
        case GA_COMPLEX128: {
            cuDoubleComplex al, be;
            al.x = g->alpha;
            al.y = 0;
            be.x = g->beta;
            be.y = 0;
            what = "cublasZgemmStridedBatched";
            st = api.zgemm(h, ta, tb, m, n, k, &al, (const cuDoubleComplex *)a, lda,
                           g->stride_a, (const cuDoubleComplex *)b, ldb, g->stride_b, &be,
                           (cuDoubleComplex *)c, ldc, g->stride_c, nb);
            break;
        }
        case GA_FLOAT16: {
            /* float16 storage, float32 accumulation (as PyTorch and CuPy do) */
            float al = (float)g->alpha, be = (float)g->beta;
            what = "cublasGemmStridedBatchedEx (float16)";
            st = api.gemm_ex(h, ta, tb, m, n, k, &al, a, CUDA_R_16F, lda, g->stride_a, b,
                             CUDA_R_16F, ldb, g->stride_b, &be, c, CUDA_R_16F, ldc,
                             g->stride_c, nb, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            break;
        }
        default:
            return ga_error(GA_ERR_UNSUPPORTED, "GEMM of dtype %s is not supported on a GPU",
                            ga_dtype_infos[g->dtype].name);
        }
        if (st != CUBLAS_STATUS_SUCCESS) {
            return cublas_error(st, what);
        }
        /* counted as one launch of an unknown grid (cuBLAS picks its kernels) */
        ga_cuda_count_launch(s, 0);
        done += nb;
    }
    return GA_OK;
}
