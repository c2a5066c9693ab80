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
    if (be->memory_stats == NULL) {
        return GA_OK;
    }
    return ga_backend_status(be, be->memory_stats(ga_device_local(d), out));
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

void
ga_device_count_work(ga_device d, ga_work_kind k, int64_t n)
{
    int slot = work_slot(d);
    if (slot >= 0 && (unsigned)k < GA_WORK_NKINDS) {
        atomic_fetch_add_explicit(&work_counts[slot][k], n, memory_order_relaxed);
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
