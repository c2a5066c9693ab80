/* ga_cuda_emu_memory.cpp: emulated device and pinned memory, copies and memsets. */
#include <stdlib.h>
#include <unistd.h>

#include "ga_cuda_emu_internal.h"

using namespace ga_emu;

/* --- memory ----------------------------------------------------------------------- */

extern "C" {

cudaError_t
cudaMalloc(void **ptr, size_t size)
{
    GA_EMU_FAIL_POINT("cudaMalloc");
    cudaError_t refused = capture_forbids_malloc();
    if (refused != cudaSuccess) {
        return refused;
    }
    std::lock_guard<std::mutex> g(state_lock);
    ga_emu_device &d = devices[current_device];
    if (!valid_device(current_device)) {
        return fail(cudaErrorInvalidDevice);
    }
    if (size > memory_limit - d.used) {
        return fail(cudaErrorMemoryAllocation);
    }
    /* 256-byte aligned as cudaMalloc's blocks are (so vector accesses that a GPU
     * allows are aligned here too), and of the exact size (not rounded up), so
     * AddressSanitizer's redzone starts at the block's real end */
    void *p = NULL;
    if (posix_memalign(&p, 256, size ? size : 1) != 0) {
        p = NULL;
    }
    if (p == NULL) {
        return fail(cudaErrorMemoryAllocation);
    }
    /* like fresh device memory: not zero (catches reads of unwritten outputs) */
    memset(p, 0xA5, size);
    d.used += size;
    block_info &b = blocks[(uintptr_t)p] = block_info{size, current_device, {}};
    if (window_users == 0) {
        shadow_close((uintptr_t)p, b); /* the host may not touch it (memcheck) */
    }
    *ptr = p;
    return cudaSuccess;
}

cudaError_t
cudaFree(void *ptr)
{
    if (ptr == NULL) {
        return cudaSuccess;
    }
    int dev = where(ptr, 0);
    if (dev < 0) {
        return fail(cudaErrorInvalidDevicePointer);
    }
    /* as on a GPU, cudaFree waits for the device: queued work may still use the block
     * (and so it may not be called while a stream of the device captures) */
    cudaError_t fault = capture_forbids(nullptr, dev, "cudaFree");
    if (fault != cudaSuccess) {
        return fault;
    }
    fault = device_wait(dev);
    if (fault != cudaSuccess) {
        return fault;
    }
    std::lock_guard<std::mutex> g(state_lock);
    auto it = blocks.find((uintptr_t)ptr);
    if (it == blocks.end() || it->second.device < 0) {
        return fail(cudaErrorInvalidDevicePointer);
    }
    devices[it->second.device].used -= it->second.size;
#if GA_EMU_ASAN
    ASAN_UNPOISON_MEMORY_REGION(ptr, it->second.size); /* the allocator's again */
#endif
    blocks.erase(it);
    free(ptr);
    return cudaSuccess;
}

void
ga_emu_mem_extent(void *ptr, size_t size, size_t n, cudaStream_t stream)
{
    if (!GA_EMU_ASAN) {
        return; /* nothing reads the extents: no task to queue */
    }
    /* A task of its own on the stream, so that work queued before still runs under
     * the old extent: a cached block may still be read by its previous owner's work. */
    enqueue(resolve(stream), [ptr, size, n] {
        std::lock_guard<std::mutex> g(state_lock);
        uintptr_t start;
        block_info *b = find_block(ptr, size, &start);
        if (b == nullptr || b->device < 0) {
            return;
        }
        set_extent(*b, (uintptr_t)ptr - start, size, n < size ? n : size);
        if (window_users > 0) {
            shadow_open(start, *b);
        }
    });
}

cudaError_t
cudaHostAlloc(void **ptr, size_t size, unsigned flags)
{
    (void)flags;
    GA_EMU_FAIL_POINT("cudaHostAlloc");
    void *p = malloc(size ? size : 1);
    if (p == NULL) {
        return fail(cudaErrorMemoryAllocation);
    }
    std::lock_guard<std::mutex> g(state_lock);
    blocks[(uintptr_t)p] = block_info{size, -1, {}};
    *ptr = p;
    return cudaSuccess;
}

cudaError_t
cudaMallocHost(void **ptr, size_t size)
{
    return cudaHostAlloc(ptr, size, 0);
}

cudaError_t
cudaFreeHost(void *ptr)
{
    if (ptr == NULL) {
        return cudaSuccess;
    }
    std::lock_guard<std::mutex> g(state_lock);
    auto it = blocks.find((uintptr_t)ptr);
    if (it == blocks.end() || it->second.device != -1) {
        return fail(cudaErrorInvalidValue);
    }
    blocks.erase(it);
    free(ptr);
    return cudaSuccess;
}

/* A copy is legal when each side is where `kind` says (host = pageable or pinned).
 * It is queued on `stream`; a pageable source is staged first, and with `wait` (or a
 * pageable destination) the host waits for it, as the CUDA documentation describes
 * for cudaMemcpy and cudaMemcpyAsync. */
static cudaError_t
checked_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
             cudaStream_t stream, int wait, const char *what)
{
    if (n == 0) {
        return cudaSuccess;
    }
    ga_emu_stream *s = resolve(stream);
    if (fault_of(s->device) != cudaSuccess) { /* sticky, as on a GPU */
        return last_error;
    }
    int ds = where(dst, n), ss = where(src, n);
    int want_dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    int want_src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind == cudaMemcpyDefault) {
        want_dst_dev = ds >= 0;
        want_src_dev = ss >= 0;
    }
    if ((ds >= 0) != want_dst_dev || (ss >= 0) != want_src_dev) {
        snprintf(error_detail, sizeof(error_detail),
                 "%s: %s pointer is not %s memory (emulation check)", what,
                 (ds >= 0) != want_dst_dev ? "the destination" : "the source",
                 ((ds >= 0) != want_dst_dev ? want_dst_dev : want_src_dev) ? "device"
                                                                          : "host");
        return fail(cudaErrorIllegalAddress);
    }
    if (ss == -2) {
        /* pageable source: staged now, so the caller may reuse it at once */
        std::shared_ptr<std::vector<char>> staged =
            std::make_shared<std::vector<char>>((const char *)src, (const char *)src + n);
        enqueue(s, [dst, staged, n] {
            in_window w;
            memmove(dst, staged->data(), n);
        });
    }
    else {
        /* A slow DMA engine on request (GPUARR_CUDA_EMULATE_DMA_MS, test only): the
         * copy runs that much later, so a host that refills a pinned source before
         * its copy ran is caught (tests/cuda/test_cuda_copies.py). */
        unsigned delay = (unsigned)ga_emu_env_number("GPUARR_CUDA_EMULATE_DMA_MS", 0.0,
                                                     3600000.0, 1, 0.0);
        enqueue(s, [dst, src, n, delay] {
            if (delay != 0) {
                usleep((useconds_t)delay * 1000u);
            }
            in_window w;
            memmove(dst, src, n);
        });
    }
    if (wait || ds == -2) {
        return host_wait(s);
    }
    return cudaSuccess;
}

cudaError_t
cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    GA_EMU_FAIL_POINT("cudaMemcpy");
    return checked_copy(dst, src, n, kind, nullptr, 1, "cudaMemcpy");
}

cudaError_t
cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                cudaStream_t stream)
{
    GA_EMU_FAIL_POINT("cudaMemcpyAsync");
    return checked_copy(dst, src, n, kind, stream, 0, "cudaMemcpyAsync");
}

cudaError_t
cudaMemcpyPeerAsync(void *dst, int dst_dev, const void *src, int src_dev, size_t n,
                    cudaStream_t stream)
{
    GA_EMU_FAIL_POINT("cudaMemcpyPeerAsync");
    if (!valid_device(dst_dev) || !valid_device(src_dev)) {
        return fail(cudaErrorInvalidDevice);
    }
    if (n == 0) {
        return cudaSuccess;
    }
    if (where(dst, n) != dst_dev || where(src, n) != src_dev) {
        snprintf(error_detail, sizeof(error_detail),
                 "cudaMemcpyPeerAsync: a pointer is not memory of the device named with it "
                 "(emulation check)");
        return fail(cudaErrorIllegalAddress);
    }
    enqueue(resolve(stream), [dst, src, n] {
        in_window w;
        memmove(dst, src, n);
    });
    return cudaSuccess;
}

cudaError_t
cudaMemset(void *ptr, int value, size_t n)
{
    GA_EMU_FAIL_POINT("cudaMemset");
    cudaError_t e = cudaMemsetAsync(ptr, value, n, nullptr);
    return e != cudaSuccess ? e : host_wait(resolve(nullptr));
}

cudaError_t
cudaMemsetAsync(void *ptr, int value, size_t n, cudaStream_t stream)
{
    GA_EMU_FAIL_POINT("cudaMemsetAsync");
    if (n != 0 && where(ptr, n) < 0) {
        return fail(cudaErrorInvalidValue);
    }
    enqueue(resolve(stream), [ptr, value, n] {
        in_window w;
        memset(ptr, value, n);
    });
    return cudaSuccess;
}

}  // extern "C"
