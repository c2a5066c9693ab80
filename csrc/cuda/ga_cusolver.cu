/* ga_cusolver.cu: the factorisations of gpuarr.linalg on a CUDA device (the `linalg`
 * entry, ga_linalg_desc in ga_backend.h), with cuSOLVER's dense API.
 *
 * cuSOLVER is not linked, for cuBLAS's reasons (ga_cublas.cu): it is large, and a
 * missing libcusolver must not stop the plugin from loading; it is dlopen'ed at the
 * first factorisation from the folders of ga_cublas_paths.h, and its absence is an
 * error of that call only. Its soname follows cuSOLVER's own major version
 * (CUSOLVER_VER_MAJOR: 12 in CUDA 13.0, 11 in CUDA 12), not CUDA's. The emulated
 * build takes the references of ga_cuda_emu_cusolver.cpp instead.
 *
 * One call factors a whole batch on the device's stream, one routine call per matrix
 * (the dense API's batched forms cover only some routines and small sizes), each
 * with its own devInfo slot in one device array. Reading those back is the only host
 * wait: one per call, not one per matrix, and none for LU (det and slogdet read a
 * zero pivot from U's diagonal instead). Workspace comes from the plugin's caching
 * allocator, freed in stream order.
 */
#include "ga_cuda.h"

#ifndef GA_CUDA_EMULATION
#include <cusolverDn.h> /* types and prototypes only */
#endif
#include "ga_cublas_paths.h"
#include "ga_cuda_libs.h"
#include "ga_linalg_failure.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mutex>
#include <vector>

namespace {

/* The routines of one element type; EV is syevd or heevd, QR orgqr or ungqr. */
#define GA_SOLVER_FNS(L, EV, QR)                                                       \
    struct {                                                                           \
        decltype(&cusolverDn##L##getrf_bufferSize) getrf_bs;                           \
        decltype(&cusolverDn##L##getrf) getrf;                                         \
        decltype(&cusolverDn##L##getrs) getrs;                                         \
        decltype(&cusolverDn##L##potrf_bufferSize) potrf_bs;                           \
        decltype(&cusolverDn##L##potrf) potrf;                                         \
        decltype(&cusolverDn##L##EV##_bufferSize) ev_bs;                               \
        decltype(&cusolverDn##L##EV) ev;                                               \
        decltype(&cusolverDn##L##gesvd_bufferSize) gesvd_bs;                           \
        decltype(&cusolverDn##L##gesvd) gesvd;                                         \
        decltype(&cusolverDn##L##geqrf_bufferSize) geqrf_bs;                           \
        decltype(&cusolverDn##L##geqrf) geqrf;                                         \
        decltype(&cusolverDn##L##QR##_bufferSize) qr_bs;                               \
        decltype(&cusolverDn##L##QR) qr;                                               \
    }

struct cusolver_api {
    decltype(&cusolverDnCreate) create;
    decltype(&cusolverDnSetStream) set_stream;
    GA_SOLVER_FNS(S, syevd, orgqr) s;
    GA_SOLVER_FNS(D, syevd, orgqr) d;
    GA_SOLVER_FNS(C, heevd, ungqr) c;
    GA_SOLVER_FNS(Z, heevd, ungqr) z;
};

/* Each name of the table, for dlsym and for the emulation's direct assignment. */
#define GA_SOLVER_NAMES(X, f, L, EV, QR)                                               \
    X(f.getrf_bs, cusolverDn##L##getrf_bufferSize)                                     \
    X(f.getrf, cusolverDn##L##getrf)                                                   \
    X(f.getrs, cusolverDn##L##getrs)                                                   \
    X(f.potrf_bs, cusolverDn##L##potrf_bufferSize)                                     \
    X(f.potrf, cusolverDn##L##potrf)                                                   \
    X(f.ev_bs, cusolverDn##L##EV##_bufferSize)                                         \
    X(f.ev, cusolverDn##L##EV)                                                         \
    X(f.gesvd_bs, cusolverDn##L##gesvd_bufferSize)                                     \
    X(f.gesvd, cusolverDn##L##gesvd)                                                   \
    X(f.geqrf_bs, cusolverDn##L##geqrf_bufferSize)                                     \
    X(f.geqrf, cusolverDn##L##geqrf)                                                   \
    X(f.qr_bs, cusolverDn##L##QR##_bufferSize)                                         \
    X(f.qr, cusolverDn##L##QR)
#define GA_SOLVER_ALL_NAMES(X)                                                         \
    X(api.create, cusolverDnCreate)                                                    \
    X(api.set_stream, cusolverDnSetStream)                                             \
    GA_SOLVER_NAMES(X, api.s, S, syevd, orgqr)                                         \
    GA_SOLVER_NAMES(X, api.d, D, syevd, orgqr)                                         \
    GA_SOLVER_NAMES(X, api.c, C, heevd, ungqr)                                         \
    GA_SOLVER_NAMES(X, api.z, Z, heevd, ungqr)

std::mutex api_lock;
cusolver_api api;
int api_state; /* 0 not tried, 1 loaded, -1 failed (reason kept) */
char api_error[900];
cusolverDnHandle_t handles[GA_MAX_DEVICES];

#ifndef GA_CUDA_EMULATION
constexpr int cuda_major = CUDART_VERSION / 1000;

void *
open_cusolver(void)
{
    char tried[700] = "";
    void *h = ga_cuda_lib_open(ga_cusolver_wheel_dir(cuda_major), "libcusolver.so",
                               CUSOLVER_VER_MAJOR, NULL, tried, sizeof(tried));
    if (h == NULL) {
        snprintf(api_error, sizeof(api_error),
                 "cuSOLVER (libcusolver.so.%d) could not be loaded, so gpuarr.linalg's "
                 "factorisations cannot run on a GPU. Install it with `pip install %s` or "
                 "the CUDA %d toolkit, or move the array to the CPU (x.to(gpuarr.cpu())). "
                 "Tried: %s",
                 CUSOLVER_VER_MAJOR, cuda_major >= 13 ? "nvidia-cusolver" : "nvidia-cusolver-cu12",
                 cuda_major, tried);
    }
    return h;
}

template <typename F>
int
sym(void *h, const char *name, F *out)
{
    return ga_cuda_lib_fn(h, name, out, "cuSOLVER", CUSOLVER_VER_MAJOR, api_error,
                          sizeof(api_error));
}
#endif

int
load_api(void)
{
    std::lock_guard<std::mutex> g(api_lock);
    if (api_state == 0) {
#ifdef GA_CUDA_EMULATION
#define GA_X_ASSIGN(field, name) field = name;
        GA_SOLVER_ALL_NAMES(GA_X_ASSIGN)
#undef GA_X_ASSIGN
        api_state = 1;
#else
        void *h = open_cusolver();
        api_state = -1;
        int bad = h == NULL;
#define GA_X_SYM(field, name) bad = bad || sym(h, #name, &field) != 0;
        GA_SOLVER_ALL_NAMES(GA_X_SYM)
#undef GA_X_SYM
        if (!bad) {
            api_state = 1;
        }
#endif
    }
    if (api_state != 1) {
        return ga_error(GA_ERR_CUDA, "%s", api_error);
    }
    return GA_OK;
}

int
solver_error(cusolverStatus_t s, const char *what)
{
    const char *extra = "";
#ifdef GA_CUDA_EMULATION
    extra = ga_emu_take_error_detail();
#endif
    return ga_error(s == CUSOLVER_STATUS_ALLOC_FAILED ? GA_ERR_OOM_DEVICE : GA_ERR_CUDA,
                    "cuSOLVER error %d in %s%s%s", (int)s, what, extra[0] ? "; " : "",
                    extra);
}

#define GA_SOLVER_TRY(expr, what)                                                      \
    do {                                                                               \
        cusolverStatus_t ga_solver_st_ = (expr);                                       \
        if (ga_solver_st_ != CUSOLVER_STATUS_SUCCESS) {                                \
            return solver_error(ga_solver_st_, what);                                  \
        }                                                                              \
    } while (0)

/* The device's cuSOLVER handle, bound to its stream. */
int
handle_for(int dev, cudaStream_t stream, cusolverDnHandle_t *out)
{
    GA_TRY(load_api());
    std::lock_guard<std::mutex> g(api_lock);
    if (handles[dev] == NULL) {
        cusolverDnHandle_t h = NULL;
        GA_SOLVER_TRY(api.create(&h), "cusolverDnCreate");
        GA_SOLVER_TRY(api.set_stream(h, stream), "cusolverDnSetStream");
        handles[dev] = h;
    }
    *out = handles[dev];
    return GA_OK;
}

/* --- conjugate transpose (gesvd wants m >= n: a wide matrix is factored as A^H) --- */

__device__ inline float
conj_of(float x)
{
    return x;
}
__device__ inline double
conj_of(double x)
{
    return x;
}
__device__ inline cuComplex
conj_of(cuComplex x)
{
    x.y = -x.y;
    return x;
}
__device__ inline cuDoubleComplex
conj_of(cuDoubleComplex x)
{
    x.y = -x.y;
    return x;
}

/* dst (cols x rows) = src (rows x cols)^H, column-major, `batch` matrices each. One
 * thread per element, grid-stride; reads are coalesced, writes strided (these are
 * small matrices next to the O(n^3) factorisation they feed). */
template <typename T>
__global__ void
k_conj_transpose(int64_t batch, int64_t rows, int64_t cols, const T *src, T *dst)
{
    int64_t total = batch * rows * cols;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += step) {
        int64_t i = idx % rows, j = (idx / rows) % cols, b = idx / (rows * cols);
        dst[b * rows * cols + j + i * cols] = conj_of(src[idx]);
    }
}

template <typename T>
int
conj_transpose(int dev, cudaStream_t s, int64_t batch, int64_t rows, int64_t cols,
               const void *src, void *dst)
{
    unsigned grid, block;
    ga_cuda_launch_dims(dev, batch * rows * cols, &grid, &block);
    GA_LAUNCH(k_conj_transpose<T>, grid, block, 0, s, batch, rows, cols, (const T *)src,
              (T *)dst);
    GA_CUDA_TRY(cudaGetLastError());
    return GA_OK;
}

/* --- NaN check before gesvd ------------------------------------------------------
 * gesvd on a matrix holding NaN may iterate to its limit or hand back NaN with info 0;
 * NumPy (whose gesdd refuses NaN) raises "SVD did not converge". Every device checks
 * first, so they agree: a flag per matrix, read with devInfo in the call's one wait. */

__device__ inline bool
nan_of(float x)
{
    return x != x;
}
__device__ inline bool
nan_of(double x)
{
    return x != x;
}
__device__ inline bool
nan_of(cuComplex x)
{
    return x.x != x.x || x.y != x.y;
}
__device__ inline bool
nan_of(cuDoubleComplex x)
{
    return x.x != x.x || x.y != x.y;
}

/* flag[b] = 1 when matrix b (`each` elements) holds a NaN. One thread per element,
 * grid-stride, coalesced reads; every thread that writes a flag writes the same 1, so
 * the unordered stores need no atomics. */
template <typename T>
__global__ void
k_flag_nan(int64_t batch, int64_t each, const T *a, int *flag)
{
    int64_t total = batch * each;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += step) {
        if (nan_of(a[idx])) {
            flag[idx / each] = 1;
        }
    }
}

template <typename T>
int
flag_nan(int dev, cudaStream_t s, int64_t batch, int64_t each, const void *a, int *flag)
{
    GA_CUDA_TRY(cudaMemsetAsync(flag, 0, sizeof(int) * (size_t)batch, s));
    if (batch * each == 0) {
        return GA_OK;
    }
    unsigned grid, block;
    ga_cuda_launch_dims(dev, batch * each, &grid, &block);
    GA_LAUNCH(k_flag_nan<T>, grid, block, 0, s, batch, each, (const T *)a, flag);
    GA_CUDA_TRY(cudaGetLastError());
    return GA_OK;
}

/* Scratch blocks of one call, returned to the caching allocator in stream order
 * (queued work that still uses them runs before any later reuse). */
struct scratch {
    int dev;
    std::vector<std::pair<void *, size_t>> blocks;
    explicit scratch(int d) : dev(d) {}
    ~scratch()
    {
        for (auto &b : blocks) {
            ga_cuda_free(dev, b.first, b.second);
        }
    }
    template <typename T>
    int get(size_t count, T **out)
    {
        void *p = NULL;
        size_t n = (count > 0 ? count : 1) * sizeof(T);
        GA_TRY(ga_cuda_alloc(dev, n, &p));
        blocks.emplace_back(p, n);
        *out = (T *)p;
        return GA_OK;
    }
};

/* The one host wait of a call: every matrix's devInfo at once, followed (with
 * `nan_flags`) by the batch's NaN flags (flag_nan), a NaN being a numerical failure. */
int
check_info(int dev, const ga_linalg_desc *d, const int *dinfo, int nan_flags = 0)
{
    std::vector<int> info((size_t)d->batch * (nan_flags ? 2 : 1));
    GA_TRY(ga_cuda_copy_to_host(dev, info.data(), dinfo, sizeof(int) * info.size()));
    for (int64_t i = 0; i < d->batch; i++) {
        if (nan_flags && info[(size_t)(d->batch + i)]) {
            info[i] = 1;
        }
        if (info[i] < 0) {
            return ga_error(GA_ERR_RUNTIME, "linalg: cuSOLVER refused argument %d (op %d)",
                            -info[i], (int)d->op);
        }
        if (info[i] > 0) {
            if (d->batch > 1) {
                return ga_error(GA_ERR_LINALG, "%s (matrix %lld of the batch)",
                                ga_linalg_failure_text(d->op), (long long)i);
            }
            return ga_error(GA_ERR_LINALG, "%s", ga_linalg_failure_text(d->op));
        }
    }
    return GA_OK;
}

template <typename T, typename R, typename F>
int
run(int dev, cudaStream_t s, cusolverDnHandle_t h, const F &f, const ga_linalg_desc *d)
{
    const int m = (int)d->m, n = (int)d->n, k = m < n ? m : n;
    T *a0 = (T *)d->a;
    const int64_t astep = d->m * d->n;
    scratch mem(dev);
    int *info = NULL;
    T *work = NULL;
    int lwork = 0;
    GA_TRY(mem.get(2 * d->batch, &info)); /* devInfo, then SVD's NaN flags */
    switch ((ga_linalg_op)d->op) {
    case GA_LINALG_SOLVE:
    case GA_LINALG_LU: {
        int solve = d->op == GA_LINALG_SOLVE;
        GA_SOLVER_TRY(f.getrf_bs(h, n, n, a0, n, &lwork), "getrf_bufferSize");
        GA_TRY(mem.get(lwork, &work));
        int *piv = NULL;
        if (solve) {
            GA_TRY(mem.get(n, &piv)); /* reused: the matrices run in stream order */
        }
        for (int64_t i = 0; i < d->batch; i++) {
            int *p = solve ? piv : d->ipiv + i * n;
            GA_SOLVER_TRY(f.getrf(h, n, n, a0 + i * astep, n, work, p, info + i), "getrf");
            ga_cuda_count_launch(s, 0);
            if (solve) {
                T *b = (T *)d->b + i * d->n * d->nrhs;
                /* mode 1: a holds A^T (ga_linalg_op) */
                GA_SOLVER_TRY(f.getrs(h, d->mode == 1 ? CUBLAS_OP_T : CUBLAS_OP_N, n,
                                      (int)d->nrhs, a0 + i * astep, n, p,
                                      b, n, info + i),
                              "getrs");
                ga_cuda_count_launch(s, 0);
            }
        }
        /* LU: a zero pivot is det 0, not an error, and needs no wait */
        return solve ? check_info(dev, d, info) : GA_OK;
    }
    case GA_LINALG_CHOLESKY: {
        cublasFillMode_t uplo = d->mode ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
        GA_SOLVER_TRY(f.potrf_bs(h, uplo, n, a0, n, &lwork), "potrf_bufferSize");
        GA_TRY(mem.get(lwork, &work));
        for (int64_t i = 0; i < d->batch; i++) {
            GA_SOLVER_TRY(f.potrf(h, uplo, n, a0 + i * astep, n, work, lwork, info + i),
                          "potrf");
            ga_cuda_count_launch(s, 0);
        }
        return check_info(dev, d, info);
    }
    case GA_LINALG_EIGH: {
        cusolverEigMode_t jobz = d->mode ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        R *w0 = (R *)d->w;
        GA_SOLVER_TRY(f.ev_bs(h, jobz, CUBLAS_FILL_MODE_LOWER, n, a0, n, w0, &lwork),
                      "syevd/heevd_bufferSize");
        GA_TRY(mem.get(lwork, &work));
        for (int64_t i = 0; i < d->batch; i++) {
            GA_SOLVER_TRY(f.ev(h, jobz, CUBLAS_FILL_MODE_LOWER, n, a0 + i * astep, n,
                               w0 + i * n, work, lwork, info + i),
                          "syevd/heevd");
            ga_cuda_count_launch(s, 0);
        }
        return check_info(dev, d, info);
    }
    case GA_LINALG_SVD: {
        /* cuSOLVER's gesvd takes m >= n only: a wide A is factored as A^H = U' S V'^H,
         * so A = V' S U'^H: U = (V'^H)^H and Vh = U'^H, one transpose kernel each */
        int wide = m < n;
        int rm = wide ? n : m, rn = wide ? m : n; /* the factored matrix, rm >= rn */
        signed char job = d->mode == 0 ? 'N' : d->mode == 1 ? 'S' : 'A';
        int ucols = d->mode == 2 ? rm : k, vrows = d->mode == 2 ? rn : k;
        T *src = a0, *u = (T *)d->u, *vt = (T *)d->vh;
        GA_TRY(flag_nan<T>(dev, s, d->batch, astep, a0, info + d->batch));
        if (wide) {
            GA_TRY(mem.get((size_t)d->batch * (size_t)astep, &src));
            GA_TRY(conj_transpose<T>(dev, s, d->batch, m, n, a0, src));
            if (d->mode) {
                GA_TRY(mem.get((size_t)d->batch * (size_t)rm * (size_t)ucols, &u));
                GA_TRY(mem.get((size_t)d->batch * (size_t)vrows * (size_t)rn, &vt));
            }
        }
        R *rwork = NULL;
        GA_SOLVER_TRY(f.gesvd_bs(h, rm, rn, &lwork), "gesvd_bufferSize");
        GA_TRY(mem.get(lwork, &work));
        GA_TRY(mem.get(k, &rwork));
        for (int64_t i = 0; i < d->batch; i++) {
            GA_SOLVER_TRY(f.gesvd(h, job, job, rm, rn, src + i * astep, rm,
                                  (R *)d->w + i * k, d->mode ? u + i * rm * ucols : NULL,
                                  rm, d->mode ? vt + i * vrows * rn : NULL,
                                  vrows > 0 ? vrows : 1, work, lwork, rwork, info + i),
                          "gesvd");
            ga_cuda_count_launch(s, 0);
        }
        if (wide && d->mode) {
            GA_TRY(conj_transpose<T>(dev, s, d->batch, vrows, rn, vt, d->u));
            GA_TRY(conj_transpose<T>(dev, s, d->batch, rm, ucols, u, d->vh));
        }
        return check_info(dev, d, info, 1);
    }
    case GA_LINALG_QR: {
        int qc = (int)d->qcols, lw2 = 0;
        T *tau = NULL, *q0 = (T *)d->b;
        GA_TRY(mem.get(k, &tau));
        GA_SOLVER_TRY(f.geqrf_bs(h, m, n, a0, m, &lwork), "geqrf_bufferSize");
        GA_SOLVER_TRY(f.qr_bs(h, m, qc, k, q0, m, tau, &lw2), "orgqr/ungqr_bufferSize");
        lwork = lwork > lw2 ? lwork : lw2;
        GA_TRY(mem.get(lwork, &work));
        for (int64_t i = 0; i < d->batch; i++) {
            T *a = a0 + i * astep, *q = q0 + i * d->m * qc;
            GA_SOLVER_TRY(f.geqrf(h, m, n, a, m, tau, work, lwork, info + i), "geqrf");
            /* Q's first k columns start from the reflectors below R */
            GA_CUDA_TRY(cudaMemcpyAsync(q, a, sizeof(T) * (size_t)m * (size_t)k,
                                        cudaMemcpyDeviceToDevice, s));
            GA_SOLVER_TRY(f.qr(h, m, qc, k, q, m, tau, work, lwork, info + i), "orgqr/ungqr");
            ga_cuda_count_launch(s, 0);
            ga_cuda_count_launch(s, 0);
        }
        /* geqrf and orgqr have no numerical failure: info < 0 only, our bug; no wait */
        return GA_OK;
    }
    }
    return ga_error(GA_ERR_VALUE, "linalg: unknown operation %d", (int)d->op);
}

}  // namespace

extern "C" int
ga_cuda_linalg(int dev, const ga_linalg_desc *d)
{
    /* the legacy dense API counts in int: every matrix, and the batch's workspace */
    int64_t big = d->m > d->n ? d->m : d->n;
    if (big * big > INT_MAX || d->nrhs > INT_MAX || d->qcols > INT_MAX) {
        return ga_error(GA_ERR_VALUE, "linalg: a %lld x %lld matrix exceeds cuSOLVER's "
                        "32-bit sizes", (long long)d->m, (long long)d->n);
    }
    cudaStream_t s = NULL;
    GA_TRY(ga_cuda_stream(dev, &s));
    cusolverDnHandle_t h = NULL;
    GA_TRY(handle_for(dev, s, &h));
    switch (d->dtype) { /* one set of cuSOLVER routines per LAPACK type */
    case GA_FLOAT32:
        return run<float, float>(dev, s, h, api.s, d);
    case GA_FLOAT64:
        return run<double, double>(dev, s, h, api.d, d);
    case GA_COMPLEX64:
        return run<cuComplex, float>(dev, s, h, api.c, d);
    case GA_COMPLEX128:
        return run<cuDoubleComplex, double>(dev, s, h, api.z, d);
    default:
        return ga_error(GA_ERR_TYPE, "linalg: cuSOLVER has no routine for %s",
                        ga_dtype_infos[d->dtype].name);
    }
}
