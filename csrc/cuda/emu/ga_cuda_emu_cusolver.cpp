/* ga_cuda_emu_cusolver.cpp: the emulation's cuSOLVER (dense), for ga_cusolver.cu.
 *
 * Each routine keeps cuSOLVER's contract where our backend could get it wrong: the
 * matrices are column-major device memory (checked to lie in one device block),
 * devInfo is device memory written by the queued work, the caller's workspace must
 * hold what the _bufferSize query asked for (checked), gesvd refuses m < n as
 * cuSOLVER does, and the work runs in order on the handle's stream. The arithmetic
 * is the host's LAPACK.
 *
 * Which LAPACK: the core hands the plugin its lookup (gpuarr_cuda_emu_set_lapack,
 * called by ga_device.c after loading the emulated plugin) rather than the plugin
 * dlopen'ing a library itself. The core already found and loaded the OpenBLAS the CPU
 * uses (NumPy's ILP64 one, or scipy-openblas32, or GPUARR_BLAS), so the emulated GPU
 * computes with the very routines the CPU backend does, the plugin needs no copy of
 * that search, and the process keeps one OpenBLAS thread pool (two pools take turns
 * on a small machine; see ga_blas.c).
 *
 * Fortran LAPACK takes integers by address: the routines are templates over the
 * library's integer type (int32_t or int64_t, as the lookup says).
 */
#include "ga_cuda_emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

struct ga_emu_cusolver {
    cudaStream_t stream;
};

namespace {

void *(*lapack_lookup)(const char *name, int *ilp64);

/* The Fortran routine `letter` + `name`, or NULL with the error detail set. */
void *
routine(char letter, const char *name, int *ilp64)
{
    char full[32];
    snprintf(full, sizeof(full), "%c%s", letter, name);
    void *fn = lapack_lookup != nullptr ? lapack_lookup(full, ilp64) : nullptr;
    if (fn == nullptr) {
        char msg[160];
        snprintf(msg, sizeof(msg), "the emulated cuSOLVER computes with the CPU's LAPACK, "
                 "which has no %s (is a BLAS with LAPACK loaded?)", full);
        ga_emu_set_error_detail(msg);
    }
    return fn;
}

template <typename T> struct letter_of;
template <> struct letter_of<float> { static constexpr char v = 's'; };
template <> struct letter_of<double> { static constexpr char v = 'd'; };
template <> struct letter_of<cuComplex> { static constexpr char v = 'c'; };
template <> struct letter_of<cuDoubleComplex> { static constexpr char v = 'z'; };

template <typename T>
constexpr bool is_complex()
{
    return letter_of<T>::v == 'c' || letter_of<T>::v == 'z';
}

/* A workspace query's answer (work[0]'s real part) */
template <typename T>
int
query_size(const T &w)
{
    double v;
    if constexpr (is_complex<T>()) {
        v = (double)w.x;
    }
    else {
        v = (double)w;
    }
    return v < 1 ? 1 : (int)v;
}

bool
bad(cusolverDnHandle_t h, const char *what, bool cond)
{
    if (h == nullptr || cond) {
        char msg[160];
        snprintf(msg, sizeof(msg), "cuSOLVER %s: %s (emulation check)", what,
                 h == nullptr ? "no handle" : "invalid sizes");
        ga_emu_set_error_detail(msg);
        return true;
    }
    return false;
}

/* [p, p + n elements of T) in one device block, or an error detail naming it */
template <typename T>
bool
on_device(const T *p, long long n, const char *what, const char *name)
{
    if (n <= 0 || ga_emu_on_device(p, (size_t)n * sizeof(T))) {
        return true;
    }
    char msg[200];
    snprintf(msg, sizeof(msg), "cuSOLVER %s: operand %s (%lld elements) is not device "
             "memory of that size (emulation check)", what, name, n);
    ga_emu_set_error_detail(msg);
    return false;
}

/* --- LAPACK calls, per integer type I ------------------------------------------ */

template <typename I, typename T>
void
lp_getrf(void *fn, int n, T *a, int lda, int *ipiv, int *info)
{
    I N = n, LDA = lda, INFO = 0;
    std::vector<I> piv((size_t)std::max(n, 1));
    ((void (*)(const I *, const I *, T *, const I *, I *, I *))fn)(&N, &N, a, &LDA,
                                                                  piv.data(), &INFO);
    for (int i = 0; i < n; i++) {
        ipiv[i] = (int)piv[i];
    }
    *info = (int)INFO;
}

template <typename I, typename T>
void
lp_getrs(void *fn, const char *trans, int n, int nrhs, const T *a, int lda,
         const int *ipiv, T *b, int ldb, int *info)
{
    I N = n, NRHS = nrhs, LDA = lda, LDB = ldb, INFO = 0;
    std::vector<I> piv(ipiv, ipiv + n);
    ((void (*)(const char *, const I *, const I *, const T *, const I *, const I *, T *,
               const I *, I *, size_t))fn)(trans, &N, &NRHS, a, &LDA, piv.data(), b, &LDB,
                                           &INFO, 1);
    *info = (int)INFO;
}

template <typename I, typename T>
void
lp_potrf(void *fn, char uplo, int n, T *a, int lda, int *info)
{
    I N = n, LDA = lda, INFO = 0;
    ((void (*)(const char *, const I *, T *, const I *, I *, size_t))fn)(&uplo, &N, a, &LDA,
                                                                        &INFO, 1);
    *info = (int)INFO;
}

/* syev / heev; lwork -1 is a query into *work */
template <typename I, typename T, typename R>
void
lp_eig(void *fn, char jobz, int n, T *a, int lda, R *w, T *work, int lwork, int *info)
{
    I N = n, LDA = lda, LW = lwork, INFO = 0;
    if constexpr (is_complex<T>()) {
        std::vector<R> rwork((size_t)std::max(3 * n - 2, 1));
        ((void (*)(const char *, const char *, const I *, T *, const I *, R *, T *, const I *,
                   R *, I *, size_t, size_t))fn)(&jobz, "L", &N, a, &LDA, w, work, &LW,
                                                 rwork.data(), &INFO, 1, 1);
    }
    else {
        ((void (*)(const char *, const char *, const I *, T *, const I *, R *, T *, const I *,
                   I *, size_t, size_t))fn)(&jobz, "L", &N, a, &LDA, w, work, &LW, &INFO, 1,
                                            1);
    }
    *info = (int)INFO;
}

template <typename I, typename T, typename R>
void
lp_gesvd(void *fn, char jobu, char jobvt, int m, int n, T *a, int lda, R *s, T *u, int ldu,
         T *vt, int ldvt, T *work, int lwork, int *info)
{
    I M = m, N = n, LDA = lda, LDU = ldu, LDVT = ldvt, LW = lwork, INFO = 0;
    T dummy[2] = {};
    u = u != nullptr ? u : dummy;
    vt = vt != nullptr ? vt : dummy;
    if constexpr (is_complex<T>()) {
        std::vector<R> rwork((size_t)std::max(5 * std::min(m, n), 1));
        ((void (*)(const char *, const char *, const I *, const I *, T *, const I *, R *, T *,
                   const I *, T *, const I *, T *, const I *, R *, I *, size_t,
                   size_t))fn)(&jobu, &jobvt, &M, &N, a, &LDA, s, u, &LDU, vt, &LDVT, work,
                               &LW, rwork.data(), &INFO, 1, 1);
    }
    else {
        ((void (*)(const char *, const char *, const I *, const I *, T *, const I *, R *, T *,
                   const I *, T *, const I *, T *, const I *, I *, size_t,
                   size_t))fn)(&jobu, &jobvt, &M, &N, a, &LDA, s, u, &LDU, vt, &LDVT, work,
                               &LW, &INFO, 1, 1);
    }
    *info = (int)INFO;
}

/* geqrf(m, n, a, lda, tau, work, lwork) and orgqr/ungqr(m, n, k, ...): k < 0 means
 * geqrf */
template <typename I, typename T>
void
lp_qr(void *fn, int m, int n, int k, T *a, int lda, const T *tau, T *work, int lwork,
      int *info)
{
    I M = m, N = n, K = k, LDA = lda, LW = lwork, INFO = 0;
    if (k < 0) {
        ((void (*)(const I *, const I *, T *, const I *, const T *, T *, const I *, I *))fn)(
            &M, &N, a, &LDA, tau, work, &LW, &INFO);
    }
    else {
        ((void (*)(const I *, const I *, const I *, T *, const I *, const T *, T *, const I *,
                   I *))fn)(&M, &N, &K, a, &LDA, tau, work, &LW, &INFO);
    }
    *info = (int)INFO;
}

/* What a routine needs in its workspace (what _bufferSize answers): LAPACK's own
 * optimal size from a query, so a caller that allocates less is caught. */
template <typename T, typename R>
int
eig_lwork(int n, int *lwork)
{
    int ilp64 = 0;
    void *fn = routine(letter_of<T>::v, is_complex<T>() ? "heev" : "syev", &ilp64);
    if (fn == nullptr) {
        return -1;
    }
    T a[1] = {}, q[1] = {};
    R w[1] = {};
    int info = 0;
    if (ilp64) {
        lp_eig<int64_t, T, R>(fn, 'V', n, a, std::max(n, 1), w, q, -1, &info);
    }
    else {
        lp_eig<int32_t, T, R>(fn, 'V', n, a, std::max(n, 1), w, q, -1, &info);
    }
    *lwork = query_size(q[0]);
    return 0;
}

template <typename T, typename R>
int
gesvd_lwork(int m, int n, int *lwork)
{
    int ilp64 = 0;
    void *fn = routine(letter_of<T>::v, "gesvd", &ilp64);
    if (fn == nullptr) {
        return -1;
    }
    T a[1] = {}, q[1] = {};
    R s[1] = {};
    int info = 0;
    if (ilp64) {
        lp_gesvd<int64_t, T, R>(fn, 'A', 'A', m, n, a, std::max(m, 1), s, a, std::max(m, 1),
                                a, std::max(n, 1), q, -1, &info);
    }
    else {
        lp_gesvd<int32_t, T, R>(fn, 'A', 'A', m, n, a, std::max(m, 1), s, a, std::max(m, 1),
                                a, std::max(n, 1), q, -1, &info);
    }
    *lwork = query_size(q[0]);
    return 0;
}

template <typename T>
int
qr_lwork(const char *name, int m, int n, int k, int *lwork)
{
    int ilp64 = 0;
    void *fn = routine(letter_of<T>::v, name, &ilp64);
    if (fn == nullptr) {
        return -1;
    }
    T a[1] = {}, q[1] = {};
    int info = 0;
    if (ilp64) {
        lp_qr<int64_t, T>(fn, m, n, k, a, std::max(m, 1), a, q, -1, &info);
    }
    else {
        lp_qr<int32_t, T>(fn, m, n, k, a, std::max(m, 1), a, q, -1, &info);
    }
    *lwork = query_size(q[0]);
    return 0;
}

/* --- the routines ------------------------------------------------------------------ */

template <typename T>
cusolverStatus_t
getrf(cusolverDnHandle_t h, int m, int n, T *A, int lda, T *work, int *ipiv, int *info)
{
    const char *what = "getrf";
    if (bad(h, what, m != n || n < 0 || lda < std::max(n, 1))) {
        return CUSOLVER_STATUS_INVALID_VALUE; /* (our backend only factors square ones) */
    }
    if (!on_device(A, (long long)lda * n, what, "A") || !on_device(work, n, what, "work") ||
        !on_device(ipiv, n, what, "devIpiv") || !on_device(info, 1, what, "devInfo")) {
        return CUSOLVER_STATUS_INVALID_VALUE;
    }
    int ilp64 = 0;
    void *fn = routine(letter_of<T>::v, "getrf", &ilp64);
    if (fn == nullptr) {
        return CUSOLVER_STATUS_NOT_SUPPORTED;
    }
    ga_emu_enqueue_task(h->stream, [=] {
        if (ilp64) {
            lp_getrf<int64_t, T>(fn, n, A, lda, ipiv, info);
        }
        else {
            lp_getrf<int32_t, T>(fn, n, A, lda, ipiv, info);
        }
    });
    return CUSOLVER_STATUS_SUCCESS;
}

template <typename T>
cusolverStatus_t
getrs(cusolverDnHandle_t h, cublasOperation_t trans, int n, int nrhs, const T *A, int lda,
      const int *ipiv, T *B, int ldb, int *info)
{
    const char *what = "getrs";
    if (bad(h, what, (trans != CUBLAS_OP_N && trans != CUBLAS_OP_T && trans != CUBLAS_OP_C) ||
                         n < 0 || nrhs < 0 || lda < std::max(n, 1) ||
                         ldb < std::max(n, 1))) {
        return CUSOLVER_STATUS_INVALID_VALUE;
    }
    if (!on_device(A, (long long)lda * n, what, "A") || !on_device(ipiv, n, what, "devIpiv") ||
        !on_device(B, (long long)ldb * nrhs, what, "B") || !on_device(info, 1, what, "devInfo")) {
        return CUSOLVER_STATUS_INVALID_VALUE;
    }
    int ilp64 = 0;
    void *fn = routine(letter_of<T>::v, "getrs", &ilp64);
    if (fn == nullptr) {
        return CUSOLVER_STATUS_NOT_SUPPORTED;
    }
    ga_emu_enqueue_task(h->stream, [=] {
        /* cuSOLVER's getrs leaves devInfo alone on a singular U (getrf reported it);
         * LAPACK's getrs does too: it only checks arguments */
        int dummy = 0;
        const char *op = trans == CUBLAS_OP_T ? "T" : trans == CUBLAS_OP_C ? "C" : "N";
        if (ilp64) {
            lp_getrs<int64_t, T>(fn, op, n, nrhs, A, lda, ipiv, B, ldb, &dummy);
        }
        else {
            lp_getrs<int32_t, T>(fn, op, n, nrhs, A, lda, ipiv, B, ldb, &dummy);
        }
        if (dummy != 0) {
            *info = dummy;
        }
    });
    return CUSOLVER_STATUS_SUCCESS;
}

template <typename T>
cusolverStatus_t
potrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, T *A, int lda, T *work, int lwork,
      int *info)
{
    const char *what = "potrf";
    if (bad(h, what, n < 0 || lda < std::max(n, 1) || lwork < std::max(n, 1))) {
        return CUSOLVER_STATUS_INVALID_VALUE;
    }
    if (!on_device(A, (long long)lda * n, what, "A") || !on_device(work, lwork, what, "work") ||
        !on_device(info, 1, what, "devInfo")) {
        return CUSOLVER_STATUS_INVALID_VALUE;
    }
    int ilp64 = 0;
    void *fn = routine(letter_of<T>::v, "potrf", &ilp64);
    if (fn == nullptr) {
        return CUSOLVER_STATUS_NOT_SUPPORTED;
    }
    char u = uplo == CUBLAS_FILL_MODE_UPPER ? 'U' : 'L';
    ga_emu_enqueue_task(h->stream, [=] {
        if (ilp64) {
            lp_potrf<int64_t, T>(fn, u, n, A, lda, info);
        }
        else {
            lp_potrf<int32_t, T>(fn, u, n, A, lda, info);
        }
    });
    return CUSOLVER_STATUS_SUCCESS;
}

template <typename T, typename R>
cusolverStatus_t
eig_bs(cusolverDnHandle_t h, int n, int *lwork)
{
    if (bad(h, "syevd/heevd_bufferSize", n < 0)) {
        return CUSOLVER_STATUS_INVALID_VALUE;
    }
    return eig_lwork<T, R>(n, lwork) == 0 ? CUSOLVER_STATUS_SUCCESS
                                           : CUSOLVER_STATUS_NOT_SUPPORTED;
}

template <typename T, typename R>
cusolverStatus_t
eig(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, T *A, int lda,
    R *W, T *work, int lwork, int *info)
{
    const char *what = "syevd/heevd";
    int need = 0;
    if (bad(h, what, n < 0 || lda < std::max(n, 1) || uplo != CUBLAS_FILL_MODE_LOWER) ||
        eig_lwork<T, R>(n, &need) != 0) {
        return CUSOLVER_STATUS_INVALID_VALUE;
    }
    if (lwork < need || !on_device(work, lwork, what, "work") ||
        !on_device(A, (long long)lda * n, what, "A") || !on_device(W, n, what, "W") ||
        !on_device(info, 1, what, "devInfo")) {
        if (lwork < need) {
            ga_emu_set_error_detail("cuSOLVER syevd/heevd: lwork is below what "
                                    "_bufferSize asked for (emulation check)");
        }
        return CUSOLVER_STATUS_INVALID_VALUE;
    }
    int ilp64 = 0;
    void *fn = routine(letter_of<T>::v, is_complex<T>() ? "heev" : "syev", &ilp64);
    char jz = jobz == CUSOLVER_EIG_MODE_VECTOR ? 'V' : 'N';
    ga_emu_enqueue_task(h->stream, [=] {
        /* LAPACK's own workspace: the device's `work` only had to be large enough */
        std::vector<T> w((size_t)need);
        if (ilp64) {
            lp_eig<int64_t, T, R>(fn, jz, n, A, lda, W, w.data(), need, info);
        }
        else {
            lp_eig<int32_t, T, R>(fn, jz, n, A, lda, W, w.data(), need, info);
        }
    });
    return CUSOLVER_STATUS_SUCCESS;
}

template <typename T, typename R>
cusolverStatus_t
gesvd(cusolverDnHandle_t h, signed char jobu, signed char jobvt, int m, int n, T *A, int lda,
      R *S, T *U, int ldu, T *VT, int ldvt, T *work, int lwork, R *rwork, int *info)
{
    const char *what = "gesvd";
    int need = 0;
    bool job_ok = (jobu == 'N' || jobu == 'S' || jobu == 'A') &&
                  (jobvt == 'N' || jobvt == 'S' || jobvt == 'A');
    /* cuSOLVER: "gesvd only supports m >= n" */
    if (bad(h, what, !job_ok || m < n || n < 0 || lda < std::max(m, 1) ||
                         ldu < std::max(m, 1) || ldvt < 1) ||
        gesvd_lwork<T, R>(m, n, &need) != 0) {
        return CUSOLVER_STATUS_INVALID_VALUE;
    }
    int k = std::min(m, n);
    int ucols = jobu == 'A' ? m : jobu == 'S' ? k : 0;
    int vrows = jobvt == 'A' ? n : jobvt == 'S' ? k : 0;
    if (lwork < need || !on_device(work, lwork, what, "work") ||
        !on_device(A, (long long)lda * n, what, "A") || !on_device(S, k, what, "S") ||
        !on_device(U, (long long)ldu * ucols, what, "U") ||
        !on_device(VT, vrows ? (long long)ldvt * n : 0, what, "VT") ||
        (vrows && ldvt < vrows) || !on_device(info, 1, what, "devInfo")) {
        if (lwork < need) {
            ga_emu_set_error_detail("cuSOLVER gesvd: lwork is below what _bufferSize "
                                    "asked for (emulation check)");
        }
        return CUSOLVER_STATUS_INVALID_VALUE;
    }
    (void)rwork; /* cuSOLVER's superdiagonal output; nobody here reads it */
    int ilp64 = 0;
    void *fn = routine(letter_of<T>::v, "gesvd", &ilp64);
    char ju = (char)jobu, jv = (char)jobvt;
    ga_emu_enqueue_task(h->stream, [=] {
        std::vector<T> w((size_t)need);
        if (ilp64) {
            lp_gesvd<int64_t, T, R>(fn, ju, jv, m, n, A, lda, S, U, ldu, VT, ldvt, w.data(),
                                    need, info);
        }
        else {
            lp_gesvd<int32_t, T, R>(fn, ju, jv, m, n, A, lda, S, U, ldu, VT, ldvt, w.data(),
                                    need, info);
        }
    });
    return CUSOLVER_STATUS_SUCCESS;
}

/* geqrf (k < 0) and orgqr/ungqr */
template <typename T>
cusolverStatus_t
qr(cusolverDnHandle_t h, int m, int n, int k, T *A, int lda, const T *tau, T *work, int lwork,
   int *info)
{
    bool q = k >= 0;
    const char *what = q ? "orgqr/ungqr" : "geqrf";
    const char *name = q ? (is_complex<T>() ? "ungqr" : "orgqr") : "geqrf";
    int need = 0;
    if (bad(h, what, m < 0 || n < 0 || lda < std::max(m, 1) || (q && (n > m || k > n))) ||
        qr_lwork<T>(name, m, n, k, &need) != 0) {
        return CUSOLVER_STATUS_INVALID_VALUE;
    }
    if (lwork < need || !on_device(work, lwork, what, "work") ||
        !on_device(A, (long long)lda * n, what, "A") ||
        !on_device(tau, q ? k : std::min(m, n), what, "tau") ||
        !on_device(info, 1, what, "devInfo")) {
        if (lwork < need) {
            ga_emu_set_error_detail("cuSOLVER geqrf/orgqr: lwork is below what "
                                    "_bufferSize asked for (emulation check)");
        }
        return CUSOLVER_STATUS_INVALID_VALUE;
    }
    int ilp64 = 0;
    void *fn = routine(letter_of<T>::v, name, &ilp64);
    ga_emu_enqueue_task(h->stream, [=] {
        std::vector<T> w((size_t)need);
        if (ilp64) {
            lp_qr<int64_t, T>(fn, m, n, k, A, lda, tau, w.data(), need, info);
        }
        else {
            lp_qr<int32_t, T>(fn, m, n, k, A, lda, tau, w.data(), need, info);
        }
    });
    return CUSOLVER_STATUS_SUCCESS;
}

template <typename T>
cusolverStatus_t
qr_bs(cusolverDnHandle_t h, const char *name, int m, int n, int k, int *lwork)
{
    if (bad(h, "geqrf/orgqr_bufferSize", m < 0 || n < 0)) {
        return CUSOLVER_STATUS_INVALID_VALUE;
    }
    return qr_lwork<T>(name, m, n, k, lwork) == 0 ? CUSOLVER_STATUS_SUCCESS
                                                   : CUSOLVER_STATUS_NOT_SUPPORTED;
}

}  // namespace

extern "C" {

void
gpuarr_cuda_emu_set_lapack(void *(*lookup)(const char *name, int *ilp64))
{
    lapack_lookup = lookup;
}

cusolverStatus_t
cusolverDnCreate(cusolverDnHandle_t *handle)
{
    *handle = new ga_emu_cusolver{nullptr};
    return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t
cusolverDnDestroy(cusolverDnHandle_t handle)
{
    delete handle;
    return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t
cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t stream)
{
    if (handle == nullptr) {
        return CUSOLVER_STATUS_NOT_INITIALIZED;
    }
    handle->stream = stream;
    return CUSOLVER_STATUS_SUCCESS;
}

#define GA_EMU_CUSOLVER_DEF(L, T, R)                                                   \
    cusolverStatus_t cusolverDn##L##getrf_bufferSize(cusolverDnHandle_t h, int m, int n, \
                                                     T *A, int lda, int *lwork)        \
    {                                                                                  \
        (void)A;                                                                       \
        if (bad(h, "getrf_bufferSize", m < 0 || n < 0 || lda < std::max(m, 1))) {      \
            return CUSOLVER_STATUS_INVALID_VALUE;                                      \
        }                                                                              \
        *lwork = std::max(n, 1); /* what getrf checks that `work` holds */             \
        return CUSOLVER_STATUS_SUCCESS;                                                \
    }                                                                                  \
    cusolverStatus_t cusolverDn##L##getrf(cusolverDnHandle_t h, int m, int n, T *A,      \
                                          int lda, T *work, int *ipiv, int *info)      \
    {                                                                                  \
        return getrf<T>(h, m, n, A, lda, work, ipiv, info);                            \
    }                                                                                  \
    cusolverStatus_t cusolverDn##L##getrs(cusolverDnHandle_t h, cublasOperation_t trans, \
                                          int n, int nrhs, const T *A, int lda,        \
                                          const int *ipiv, T *B, int ldb, int *info)   \
    {                                                                                  \
        return getrs<T>(h, trans, n, nrhs, A, lda, ipiv, B, ldb, info);                \
    }                                                                                  \
    cusolverStatus_t cusolverDn##L##potrf_bufferSize(cusolverDnHandle_t h,               \
                                                     cublasFillMode_t uplo, int n, T *A, \
                                                     int lda, int *lwork)              \
    {                                                                                  \
        (void)uplo;                                                                    \
        (void)A;                                                                       \
        if (bad(h, "potrf_bufferSize", n < 0 || lda < std::max(n, 1))) {              \
            return CUSOLVER_STATUS_INVALID_VALUE;                                      \
        }                                                                              \
        *lwork = std::max(n, 1);                                                       \
        return CUSOLVER_STATUS_SUCCESS;                                                \
    }                                                                                  \
    cusolverStatus_t cusolverDn##L##potrf(cusolverDnHandle_t h, cublasFillMode_t uplo,   \
                                          int n, T *A, int lda, T *work, int lwork,    \
                                          int *info)                                   \
    {                                                                                  \
        return potrf<T>(h, uplo, n, A, lda, work, lwork, info);                        \
    }                                                                                  \
    cusolverStatus_t cusolverDn##L##gesvd_bufferSize(cusolverDnHandle_t h, int m, int n, \
                                                     int *lwork)                       \
    {                                                                                  \
        if (bad(h, "gesvd_bufferSize", m < n || n < 0) ||                              \
            gesvd_lwork<T, R>(m, n, lwork) != 0) {                                     \
            return CUSOLVER_STATUS_INVALID_VALUE;                                      \
        }                                                                              \
        return CUSOLVER_STATUS_SUCCESS;                                                \
    }                                                                                  \
    cusolverStatus_t cusolverDn##L##gesvd(cusolverDnHandle_t h, signed char jobu,        \
                                          signed char jobvt, int m, int n, T *A, int lda, \
                                          R *S, T *U, int ldu, T *VT, int ldvt, T *work, \
                                          int lwork, R *rwork, int *info)              \
    {                                                                                  \
        return gesvd<T, R>(h, jobu, jobvt, m, n, A, lda, S, U, ldu, VT, ldvt, work,     \
                           lwork, rwork, info);                                        \
    }                                                                                  \
    cusolverStatus_t cusolverDn##L##geqrf_bufferSize(cusolverDnHandle_t h, int m, int n, \
                                                     T *A, int lda, int *lwork)        \
    {                                                                                  \
        (void)A;                                                                       \
        (void)lda;                                                                     \
        return qr_bs<T>(h, "geqrf", m, n, -1, lwork);                                  \
    }                                                                                  \
    cusolverStatus_t cusolverDn##L##geqrf(cusolverDnHandle_t h, int m, int n, T *A,      \
                                          int lda, T *tau, T *work, int lwork, int *info) \
    {                                                                                  \
        return qr<T>(h, m, n, -1, A, lda, tau, work, lwork, info);                     \
    }
GA_EMU_CUSOLVER_TYPES(GA_EMU_CUSOLVER_DEF)
#undef GA_EMU_CUSOLVER_DEF

#define GA_EMU_CUSOLVER_DEF2(L, EV, QR, T, R)                                          \
    cusolverStatus_t cusolverDn##L##EV##_bufferSize(cusolverDnHandle_t h,                \
                                                    cusolverEigMode_t jobz,            \
                                                    cublasFillMode_t uplo, int n,      \
                                                    const T *A, int lda, const R *W,   \
                                                    int *lwork)                        \
    {                                                                                  \
        (void)jobz, (void)uplo, (void)A, (void)lda, (void)W;                           \
        return eig_bs<T, R>(h, n, lwork);                                              \
    }                                                                                  \
    cusolverStatus_t cusolverDn##L##EV(cusolverDnHandle_t h, cusolverEigMode_t jobz,     \
                                       cublasFillMode_t uplo, int n, T *A, int lda, R *W, \
                                       T *work, int lwork, int *info)                  \
    {                                                                                  \
        return eig<T, R>(h, jobz, uplo, n, A, lda, W, work, lwork, info);              \
    }                                                                                  \
    cusolverStatus_t cusolverDn##L##QR##_bufferSize(cusolverDnHandle_t h, int m, int n,  \
                                                    int k, const T *A, int lda,        \
                                                    const T *tau, int *lwork)          \
    {                                                                                  \
        (void)A, (void)lda, (void)tau;                                                 \
        return qr_bs<T>(h, #QR, m, n, k, lwork);                                       \
    }                                                                                  \
    cusolverStatus_t cusolverDn##L##QR(cusolverDnHandle_t h, int m, int n, int k, T *A,  \
                                       int lda, const T *tau, T *work, int lwork,      \
                                       int *info)                                      \
    {                                                                                  \
        return qr<T>(h, m, n, k, A, lda, tau, work, lwork, info);                      \
    }
GA_EMU_CUSOLVER_DEF2(S, syevd, orgqr, float, float)
GA_EMU_CUSOLVER_DEF2(D, syevd, orgqr, double, double)
GA_EMU_CUSOLVER_DEF2(C, heevd, ungqr, cuComplex, float)
GA_EMU_CUSOLVER_DEF2(Z, heevd, ungqr, cuDoubleComplex, double)
#undef GA_EMU_CUSOLVER_DEF2

}  // extern "C"
