/* py_capture.c: the thread-local "inside a captured step" state of gpuarr.capture and
 * the refusal that the host-read doors call (py_capture.h). The state is C, as grad
 * mode is (py_autograd.c), because the doors are C slots (nb_bool, bf_getbuffer) that
 * a Python-level guard cannot reach. */
#include "py_common.h"

#include "ga_capture.h"
#include "ga_platform.h" /* GA_THREAD_LOCAL */
#include "py_capture.h"

/* Depth of nested captured calls on this thread, and the outermost one's name (for
 * the message). A new thread starts outside any capture. */
static GA_THREAD_LOCAL int capture_depth;
static GA_THREAD_LOCAL char capture_name[96];

int
pyga_capture_host_read(const char *what)
{
    if (capture_depth == 0) {
        return 0;
    }
    PyErr_Format(PyExc_RuntimeError,
                 "gpuarr.capture: %s reads an array's value on the host inside the "
                 "captured step %s; a captured step is recorded once and replayed "
                 "without running its Python, so it cannot read values or branch on "
                 "them (an `if` on an array, printing, .item(), .numpy()). Return the "
                 "array from the step and read it after the call",
                 what, capture_name);
    return -1;
}

/* _capture_enter(name): the thread enters a captured function */
static PyObject *
fn_capture_enter(PyObject *m, PyObject *name)
{
    (void)m;
    if (!PyUnicode_Check(name)) {
        PyErr_SetString(PyExc_TypeError, "_capture_enter needs the step's name (a str)");
        return NULL;
    }
    if (capture_depth == 0) {
        const char *s = PyUnicode_AsUTF8(name);
        if (s == NULL) {
            return NULL;
        }
        snprintf(capture_name, sizeof(capture_name), "%s", s);
    }
    capture_depth++;
    Py_RETURN_NONE;
}

/* _capture_exit(): the thread leaves it (paired with each _capture_enter) */
static PyObject *
fn_capture_exit(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    if (capture_depth > 0) {
        capture_depth--;
    }
    Py_RETURN_NONE;
}

/* _capture_depth(): how many captured calls this thread is inside (for tests) */
static PyObject *
fn_capture_depth(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyLong_FromLong(capture_depth);
}

/* _capture_host_read(what): the refusal for a door written in Python (printing) */
static PyObject *
fn_capture_host_read(PyObject *m, PyObject *what)
{
    (void)m;
    const char *s = PyUnicode_Check(what) ? PyUnicode_AsUTF8(what) : NULL;
    if (s == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "_capture_host_read needs the door's name");
        }
        return NULL;
    }
    if (pyga_capture_host_read(s) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* --- the recorded plan (ops/ga_capture.h) ------------------------------------ */

#define PLAN_CAPSULE "gpuarr._core.plan"

static void
plan_capsule_free(PyObject *cap)
{
    ga_plan *p = (ga_plan *)PyCapsule_GetPointer(cap, PLAN_CAPSULE);
    if (p != NULL) {
        ga_plan_free(p);
    } else {
        PyErr_Clear();
    }
}

/* _capture_record_begin(name): this thread records its device work into a plan */
static PyObject *
fn_capture_record_begin(PyObject *m, PyObject *name)
{
    (void)m;
    const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (s == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "_capture_record_begin needs the step's name");
        }
        return NULL;
    }
    int st = ga_capture_begin(s);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    Py_RETURN_NONE;
}

/* _capture_record_end(keep): stop recording; the plan (a capsule) if keep, else None */
static PyObject *
fn_capture_record_end(PyObject *m, PyObject *keep)
{
    (void)m;
    int k = PyObject_IsTrue(keep);
    if (k < 0) {
        return NULL;
    }
    if (!k) {
        ga_capture_abort();
        Py_RETURN_NONE;
    }
    ga_plan *p;
    int st = ga_capture_end(&p);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    PyObject *cap = PyCapsule_New(p, PLAN_CAPSULE, plan_capsule_free);
    if (cap == NULL) {
        ga_plan_free(p);
    }
    return cap;
}

/* _capture_pause() / _capture_resume(): work between them is not recorded */
static PyObject *
fn_capture_pause(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    ga_capture_pause();
    Py_RETURN_NONE;
}

static PyObject *
fn_capture_resume(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    ga_capture_resume();
    Py_RETURN_NONE;
}

static ga_plan *
plan_of(PyObject *cap)
{
    return (ga_plan *)PyCapsule_GetPointer(cap, PLAN_CAPSULE);
}

/* _plan_replay(plan): run the recorded work once */
static PyObject *
fn_plan_replay(PyObject *m, PyObject *cap)
{
    (void)m;
    ga_plan *p = plan_of(cap);
    if (p == NULL) {
        return NULL;
    }
    int st = ga_plan_replay(p);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    Py_RETURN_NONE;
}

/* _plan_info(plan): {'ops', 'held', 'held_bytes', 'orphans', 'draws', 'graph',
 * 'graph_reason'} */
static PyObject *
fn_plan_info(PyObject *m, PyObject *cap)
{
    (void)m;
    ga_plan *p = plan_of(cap);
    if (p == NULL) {
        return NULL;
    }
    ga_plan_info i;
    ga_plan_get_info(p, &i);
    return Py_BuildValue("{sLsLsLsLsLsisz}", "ops", (long long)i.ops, "held",
                         (long long)i.held, "held_bytes", (long long)i.held_bytes,
                         "orphans", (long long)i.orphans, "draws", (long long)i.draws,
                         "graph", i.graph, "graph_reason",
                         i.graph < 0 ? i.graph_why : NULL);
}

PyMethodDef pyga_capture_functions[] = {
    {"_capture_host_read", fn_capture_host_read, METH_O,
     "_capture_host_read(what, /)\n--\n\nRaise RuntimeError naming `what` inside a captured "
     "step; nothing outside one."},
    {"_capture_enter", fn_capture_enter, METH_O,
     "_capture_enter(name, /)\n--\n\nThis thread enters the captured step `name`: host "
     "reads of array values are refused until the paired _capture_exit()."},
    {"_capture_exit", fn_capture_exit, METH_NOARGS,
     "_capture_exit()\n--\n\nThis thread leaves the innermost captured step."},
    {"_capture_record_begin", fn_capture_record_begin, METH_O,
     "_capture_record_begin(name, /)\n--\n\nThis thread records the device work of its "
     "operations into a plan until _capture_record_end."},
    {"_capture_record_end", fn_capture_record_end, METH_O,
     "_capture_record_end(keep, /)\n--\n\nStop recording: the plan if `keep`, else "
     "None (what was recorded is dropped). RuntimeError if the step did what a replay "
     "cannot repeat."},
    {"_capture_pause", fn_capture_pause, METH_NOARGS,
     "_capture_pause()\n--\n\nThis thread's recording leaves out what runs until "
     "_capture_resume() (work a step redoes in Python before each replay)."},
    {"_capture_resume", fn_capture_resume, METH_NOARGS,
     "_capture_resume()\n--\n\nRecord again after _capture_pause()."},
    {"_plan_replay", fn_plan_replay, METH_O,
     "_plan_replay(plan, /)\n--\n\nRun a recorded plan once."},
    {"_plan_info", fn_plan_info, METH_O,
     "_plan_info(plan, /)\n--\n\nA plan's operations, held blocks and their bytes, "
     "orphans (older blocks only the plan holds), random draws per replay, graph (1: replays as one CUDA graph, -1: as its calls, graph_reason says why, 0: not replayed yet)."},
    {"_capture_depth", fn_capture_depth, METH_NOARGS,
     "_capture_depth()\n--\n\nHow many captured steps this thread is inside."},
    {NULL},
};
