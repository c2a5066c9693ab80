/* ga_device.h: the device registry: which backend serves each device, resolved once.
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
#include "ga_device_types.h" /* ga_device, ga_gpu_mode, ga_cpu(), ... */

struct ga_backend;

#ifdef __cplusplus
extern "C" {
#endif

/* "cpu(0)" / "gpu(1)" into buf. */
const char *ga_device_str(ga_device d, char *buf, size_t n);

/* Resolve how GPUs are provided (once; later calls return the same answer).
 * `plugin_dir` is where libgpuarr_cuda.so lives (set by the binding at import);
 * never fails: problems become 0 GPUs and a reason. */
void ga_devices_set_plugin_dir(const char *dir);
/* Read CUDA_VISIBLE_DEVICES now (at import), as CUDA reads it once: simulated and emulated
 * GPUs follow it (core/ga_visible_devices.h); real ones are the driver's business. */
void ga_devices_read_visible_env(void);
/* The binding's "release/retake the GIL" pair, passed on to every backend that blocks
 * (ga_backend.set_wait_hooks): the CPU and simulated tables at once, a plugin when it
 * is loaded. Set once, before the first GPU use. */
void ga_devices_set_wait_hooks(void *(*begin)(void), void (*end)(void *));
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
/* That wait: host readiness's fence (ga_host_ready_fence), which it registers here
 * when it first tracks a block (until then no block is pending, so nothing to wait
 * for). Set rather than called by name: host readiness sits above the registry. */
void ga_devices_set_cpu_fence(int (*fence)(void));
/* The same without that wait: for allocating, freeing, copying (whose callers wait
 * for the blocks they touch themselves), and for asking about a device (events,
 * statistics, streams, checks), which touches no array. */
int ga_device_backend_nowait(ga_device d, const struct ga_backend **out);
/* The GPU backend that was found (CUDA, emulated, simulated), or NULL. */
const struct ga_backend *ga_device_gpu_backend(void);
/* GA_OK if `d` exists, else ga_device_backend's error (the binding's check). */
int ga_device_check(ga_device d);

/* `st` from a call into backend `be`, with the backend's own message copied into the
 * core's when the backend keeps its own (a plugin: see ga_backend.last_error). Each
 * observer registered with ga_device_observe_status sees `st` first. */
int ga_backend_status(const struct ga_backend *be, int st);
/* Watch the status of every backend call that the core checks (ga_backend_status):
 * the profiler closes its open record there, the fault registry notes a sticky CUDA
 * error. Observers run on the calling thread, in the order registered, and must be
 * cheap (every operation passes here). Registered once, never removed;
 * GA_ERR_RUNTIME past GA_DEVICE_MAX_OBSERVERS. */
typedef void (*ga_device_status_fn)(int status);
#define GA_DEVICE_MAX_OBSERVERS 8
int ga_device_observe_status(ga_device_status_fn fn);

/* The backend-local index of a device (what the backend's functions take). */
static inline int
ga_device_local(ga_device d)
{
    return d.index;
}

/* Memory statistics (ga_memory_stats, ga_device_types.h); zeros where the backend
 * keeps none. */
int ga_device_memory_stats(ga_device d, ga_memory_stats *out);
/* Free the device's cached blocks (a no-op where nothing is cached). */
int ga_device_empty_cache(ga_device d);

/* The bytes and count of the arrays this process holds on GPU `d` (storages made by
 * ga_storage_new, views not counted again), and the most bytes held at once since the
 * start or ga_device_arrays_reset_peak: gpuarr.cuda.memory_allocated and friends. Kept
 * by the core for every GPU kind alike (an atomic add per storage), so it needs no
 * backend's help and no wait for a simulated GPU's queue. */
typedef struct {
    size_t bytes, peak_bytes, count;
} ga_arrays_memory;
/* Count an array of `nbytes` about to be made on `d`: GA_ERR_OOM_DEVICE when a
 * simulated GPU would then hold more than its memory (ga_device_simulated_memory). */
int ga_device_arrays_alloc(ga_device d, size_t nbytes);
void ga_device_arrays_free(ga_device d, size_t nbytes);
void ga_device_arrays_memory(ga_device d, ga_arrays_memory *out);
void ga_device_arrays_reset_peak(ga_device d);
/* The memory of one simulated GPU, in bytes: GPUARR_SIMULATE_GPU_MEMORY, else the
 * model's (GPUARR_SIMULATE_GPUS=2:T4), else 16 GiB. */
size_t ga_device_simulated_memory(void);

/* The backend's own counters (ga_kernel_counters, ga_device_types.h). */
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
/* The counts alone, with no profiler or model hook: a captured step's replay adds
 * what its recording counted (ops/ga_capture.c). */
void ga_device_add_work(ga_device d, ga_work_kind k, int64_t n);
/* Called with every count (registered by ops/ga_capture.c, which sits above the
 * registry; the watch itself tells whether its thread is recording). */
void ga_device_set_work_watch(void (*watch)(ga_device d, ga_work_kind k, int64_t n));
/* The table that serves a device is passed through `filter` before the caller sees
 * it (ga_device_backend*): a recording captured step hands out a table that records
 * each compute call and forwards it (ops/ga_capture.c). NULL: none. */
void ga_devices_set_backend_filter(
    const struct ga_backend *(*filter)(ga_device d, const struct ga_backend *be));
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
