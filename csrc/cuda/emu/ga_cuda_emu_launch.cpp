/* ga_cuda_emu.cpp: the CUDA runtime and cuBLAS as the emulated plugin sees them.
 *
 * Launches. A block's threads must be able to stop at __syncthreads and wait for the
 * others. Spawning an OS thread per CUDA thread would make every elementwise launch
 * cost hundreds of thread creations, so this uses fibers, lazily:
 *   1. thread 0 of the block runs on a fiber;
 *   2. if it finishes without reaching a barrier, the block is barrier-free (barriers
 *      must be reached by every thread of a block in CUDA too) and threads 1..n-1 run
 *      as plain calls on the host stack: no context switch at all;
 *   3. if it stops at a barrier, every other thread gets a fiber of its own and runs to
 *      its first barrier (or its end); then passes resume each waiting fiber until all
 *      are done. A pass ends only when every live thread is at the barrier, which is
 *      exactly __syncthreads's guarantee. Exited threads do not hold a barrier up, as
 *      on current GPUs.
 * The order of the blocks, of the plain calls of step 2 and of the fibers in each pass
 * of step 3 is the schedule's (GPUARR_CUDA_EMULATE_SCHEDULE, "the schedule" below).
 * A thread that reaches __syncthreads in step 2 (a barrier thread 0 skipped) cannot be
 * suspended: the launch fails with cudaErrorLaunchFailure and ga_emu_error_detail()
 * says why. Fiber stacks (256 KiB, 512 KiB under AddressSanitizer, a guard page below,
 * reserved lazily) are pooled for the process; a switch saves only the callee-saved
 * registers on x86-64 ("Switching fibers" below). Under AddressSanitizer every switch
 * is announced with __sanitizer_start/finish_switch_fiber.
 *
 * Streams. Each stream, and each device's legacy default stream (stream 0), is a
 * queue of tasks run in order by its own worker thread, so work really is
 * asynchronous to the host as on a GPU: launches, cudaMemcpyAsync, cudaMemsetAsync,
 * cudaMemcpyPeerAsync, cuBLAS calls, event records and cudaStreamWaitEvent enqueue
 * and return. cudaStreamSynchronize, cudaEventSynchronize, cudaDeviceSynchronize,
 * cudaMemcpy, cudaMemset and cudaFree wait, as the CUDA documentation says they do.
 * cudaMemcpyAsync from pageable host memory copies the source into a staging buffer
 * before returning; to pageable host memory it returns when the copy is done; with
 * pinned memory (cudaHostAlloc, recorded in the address map) it stays asynchronous,
 * so reusing the buffer too early gives wrong data, as on a GPU. The legacy stream
 * waits for every blocking stream of its device and they wait for it; non-blocking
 * streams (what the backend uses) are ordered only by events. Launches from all
 * workers are still serialised by one lock (`__shared__` is static storage). A fault
 * inside a task (a failed launch, a timeout) is recorded on the device and returned
 * by the next call that waits on it.
 *
 * Memory. Device blocks are host blocks recorded in an address map with their device,
 * so copies check that device pointers really are device memory (a swapped argument
 * fails like an illegal address, instead of silently copying host memory), and
 * cuBLAS checks that the whole extent of each strided operand lies in one block.
 * Under AddressSanitizer the host may not touch device blocks ("Memcheck" below).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

/* after the standard headers: it defines __noinline__, which they use */
#include "ga_cuda_emu.h"

#include "ga_half.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1 /* clang spells it this way */
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define GA_EMU_ASAN 1
#else
#define GA_EMU_ASAN 0
#endif

uint3 threadIdx;
uint3 blockIdx;
dim3 blockDim;
dim3 gridDim;

namespace {

/* --- state ------------------------------------------------------------------------ */

struct ga_emu_device {
    size_t used;
    int peer_enabled[64];
};

struct block_info {
    size_t size;
    int device; /* -1: pinned host memory */
    /* offset -> end offset: ranges device code may not touch (ga_emu_mem_extent),
     * disjoint; every other byte up to size it may */
    std::map<size_t, size_t> closed;
};

std::mutex state_lock; /* devices, the address map */
std::mutex launch_lock;
int ndevices;
size_t memory_limit;
int multiprocessors = 132; /* GPUARR_CUDA_EMULATE_SMS; an H100's count */
ga_emu_device devices[64];
double watchdog_seconds; /* GPUARR_CUDA_EMULATE_WATCHDOG; 0: none */
long spin_limit = 10000;  /* GPUARR_CUDA_EMULATE_SPINS: __nanosleep calls per block */
/* GPUARR_CUDA_EMULATE_SCHEDULE: the seed of the order of blocks and threads (see
 * "the schedule" below); "random" draws one per process and says which. */
const unsigned long long default_schedule_seed = 1;
std::atomic<unsigned long long> schedule_seed{default_schedule_seed};
unsigned long long random_schedule_seed; /* 0: none drawn yet (state_lock) */
std::atomic<bool> schedule_said;         /* the drawn seed was printed */
std::atomic<bool> schedule_is_random;
/* A fault found by a worker (state_lock): reported by the next wait on the device. */
cudaError_t device_fault[64];
char device_fault_detail[64][512];
std::map<uintptr_t, block_info> blocks; /* start address -> block */
thread_local int current_device;
std::atomic<long long> set_device_calls{0};
std::atomic<long long> occupancy_calls{0}; /* the occupancy calculator, asked */
thread_local cudaError_t last_error = cudaSuccess;
thread_local char error_detail[512];

cudaError_t
fail(cudaError_t err)
{
    last_error = err;
    return err;
}

void
detail(const char *fmt, const char *arg)
{
    snprintf(error_detail, sizeof(error_detail), fmt, arg);
}

/* The block that holds [p, p + n), or NULL. Caller holds state_lock. */
block_info *
find_block(const void *p, size_t n, uintptr_t *start)
{
    uintptr_t a = (uintptr_t)p;
    auto it = blocks.upper_bound(a);
    if (it == blocks.begin()) {
        return nullptr;
    }
    --it;
    if (a - it->first + n > it->second.size && !(n == 0 && a - it->first <= it->second.size)) {
        return nullptr;
    }
    if (start) {
        *start = it->first;
    }
    return &it->second;
}

/* Device code may touch only the first n of the `size` bytes at offset `off` of `b`
 * (n <= size): close [off + n, off + size), open the rest of that range, and leave
 * the block's other ranges as they are. Caller holds state_lock. */
void
set_extent(block_info &b, size_t off, size_t size, size_t n)
{
    size_t end = off + size;
    auto c = b.closed.upper_bound(off);
    if (c != b.closed.begin() && std::prev(c)->second > off) {
        --c; /* it starts before off and reaches into the range */
    }
    while (c != b.closed.end() && c->first < end) {
        size_t from = c->first, to = c->second;
        c = b.closed.erase(c);
        /* the parts outside [off, end) stay closed; the next range starts past to */
        if (from < off) {
            b.closed[from] = off;
        }
        if (to > end) {
            b.closed[end] = to;
        }
    }
    if (n < size) {
        b.closed[off + n] = end;
    }
}

/* Memcheck (AddressSanitizer builds only). Device memory is host memory here, so a
 * host dereference of a device pointer (a bug that crashes on a GPU, or reads garbage)
 * would pass silently. So every device block is poisoned for the host, and opened
 * only while device work runs: a kernel, copy, memset or cuBLAS call on a stream's
 * worker. Emulator code that reads device memory on the host's behalf (the index
 * error record, the DLPack selftests' fake libraries) goes through these copies, as
 * it would on a GPU.
 *
 * Which blocks does a running task touch? A copy knows, a kernel does not: its
 * arguments are opaque values (a pointer may hide in a struct, or be computed).
 * So the window is all or nothing: while at least one task of any device runs, every
 * live device block is addressable up to its extent; when none runs, all are
 * poisoned. All devices, not one: a kernel may read a peer's memory. The price: a
 * host dereference is caught only when it happens while no device work runs (a
 * stream is idle, or the host waited), which is where it usually is, since host
 * code that reads device results does so after a wait (a read while work runs is a
 * race on a GPU too, which this cannot see). Tasks on several streams may overlap:
 * the count of tasks in the window (under state_lock) opens on 0 -> 1 and poisons on
 * 1 -> 0. Opening costs a shadow write of 1/8 of the live device bytes per
 * idle-to-busy transition.
 *
 * Within a block, the ranges ga_emu_mem_extent closed (the caching allocator's
 * rounding after each request, in a whole block or in each piece of a split one) and
 * ASan's redzone after the block stay unaddressable, so reading one byte past the
 * requested size is a report. Pinned host memory is never poisoned: the host may
 * touch it, as on a GPU. */
int window_users; /* tasks in the window; state_lock */

void
shadow_open(uintptr_t start, const block_info &b)
{
#if GA_EMU_ASAN
    ASAN_UNPOISON_MEMORY_REGION((void *)start, b.size);
    for (auto &c : b.closed) {
        ASAN_POISON_MEMORY_REGION((void *)(start + c.first), c.second - c.first);
    }
#else
    (void)start, (void)b;
#endif
}

void
shadow_close(uintptr_t start, const block_info &b)
{
#if GA_EMU_ASAN
    ASAN_POISON_MEMORY_REGION((void *)start, b.size);
#else
    (void)start, (void)b;
#endif
}

void
window_enter(void)
{
    if (!GA_EMU_ASAN) {
        return;
    }
    std::lock_guard<std::mutex> g(state_lock);
    if (window_users++ == 0) {
        for (auto &kv : blocks) {
            if (kv.second.device >= 0) {
                shadow_open(kv.first, kv.second);
            }
        }
    }
}

void
window_leave(void)
{
    if (!GA_EMU_ASAN) {
        return;
    }
    std::lock_guard<std::mutex> g(state_lock);
    if (--window_users == 0) {
        for (auto &kv : blocks) {
            if (kv.second.device >= 0) {
                shadow_close(kv.first, kv.second);
            }
        }
    }
}

/* A task that touches device memory: the window is open for its lifetime. */
struct in_window {
    in_window() { window_enter(); }
    ~in_window() { window_leave(); }
    in_window(const in_window &) = delete;
    in_window &operator=(const in_window &) = delete;
};

/* The device of the block that holds [p, p + n): -1 for pinned host memory, -2 for
 * anything else (pageable host memory). */
int
where(const void *p, size_t n)
{
    std::lock_guard<std::mutex> g(state_lock);
    const block_info *b = find_block(p, n, nullptr);
    return b ? b->device : -2;
}

}  // namespace

/* --- streams ------------------------------------------------------------------------ */

struct ga_emu_stream {
    int device;
    unsigned flags;
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::function<void()>> q;
    uint64_t enqueued = 0, done = 0; /* tasks; guarded by m */
    uint64_t launches = 0;           /* kernels queued so far; guarded by m */
    unsigned ordinal = 0;            /* among its device's streams, by creation */
    std::thread worker;
};
struct ga_emu_event {
    int device;
    ga_emu_stream *stream; /* where it was last recorded; NULL: never */
    uint64_t seq;          /* complete when stream->done >= seq */
    unsigned flags;        /* cudaEventDisableTiming: no timestamp */
    /* the time the stream reached the last record, in steady_clock nanoseconds; a
     * new cell per record, shared with the record's task, which may run after the
     * event was destroyed or recorded again */
    std::shared_ptr<std::atomic<int64_t>> stamp;
};

namespace {

/* Every stream ever made (never destroyed while the process runs: the backend's
 * streams live as long as the plugin), and each device's legacy stream. */
std::vector<ga_emu_stream *> &all_streams = *new std::vector<ga_emu_stream *>();
ga_emu_stream *legacy[64];

void
record_fault(int dev)
{
    if (last_error == cudaSuccess) {
        return;
    }
    std::lock_guard<std::mutex> g(state_lock);
    if (device_fault[dev] == cudaSuccess) {
        device_fault[dev] = last_error;
        snprintf(device_fault_detail[dev], sizeof(device_fault_detail[dev]), "%s",
                 error_detail);
    }
    last_error = cudaSuccess;
    error_detail[0] = '\0';
}

void
worker_main(ga_emu_stream *s)
{
    current_device = s->device;
    for (;;) {
        std::function<void()> task;
        {
            std::unique_lock<std::mutex> g(s->m);
            s->cv.wait(g, [s] { return !s->q.empty(); });
            task = std::move(s->q.front());
            s->q.pop_front();
        }
        task();
        record_fault(s->device);
        {
            std::lock_guard<std::mutex> g(s->m);
            s->done++;
        }
        s->cv.notify_all();
    }
}

ga_emu_stream *
new_stream(int dev, unsigned flags)
{
    ga_emu_stream *s = new ga_emu_stream();
    s->device = dev;
    s->flags = flags;
    s->worker = std::thread(worker_main, s);
    s->worker.detach();
    std::lock_guard<std::mutex> g(state_lock);
    for (ga_emu_stream *o : all_streams) {
        s->ordinal += o->device == dev;
    }
    all_streams.push_back(s);
    return s;
}

/* Each host thread's per-thread default stream, one per device (cudaStreamPerThread):
 * blocking, so ordered with the legacy stream as in CUDA. Made at first use. */
thread_local ga_emu_stream *per_thread[64];

/* Stream 0 (and cudaStreamLegacy) means the current device's legacy default stream;
 * cudaStreamPerThread the calling thread's stream of the current device. */
ga_emu_stream *
resolve(cudaStream_t s)
{
    if (s == cudaStreamPerThread) {
        if (per_thread[current_device] == nullptr) {
            per_thread[current_device] = new_stream(current_device, 0);
        }
        return per_thread[current_device];
    }
    if (s != nullptr && s != cudaStreamLegacy) {
        return s;
    }
    int dev = current_device;
    {
        std::lock_guard<std::mutex> g(state_lock);
        if (legacy[dev] != nullptr) {
            return legacy[dev];
        }
    }
    ga_emu_stream *l = new_stream(dev, 0);
    std::lock_guard<std::mutex> g(state_lock);
    if (legacy[dev] == nullptr) {
        legacy[dev] = l;
    }
    return legacy[dev];
}

uint64_t
tail(ga_emu_stream *s)
{
    std::lock_guard<std::mutex> g(s->m);
    return s->enqueued;
}

void
wait_for(ga_emu_stream *s, uint64_t seq)
{
    std::unique_lock<std::mutex> g(s->m);
    s->cv.wait(g, [s, seq] { return s->done >= seq; });
}

void
push(ga_emu_stream *s, std::function<void()> task)
{
    {
        std::lock_guard<std::mutex> g(s->m);
        s->q.push_back(std::move(task));
        s->enqueued++;
    }
    s->cv.notify_all();
}

/* Legacy default stream semantics: work on stream 0 waits for every blocking stream
 * of the device, and work on a blocking stream waits for stream 0. */
void
enqueue(ga_emu_stream *s, std::function<void()> task)
{
    if (s->flags == 0) {
        std::vector<std::pair<ga_emu_stream *, uint64_t>> deps;
        {
            std::lock_guard<std::mutex> g(state_lock);
            for (ga_emu_stream *o : all_streams) {
                if (o != s && o->device == s->device && o->flags == 0 &&
                    (s == legacy[s->device] || o == legacy[s->device])) {
                    deps.emplace_back(o, 0);
                }
            }
        }
        for (auto &d : deps) {
            uint64_t seq = tail(d.first);
            ga_emu_stream *o = d.first;
            push(s, [o, seq] { wait_for(o, seq); });
        }
    }
    push(s, std::move(task));
}

/* The device's fault, if a worker recorded one, as the result of a wait. */
cudaError_t
fault_of(int dev)
{
    std::lock_guard<std::mutex> g(state_lock);
    if (device_fault[dev] != cudaSuccess) {
        snprintf(error_detail, sizeof(error_detail), "%s", device_fault_detail[dev]);
        last_error = device_fault[dev];
    }
    return device_fault[dev];
}

/* Wait on the host for everything queued so far on `s`. */
cudaError_t
host_wait(ga_emu_stream *s)
{
    wait_for(s, tail(s));
    return fault_of(s->device);
}

/* Wait for every stream of `dev` (cudaDeviceSynchronize, cudaFree). */
cudaError_t
device_wait(int dev)
{
    std::vector<ga_emu_stream *> mine;
    {
        std::lock_guard<std::mutex> g(state_lock);
        for (ga_emu_stream *o : all_streams) {
            if (o->device == dev) {
                mine.push_back(o);
            }
        }
    }
    for (ga_emu_stream *o : mine) {
        wait_for(o, tail(o));
    }
    return fault_of(dev);
}

}  // namespace

/* --- devices -------------------------------------------------------------------- */

extern "C" {

int
ga_emu_inject(const char *what)
{
    const char *v = getenv("GPUARR_CUDA_EMULATE_FAIL");
    if (v == NULL || *v == '\0') {
        return 0;
    }
    size_t n = strlen(what);
    for (const char *p = v; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, what, n) == 0) {
            detail("%s failed: injected by GPUARR_CUDA_EMULATE_FAIL (test only)", what);
            last_error = cudaErrorIllegalAddress;
            return 1;
        }
        p += len + (end ? 1 : 0);
    }
    return 0;
}

const char *
ga_emu_take_error_detail(void)
{
    static thread_local char taken[sizeof(error_detail)];
    memcpy(taken, error_detail, sizeof(taken));
    error_detail[0] = '\0';
    return taken;
}

void
ga_emu_init(int n)
{
    std::lock_guard<std::mutex> g(state_lock);
    ndevices = n < 0 ? 0 : n > 64 ? 64 : n;
    memory_limit = (size_t)1 << 30;
    const char *w = getenv("GPUARR_CUDA_EMULATE_WATCHDOG");
    watchdog_seconds = w != NULL && *w != '\0' ? atof(w) : 0.0;
    const char *v = getenv("GPUARR_CUDA_EMULATE_MEMORY");
    if (v != NULL && *v != '\0') {
        char *end;
        errno = 0;
        unsigned long long b = strtoull(v, &end, 10);
        if (errno == 0 && *end == '\0' && b > 0) {
            memory_limit = (size_t)b;
        }
    }
    spin_limit = 10000;
    v = getenv("GPUARR_CUDA_EMULATE_SPINS");
    if (v != NULL && *v != '\0') {
        char *end;
        errno = 0;
        long spins = strtol(v, &end, 10);
        if (errno == 0 && *end == '\0' && spins >= 1) {
            spin_limit = spins;
        }
    }
    multiprocessors = 132;
    v = getenv("GPUARR_CUDA_EMULATE_SMS");
    if (v != NULL && *v != '\0') {
        char *end;
        errno = 0;
        long sms = strtol(v, &end, 10);
        if (errno == 0 && *end == '\0' && sms >= 1 && sms <= 4096) {
            multiprocessors = (int)sms;
        } else {
            fprintf(stderr,
                    "gpuarr: GPUARR_CUDA_EMULATE_SMS=%s is not a count from 1 to 4096; "
                    "using 132\n",
                    v);
        }
    }
    schedule_is_random = false;
    schedule_seed = default_schedule_seed;
    v = getenv("GPUARR_CUDA_EMULATE_SCHEDULE");
    if (v != NULL && strcmp(v, "random") == 0) {
        /* once per process (the backend may be asked for its table again); 12 digits
         * are plenty of schedules and short enough to type back */
        while (random_schedule_seed == 0) {
            random_schedule_seed = ((unsigned long long)std::random_device{}() << 32 |
                                    std::random_device{}()) % 1000000000000ull;
        }
        schedule_seed = random_schedule_seed;
        schedule_is_random = true;
    }
    else if (v != NULL && *v != '\0') {
        char *end;
        errno = 0;
        unsigned long long seed = strtoull(v, &end, 10);
        if (errno == 0 && *end == '\0' && *v >= '0' && *v <= '9') {
            schedule_seed = seed;
        } else {
            fprintf(stderr,
                    "gpuarr: GPUARR_CUDA_EMULATE_SCHEDULE=%s is neither a seed (a decimal "
                    "integer from 0 to 2^64-1) nor 'random'; using the seed %llu\n",
                    v, default_schedule_seed);
        }
    }
}

#define GA_EMU_FAIL_POINT(name)                                                        \
    do {                                                                               \
        if (ga_emu_inject(name)) {                                                     \
            return cudaErrorIllegalAddress;                                            \
        }                                                                              \
    } while (0)

/* The driver's CUDA version: 13000, or GPUARR_CUDA_EMULATE_DRIVER (test only, e.g.
 * 12040) to play a machine whose driver is older than the runtime, where the real
 * runtime answers cudaErrorInsufficientDriver to everything. */
static int
emulated_driver(void)
{
    const char *v = getenv("GPUARR_CUDA_EMULATE_DRIVER");
    return v != NULL && *v != '\0' ? atoi(v) : 13000;
}

cudaError_t
cudaGetDeviceCount(int *count)
{
    if (emulated_driver() < 13000) {
        return fail(cudaErrorInsufficientDriver); /* *count is not written */
    }
    if (ndevices == 0) {
        return fail(cudaErrorNoDevice); /* like the runtime: *count is not written */
    }
    *count = ndevices;
    return cudaSuccess;
}

cudaError_t
cudaDriverGetVersion(int *version)
{
    *version = emulated_driver();
    return cudaSuccess;
}

cudaError_t
cudaRuntimeGetVersion(int *version)
{
    *version = 13000;
    return cudaSuccess;
}

static int
valid_device(int d)
{
    return d >= 0 && d < ndevices;
}

cudaError_t
cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!valid_device(device)) {
        return fail(cudaErrorInvalidDevice);
    }
    memset(prop, 0, sizeof(*prop));
    snprintf(prop->name, sizeof(prop->name), "emulated CUDA device %d (CPU)", device);
    prop->totalGlobalMem = memory_limit;
    prop->sharedMemPerBlock = 48 * 1024;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 0x7fffffff;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    /* an H100's geometry, so grids are sized as on one */
    prop->major = 8;
    prop->minor = 0;
    prop->multiProcessorCount = multiprocessors;
    prop->maxThreadsPerMultiProcessor = 2048;
    prop->regsPerBlock = 65536;
    prop->regsPerMultiprocessor = 65536;
    prop->sharedMemPerMultiprocessor = 228 * 1024;
    prop->maxBlocksPerMultiProcessor = 32;
    prop->canMapHostMemory = 1;
    prop->unifiedAddressing = 1;
    return cudaSuccess;
}

cudaError_t
cudaSetDevice(int device)
{
    if (!valid_device(device)) {
        return fail(cudaErrorInvalidDevice);
    }
    set_device_calls++;
    current_device = device;
    return cudaSuccess;
}

/* How many times cudaSetDevice was called (a driver call on a GPU: the plugin makes
 * it only when the thread's current device differs; tests/test_cuda_copies.py). */
/* Test only: how often the occupancy calculator was asked (k_elementwise.cu keeps its
 * answer per kernel and device). */
extern "C" __attribute__((visibility("default"))) long long
gpuarr_cuda_selftest_occupancy_calls(void)
{
    return occupancy_calls.load();
}

extern "C" __attribute__((visibility("default"))) long long
gpuarr_cuda_selftest_set_device_calls(void)
{
    return set_device_calls.load();
}

cudaError_t
cudaGetDevice(int *device)
{
    *device = current_device;
    return cudaSuccess;
}

cudaError_t
cudaDeviceSynchronize(void)
{
    GA_EMU_FAIL_POINT("cudaDeviceSynchronize");
    return device_wait(current_device);
}

cudaError_t
cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    std::lock_guard<std::mutex> g(state_lock);
    *total_bytes = memory_limit;
    *free_bytes = memory_limit - devices[current_device].used;
    return cudaSuccess;
}

/* --- errors ------------------------------------------------------------------------ */

cudaError_t
cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

cudaError_t
cudaPeekAtLastError(void)
{
    return last_error;
}

#define GA_EMU_ERRORS(X)                                                               \
    X(cudaSuccess, "no error")                                                         \
    X(cudaErrorInvalidValue, "invalid argument")                                       \
    X(cudaErrorMemoryAllocation, "out of memory")                                      \
    X(cudaErrorInitializationError, "initialization error")                            \
    X(cudaErrorInvalidConfiguration, "invalid configuration argument")                 \
    X(cudaErrorInvalidDevicePointer, "invalid device pointer")                         \
    X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")            \
    X(cudaErrorStubLibrary, "CUDA driver is a stub library")                           \
    X(cudaErrorInsufficientDriver,                                                     \
      "CUDA driver version is insufficient for CUDA runtime version")                  \
    X(cudaErrorNoDevice, "no CUDA-capable device is detected")                         \
    X(cudaErrorInvalidDevice, "invalid device ordinal")                                \
    X(cudaErrorInvalidResourceHandle, "invalid resource handle")                       \
    X(cudaErrorNotReady, "device not ready")                                           \
    X(cudaErrorIllegalAddress, "an illegal memory access was encountered")             \
    X(cudaErrorLaunchOutOfResources, "too many resources requested for launch")        \
    X(cudaErrorLaunchTimeout, "the launch timed out and was terminated")               \
    X(cudaErrorMisalignedAddress, "misaligned address")                                \
    X(cudaErrorPeerAccessAlreadyEnabled,                                               \
      "peer access is already enabled")                                                \
    X(cudaErrorPeerAccessNotEnabled, "peer access has not been enabled")               \
    X(cudaErrorLaunchFailure, "unspecified launch failure")                            \
    X(cudaErrorUnknown, "unknown error")

const char *
cudaGetErrorName(cudaError_t err)
{
    switch (err) {
#define GA_X_NAME(e, text)                                                             \
    case e:                                                                            \
        return #e;
        GA_EMU_ERRORS(GA_X_NAME)
#undef GA_X_NAME
    }
    return "cudaErrorUnknown";
}

const char *
cudaGetErrorString(cudaError_t err)
{
    switch (err) {
#define GA_X_TEXT(e, text)                                                             \
    case e:                                                                            \
        return text;
        GA_EMU_ERRORS(GA_X_TEXT)
#undef GA_X_TEXT
    }
    return "unrecognized error code";
}

/* --- memory ----------------------------------------------------------------------- */

cudaError_t
cudaMalloc(void **ptr, size_t size)
{
    GA_EMU_FAIL_POINT("cudaMalloc");
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
    /* as on a GPU, cudaFree waits for the device: queued work may still use the block */
    cudaError_t fault = device_wait(dev);
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
         * its copy ran is caught (tests/test_cuda_copies.py). */
        const char *ms = getenv("GPUARR_CUDA_EMULATE_DMA_MS");
        unsigned delay = ms != NULL && atoi(ms) > 0 ? (unsigned)atoi(ms) : 0u;
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

/* --- streams and events (the queues are above) --------------------------------------- */

cudaError_t
cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags)
{
    GA_EMU_FAIL_POINT("cudaStreamCreateWithFlags");
    *stream = new_stream(current_device, flags);
    return cudaSuccess;
}

cudaError_t
cudaStreamCreate(cudaStream_t *stream)
{
    return cudaStreamCreateWithFlags(stream, 0);
}

cudaError_t
cudaStreamDestroy(cudaStream_t stream)
{
    /* as in CUDA, queued work still runs; the worker and queue stay (never reused) */
    (void)stream;
    return cudaSuccess;
}

cudaError_t
cudaStreamSynchronize(cudaStream_t stream)
{
    GA_EMU_FAIL_POINT("cudaStreamSynchronize");
    /* A test can make a wait last (GPUARR_CUDA_EMULATE_WAIT_MS, test only) to check
     * that the host lets other threads run while it waits. */
    const char *ms = getenv("GPUARR_CUDA_EMULATE_WAIT_MS");
    if (ms != NULL && atoi(ms) > 0) {
        usleep((useconds_t)atoi(ms) * 1000u);
    }
    return host_wait(resolve(stream));
}

cudaError_t
cudaStreamQuery(cudaStream_t stream)
{
    ga_emu_stream *s = resolve(stream);
    {
        std::lock_guard<std::mutex> g(s->m);
        if (s->done < s->enqueued) {
            return cudaErrorNotReady; /* not an error: not recorded as the last one */
        }
    }
    return fault_of(s->device);
}

int
ga_emu_stream_known(cudaStream_t stream)
{
    if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
        return 1;
    }
    std::lock_guard<std::mutex> g(state_lock);
    for (ga_emu_stream *o : all_streams) {
        if (o == stream) {
            return 1;
        }
    }
    return 0;
}

cudaError_t
ga_emu_stream_sleep(cudaStream_t stream, unsigned ms)
{
    enqueue(resolve(stream), [ms] { usleep((useconds_t)ms * 1000u); });
    return cudaSuccess;
}

cudaError_t
cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags)
{
    (void)flags;
    if (event == NULL) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    ga_emu_stream *s = resolve(stream);
    ga_emu_stream *on;
    uint64_t seq;
    {
        std::lock_guard<std::mutex> g(state_lock);
        on = event->stream;
        seq = event->seq;
    }
    if (on != nullptr && on != s) {
        enqueue(s, [on, seq] { wait_for(on, seq); });
    }
    return cudaSuccess;
}

cudaError_t
cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags)
{
    (void)flags;
    GA_EMU_FAIL_POINT("cudaEventCreateWithFlags");
    *event = new ga_emu_event{current_device, nullptr, 0, flags, nullptr};
    return cudaSuccess;
}

cudaError_t
cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, 0);
}

cudaError_t
cudaEventDestroy(cudaEvent_t event)
{
    delete event;
    return cudaSuccess;
}

cudaError_t
cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    GA_EMU_FAIL_POINT("cudaEventRecord");
    if (event == NULL) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    ga_emu_stream *s = resolve(stream);
    /* the real runtime requires the event and the stream to be of one device */
    if (s->device != event->device) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    /* the event completes when the stream has done everything queued so far; the
     * record itself is a task so that the position is a real queue entry, and it
     * takes the timestamp when the stream gets there, as the GPU does */
    std::shared_ptr<std::atomic<int64_t>> stamp;
    if (!(event->flags & cudaEventDisableTiming)) {
        stamp = std::make_shared<std::atomic<int64_t>>(0);
    }
    enqueue(s, [stamp] {
        if (stamp) {
            stamp->store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now().time_since_epoch())
                             .count());
        }
    });
    uint64_t seq = tail(s);
    std::lock_guard<std::mutex> g(state_lock);
    event->stream = s;
    event->seq = seq;
    event->stamp = stamp;
    return cudaSuccess;
}

cudaError_t
cudaEventSynchronize(cudaEvent_t event)
{
    GA_EMU_FAIL_POINT("cudaEventSynchronize");
    if (event == NULL) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    ga_emu_stream *on;
    uint64_t seq;
    {
        std::lock_guard<std::mutex> g(state_lock);
        on = event->stream;
        seq = event->seq;
    }
    if (on == nullptr) {
        return cudaSuccess;
    }
    wait_for(on, seq);
    return fault_of(on->device);
}

cudaError_t
cudaEventQuery(cudaEvent_t event)
{
    if (event == NULL) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    ga_emu_stream *on;
    uint64_t seq;
    {
        std::lock_guard<std::mutex> g(state_lock);
        on = event->stream;
        seq = event->seq;
    }
    if (on == nullptr) {
        return cudaSuccess;
    }
    {
        std::lock_guard<std::mutex> g(on->m);
        if (on->done < seq) {
            return cudaErrorNotReady; /* not an error: not recorded as the last one */
        }
    }
    return fault_of(on->device);
}

cudaError_t
cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (ms == NULL) {
        return fail(cudaErrorInvalidValue);
    }
    if (start == NULL || end == NULL) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    std::shared_ptr<std::atomic<int64_t>> a, b;
    {
        std::lock_guard<std::mutex> g(state_lock);
        a = start->stamp;
        b = end->stamp;
    }
    /* never recorded, or made with cudaEventDisableTiming: as the runtime says */
    if (!a || !b) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    cudaError_t q = cudaEventQuery(start);
    if (q == cudaSuccess) {
        q = cudaEventQuery(end);
    }
    if (q != cudaSuccess) {
        return q; /* cudaErrorNotReady (not recorded as the last error) or a fault */
    }
    *ms = (float)((double)(b->load() - a->load()) / 1e6);
    return cudaSuccess;
}

cudaError_t
ga_emu_event_time_ns(cudaEvent_t event, int64_t *ns)
{
    if (event == NULL || ns == NULL) {
        return fail(cudaErrorInvalidValue);
    }
    std::shared_ptr<std::atomic<int64_t>> a;
    {
        std::lock_guard<std::mutex> g(state_lock);
        a = event->stamp;
    }
    if (!a) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    cudaError_t q = cudaEventQuery(event);
    if (q != cudaSuccess) {
        return q;
    }
    *ns = a->load();
    return cudaSuccess;
}

cudaError_t
ga_emu_occupancy(int *blocks, int block_size, size_t dynamic_shared)
{
    occupancy_calls++;
    if (blocks == NULL || block_size <= 0 || block_size > 1024 ||
        dynamic_shared > 48 * 1024) {
        return fail(cudaErrorInvalidValue);
    }
    int warps = (block_size + 31) / 32;
    int by_threads = 64 / warps; /* 2048 threads = 64 warps a multiprocessor */
    /* 1 KiB of shared memory a block is reserved by the system, as on sm_90 */
    int by_shared = (int)((228 * 1024) / (dynamic_shared + 1024));
    int b = by_threads < 32 ? by_threads : 32;
    *blocks = b < by_shared ? b : by_shared;
    return cudaSuccess;
}

cudaError_t
cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
    if (!valid_device(device) || !valid_device(peer)) {
        return fail(cudaErrorInvalidDevice);
    }
    *can = device != peer;
    return cudaSuccess;
}

cudaError_t
cudaDeviceEnablePeerAccess(int peer, unsigned flags)
{
    (void)flags;
    if (!valid_device(peer) || peer == current_device) {
        return fail(cudaErrorInvalidDevice);
    }
    std::lock_guard<std::mutex> g(state_lock);
    int &on = devices[current_device].peer_enabled[peer];
    if (on) {
        /* as the runtime does, and it stays as the last error until read */
        return fail(cudaErrorPeerAccessAlreadyEnabled);
    }
    on = 1;
    return cudaSuccess;
}

}  // extern "C"

/* --- launches ----------------------------------------------------------------------- */

/* Switching fibers. A 256-thread block that meets 10 barriers is 5,000 switches, so
 * their cost is the emulator's cost: glibc's swapcontext makes a sigprocmask system
 * call each time (about 0.5 us), while a switch that only saves the callee-saved
 * registers and the stack pointer, as boost.context does, costs a few nanoseconds.
 * That one is used on x86-64; elsewhere (or with shadow stacks, whose `ret` into a
 * new stack would fault) ucontext serves. */
#if defined(__x86_64__) && !(defined(__CET__) && (__CET__ & 2))
#define GA_EMU_FAST_SWITCH 1
/* Save rbp, rbx, r12-r15, MXCSR and the x87 control word on the current stack, store
 * the stack pointer in *from, load `to` and restore the same from it. A fiber's first
 * switch "returns" into the trampoline that ga_emu_fiber_init left on its stack. */
extern "C" void ga_emu_switch(void **from, void *to);
__asm__(".text\n"
        ".p2align 4\n"
        ".type ga_emu_switch,@function\n"
        ".hidden ga_emu_switch\n"
        "ga_emu_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size ga_emu_switch,.-ga_emu_switch\n");
#else
#define GA_EMU_FAST_SWITCH 0
#endif

namespace {

/* Each CUDA thread of a barrier block has a fiber. Kernels keep little on the stack
 * (AddressSanitizer's redzones make frames larger), and a guard page turns an overflow
 * into a fault. */
const size_t fiber_stack_size = GA_EMU_ASAN ? 512 * 1024 : 256 * 1024;
/* Stack tops are staggered by a few cache lines: tops 256 KiB apart would all map to
 * the same cache sets, and 256 fibers' hot frames would evict each other. */
const size_t fiber_stack_colours = 32, fiber_stack_colour = 320;

enum { F_IDLE, F_AT_BARRIER, F_AT_WARP, F_READY, F_DONE };

/* Thrown by __nanosleep out of a spin wait that cannot end (see there); caught where
 * the emulated thread's kernel call began, on the same stack. */
struct spin_deadlock {};


/* A lane's arrival at a warp primitive, and the result it leaves with. */
struct warp_op {
    int op;
    unsigned mask;
    unsigned long long value;
    int arg;
    int width;
    unsigned long long result;
};

struct fiber {
#if GA_EMU_FAST_SWITCH
    void *sp; /* saved stack pointer while suspended */
#else
    ucontext_t ctx;
#endif
    char *stack; /* usable part, above the guard page */
    size_t stack_size;
    int state;
    uint3 tid;
    unsigned index; /* linear thread index in the block: lane = index % 32 */
    warp_op w;
    void *fake_stack; /* AddressSanitizer's, while suspended */
};

struct launch_state {
    void (*fn)(void *);
    void *ctx;
#if GA_EMU_FAST_SWITCH
    void *sched_sp;
#else
    ucontext_t sched;
#endif
    fiber *current;      /* the fiber running now, or NULL in direct mode */
    int direct_barrier;  /* a barrier was reached outside a fiber */
    int bar_acc;         /* sum of predicates at the barrier being formed */
    int bar_result;      /* the sum at the last completed barrier */
    int bar_count;       /* threads that reached it */
    unsigned nthreads;   /* of the block that runs */
    cudaError_t fault;   /* a fault in a thread of the running block (ga_emu_fault) */
    long spins;          /* __nanosleep calls in the running block */
    int deadlock;        /* a spin wait of the running block never ended */
    std::vector<unsigned char> dynamic_shared;
    const void *sched_bottom;
    size_t sched_size;
};

/* Fibers are reused for the life of the process. The pool is never destroyed, on
 * purpose: a static vector would be destroyed at exit before the leak checker looks,
 * leaving its fibers unreachable (a false leak report); a pool that stays reachable
 * is what it is, a cache. */
std::vector<fiber *> &fiber_pool = *new std::vector<fiber *>();
launch_state L;

/* Run the kernel for the current thread; false when it was abandoned in a spin wait. */
bool
run_thread(void)
{
    try {
        L.fn(L.ctx);
    } catch (const spin_deadlock &) {
        return false;
    }
    return true;
}

fiber *
fiber_get(size_t i)
{
    while (fiber_pool.size() <= i) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        void *m = mmap(NULL, fiber_stack_size + page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            return nullptr;
        }
        mprotect(m, page, PROT_NONE); /* overflow faults instead of corrupting */
        fiber *f = new fiber();
        f->stack = (char *)m + page;
        f->stack_size = fiber_stack_size -
                        fiber_pool.size() % fiber_stack_colours * fiber_stack_colour;
        fiber_pool.push_back(f);
    }
    return fiber_pool[i];
}

void
set_thread_index(uint3 t)
{
    threadIdx = t;
}

uint3
thread_of(unsigned i)
{
    uint3 t;
    t.x = i % blockDim.x;
    t.y = (i / blockDim.x) % blockDim.y;
    t.z = i / (blockDim.x * blockDim.y);
    return t;
}

/* Suspend the running fiber `f` and go back to the scheduler. */
inline void
switch_to_scheduler(fiber *f)
{
#if GA_EMU_FAST_SWITCH
    ga_emu_switch(&f->sp, L.sched_sp);
#else
    swapcontext(&f->ctx, &L.sched);
#endif
}

void
fiber_entry(void)
{
    fiber *f = L.current;
#if GA_EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &L.sched_bottom, &L.sched_size);
#endif
    run_thread();
    f->state = F_DONE;
#if GA_EMU_ASAN
    __sanitizer_start_switch_fiber(nullptr, L.sched_bottom, L.sched_size);
#endif
#if GA_EMU_FAST_SWITCH
    switch_to_scheduler(f); /* never resumed: a done fiber is started afresh */
    abort();
#endif
    /* ucontext: returning resumes uc_link, the scheduler */
}

/* Run `f` until it reaches a barrier or ends. */
void
resume(fiber *f)
{
    set_thread_index(f->tid);
    L.current = f;
#if GA_EMU_ASAN
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, f->stack, f->stack_size);
#endif
#if GA_EMU_FAST_SWITCH
    ga_emu_switch(&L.sched_sp, f->sp);
#else
    swapcontext(&L.sched, &f->ctx);
#endif
#if GA_EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
    L.current = nullptr;
}

int
start(fiber *f, unsigned index)
{
    f->index = index;
    f->tid = thread_of(index);
    f->state = F_IDLE;
#if GA_EMU_FAST_SWITCH
    /* The frame ga_emu_switch pops, from the (16-byte aligned) top down: a zero return
     * address for fiber_entry (which never returns), fiber_entry as the address `ret`
     * jumps to, six zero registers, then the caller's MXCSR and x87 control word. At
     * fiber_entry's first instruction the stack is aligned as after a call. */
    uintptr_t top = ((uintptr_t)f->stack + f->stack_size) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)top;
    *--sp = 0;
    *--sp = (uint64_t)(uintptr_t)&fiber_entry;
    for (int r = 0; r < 6; r++) {
        *--sp = 0;
    }
    uint32_t mxcsr;
    uint16_t fpucw;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpucw));
    *--sp = (uint64_t)mxcsr | (uint64_t)fpucw << 32;
    f->sp = sp;
#else
    getcontext(&f->ctx);
    f->ctx.uc_stack.ss_sp = f->stack;
    f->ctx.uc_stack.ss_size = f->stack_size;
    f->ctx.uc_link = &L.sched;
    makecontext(&f->ctx, fiber_entry, 0);
#endif
    resume(f);
    return f->state;
}

/* The lane `src` a shuffle of lane `lane` reads, by CUDA's rules for `width`
 * segments; `lane` itself where CUDA returns the caller's own value. */
unsigned
shuffle_source(const warp_op &w, unsigned lane)
{
    unsigned width = (unsigned)w.width, seg = lane & ~(width - 1);
    switch (w.op) {
    case GA_EMU_SHFL_IDX:
        return seg + ((unsigned)w.arg & (width - 1));
    case GA_EMU_SHFL_UP:
        return lane - seg >= (unsigned)w.arg ? lane - (unsigned)w.arg : lane;
    case GA_EMU_SHFL_DOWN:
        return lane - seg + (unsigned)w.arg < width ? lane + (unsigned)w.arg : lane;
    case GA_EMU_SHFL_XOR: {
        unsigned src = lane ^ (unsigned)w.arg;
        /* earlier segments are readable, later ones are not */
        return src < seg + width && src < 32 ? src : lane;
    }
    }
    return lane;
}

int
warp_error(const char *fmt, unsigned warp, unsigned a, unsigned b)
{
    snprintf(error_detail, sizeof(error_detail), fmt, warp, a, b, blockIdx.x, blockIdx.y,
             blockIdx.z);
    return -1;
}

/* Complete every warp primitive whose mask's lanes have all arrived at the same kind
 * of primitive (a shuffle does not meet a ballot): compute each
 * such lane's result from the values the lanes brought, and mark it F_READY. Returns
 * the number of lanes released, or -1 (with error_detail) on a malformed call. */
int
resolve_warps(unsigned nthreads)
{
    int released = 0;
    for (unsigned base = 0; base < nthreads; base += 32) {
        unsigned waiting = 0;
        unsigned n = nthreads - base < 32 ? nthreads - base : 32;
        for (unsigned l = 0; l < n; l++) {
            if (fiber_pool[base + l]->state == F_AT_WARP) {
                waiting |= 1u << l;
            }
        }
        if (waiting == 0) {
            continue;
        }
        unsigned ready = 0;
        for (unsigned l = 0; l < n; l++) {
            const warp_op &w = fiber_pool[base + l]->w;
            if (!(waiting >> l & 1)) {
                continue;
            }
            if (!(w.mask >> l & 1)) {
                return warp_error("lane %u of warp %u called a warp primitive with mask 0x%08x, "
                                  "which does not name the calling lane, in block "
                                  "(%u,%u,%u) (emulation check)",
                                  l, base / 32, w.mask);
            }
            if (w.width < 1 || w.width > 32 || (w.width & (w.width - 1)) != 0) {
                return warp_error("warp %u lane %u: shuffle width %d is not a power of two "
                                  "from 1 to 32, in block (%u,%u,%u) (emulation check)",
                                  base / 32, l, (unsigned)w.width);
            }
            /* every lane of the mask has arrived, at the same kind of primitive */
            bool all_here = (w.mask & ~waiting) == 0;
            for (unsigned k = 0; all_here && k < n; k++) {
                all_here = !(w.mask >> k & 1) || fiber_pool[base + k]->w.op == w.op;
            }
            if (all_here) {
                ready |= 1u << l;
            }
        }
        for (unsigned l = 0; l < n; l++) {
            if (!(ready >> l & 1)) {
                continue;
            }
            warp_op &w = fiber_pool[base + l]->w;
            if (w.op == GA_EMU_BALLOT) {
                unsigned bits = 0;
                for (unsigned k = 0; k < n; k++) {
                    if ((w.mask >> k & 1) && fiber_pool[base + k]->w.value != 0) {
                        bits |= 1u << k;
                    }
                }
                w.result = bits;
            } else if (w.op == GA_EMU_MATCH_ANY) {
                unsigned bits = 0;
                for (unsigned k = 0; k < n; k++) {
                    if ((w.mask >> k & 1) && fiber_pool[base + k]->w.value == w.value) {
                        bits |= 1u << k;
                    }
                }
                w.result = bits;
            } else if (w.op == GA_EMU_SYNCWARP) {
                w.result = 0;
            } else {
                unsigned src = shuffle_source(w, l);
                bool readable = src < n && (w.mask >> src & 1);
                w.result = readable ? fiber_pool[base + src]->w.value : w.value;
            }
        }
        for (unsigned l = 0; l < n; l++) {
            if (ready >> l & 1) {
                fiber_pool[base + l]->state = F_READY;
                released++;
            }
        }
    }
    return released;
}

/* Every lane still at a warp primitive names a lane that will never come: say which. */
int
missing_lane_error(unsigned nthreads)
{
    for (unsigned i = 0; i < nthreads; i++) {
        fiber *f = fiber_pool[i];
        if (f->state != F_AT_WARP) {
            continue;
        }
        unsigned base = i - i % 32;
        for (unsigned l = 0; l < 32; l++) {
            if (!(f->w.mask >> l & 1)) {
                continue;
            }
            const char *why = base + l >= nthreads                          ? "does not exist"
                              : fiber_pool[base + l]->state == F_DONE       ? "has exited"
                              : fiber_pool[base + l]->state == F_AT_BARRIER ? "waits at __syncthreads"
                                                                            : nullptr;
            if (why != nullptr) {
                snprintf(error_detail, sizeof(error_detail),
                         "thread (%u,%u,%u) of block (%u,%u,%u) waits at a warp primitive "
                         "with mask 0x%08x, but lane %u of its warp %s (compute-sanitizer "
                         "synccheck: barrier error; emulation check)",
                         f->tid.x, f->tid.y, f->tid.z, blockIdx.x, blockIdx.y, blockIdx.z,
                         f->w.mask, l, why);
                return -1;
            }
        }
    }
    snprintf(error_detail, sizeof(error_detail),
             "the lanes of a warp in block (%u,%u,%u) wait at different warp primitives, "
             "or with masks that never agree (emulation check)",
             blockIdx.x, blockIdx.y, blockIdx.z);
    return -1;
}

/* --- the schedule (GPUARR_CUDA_EMULATE_SCHEDULE) ------------------------------------
 * A GPU promises no order between the blocks of a grid, nor between the threads of a
 * block from one barrier to the next; a kernel that depends on one has a race that
 * an emulator running everything in index order would never show. So blocks run in a
 * pseudo-random order, and so do the threads of a block between two barriers (thread
 * 0 first: it decides how the block runs), both drawn from the seed, the stream and
 * the launch's number on it: the same program with the same seed replays the same
 * schedule, another seed gives another. */

uint64_t
mix64(uint64_t z)
{
    /* splitmix64's finaliser: every input bit moves every output bit */
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

struct schedule_rng {
    uint64_t state;
    unsigned
    below(unsigned n)
    {
        state += 0x9e3779b97f4a7c15ull;
        return (unsigned)((mix64(state) >> 32) * n >> 32);
    }
};

/* Put order[from..] in a random order (Fisher-Yates). */
void
shuffle(std::vector<unsigned> &order, size_t from, schedule_rng &r)
{
    for (size_t i = order.size(); i > from + 1; i--) {
        size_t j = from + r.below((unsigned)(i - from));
        std::swap(order[i - 1], order[j]);
    }
}

/* A random permutation of [0, n) for any n up to 2^64 without storing it: a 4-round
 * Feistel network is a bijection on [0, 4^h) with 4^h >= n, and walking its cycle
 * until the value falls below n makes it one on [0, n) (fewer than 4 steps on
 * average). A grid may have billions of blocks; this costs nothing per launch. */
struct block_order {
    uint64_t n, key, mask;
    unsigned half;

    block_order(uint64_t blocks, uint64_t k) : n(blocks), key(k), half(0)
    {
        while (half < 32 && (half == 0 || ((uint64_t)1 << (2 * half)) < n)) {
            half++;
        }
        mask = ((uint64_t)1 << half) - 1;
    }
    uint64_t
    at(uint64_t i) const
    {
        uint64_t x = i;
        do {
            uint64_t l = x >> half, r = x & mask;
            for (uint64_t round = 0; round < 4; round++) {
                uint64_t t = l ^ (mix64(r ^ key ^ round << 60) & mask);
                l = r;
                r = t;
            }
            x = l << half | r;
        } while (x >= n);
        return x;
    }
};

/* The running block's thread order (under launch_lock); never destroyed, like the
 * fiber pool: a detached worker may still be in a launch when the process exits. */
std::vector<unsigned> &thread_order = *new std::vector<unsigned>();

/* Resume, in a random order, every fiber in state `from`. */
void
resume_all(int from, schedule_rng &r)
{
    shuffle(thread_order, 0, r);
    for (unsigned i : thread_order) {
        fiber *f = fiber_pool[i];
        if (f->state == from) {
            f->state = F_IDLE;
            resume(f);
        }
    }
}

/* One block, its threads ordered by `key`; returns 0, or -1 after a malformed barrier
 * or warp primitive (with error_detail), or -2 when no fiber stack could be had.
 *
 * Warps. A lane reaching a warp primitive suspends (F_AT_WARP) like one at a barrier.
 * When every live fiber is suspended, the warp primitives whose lanes have all
 * arrived complete together (resolve_warps) and their lanes run on; only when no warp
 * primitive can complete does a __syncthreads complete. A warp primitive that still
 * cannot complete then names a lane that exited or waits at the barrier: an error. */
int
run_block(unsigned nthreads, uint64_t key)
{
    fiber *f0 = fiber_get(0);
    if (f0 == nullptr) {
        return -2;
    }
    schedule_rng rng{key};
    thread_order.resize(nthreads);
    for (unsigned i = 0; i < nthreads; i++) {
        thread_order[i] = i;
    }
    shuffle(thread_order, 1, rng);
    L.bar_acc = 0;
    L.bar_count = 0;
    L.nthreads = nthreads;
    L.spins = 0;
    L.deadlock = 0;
    const int first = start(f0, 0);
    if (L.deadlock) {
        return -3;
    }
    if (first == F_DONE) {
        /* Thread 0 met no barrier and no warp primitive: the block has no intra-block
         * communication, so its threads may run one after another as plain calls. */
        for (unsigned k = 1; k < nthreads; k++) {
            set_thread_index(thread_of(thread_order[k]));
            run_thread();
            if (L.direct_barrier) {
                return -1;
            }
            if (L.deadlock) {
                return -3;
            }
        }
        return 0;
    }
    for (unsigned k = 1; k < nthreads; k++) {
        fiber *f = fiber_get(thread_order[k]);
        if (f == nullptr) {
            return -2;
        }
    }
    for (unsigned k = 1; k < nthreads; k++) {
        start(fiber_pool[thread_order[k]], thread_order[k]);
    }
    for (;;) {
        if (L.deadlock) {
            return -3;
        }
        int released = resolve_warps(nthreads);
        if (released < 0) {
            return -1;
        }
        if (released > 0) {
            resume_all(F_READY, rng);
            continue;
        }
        int live = 0;
        for (unsigned i = 0; i < nthreads; i++) {
            int st = fiber_pool[i]->state;
            if (st == F_AT_WARP) {
                return missing_lane_error(nthreads);
            }
            live |= st == F_AT_BARRIER;
        }
        if (!live) {
            return 0;
        }
        L.bar_result = L.bar_acc;
        L.bar_acc = 0;
        L.bar_count = 0;
        resume_all(F_AT_BARRIER, rng);
    }
}

}  // namespace

extern "C" {

void *
ga_emu_dynamic_shared(void)
{
    return L.dynamic_shared.empty() ? nullptr : L.dynamic_shared.data();
}

/* Suspend the running fiber in `state`; returns when the scheduler resumes it. */
static void
suspend(fiber *f, int state)
{
    f->state = state;
#if GA_EMU_ASAN
    __sanitizer_start_switch_fiber(&f->fake_stack, L.sched_bottom, L.sched_size);
#endif
    switch_to_scheduler(f);
#if GA_EMU_ASAN
    __sanitizer_finish_switch_fiber(f->fake_stack, &L.sched_bottom, &L.sched_size);
#endif
}

/* A synchronisation point reached outside a fiber: thread 0 of this block reached
 * none, so the block runs as plain calls and cannot wait. */
static void
direct_sync(const char *what)
{
    if (!L.direct_barrier) {
        snprintf(error_detail, sizeof(error_detail),
                 "kernel reached %s in thread (%u,%u,%u) of block (%u,%u,%u) but thread 0 "
                 "of that block reached no barrier or warp primitive: a divergent barrier, "
                 "or a warp primitive only some warps run (the emulator runs blocks whose "
                 "thread 0 meets no synchronisation as plain loops; emulation check)",
                 what, threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x, blockIdx.y,
                 blockIdx.z);
    }
    L.direct_barrier = 1;
}

static void
barrier(int pred)
{
    fiber *f = L.current;
    if (f == nullptr) {
        direct_sync("__syncthreads");
        return;
    }
    L.bar_acc += pred != 0;
    L.bar_count++;
    suspend(f, F_AT_BARRIER);
}

unsigned long long
ga_emu_warp(int op, unsigned mask, unsigned long long value, int arg, int width)
{
    fiber *f = L.current;
    if (f == nullptr) {
        direct_sync("a warp primitive");
        return value;
    }
    f->w.op = op;
    f->w.mask = mask;
    f->w.value = value;
    f->w.arg = arg;
    f->w.width = width;
    suspend(f, F_AT_WARP);
    return f->w.result;
}

unsigned
__activemask(void)
{
    unsigned index = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned base = index - index % 32, bits = 0;
    for (unsigned l = 0; l < 32 && base + l < L.nthreads; l++) {
        bool exited = L.current != nullptr && base + l < fiber_pool.size() &&
                      fiber_pool[base + l]->state == F_DONE;
        if (!exited) {
            bits |= 1u << l;
        }
    }
    return bits;
}

void
ga_emu_fault(cudaError_t err, const char *what, const void *p)
{
    if (L.fault == cudaSuccess) {
        char where_[64];
        snprintf(where_, sizeof(where_), "%p", p);
        snprintf(error_detail, sizeof(error_detail),
                 "%s at address %s in thread (%u,%u,%u) of block (%u,%u,%u): not aligned to "
                 "the access size (emulation check)",
                 what, where_, threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x, blockIdx.y,
                 blockIdx.z);
        L.fault = err;
    }
}

/* An element load or store (GA_K_ELEMENT, ga_config.h) at an address not aligned to
 * the element: on a GPU the typed access faults; so does the emulated one. */
extern "C" void
ga_emu_check_element(const void *p, unsigned long align)
{
    char what[64];
    snprintf(what, sizeof(what), "%lu-byte element load or store", align);
    ga_emu_fault(cudaErrorMisalignedAddress, what, p);
}

void
__syncthreads(void)
{
    barrier(0);
}

int
__syncthreads_count(int pred)
{
    barrier(pred);
    return L.bar_result;
}

int
__syncthreads_and(int pred)
{
    /* all true <=> no thread passed a false predicate */
    barrier(!pred);
    return L.bar_result == 0;
}

int
__syncthreads_or(int pred)
{
    barrier(pred);
    return L.bar_result != 0;
}

void
__threadfence(void)
{
}

void
__nanosleep(unsigned ns)
{
    (void)ns;
    if (++L.spins < spin_limit) {
        return;
    }
    snprintf(error_detail, sizeof(error_detail),
             "thread (%u,%u,%u) of block (%u,%u,%u) paused %ld times in a spin wait that "
             "did not end: the emulator runs blocks one after another, so it waited for a "
             "block that runs later, or for nothing (a deadlock on a GPU whenever the two "
             "are not resident together; GPUARR_CUDA_EMULATE_SPINS; emulation check)",
             threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x, blockIdx.y, blockIdx.z,
             L.spins);
    L.deadlock = 1;
    throw spin_deadlock();
}

void
__threadfence_block(void)
{
}

}  // extern "C"
static void run_grid(dim3 grid, dim3 block, size_t shmem, void (*thread_fn)(void *),
                     void *ctx, uint64_t key);
extern "C" {

void
ga_emu_run(dim3 grid, dim3 block, size_t shmem, cudaStream_t stream,
           void (*thread_fn)(void *), void *ctx, void (*free_ctx)(void *))
{
    if (ga_emu_inject("launch")) {
        free_ctx(ctx);
        return;
    }
    if (fault_of(current_device) != cudaSuccess) { /* sticky, as on a GPU */
        free_ctx(ctx);
        return;
    }
    unsigned long long nthreads = (unsigned long long)block.x * block.y * block.z;
    if (nthreads == 0 || nthreads > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 ||
        grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535) {
        snprintf(error_detail, sizeof(error_detail),
                 "launch with grid (%u,%u,%u) and block (%u,%u,%u) (emulation check)",
                 grid.x, grid.y, grid.z, block.x, block.y, block.z);
        fail(cudaErrorInvalidConfiguration);
        free_ctx(ctx);
        return;
    }
    if (shmem > 48 * 1024) {
        fail(cudaErrorInvalidValue);
        free_ctx(ctx);
        return;
    }
    /* checked now (cudaGetLastError reports a bad launch at once); run on the worker,
     * whose faults the next wait reports. The schedule is keyed by the launch's place
     * in its stream, which the program decides, not by when the worker gets to it. */
    ga_emu_stream *s = resolve(stream);
    uint64_t n;
    {
        std::lock_guard<std::mutex> g(s->m);
        n = s->launches++;
    }
    uint64_t stream_id = (uint64_t)s->device << 32 | s->ordinal;
    uint64_t key = mix64(mix64(mix64(schedule_seed) ^ stream_id) ^ n);
    enqueue(s, [grid, block, shmem, thread_fn, ctx, free_ctx, key] {
        {
            in_window w;
            run_grid(grid, block, shmem, thread_fn, ctx, key);
        }
        free_ctx(ctx);
    });
}

}  // extern "C"

/* A launch failed: name the schedule's seed in the message, so the failure can be
 * replayed (GPUARR_CUDA_EMULATE_SCHEDULE=seed); a race may fail under one seed only. */
static void
fail_launch(cudaError_t err)
{
    size_t used = strlen(error_detail);
    snprintf(error_detail + used, sizeof(error_detail) - used,
             "%s[emulated schedule seed %llu: GPUARR_CUDA_EMULATE_SCHEDULE=%llu replays it]",
             used ? " " : "", schedule_seed.load(), schedule_seed.load());
    fail(err);
}

/* The grid's blocks, in the schedule's order, on a stream's worker. */
static void
run_grid(dim3 grid, dim3 block, size_t shmem, void (*thread_fn)(void *), void *ctx,
         uint64_t key)
{
    if (schedule_is_random && !schedule_said.exchange(true)) {
        fprintf(stderr,
                "gpuarr: emulated CUDA schedule seed %llu "
                "(GPUARR_CUDA_EMULATE_SCHEDULE=random; set it to %llu to replay)\n",
                schedule_seed.load(), schedule_seed.load());
    }
    unsigned long long nthreads = (unsigned long long)block.x * block.y * block.z;
    uint64_t nblocks = (uint64_t)grid.x * grid.y * grid.z;
    block_order order(nblocks, key);
    auto started = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> g(launch_lock);
    L.fn = thread_fn;
    L.ctx = ctx;
    L.direct_barrier = 0;
    L.fault = cudaSuccess;
    L.current = nullptr;
    L.dynamic_shared.assign(shmem, 0xA5); /* not zero, like real shared memory */
    gridDim = grid;
    blockDim = block;
    for (uint64_t i = 0; i < nblocks; i++) {
        uint64_t b = order.at(i);
        blockIdx.x = (unsigned)(b % grid.x);
        blockIdx.y = (unsigned)(b / grid.x % grid.y);
        blockIdx.z = (unsigned)(b / grid.x / grid.y);
        if (watchdog_seconds > 0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
                    .count() > watchdog_seconds) {
            snprintf(error_detail, sizeof(error_detail),
                     "a kernel ran for more than %g s (GPUARR_CUDA_EMULATE_WATCHDOG, the "
                     "emulated display watchdog)",
                     watchdog_seconds);
            fail_launch(cudaErrorLaunchTimeout);
            return;
        }
        int r = run_block((unsigned)nthreads, mix64(key ^ b));
        if (r == -2) {
            fail_launch(cudaErrorLaunchOutOfResources);
            return;
        }
        if (r == -3) {
            fail_launch(cudaErrorLaunchTimeout);
            return;
        }
        if (r != 0) {
            fail_launch(cudaErrorLaunchFailure);
            return;
        }
        if (L.fault != cudaSuccess) {
            fail_launch(L.fault);
            return;
        }
    }
    /* a launch of few blocks (one serial block over a large input) passes the check
     * between blocks; it still ran too long: a GPU's watchdog would have killed it */
    if (watchdog_seconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() >
            watchdog_seconds) {
        snprintf(error_detail, sizeof(error_detail),
                 "a kernel ran for more than %g s (GPUARR_CUDA_EMULATE_WATCHDOG, the "
                 "emulated display watchdog)",
                 watchdog_seconds);
        fail_launch(cudaErrorLaunchTimeout);
    }
}

/* --- hooks for the library references of other files ----------------------------------- */

void
ga_emu_enqueue_task(cudaStream_t stream, std::function<void()> task)
{
    enqueue(resolve(stream), [t = std::move(task)] {
        in_window w;
        t();
    });
}

bool
ga_emu_on_device(const void *p, size_t n)
{
    return where(p, n) >= 0;
}

void
ga_emu_set_error_detail(const char *msg)
{
    snprintf(error_detail, sizeof(error_detail), "%s", msg);
}

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

/* --- cuFFT on the CPU FFT --------------------------------------------------------------
 *
 * The emulated cufftExec* run gpuarr's own CPU FFT (csrc/ga_cpu_fft.c, linked into this
 * plugin alone, see CMakeLists.txt) on the plan's stream, in order with the kernels
 * around them. Why not an FFT kernel of our own run through the emulated launch path:
 * the emulator tests how gpuarr drives cuFFT (plan geometry, which buffers, their
 * lengths, stream order, the C2R input that cuFFT may overwrite), not cuFFT's numerics,
 * which no CPU code can reproduce bit for bit anyway. A second FFT written for the
 * emulator would be code that real builds never run; the CPU FFT is tested against
 * NumPy already (tests/test_fft.py) and so gives the right answers to compare with.
 * What it checks like the real library: a plan exists, its type matches the exec
 * call, the buffers lie in device blocks of the plan's sizes; and it scribbles over
 * the input of a C2R transform afterwards, as cuFFT is allowed to. */

#include "ga_cpu.h"
#include "ga_error.h"

namespace {

struct emu_fft_plan {
    int64_t n, batch;
    cufftType type;
    cudaStream_t stream;
};

std::mutex fft_lock;
std::map<cufftHandle, emu_fft_plan> fft_plans;
cufftHandle fft_next = 1;

bool
fft_single(cufftType t)
{
    return t == CUFFT_C2C || t == CUFFT_R2C || t == CUFFT_C2R;
}

cufftResult
fft_exec(cufftHandle h, cufftType want, const void *in, void *out, int inverse)
{
    if (ga_emu_inject("cufft")) {
        last_error = cudaSuccess; /* a cuFFT failure is no CUDA runtime error */
        return CUFFT_EXEC_FAILED;
    }
    emu_fft_plan p;
    {
        std::lock_guard<std::mutex> g(fft_lock);
        auto it = fft_plans.find(h);
        if (it == fft_plans.end()) {
            return CUFFT_INVALID_PLAN;
        }
        p = it->second;
    }
    if (p.type != want) {
        snprintf(error_detail, sizeof(error_detail),
                 "cuFFT exec of type 0x%x on a plan of type 0x%x", (unsigned)want,
                 (unsigned)p.type);
        return CUFFT_INVALID_TYPE;
    }
    ga_fft_desc d = {};
    d.kind = want == CUFFT_R2C || want == CUFFT_D2Z   ? GA_FFT_R2C
             : want == CUFFT_C2R || want == CUFFT_Z2D ? GA_FFT_C2R
                                                      : GA_FFT_C2C;
    d.dtype = fft_single(want) ? GA_COMPLEX64 : GA_COMPLEX128;
    d.inverse = inverse;
    d.n = p.n;
    d.batch = p.batch;
    d.in = (const char *)in;
    d.out = (char *)out;
    int64_t in_len = 0, out_len = 0;
    ga_fft_line_lengths(&d, &in_len, &out_len);
    size_t csize = fft_single(want) ? 8 : 16, rsize = csize / 2;
    size_t in_bytes = (size_t)(in_len * p.batch) * (d.kind == GA_FFT_R2C ? rsize : csize);
    size_t out_bytes = (size_t)(out_len * p.batch) * (d.kind == GA_FFT_C2R ? rsize : csize);
    if (where(in, in_bytes) < 0 || where(out, out_bytes) < 0) {
        snprintf(error_detail, sizeof(error_detail),
                 "cuFFT buffers of %zu and %zu bytes (n %lld, batch %lld) do not lie in "
                 "device blocks (emulation check)",
                 in_bytes, out_bytes, (long long)p.n, (long long)p.batch);
        return CUFFT_EXEC_FAILED;
    }
    bool scribble = d.kind == GA_FFT_C2R;
    void *in_w = const_cast<void *>(in);
    enqueue(resolve(p.stream), [=] {
        in_window w;
        ga_fft_desc dd = d;
        if (ga_cpu_fft(0, &dd) != GA_OK) {
            snprintf(error_detail, sizeof(error_detail), "emulated cuFFT: %s",
                     ga_error_message());
            fail_launch(cudaErrorLaunchFailure);
            return;
        }
        if (scribble) {
            memset(in_w, 0xff, in_bytes); /* NaNs: a caller that reads it again sees */
        }
    });
    return CUFFT_SUCCESS;
}

}  // namespace

extern "C" {

cufftResult
cufftPlanMany(cufftHandle *plan, int rank, int *n, int *inembed, int istride, int idist,
              int *onembed, int ostride, int odist, cufftType type, int batch)
{
    if (ga_emu_inject("cufftPlanMany")) {
        last_error = cudaSuccess;
        return CUFFT_SETUP_FAILED;
    }
    if (rank != 1 || n == nullptr || n[0] < 1 || batch < 1) {
        return CUFFT_INVALID_SIZE;
    }
    if (inembed != nullptr || onembed != nullptr) {
        (void)istride, (void)idist, (void)ostride, (void)odist;
        return CUFFT_NOT_SUPPORTED; /* the emulation serves the default layout only */
    }
    if (type != CUFFT_C2C && type != CUFFT_Z2Z && type != CUFFT_R2C && type != CUFFT_D2Z &&
        type != CUFFT_C2R && type != CUFFT_Z2D) {
        return CUFFT_INVALID_TYPE;
    }
    std::lock_guard<std::mutex> g(fft_lock);
    cufftHandle h = fft_next++;
    fft_plans[h] = emu_fft_plan{n[0], batch, type, nullptr};
    *plan = h;
    return CUFFT_SUCCESS;
}

cufftResult
cufftSetStream(cufftHandle plan, cudaStream_t stream)
{
    std::lock_guard<std::mutex> g(fft_lock);
    auto it = fft_plans.find(plan);
    if (it == fft_plans.end()) {
        return CUFFT_INVALID_PLAN;
    }
    it->second.stream = stream;
    return CUFFT_SUCCESS;
}

cufftResult
cufftDestroy(cufftHandle plan)
{
    std::lock_guard<std::mutex> g(fft_lock);
    /* queued executions captured the plan's numbers, not the plan */
    return fft_plans.erase(plan) ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
}

cufftResult
cufftExecC2C(cufftHandle plan, cufftComplex *idata, cufftComplex *odata, int direction)
{
    return fft_exec(plan, CUFFT_C2C, idata, odata, direction == CUFFT_INVERSE);
}

cufftResult
cufftExecZ2Z(cufftHandle plan, cufftDoubleComplex *idata, cufftDoubleComplex *odata,
             int direction)
{
    return fft_exec(plan, CUFFT_Z2Z, idata, odata, direction == CUFFT_INVERSE);
}

cufftResult
cufftExecR2C(cufftHandle plan, cufftReal *idata, cufftComplex *odata)
{
    return fft_exec(plan, CUFFT_R2C, idata, odata, 0);
}

cufftResult
cufftExecD2Z(cufftHandle plan, cufftDoubleReal *idata, cufftDoubleComplex *odata)
{
    return fft_exec(plan, CUFFT_D2Z, idata, odata, 0);
}

cufftResult
cufftExecC2R(cufftHandle plan, cufftComplex *idata, cufftReal *odata)
{
    return fft_exec(plan, CUFFT_C2R, idata, odata, 1);
}

cufftResult
cufftExecZ2D(cufftHandle plan, cufftDoubleComplex *idata, cufftDoubleReal *odata)
{
    return fft_exec(plan, CUFFT_Z2D, idata, odata, 1);
}

}  // extern "C"
