/* ga_device.h: devices as small values, and which backend serves each.
 *
 * A device is (kind, index). cpu(0) is served by the CPU backend. gpu(i) is served by
 * one of three backends, chosen once per process at the first use of a GPU:
 *   GPUARR_CUDA_EMULATE=N  -> the CUDA plugin built for the CPU (test harness)
 *   GPUARR_SIMULATE_GPUS=N -> simulated GPUs: host memory, CPU kernels, GPU rules
 *   otherwise              -> the CUDA plugin, if it loads and finds a driver and GPUs
 */
#ifndef GA_DEVICE_H
#define GA_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "ga_config.h"

typedef enum { GA_DEV_CPU = 0, GA_DEV_GPU = 1 } ga_device_kind;

typedef struct {
    int32_t kind;  /* ga_device_kind */
    int32_t index; /* 0 for the CPU */
} ga_device;

/* What backs gpu(i) in this process. */
typedef enum {
    GA_GPU_NONE = 0,      /* no GPUs */
    GA_GPU_CUDA = 1,      /* real CUDA devices */
    GA_GPU_SIMULATED = 2, /* GPUARR_SIMULATE_GPUS */
    GA_GPU_EMULATED = 3   /* GPUARR_CUDA_EMULATE */
} ga_gpu_mode;

struct ga_backend;

#ifdef __cplusplus
extern "C" {
#endif

static inline ga_device
ga_cpu(void)
{
    ga_device d = {GA_DEV_CPU, 0};
    return d;
}

static inline int
ga_device_eq(ga_device a, ga_device b)
{
    return a.kind == b.kind && a.index == b.index;
}

/* "cpu(0)" / "gpu(1)" into buf. */
const char *ga_device_str(ga_device d, char *buf, size_t n);

/* Resolve how GPUs are provided (once; later calls return the same answer).
 * `plugin_dir` is where libgpuarr_cuda.so lives (set by the binding at import);
 * never fails: problems become 0 GPUs and a reason. */
void ga_devices_set_plugin_dir(const char *dir);
/* The binding's "release/retake the GIL" pair, passed on to a plugin that blocks
 * (ga_backend.set_wait_hooks). Set once, before the first GPU use. */
void ga_devices_set_wait_hooks(void *(*begin)(void), void (*end)(void *));
/* Around long host work that touches nothing but the buffers it was given (a CPU
 * kernel): lets other Python threads run meanwhile through the same hooks. The token
 * from begin goes to end; both are no-ops on threads that do not hold the GIL (a
 * simulated GPU's worker) and before the binding set the hooks. */
void *ga_host_work_begin(void);
void ga_host_work_end(void *token);
ga_gpu_mode ga_gpu_mode_get(void);
int ga_num_gpus(void);
/* GA_ERR_VALUE saying how to spell it when GPUARR_SIMULATE_GPUS is misspelt (there
 * are no GPUs then, and every use of one raises that error), else GA_OK. */
int ga_devices_env_error(void);
/* When no GPU was found and the environment did not choose, switch to `n` simulated
 * GPUs (any time: no array can live on a GPU that does not exist), carrying the GPU
 * model named `model` (ga_perf_model.h; NULL: none). *switched = 1 if it switched;
 * GA_ERR_VALUE for an unknown model or a misspelt GPUARR_SIMULATE_GPUS. */
int ga_simulate_gpus_if_none(int n, const char *model, int *switched);
/* Why there are no (real) GPUs, or "" */
const char *ga_gpu_reason(void);

/* The backend that serves `d`, or an error naming the device and listing those that
 * exist (GA_ERR_DEVICE). For the CPU, first waits for the host blocks that queued
 * copies still use (ga_host_ready.h): the caller is about to compute on the host. */
int ga_device_backend(ga_device d, const struct ga_backend **out);
/* The same without that wait: for allocating, freeing, copying (whose callers wait
 * for the blocks they touch themselves), and for asking about a device (events,
 * statistics, streams, checks), which touches no array. */
int ga_device_backend_nowait(ga_device d, const struct ga_backend **out);
/* The GPU backend that was found (CUDA, emulated, simulated), or NULL. */
const struct ga_backend *ga_device_gpu_backend(void);
/* GA_OK if `d` exists, else ga_device_backend's error (the binding's check). */
int ga_device_check(ga_device d);

/* `st` from a call into backend `be`, with the backend's own message copied into the
 * core's when the backend keeps its own (a plugin: see ga_backend.last_error). */
int ga_backend_status(const struct ga_backend *be, int st);

/* The backend-local index of a device (what the backend's functions take). */
static inline int
ga_device_local(ga_device d)
{
    return d.index;
}

/* Statistics and controls of one device, for the binding (which never reaches a
 * backend's table itself). */
typedef struct {
    size_t allocated_bytes; /* in live arrays */
    size_t reserved_bytes;  /* held from the system (live + cached) */
    size_t peak_allocated_bytes;
    size_t total_bytes;  /* device memory, 0 if unknown */
    int64_t alloc_calls; /* system allocations made (cudaMalloc / malloc) */
} ga_memory_stats;
/* Zeros where the backend keeps none. */
int ga_device_memory_stats(ga_device d, ga_memory_stats *out);
/* Free the device's cached blocks (a no-op where nothing is cached). */
int ga_device_empty_cache(ga_device d);

/* What a device's backend did since it was loaded, counted in the backend's own host
 * code (the same on a GPU and in the emulation), for tests: kernels launched, host
 * waits (a stream, event or device synchronize, or a copy that blocks the host; one
 * per call however it is staged), host-to-device and device-to-host copies, and the
 * largest grid (blocks) launched since the last read that asked to reset it. */
typedef struct {
    int64_t launches;
    int64_t syncs;
    int64_t h2d;
    int64_t d2h;
    int64_t max_grid_blocks;
} ga_kernel_counters;
/* *counted is 0 (and *out zeros) where the backend does not count (CPU, simulated). */
int ga_device_kernel_counters(ga_device d, int reset_max, ga_kernel_counters *out,
                              int *counted);
/* Work each device was given, counted by the core for every device kind alike (the
 * CPU, simulated, emulated and real GPUs), for tests and graders that check where the
 * work ran (gpuarr.testing.count_work): one count per call the core makes to a
 * backend's compute entry, whatever the backend does inside (a CUDA reduction may
 * launch two kernels; a batched product is one gemm call). The counters only grow
 * (no reset: a count over a block is a difference), and cost one relaxed atomic add
 * per operation. One list, (ENUM, python name, what): */
#define GA_WORK_KINDS(X)                                                               \
    X(ELEMENTWISE, elementwise, "elementwise loops, fills, copies within the device")  \
    X(REDUCE, reductions, "reductions and scans")                                      \
    X(GEMM, matmuls, "matrix products (a BLAS gemm call, or a batch of them)")         \
    X(RANDOM, random, "random number generation")                                      \
    X(INDEX, indexing, "gather, scatter, nonzero, arange")                             \
    X(SORT, sorting, "sort and searchsorted")                                          \
    X(LINALG, linalg, "factorisations (LAPACK / cuSOLVER)")                            \
    X(FFT, fft, "FFTs")
typedef enum {
#define GA_WORK_ENUM_(e, n, w) GA_WORK_##e,
    GA_WORK_KINDS(GA_WORK_ENUM_)
#undef GA_WORK_ENUM_
        GA_WORK_NKINDS
} ga_work_kind;
/* Count `n` operations of kind `k` handed to device `d`'s backend (n is 1, or the
 * matrices of a batched product). */
void ga_device_count_work(ga_device d, ga_work_kind k, int64_t n);
/* The counts of `d` since the process started (zeros for an index out of range). */
void ga_device_work_counters(ga_device d, int64_t out[GA_WORK_NKINDS]);
/* Simulated GPUs only (tests of asynchrony): operations queued and not finished (0 on
 * every other device), and holding a queue's worker (GA_ERR_VALUE elsewhere). */
int64_t ga_device_pending_work(ga_device d);
int ga_device_hold_queue(ga_device d, int copies, int hold);
/* Threads of the CPU kernels, and bytes of freed host blocks kept per device. */
int ga_device_cpu_threads(void);
size_t ga_device_host_cache_limit(void);

/* Describe one device for gpuarr.info(): kind word, name, total memory (0 unknown). */
typedef struct {
    char name[128];
    const char *kind_word; /* "CPU", "CUDA", "simulated", "emulated CUDA" */
    size_t total_memory;
    int cc_major, cc_minor; /* compute capability, 0 if not CUDA */
} ga_device_desc;
int ga_device_describe(ga_device d, ga_device_desc *out);

#ifdef __cplusplus
}
#endif

#endif
