/* ga_cuda_selftest_dlpack.cu: the CUDA calls a test's fake DLPack producer or consumer
 * makes on streams of its own (tests/cuda/test_dlpack_streams.py calls them through
 * ctypes). They use the plugin's runtime: on a GPU the real one, in the emulation
 * (test-only mode GPUARR_CUDA_EMULATE_DLPACK=cuda) the same emulated runtime as
 * gpuarr's backend, so the fake's streams really run beside gpuarr's.
 *
 * Streams are named as DLPack names them (1 legacy default, 2 per-thread default,
 * above 2 a cudaStream_t), and 0 means gpuarr's own stream of `dev`. Pointers are
 * integers. Each entry returns a cudaError_t: 0 on success.
 */
#include "ga_cuda.h"

#define GA_DL_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

cudaError_t
pick(int dev, uintptr_t s, cudaStream_t *out)
{
    cudaError_t e = cudaSetDevice(dev);
    if (e != cudaSuccess) {
        return e;
    }
    if (s == 0) {
        return ga_cuda_stream(dev, out) == GA_OK ? cudaSuccess : cudaErrorInvalidDevice;
    }
    *out = s == 1 ? cudaStreamLegacy : s == 2 ? cudaStreamPerThread : (cudaStream_t)s;
    return cudaSuccess;
}

#ifndef GA_CUDA_EMULATION
/* Busy for `cycles` clock cycles: one thread, so the GPU stays free for other
 * streams' work, as the emulation's ga_emu_stream_sleep leaves other streams free. */
__global__ void
k_sleep(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}
#endif

}  // namespace

/* A new non-blocking stream on `dev` (the fake library's own). */
GA_DL_EXPORT int
gpuarr_cuda_selftest_dl_stream(int dev, uintptr_t *out)
{
    cudaStream_t s;
    cudaError_t e = cudaSetDevice(dev);
    if (e == cudaSuccess) {
        e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    }
    if (e == cudaSuccess) {
        *out = (uintptr_t)s;
    }
    return e;
}

/* gpuarr's own stream of `dev`, to check what from_dlpack names. */
GA_DL_EXPORT int
gpuarr_cuda_selftest_dl_own_stream(int dev, uintptr_t *out)
{
    cudaStream_t s;
    cudaError_t e = pick(dev, 0, &s);
    if (e == cudaSuccess) {
        *out = (uintptr_t)s;
    }
    return e;
}

/* Keep stream `s` busy for about `ms` milliseconds, so what is queued after it is
 * reliably late. */
GA_DL_EXPORT int
gpuarr_cuda_selftest_dl_sleep(int dev, uintptr_t s, unsigned ms)
{
    cudaStream_t st;
    cudaError_t e = pick(dev, s, &st);
    if (e != cudaSuccess) {
        return e;
    }
#ifdef GA_CUDA_EMULATION
    return ga_emu_stream_sleep(st, ms);
#else
    GA_LAUNCH(k_sleep, 1, 1, 0, st, (long long)ms * 2000000LL); /* <= 2 GHz clocks */
    return cudaGetLastError();
#endif
}

GA_DL_EXPORT int
gpuarr_cuda_selftest_dl_alloc(int dev, size_t n, uintptr_t *out)
{
    void *p = NULL;
    cudaError_t e = cudaSetDevice(dev);
    if (e == cudaSuccess) {
        e = cudaMalloc(&p, n);
    }
    if (e == cudaSuccess) {
        *out = (uintptr_t)p;
    }
    return e;
}

GA_DL_EXPORT int
gpuarr_cuda_selftest_dl_free(int dev, uintptr_t p)
{
    cudaError_t e = cudaSetDevice(dev);
    return e == cudaSuccess ? cudaFree((void *)p) : e;
}

/* Queue a memset of `n` bytes at `p` on stream `s`. */
GA_DL_EXPORT int
gpuarr_cuda_selftest_dl_memset(int dev, uintptr_t s, uintptr_t p, int value, size_t n)
{
    cudaStream_t st;
    cudaError_t e = pick(dev, s, &st);
    return e == cudaSuccess ? cudaMemsetAsync((void *)p, value, n, st) : e;
}

/* Queue a copy of `n` bytes on stream `s` (host or device memory on either side). */
GA_DL_EXPORT int
gpuarr_cuda_selftest_dl_copy(int dev, uintptr_t s, uintptr_t dst, uintptr_t src,
                             size_t n)
{
    cudaStream_t st;
    cudaError_t e = pick(dev, s, &st);
    return e == cudaSuccess
               ? cudaMemcpyAsync((void *)dst, (const void *)src, n, cudaMemcpyDefault, st)
               : e;
}

GA_DL_EXPORT int
gpuarr_cuda_selftest_dl_sync(int dev, uintptr_t s)
{
    cudaStream_t st;
    cudaError_t e = pick(dev, s, &st);
    return e == cudaSuccess ? cudaStreamSynchronize(st) : e;
}

/* Order stream `waiter` after everything queued so far on stream `waited` (what a
 * DLPack producer does with the consumer's stream). */
GA_DL_EXPORT int
gpuarr_cuda_selftest_dl_wait(int dev, uintptr_t waiter, uintptr_t waited)
{
    cudaStream_t a, b;
    cudaEvent_t ev;
    cudaError_t e = pick(dev, waiter, &a);
    if (e == cudaSuccess) {
        e = pick(dev, waited, &b);
    }
    if (e == cudaSuccess) {
        e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    }
    if (e != cudaSuccess) {
        return e;
    }
    e = cudaEventRecord(ev, b);
    if (e == cudaSuccess) {
        e = cudaStreamWaitEvent(a, ev, 0);
    }
    cudaEventDestroy(ev); /* the wait keeps the recorded position */
    return e;
}
