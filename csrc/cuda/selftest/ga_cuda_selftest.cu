/* ga_cuda_selftest.cu: small kernels that exercise each CUDA feature the backend's
 * kernels rely on, with known answers. Exported as gpuarr_cuda_selftest so a test can
 * run it through ctypes, on the emulation (to check the shim) or on a real GPU (to
 * check that the emulation agrees with the hardware).
 */
#include "ga_cuda.h"
#include "ga_cuda_selftest.h"

#include <stdio.h>
#include <string.h>

namespace {

/* barrier-free, grid-stride */
__global__ void
k_iota(int64_t n, int32_t *out)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        out[i] = (int32_t)(3 * i + 1);
    }
}

/* static shared memory + a tree of barriers: one partial sum per block */
__global__ void
k_block_sum(int64_t n, const int32_t *in, int64_t *partial)
{
    __shared__ int64_t buf[256];
    int64_t acc = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        acc += in[i];
    }
    buf[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) {
            buf[threadIdx.x] += buf[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = buf[0];
    }
}

/* atomics from every thread */
__global__ void
k_atomic(int64_t n, const int32_t *in, unsigned long long *total, int *maxv)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        atomicAdd(total, (unsigned long long)in[i]);
        atomicMax(maxv, in[i]);
    }
}

/* dynamic shared memory: reverse each block's slice; __syncthreads_count */
__global__ void
k_reverse(const int32_t *in, int32_t *out, int *odd_count)
{
    GA_DYNAMIC_SHARED(int32_t, tile);
    unsigned t = threadIdx.x;
    int64_t base = (int64_t)blockIdx.x * blockDim.x;
    tile[t] = in[base + t];
    int odd = __syncthreads_count(tile[t] & 1);
    out[base + t] = tile[blockDim.x - 1 - t];
    if (t == 0) {
        atomicAdd(odd_count, odd);
    }
}

int
fail(char *msg, size_t n, const char *what)
{
    snprintf(msg, n, "%s", what);
    return 1;
}

}  // namespace

#define ST_TRY(expr)                                                                   \
    do {                                                                               \
        int st_ = (expr);                                                              \
        if (st_ != GA_OK) {                                                            \
            snprintf(msg, n, "%s", ga_error_message());                                \
            goto done;                                                                 \
        }                                                                              \
    } while (0)

/* 0 when every check passes; otherwise 1 and a message in msg. */
extern "C" __attribute__((visibility("default"))) int
gpuarr_cuda_selftest(int dev, char *msg, size_t n)
{
    const int64_t N = 5000;
    const unsigned blocks = 4, threads = 256;
    int32_t *x = NULL, *y = NULL;
    int64_t *partial = NULL;
    unsigned long long *total = NULL;
    int *maxv = NULL, *odd = NULL;
    int rc = 1;
    int32_t hx[N], hy[1024];
    int64_t hp[blocks];
    unsigned long long htotal = 0;
    int hmax = 0, hodd = 0;
    int64_t want = 0;
    cudaStream_t s;
    msg[0] = '\0';
    ST_TRY(ga_cuda_stream(dev, &s));
    ST_TRY(ga_cuda_alloc(dev, N * sizeof(int32_t), (void **)&x));
    ST_TRY(ga_cuda_alloc(dev, 1024 * sizeof(int32_t), (void **)&y));
    ST_TRY(ga_cuda_alloc(dev, blocks * sizeof(int64_t), (void **)&partial));
    ST_TRY(ga_cuda_alloc(dev, sizeof(*total), (void **)&total));
    ST_TRY(ga_cuda_alloc(dev, sizeof(int), (void **)&maxv));
    ST_TRY(ga_cuda_alloc(dev, sizeof(int), (void **)&odd));
    ST_TRY(CU(cudaMemsetAsync(total, 0, sizeof(*total), s)));
    ST_TRY(CU(cudaMemsetAsync(maxv, 0, sizeof(int), s)));
    ST_TRY(CU(cudaMemsetAsync(odd, 0, sizeof(int), s)));

    GA_LAUNCH(k_iota, blocks, threads, 0, s, N, x);
    ST_TRY(CU(cudaGetLastError()));
    GA_LAUNCH(k_block_sum, blocks, threads, 0, s, N, (const int32_t *)x, partial);
    ST_TRY(CU(cudaGetLastError()));
    GA_LAUNCH(k_atomic, blocks, threads, 0, s, N, (const int32_t *)x, total, maxv);
    ST_TRY(CU(cudaGetLastError()));
    GA_LAUNCH(k_reverse, 1024 / 128, 128, 128 * sizeof(int32_t), s, (const int32_t *)x, y,
              odd);
    ST_TRY(CU(cudaGetLastError()));

    ST_TRY(CU(cudaMemcpyAsync(hx, x, sizeof(hx), cudaMemcpyDeviceToHost, s)));
    ST_TRY(CU(cudaMemcpyAsync(hy, y, sizeof(hy), cudaMemcpyDeviceToHost, s)));
    ST_TRY(CU(cudaMemcpyAsync(hp, partial, sizeof(hp), cudaMemcpyDeviceToHost, s)));
    ST_TRY(CU(cudaMemcpyAsync(&htotal, total, sizeof(htotal), cudaMemcpyDeviceToHost, s)));
    ST_TRY(CU(cudaMemcpyAsync(&hmax, maxv, sizeof(hmax), cudaMemcpyDeviceToHost, s)));
    ST_TRY(CU(cudaMemcpyAsync(&hodd, odd, sizeof(hodd), cudaMemcpyDeviceToHost, s)));
    ST_TRY(CU(cudaStreamSynchronize(s)));

    for (int64_t i = 0; i < N; i++) {
        if (hx[i] != 3 * i + 1) {
            fail(msg, n, "grid-stride fill: wrong value");
            goto done;
        }
        want += hx[i];
    }
    if (hp[0] + hp[1] + hp[2] + hp[3] != want) {
        fail(msg, n, "shared-memory block sum: wrong total");
        goto done;
    }
    if (htotal != (unsigned long long)want || hmax != 3 * (N - 1) + 1) {
        fail(msg, n, "atomicAdd/atomicMax: wrong result");
        goto done;
    }
    for (int i = 0; i < 1024; i++) {
        int b = i / 128, t = i % 128;
        if (hy[i] != hx[b * 128 + 127 - t]) {
            fail(msg, n, "dynamic shared memory reverse: wrong value");
            goto done;
        }
    }
    if (hodd != 512) { /* 3i+1 is odd for even i: half of 1024 */
        fail(msg, n, "__syncthreads_count: wrong count");
        goto done;
    }
    rc = 0;
done:
    ga_cuda_free(dev, x, N * sizeof(int32_t));
    ga_cuda_free(dev, y, 1024 * sizeof(int32_t));
    ga_cuda_free(dev, partial, blocks * sizeof(int64_t));
    ga_cuda_free(dev, total, sizeof(*total));
    ga_cuda_free(dev, maxv, sizeof(int));
    ga_cuda_free(dev, odd, sizeof(int));
    return rc;
}

/* --- ordering and watchdog checks (tests/cuda/test_cuda_emulation.py) ------------------- */

namespace {

/* Serial work per element (on purpose): long enough for the host to run ahead. */
__global__ void
k_slow_fill(int64_t n, int64_t spin, int32_t *out)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        volatile int64_t acc = 0;
        for (int64_t k = 0; k < spin; k++) {
            acc = acc + k;
        }
        out[i] = (int32_t)(acc & 1) + 7;
    }
}

}  // namespace

/* Queue a slow kernel, then an asynchronous copy of 1 from a host buffer to the
 * device, then set the buffer to 2 and wait. Returns the value the device got: 2 when
 * the source is pinned (the copy read it when it ran, after the host wrote 2), 1 when
 * it is pageable (staged at the call). -1 on a CUDA failure. */
extern "C" __attribute__((visibility("default"))) int
gpuarr_cuda_selftest_pinned(int dev, int pageable)
{
    cudaStream_t s;
    int32_t *d = NULL, *h = NULL, local = 0, got = -1;
    if (ga_cuda_stream(dev, &s) != GA_OK || ga_cuda_alloc(dev, 1024 * sizeof(int32_t),
                                                          (void **)&d) != GA_OK) {
        return -1;
    }
    if (pageable) {
        h = &local;
    }
    else if (cudaMallocHost((void **)&h, sizeof(int32_t)) != cudaSuccess) {
        goto done;
    }
    GA_LAUNCH(k_slow_fill, 1, 32, 0, s, (int64_t)1024, (int64_t)2000, d);
    *h = 1;
    if (cudaMemcpyAsync(d, h, sizeof(int32_t), cudaMemcpyHostToDevice, s) != cudaSuccess) {
        goto done;
    }
    *h = 2; /* too early for a pinned buffer: the copy has not run yet */
    if (cudaMemcpyAsync(&local, d, sizeof(int32_t), cudaMemcpyDeviceToHost, s) ==
            cudaSuccess &&
        cudaStreamSynchronize(s) == cudaSuccess) {
        got = local;
    }
done:
    if (!pageable && h != NULL) {
        cudaFreeHost(h);
    }
    ga_cuda_free(dev, d, 1024 * sizeof(int32_t));
    return got;
}

/* k_slow_fill over 4096 elements with `spin` steps each, in `blocks` blocks of 64
 * threads, then a wait: 0 when the kernel finished; 1 and the message otherwise. */
static int
long_fill(int dev, unsigned blocks, int64_t spin, char *msg, size_t n)
{
    cudaStream_t s;
    int32_t *d = NULL;
    int rc = 1;
    msg[0] = '\0';
    ST_TRY(ga_cuda_stream(dev, &s));
    ST_TRY(ga_cuda_alloc(dev, 4096 * sizeof(int32_t), (void **)&d));
    GA_LAUNCH(k_slow_fill, blocks, 64, 0, s, (int64_t)4096, spin, d);
    ST_TRY(CU(cudaGetLastError()));
    ST_TRY(CU(cudaStreamSynchronize(s)));
    rc = 0;
done:
    ga_cuda_free(dev, d, 4096 * sizeof(int32_t));
    return rc;
}

/* A kernel that runs for seconds (serial spin in every thread): with
 * GPUARR_CUDA_EMULATE_WATCHDOG set below that, the wait reports cudaErrorLaunchTimeout. */
extern "C" __attribute__((visibility("default"))) int
gpuarr_cuda_selftest_long_kernel(int dev, char *msg, size_t n)
{
    return long_fill(dev, 64, 2000000, msg, n);
}

/* Less work in one block (a serial kernel): the emulator's watchdog checks between
 * blocks, so this is the case its end-of-launch check exists for. */
extern "C" __attribute__((visibility("default"))) int
gpuarr_cuda_selftest_long_one_block(int dev, char *msg, size_t n)
{
    return long_fill(dev, 1, 100000, msg, n);
}

/* --- memcheck (tests/cuda/test_cuda_memcheck.py) ------------------------------------------ */

namespace {

/* One thread copies byte i of p to byte 0 (i may lie past p's size: that is the test). */
__global__ void
k_read_byte(unsigned char *p, int64_t i)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        p[0] = p[i];
    }
}

/* The byte a kernel copies to p[0] from p[i], read back through pinned memory; -1 on
 * a CUDA failure. */
int
read_through_kernel(cudaStream_t s, unsigned char *p, int64_t i)
{
    unsigned char *h = NULL;
    int got = -1;
    GA_LAUNCH(k_read_byte, 1, 32, 0, s, p, i);
    if (cudaGetLastError() != cudaSuccess ||
        cudaMallocHost((void **)&h, 1) != cudaSuccess) {
        return -1;
    }
    if (cudaMemcpyAsync(h, p, 1, cudaMemcpyDeviceToHost, s) == cudaSuccess &&
        cudaStreamSynchronize(s) == cudaSuccess) {
        got = h[0]; /* pinned memory is host memory */
    }
    cudaFreeHost(h);
    return got;
}

/* Memcheck cases 4-6: a block of `first` bytes is filled with 0x5A and freed, and the
 * cache hands its start out again for `then` bytes:
 *   4: then is 3 MiB + 100 of a 64 MiB first: a 4 MiB piece split off the cached
 *      block; a kernel reads byte `then` (use-after-poison: past the request, inside
 *      the piece);
 *   5: the same split, but a kernel of the first owner, queued behind a 200 ms sleep,
 *      reads byte then + 100 (its own, in bounds) after the piece was handed out: the
 *      new extent is queued behind it, so nothing is reported; returns the byte;
 *   6: 100 bytes in the same 512-byte bin as a first 500: the cached block itself; a
 *      kernel reads byte 100 (use-after-poison). */
int
memcheck_reused(int dev, cudaStream_t s, int what)
{
    const size_t first = what == 6 ? 500 : (size_t)64 << 20;
    const size_t then = what == 6 ? 100 : ((size_t)3 << 20) + 100;
    unsigned char *old = NULL, *p = NULL;
    int got = -1;
    if (ga_cuda_alloc(dev, first, (void **)&old) != GA_OK) {
        return -1;
    }
    if (cudaMemsetAsync(old, 0x5A, first, s) != cudaSuccess) {
        ga_cuda_free(dev, old, first);
        return -1;
    }
    if (what == 5) {
#ifdef GA_CUDA_EMULATION
        ga_emu_stream_sleep(s, 200);
#endif
        GA_LAUNCH(k_read_byte, 1, 32, 0, s, old, (int64_t)(then + 100));
    }
    ga_cuda_free(dev, old, first);
    if (ga_cuda_alloc(dev, then, (void **)&p) != GA_OK) {
        return -1;
    }
    if (p != old) {
        got = -3;
    }
    else {
        got = read_through_kernel(s, p, (int64_t)(what == 5 ? 0 : then));
    }
    ga_cuda_free(dev, p, then);
    return got;
}

}  // namespace

/* Deliberate memory errors that the emulated plugin under AddressSanitizer must
 * report (each aborts the process there; the test runs it in a subprocess):
 *   0: host code reads a byte of a cudaMalloc block (use-after-poison: device memory
 *      is poisoned for the host);
 *   1: a kernel reads one byte past a 100-byte cudaMalloc block (heap-buffer-overflow,
 *      although cudaMalloc's start is 256-byte aligned);
 *   2: a kernel reads one byte past 100 bytes asked of the caching allocator, whose
 *      bin is 512 (use-after-poison);
 *   3: none: a kernel reads byte 99 of the same block, then the host reads a byte
 *      from a pinned buffer a copy filled; returns what it read (0x5A);
 *   4-6: blocks the caching allocator hands out again (memcheck_reused).
 * Returns the byte read when nothing was reported, -1 on a CUDA failure, -2 for a case
 * that would crash a real GPU's host (only the emulation runs 0), -3 when the
 * allocator did not hand out the block the case needs. */
extern "C" __attribute__((visibility("default"))) int
gpuarr_cuda_selftest_memcheck(int dev, int what)
{
    cudaStream_t s;
    unsigned char *p = NULL;
    int got = -1;
    bool cached = what == 2 || what == 3;
#ifndef GA_CUDA_EMULATION
    if (what == 0) {
        return -2;
    }
#endif
    if (ga_cuda_stream(dev, &s) != GA_OK || cudaSetDevice(dev) != cudaSuccess) {
        return -1;
    }
    if (what >= 4) {
        return memcheck_reused(dev, s, what);
    }
    if (cached ? ga_cuda_alloc(dev, 100, (void **)&p) != GA_OK
               : cudaMalloc((void **)&p, 100) != cudaSuccess) {
        return -1;
    }
    if (cudaMemsetAsync(p, 0x5A, 100, s) != cudaSuccess ||
        cudaStreamSynchronize(s) != cudaSuccess) {
        goto done;
    }
    if (what == 0) {
        got = ((volatile unsigned char *)p)[7]; /* the bug: p is a device pointer */
        goto done;
    }
    got = read_through_kernel(s, p, what == 3 ? 99 : 100);
done:
    if (cached) {
        ga_cuda_free(dev, p, 100);
    }
    else {
        cudaFree(p);
    }
    return got;
}

/* --- stream capture and graphs (tests/cuda/test_cuda_graphs.py) ------------------------ */

namespace {

__global__ void
k_add_one(int32_t *counter)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *counter += 1;
    }
}

}  // namespace

/* The capture rules the backend's graphs rely on, the same on a GPU and in the
 * emulation: captured work does not run until the graph is launched, a graph runs its
 * work at every launch, and a wait for the capturing stream fails and invalidates the
 * capture. 0 when every check passes; otherwise 1 and a message in msg. */
extern "C" __attribute__((visibility("default"))) int
gpuarr_cuda_selftest_graph(int dev, char *msg, size_t n)
{
    int rc = 1;
    int32_t *counter = NULL, host = -1;
    cudaStream_t s = NULL;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaError_t e;
    msg[0] = '\0';
    ST_TRY(CU(cudaSetDevice(dev)));
    ST_TRY(CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)));
    ST_TRY(ga_cuda_alloc(dev, sizeof(int32_t), (void **)&counter));
    ST_TRY(CU(cudaMemsetAsync(counter, 0, sizeof(int32_t), s)));
    ST_TRY(CU(cudaStreamSynchronize(s)));

    ST_TRY(CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed)));
    GA_LAUNCH(k_add_one, 1, 32, 0, s, counter);
    GA_LAUNCH(k_add_one, 1, 32, 0, s, counter);
    ST_TRY(CU(cudaStreamEndCapture(s, &graph)));
    ST_TRY(CU(cudaMemcpyAsync(&host, counter, sizeof(host), cudaMemcpyDeviceToHost, s)));
    ST_TRY(CU(cudaStreamSynchronize(s)));
    if (host != 0) {
        fail(msg, n, "captured kernels ran before the graph was launched");
        goto done;
    }
    ST_TRY(CU(cudaGraphInstantiate(&exec, graph, 0)));
    cudaGraphDestroy(graph);
    graph = NULL;
    for (int i = 0; i < 3; i++) {
        ST_TRY(CU(cudaGraphLaunch(exec, s)));
    }
    ST_TRY(CU(cudaMemcpyAsync(&host, counter, sizeof(host), cudaMemcpyDeviceToHost, s)));
    ST_TRY(CU(cudaStreamSynchronize(s)));
    if (host != 6) {
        snprintf(msg, n, "three launches of a two-kernel graph counted %d, not 6", host);
        goto done;
    }

    /* a host wait for the capturing stream cannot be captured */
    ST_TRY(CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed)));
    GA_LAUNCH(k_add_one, 1, 32, 0, s, counter);
    e = cudaStreamSynchronize(s);
    cudaGetLastError();
    if (e != cudaErrorStreamCaptureUnsupported) {
        snprintf(msg, n, "a wait for a capturing stream gave %s", cudaGetErrorName(e));
        cudaStreamEndCapture(s, &graph);
        goto done;
    }
    e = cudaStreamEndCapture(s, &graph);
    cudaGetLastError();
    if (e != cudaErrorStreamCaptureInvalidated || graph != NULL) {
        snprintf(msg, n, "the end of an invalidated capture gave %s", cudaGetErrorName(e));
        goto done;
    }
    ST_TRY(CU(cudaMemcpyAsync(&host, counter, sizeof(host), cudaMemcpyDeviceToHost, s)));
    ST_TRY(CU(cudaStreamSynchronize(s)));
    if (host != 6) {
        fail(msg, n, "an invalidated capture's kernel ran");
        goto done;
    }
    rc = 0;
done:
    if (exec != NULL) {
        cudaGraphExecDestroy(exec);
    }
    if (graph != NULL) {
        cudaGraphDestroy(graph);
    }
    if (s != NULL) {
        cudaStreamSynchronize(s);
        cudaStreamDestroy(s);
    }
    ga_cuda_free(dev, counter, sizeof(int32_t));
    return rc;
}
