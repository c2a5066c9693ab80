/* ga_profiler.c: the profiler's records (ga_profiler.h).
 *
 * Records live in one growable array under a mutex (a profile is a teaching tool:
 * thousands of operations, not millions). Each thread has at most one open record:
 * opened at a dispatch point or before a host wait, closed when the backend call
 * returns. A GPU operation's device times come from two timing events recorded
 * around it in the device's queue, or on a simulated GPU from stamps its worker writes
 * on the operation's own tasks (the table's stamp_tasks: two events there were two
 * more tasks each, 3-5 us per operation); they are read when the profile stops, after a wait that is
 * not counted in the transfer ledger (profiling must not change the counts it is used
 * to explain). */
#include "ga_profiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_backend.h"
#include "ga_error.h"
#include "ga_event.h"
#include "ga_platform.h"

int ga_prof_active;

typedef struct {
    ga_prof_record r;
    ga_event *ev_start, *ev_end; /* GPU operations, but on simulated GPUs */
    ga_op_stamp *stamp;         /* operations on simulated GPUs */
} slot;

static GA_THREAD_LOCAL int64_t open_idx = -1;
static GA_THREAD_LOCAL int in_prof; /* our own event calls: not operations */
static GA_THREAD_LOCAL char cause[48];

static ga_mutex mu = GA_MUTEX_INIT;
static slot *slots;
static int64_t nslots, capslots;
/* per GPU: an event completed when the profile started, and the host's time then */
static ga_event *base_ev[GA_MAX_DEVICES];
static int64_t base_ns[GA_MAX_DEVICES];
static int simulated[GA_MAX_DEVICES]; /* stamped by its worker, not by events */
/* The GPU backend's stamp_tasks (ABI 15: simulated GPUs), through the table: the
 * profiler sits above the backends and names none of them. */
static void (*stamp_tasks)(ga_op_stamp *s);

/* The simulated GPUs' stamps, in blocks that never move and are never freed: a worker
 * may write one after the profile stopped (a task that another thread queued inside
 * an operation it still had open then), so the next profile reuses the blocks. 16
 * bytes per operation of the largest profile, reachable until exit. */
enum { STAMPS_PER_BLOCK = 4096 };
static ga_op_stamp **stamp_blocks;
static int64_t nstamp_blocks, nstamps;

/* A zeroed stamp for the next operation (mu held), or NULL when out of memory. */
static ga_op_stamp *
new_stamp(void)
{
    int64_t b = nstamps / STAMPS_PER_BLOCK;
    if (b == nstamp_blocks) {
        ga_op_stamp **table = realloc(stamp_blocks, (size_t)(b + 1) * sizeof(*table));
        if (table == NULL) {
            return NULL;
        }
        stamp_blocks = table;
        table[b] = malloc(STAMPS_PER_BLOCK * sizeof(ga_op_stamp));
        if (table[b] == NULL) {
            return NULL;
        }
        nstamp_blocks++;
    }
    ga_op_stamp *st = &stamp_blocks[b][nstamps++ % STAMPS_PER_BLOCK];
    __atomic_store_n(&st->start_ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&st->end_ns, 0, __ATOMIC_RELAXED);
    return st;
}

/* An event recorded now in `d`'s compute queue, or its copy queue with `copies`, for
 * the profile (not an operation of the user's), or NULL when it could not be (the
 * record keeps the host's times). */
static ga_event *
queue_event_on(ga_device d, int copies)
{
    ga_event *ev = NULL;
    in_prof = 1;
    int st = copies ? ga_event_record_copies(d, &ev) : ga_event_record(d, &ev);
    if (st != GA_OK) {
        ev = NULL;
    }
    in_prof = 0;
    return ev;
}

static ga_event *
queue_event(ga_device d)
{
    return queue_event_on(d, 0);
}

static const char *const work_names[] = {
#define GA_WORK_NAME_(e, n, w) #n,
    GA_WORK_KINDS(GA_WORK_NAME_)
#undef GA_WORK_NAME_
};

/* A new slot's index, or -1 when out of memory (the record is dropped). */
static int64_t
new_slot(ga_device d, int is_wait, const char *name, int64_t now)
{
    ga_mutex_lock(&mu);
    if (nslots == capslots) {
        int64_t cap = capslots ? 2 * capslots : 1024;
        slot *p = realloc(slots, (size_t)cap * sizeof(*p));
        if (p == NULL) {
            ga_mutex_unlock(&mu);
            return -1;
        }
        slots = p;
        capslots = cap;
    }
    int64_t i = nslots++;
    slot *s = &slots[i];
    memset(s, 0, sizeof(*s));
    s->r.device = d;
    s->r.is_wait = is_wait;
    snprintf(s->r.name, sizeof(s->r.name), "%s", name);
    s->r.dtype = -1;
    s->r.ndim = -1;
    s->r.bytes = -1;
    s->r.host_start_ns = now;
    s->r.model_start_s = s->r.model_end_s = s->r.model_host_s = -1.0;
    s->r.model_host_end_s = -1.0;
    ga_mutex_unlock(&mu);
    ga_perf_model_forget(); /* what the model does next belongs to this record */
    return i;
}

static int
is_gpu_op(ga_device d, int is_wait)
{
    return !is_wait && d.kind == GA_DEV_GPU && d.index >= 0 &&
           d.index < GA_MAX_DEVICES && base_ev[d.index] != NULL;
}

int64_t
ga_prof_now_ns(void)
{
    return ga_monotonic_ns();
}

void
ga_prof_close(void)
{
    if (open_idx < 0 || in_prof) {
        return;
    }
    int64_t i = open_idx;
    open_idx = -1;
    int64_t now = ga_monotonic_ns();
    ga_mutex_lock(&mu);
    ga_device d = slots[i].r.device;
    int gpu = is_gpu_op(d, slots[i].r.is_wait);
    slots[i].r.host_end_ns = now;
    double ms, me, mh, mhe;
    if (ga_perf_model_take_last(d, &ms, &me, &mh, &mhe)) {
        slots[i].r.model_start_s = ms;
        slots[i].r.model_end_s = me;
        slots[i].r.model_host_s = mh;
        slots[i].r.model_host_end_s = mhe;
    }
    int stamped = slots[i].stamp != NULL;
    int copies = slots[i].r.on_copy_queue;
    ga_mutex_unlock(&mu);
    if (stamped) {
        stamp_tasks(NULL);
    } else if (gpu) {
        /* a copy on the copy queue ends there; it started when the compute queue
         * reached it (its start event), which is when the copy queue may run it */
        ga_event *ev = queue_event_on(d, copies);
        ga_mutex_lock(&mu);
        slots[i].ev_end = ev;
        ga_mutex_unlock(&mu);
    }
}

/* Open the record of an operation or a copy on `d`'s queue (the caller has checked
 * ga_prof_on() and in_prof, and closed the thread's open record); `copy` describes a
 * copy, or is NULL. */
static void
open_on_queue(ga_device d, int work_kind, const char *name, const ga_prof_record *copy)
{
    int64_t i = new_slot(d, 0, name, ga_monotonic_ns());
    if (i < 0) {
        return;
    }
    ga_mutex_lock(&mu);
    slots[i].r.work_kind = work_kind;
    if (copy != NULL) {
        slots[i].r.copy = copy->copy;
        slots[i].r.host_waits = copy->host_waits;
        slots[i].r.on_copy_queue = copy->on_copy_queue;
        slots[i].r.src = copy->src;
        slots[i].r.dst = copy->dst;
        slots[i].r.bytes = copy->bytes;
    }
    int gpu = is_gpu_op(d, 0);
    ga_op_stamp *stamp = gpu && simulated[d.index] ? new_stamp() : NULL;
    slots[i].stamp = stamp;
    ga_mutex_unlock(&mu);
    if (stamp != NULL) {
        stamp_tasks(stamp); /* until ga_prof_close */
    } else if (gpu) {
        ga_event *ev = queue_event(d);
        ga_mutex_lock(&mu);
        slots[i].ev_start = ev;
        ga_mutex_unlock(&mu);
    }
    open_idx = i;
}

void
ga_prof_op_begin(ga_device d, int work_kind)
{
    if (!ga_prof_on() || in_prof) {
        return;
    }
    ga_prof_close();
    open_on_queue(d, work_kind,
                  (unsigned)work_kind < GA_WORK_NKINDS ? work_names[work_kind] : "?",
                  NULL);
}

void
ga_prof_copy_begin(ga_prof_copy_kind kind, ga_device queue, ga_device src,
                   ga_device dst, int64_t bytes, int host_waits, int on_copy_queue)
{
    if (!ga_prof_on() || in_prof) {
        return;
    }
    ga_prof_close();
    ga_prof_record c = {.copy = (int32_t)kind, .host_waits = host_waits,
                        .on_copy_queue = on_copy_queue, .src = src, .dst = dst,
                        .bytes = bytes};
    /* a copy the host waits for is its wait too: the name is the wait's cause */
    const char *name = host_waits ? (cause[0] ? cause : "read to host") : "copy";
    open_on_queue(queue, -1, name, &c);
    if (host_waits) {
        cause[0] = '\0';
    }
}

void
ga_prof_describe(const char *name, int dtype, int ndim, const int64_t *shape,
                 int64_t bytes)
{
    if (ga_perf_model_on()) {
        ga_perf_model_op_cost(name, dtype, ndim, shape, bytes);
    }
    if (!ga_prof_on() || open_idx < 0) {
        return;
    }
    ga_mutex_lock(&mu);
    ga_prof_record *r = &slots[open_idx].r;
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->dtype = dtype;
    r->ndim = ndim < 0 ? -1 : ndim > 8 ? 8 : ndim;
    for (int k = 0; k < r->ndim; k++) {
        r->shape[k] = shape[k];
    }
    r->bytes = bytes;
    ga_mutex_unlock(&mu);
}

void
ga_prof_describe_loop(const char *name, const ga_loop *loop)
{
    if (!ga_describe_on()) {
        return;
    }
    int64_t bytes = 0;
    for (int i = 0; i < loop->nargs; i++) {
        if (!loop->args[i].is_scalar) {
            bytes += loop->size * ga_dtype_itemsize((ga_dtype)loop->args[i].dtype);
        }
    }
    ga_prof_describe(name, loop->args[0].dtype, loop->ndim, loop->shape, bytes);
}

void
ga_prof_set_cause(const char *c, int weak)
{
    if (ga_prof_on() && !(weak && cause[0] != '\0')) {
        snprintf(cause, sizeof(cause), "%s", c);
    }
}

void
ga_prof_wait_begin(ga_device d, const char *what, int64_t bytes)
{
    if (!ga_prof_on() || in_prof) {
        return;
    }
    ga_prof_close();
    int64_t i = new_slot(d, 1, cause[0] ? cause : what, ga_monotonic_ns());
    cause[0] = '\0';
    if (i < 0) {
        return;
    }
    ga_mutex_lock(&mu);
    slots[i].r.bytes = bytes;
    ga_mutex_unlock(&mu);
    open_idx = i;
}

static void
drop_all(void)
{
    for (int64_t i = 0; i < nslots; i++) {
        ga_event_free(slots[i].ev_start);
        ga_event_free(slots[i].ev_end);
    }
    nslots = 0;
    nstamps = 0;
    for (int d = 0; d < GA_MAX_DEVICES; d++) {
        ga_event_free(base_ev[d]);
        base_ev[d] = NULL;
        simulated[d] = 0;
    }
}

/* ga_backend_status's observer: the backend call that a profiled record waited for
 * returned (registered, so that the device registry below never calls up into the
 * profiler by name) */
static void
observe_status(int st)
{
    (void)st;
    if (ga_prof_on()) {
        ga_prof_close();
    }
}

int
ga_prof_start(void)
{
    if (ga_prof_on()) {
        return ga_error(GA_ERR_VALUE, "a profile is already recording: profiles do not "
                                      "nest (leave the other `with gpuarr.profile()` "
                                      "block first)");
    }
    static int watching; /* set the observer and hook through which the registry and
                          * events below reach the profiler, once */
    if (!watching) {
        GA_TRY(ga_device_observe_status(observe_status));
        ga_event_set_wait_hook(ga_prof_wait_begin); /* events' counted waits */
        watching = 1;
    }
    ga_mutex_lock(&mu);
    drop_all();
    ga_mutex_unlock(&mu);
    /* each GPU's clock is put on the host's through an event completed now */
    in_prof = 1;
    int n = ga_num_gpus();
    for (int d = 0; d < n && d < GA_MAX_DEVICES; d++) {
        ga_device dev = {GA_DEV_GPU, d};
        const ga_backend *be;
        simulated[d] = ga_device_backend_nowait(dev, &be) == GA_OK && be->stamp_tasks != NULL;
        if (simulated[d]) {
            stamp_tasks = be->stamp_tasks; /* one GPU backend per process */
        }
        ga_event *ev;
        /* an idle device stamps the base event about when it is recorded (only a
         * GPU's own clock needs it: ga_event_host_time_ns) */
        if (ga_event_record(dev, &ev) == GA_OK) {
            (void)ga_event_wait_uncounted(ev);
            ga_event_free(ev);
        }
        int64_t t = ga_monotonic_ns();
        if (ga_event_record(dev, &ev) == GA_OK) {
            if (ga_event_wait_uncounted(ev) == GA_OK) {
                base_ns[d] = t;
                base_ev[d] = ev;
            } else {
                ga_event_free(ev);
            }
        }
    }
    in_prof = 0;
    open_idx = -1;
    cause[0] = '\0';
    __atomic_store_n(&ga_prof_active, 1, __ATOMIC_RELAXED);
    return GA_OK;
}

static int64_t
device_ns(ga_device d, ga_event *ev, int64_t fallback)
{
    double ms;
    int64_t ns;
    if (ev == NULL || ga_event_wait_uncounted(ev) != GA_OK) {
        return fallback;
    }
    if (ga_event_host_time_ns(ev, &ns) == GA_OK) {
        return ns; /* the device stamps with the host's clock */
    }
    if (ga_event_elapsed_ms(base_ev[d.index], ev, &ms) != GA_OK) {
        return fallback;
    }
    return base_ns[d.index] + (int64_t)(ms * 1e6);
}

int
ga_prof_stop(ga_prof_record **out, int64_t *n)
{
    ga_prof_close();
    __atomic_store_n(&ga_prof_active, 0, __ATOMIC_RELAXED);
    *out = NULL;
    *n = 0;
    /* a simulated GPU's stamps are written once its worker has run the tasks: one
     * uncounted wait per such device (an event after all of them) */
    for (int d = 0; d < GA_MAX_DEVICES; d++) {
        if (simulated[d] && base_ev[d] != NULL) {
            ga_event *ev = queue_event((ga_device){GA_DEV_GPU, d});
            if (ev != NULL) {
                (void)ga_event_wait_uncounted(ev);
                ga_event_free(ev);
            }
        }
    }
    in_prof = 1;
    ga_mutex_lock(&mu);
    ga_prof_record *recs = malloc((size_t)(nslots > 0 ? nslots : 1) * sizeof(*recs));
    if (recs == NULL) {
        drop_all();
        ga_mutex_unlock(&mu);
        in_prof = 0;
        return ga_error(GA_ERR_NOMEM, "out of host memory for the profile's records");
    }
    /* per GPU queue (compute, copy): where its last record ended */
    int64_t last_end[GA_MAX_DEVICES][2] = {{0}};
    for (int64_t i = 0; i < nslots; i++) {
        slot *s = &slots[i];
        ga_prof_record *r = &s->r;
        if (r->host_end_ns == 0) {
            r->host_end_ns = r->host_start_ns; /* never closed (another thread's) */
        }
        if (s->stamp != NULL) {
            /* no task queued (a view, a host-side refusal): the host's times */
            int64_t a = __atomic_load_n(&s->stamp->start_ns, __ATOMIC_RELAXED);
            int64_t b = __atomic_load_n(&s->stamp->end_ns, __ATOMIC_RELAXED);
            r->dev_start_ns = a != 0 && b != 0 ? a : r->host_start_ns;
            r->dev_end_ns = a != 0 && b != 0 ? b : r->host_end_ns;
        } else if (is_gpu_op(r->device, r->is_wait)) {
            r->dev_start_ns = device_ns(r->device, s->ev_start, r->host_start_ns);
            r->dev_end_ns = device_ns(r->device, s->ev_end, r->host_end_ns);
            if (r->dev_end_ns < r->dev_start_ns) {
                r->dev_end_ns = r->dev_start_ns;
            }
        } else {
            r->dev_start_ns = r->host_start_ns;
            r->dev_end_ns = r->host_end_ns;
        }
        if (is_gpu_op(r->device, r->is_wait)) {
            /* A copy the host waited for was over when the wait returned; its end
             * event, recorded after the backend's copy returned, is stamped when
             * the queue reaches it, which can be later. */
            if (r->host_waits && r->dev_end_ns > r->host_end_ns) {
                r->dev_end_ns = r->host_end_ns;
            }
            /* An in-order queue ran a copy after its earlier work, so it starts no
             * sooner than that work ended. Two copies' times need this: one the host
             * made itself (a simulated GPU's copy to the host, or one from the host
             * above its staging size: the host waits for the queue, then copies)
             * has the host's times, which begin before the wait; and a simulated
             * copy between GPUs is stamped from the first of its two tasks to start,
             * which may be the source's, before the destination's queue got there. */
            int64_t *last = &last_end[r->device.index][r->on_copy_queue ? 1 : 0];
            if (r->copy != GA_PROF_NOT_COPY && r->dev_start_ns < *last) {
                r->dev_start_ns = *last;
            }
            if (r->dev_end_ns < r->dev_start_ns) {
                r->dev_end_ns = r->dev_start_ns;
            }
            if (r->dev_end_ns > *last) {
                *last = r->dev_end_ns;
            }
        }
        recs[i] = *r;
    }
    *n = nslots;
    drop_all();
    ga_mutex_unlock(&mu);
    in_prof = 0;
    *out = recs;
    return GA_OK;
}
