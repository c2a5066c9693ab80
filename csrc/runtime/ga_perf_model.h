/* ga_perf_model.h: modeled GPU time, a performance model of a named GPU (T4, A100,
 * H100) carried by simulated GPUs (GPUARR_SIMULATE_GPUS=2:T4, simulate_gpus_if_none(2,
 * model="T4")).
 *
 * The model keeps one modeled clock per GPU and one for the host, in seconds since
 * the model was chosen. Every operation handed to a modeled GPU starts at
 * max(device clock, host clock) and lasts
 *     launch latency + max(bytes / memory bandwidth, flops / peak rate of its dtype)
 * (a roofline); copies between the host and a GPU, or between two GPUs, move at the
 * host link's (PCIe) rate; a host wait (synchronize, a read to the host, an event's
 * synchronize) moves the host's clock to the device's and adds the sync latency.
 * Nothing else: no caches, no contention between devices, no clock boost, the host's
 * own computing costs no modeled time. docs/DESIGN.md, "Modeled GPU time", and
 * docs/modeled_time.md for every constant and its source.
 */
#ifndef GA_PERF_MODEL_H
#define GA_PERF_MODEL_H

#include <stdint.h>

#include "ga_device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One GPU's published figures (docs/modeled_time.md names each one's source). */
typedef struct {
    const char *name;      /* "T4", "A100", "H100": what GPUARR_SIMULATE_GPUS names */
    const char *full_name; /* the exact product modeled */
    double mem_bandwidth;  /* device memory, bytes/s */
    double link_bandwidth; /* host <-> device (PCIe), bytes/s in one direction */
    /* peak FLOP/s of elementwise work and reductions (the CUDA cores) */
    double flops_f16, flops_f32, flops_f64;
    /* peak FLOP/s of a matrix product as gpuarr's cuBLAS calls run it (tensor cores
     * where those calls use them: float16 everywhere, float64 on A100/H100) */
    double matmul_f16, matmul_f32, matmul_f64;
    double launch_latency; /* s, added to every operation and copy */
    double sync_latency;   /* s, added to every host wait */
    double memory_bytes;   /* device memory: a simulated GPU of this model has as much */
} ga_gpu_model;

/* The known models, in order (n from ga_perf_model_count). */
int ga_perf_model_count(void);
const ga_gpu_model *ga_perf_model_at(int i);
/* The model named `name` (case-insensitive); GA_ERR_VALUE listing the known ones. */
int ga_perf_model_lookup(const char *name, const ga_gpu_model **out);

/* Every GPU of this process carries `m` (NULL: none) from now on; the clocks restart
 * at 0. Called by the device resolution (ga_device.c). */
void ga_perf_model_select(const ga_gpu_model *m);
/* The model `d` carries, or NULL (the CPU, or GPUs without a model). */
const ga_gpu_model *ga_perf_model_of(ga_device d);

/* Non-zero while a model is selected (a relaxed load: the hooks' guard). */
extern int ga_perf_model_active;
static inline int
ga_perf_model_on(void)
{
    return __atomic_load_n(&ga_perf_model_active, __ATOMIC_RELAXED);
}

/* The seconds an operation takes on `m`: launch latency + max(bytes / bandwidth,
 * flops / peak), the peak of `dtype` (a ga_dtype), a matmul's when `matmul`. */
double ga_perf_model_roofline_s(const ga_gpu_model *m, double flops, double bytes,
                                int dtype, int matmul);

/* The hooks (no-ops for a device without a model). An operation queued on `d`
 * (ga_device_count_work): charged the launch latency at once, */
void ga_perf_model_op_begin(ga_device d, int work_kind);
/* then its cost once it is described (ga_prof_describe: name, result dtype, shape
 * and bytes; the flops follow from the operation's kind and shape). */
void ga_perf_model_op_cost(const char *name, int dtype, int ndim, const int64_t *shape,
                           int64_t bytes);
/* The work (no launch latency) modeled for the operation queued last on this thread
 * on `d`, 0 without a model: what a captured step's recording keeps of it. */
double ga_perf_model_last_work_s(ga_device d);
/* A captured step's replay on `d`: one launch latency and `work_s` of work (the sum
 * of its operations' work when recorded), as one CUDA graph launch costs. */
void ga_perf_model_replay(ga_device d, double work_s);
/* A copy of `nbytes` from `src` to `dst` (one of them a GPU) over the host link; a
 * read to the host ends in a host wait. */
void ga_perf_model_copy(ga_device dst, ga_device src, int64_t nbytes);
/* A copy of `nbytes` from GPU `src` to the host queued without a host wait
 * (x.to(cpu(), non_blocking=True)): the device's clock advances, the host's does not;
 * the wait for it is modeled where the host waits (an event's time). */
void ga_perf_model_copy_queued(ga_device src, int64_t nbytes);
/* The host waits until everything queued on `d` is done. */
void ga_perf_model_host_wait(ga_device d);
/* The host waits for a point of `d`'s modeled clock (an event's time). */
void ga_perf_model_host_wait_until(ga_device d, double t);
/* Where an event recorded now on `d` lands on the modeled clock; -1 without a model. */
double ga_perf_model_event_time(ga_device d);
/* The host's modeled clock now (0 without a model). */
double ga_perf_model_host_now(void);

/* What the last hook on this thread modeled for `d` (an operation's or a copy's
 * interval on the device and the host's clock when it was queued, or a host wait's
 * interval on the host), taken once: 1 if there was one. `host_end` is when the host's
 * wait for a copy to the host ended (host_at itself for anything else).
 * ga_perf_model_forget drops it. */
int ga_perf_model_take_last(ga_device d, double *start, double *end, double *host_at,
                            double *host_end);
void ga_perf_model_forget(void);

#ifdef __cplusplus
}
#endif

#endif
