/* ga_profiler.h: the profiler's records (gpuarr.profile, python/gpuarr/_profiler.py).
 *
 * While a profile is on, every operation handed to a backend is recorded where the
 * core counts it (ga_device_count_work: the dispatch points of every device kind) and
 * closed when the backend call returns (ga_backend_status), and every host wait for a
 * device (synchronize, a read to the host, an event's synchronize) the same way. An
 * operation on a CUDA GPU also gets two timing events (ga_event.h) around it in the
 * device's queue, and on a simulated GPU the worker stamps its tasks (ga_backend.h, stamp_tasks), so
 * its device-side start and end are the device's own; on the CPU the host's clock
 * around the call is the operation's time. A copy between two devices
 * (ga_transfer.c) is a record of its own (ga_prof_copy_begin): its direction, source,
 * destination and queue. Off, the cost is one
 * relaxed load at each dispatch point. docs/DESIGN.md, "Profiler".
 */
#ifndef GA_PROF_H
#define GA_PROF_H

#include <stdint.h>

#include "ga_backend.h" /* ga_loop */
#include "ga_device.h"
#include "ga_perf_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Non-zero while a profile records (read with a relaxed load). */
extern int ga_prof_active;

static inline int
ga_prof_on(void)
{
    return __atomic_load_n(&ga_prof_active, __ATOMIC_RELAXED);
}

/* Whether the dispatch points describe their operation (ga_prof_describe): for a
 * profile, or for the modeled clock of a GPU model (ga_perf_model.h). */
static inline int
ga_describe_on(void)
{
    return ga_prof_on() || ga_perf_model_on();
}

/* What a record is: an operation, a host wait, or a copy between two devices. */
typedef enum {
    GA_PROF_NOT_COPY = 0,
    GA_PROF_H2D = 1, /* host to device */
    GA_PROF_D2H = 2, /* device to host */
    GA_PROF_D2D = 3, /* between two GPUs */
} ga_prof_copy_kind;

/* One record, as ga_prof_stop hands them back. Times in ns of the host's monotonic
 * clock (ga_monotonic_ns); a GPU's device times are its events' times put on that
 * clock through a pair of events taken when the profile started. */
typedef struct {
    ga_device device;
    int32_t is_wait;   /* 0: an operation, 1: a host wait for `device` */
    int32_t work_kind; /* ga_work_kind (operations) */
    char name[48];     /* the operation ("add", "matmul", ...) or the wait's cause */
    int32_t dtype;     /* ga_dtype, or -1 */
    int32_t ndim;      /* of `shape`, or -1 when unknown */
    int64_t shape[8];
    int64_t bytes; /* operands and result, or what the wait moved; -1 unknown */
    int64_t host_start_ns, host_end_ns; /* the call on the host */
    int64_t dev_start_ns, dev_end_ns;   /* on the device (CPU: the call) */
    /* modeled (ga_perf_model.h), in s of the modeled clocks, -1 without a model: an
     * operation's interval on its device and the host's clock when it was queued, or
     * a host wait's interval on the host (model_host_s its start) */
    double model_start_s, model_end_s, model_host_s;
    double model_host_end_s; /* a copy the host waits for: the end of the wait */
    /* copies (copy != GA_PROF_NOT_COPY): `device` is the GPU whose queue runs it,
     * `name` the cause of the host's wait when the host waits for it (host_waits:
     * a blocking copy to the host), and on_copy_queue says it ran on the device's
     * copy queue (a non-blocking copy to the host) rather than its compute queue */
    int32_t copy;
    int32_t host_waits;
    int32_t on_copy_queue;
    ga_device src, dst;
} ga_prof_record;

/* The records' clock (the host's monotonic clock), in ns. */
int64_t ga_prof_now_ns(void);
/* Start recording (drops earlier records); GA_ERR_VALUE when one is on already. */
int ga_prof_start(void);
/* Stop, wait for every GPU that recorded work, and hand back the records (malloc'd
 * array the caller frees, in the order they were opened). */
int ga_prof_stop(ga_prof_record **out, int64_t *n);

/* The hooks (each a no-op unless ga_prof_on()): */
void ga_prof_op_begin(ga_device d, int work_kind);
/* Describe the operation opened last on this thread (name, result dtype and shape,
 * bytes read and written), for the profile and the modeled clock (call it when
 * ga_describe_on()). */
void ga_prof_describe(const char *name, int dtype, int ndim, const int64_t *shape,
                      int64_t bytes);
/* The same from an elementwise loop: its output's dtype, its shape, and the bytes
 * of its array operands (broadcast operands counted as read in full). */
void ga_prof_describe_loop(const char *name, const ga_loop *loop);
void ga_prof_wait_begin(ga_device d, const char *what, int64_t bytes);
/* A copy of `bytes` from `src` to `dst` (one of them a GPU), about to be handed to
 * the backend; `queue` is the GPU that runs it. `host_waits`: the host waits for it
 * (a blocking copy to the host: the record is also the host's wait, named by the
 * thread's cause or "read to host"); `on_copy_queue`: queued on the device's copy
 * queue (ga_copy_queue.h) instead of its compute queue. Closed by ga_prof_close. */
void ga_prof_copy_begin(ga_prof_copy_kind kind, ga_device queue, ga_device src,
                        ga_device dst, int64_t bytes, int host_waits, int on_copy_queue);
/* Close what this thread opened (the backend call returned). */
void ga_prof_close(void);
/* The cause of the next host wait on this thread ("item()", "printing", ...); with
 * `weak`, only when none is set yet (numpy() called by printing). */
void ga_prof_set_cause(const char *cause, int weak);

#ifdef __cplusplus
}
#endif

#endif
