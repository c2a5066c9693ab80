/* py_reduce.c: reductions, scans, mean/var/std (the Python API is in _reduce.py). */
#include "py_common.h" /* Python.h before any system header (CPython's rule) */

#include <string.h>

#include "ga_reduce.h"
#include "py_autograd.h"

/* axis: None (every axis), an int, or a tuple of ints -> mask (checked by the core). */
static int
parse_axes(PyObject *axis, int ndim, uint32_t *mask)
{
    int64_t axes[GA_MAXDIMS];
    int n;
    if (axis == Py_None) {
        return ga_reduce_axes(ndim, -1, NULL, mask) == GA_OK ? 0 : pyga_raise_int(GA_ERR_VALUE);
    }
    if (PyTuple_Check(axis) || PyList_Check(axis)) {
        Py_ssize_t len = PySequence_Size(axis);
        if (len > GA_MAXDIMS) {
            PyErr_SetString(PyExc_ValueError, "too many axes");
            return -1;
        }
        n = (int)len;
        for (int i = 0; i < n; i++) {
            PyObject *item = PySequence_GetItem(axis, i);
            if (item == NULL) {
                return -1;
            }
            axes[i] = PyLong_AsLongLong(item);
            Py_DECREF(item);
            if (axes[i] == -1 && PyErr_Occurred()) {
                return -1;
            }
        }
    }
    else {
        n = 1;
        axes[0] = PyLong_AsLongLong(axis);
        if (axes[0] == -1 && PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "axis must be None, an int or a tuple of ints, "
                         "not %.100s", Py_TYPE(axis)->tp_name);
            return -1;
        }
    }
    int st = ga_reduce_axes(ndim, n, axes, mask);
    return st == GA_OK ? 0 : pyga_raise_int(st);
}

static PyObject *
fn_reduce(PyObject *m, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"x", "op", "axis", "keepdims", "dtype", NULL};
    PyObject *x, *axis = Py_None;
    int op, keepdims = 0, dtype = -1;
    (void)m;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&i|OpO&:_reduce", kwlist, pyga_array_arg, &x,
                                     &op, &axis, &keepdims, pyga_dtype_converter, &dtype)) {
        return NULL;
    }
    if (op < 0 || op >= GA_NREDUCE) {
        PyErr_SetString(PyExc_ValueError, "unknown reduction");
        return NULL;
    }
    uint32_t mask;
    if (parse_axes(axis, pyga_arr(x)->ndim, &mask) < 0) {
        return NULL;
    }
    ga_array out;
    int st = ga_reduce((ga_reduce_op)op, pyga_arr(x), mask, keepdims, dtype, &out);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    PyObject *result = pyga_wrap(&out);
    if (result != NULL && pyga_ag_wanted(&x, 1)) {
        /* argmax, argmin, all, any give integers: no graph */
        static const int ag[GA_NREDUCE] = {
            [GA_RED_SUM] = PYGA_AG_SUM, [GA_RED_PROD] = PYGA_AG_PROD,
            [GA_RED_MAX] = PYGA_AG_MAX, [GA_RED_MIN] = PYGA_AG_MIN,
            [GA_RED_ARGMAX] = -1,       [GA_RED_ARGMIN] = -1,
            [GA_RED_ALL] = -1,          [GA_RED_ANY] = -1};
        result = pyga_ag_record(ag[op], result, PyTuple_Pack(1, x),
                                Py_BuildValue("(ki)", (unsigned long)mask, keepdims));
    }
    return result;
}

static PyObject *
fn_stat(PyObject *m, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"x", "kind", "axis", "keepdims", "correction", "dtype", NULL};
    PyObject *x, *axis = Py_None;
    const char *name;
    int keepdims = 0, dtype = -1;
    double correction = 0.0;
    (void)m;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&s|OpdO&:_stat", kwlist, pyga_array_arg, &x,
                                     &name, &axis, &keepdims, &correction,
                                     pyga_dtype_converter, &dtype)) {
        return NULL;
    }
    /* by name: the Python side never passes positions of a C list */
    int is_mean = strcmp(name, "mean") == 0, is_std = strcmp(name, "std") == 0;
    if (!is_mean && !is_std && strcmp(name, "var") != 0) {
        return PyErr_Format(PyExc_ValueError, "_stat: %s is not mean, var or std", name);
    }
    uint32_t mask;
    if (parse_axes(axis, pyga_arr(x)->ndim, &mask) < 0) {
        return NULL;
    }
    ga_array out;
    int st = is_mean ? ga_mean(pyga_arr(x), mask, keepdims, dtype, &out)
                     : ga_var(pyga_arr(x), mask, keepdims, correction, dtype, is_std, &out);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    PyObject *result = pyga_wrap(&out);
    if (result != NULL && pyga_ag_wanted(&x, 1)) {
        int op = is_mean ? PYGA_AG_MEAN : is_std ? PYGA_AG_STD : PYGA_AG_VAR;
        result = pyga_ag_record(
            op, result, PyTuple_Pack(1, x),
            Py_BuildValue("(kid)", (unsigned long)mask, keepdims, correction));
    }
    return result;
}

static PyObject *
fn_scan(PyObject *m, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"x", "op", "axis", "dtype", "include_initial", NULL};
    PyObject *x;
    int op, axis, dtype = -1, include_initial = 0;
    (void)m;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&ii|O&p:_scan", kwlist, pyga_array_arg, &x,
                                     &op, &axis, pyga_dtype_converter, &dtype,
                                     &include_initial)) {
        return NULL;
    }
    if (op && pyga_ag_refuse("cumulative_prod", &x, 1) < 0) {
        return NULL;
    }
    ga_array out;
    int st = ga_scan(op ? GA_SCAN_CUMPROD : GA_SCAN_CUMSUM, pyga_arr(x), axis, dtype,
                     include_initial, &out);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    PyObject *result = pyga_wrap(&out);
    if (result != NULL && pyga_ag_wanted(&x, 1)) {
        result = pyga_ag_record(PYGA_AG_CUMSUM, result, PyTuple_Pack(1, x),
                                Py_BuildValue("(ii)", axis, include_initial));
    }
    return result;
}

PyMethodDef pyga_reduce_functions[] = {
    {"_reduce", (PyCFunction)(void (*)(void))fn_reduce, METH_VARARGS | METH_KEYWORDS,
     "_reduce(x, op, axis=None, keepdims=False, dtype=None)\n--\n\nA reduction "
     "(op: index into gpuarr's reduction list)."},
    {"_stat", (PyCFunction)(void (*)(void))fn_stat, METH_VARARGS | METH_KEYWORDS,
     "_stat(x, kind, axis=None, keepdims=False, correction=0.0, dtype=None)\n--\n\n"
     "mean (kind 0), var (1) or std (2)."},
    {"_scan", (PyCFunction)(void (*)(void))fn_scan, METH_VARARGS | METH_KEYWORDS,
     "_scan(x, op, axis, dtype=None, include_initial=False)\n--\n\ncumulative sum (op "
     "0) or product (1) along a normalised axis."},
    {NULL},
};
