/* py_event.c: the core's timing events (ga_event.h) for gpuarr.Event
 * (python/gpuarr/_events.py), each held in a capsule that frees it. */
#include "py_common.h"

#include "ga_event.h"
#include "ga_fault.h"
#include "ga_perf_model.h"
#include "ga_profiler.h"

#include <stdlib.h>

static const char capsule_name[] = "gpuarr._core.event";

static void
capsule_free(PyObject *cap)
{
    ga_event_free(PyCapsule_GetPointer(cap, capsule_name));
}

static ga_event *
event_of(PyObject *cap)
{
    return PyCapsule_GetPointer(cap, capsule_name); /* NULL and an error if not one */
}

static PyObject *
fn_event_record(PyObject *m, PyObject *arg)
{
    (void)m;
    ga_device d;
    if (!pyga_device_converter(arg, &d)) {
        return NULL;
    }
    ga_event *ev;
    int st = ga_event_record(d, &ev);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    PyObject *cap = PyCapsule_New(ev, capsule_name, capsule_free);
    if (cap == NULL) {
        ga_event_free(ev);
    }
    return cap;
}

static PyObject *
fn_event_query(PyObject *m, PyObject *cap)
{
    (void)m;
    ga_event *ev = event_of(cap);
    if (ev == NULL) {
        return NULL;
    }
    int done = 0;
    int st = ga_event_query(ev, &done);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return PyBool_FromLong(done);
}

static PyObject *
fn_event_synchronize(PyObject *m, PyObject *cap)
{
    (void)m;
    ga_event *ev = event_of(cap);
    if (ev == NULL) {
        return NULL;
    }
    int st = ga_event_synchronize(ev);
    if (st == GA_OK) {
        /* as the device's synchronize() does: the failures of work this thread queued
         * there, each raised once (the CPU raised its own at the operation). Work
         * queued after the record may be among them when its outcome is known: it is
         * reported earlier, never lost or raised twice. */
        st = ga_fault_report_thread(0, ga_event_device(ev));
    }
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    Py_RETURN_NONE;
}

static PyObject *
fn_event_elapsed(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "OO:_event_elapsed", &a, &b)) {
        return NULL;
    }
    ga_event *start = event_of(a), *end = start != NULL ? event_of(b) : NULL;
    if (end == NULL) {
        return NULL;
    }
    double ms;
    int st = ga_event_elapsed_ms(start, end, &ms);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return PyFloat_FromDouble(ms);
}

static PyObject *
fn_event_elapsed_modeled(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "OO:_event_elapsed_modeled", &a, &b)) {
        return NULL;
    }
    ga_event *start = event_of(a), *end = start != NULL ? event_of(b) : NULL;
    if (end == NULL) {
        return NULL;
    }
    double ms;
    int st = ga_event_elapsed_modeled_ms(start, end, &ms);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return PyFloat_FromDouble(ms);
}

/* A model's figures as a dict (gpuarr.device_model builds its dataclass from it). */
static PyObject *
model_dict(const ga_gpu_model *g)
{
    return Py_BuildValue(
        "{ss,ss,sd,sd,sd,sd,sd,sd,sd,sd,sd,sd}", "name", g->name, "full_name",
        g->full_name, "memory_bandwidth", g->mem_bandwidth, "link_bandwidth",
        g->link_bandwidth, "flops_float16", g->flops_f16, "flops_float32", g->flops_f32,
        "flops_float64", g->flops_f64, "matmul_flops_float16", g->matmul_f16,
        "matmul_flops_float32", g->matmul_f32, "matmul_flops_float64", g->matmul_f64,
        "launch_latency", g->launch_latency, "sync_latency", g->sync_latency);
}

static PyObject *
fn_device_model(PyObject *m, PyObject *arg)
{
    (void)m;
    ga_device d;
    if (!pyga_existing_device_converter(arg, &d)) {
        return NULL;
    }
    const ga_gpu_model *g = ga_perf_model_of(d);
    return g != NULL ? model_dict(g) : Py_NewRef(Py_None);
}

static PyObject *
fn_gpu_models(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    PyObject *list = PyList_New(0);
    for (int i = 0; list != NULL && i < ga_perf_model_count(); i++) {
        PyObject *d = model_dict(ga_perf_model_at(i));
        if (d == NULL || PyList_Append(list, d) < 0) {
            Py_XDECREF(d);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(d);
    }
    return list;
}

static PyObject *
fn_model_roofline(PyObject *m, PyObject *args)
{
    (void)m;
    const char *name;
    double flops, bytes;
    int dtype = -1, matmul;
    if (!PyArg_ParseTuple(args, "sddO&p:_model_roofline", &name, &flops, &bytes,
                          pyga_dtype_converter, &dtype, &matmul)) {
        return NULL;
    }
    const ga_gpu_model *g;
    int st = ga_perf_model_lookup(name, &g);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return PyFloat_FromDouble(ga_perf_model_roofline_s(g, flops, bytes, dtype, matmul));
}

static PyObject *
fn_model_host_now(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyFloat_FromDouble(ga_perf_model_host_now());
}

static PyObject *
fn_prof_start(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    int st = ga_prof_start();
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    Py_RETURN_NONE;
}

/* One tuple per record: (device, is_wait, work kind, name, dtype name or None, shape
 * or None, bytes or None, host start, host end, device start, device end) with times
 * in ns of the host's monotonic clock, then (modeled start, modeled end, modeled host
 * time, modeled end of the host's wait for a copy) in s of the modeled clocks, or four
 * Nones without a model, then the copy:
 * None for a record that is not one, else (direction ga_prof_copy_kind, source,
 * destination, host waits, on the copy queue). */
static PyObject *
record_tuple(const ga_prof_record *r)
{
    PyObject *dtype = r->dtype >= 0 ? Py_NewRef(pyga_dtype_obj((ga_dtype)r->dtype))
                                    : Py_NewRef(Py_None);
    PyObject *shape =
        r->ndim >= 0 ? pyga_int64_tuple(r->ndim, r->shape) : Py_NewRef(Py_None);
    PyObject *bytes =
        r->bytes >= 0 ? PyLong_FromLongLong(r->bytes) : Py_NewRef(Py_None);
    PyObject *model =
        r->model_start_s >= 0
            ? Py_BuildValue("(dddd)", r->model_start_s, r->model_end_s, r->model_host_s,
                            r->model_host_end_s)
            : Py_BuildValue("(OOOO)", Py_None, Py_None, Py_None, Py_None);
    PyObject *copy =
        r->copy != GA_PROF_NOT_COPY
            ? Py_BuildValue("(iNNii)", (int)r->copy, pyga_device_new(r->src),
                            pyga_device_new(r->dst), (int)r->host_waits,
                            (int)r->on_copy_queue)
            : Py_NewRef(Py_None);
    PyObject *t = NULL;
    if (dtype != NULL && shape != NULL && bytes != NULL && model != NULL &&
        copy != NULL) {
        t = Py_BuildValue("(NiisOOOLLLLOO)", pyga_device_new(r->device), r->is_wait,
                          r->work_kind, r->name, dtype, shape, bytes,
                          (long long)r->host_start_ns, (long long)r->host_end_ns,
                          (long long)r->dev_start_ns, (long long)r->dev_end_ns, model,
                          copy);
    }
    Py_XDECREF(dtype);
    Py_XDECREF(shape);
    Py_XDECREF(bytes);
    Py_XDECREF(model);
    Py_XDECREF(copy);
    return t;
}

static PyObject *
fn_prof_stop(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    ga_prof_record *recs;
    int64_t n;
    int st = ga_prof_stop(&recs, &n);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (int64_t i = 0; list != NULL && i < n; i++) {
        PyObject *t = record_tuple(&recs[i]);
        if (t == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    free(recs);
    return list;
}

static PyObject *
fn_prof_clock(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyLong_FromLongLong((long long)ga_prof_now_ns());
}

PyMethodDef pyga_event_functions[] = {
    {"_prof_start", fn_prof_start, METH_NOARGS,
     "_prof_start()\n--\n\nStart recording operations and host waits "
     "(gpuarr.profile)."},
    {"_prof_stop", fn_prof_stop, METH_NOARGS,
     "_prof_stop()\n--\n\nStop recording; the records as tuples (gpuarr.profile)."},
    {"_prof_clock", fn_prof_clock, METH_NOARGS,
     "_prof_clock()\n--\n\nThe host's monotonic clock in ns (the records' clock)."},
    {"_event_record", fn_event_record, METH_O,
     "_event_record(device, /)\n--\n\nA new timing event at the end of device's queue "
     "(gpuarr.Event.record)."},
    {"_event_query", fn_event_query, METH_O,
     "_event_query(event, /)\n--\n\nTrue once the work before the event is done."},
    {"_event_synchronize", fn_event_synchronize, METH_O,
     "_event_synchronize(event, /)\n--\n\nWait on the host until the event completed."},
    {"_event_elapsed", fn_event_elapsed, METH_VARARGS,
     "_event_elapsed(start, end, /)\n--\n\nMilliseconds between two completed events "
     "of "
     "one device, by the device's clock."},
    {"_event_elapsed_modeled", fn_event_elapsed_modeled, METH_VARARGS,
     "_event_elapsed_modeled(start, end, /)\n--\n\nMilliseconds between two events "
     "of one device on its modeled clock (a GPU model's)."},
    {"_device_model", fn_device_model, METH_O,
     "_device_model(device, /)\n--\n\nThe GPU model's figures that device carries "
     "(a dict), or None."},
    {"_gpu_models", fn_gpu_models, METH_NOARGS,
     "_gpu_models()\n--\n\nThe known GPU models' figures (dicts)."},
    {"_model_roofline", fn_model_roofline, METH_VARARGS,
     "_model_roofline(model, flops, bytes, dtype, matmul, /)\n--\n\nSeconds an "
     "operation takes on a GPU model: launch latency + max(bytes / bandwidth, flops / "
     "peak)."},
    {"_model_host_now", fn_model_host_now, METH_NOARGS,
     "_model_host_now()\n--\n\nThe host's modeled clock in s (0 without a model)."},
    {NULL},
};
