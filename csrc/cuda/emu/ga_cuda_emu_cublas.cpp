/* ga_cuda_emu_cublas.cpp: the emulation's cuBLAS (a reference gemm). */
#include "ga_cuda_emu_internal.h"

#include "ga_half.h"

using namespace ga_emu;

/* --- cuBLAS reference ----------------------------------------------------------------- */

struct ga_emu_cublas {
    cudaStream_t stream;
};

namespace {

/* Does the strided batch of (rows x cols, leading dimension ld) matrices at p lie in
 * one device block? The last element is at (batch-1)*stride + (cols-1)*ld + rows-1. */
bool
operand_ok(const void *p, size_t esize, long long rows, long long cols, long long ld,
           long long stride, long long batch, const char *name)
{
    if (rows == 0 || cols == 0 || batch == 0) {
        return true;
    }
    long long last = (batch - 1) * stride + (cols - 1) * ld + rows - 1;
    if (stride < 0 || where(p, (size_t)(last + 1) * esize) < 0) {
        snprintf(error_detail, sizeof(error_detail),
                 "cuBLAS operand %s: %lld x %lld (ld %lld, batch stride %lld, batch %lld) "
                 "does not lie in one device block (emulation check)",
                 name, rows, cols, ld, stride, batch);
        return false;
    }
    return true;
}

template <typename T>
struct cplx {
    T re, im;
};

template <typename T>
inline T
mul(T a, T b)
{
    return a * b;
}
template <typename T>
inline cplx<T>
mul(cplx<T> a, cplx<T> b)
{
    return cplx<T>{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <typename T>
inline T
add(T a, T b)
{
    return a + b;
}
template <typename T>
inline cplx<T>
add(cplx<T> a, cplx<T> b)
{
    return cplx<T>{a.re + b.re, a.im + b.im};
}
template <typename T>
inline T
conj_if(T a, bool)
{
    return a;
}
template <typename T>
inline cplx<T>
conj_if(cplx<T> a, bool c)
{
    return c ? cplx<T>{a.re, -a.im} : a;
}
template <typename T>
inline bool
is_zero(T a)
{
    return a == T(0);
}
template <typename T>
inline bool
is_zero(cplx<T> a)
{
    return a.re == 0 && a.im == 0;
}

/* Storage <-> compute type: identity, except half bits computed in float. */
template <typename S, typename C>
struct conv {
    static C in(S s) { return (C)s; }
    static S out(C c) { return (S)c; }
};
template <>
struct conv<uint16_t, float> {
    static float in(uint16_t s) { return ga_half_to_float(s); }
    static uint16_t out(float c) { return ga_float_to_half(c); }
};

/* C = alpha op(A) op(B) + beta C, column-major, exactly as cuBLAS defines it; C is not
 * read when beta == 0. */
template <typename S, typename C>
cublasStatus_t
gemm_ref(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
         C alpha, const S *A, int lda, long long sa, const S *B, int ldb, long long sb,
         C beta, S *Cm, int ldc, long long sc, int batch)
{
    if (ga_emu_inject("cublas")) {
        return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    if (h == nullptr) {
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    long long arows = ta == CUBLAS_OP_N ? m : k, acols = ta == CUBLAS_OP_N ? k : m;
    long long brows = tb == CUBLAS_OP_N ? k : n, bcols = tb == CUBLAS_OP_N ? n : k;
    if (m < 0 || n < 0 || k < 0 || batch < 0 || lda < (arows > 1 ? arows : 1) ||
        ldb < (brows > 1 ? brows : 1) || ldc < (m > 1 ? m : 1)) {
        snprintf(error_detail, sizeof(error_detail),
                 "cuBLAS gemm: invalid sizes m=%d n=%d k=%d lda=%d ldb=%d ldc=%d batch=%d",
                 m, n, k, lda, ldb, ldc, batch);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if ((k > 0 && (!operand_ok(A, sizeof(S), arows, acols, lda, sa, batch, "A") ||
                   !operand_ok(B, sizeof(S), brows, bcols, ldb, sb, batch, "B"))) ||
        !operand_ok(Cm, sizeof(S), m, n, ldc, sc, batch, "C")) {
        return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    bool ca = ta == CUBLAS_OP_C, cb = tb == CUBLAS_OP_C;
    /* checked now, computed in order on the handle's stream, like cuBLAS's kernels */
    enqueue(resolve(h->stream), [=] {
    in_window w;
    for (int b = 0; b < batch; b++) {
        const S *a = A + b * sa;
        const S *bb = B + b * sb;
        S *c = Cm + b * sc;
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < m; i++) {
                C acc{};
                for (int l = 0; l < k; l++) {
                    C x = conv<S, C>::in(ta == CUBLAS_OP_N ? a[i + (long long)l * lda]
                                                           : a[l + (long long)i * lda]);
                    C y = conv<S, C>::in(tb == CUBLAS_OP_N ? bb[l + (long long)j * ldb]
                                                           : bb[j + (long long)l * ldb]);
                    acc = add(acc, mul(conj_if(x, ca), conj_if(y, cb)));
                }
                S &out = c[i + (long long)j * ldc];
                C r = mul(alpha, acc);
                if (!is_zero(beta)) {
                    r = add(r, mul(beta, conv<S, C>::in(out)));
                }
                out = conv<S, C>::out(r);
            }
        }
    }
    });
    return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

cublasStatus_t
cublasCreate_v2(cublasHandle_t *handle)
{
    if (ga_emu_inject("cublasCreate_v2")) {
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    *handle = new ga_emu_cublas{nullptr};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasDestroy_v2(cublasHandle_t handle)
{
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    if (handle == nullptr) {
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                          int n, int k, const float *alpha, const float *A, int lda,
                          long long sa, const float *B, int ldb, long long sb,
                          const float *beta, float *C, int ldc, long long sc, int batch)
{
    return gemm_ref<float, float>(h, ta, tb, m, n, k, *alpha, A, lda, sa, B, ldb, sb, *beta,
                                  C, ldc, sc, batch);
}

cublasStatus_t
cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                          int n, int k, const double *alpha, const double *A, int lda,
                          long long sa, const double *B, int ldb, long long sb,
                          const double *beta, double *C, int ldc, long long sc, int batch)
{
    return gemm_ref<double, double>(h, ta, tb, m, n, k, *alpha, A, lda, sa, B, ldb, sb, *beta,
                                    C, ldc, sc, batch);
}

cublasStatus_t
cublasCgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                          int n, int k, const cuComplex *alpha, const cuComplex *A, int lda,
                          long long sa, const cuComplex *B, int ldb, long long sb,
                          const cuComplex *beta, cuComplex *C, int ldc, long long sc,
                          int batch)
{
    typedef cplx<float> c8;
    return gemm_ref<c8, c8>(h, ta, tb, m, n, k, c8{alpha->x, alpha->y}, (const c8 *)A, lda,
                            sa, (const c8 *)B, ldb, sb, c8{beta->x, beta->y}, (c8 *)C, ldc, sc,
                            batch);
}

cublasStatus_t
cublasZgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                          int n, int k, const cuDoubleComplex *alpha, const cuDoubleComplex *A,
                          int lda, long long sa, const cuDoubleComplex *B, int ldb,
                          long long sb, const cuDoubleComplex *beta, cuDoubleComplex *C,
                          int ldc, long long sc, int batch)
{
    typedef cplx<double> c16;
    return gemm_ref<c16, c16>(h, ta, tb, m, n, k, c16{alpha->x, alpha->y}, (const c16 *)A,
                              lda, sa, (const c16 *)B, ldb, sb, c16{beta->x, beta->y},
                              (c16 *)C, ldc, sc, batch);
}

cublasStatus_t
cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                           int n, int k, const void *alpha, const void *A, cudaDataType at,
                           int lda, long long sa, const void *B, cudaDataType bt, int ldb,
                           long long sb, const void *beta, void *C, cudaDataType ct, int ldc,
                           long long sc, int batch, cublasComputeType_t compute,
                           cublasGemmAlgo_t algo)
{
    (void)algo;
    if (at == CUDA_R_16F && bt == CUDA_R_16F && ct == CUDA_R_16F &&
        compute == CUBLAS_COMPUTE_32F) {
        return gemm_ref<uint16_t, float>(h, ta, tb, m, n, k, *(const float *)alpha,
                                         (const uint16_t *)A, lda, sa, (const uint16_t *)B,
                                         ldb, sb, *(const float *)beta, (uint16_t *)C, ldc,
                                         sc, batch);
    }
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

}  // extern "C"
