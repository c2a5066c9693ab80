/* py_live.c: the leak check that names its test (ga_live.h).
 *
 * _live_storages_enable(path) turns the core's registry on and registers a report
 * that runs after the interpreter has finished (Py_AtExit: every Python object that
 * finalization frees is gone by then): each storage still alive is one line of `path`
 * (appended) with its size, device and the tag current when it was made. The test
 * suite sets the tag to each test's node id; CI fails a stage whose report folder is
 * not empty (.ci/lsan_filter.py). */
#include "py_common.h"

#include "ga_live.h"

static char *report_path;

static void
write_line(void *ctx, const ga_storage *s, const char *tag)
{
    char dev[32];
    fprintf((FILE *)ctx, "%zu bytes on %s, made during %s%s\n", s->nbytes,
            ga_device_str(s->device, dev, sizeof(dev)), tag ? tag : "(no tag)",
            s->release != NULL ? " (wraps a host buffer)" : "");
}

static void
report_at_exit(void)
{
    size_t n = ga_live_count();
    if (n == 0 || report_path == NULL) {
        return;
    }
    FILE *f = fopen(report_path, "a");
    if (f != NULL) {
        fprintf(f, "gpuarr: %zu array storage(s) still alive after the interpreter "
                   "finished:\n", n);
        ga_live_foreach(write_line, f);
        fclose(f);
    }
    fprintf(stderr, "gpuarr: %zu array storage(s) still alive at exit (listed in %s)\n",
            n, report_path);
}

static PyObject *
fn_live_storages_enable(PyObject *m, PyObject *arg)
{
    (void)m;
    const char *path = PyUnicode_AsUTF8(arg);
    if (path == NULL) {
        return NULL;
    }
    if (report_path == NULL) {
        size_t n = strlen(path) + 1;
        report_path = (char *)malloc(n);
        if (report_path == NULL) {
            return PyErr_NoMemory();
        }
        memcpy(report_path, path, n);
        if (Py_AtExit(report_at_exit) < 0) {
            PyErr_SetString(PyExc_RuntimeError, "no room for another Py_AtExit function");
            return NULL;
        }
    }
    ga_live_enable();
    Py_RETURN_NONE;
}

static PyObject *
fn_live_storages_tag(PyObject *m, PyObject *arg)
{
    (void)m;
    const char *tag = NULL;
    if (arg != Py_None && (tag = PyUnicode_AsUTF8(arg)) == NULL) {
        return NULL;
    }
    int st = ga_live_set_tag(tag);
    return st == GA_OK ? Py_NewRef(Py_None) : pyga_raise(st);
}

static void
append_entry(void *ctx, const ga_storage *s, const char *tag)
{
    PyObject *list = (PyObject *)ctx;
    if (PyErr_Occurred()) {
        return;
    }
    char dev[32];
    PyObject *t = Py_BuildValue("(nsz)", (Py_ssize_t)s->nbytes,
                                ga_device_str(s->device, dev, sizeof(dev)), tag);
    if (t != NULL) {
        PyList_Append(list, t);
        Py_DECREF(t);
    }
}

static PyObject *
fn_live_storages(PyObject *m, PyObject *noargs)
{
    (void)m;
    (void)noargs;
    PyObject *list = PyList_New(0);
    if (list == NULL) {
        return NULL;
    }
    ga_live_foreach(append_entry, list);
    if (PyErr_Occurred()) {
        Py_DECREF(list);
        return NULL;
    }
    return list;
}

PyMethodDef pyga_live_functions[] = {
    {"_live_storages_enable", fn_live_storages_enable, METH_O,
     "_live_storages_enable(path, /)\n--\n\nRecord every storage made from now on; after "
     "the interpreter finishes, append those still alive to `path` (leak checks)."},
    {"_live_storages_tag", fn_live_storages_tag, METH_O,
     "_live_storages_tag(tag, /)\n--\n\nThe tag (a str, or None) that storages made from "
     "now on carry in the leak report."},
    {"_live_storages", fn_live_storages, METH_NOARGS,
     "_live_storages()\n--\n\n(nbytes, device, tag) of each recorded storage alive "
     "now, oldest first."},
    {NULL},
};
