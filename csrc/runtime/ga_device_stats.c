/* ga_device_stats.c: a device's statistics and controls for the binding (memory,
 * kernel counters, the cache, a simulated GPU's queue), so that the binding never
 * reaches into a backend's table: it asks the core, which asks the backend. */
#include <stdatomic.h>
#include <string.h>

#include "ga_backend.h"
#include "ga_device.h"
#include "ga_error.h"
#include "ga_profiler.h"

int
ga_device_memory_stats(ga_device d, ga_memory_stats *out)
{
    const ga_backend *be;
    memset(out, 0, sizeof(*out));
    GA_TRY(ga_device_backend_nowait(d, &be));
    if (be->memory_stats != NULL) {
        GA_TRY(ga_backend_status(be, be->memory_stats(ga_device_local(d), out)));
    }
    if (d.kind == GA_DEV_GPU && ga_gpu_mode_get() == GA_GPU_SIMULATED) {
        out->total_bytes = ga_device_simulated_memory(); /* host memory has no GPU size */
    }
    return GA_OK;
}

/* The arrays each GPU holds (ga_device_arrays_memory): relaxed atomics, as storages
 * are made and freed on any thread (a finalizer, a worker's release). */
static struct {
    size_t bytes, peak, count;
} arrays[GA_MAX_DEVICES];

int
ga_device_arrays_alloc(ga_device d, size_t nbytes)
{
    if (d.kind != GA_DEV_GPU || d.index < 0 || d.index >= GA_MAX_DEVICES) {
        return GA_OK;
    }
    size_t *bytes = &arrays[d.index].bytes;
    size_t now = __atomic_add_fetch(bytes, nbytes, __ATOMIC_RELAXED);
    if (ga_gpu_mode_get() == GA_GPU_SIMULATED) {
        /* A simulated GPU has a memory size of its own, smaller than the host's, so
         * that the out-of-memory lesson holds without a GPU (adding first and taking
         * back keeps two threads from both passing the check). */
        size_t total = ga_device_simulated_memory();
        if (now > total) {
            __atomic_sub_fetch(bytes, nbytes, __ATOMIC_RELAXED);
            return ga_error(GA_ERR_OOM_DEVICE,
                            "gpu(%d) is out of memory: it is a simulated GPU of %.2f GiB, "
                            "its arrays hold %.2f GiB and %.2f GiB more were asked for. "
                            "Free arrays you no longer need (del x), use smaller ones, or "
                            "give the simulated GPUs more memory with "
                            "GPUARR_SIMULATE_GPU_MEMORY (e.g. 32GiB, set before the first "
                            "device query)",
                            (int)d.index, (double)total / (1 << 30),
                            (double)(now - nbytes) / (1 << 30), (double)nbytes / (1 << 30));
        }
    }
    size_t peak = __atomic_load_n(&arrays[d.index].peak, __ATOMIC_RELAXED);
    while (now > peak && !__atomic_compare_exchange_n(&arrays[d.index].peak, &peak, now, 1,
                                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    __atomic_add_fetch(&arrays[d.index].count, 1, __ATOMIC_RELAXED);
    return GA_OK;
}

void
ga_device_arrays_free(ga_device d, size_t nbytes)
{
    if (d.kind != GA_DEV_GPU || d.index < 0 || d.index >= GA_MAX_DEVICES) {
        return;
    }
    __atomic_sub_fetch(&arrays[d.index].bytes, nbytes, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&arrays[d.index].count, 1, __ATOMIC_RELAXED);
}

void
ga_device_arrays_memory(ga_device d, ga_arrays_memory *out)
{
    memset(out, 0, sizeof(*out));
    if (d.kind != GA_DEV_GPU || d.index < 0 || d.index >= GA_MAX_DEVICES) {
        return;
    }
    out->bytes = __atomic_load_n(&arrays[d.index].bytes, __ATOMIC_RELAXED);
    out->peak_bytes = __atomic_load_n(&arrays[d.index].peak, __ATOMIC_RELAXED);
    out->count = __atomic_load_n(&arrays[d.index].count, __ATOMIC_RELAXED);
}

void
ga_device_arrays_reset_peak(ga_device d)
{
    if (d.kind != GA_DEV_GPU || d.index < 0 || d.index >= GA_MAX_DEVICES) {
        return;
    }
    __atomic_store_n(&arrays[d.index].peak,
                     __atomic_load_n(&arrays[d.index].bytes, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
}

int
ga_device_empty_cache(ga_device d)
{
    const ga_backend *be;
    GA_TRY(ga_device_backend_nowait(d, &be));
    if (be->empty_cache == NULL) {
        return GA_OK;
    }
    return ga_backend_status(be, be->empty_cache(ga_device_local(d)));
}

int
ga_device_kernel_counters(ga_device d, int reset_max, ga_kernel_counters *out,
                          int *counted)
{
    const ga_backend *be;
    memset(out, 0, sizeof(*out));
    *counted = 0;
    GA_TRY(ga_device_backend_nowait(d, &be));
    if (be->kernel_counters == NULL) {
        return GA_OK;
    }
    *counted = 1;
    return ga_backend_status(be,
                             be->kernel_counters(ga_device_local(d), reset_max, out));
}

/* Slot 0 is the CPU, slot 1 + i GPU i. Relaxed atomics: operations are dispatched from
 * any thread (Dask's, the user's), and a count needs no ordering with anything else;
 * uncontended, an add costs a few nanoseconds against a microsecond for the smallest
 * operation. */
static _Atomic int64_t work_counts[1 + GA_MAX_DEVICES][GA_WORK_NKINDS];

static int
work_slot(ga_device d)
{
    if (d.kind == GA_DEV_CPU) {
        return 0;
    }
    return d.index >= 0 && d.index < GA_MAX_DEVICES ? 1 + (int)d.index : -1;
}

/* A captured step's recording (ops/ga_capture.c) watches what its operations count. */
static void (*work_watch)(ga_device d, ga_work_kind k, int64_t n);

void
ga_device_set_work_watch(void (*watch)(ga_device d, ga_work_kind k, int64_t n))
{
    __atomic_store_n(&work_watch, watch, __ATOMIC_RELEASE);
}

void
ga_device_add_work(ga_device d, ga_work_kind k, int64_t n)
{
    int slot = work_slot(d);
    if (slot >= 0 && (unsigned)k < GA_WORK_NKINDS) {
        atomic_fetch_add_explicit(&work_counts[slot][k], n, memory_order_relaxed);
    }
}

void
ga_device_count_work(ga_device d, ga_work_kind k, int64_t n)
{
    ga_device_add_work(d, k, n);
    void (*watch)(ga_device, ga_work_kind, int64_t) =
        __atomic_load_n(&work_watch, __ATOMIC_ACQUIRE);
    if (watch != NULL) {
        watch(d, k, n);
    }
    if (ga_prof_on()) { /* every dispatch point is here: the profiler's too */
        ga_prof_op_begin(d, (int)k);
    }
    if (ga_perf_model_on()) { /* and the modeled clock's (after the profiler's record)
                               */
        ga_perf_model_op_begin(d, (int)k);
    }
}

void
ga_device_work_counters(ga_device d, int64_t out[GA_WORK_NKINDS])
{
    int slot = work_slot(d);
    for (int k = 0; k < GA_WORK_NKINDS; k++) {
        out[k] = slot < 0 ? 0
                          : atomic_load_explicit(&work_counts[slot][k],
                                                 memory_order_relaxed);
    }
}

/* The simulated GPUs' queue entries and the CPU's settings come through the tables
 * (ABI 15), never a backend's header: this file sits above the backends. */
int64_t
ga_device_pending_work(ga_device d)
{
    /* only simulated GPUs keep a queue that the core can count */
    if (d.kind == GA_DEV_CPU || ga_gpu_mode_get() != GA_GPU_SIMULATED || d.index < 0 ||
        d.index >= ga_num_gpus()) {
        return 0;
    }
    const ga_backend *be = ga_device_gpu_backend();
    return be->pending_work != NULL ? be->pending_work(d.index) : 0;
}

int
ga_device_hold_queue(ga_device d, int copies, int hold)
{
    const ga_backend *be = NULL;
    if (d.kind != GA_DEV_CPU && ga_gpu_mode_get() == GA_GPU_SIMULATED) {
        GA_TRY(ga_device_backend_nowait(d, &be)); /* checks that the device exists */
    }
    if (be == NULL || be->hold_queue == NULL) {
        return ga_error(
            GA_ERR_VALUE,
            "_hold_queue: only a simulated GPU has a queue that can be held");
    }
    return be->hold_queue(d.index, copies, hold);
}

int
ga_device_cpu_threads(void)
{
    return ga_backend_cpu.num_threads();
}

size_t
ga_device_host_cache_limit(void)
{
    return ga_backend_cpu.host_cache_limit();
}
