/* py_fault.c: what the core's failure tracking (ga_fault.h) needs from Python: the
 * line of user code that queues a fallible operation, and the report of failures
 * never raised when the interpreter exits (printed, and a non-zero exit status, as an
 * uncaught exception gives). */
#include "py_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_fault.h"

/* The gpuarr package's folder: frames there are the library's, not the user's. */
static char package_dir[1024];

/* Found at the first origin: the module's __file__ is set only after PyInit. */
static void
find_package_dir(void)
{
    if (package_dir[0] != '\0') {
        return;
    }
    PyObject *name = PyUnicode_FromString("gpuarr._core");
    PyObject *mod = name != NULL ? PyImport_GetModule(name) : NULL; /* no import */
    Py_XDECREF(name);
    PyObject *file = mod != NULL ? PyModule_GetFilenameObject(mod) : NULL;
    Py_XDECREF(mod);
    const char *f = file != NULL ? PyUnicode_AsUTF8(file) : NULL;
    /* the last separator: '/', or '\\' as Windows writes paths (a Linux folder's name
     * may hold a backslash, but not the file name after the last '/': it is _core's) */
    const char *slash = f != NULL ? strrchr(f, '/') : NULL;
    const char *back = f != NULL ? strrchr(f, '\\') : NULL;
    if (back != NULL && (slash == NULL || back > slash)) {
        slash = back;
    }
    if (slash != NULL && (size_t)(slash - f) + 1 < sizeof(package_dir)) {
        memcpy(package_dir, f, (size_t)(slash - f) + 1); /* with the slash */
        package_dir[slash - f + 1] = '\0';
    }
    Py_XDECREF(file);
    PyErr_Clear();
}

static int
in_package(PyObject *filename)
{
    const char *f = PyUnicode_AsUTF8(filename);
    if (f == NULL) {
        PyErr_Clear();
        return 0;
    }
    size_t n = strlen(package_dir);
    return n > 0 && strncmp(f, package_dir, n) == 0;
}

/* "file:line" of the innermost frame outside the gpuarr package (the innermost frame
 * when every one is inside). Called with the GIL held, when an origin is made. */
static void
where_hook(char *buf, size_t n)
{
    buf[0] = '\0';
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exc = PyErr_GetRaisedException();
#else
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
#endif
    find_package_dir();
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    Py_XINCREF(f);
    PyFrameObject *first = NULL;
    while (f != NULL) {
        PyCodeObject *code = PyFrame_GetCode(f);
        int inside = in_package(code->co_filename);
        Py_DECREF(code);
        if (first == NULL) {
            first = (PyFrameObject *)Py_NewRef(f);
        }
        if (!inside) {
            break;
        }
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    PyFrameObject *use = f != NULL ? f : first;
    if (use != NULL) {
        PyCodeObject *code = PyFrame_GetCode(use);
        const char *name = PyUnicode_AsUTF8(code->co_filename);
        snprintf(buf, n, "%s:%d", name != NULL ? name : "?",
                 PyFrame_GetLineNumber(use));
        Py_DECREF(code);
    }
    Py_XDECREF(f);
    Py_XDECREF(first);
    PyErr_Clear();
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(exc);
#else
    PyErr_Restore(et, ev, tb);
#endif
}

/* Set by _failures_at_exit when it reported something: the process then exits with
 * status 1 unless it already had a non-zero one. */
static volatile int exit_failed;

#if defined(__GLIBC__)
static void
on_process_exit(int status, void *arg)
{
    (void)arg;
    if (exit_failed && status == 0) {
        fflush(NULL);
        _Exit(1); /* C11: no atexit handlers again, as _exit */
    }
}
#else
static void
on_process_exit(void)
{
    if (exit_failed) {
        fflush(NULL);
        _Exit(1); /* C11: no atexit handlers again, as _exit */
    }
}
#endif

static PyObject *
fn_failures_at_exit(PyObject *m, PyObject *noargs)
{
    (void)m;
    (void)noargs;
    char *buf = malloc(16384);
    if (buf == NULL) {
        return PyErr_NoMemory();
    }
    /* with the GIL held: the core's sets and storages are changed under it, and
     * the backends' waits release it themselves (ga_backend.set_wait_hooks) */
    int n = ga_fault_report_exit(buf, 16384);
    if (n == 0) {
        free(buf);
        Py_RETURN_NONE;
    }
    exit_failed = 1;
    PyObject *s = PyUnicode_FromFormat(
        "gpuarr: %d error%s in queued work %s never raised (each read of a result "
        "that depends on it, or synchronize(), would have raised it):\n%s",
        n, n == 1 ? "" : "s", n == 1 ? "was" : "were", buf);
    free(buf);
    return s;
}

static PyObject *
fn_unreported_failures(PyObject *m, PyObject *args, PyObject *kwds)
{
    (void)m;
    static char *kwlist[] = {"take", NULL};
    int take = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|p:_unreported_failures", kwlist,
                                     &take)) {
        return NULL;
    }
    if (!take) {
        return PyLong_FromLong(ga_fault_unreported());
    }
    char buf[4096];
    int n = ga_fault_take_unreported(buf, sizeof(buf));
    return n == 0 ? PyUnicode_FromString("") : PyUnicode_FromString(buf);
}

static PyObject *
fn_index_error_terms(PyObject *m, PyObject *args)
{
    (void)m;
    const char *what = NULL, *item = NULL, *items = NULL;
    if (!PyArg_ParseTuple(args, "|zzz:_index_error_terms", &what, &item, &items)) {
        return NULL;
    }
    ga_fault_set_index_terms(what, item, items);
    Py_RETURN_NONE;
}

PyMethodDef pyga_fault_functions[] = {
    {"_failures_at_exit", fn_failures_at_exit, METH_NOARGS,
     "_failures_at_exit()\n--\n\nWait for every device with work whose outcome is "
     "unknown and return the report of the errors in queued work never raised (None "
     "if there are none); when there are, the process exits with status 1 unless its "
     "status is already non-zero. Called once, by gpuarr's atexit handler."},
    {"_unreported_failures", (PyCFunction)(void (*)(void))fn_unreported_failures,
     METH_VARARGS | METH_KEYWORDS,
     "_unreported_failures(take=False)\n--\n\nErrors in queued work found and not "
     "raised yet, without waiting (tests): their number, or with take=True their "
     "descriptions, one a line, each then counted as raised."},
    {"_index_error_terms", fn_index_error_terms, METH_VARARGS,
     "_index_error_terms(what=None, item=None, items=None, /)\n--\n\nUntil called again "
     "without arguments, this thread's gathers that fail on a GPU after they were "
     "queued are named `what` and report '<item> <i> is out of range for <n> <items>' "
     "(a library function's own terms: cross_entropy's target classes)."},
    {NULL},
};

int
pyga_init_fault(PyObject *m)
{
    (void)m;
    ga_fault_set_where_hook(where_hook);
#if defined(__GLIBC__)
    on_exit(on_process_exit, NULL);
#else
    atexit(on_process_exit);
#endif
    return 0;
}
