/* ga_perf_model.c: modeled GPU time (ga_perf_model.h).
 *
 * The figures are the vendors' published peaks (docs/modeled_time.md gives the
 * datasheet of each); the two latencies are assumptions of the model, not datasheet
 * figures. Hand-written because no library models a GPU's time this simply: the
 * point is a clock a student can check with a pencil (bytes / bandwidth, 2mnk / peak).
 *
 * The clocks live under one mutex (a teaching tool: one host thread and a few
 * devices). Each thread remembers what its last hook modeled, for the profiler's
 * record of that operation or wait (ga_profiler.c). */
#include "ga_perf_model.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "ga_dtype.h"
#include "ga_error.h"
#include "ga_platform.h"

/* Launch and sync latencies: assumed, the same for every model (a few microseconds
 * is what a kernel launch and a stream synchronize cost on recent GPUs and drivers;
 * no datasheet gives them). */
#define LAUNCH_S 5e-6
#define SYNC_S 10e-6

/* Bytes/s and FLOP/s, written as the datasheets print them (GB/s: 1e9 bytes/s;
 * TFLOPS: 1e12 FLOP/s), so that a reader can check each against its source. */
/* the datasheets' memory sizes, which count in binary gigabytes */
#define GIB 1073741824.0

static const ga_gpu_model models[] = {
    /* NVIDIA T4 Tensor Core GPU datasheet; the FP16 (2x) and FP64 (1/32) rates of the
     * CUDA cores relative to FP32 from the NVIDIA Turing GPU Architecture whitepaper;
     * PCIe Gen3 x16: 8 GT/s x 16 lanes x 128/130 / 8 bits. No bfloat16 on Turing. */
    {"T4", "NVIDIA T4 (PCIe, 16 GB GDDR6)", 320e9, 15.75e9, 16.2e12, 8.1e12, 0.253e12,
     65e12, 8.1e12, 0.253e12, LAUNCH_S, SYNC_S, 16.0 * GIB},
    /* NVIDIA A100 Tensor Core GPU datasheet (A100 40GB SXM column; tensor-core figures
     * without sparsity; PCIe Gen4 64 GB/s is both directions); FP16 on the CUDA cores
     * from the NVIDIA A100 Tensor Core GPU Architecture whitepaper. */
    {"A100", "NVIDIA A100 40GB SXM4", 1555e9, 32e9, 78e12, 19.5e12, 9.7e12, 312e12,
     19.5e12, 19.5e12, LAUNCH_S, SYNC_S, 40.0 * GIB},
    /* NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column; its tensor-core FP16
     * figure, 1,979 TFLOPS, is with sparsity: half without; PCIe Gen5 128 GB/s is both
     * directions); FP16 on the CUDA cores from the NVIDIA H100 Tensor Core GPU
     * Architecture whitepaper. */
    {"H100", "NVIDIA H100 SXM5 80GB", 3350e9, 64e9, 133.8e12, 67e12, 34e12, 989.5e12,
     67e12, 67e12, LAUNCH_S, SYNC_S, 80.0 * GIB},
};
#define NMODELS ((int)(sizeof(models) / sizeof(models[0])))

int ga_perf_model_active;

static ga_mutex mu = GA_MUTEX_INIT;
static const ga_gpu_model *model;
static double dev_clock[GA_MAX_DEVICES]; /* s: when each device's queue is done */
static double host_clock;                /* s: the host's modeled now */

/* What the last hook on this thread modeled (see ga_perf_model_take_last), and whether
 * the operation it opened still waits for its cost. */
static GA_THREAD_LOCAL struct {
    int valid, costing, kind;
    ga_device d;
    double start, end, host_at;
    double host_end; /* a copy the host waits for: when the host's wait ends */
} last;

int
ga_perf_model_count(void)
{
    return NMODELS;
}

const ga_gpu_model *
ga_perf_model_at(int i)
{
    return i >= 0 && i < NMODELS ? &models[i] : NULL;
}

static int
same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) {
            return 0;
        }
    }
    return *a == *b;
}

int
ga_perf_model_lookup(const char *name, const ga_gpu_model **out)
{
    *out = NULL;
    for (int i = 0; i < NMODELS; i++) {
        if (same_name(name, models[i].name)) {
            *out = &models[i];
            return GA_OK;
        }
    }
    char known[128] = "";
    for (int i = 0; i < NMODELS; i++) {
        size_t used = strlen(known);
        snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "",
                 models[i].name);
    }
    return ga_error(
        GA_ERR_VALUE,
        "unknown GPU model '%s': the known models are %s (for example "
        "GPUARR_SIMULATE_GPUS=2:T4 or simulate_gpus_if_none(2, model=\"T4\"))",
        name, known);
}

void
ga_perf_model_select(const ga_gpu_model *m)
{
    ga_mutex_lock(&mu);
    model = m;
    memset(dev_clock, 0, sizeof(dev_clock));
    host_clock = 0.0;
    ga_mutex_unlock(&mu);
    __atomic_store_n(&ga_perf_model_active, m != NULL, __ATOMIC_RELAXED);
}

/* The model of `d` and its clock's slot, or NULL. */
static const ga_gpu_model *
model_slot(ga_device d, int *slot)
{
    if (!ga_perf_model_on() || d.kind != GA_DEV_GPU || d.index < 0 ||
        d.index >= GA_MAX_DEVICES) {
        return NULL;
    }
    *slot = d.index;
    return model;
}

const ga_gpu_model *
ga_perf_model_of(ga_device d)
{
    int slot;
    return model_slot(d, &slot);
}

static double
max2(double a, double b)
{
    return a > b ? a : b;
}

/* The compute part of the roofline (no latency). */
static double
work_s(const ga_gpu_model *m, double flops, double bytes, int dtype, int matmul)
{
    double peak;
    if (dtype == GA_FLOAT16) {
        peak = matmul ? m->matmul_f16 : m->flops_f16;
    } else if (dtype == GA_FLOAT64 || dtype == GA_COMPLEX128) {
        peak = matmul ? m->matmul_f64 : m->flops_f64;
    } else { /* float32, complex64, integers and bool: the FP32 rate */
        peak = matmul ? m->matmul_f32 : m->flops_f32;
    }
    return max2(bytes / m->mem_bandwidth, flops / peak);
}

double
ga_perf_model_roofline_s(const ga_gpu_model *m, double flops, double bytes, int dtype,
                    int matmul)
{
    return m->launch_latency + work_s(m, flops, bytes, dtype, matmul);
}

static void
set_last(ga_device d, double start, double end, double host_at)
{
    last.valid = 1;
    last.d = d;
    last.start = start;
    last.end = end;
    last.host_at = host_at;
    last.host_end = host_at;
}

void
ga_perf_model_op_begin(ga_device d, int work_kind)
{
    int i;
    last.costing = 0;
    const ga_gpu_model *m = model_slot(d, &i);
    if (m == NULL) {
        return;
    }
    ga_mutex_lock(&mu);
    double h = host_clock, start = max2(dev_clock[i], h);
    dev_clock[i] = start + m->launch_latency;
    ga_mutex_unlock(&mu);
    set_last(d, start, start + m->launch_latency, h);
    last.costing = 1;
    last.kind = work_kind;
}

/* Floating-point operations of a described operation: a matmul's shape is
 * (batch, m, n, k), 2mnk each (4x for complex numbers: a complex multiply-add is four
 * real ones); a copy or fill computes nothing; anything else one per element of the
 * shape described (the result of an elementwise operation, the input of a
 * reduction). */
static double
op_flops(int kind, const char *name, int dtype, int ndim, const int64_t *shape)
{
    double n = 1.0;
    for (int k = 0; k < ndim; k++) {
        n *= (double)shape[k];
    }
    if (kind == GA_WORK_GEMM) {
        int cplx = dtype == GA_COMPLEX64 || dtype == GA_COMPLEX128;
        return (cplx ? 8.0 : 2.0) * n;
    }
    if (strcmp(name, "copy") == 0 || strcmp(name, "fill") == 0) {
        return 0.0;
    }
    return n;
}

void
ga_perf_model_op_cost(const char *name, int dtype, int ndim, const int64_t *shape,
                 int64_t bytes)
{
    int i;
    if (!last.costing) {
        return;
    }
    last.costing = 0;
    const ga_gpu_model *m = model_slot(last.d, &i);
    if (m == NULL) {
        return;
    }
    double extra =
        work_s(m, op_flops(last.kind, name, dtype, ndim, shape),
               bytes > 0 ? (double)bytes : 0.0, dtype, last.kind == GA_WORK_GEMM);
    last.end += extra;
    ga_mutex_lock(&mu);
    /* another thread may have queued on the device since: keep the later end */
    dev_clock[i] = max2(dev_clock[i] + extra, last.end);
    ga_mutex_unlock(&mu);
}

/* A captured step's replay (ops/ga_capture.c) is one launch: the latency once, then
 * the work its operations were modeled at when it was recorded. */
double
ga_perf_model_last_work_s(ga_device d)
{
    int i;
    const ga_gpu_model *m = model_slot(d, &i);
    if (m == NULL || !last.valid || last.d.kind != d.kind || last.d.index != d.index) {
        return 0.0;
    }
    return max2(last.end - last.start - m->launch_latency, 0.0);
}

void
ga_perf_model_replay(ga_device d, double work_s)
{
    int i;
    const ga_gpu_model *m = model_slot(d, &i);
    if (m == NULL) {
        return;
    }
    ga_mutex_lock(&mu);
    double h = host_clock, start = max2(dev_clock[i], h);
    dev_clock[i] = start + m->launch_latency + work_s;
    ga_mutex_unlock(&mu);
    set_last(d, start, start + m->launch_latency + work_s, h);
    last.costing = 0;
}

static void model_copy(ga_device dst, ga_device src, int64_t nbytes, int host_waits);

void
ga_perf_model_copy(ga_device dst, ga_device src, int64_t nbytes)
{
    model_copy(dst, src, nbytes, 1);
}

void
ga_perf_model_copy_queued(ga_device src, int64_t nbytes)
{
    model_copy(ga_cpu(), src, nbytes, 0);
}

static void
model_copy(ga_device dst, ga_device src, int64_t nbytes, int host_waits)
{
    int si = -1, di = -1;
    const ga_gpu_model *ms = model_slot(src, &si), *md = model_slot(dst, &di);
    const ga_gpu_model *m = ms != NULL ? ms : md;
    if (m == NULL) {
        return;
    }
    double t = m->launch_latency + (double)nbytes / m->link_bandwidth;
    ga_mutex_lock(&mu);
    double h = host_clock, start = h;
    if (ms != NULL) {
        start = max2(start, dev_clock[si]);
    }
    if (md != NULL) {
        start = max2(start, dev_clock[di]);
    }
    double end = start + t;
    if (ms != NULL) {
        dev_clock[si] = end;
    }
    if (md != NULL) {
        dev_clock[di] = end;
    }
    /* the host waits for every copy (the simulated and CUDA backends' copies to and
     * from the host, and between devices, return when the data has arrived); a read
     * to the host is a host wait, with its latency */
    if (host_waits) {
        host_clock = dst.kind == GA_DEV_CPU ? end + m->sync_latency : end;
    } else {
        host_clock = h + m->launch_latency; /* queued: the host goes on */
    }
    double h_end = host_clock;
    ga_mutex_unlock(&mu);
    if (dst.kind == GA_DEV_CPU && host_waits) {
        /* the copy on the source's queue, and the host's wait for it */
        set_last(src, start, end, h);
        last.host_end = h_end;
    } else {
        set_last(md != NULL ? dst : src, start, end, h);
    }
}

void
ga_perf_model_host_wait_until(ga_device d, double t)
{
    int i;
    const ga_gpu_model *m = model_slot(d, &i);
    if (m == NULL) {
        return;
    }
    ga_mutex_lock(&mu);
    double h = host_clock;
    host_clock = max2(h, t) + m->sync_latency;
    double h_end = host_clock;
    ga_mutex_unlock(&mu);
    set_last(d, h, h_end, h);
}

void
ga_perf_model_host_wait(ga_device d)
{
    int i;
    if (model_slot(d, &i) == NULL) {
        return;
    }
    ga_mutex_lock(&mu);
    double t = dev_clock[i];
    ga_mutex_unlock(&mu);
    ga_perf_model_host_wait_until(d, t);
}

double
ga_perf_model_event_time(ga_device d)
{
    int i;
    if (model_slot(d, &i) == NULL) {
        return -1.0;
    }
    ga_mutex_lock(&mu);
    double t = max2(dev_clock[i], host_clock);
    ga_mutex_unlock(&mu);
    return t;
}

double
ga_perf_model_host_now(void)
{
    ga_mutex_lock(&mu);
    double t = host_clock;
    ga_mutex_unlock(&mu);
    return t;
}

int
ga_perf_model_take_last(ga_device d, double *start, double *end, double *host_at,
                        double *host_end)
{
    if (!last.valid || !ga_device_eq(last.d, d)) {
        return 0;
    }
    last.valid = 0;
    *start = last.start;
    *end = last.end;
    *host_at = last.host_at;
    *host_end = last.host_end;
    return 1;
}

void
ga_perf_model_forget(void)
{
    last.valid = 0;
}
