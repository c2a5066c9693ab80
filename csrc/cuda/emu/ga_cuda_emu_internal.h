/* ga_cuda_emu_internal.h: what the parts of the emulated runtime share (not kernels).
 *
 * The emulated plugin's CUDA runtime, cuBLAS and cuFFT are split by concern:
 *   ga_cuda_emu_state.cpp    the state below, the address map, memcheck's window, the
 *                            hooks for the library references of other files;
 *   ga_cuda_emu_streams.cpp  the stream queues and their workers, streams and events;
 *   ga_cuda_emu_devices.cpp  devices (GPUARR_CUDA_EMULATE_* read at init), errors;
 *   ga_cuda_emu_memory.cpp   device and pinned memory, copies, memsets;
 *   ga_cuda_emu_fibers.cpp   fibers and their switching, warp primitives' resolution;
 *   ga_cuda_emu_launch.cpp   the schedule, a block and a grid run, the device-side
 *                            barriers, warp calls, spin waits and faults;
 *   ga_cuda_emu_cublas.cpp   the cuBLAS reference;
 *   ga_cuda_emu_cufft.cpp    cuFFT on the CPU FFT;
 *   ga_cuda_emu_cusolver.cpp cuSOLVER on the host's LAPACK (through the hooks of
 *                            ga_cuda_emu.h, not this header).
 * Everything declared here lives in namespace ga_emu with hidden visibility: the
 * plugin's exports are fixed by its version script (csrc/cuda/CMakeLists.txt), and
 * the names (fail, where, resolve...) stay out of the kernels' way.
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
 * of step 3 is the schedule's (GPUARR_CUDA_EMULATE_SCHEDULE, "the schedule" in
 * ga_cuda_emu_launch.cpp). A thread that reaches __syncthreads in step 2 (a barrier
 * thread 0 skipped) cannot be suspended: the launch fails with cudaErrorLaunchFailure
 * and ga_emu_take_error_detail() says why. Fiber stacks (256 KiB, 512 KiB under
 * AddressSanitizer, a guard page below, reserved lazily) are pooled for the process; a
 * switch saves only the callee-saved registers on x86-64 ("Switching fibers" in
 * ga_cuda_emu_fibers.cpp). Under AddressSanitizer every switch is announced with
 * __sanitizer_start/finish_switch_fiber.
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
 * streams (what the backend uses) are ordered only by events. A queue is bounded as a
 * GPU's is: a host thread that queues work waits while the stream holds
 * GPUARR_CUDA_EMULATE_QUEUE_DEPTH tasks (default 1024; queue_depth in
 * ga_cuda_emu_streams.cpp). Launches from all
 * workers are still serialised by one lock (`__shared__` is static storage). A fault
 * inside a task (a failed launch, a timeout) is recorded on the device and returned
 * by the next call that waits on it.
 *
 * Memory. Device blocks are host blocks recorded in an address map with their device,
 * so copies check that device pointers really are device memory (a swapped argument
 * fails like an illegal address, instead of silently copying host memory), and
 * cuBLAS checks that the whole extent of each strided operand lies in one block.
 * Under AddressSanitizer the host may not touch device blocks ("Memcheck" in
 * ga_cuda_emu_state.cpp).
 */
#ifndef GA_CUDA_EMU_INTERNAL_H
#define GA_CUDA_EMU_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

/* after the standard headers: it defines __noinline__, which they use */
#include "ga_cuda_emu.h"

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

/* A numeric GPUARR_CUDA_EMULATE_* setting (test only; ga_cuda_emu_devices.cpp): `dflt`
 * when unset or empty, the value when it is a number from `lo` to `hi` (an integer
 * when `integer`), else `dflt` with a warning on stderr naming the setting and its
 * range: a misspelt setting used to be ignored without a word. */
extern "C" double ga_emu_env_number(const char *name, double lo, double hi, int integer,
                                    double dflt);

/* A call that GPUARR_CUDA_EMULATE_FAIL names fails with an illegal address (test only;
 * ga_emu_inject in ga_cuda_emu_devices.cpp). */
#define GA_EMU_FAIL_POINT(name)                                                        \
    do {                                                                               \
        if (ga_emu_inject(name)) {                                                     \
            return cudaErrorIllegalAddress;                                            \
        }                                                                              \
    } while (0)

/* A stream capture in progress (ga_cuda_emu_graphs.cpp): what was queued on its
 * stream, kept as the graph's nodes. */
struct ga_emu_capture {
    uint64_t id;
    int mode; /* cudaStreamCaptureMode */
    std::thread::id owner;
    std::vector<std::function<void()>> nodes;
    cudaError_t broken = cudaSuccess; /* the first forbidden call's error */
};

/* The opaque handles of ga_cuda_emu.h (cudaStream_t, cudaEvent_t). */
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
    /* the capture in progress on it (ga_cuda_emu_graphs.cpp), or NULL; guarded by m */
    ga_emu_capture *capture = nullptr;
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
    /* the capture it was last recorded in (its id), 0: recorded outside any */
    uint64_t captured = 0;
};

/* Switching fibers: see ga_cuda_emu_fibers.cpp, which defines ga_emu_switch. */
#if defined(__x86_64__) && !(defined(__CET__) && (__CET__ & 2))
#define GA_EMU_FAST_SWITCH 1
/* Save rbp, rbx, r12-r15, MXCSR and the x87 control word on the current stack, store
 * the stack pointer in *from, load `to` and restore the same from it. A fiber's first
 * switch "returns" into the trampoline that start() left on its stack. */
extern "C" __attribute__((visibility("hidden"))) void ga_emu_switch(void **from, void *to);
#else
#define GA_EMU_FAST_SWITCH 0
#endif

#pragma GCC visibility push(hidden)
namespace ga_emu {

/* --- state (ga_cuda_emu_state.cpp) --------------------------------------------------- */

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

extern std::mutex state_lock; /* devices, the address map */
extern std::mutex launch_lock;
extern int ndevices;
/* the emulated device behind each visible number (CUDA_VISIBLE_DEVICES, as the
 * registry read it at import: gpuarr_cuda_emu_set_visible) */
extern int physical_device[64];
extern size_t memory_limit;
extern int multiprocessors; /* GPUARR_CUDA_EMULATE_SMS; an H100's count */
extern ga_emu_device devices[64];
extern double watchdog_seconds; /* GPUARR_CUDA_EMULATE_WATCHDOG; 0: none */
extern long spin_limit;         /* GPUARR_CUDA_EMULATE_SPINS: __nanosleep calls per block */
/* GPUARR_CUDA_EMULATE_SCHEDULE: the seed of the order of blocks and threads (see
 * "the schedule" in ga_cuda_emu_launch.cpp); "random" draws one per process and says
 * which. */
constexpr unsigned long long default_schedule_seed = 1;
extern std::atomic<unsigned long long> schedule_seed;
extern unsigned long long random_schedule_seed; /* 0: none drawn yet (state_lock) */
extern std::atomic<bool> schedule_said;         /* the drawn seed was printed */
extern std::atomic<bool> schedule_is_random;
/* A fault found by a worker (state_lock): reported by the next wait on the device. */
extern cudaError_t device_fault[64];
extern char device_fault_detail[64][512];
extern std::map<uintptr_t, block_info> blocks; /* start address -> block */
extern thread_local int current_device;
extern std::atomic<long long> set_device_calls;
extern std::atomic<long long> occupancy_calls; /* the occupancy calculator, asked */
extern thread_local cudaError_t last_error;
extern thread_local char error_detail[512];

/* Record `err` as the thread's last error and return it. */
cudaError_t fail(cudaError_t err);
/* error_detail = fmt with one string argument. */
void detail(const char *fmt, const char *arg);
/* The block that holds [p, p + n), or NULL; its start in *start. Caller holds
 * state_lock. */
block_info *find_block(const void *p, size_t n, uintptr_t *start);
/* Device code may touch only the first n of the `size` bytes at offset `off` of `b`.
 * Caller holds state_lock. */
void set_extent(block_info &b, size_t off, size_t size, size_t n);
/* Memcheck's shadow of one block: opened to its extent, or poisoned. */
void shadow_open(uintptr_t start, const block_info &b);
void shadow_close(uintptr_t start, const block_info &b);
extern int window_users; /* tasks in memcheck's window; state_lock */
void window_enter(void);
void window_leave(void);

/* A task that touches device memory: the window is open for its lifetime. */
struct in_window {
    in_window() { window_enter(); }
    ~in_window() { window_leave(); }
    in_window(const in_window &) = delete;
    in_window &operator=(const in_window &) = delete;
};

/* The device of the block that holds [p, p + n): -1 for pinned host memory, -2 for
 * anything else (pageable host memory). */
int where(const void *p, size_t n);

inline int
valid_device(int d)
{
    return d >= 0 && d < ndevices;
}

/* --- stream queues (ga_cuda_emu_streams.cpp) ----------------------------------------- */

/* The stream a cudaStream_t means (0, cudaStreamLegacy, cudaStreamPerThread resolved). */
ga_emu_stream *resolve(cudaStream_t s);
/* Queue `task` on `s`, after the legacy stream's ordering. */
void enqueue(ga_emu_stream *s, std::function<void()> task);
/* The device's fault, if a worker recorded one, as the result of a wait. */
cudaError_t fault_of(int dev);
/* Wait on the host for everything queued so far on `s` / on every stream of `dev`. */
cudaError_t host_wait(ga_emu_stream *s);
cudaError_t device_wait(int dev);

/* --- stream capture (ga_cuda_emu_graphs.cpp) ----------------------------------------- */

/* Keep `task` as a node when `s` is capturing (true), else false. */
bool capture_take(ga_emu_stream *s, std::function<void()> &task);
/* The id of the capture on `s`, 0 if none. */
uint64_t capture_id(ga_emu_stream *s);
/* cudaSuccess, or the error of `what` (a call that waits for or queries `s`, or for
 * every stream of `dev` when s is NULL) made while a capture it touches runs: the
 * capture is invalidated and the error recorded. */
cudaError_t capture_forbids(ga_emu_stream *s, int dev, const char *what);
/* cudaSuccess, or the error of cudaMalloc on a thread that owns a capture not begun in
 * relaxed mode (which invalidates it). */
cudaError_t capture_forbids_malloc(void);

/* --- fibers (ga_cuda_emu_fibers.cpp) ------------------------------------------------- */

enum { F_IDLE, F_AT_BARRIER, F_AT_WARP, F_READY, F_DONE };

/* Thrown by __nanosleep (ga_cuda_emu_launch.cpp) out of a spin wait that cannot end;
 * caught where the emulated thread's kernel call began (run_thread), on the same
 * stack. */
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

/* The pool of fibers (never destroyed) and the running launch (launch_lock). */
extern std::vector<fiber *> &fiber_pool;
extern launch_state L;

/* Run the kernel for the current thread; false when it was abandoned in a spin wait. */
bool run_thread(void);
/* Fiber i of the pool, made when first asked for; NULL when no stack could be had. */
fiber *fiber_get(size_t i);
void set_thread_index(uint3 t);
/* Thread index of the block's linear thread i. */
uint3 thread_of(unsigned i);
/* Run `f` until it reaches a barrier or ends. */
void resume(fiber *f);
/* Start `f` as thread `index` of the block; returns its state when it stops. */
int start(fiber *f, unsigned index);
/* Complete every warp primitive whose lanes have all arrived; the number of lanes
 * released, or -1 (with error_detail) on a malformed call. */
int resolve_warps(unsigned nthreads);
/* Every lane still at a warp primitive names a lane that will never come: say which
 * (error_detail); returns -1. */
int missing_lane_error(unsigned nthreads);

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

/* --- launches (ga_cuda_emu_launch.cpp) ----------------------------------------------- */

/* A launch failed: err as the last error, the schedule's seed in the detail. */
void fail_launch(cudaError_t err);

}  // namespace ga_emu
#pragma GCC visibility pop


/* The core hands the emulated plugin CUDA_VISIBLE_DEVICES as it read it at import (NULL:
 * unset) before the entry point makes the devices: the emulated runtime then shows only
 * those, renumbered from 0, as the driver does (core/ga_visible_devices.h). */
extern "C" __attribute__((visibility("default"))) void
gpuarr_cuda_emu_set_visible(const char *value);

#endif
