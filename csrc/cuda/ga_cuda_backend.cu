/* ga_cuda_backend.cu: the plugin's table, devices, streams, caching allocator, copies.
 *
 * Every operation on device d is queued on d's one non-blocking stream and returns at
 * once; copy_d2h and synchronize wait. Because all of a device's work is in one stream,
 * a block freed on it can go straight back to the cache and be handed to the next
 * allocation: later work that writes it is queued after earlier work that read it.
 * Copies between devices are the exception, and are ordered against both streams with
 * events (copy_peer); so are non-blocking copies to the host, which run on the
 * device's second stream, its copy queue (copy_d2h_async, wait_copies).
 *
 * Per-device state is allocated once and never destroyed: free() must work during
 * interpreter shutdown, after static destructors may have run.
 *
 * A captured step becomes a CUDA graph (ga_cuda_graphs.cu): while this thread
 * captures, ga_cuda_stream hands out the capture's stream, cuda_free leaves blocks to
 * the graph, and launches are counted as the graph's nodes.
 */
#include "ga_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#define GA_EXPORT extern "C" __attribute__((visibility("default")))

/* Emulated plugin under AddressSanitizer: device work may touch only the bytes a
 * block was asked for, so a kernel that runs past them is reported, not hidden by
 * rounding or by the rest of a split block. The emulator owns the shadow of device
 * memory (it poisons all of it for the host between tasks), so the backend tells it
 * the extent instead of poisoning, in stream order (see cuda_alloc). */
#ifdef GA_CUDA_EMULATION
#define GA_EXTENT(p, size, n, stream) ga_emu_mem_extent((p), (size), (n), (stream))
#else
#define GA_EXTENT(p, size, n, stream) \
    ((void)(p), (void)(size), (void)(n), (void)(stream))
#endif

namespace {

/* Bins: 512-byte steps up to 1 MiB (small arrays, scratch), 2 MiB steps above (few
 * large arrays; rounding wastes less than 2 MiB of each): "caching allocator" below. */
const size_t small_step = 512;
const size_t small_limit = (size_t)1 << 20;
const size_t large_step = (size_t)2 << 20;

/* Device-to-host copies of at least stage_min bytes go through two pinned buffers of
 * stage_chunk bytes, so the DMA of chunk i+1 overlaps the host memcpy of chunk i. */
const size_t stage_chunk = (size_t)4 << 20;
const size_t stage_min = (size_t)1 << 20;

/* The core's hooks that let other Python threads run while the host waits for a
 * device (ga_backend.set_wait_hooks). */
void *(*wait_begin)(void) = nullptr;
void (*wait_end)(void *) = nullptr;

/* For the lifetime of this object the host is only waiting: declare it before any
 * lock_guard, so the lock is released before the hooks take the GIL back (a thread
 * holding the GIL may be waiting for that lock). */
struct waiting_host {
    void *token;
    waiting_host() : token(wait_begin != nullptr ? wait_begin() : nullptr) {}
    ~waiting_host()
    {
        if (wait_end != nullptr) {
            wait_end(token);
        }
    }
    waiting_host(const waiting_host &) = delete;
    waiting_host &operator=(const waiting_host &) = delete;
};

void
cuda_set_wait_hooks(void *(*begin)(void), void (*end)(void *))
{
    wait_begin = begin;
    wait_end = end;
}

/* Make `dev` the calling thread's current device only when it is not already:
 * cudaGetDevice reads the runtime's per-thread state, cudaSetDevice may go to the
 * driver, and every operation names its device. Asked each time rather than cached,
 * because other code in the process (cuBLAS, a DLPack partner) may change it. */
cudaError_t
use_device(int dev)
{
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur == dev) {
        return cudaSuccess;
    }
    return cudaSetDevice(dev);
}

/* A host wait cannot be captured (ga_cuda_graphs.cu): on a GPU the wait would return
 * at once, before the graph ever ran, and the host would read stale memory. */
int
not_capturing(int dev, const char *what)
{
    int capturing = ga_cuda_capture_device();
    if (capturing < 0) {
        return GA_OK;
    }
    return ga_error(GA_ERR_RUNTIME,
                    "%s on gpu(%d) while gpu(%d)'s work is captured into a CUDA graph: a "
                    "captured step cannot wait for its device",
                    what, dev, capturing);
}

/* A block of a large bin: a whole cudaMalloc allocation (a segment) or a piece of
 * one. The pieces of a segment tile it, so in address order a piece's neighbours in
 * the same segment are the entries before and after it. */
struct large_block {
    char *segment; /* the cudaMalloc allocation it lies in */
    size_t size;   /* a multiple of large_step */
    bool free;     /* cached (whether or not it is in large_free) */
};

struct device_state {
    /* the block cache and the statistics; never held while the host waits for the
     * device (another thread's allocation would wait with it) */
    std::mutex lock;
    cudaStream_t stream;
    cudaEvent_t order; /* recorded on `stream` for cross-device ordering */
    cudaEvent_t handoff; /* recorded on `stream` for another library's stream */
    cudaEvent_t taken_back; /* recorded on another library's stream for `stream` */
    /* the copy queue (ABI 12): non-blocking copies to the host run on `copies`, after
     * `to_copies` (recorded on `stream`), and `stream` waits for `from_copies`
     * (recorded on `copies`) before it writes or reuses a block they read */
    cudaStream_t copies;
    cudaEvent_t to_copies, from_copies;
    ga_device_props props;
    /* the cache ("caching allocator" below) */
    std::unordered_map<size_t, std::vector<void *>> small_free; /* bin -> free blocks */
    std::map<char *, large_block> large; /* every large block (live, free) by address */
    std::set<std::pair<size_t, char *>> large_free; /* free large blocks: best fit */
    size_t cached_bytes; /* free bytes, small and large */
    /* reserved_bytes: cudaMalloc'd and not yet cudaFree'd (live + cached) */
    ga_memory_stats stats;
    std::mutex pinned_lock; /* the two staging buffers, while a copy uses them */
    void *pinned[2];
    cudaEvent_t pinned_ready[2]; /* recorded after the DMA that last used each */
    int pinned_state; /* 0 not tried, 1 ready, -1 unavailable */
    signed char peer[GA_MAX_DEVICES]; /* 0 unknown, 1 enabled, -1 not possible */
    /* ga_kernel_counters, bumped without the lock (launchers do not take it) */
    std::atomic<int64_t> launches, syncs, h2d, d2h, max_grid_blocks;
};

struct {
    int emulate;
    int probed;
    int count;
    char reason[512];
    std::mutex lock;
    device_state *devs[GA_MAX_DEVICES];
} G;

void
version_str(int v, char *buf, size_t n)
{
    snprintf(buf, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* Find out once whether there are devices, and if not, why (README.md, "Installing on a
 * machine with CUDA"). */
void
probe(void)
{
    std::lock_guard<std::mutex> g(G.lock);
    if (G.probed) {
        return;
    }
    G.probed = 1;
    G.count = 0;
#ifdef GA_CUDA_EMULATION
    if (G.emulate <= 0) {
        snprintf(G.reason, sizeof(G.reason),
                 "the emulated CUDA plugin was loaded with 0 devices");
        return;
    }
#else
    if (G.emulate > 0) {
        snprintf(G.reason, sizeof(G.reason),
                 "libgpuarr_cuda.so runs real GPUs only; emulation needs "
                 "libgpuarr_cuda_emu.so (build with -DGPUARR_CUDA_EMU=ON)");
        return;
    }
#endif
    int driver = 0, runtime = 0, n = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    cudaError_t err = cudaGetDeviceCount(&n); /* n is not written on failure */
    cudaGetLastError();
    if (err == cudaSuccess && n > 0) {
        G.count = n < GA_MAX_DEVICES ? n : GA_MAX_DEVICES;
        G.reason[0] = '\0';
        return;
    }
    char dv[32], rv[32];
    version_str(driver, dv, sizeof(dv));
    version_str(runtime, rv, sizeof(rv));
    if (err == cudaErrorInsufficientDriver && driver == 0) {
        snprintf(G.reason, sizeof(G.reason),
                 "no NVIDIA driver (the CUDA runtime answers cudaErrorInsufficientDriver "
                 "and driver version 0); install the NVIDIA driver to use a GPU");
    }
    else if (err == cudaErrorInsufficientDriver) {
        /* The runtime is linked statically: it needs the driver of its major version
         * (CUDA 12: R525, with minor version compatibility; CUDA 13: R580). */
        const char *need = runtime >= 13000 ? "580" : "525";
        snprintf(G.reason, sizeof(G.reason),
                 "the NVIDIA driver is too old: it supports CUDA %s, but this gpuarr's "
                 "CUDA plugin was built with CUDA %s, which needs driver %s or newer. "
                 "Update the NVIDIA driver, or rebuild gpuarr with a CUDA 12 toolkit "
                 "(it runs on drivers from 525 on)",
                 dv, rv, need);
    }
    else if (err == cudaErrorStubLibrary) {
        snprintf(G.reason, sizeof(G.reason),
                 "no NVIDIA driver (only the CUDA toolkit's stub libcuda.so was found: "
                 "cudaErrorStubLibrary)");
    }
    else if (err == cudaErrorNoDevice || err == cudaSuccess) {
        snprintf(G.reason, sizeof(G.reason),
                 "no CUDA device (the NVIDIA driver %s found no GPU)", dv);
    }
    else {
        snprintf(G.reason, sizeof(G.reason), "CUDA initialisation failed: %s (%s)",
                 cudaGetErrorName(err), cudaGetErrorString(err));
    }
}

int
check_device(int dev)
{
    probe();
    if (dev < 0 || dev >= G.count) {
        return ga_error(GA_ERR_DEVICE, "gpu(%d) does not exist (this process has %d CUDA "
                        "devices)", dev, G.count);
    }
    return GA_OK;
}

/* The device's state, made at its first use: properties, stream, event. */
int
state(int dev, device_state **out)
{
    GA_TRY(check_device(dev));
    device_state *d = __atomic_load_n(&G.devs[dev], __ATOMIC_ACQUIRE);
    if (d != NULL) {
        *out = d;
        return GA_OK;
    }
    std::lock_guard<std::mutex> g(G.lock);
    if (G.devs[dev] == NULL) {
        d = new (std::nothrow) device_state();
        if (d == NULL) {
            return ga_error(GA_ERR_NOMEM, "out of host memory for the state of gpu(%d)", dev);
        }
        cudaDeviceProp p;
        GA_CUDA_TRY(use_device(dev));
        GA_CUDA_TRY(cudaGetDeviceProperties(&p, dev));
        /* the runtime's name is up to 255 characters; ours is 127 */
        size_t len = strnlen(p.name, sizeof(d->props.name) - 1);
        memcpy(d->props.name, p.name, len);
        d->props.name[len] = '\0';
        d->props.total_memory = p.totalGlobalMem;
        d->props.cc_major = p.major;
        d->props.cc_minor = p.minor;
        d->props.multiprocessors = p.multiProcessorCount;
        GA_CUDA_TRY(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
        GA_CUDA_TRY(cudaEventCreateWithFlags(&d->order, cudaEventDisableTiming));
        GA_CUDA_TRY(cudaEventCreateWithFlags(&d->handoff, cudaEventDisableTiming));
        GA_CUDA_TRY(cudaEventCreateWithFlags(&d->taken_back, cudaEventDisableTiming));
        GA_CUDA_TRY(cudaStreamCreateWithFlags(&d->copies, cudaStreamNonBlocking));
        GA_CUDA_TRY(cudaEventCreateWithFlags(&d->to_copies, cudaEventDisableTiming));
        GA_CUDA_TRY(cudaEventCreateWithFlags(&d->from_copies, cudaEventDisableTiming));
        d->stats.total_bytes = p.totalGlobalMem;
        __atomic_store_n(&G.devs[dev], d, __ATOMIC_RELEASE);
    }
    *out = G.devs[dev];
    return GA_OK;
}

/* --- caching allocator ------------------------------------------------------------ *
 *
 * cudaMalloc is slow and cudaFree waits for the device, so freed blocks are kept per
 * device and handed out again; steady loops never reach the driver. Stream order
 * makes reuse immediate (the file's header), and the bookkeeping lives in host
 * memory, outside the blocks, so queued work never sees it.
 *
 * Small requests (up to 1 MiB) are rounded to 512-byte bins; each is a cudaMalloc
 * allocation of its own, kept in an exact-size free list. They are many, of a few
 * sizes, and each wastes less than 512 bytes.
 *
 * Large requests are rounded to 2 MiB and served best fit from the cached large
 * blocks: the smallest free one that is big enough, split when it is bigger, the rest
 * staying cached (as PyTorch's caching allocator does). Exact bins alone would let a
 * freed 64 MiB block serve only 64 MiB requests: a loop over shrinking or varying
 * sizes would cudaMalloc each size anew and hold all of them. A freed piece merges
 * with the free pieces beside it in its segment (the cudaMalloc allocation it was cut
 * from), so a segment split once can serve its whole size again. All large sizes are
 * multiples of 2 MiB, and so is every piece. A cache miss calls cudaMalloc for
 * exactly the bin, not for a bigger segment kept for later pieces.
 *
 * Giving the cache back (empty_cache, or the retry after cudaMalloc ran out of
 * memory) frees the small blocks and the segments that are wholly free: cudaFree
 * takes whole allocations only, so a segment with a live piece stays, and its free
 * pieces stay cached. */

size_t
bin_size(size_t n)
{
    if (n == 0) {
        n = 1;
    }
    if (n <= small_limit) {
        return (n + small_step - 1) / small_step * small_step;
    }
    if (n > SIZE_MAX - large_step) {
        return 0;
    }
    return (n + large_step - 1) / large_step * large_step;
}

/* Index free large block `b` for best fit. Without host memory for the entry it stays
 * free but unindexed: merged when a neighbour is freed, given back with its segment. */
void
index_free(device_state *d, std::map<char *, large_block>::iterator b)
{
    try {
        d->large_free.emplace(b->second.size, b->first);
    }
    catch (...) {
    }
}

/* A cached block for `bin` bytes, or NULL; *size is the block's size (more than a
 * large bin when there was no host memory to record a split). Caller holds d->lock. */
char *
take_cached(device_state *d, size_t bin, size_t *size)
{
    if (bin <= small_limit) {
        auto it = d->small_free.find(bin);
        if (it == d->small_free.end() || it->second.empty()) {
            return NULL;
        }
        char *p = (char *)it->second.back();
        it->second.pop_back();
        d->cached_bytes -= bin;
        *size = bin;
        return p;
    }
    /* best fit: the smallest free block of at least bin bytes, the lowest first */
    auto fit = d->large_free.lower_bound({bin, (char *)NULL});
    if (fit == d->large_free.end()) {
        return NULL;
    }
    auto b = d->large.find(fit->second);
    d->large_free.erase(fit);
    b->second.free = false;
    if (b->second.size > bin) {
        /* split: the tail stays cached, a free piece of the same segment */
        try {
            auto rest = d->large.emplace_hint(
                std::next(b), b->first + bin,
                large_block{b->second.segment, b->second.size - bin, true});
            b->second.size = bin;
            index_free(d, rest);
        }
        catch (...) {
            /* no host memory to record the tail: hand out the whole block */
        }
    }
    d->cached_bytes -= b->second.size;
    *size = b->second.size;
    return b->first;
}

/* Cache large block `b` again, merged with the free pieces beside it in its segment.
 * Caller holds d->lock. */
void
free_large(device_state *d, std::map<char *, large_block>::iterator b)
{
    b->second.free = true;
    d->cached_bytes += b->second.size;
    auto next = std::next(b);
    if (next != d->large.end() && next->second.free &&
        next->second.segment == b->second.segment) {
        d->large_free.erase({next->second.size, next->first});
        b->second.size += next->second.size;
        d->large.erase(next);
    }
    if (b != d->large.begin()) {
        auto prev = std::prev(b);
        if (prev->second.free && prev->second.segment == b->second.segment) {
            d->large_free.erase({prev->second.size, prev->first});
            prev->second.size += b->second.size;
            d->large.erase(b);
            b = prev;
        }
    }
    index_free(d, b);
}

/* Give the cached small blocks and the wholly free large segments of `d` back to the
 * driver. The caller does not hold d->lock: the blocks are taken out under it (moving
 * map nodes, which needs no host memory), and the wait for the device and the frees
 * happen without it, so other threads' allocations go on meanwhile. */
int
release_cache(int dev, device_state *d)
{
    std::unordered_map<size_t, std::vector<void *>> small;
    std::map<char *, large_block> segments;
    {
        std::lock_guard<std::mutex> g(d->lock);
        small.swap(d->small_free);
        for (auto &bin : small) {
            d->cached_bytes -= bin.first * bin.second.size();
        }
        for (auto b = d->large.begin(); b != d->large.end();) {
            auto next = std::next(b);
            /* merged eagerly, a wholly free segment is one free block at its start */
            if (b->second.free && b->first == b->second.segment &&
                (next == d->large.end() || next->second.segment != b->second.segment)) {
                d->large_free.erase({b->second.size, b->first});
                d->cached_bytes -= b->second.size;
                segments.insert(d->large.extract(b));
            }
            b = next;
        }
    }
    /* cudaFree waits for the device anyway; waiting here first makes it explicit that
     * no queued work still uses a cached block */
    GA_CUDA_TRY(use_device(dev));
    d->syncs++;
    cudaError_t first = cudaStreamSynchronize(d->stream);
    size_t freed = 0;
    for (auto &bin : small) {
        for (void *p : bin.second) {
            cudaError_t e = cudaFree(p);
            if (e != cudaSuccess && first == cudaSuccess) {
                first = e;
            }
            freed += bin.first;
        }
    }
    for (auto &seg : segments) {
        cudaError_t e = cudaFree(seg.first);
        if (e != cudaSuccess && first == cudaSuccess) {
            first = e;
        }
        freed += seg.second.size;
    }
    {
        std::lock_guard<std::mutex> g(d->lock);
        d->stats.reserved_bytes -= freed;
    }
    GA_CUDA_TRY(first);
    return GA_OK;
}

void
human(size_t b, char *buf, size_t n)
{
    if (b >= ((size_t)1 << 30)) {
        snprintf(buf, n, "%.2f GiB", (double)b / (double)((size_t)1 << 30));
    }
    else if (b >= ((size_t)1 << 20)) {
        snprintf(buf, n, "%.2f MiB", (double)b / (double)((size_t)1 << 20));
    }
    else {
        snprintf(buf, n, "%zu bytes", b);
    }
}

/* --- the table's entries --------------------------------------------------------- */

int
cuda_device_count(int *count)
{
    probe();
    *count = G.count;
    return GA_OK;
}

int
cuda_device_props(int dev, ga_device_props *out)
{
    device_state *d;
    GA_TRY(state(dev, &d));
    *out = d->props;
    return GA_OK;
}

/* A wait brings the failure slots' outcomes back with it (ga_cuda_faults.cu): their
 * copy is queued before the wait and read after it. The whole device: its stream and
 * its copy stream (one wait in the counters). */
int
cuda_synchronize(int dev)
{
    device_state *d;
    GA_TRY(not_capturing(dev, "a wait for the device"));
    GA_TRY(state(dev, &d));
    waiting_host w;
    GA_CUDA_TRY(use_device(dev));
    GA_TRY(ga_cuda_fault_snapshot(dev, d->stream));
    d->syncs++;
    GA_CUDA_TRY(cudaStreamSynchronize(d->stream));
    GA_CUDA_TRY(cudaStreamSynchronize(d->copies));
    return ga_cuda_fault_harvest(dev, d->stream);
}

/* A cached block when one fits (take_cached), else a cudaMalloc allocation of exactly
 * the bin. */
int
cuda_alloc(int dev, size_t nbytes, void **ptr)
{
    device_state *d;
    GA_TRY(state(dev, &d));
    size_t bin = bin_size(nbytes), size = bin;
    std::unique_lock<std::mutex> g(d->lock);
    char *p = bin == 0 ? NULL : take_cached(d, bin, &size);
    if (p == NULL) {
        void *fresh = NULL;
        cudaError_t err = bin == 0 ? cudaErrorMemoryAllocation : use_device(dev);
        if (err == cudaSuccess) {
            err = cudaMalloc(&fresh, bin);
        }
        if (err == cudaErrorMemoryAllocation && bin != 0 && d->cached_bytes > 0) {
            /* the cache holds memory that does not fit: give it back, try once more */
            cudaGetLastError();
            g.unlock();
            GA_TRY(release_cache(dev, d));
            g.lock();
            err = cudaMalloc(&fresh, bin);
        }
        if (err == cudaErrorMemoryAllocation) {
            cudaGetLastError();
            char want[32], used[32], total[32];
            human(nbytes, want, sizeof(want));
            human(d->stats.allocated_bytes, used, sizeof(used));
            human(d->props.total_memory, total, sizeof(total));
            return ga_error(GA_ERR_OOM_DEVICE,
                            "out of memory on gpu(%d): cannot allocate %s (%zu bytes); "
                            "%s in use by arrays on gpu(%d), %zu bytes cached (free "
                            "parts of blocks that arrays still use; the rest was given "
                            "back before retrying), %s in total. Delete arrays you no "
                            "longer need (del x) or use smaller batches",
                            dev, want, nbytes, used, dev, d->cached_bytes, total);
        }
        GA_CUDA_TRY(err);
        d->stats.reserved_bytes += bin;
        d->stats.alloc_calls++;
        p = (char *)fresh;
        if (bin > small_limit) {
            try {
                d->large.emplace(p, large_block{p, bin, false});
            }
            catch (...) {
                g.unlock(); /* cudaFree waits for the device */
                cudaFree(p);
                cudaGetLastError();
                g.lock();
                d->stats.reserved_bytes -= bin;
                return ga_error(GA_ERR_NOMEM, "out of host memory for the record of a "
                                "%zu-byte block on gpu(%d)", bin, dev);
            }
        }
    }
    /* Device work may touch only the bytes asked for (emulated memcheck). A cached
     * block may still be read by work queued before it was freed (stream order makes
     * that safe on a GPU), under its old extent, so the new one is queued on the
     * stream rather than set now. Every block handed out gets one: a freed block
     * needs none. */
    GA_EXTENT(p, size, nbytes, d->stream);
    d->stats.allocated_bytes += nbytes;
    if (d->stats.allocated_bytes > d->stats.peak_allocated_bytes) {
        d->stats.peak_allocated_bytes = d->stats.allocated_bytes;
    }
    *ptr = p;
    return GA_OK;
}

void
cuda_free(int dev, void *ptr, size_t nbytes)
{
    if (ptr == NULL || dev < 0 || dev >= GA_MAX_DEVICES || G.devs[dev] == NULL) {
        return;
    }
    if (ga_cuda_graph_keeps(dev, ptr, nbytes)) { /* a captured kernel's block */
        return;
    }
    device_state *d = G.devs[dev];
    size_t bin = bin_size(nbytes);
    std::unique_lock<std::mutex> g(d->lock);
    d->stats.allocated_bytes -= nbytes;
    if (bin > small_limit) {
        /* its record knows its size: a piece of a segment, or more than the bin */
        auto b = d->large.find((char *)ptr);
        if (b != d->large.end() && !b->second.free) {
            free_large(d, b);
        }
        return;
    }
    try {
        d->small_free[bin].push_back(ptr);
        d->cached_bytes += bin;
    }
    catch (...) {
        /* no host memory for the list: give the block back instead (cudaFree waits
         * for the device, so not under the lock) */
        g.unlock();
        cudaFree(ptr);
        cudaGetLastError();
        g.lock();
        d->stats.reserved_bytes -= bin;
    }
}

int
cuda_memory_stats(int dev, ga_memory_stats *out)
{
    device_state *d;
    GA_TRY(state(dev, &d));
    std::lock_guard<std::mutex> g(d->lock);
    *out = d->stats;
    return GA_OK;
}

int
cuda_empty_cache(int dev)
{
    device_state *d;
    GA_TRY(state(dev, &d));
    return release_cache(dev, d);
}


int
pinned_buffers(int dev, device_state *d)
{
    if (d->pinned_state == 0) {
        d->pinned_state = -1;
        for (int i = 0; i < 2; i++) {
            if (cudaHostAlloc(&d->pinned[i], stage_chunk, cudaHostAllocDefault) != cudaSuccess ||
                cudaEventCreateWithFlags(&d->pinned_ready[i], cudaEventDisableTiming) !=
                    cudaSuccess) {
                cudaGetLastError(); /* fall back to the direct copy */
                return 0;
            }
        }
        d->pinned_state = 1;
    }
    return d->pinned_state == 1;
}

/* Host to device. From pageable memory the runtime stages the source itself before
 * cudaMemcpyAsync returns (so the caller may free `src` at once), at pageable speed
 * and without overlap. A large copy onto an idle stream goes through the two pinned
 * buffers instead: the host fills one while the DMA engine drains the other, each
 * refilled only after its previous DMA finished (pinned_ready). The waits are for
 * this copy's own chunks: a busy stream (queued kernels) takes the runtime's path, so
 * an upload never waits for earlier work. */
int
cuda_copy_h2d(int dev, void *dst, const void *src, size_t nbytes)
{
    device_state *d;
    cudaStream_t s = NULL;
    GA_TRY(ga_cuda_stream(dev, &s));
    GA_TRY(state(dev, &d));
    d->h2d++;
    if (nbytes >= stage_min) {
        std::unique_lock<std::mutex> pl(d->pinned_lock, std::try_to_lock);
        if (pl.owns_lock() && pinned_buffers(dev, d) && cudaStreamQuery(s) == cudaSuccess) {
            const char *from = (const char *)src;
            char *to = (char *)dst;
            for (size_t off = 0, i = 0; off < nbytes; off += stage_chunk, i++) {
                size_t len = nbytes - off < stage_chunk ? nbytes - off : stage_chunk;
                GA_CUDA_TRY(cudaEventSynchronize(d->pinned_ready[i % 2]));
                memcpy(d->pinned[i % 2], from + off, len);
                GA_CUDA_TRY(cudaMemcpyAsync(to + off, d->pinned[i % 2], len,
                                            cudaMemcpyHostToDevice, s));
                GA_CUDA_TRY(cudaEventRecord(d->pinned_ready[i % 2], s));
            }
            return GA_OK;
        }
    }
    GA_CUDA_TRY(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, s));
    return GA_OK;
}

static int
copy_d2h_wait(int dev, void *dst, const void *src, size_t nbytes)
{
    device_state *d;
    cudaStream_t s = NULL;
    GA_TRY(not_capturing(dev, "a copy to the host"));
    GA_TRY(ga_cuda_stream(dev, &s));
    GA_TRY(state(dev, &d));
    waiting_host w; /* before the lock: see waiting_host */
    std::lock_guard<std::mutex> g(d->pinned_lock);
    d->d2h++;
    d->syncs++; /* one host wait, however many chunks it takes */
    if (nbytes < stage_min || !pinned_buffers(dev, d)) {
        GA_CUDA_TRY(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, s));
        GA_CUDA_TRY(cudaStreamSynchronize(s));
        return GA_OK;
    }
    /* Chunk i goes to pinned[i % 2]; while it is in flight the host copies chunk i-1
     * out of the other buffer. A buffer is refilled only after its previous chunk was
     * copied out (the host did that in the previous iteration). */
    const char *from = (const char *)src;
    char *to = (char *)dst;
    size_t nchunks = (nbytes + stage_chunk - 1) / stage_chunk;
    for (size_t i = 0; i <= nchunks; i++) {
        if (i < nchunks) {
            size_t off = i * stage_chunk;
            size_t len = nbytes - off < stage_chunk ? nbytes - off : stage_chunk;
            GA_CUDA_TRY(cudaMemcpyAsync(d->pinned[i % 2], from + off, len,
                                        cudaMemcpyDeviceToHost, s));
            GA_CUDA_TRY(cudaEventRecord(d->pinned_ready[i % 2], s));
        }
        if (i > 0) {
            size_t j = i - 1;
            size_t off = j * stage_chunk;
            size_t len = nbytes - off < stage_chunk ? nbytes - off : stage_chunk;
            GA_CUDA_TRY(cudaEventSynchronize(d->pinned_ready[j % 2]));
            memcpy(to + off, d->pinned[j % 2], len);
        }
    }
    return GA_OK;
}

/* The copy waits for the stream, so the failure slots' outcomes come back with it:
 * their copy is queued before the data's, and read once the data arrived. */
int
cuda_copy_d2h(int dev, void *dst, const void *src, size_t nbytes)
{
    cudaStream_t s = NULL;
    GA_TRY(ga_cuda_stream(dev, &s));
    GA_TRY(ga_cuda_fault_snapshot(dev, s));
    GA_TRY(copy_d2h_wait(dev, dst, src, nbytes));
    return ga_cuda_fault_harvest(dev, s);
}

/* The outcomes whose copies have completed, with no wait (ga_backend.fault_poll). */
int
cuda_fault_poll(int dev)
{
    cudaStream_t s = NULL;
    GA_TRY(ga_cuda_stream(dev, &s));
    return ga_cuda_fault_harvest(dev, s);
}

int
cuda_copy_d2d(int dev, void *dst, const void *src, size_t nbytes)
{
    cudaStream_t s = NULL;
    GA_TRY(ga_cuda_stream(dev, &s));
    GA_CUDA_TRY(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, s));
    return GA_OK;
}

/* Direct access from `dev` to `peer`'s memory when the hardware allows it (NVLink or
 * PCIe P2P); otherwise cudaMemcpyPeerAsync stages through the host by itself. */
void
enable_peer(int dev, device_state *d, int peer)
{
    if (d->peer[peer] != 0) {
        return;
    }
    int can = 0;
    d->peer[peer] = -1;
    if (cudaDeviceCanAccessPeer(&can, dev, peer) == cudaSuccess && can &&
        use_device(dev) == cudaSuccess) {
        cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
        if (e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled) {
            d->peer[peer] = 1;
        }
    }
    cudaGetLastError(); /* AlreadyEnabled would otherwise fail the next launch check */
}

int
cuda_copy_peer(int dst_dev, void *dst, int src_dev, const void *src, size_t nbytes)
{
    if (dst_dev == src_dev) {
        return cuda_copy_d2d(dst_dev, dst, src, nbytes);
    }
    device_state *dd, *sd;
    GA_TRY(state(dst_dev, &dd));
    GA_TRY(state(src_dev, &sd));
    enable_peer(dst_dev, dd, src_dev);
    /* The copy runs on the destination's stream, after everything queued so far on
     * the source's stream (which may still be writing `src`). The source's failure
     * slots are copied back before that event: a wait for the destination then
     * covers them, so a failure behind `src` reaches the core with no wait on the
     * source (cuda_fault_poll). */
    GA_CUDA_TRY(use_device(src_dev));
    GA_TRY(ga_cuda_fault_snapshot(src_dev, sd->stream));
    GA_CUDA_TRY(cudaEventRecord(sd->order, sd->stream));
    GA_CUDA_TRY(use_device(dst_dev));
    GA_CUDA_TRY(cudaStreamWaitEvent(dd->stream, sd->order, 0));
    GA_CUDA_TRY(cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, nbytes, dd->stream));
    /* And the source's later work waits for the copy: `src` may be freed when this
     * returns, and the cache may hand its block to the next kernel on src_dev. */
    GA_CUDA_TRY(cudaEventRecord(dd->order, dd->stream));
    GA_CUDA_TRY(use_device(src_dev));
    GA_CUDA_TRY(cudaStreamWaitEvent(sd->stream, dd->order, 0));
    return GA_OK;
}

int
cuda_kernel_counters(int dev, int reset_max, ga_kernel_counters *out)
{
    device_state *d;
    GA_TRY(state(dev, &d));
    out->launches = d->launches.load();
    out->syncs = d->syncs.load();
    out->h2d = d->h2d.load();
    out->d2h = d->d2h.load();
    out->max_grid_blocks = reset_max ? d->max_grid_blocks.exchange(0)
                                     : d->max_grid_blocks.load();
    ga_cuda_graph_counters(dev, &out->graph_launches, &out->graph_kernels);
    return GA_OK;
}

/* Read once: whether this plugin's memory may be handed to other CUDA libraries
 * (ga_backend.shares_memory). */
int shares = 1;

int
cuda_shares_memory(void)
{
    return shares;
}

int
cuda_stream_handle(int dev, uintptr_t *out)
{
    cudaStream_t s = NULL;
    GA_TRY(ga_cuda_stream(dev, &s));
    *out = (uintptr_t)s;
    return GA_OK;
}

/* DLPack's stream numbers as runtime handles (1 and 2 are the runtime's own values
 * for these two streams; spelled out so the mapping is visible). */
cudaStream_t
dlpack_stream(uintptr_t s)
{
    return s == 1 ? cudaStreamLegacy : s == 2 ? cudaStreamPerThread : (cudaStream_t)s;
}

int
cuda_order_stream(int dev, uintptr_t stream)
{
    device_state *d;
    GA_TRY(state(dev, &d));
    cudaStream_t theirs = dlpack_stream(stream);
    if (theirs == d->stream) {
        return GA_OK; /* one stream: already in order */
    }
#ifdef GA_CUDA_EMULATION
    if (!ga_emu_stream_known(theirs)) {
        return ga_error(GA_ERR_VALUE, "stream=%#llx is not a CUDA stream of this process "
                        "(emulation check)", (unsigned long long)stream);
    }
#endif
    /* The record and the wait under d->lock, so that another thread's hand-off
     * cannot re-record `handoff` in between (a later record would only make the wait
     * longer, never wrong, but the lock makes the pairing plain). */
    std::lock_guard<std::mutex> g(d->lock);
    GA_CUDA_TRY(use_device(dev));
    GA_CUDA_TRY(cudaEventRecord(d->handoff, d->stream));
    GA_CUDA_TRY(cudaStreamWaitEvent(theirs, d->handoff, 0));
    return GA_OK;
}

/* The reverse of cuda_order_stream: our stream waits for theirs. A DLPack export's
 * block goes back to the cache when the consumer drops it, while the consumer's reads
 * of it may still be queued on the stream it named: later work on our stream (the only
 * work the cache hands the block to) then runs after them, with no host wait. */
int
cuda_order_after(int dev, uintptr_t stream)
{
    device_state *d;
    GA_TRY(state(dev, &d));
    cudaStream_t theirs = dlpack_stream(stream);
    if (theirs == d->stream) {
        return GA_OK;
    }
#ifdef GA_CUDA_EMULATION
    if (!ga_emu_stream_known(theirs)) {
        return ga_error(GA_ERR_VALUE, "stream=%#llx is not a CUDA stream of this process "
                        "(emulation check)", (unsigned long long)stream);
    }
#endif
    std::lock_guard<std::mutex> g(d->lock); /* record and wait as a pair, as above */
    GA_CUDA_TRY(use_device(dev));
    GA_CUDA_TRY(cudaEventRecord(d->taken_back, theirs));
    GA_CUDA_TRY(cudaStreamWaitEvent(d->stream, d->taken_back, 0));
    return GA_OK;
}

/* x.to(cpu(), non_blocking=True): into page-locked memory (host_alloc_pinned) the
 * copy is queued on the copy stream after the work queued so far on the stream, and
 * the call returns; the copy engine runs it beside the stream's later kernels. The
 * core records an event after it (cuda_copies_event_record) and keeps the host from
 * `dst` until it completes, and calls cuda_wait_copies before `src` is written or its
 * block reused. (Into pageable memory CUDA would finish the copy before returning:
 * correct, not asynchronous; the core gives this entry pinned memory only.) */
int
cuda_copy_d2h_async(int dev, void *dst, const void *src, size_t nbytes)
{
    device_state *d;
    cudaStream_t s = NULL;
    GA_TRY(ga_cuda_stream(dev, &s));
    GA_TRY(state(dev, &d));
    d->d2h++;
    GA_CUDA_TRY(cudaEventRecord(d->to_copies, s));
    GA_CUDA_TRY(cudaStreamWaitEvent(d->copies, d->to_copies, 0));
    GA_CUDA_TRY(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, d->copies));
    return GA_OK;
}

/* The stream waits for the copies queued so far on the copy stream, on the device. */
int
cuda_wait_copies(int dev)
{
    device_state *d;
    cudaStream_t s = NULL;
    GA_TRY(ga_cuda_stream(dev, &s));
    GA_TRY(state(dev, &d));
    GA_CUDA_TRY(cudaEventRecord(d->from_copies, d->copies));
    GA_CUDA_TRY(cudaStreamWaitEvent(s, d->from_copies, 0));
    return GA_OK;
}

/* Portable: page-locked for every device of the process, so an array pinned once
 * copies asynchronously to and from any GPU. */
int
cuda_host_alloc_pinned(size_t nbytes, void **ptr)
{
    probe();
    if (G.count == 0) {
        return ga_error(GA_ERR_DEVICE, "no CUDA device: %s", G.reason);
    }
    *ptr = NULL;
    GA_CUDA_TRY(cudaHostAlloc(ptr, nbytes > 0 ? nbytes : 1, cudaHostAllocPortable));
    return GA_OK;
}

void
cuda_host_free_pinned(void *ptr)
{
    if (cudaFreeHost(ptr) != cudaSuccess) {
        cudaGetLastError(); /* never fails for the caller; the block is lost at worst */
    }
}

int
cuda_device_wait(int dev)
{
    device_state *d;
    GA_TRY(not_capturing(dev, "a wait for the device"));
    GA_TRY(state(dev, &d));
    waiting_host w;
    GA_CUDA_TRY(use_device(dev));
    d->syncs++;
    GA_CUDA_TRY(cudaDeviceSynchronize());
    return GA_OK;
}

/* Timing events (ABI 9): cudaEvent_t with timing, recorded on the device's stream
 * (with `copies`, on its copy stream: ABI 12). */
int
record_on(int dev, bool copies, void **out)
{
    device_state *d;
    GA_TRY(state(dev, &d));
    GA_CUDA_TRY(use_device(dev));
    if (!copies) {
        /* the failure slots of fallible work queued before the event are copied back
         * before it, so a wait for the event brings their outcomes (harvested in
         * cuda_event_synchronize): no-op when none is outstanding */
        GA_TRY(ga_cuda_fault_snapshot(dev, d->stream));
    }
    cudaEvent_t ev;
    GA_CUDA_TRY(cudaEventCreate(&ev));
    cudaError_t err = cudaEventRecord(ev, copies ? d->copies : d->stream);
    if (err != cudaSuccess) {
        cudaEventDestroy(ev);
        return ga_cuda_error(err, "cudaEventRecord(timing event)", __FILE__, __LINE__);
    }
    *out = (void *)ev;
    return GA_OK;
}

int
cuda_event_record(int dev, void **out)
{
    return record_on(dev, false, out);
}

int
cuda_copies_event_record(int dev, void **out)
{
    return record_on(dev, true, out);
}

int
cuda_event_query(int dev, void *ev, int *done)
{
    (void)dev;
    cudaError_t q = cudaEventQuery((cudaEvent_t)ev);
    if (q == cudaErrorNotReady) {
        cudaGetLastError(); /* not an error: not yet */
        *done = 0;
        return GA_OK;
    }
    *done = 1;
    GA_CUDA_TRY(q);
    return GA_OK;
}

int
cuda_event_synchronize(int dev, void *ev)
{
    device_state *d;
    GA_TRY(state(dev, &d));
    waiting_host w;
    d->syncs++;
    GA_CUDA_TRY(cudaEventSynchronize((cudaEvent_t)ev));
    /* the outcomes the record's snapshot brought (record_on), for the core to raise */
    return ga_cuda_fault_harvest(dev, d->stream);
}

int
cuda_event_elapsed(int dev, void *start, void *end, double *ms)
{
    (void)dev;
    if (start == NULL) {
#ifdef GA_CUDA_EMULATION
        /* the emulator stamps with steady_clock, the host's monotonic clock */
        int64_t ns = 0;
        GA_CUDA_TRY(ga_emu_event_time_ns((cudaEvent_t)end, &ns));
        *ms = (double)ns / 1e6;
        return GA_OK;
#else
        return ga_error(GA_ERR_UNSUPPORTED, "a GPU's events keep the GPU's own clock");
#endif
    }
    float f = 0.0f;
    GA_CUDA_TRY(cudaEventElapsedTime(&f, (cudaEvent_t)start, (cudaEvent_t)end));
    *ms = (double)f;
    return GA_OK;
}

void
cuda_event_destroy(int dev, void *ev)
{
    (void)dev;
    cudaEventDestroy((cudaEvent_t)ev);
}

const char *
cuda_last_error(void)
{
    return ga_error_message();
}

const char *
cuda_unavailable_reason(void)
{
    probe();
    return G.reason;
}

const ga_backend table = {
    GA_BACKEND_ABI_VERSION,
#ifdef GA_CUDA_EMULATION
    "emulated cuda",
#else
    "cuda",
#endif
    cuda_device_count,
    cuda_device_props,
    cuda_synchronize,
    cuda_alloc,
    cuda_free,
    cuda_memory_stats,
    cuda_empty_cache,
    cuda_copy_h2d,
    cuda_copy_d2h,
    cuda_copy_d2d,
    cuda_copy_peer,
    ga_cuda_elementwise,
    ga_cuda_reduce,
    ga_cuda_scan,
    ga_cuda_gemm,
    ga_cuda_random,
    ga_cuda_gather,
    ga_cuda_scatter,
    ga_cuda_nonzero,
    ga_cuda_arange,
    cuda_last_error,
    cuda_unavailable_reason,
    cuda_set_wait_hooks,
    ga_cuda_sort,
    ga_cuda_searchsorted,
    cuda_kernel_counters,
    cuda_shares_memory,
    cuda_stream_handle,
    cuda_order_stream,
    cuda_device_wait,
    ga_cuda_linalg,
    ga_cuda_fft,
    ga_cuda_index_checked,
    cuda_fault_poll,
    cuda_event_record,
    cuda_event_query,
    cuda_event_synchronize,
    cuda_event_elapsed,
    cuda_event_destroy,
    cuda_order_after,
    cuda_copy_d2h_async,
    cuda_host_alloc_pinned,
    cuda_host_free_pinned,
    cuda_copies_event_record,
    cuda_wait_copies,
    ga_cuda_fused,
    nullptr, /* fused_reduce: the fused kernel, then the reduction's (2 launches) */
    /* ABI 15: the in-core host backends' entries; none here */
    nullptr, /* set_device_count */
    nullptr, /* pending_work */
    nullptr, /* hold_queue */
    nullptr, /* stamp_tasks */
    nullptr, /* num_threads */
    nullptr, /* host_cache_limit */
    ga_cuda_graph_begin,
    ga_cuda_graph_end,
    ga_cuda_graph_launch,
    ga_cuda_graph_destroy,
};

}  // namespace

/* --- what the kernel files share (ga_cuda.h) --------------------------------------- */

extern "C" int
ga_cuda_copy_to_host(int dev, void *dst, const void *src, size_t nbytes)
{
    return cuda_copy_d2h(dev, dst, src, nbytes);
}

extern "C" int
ga_cuda_error(cudaError_t err, const char *expr, const char *file, int line)
{
    cudaGetLastError(); /* the runtime also keeps a non-sticky error as the last one */
    const char *base = strrchr(file, '/');
    const char *extra = "";
#ifdef GA_CUDA_EMULATION
    extra = ga_emu_take_error_detail();
#endif
    /* these come from a kernel and are sticky on a GPU: the context is lost */
    const char *sticky = err == cudaErrorIllegalAddress || err == cudaErrorLaunchFailure ||
                                 err == cudaErrorLaunchTimeout
                             ? "; a fault in a kernel is sticky: every later CUDA call on "
                               "this GPU fails with it, and the process must be restarted "
                               "to use that GPU again"
                             : "";
    return ga_error(err == cudaErrorMemoryAllocation ? GA_ERR_OOM_DEVICE : GA_ERR_CUDA,
                    "CUDA error %s (%s) in %s at %s:%d%s%s%s", cudaGetErrorName(err),
                    cudaGetErrorString(err), expr, base ? base + 1 : file, line,
                    extra[0] ? "; " : "", extra, sticky);
}

extern "C" int
ga_cuda_stream(int dev, cudaStream_t *stream)
{
    device_state *d;
    GA_TRY(state(dev, &d));
    GA_CUDA_TRY(use_device(dev));
    cudaStream_t capture = ga_cuda_capture_stream(dev);
    *stream = capture != NULL ? capture : d->stream;
    return GA_OK;
}

extern "C" void
ga_cuda_count_launch(cudaStream_t stream, unsigned long long blocks)
{
    if (ga_cuda_graph_counts(stream, blocks)) { /* a node: counted when it launches */
        return;
    }
    for (int i = 0; i < GA_MAX_DEVICES; i++) {
        device_state *d = __atomic_load_n(&G.devs[i], __ATOMIC_ACQUIRE);
        if (d != NULL && d->stream == stream) {
            d->launches++;
            int64_t prev = d->max_grid_blocks.load();
            while ((int64_t)blocks > prev &&
                   !d->max_grid_blocks.compare_exchange_weak(prev, (int64_t)blocks)) {
            }
            return;
        }
    }
}

extern "C" void
ga_cuda_count_sync(cudaStream_t stream)
{
    for (int i = 0; i < GA_MAX_DEVICES; i++) {
        device_state *d = __atomic_load_n(&G.devs[i], __ATOMIC_ACQUIRE);
        if (d != NULL && d->stream == stream) {
            d->syncs++;
            return;
        }
    }
}

extern "C" void
ga_cuda_launch_dims(int dev, int64_t n, unsigned *grid, unsigned *block)
{
    /* 256 threads a block; at most 8 blocks per multiprocessor (2048 resident
     * threads), the rest of n is covered by the grid-stride loop */
    const int64_t threads = 256;
    int sms = 1;
    if (dev >= 0 && dev < GA_MAX_DEVICES && G.devs[dev] != NULL) {
        sms = G.devs[dev]->props.multiprocessors > 0 ? G.devs[dev]->props.multiprocessors : 1;
    }
    int64_t want = (n + threads - 1) / threads;
    int64_t cap = (int64_t)sms * 8;
    *block = (unsigned)threads;
    *grid = (unsigned)(want < 1 ? 1 : want < cap ? want : cap);
}

extern "C" int
ga_cuda_sm_count(int dev)
{
    if (dev >= 0 && dev < GA_MAX_DEVICES && G.devs[dev] != NULL &&
        G.devs[dev]->props.multiprocessors > 0) {
        return G.devs[dev]->props.multiprocessors;
    }
    return 1;
}

extern "C" int
ga_cuda_alloc(int dev, size_t nbytes, void **ptr)
{
    return cuda_alloc(dev, nbytes, ptr);
}

extern "C" void
ga_cuda_free(int dev, void *ptr, size_t nbytes)
{
    cuda_free(dev, ptr, nbytes);
}

/* The plugin's one exported entry (ga_backend.h). */
GA_EXPORT const ga_backend *
gpuarr_cuda_backend(int emulate_devices)
{
    G.emulate = emulate_devices;
#ifdef GA_CUDA_EMULATION
    ga_emu_init(emulate_devices);
    /* Emulated memory is host memory: no real CUDA library can use it, so it is
     * shared only in the test-only mode whose fakes use this emulated runtime. */
    const char *dl = getenv("GPUARR_CUDA_EMULATE_DLPACK");
    shares = dl != NULL && strcmp(dl, "cuda") == 0;
#endif
    return &table;
}
