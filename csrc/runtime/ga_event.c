/* ga_event.c: timing events (ga_event.h) over the backends' ABI 9 entries. A backend
 * without them (the CPU) runs its work before returning, so the host's clock at the
 * record is the event's time. */
#include "ga_event.h"

#include <math.h>
#include <stdlib.h>

#include "ga_backend.h"
#include "ga_error.h"
#include "ga_perf_model.h"
#include "ga_platform.h"
#include "ga_ledger.h"

struct ga_event {
    ga_device device;
    const ga_backend *be; /* NULL: a host timestamp (below) */
    void *handle;         /* the backend's event */
    int64_t host_ns;
    /* on the device's modeled clock (ga_perf_model.h), -1 without a model */
    double model_s;
};

static int
has_events(const ga_backend *be)
{
    return be->event_record != NULL && be->event_query != NULL &&
           be->event_synchronize != NULL && be->event_elapsed != NULL &&
           be->event_destroy != NULL;
}

/* At the end of d's compute queue, or with `copies` of its copy queue where the
 * backend has one (ABI 12). */
static int
record(ga_device d, int copies, ga_event **out)
{
    const ga_backend *be;
    *out = NULL;
    GA_TRY(ga_device_backend_nowait(d, &be));
    ga_event *ev = calloc(1, sizeof(*ev));
    if (ev == NULL) {
        return ga_error(GA_ERR_NOMEM, "out of host memory for an event");
    }
    ev->device = d;
    ev->model_s = ga_perf_model_event_time(d);
    if (d.kind != GA_DEV_CPU && has_events(be)) {
        int (*rec)(int, void **) = copies && be->copies_event_record != NULL
                                       ? be->copies_event_record
                                       : be->event_record;
        int st = ga_backend_status(be, rec(ga_device_local(d), &ev->handle));
        if (st != GA_OK) {
            free(ev);
            return st;
        }
        ev->be = be;
    } else {
        ev->host_ns = ga_monotonic_ns();
    }
    *out = ev;
    return GA_OK;
}

int
ga_event_record(ga_device d, ga_event **out)
{
    return record(d, 0, out);
}

int
ga_event_record_copies(ga_device d, ga_event **out)
{
    return record(d, 1, out);
}

int
ga_event_query(ga_event *ev, int *done)
{
    *done = 1;
    if (ev->be == NULL) {
        return GA_OK;
    }
    return ga_backend_status(
        ev->be, ev->be->event_query(ga_device_local(ev->device), ev->handle, done));
}

int
ga_event_synchronize(ga_event *ev)
{
    return ga_event_wait_as(ev, "Event.synchronize()");
}

ga_device
ga_event_device(const ga_event *ev)
{
    return ev->device;
}

/* The profiler's "a host wait begins" (ga_prof_wait_begin), set by the profiler: it
 * sits above events (it times operations with them), so events do not call it by
 * name. NULL until the first profile starts, when it would have done nothing. */
static ga_event_wait_hook_fn wait_hook;

void
ga_event_set_wait_hook(ga_event_wait_hook_fn hook)
{
    __atomic_store_n(&wait_hook, hook, __ATOMIC_RELEASE);
}

int
ga_event_wait_as(ga_event *ev, const char *what)
{
    if (ev->be == NULL) {
        return GA_OK;
    }
    ga_count_sync();
    ga_event_wait_hook_fn hook = __atomic_load_n(&wait_hook, __ATOMIC_ACQUIRE);
    if (hook != NULL) {
        hook(ev->device, what, 0);
    }
    if (ev->model_s >= 0) {
        ga_perf_model_host_wait_until(ev->device, ev->model_s);
    }
    /* the profiler's record of this wait closes when the backend's wait returns
     * (ga_backend_status's observers) */
    return ga_event_wait_uncounted(ev);
}

int
ga_event_wait_uncounted(ga_event *ev)
{
    if (ev->be == NULL) {
        return GA_OK;
    }
    return ga_backend_status(
        ev->be, ev->be->event_synchronize(ga_device_local(ev->device), ev->handle));
}

/* Each device keeps its own clock, measured or modeled. */
static int
same_device(const ga_event *start, const ga_event *end)
{
    if (ga_device_eq(start->device, end->device)) {
        return GA_OK;
    }
    char a[32], b[32];
    return ga_error(GA_ERR_VALUE,
                    "elapsed_time: the events were recorded on different devices "
                    "(%s and %s); each device keeps its own clock, so record both "
                    "on one device",
                    ga_device_str(start->device, a, sizeof(a)),
                    ga_device_str(end->device, b, sizeof(b)));
}

int
ga_event_elapsed_ms(ga_event *start, ga_event *end, double *ms)
{
    *ms = 0.0;
    GA_TRY(same_device(start, end));
    if (start->be == NULL) {
        *ms = (double)(end->host_ns - start->host_ns) / 1e6;
        return GA_OK;
    }
    int dev = ga_device_local(start->device);
    const char *which[2] = {"start", "end"};
    ga_event *evs[2] = {start, end};
    for (int i = 0; i < 2; i++) {
        int done = 0;
        GA_TRY(ga_backend_status(start->be,
                                 start->be->event_query(dev, evs[i]->handle, &done)));
        if (!done) {
            char d[32];
            return ga_error(GA_ERR_VALUE,
                            "elapsed_time: the %s event has not completed on %s yet; "
                            "call its synchronize() (or gpuarr.synchronize()) first",
                            which[i], ga_device_str(start->device, d, sizeof(d)));
        }
    }
    return ga_backend_status(
        start->be, start->be->event_elapsed(dev, start->handle, end->handle, ms));
}

int
ga_event_elapsed_modeled_ms(ga_event *start, ga_event *end, double *ms)
{
    *ms = 0.0;
    char a[32];
    GA_TRY(same_device(start, end));
    if (start->model_s < 0 || end->model_s < 0) {
        return ga_error(
            GA_ERR_VALUE,
            "elapsed_time(clock='modeled'): %s carried no performance model "
            "when the events were recorded; only GPUs started with a model "
            "have one (GPUARR_SIMULATE_GPUS=2:T4, or "
            "gpuarr.simulate_gpus_if_none(2, model=\"T4\")); use "
            "clock='measured'",
            ga_device_str(start->device, a, sizeof(a)));
    }
    *ms = (end->model_s - start->model_s) * 1e3;
    return GA_OK;
}

int
ga_event_host_time_ns(ga_event *ev, int64_t *ns)
{
    if (ev->be == NULL) {
        *ns = ev->host_ns;
        return GA_OK;
    }
    double ms;
    GA_TRY(ga_backend_status(ev->be, ev->be->event_elapsed(ga_device_local(ev->device),
                                                           NULL, ev->handle, &ms)));
    *ns = (int64_t)llround(ms * 1e6);
    return GA_OK;
}

void
ga_event_free(ga_event *ev)
{
    if (ev == NULL) {
        return;
    }
    if (ev->be != NULL) {
        ev->be->event_destroy(ga_device_local(ev->device), ev->handle);
    }
    free(ev);
}
