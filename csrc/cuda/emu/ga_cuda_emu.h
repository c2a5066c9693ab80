/* ga_cuda_emu.h: just enough of CUDA to run the backend's .cu files on the CPU.
 *
 * Included by ga_cuda.h in place of <cuda_runtime.h> when GA_CUDA_EMULATION is
 * defined; the emulated plugin (libgpuarr_cuda_emu.so) is the same sources compiled
 * by the host C++ compiler through two-line .cpp wrappers. It is a test harness: it
 * checks host logic, index math, launch geometry, shared-memory algorithms and the
 * cuBLAS argument convention, warp primitives in lockstep (each *_sync call is a
 * meeting point of its mask's lanes), vector alignment, under AddressSanitizer if
 * asked. It cannot check real cuBLAS or timing.
 *
 * Execution model (documented in ga_cuda_emu_internal.h in more detail):
 *   - each stream (and each device's legacy default stream) is a queue run by its own
 *     worker thread: launches, async copies, memsets and event records enqueue and
 *     return; the calls that wait on a GPU wait here (see ga_cuda_emu_streams.cpp);
 *   - a launch runs its blocks one after another. Thread 0 of each block runs on a
 *     fiber; if it reaches __syncthreads or a warp primitive the whole block runs on
 *     fibers (one per CUDA thread, switched at each barrier and warp primitive),
 *     otherwise the remaining threads are plain function calls (fast: no fiber, no OS
 *     thread; safe only because such a block has no intra-block communication). A
 *     barrier or warp primitive reached by some thread when thread 0 of its block
 *     reached none is reported as a launch failure;
 *   - the schedule is a GPU's, not index order: the blocks of a launch run in a
 *     pseudo-random order, and so do the threads of a block between two barriers
 *     (thread 0 first; warps interleave at warp primitives; the plain calls of a
 *     barrier-free block too), drawn from GPUARR_CUDA_EMULATE_SCHEDULE=<seed> (a
 *     decimal integer; default a fixed seed; "random" draws one and prints it to
 *     stderr at the first launch; anything else is reported on stderr and the default
 *     used), the stream and the launch's number on it. The same seed replays the same
 *     schedule, and a failed launch names its seed in the error, so a race (a shared
 *     memory read with no __syncthreads after the write) that fails under one seed can
 *     be replayed;
 *   - one global lock serialises launches, so `__shared__` (mapped to `static`) is
 *     private to the block that runs;
 *   - each device looks like an H100 (GPUARR_CUDA_EMULATE_SMS multiprocessors, default
 *     132; 1024 threads a block, 48 KiB shared memory, grid up to (2^31-1, 65535,
 *     65535)); a launch beyond a limit fails with the GPU's error;
 *   - device memory is host memory with a per-device limit
 *     (GPUARR_CUDA_EMULATE_MEMORY bytes, default 1 GiB), so out-of-memory is testable;
 *     pinned memory (cudaHostAlloc) is a kind of its own, so copies from it stay
 *     asynchronous and copies from pageable memory are staged, as on a GPU;
 *   - memcheck under AddressSanitizer: device blocks are poisoned for host code and
 *     opened only while device work (a launch, copy, memset, cuBLAS call) runs on
 *     some stream, so a host dereference of a device pointer is a use-after-poison
 *     report; device work may touch only the bytes asked for (cudaMalloc's size, or
 *     what ga_emu_mem_extent says), so a read one byte past them is reported although
 *     blocks start 256-byte aligned (ga_cuda_emu_state.cpp, "Memcheck", says what
 *     the window cannot catch);
 *   - device math is not host math: the transcendental functions the kernels call
 *     (sinf, exp, pow, ...) return the correctly rounded value moved by a
 *     deterministic 0..k ulps, k the CUDA Programming Guide's bound, so a test that
 *     wants bit-identical floats across devices fails here as on a GPU
 *     (ga_cuda_emu_math.h; sqrt and division stay correctly rounded);
 *   - test only: GPUARR_CUDA_EMULATE_DLPACK=cuda makes the plugin say that its
 *     devices' memory is CUDA memory other libraries may use (ga_backend's
 *     shares_memory), so gpuarr exports and imports kDLCUDA capsules and the DLPack
 *     stream hand-off can be tested against fake producers and consumers that use
 *     this same emulated runtime through the plugin's gpuarr_cuda_selftest_dl_*
 *     entries (no real CUDA library can read emulated memory);
 *   - spin waits: a block may wait (__nanosleep in a loop) for flags that blocks
 *     which ran before it set (a one-pass scan taking tiles from an atomic counter);
 *     a wait that does not end in GPUARR_CUDA_EMULATE_SPINS pauses is a deadlock and
 *     fails the launch (cudaErrorLaunchTimeout), naming the waiting thread;
 *   - test only: GPUARR_CUDA_EMULATE_FAIL=<name> makes every call of the runtime
 *     function <name> (or "launch" for kernel launches) fail with
 *     cudaErrorIllegalAddress, read at each call.
 * Error numbers, names and the cuBLAS argument convention are the real ones.
 */
#ifndef GA_CUDA_EMU_H
#define GA_CUDA_EMU_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tuple>
#include <type_traits>
#include <utility>

/* --- qualifiers ----------------------------------------------------------------- */

#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ static
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

/* --- geometry ------------------------------------------------------------------- */

struct uint3 {
    unsigned x, y, z;
};

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz)
    {
    }
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

/* Set by the launcher before each emulated thread (or fiber) runs. Plain globals:
 * launches are serialised by one lock and __syncthreads is an opaque call, so the
 * compiler reloads them after a barrier. */
extern "C++" {
extern uint3 threadIdx;
extern uint3 blockIdx;
extern dim3 blockDim;
extern dim3 gridDim;
}
static const int warpSize = 32;

/* --- errors ----------------------------------------------------------------------- */

/* The real numbers (driver_types.h of CUDA 13), so messages and tests match. */
typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorStubLibrary = 34,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorIllegalState = 401,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchTimeout = 702,
    cudaErrorMisalignedAddress = 716,
    cudaErrorPeerAccessAlreadyEnabled = 704,
    cudaErrorPeerAccessNotEnabled = 705,
    cudaErrorLaunchFailure = 719,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorStreamCaptureIsolation = 905,
    cudaErrorCapturedEvent = 907,
    cudaErrorStreamCaptureWrongThread = 908,
    cudaErrorUnknown = 999
} cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01

struct ga_emu_stream;
struct ga_emu_event;
typedef struct ga_emu_stream *cudaStream_t;
typedef struct ga_emu_event *cudaEvent_t;
/* The special handles of driver_types.h, with the same values (DLPack names streams
 * by these numbers too): the current device's legacy default stream, and the calling
 * host thread's per-thread default stream. */
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)

/* The fields the backend reads; the rest of the real struct is left out on purpose
 * (a new use fails to compile here and must be added). */
struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int warpSize;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int major;
    int minor;
    int multiProcessorCount;
    int maxThreadsPerMultiProcessor;
    int regsPerBlock;
    int regsPerMultiprocessor;
    size_t sharedMemPerMultiprocessor;
    int maxBlocksPerMultiProcessor;
    int canMapHostMemory;
    int unifiedAddressing;
};

extern "C" {
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDriverGetVersion(int *version);
cudaError_t cudaRuntimeGetVersion(int *version);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);

cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorName(cudaError_t err);
const char *cudaGetErrorString(cudaError_t err);

cudaError_t cudaMalloc(void **ptr, size_t size);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned flags);
cudaError_t cudaFreeHost(void *ptr);

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                            cudaStream_t stream);
cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_dev, const void *src, int src_dev,
                                size_t n, cudaStream_t stream);
cudaError_t cudaMemset(void *ptr, int value, size_t n);
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t n, cudaStream_t stream);

cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags);

/* Stream capture and graphs (ga_cuda_emu_graphs.cpp). The work queued on a capturing
 * stream is kept as the graph's nodes instead of run; a graph launch runs them in
 * order as one task of the launching stream. What CUDA forbids during a capture fails
 * here too and invalidates it (cudaStreamEndCapture then says
 * cudaErrorStreamCaptureInvalidated): a wait for or query of the capturing stream, a
 * device-wide wait on its device (cudaDeviceSynchronize, cudaFree), cudaMalloc on the
 * capturing thread unless the mode is relaxed, a wait across the capture's edge
 * (cudaErrorStreamCaptureIsolation); an event recorded inside it cannot be queried or
 * waited for on the host (cudaErrorCapturedEvent). */
typedef struct ga_emu_graph *cudaGraph_t;
typedef struct ga_emu_graph_exec *cudaGraphExec_t;
enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2
};
enum cudaStreamCaptureStatus {
    cudaStreamCaptureStatusNone = 0,
    cudaStreamCaptureStatusActive = 1,
    cudaStreamCaptureStatusInvalidated = 2
};
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph);
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                 unsigned long long flags);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);

cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
/* Emulator only: a completed timing event's stamp, in steady_clock nanoseconds (the
 * host's monotonic clock), for the profiler's timeline. */
cudaError_t ga_emu_event_time_ns(cudaEvent_t event, int64_t *ns);

/* An H100-like estimate from the block size and dynamic shared memory alone (the
 * emulator knows no register counts): min(2048 / threads, 32, shared memory). */
cudaError_t ga_emu_occupancy(int *blocks, int block_size, size_t dynamic_shared);

cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer);
cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned flags);

/* --- the harness ------------------------------------------------------------- */

/* Set the number of emulated devices (gpuarr_cuda_backend(N) calls it first). */
void ga_emu_init(int ndevices);

/* Run one launch: `thread_fn(ctx)` once per CUDA thread of `grid` x `block`, with
 * threadIdx/blockIdx set. Records errors for cudaGetLastError (bad geometry, a
 * divergent barrier, an injected failure). */
void ga_emu_run(dim3 grid, dim3 block, size_t shmem, cudaStream_t stream,
                void (*thread_fn)(void *), void *ctx, void (*free_ctx)(void *));

/* Test only: queue a task that keeps `stream` busy for `ms` milliseconds without
 * launching a kernel (launches are serialised by one lock, so a slow kernel would
 * stall every stream; this stalls only its own), so a test can make work on one
 * stream reliably late and show a missing cross-stream wait. */
cudaError_t ga_emu_stream_sleep(cudaStream_t stream, unsigned ms);

/* Test only (exported, read with ctypes): each stream's queue depth, the bound past
 * which a host thread that queues work waits for the stream
 * (GPUARR_CUDA_EMULATE_QUEUE_DEPTH, default 1024, as a GPU's launch queue), and the
 * most tasks any stream's queue has held at once so far in the process. */
__attribute__((visibility("default"))) void gpuarr_cuda_emu_queue_stats(size_t *depth,
                                                                        size_t *high_water);

/* 1 when `stream` is a stream handle of this process (0, cudaStreamLegacy,
 * cudaStreamPerThread, or one cudaStreamCreate made), else 0: a GPU would crash or
 * misbehave on a made-up handle from another library; the emulation says so. */
int ga_emu_stream_known(cudaStream_t stream);

/* Memcheck (ASan builds; see ga_cuda_emu_state.cpp): device work queued on `stream`
 * after this call may touch only the first `n` of the `size` bytes at `p`, a range
 * inside one cudaMalloc block (the caching allocator's request inside its rounded
 * block, a whole allocation or a piece of a split one). The change is a task on
 * `stream`, so work queued before it keeps the old extent (a block the cache hands out
 * again may still be read by its previous owner's work). A no-op in other builds. */
void ga_emu_mem_extent(void *p, size_t size, size_t n, cudaStream_t stream);

/* Start of the launch's dynamic shared memory (`extern __shared__`). */
void *ga_emu_dynamic_shared(void);

/* Barriers: a yield to the block's scheduler. The _count/_and/_or forms reduce
 * `pred` over the block like the CUDA intrinsics. */
void __syncthreads(void);
int __syncthreads_count(int pred);
int __syncthreads_and(int pred);
int __syncthreads_or(int pred);
void __threadfence(void);
void __threadfence_block(void);
/* A pause in a spin wait (a thread waiting for another block's flag). Blocks run one
 * after another here, so what a waiting block waits for is done before it starts, or
 * never: the GPUARR_CUDA_EMULATE_SPINS-th call (default 10000) in one block ends the
 * launch with cudaErrorLaunchTimeout and says which thread waited (a kernel whose
 * blocks wait for blocks that run later would hang a GPU too, when they are not
 * resident together; emulation check). */
void __nanosleep(unsigned ns);

/* Why the last emulation check failed ("" if none), and forget it: the backend
 * appends it to its CUDA error messages. */
const char *ga_emu_take_error_detail(void);

/* Test-only: nonzero when GPUARR_CUDA_EMULATE_FAIL names `what`; also records the
 * failure for cudaGetLastError. */
int ga_emu_inject(const char *what);
}

/* Launch a kernel: arguments are converted to the kernel's parameter types once (as
 * CUDA does when it copies them to the device), and every emulated thread gets its
 * own copy of them. */
template <typename F, typename Tuple, size_t... I>
static inline void
ga_emu_apply(F f, Tuple &t, std::index_sequence<I...>)
{
    f(std::get<I>(t)...);
}

template <typename... P, typename... A>
static inline void
ga_emu_launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shmem, cudaStream_t stream,
              A &&...args)
{
    static_assert(sizeof...(P) == sizeof...(A), "kernel called with a wrong argument count");
    struct closure {
        void (*k)(P...);
        std::tuple<typename std::decay<P>::type...> params;
        static void release(void *c) { delete static_cast<closure *>(c); }
        static void run(void *c)
        {
            closure *self = static_cast<closure *>(c);
            /* a copy per thread: a kernel may modify its by-value parameters */
            std::tuple<typename std::decay<P>::type...> mine = self->params;
            ga_emu_apply(self->k, mine, std::index_sequence_for<P...>{});
        }
    };
    /* on the heap: the launch runs on the stream's worker after this returns */
    closure *c = new closure{kernel, std::tuple<typename std::decay<P>::type...>(
                                         static_cast<typename std::decay<P>::type>(args)...)};
    ga_emu_run(grid, block, shmem, stream, &closure::run, c, &closure::release);
}

template <typename F>
static inline cudaError_t
cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, F kernel, int block_size,
                                              size_t dynamic_shared)
{
    (void)kernel;
    return ga_emu_occupancy(blocks, block_size, dynamic_shared);
}

/* Dynamic shared memory of a launch; see GA_DYNAMIC_SHARED in ga_cuda.h. */
#define GA_EMU_DYNAMIC_SHARED(T, name) T *name = static_cast<T *>(ga_emu_dynamic_shared())

/* --- atomics: emulated threads never run at the same time, so these are plain
 * read-modify-writes that return the old value like CUDA's. ------------------------ */

template <typename T>
static inline T
atomicAdd(T *p, T v)
{
    T old = *p;
    *p = old + v;
    return old;
}
template <typename T>
static inline T
atomicSub(T *p, T v)
{
    T old = *p;
    *p = old - v;
    return old;
}
template <typename T>
static inline T
atomicExch(T *p, T v)
{
    T old = *p;
    *p = v;
    return old;
}
template <typename T>
static inline T
atomicMax(T *p, T v)
{
    T old = *p;
    *p = old < v ? v : old;
    return old;
}
template <typename T>
static inline T
atomicMin(T *p, T v)
{
    T old = *p;
    *p = v < old ? v : old;
    return old;
}
template <typename T>
static inline T
atomicCAS(T *p, T compare, T v)
{
    T old = *p;
    *p = old == compare ? v : old;
    return old;
}
template <typename T>
static inline T
atomicAnd(T *p, T v)
{
    T old = *p;
    *p = old & v;
    return old;
}
template <typename T>
static inline T
atomicOr(T *p, T v)
{
    T old = *p;
    *p = old | v;
    return old;
}
template <typename T>
static inline T
atomicXor(T *p, T v)
{
    T old = *p;
    *p = old ^ v;
    return old;
}

/* --- warp primitives -------------------------------------------------------------
 * Lockstep semantics: each primitive is a meeting point of the lanes its mask names
 * (ga_cuda_emu_launch.cpp, "Warps"). The calling lane must be in its mask; a mask
 * naming a lane that exited, waits at __syncthreads or does not exist fails the launch
 * with cudaErrorLaunchFailure, as compute-sanitizer's synccheck reports it. A shuffle
 * from a lane outside the mask returns the caller's own value (undefined on a GPU). */

enum {
    GA_EMU_SHFL_IDX,
    GA_EMU_SHFL_UP,
    GA_EMU_SHFL_DOWN,
    GA_EMU_SHFL_XOR,
    GA_EMU_BALLOT,
    GA_EMU_SYNCWARP,
    GA_EMU_MATCH_ANY
};

extern "C" {
/* One lane's arrival at a warp primitive: `value` is its operand (shuffled bits, or
 * the predicate), `arg` the lane argument, `width` the shuffle's segment. */
unsigned long long ga_emu_warp(int op, unsigned mask, unsigned long long value, int arg,
                               int width);
/* The lanes of the caller's warp that exist and have not exited. */
unsigned __activemask(void);
/* A fault in an emulated thread (a misaligned vector access): the launch fails with
 * `err` when its block ends; the thread goes on with a zero value. */
void ga_emu_fault(cudaError_t err, const char *what, const void *p);
}

template <typename T>
static inline T
ga_emu_shfl(int op, unsigned mask, T v, int arg, int width)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                  "warp shuffles move at most 8 bytes of plain data");
    unsigned long long bits = 0;
    memcpy(&bits, &v, sizeof(T));
    bits = ga_emu_warp(op, mask, bits, arg, width);
    T r;
    memcpy(&r, &bits, sizeof(T));
    return r;
}
template <typename T>
static inline T
__shfl_sync(unsigned mask, T v, int src_lane, int width = warpSize)
{
    return ga_emu_shfl(GA_EMU_SHFL_IDX, mask, v, src_lane, width);
}
template <typename T>
static inline T
__shfl_up_sync(unsigned mask, T v, unsigned delta, int width = warpSize)
{
    return ga_emu_shfl(GA_EMU_SHFL_UP, mask, v, (int)delta, width);
}
template <typename T>
static inline T
__shfl_down_sync(unsigned mask, T v, unsigned delta, int width = warpSize)
{
    return ga_emu_shfl(GA_EMU_SHFL_DOWN, mask, v, (int)delta, width);
}
template <typename T>
static inline T
__shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = warpSize)
{
    return ga_emu_shfl(GA_EMU_SHFL_XOR, mask, v, lane_mask, width);
}
static inline unsigned
__ballot_sync(unsigned mask, int pred)
{
    return (unsigned)ga_emu_warp(GA_EMU_BALLOT, mask, pred != 0, 0, warpSize);
}
static inline int
__any_sync(unsigned mask, int pred)
{
    return __ballot_sync(mask, pred) != 0;
}
static inline int
__all_sync(unsigned mask, int pred)
{
    return __ballot_sync(mask, pred) == mask;
}
/* The lanes of `mask` whose `value` equals the caller's (sm_70+). */
template <typename T>
static inline unsigned
__match_any_sync(unsigned mask, T value)
{
    static_assert(sizeof(T) <= 8 && std::is_integral<T>::value,
                  "__match_any_sync compares 32- or 64-bit integers");
    return (unsigned)ga_emu_warp(GA_EMU_MATCH_ANY, mask, (unsigned long long)value, 0,
                                 warpSize);
}
static inline void
__syncwarp(unsigned mask = 0xffffffffu)
{
    ga_emu_warp(GA_EMU_SYNCWARP, mask, 0, 0, warpSize);
}

/* --- vector types: CUDA's alignment (a 16-byte type is 16-byte aligned, which is
 * what lets a GPU load it in one instruction). cuComplex is float2, as in CUDA. --- */

#define GA_EMU_VEC2(T, name, a)                                                        \
    struct __attribute__((aligned(a))) name {                                          \
        T x, y;                                                                        \
    };                                                                                 \
    static inline name make_##name(T x, T y)                                           \
    {                                                                                  \
        return name{x, y};                                                             \
    }
#define GA_EMU_VEC4(T, name, a)                                                        \
    struct __attribute__((aligned(a))) name {                                          \
        T x, y, z, w;                                                                  \
    };                                                                                 \
    static inline name make_##name(T x, T y, T z, T w)                                 \
    {                                                                                  \
        return name{x, y, z, w};                                                       \
    }
GA_EMU_VEC2(float, float2, 8)
GA_EMU_VEC4(float, float4, 16)
GA_EMU_VEC2(int, int2, 8)
GA_EMU_VEC4(int, int4, 16)
GA_EMU_VEC2(unsigned, uint2, 8)
GA_EMU_VEC4(unsigned, uint4, 16)
GA_EMU_VEC2(double, double2, 16)
GA_EMU_VEC2(long long, longlong2, 16)
GA_EMU_VEC2(unsigned long long, ulonglong2, 16)
#undef GA_EMU_VEC2
#undef GA_EMU_VEC4

/* --- device intrinsics with a host meaning ---------------------------------------- */

/* CUDA's min/max overloads accept mixed argument types */
template <typename A, typename B>
static inline typename std::common_type<A, B>::type
min(A a, B b)
{
    return b < a ? b : a;
}
template <typename A, typename B>
static inline typename std::common_type<A, B>::type
max(A a, B b)
{
    return a < b ? b : a;
}

/* Checked as a GPU would: an address not aligned to the type's size is a fault. */
template <typename T>
static inline T
__ldg(const T *p)
{
    if ((uintptr_t)p % alignof(T) != 0) {
        ga_emu_fault(cudaErrorMisalignedAddress, "__ldg", p);
        return T{};
    }
    return *p;
}
static inline int
__popc(unsigned v)
{
    return __builtin_popcount(v);
}
static inline int
__popcll(unsigned long long v)
{
    return __builtin_popcountll(v);
}
static inline int
__clz(int v)
{
    return v == 0 ? 32 : __builtin_clz((unsigned)v);
}
static inline int
__clzll(long long v)
{
    return v == 0 ? 64 : __builtin_clzll((unsigned long long)v);
}
static inline int
__ffs(int v)
{
    return __builtin_ffs(v);
}
static inline int
__ffsll(long long v)
{
    return __builtin_ffsll(v);
}
static inline float
__int_as_float(int v)
{
    float f;
    memcpy(&f, &v, sizeof(f));
    return f;
}
static inline int
__float_as_int(float f)
{
    int v;
    memcpy(&v, &f, sizeof(v));
    return v;
}
static inline double
__longlong_as_double(long long v)
{
    double d;
    memcpy(&d, &v, sizeof(d));
    return d;
}
static inline long long
__double_as_longlong(double d)
{
    long long v;
    memcpy(&v, &d, sizeof(v));
    return v;
}
static inline unsigned
__umulhi(unsigned a, unsigned b)
{
    return (unsigned)(((unsigned long long)a * b) >> 32);
}
static inline unsigned long long
__umul64hi(unsigned long long a, unsigned long long b)
{
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline float
rsqrtf(float x)
{
    return 1.0f / sqrtf(x);
}
static inline double
rsqrt(double x)
{
    return 1.0 / sqrt(x);
}
static inline float
__fdividef(float a, float b)
{
    return a / b;
}
/* glibc declares these two itself */
#define __expf(x) expf(x)
#define __logf(x) logf(x)

/* --- cuBLAS: a reference implementation with the real API's types, numbers and
 * column-major argument convention (only what ga_cublas.cu calls). ------------------- */

typedef enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_ARCH_MISMATCH = 8,
    CUBLAS_STATUS_EXECUTION_FAILED = 13,
    CUBLAS_STATUS_INTERNAL_ERROR = 14,
    CUBLAS_STATUS_NOT_SUPPORTED = 15
} cublasStatus_t;

typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 } cublasOperation_t;

typedef enum {
    CUDA_R_16F = 2,
    CUDA_R_32F = 0,
    CUDA_R_64F = 1,
    CUDA_C_32F = 4,
    CUDA_C_64F = 5
} cudaDataType;
typedef cudaDataType cudaDataType_t;

typedef enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_64F = 70 } cublasComputeType_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1 } cublasGemmAlgo_t;

typedef float2 cuComplex;
typedef double2 cuDoubleComplex;

struct ga_emu_cublas;
typedef struct ga_emu_cublas *cublasHandle_t;

extern "C" {
cublasStatus_t cublasCreate_v2(cublasHandle_t *handle);
cublasStatus_t cublasDestroy_v2(cublasHandle_t handle);
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const float *alpha, const float *A, int lda,
                                         long long sa, const float *B, int ldb, long long sb,
                                         const float *beta, float *C, int ldc, long long sc,
                                         int batch);
cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const double *alpha, const double *A, int lda,
                                         long long sa, const double *B, int ldb,
                                         long long sb, const double *beta, double *C, int ldc,
                                         long long sc, int batch);
cublasStatus_t cublasCgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const cuComplex *alpha, const cuComplex *A, int lda,
                                         long long sa, const cuComplex *B, int ldb,
                                         long long sb, const cuComplex *beta, cuComplex *C,
                                         int ldc, long long sc, int batch);
cublasStatus_t cublasZgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const cuDoubleComplex *alpha, const cuDoubleComplex *A,
                                         int lda, long long sa, const cuDoubleComplex *B,
                                         int ldb, long long sb, const cuDoubleComplex *beta,
                                         cuDoubleComplex *C, int ldc, long long sc, int batch);
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta,
                                          cublasOperation_t tb, int m, int n, int k,
                                          const void *alpha, const void *A, cudaDataType at,
                                          int lda, long long sa, const void *B, cudaDataType bt,
                                          int ldb, long long sb, const void *beta, void *C,
                                          cudaDataType ct, int ldc, long long sc, int batch,
                                          cublasComputeType_t compute, cublasGemmAlgo_t algo);
}

/* --- cuSOLVER (dense): a reference with the real API's types, numbers and conventions
 * (column-major, device pointers, devInfo in device memory, workspace sizes from the
 * _bufferSize queries and checked, work ordered on the handle's stream), computed by
 * the host LAPACK the core hands over (ga_cuda_emu_cusolver.cpp). Only what
 * ga_cusolver.cu calls. ------------------------------------------------------------ */

typedef enum {
    CUSOLVER_STATUS_SUCCESS = 0,
    CUSOLVER_STATUS_NOT_INITIALIZED = 1,
    CUSOLVER_STATUS_ALLOC_FAILED = 2,
    CUSOLVER_STATUS_INVALID_VALUE = 3,
    CUSOLVER_STATUS_ARCH_MISMATCH = 4,
    CUSOLVER_STATUS_EXECUTION_FAILED = 6,
    CUSOLVER_STATUS_INTERNAL_ERROR = 7,
    CUSOLVER_STATUS_NOT_SUPPORTED = 9
} cusolverStatus_t;
typedef enum { CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1 } cublasFillMode_t;
typedef enum { CUSOLVER_EIG_MODE_NOVECTOR = 0, CUSOLVER_EIG_MODE_VECTOR = 1 } cusolverEigMode_t;
#define CUSOLVER_VER_MAJOR 12 /* what CUDA 13.0 ships (libcusolver.so.12) */

struct ga_emu_cusolver;
typedef struct ga_emu_cusolver *cusolverDnHandle_t;

/* One macro per routine family, X(letter, T, R) for the four types (R: the real type) */
#define GA_EMU_CUSOLVER_TYPES(X)                                                       \
    X(S, float, float) X(D, double, double) X(C, cuComplex, float)                     \
    X(Z, cuDoubleComplex, double)

extern "C" {
cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t *handle);
cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle);
cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t stream);
#define GA_EMU_CUSOLVER_DECL(L, T, R)                                                  \
    cusolverStatus_t cusolverDn##L##getrf_bufferSize(cusolverDnHandle_t h, int m, int n, \
                                                     T *A, int lda, int *lwork);       \
    cusolverStatus_t cusolverDn##L##getrf(cusolverDnHandle_t h, int m, int n, T *A,      \
                                          int lda, T *work, int *ipiv, int *info);     \
    cusolverStatus_t cusolverDn##L##getrs(cusolverDnHandle_t h, cublasOperation_t trans, \
                                          int n, int nrhs, const T *A, int lda,        \
                                          const int *ipiv, T *B, int ldb, int *info);  \
    cusolverStatus_t cusolverDn##L##potrf_bufferSize(cusolverDnHandle_t h,               \
                                                     cublasFillMode_t uplo, int n, T *A, \
                                                     int lda, int *lwork);             \
    cusolverStatus_t cusolverDn##L##potrf(cusolverDnHandle_t h, cublasFillMode_t uplo,   \
                                          int n, T *A, int lda, T *work, int lwork,    \
                                          int *info);                                  \
    cusolverStatus_t cusolverDn##L##gesvd_bufferSize(cusolverDnHandle_t h, int m, int n, \
                                                     int *lwork);                      \
    cusolverStatus_t cusolverDn##L##gesvd(cusolverDnHandle_t h, signed char jobu,        \
                                          signed char jobvt, int m, int n, T *A, int lda, \
                                          R *S, T *U, int ldu, T *VT, int ldvt, T *work, \
                                          int lwork, R *rwork, int *info);             \
    cusolverStatus_t cusolverDn##L##geqrf_bufferSize(cusolverDnHandle_t h, int m, int n, \
                                                     T *A, int lda, int *lwork);       \
    cusolverStatus_t cusolverDn##L##geqrf(cusolverDnHandle_t h, int m, int n, T *A,      \
                                          int lda, T *tau, T *work, int lwork, int *info);
GA_EMU_CUSOLVER_TYPES(GA_EMU_CUSOLVER_DECL)
#undef GA_EMU_CUSOLVER_DECL
/* the Hermitian eigensolver and Q of a QR are named by the type's kind */
#define GA_EMU_CUSOLVER_DECL2(L, EV, QR, T, R)                                         \
    cusolverStatus_t cusolverDn##L##EV##_bufferSize(cusolverDnHandle_t h,                \
                                                    cusolverEigMode_t jobz,            \
                                                    cublasFillMode_t uplo, int n,      \
                                                    const T *A, int lda, const R *W,   \
                                                    int *lwork);                       \
    cusolverStatus_t cusolverDn##L##EV(cusolverDnHandle_t h, cusolverEigMode_t jobz,     \
                                       cublasFillMode_t uplo, int n, T *A, int lda, R *W, \
                                       T *work, int lwork, int *info);                 \
    cusolverStatus_t cusolverDn##L##QR##_bufferSize(cusolverDnHandle_t h, int m, int n,  \
                                                    int k, const T *A, int lda,        \
                                                    const T *tau, int *lwork);         \
    cusolverStatus_t cusolverDn##L##QR(cusolverDnHandle_t h, int m, int n, int k, T *A,  \
                                       int lda, const T *tau, T *work, int lwork,      \
                                       int *info);
GA_EMU_CUSOLVER_DECL2(S, syevd, orgqr, float, float)
GA_EMU_CUSOLVER_DECL2(D, syevd, orgqr, double, double)
GA_EMU_CUSOLVER_DECL2(C, heevd, ungqr, cuComplex, float)
GA_EMU_CUSOLVER_DECL2(Z, heevd, ungqr, cuDoubleComplex, double)
#undef GA_EMU_CUSOLVER_DECL2

/* The core hands the emulated plugin its LAPACK lookup once, after loading it
 * (ga_device.c): `lookup("dgetrf", &ilp64)` returns the Fortran routine of the CPU's
 * OpenBLAS (NULL if none) and whether its integers are 64-bit. */
__attribute__((visibility("default"))) void
gpuarr_cuda_emu_set_lapack(void *(*lookup)(const char *name, int *ilp64));
}

#ifdef __cplusplus
#include <functional>
/* For library references that do without the emulator's internals
 * (ga_cuda_emu_cusolver.cpp; defined in ga_cuda_emu_state.cpp): queue `task` on
 * `stream` (device memory readable while it runs, as for a kernel); whether [p, p + n)
 * lies in one device block; the detail of the next library error. */
void ga_emu_enqueue_task(cudaStream_t stream, std::function<void()> task);
bool ga_emu_on_device(const void *p, size_t n);
void ga_emu_set_error_detail(const char *msg);
#endif

/* --- cuFFT: the API's types, numbers and calls that ga_cufft.cu makes, computed by the
 * CPU FFT (csrc/cpu/ga_cpu_fft.c), in order on the plan's stream. -------------------- */

#define CUFFT_VER_MAJOR 12
#define CUFFT_FORWARD (-1)
#define CUFFT_INVERSE 1

typedef enum {
    CUFFT_SUCCESS = 0,
    CUFFT_INVALID_PLAN = 1,
    CUFFT_ALLOC_FAILED = 2,
    CUFFT_INVALID_TYPE = 3,
    CUFFT_INVALID_VALUE = 4,
    CUFFT_INTERNAL_ERROR = 5,
    CUFFT_EXEC_FAILED = 6,
    CUFFT_SETUP_FAILED = 7,
    CUFFT_INVALID_SIZE = 8,
    CUFFT_NOT_SUPPORTED = 16
} cufftResult;

typedef enum {
    CUFFT_R2C = 0x2a,
    CUFFT_C2R = 0x2c,
    CUFFT_C2C = 0x29,
    CUFFT_D2Z = 0x6a,
    CUFFT_Z2D = 0x6c,
    CUFFT_Z2Z = 0x69
} cufftType;

typedef int cufftHandle;
typedef float cufftReal;
typedef double cufftDoubleReal;
typedef float2 cufftComplex;
typedef double2 cufftDoubleComplex;

extern "C" {
cufftResult cufftPlanMany(cufftHandle *plan, int rank, int *n, int *inembed, int istride,
                          int idist, int *onembed, int ostride, int odist, cufftType type,
                          int batch);
cufftResult cufftSetStream(cufftHandle plan, cudaStream_t stream);
cufftResult cufftDestroy(cufftHandle plan);
cufftResult cufftExecC2C(cufftHandle plan, cufftComplex *idata, cufftComplex *odata,
                         int direction);
cufftResult cufftExecZ2Z(cufftHandle plan, cufftDoubleComplex *idata,
                         cufftDoubleComplex *odata, int direction);
cufftResult cufftExecR2C(cufftHandle plan, cufftReal *idata, cufftComplex *odata);
cufftResult cufftExecD2Z(cufftHandle plan, cufftDoubleReal *idata, cufftDoubleComplex *odata);
cufftResult cufftExecC2R(cufftHandle plan, cufftComplex *idata, cufftReal *odata);
cufftResult cufftExecZ2D(cufftHandle plan, cufftDoubleComplex *idata, cufftDoubleReal *odata);
}

/* Last: its macros rename the math calls in everything that follows. */
#include "ga_cuda_emu_math.h"

#endif
