/* py_capture.c: the thread-local "inside a captured step" state of gpuarr.capture and
 * the refusal that the host-read doors call (py_capture.h). The state is C, as grad
 * mode is (py_autograd.c), because the doors are C slots (nb_bool, bf_getbuffer) that
 * a Python-level guard cannot reach. */
#include "py_common.h"

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

PyMethodDef pyga_capture_functions[] = {
    {"_capture_host_read", fn_capture_host_read, METH_O,
     "_capture_host_read(what, /)\n--\n\nRaise RuntimeError naming `what` inside a captured "
     "step; nothing outside one."},
    {"_capture_enter", fn_capture_enter, METH_O,
     "_capture_enter(name, /)\n--\n\nThis thread enters the captured step `name`: host "
     "reads of array values are refused until the paired _capture_exit()."},
    {"_capture_exit", fn_capture_exit, METH_NOARGS,
     "_capture_exit()\n--\n\nThis thread leaves the innermost captured step."},
    {"_capture_depth", fn_capture_depth, METH_NOARGS,
     "_capture_depth()\n--\n\nHow many captured steps this thread is inside."},
    {NULL},
};
