/* py_event.c: the core's timing events (ga_event.h) for gpuarr.Event
 * (python/gpuarr/_events.py), each held in a capsule that frees it. */
#include "py_common.h"

#include "ga_event.h"

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

PyMethodDef pyga_event_functions[] = {
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
    {NULL},
};
