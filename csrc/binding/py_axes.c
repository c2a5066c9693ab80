/* py_axes.c: axis and shape arguments: the converter the binding files read a shape
 * with (pyga_shape_converter), shapes back as tuples (pyga_int64_tuple), and
 * normalize_axis and broadcast_shapes, which the Python package calls instead of
 * keeping its own copies of the rules. */
#include "py_common.h"

/* --- shapes ----------------------------------------------------------------------- */

static int
shape_dim(PyObject *o, int64_t *out)
{
    PyObject *i = PyNumber_Index(o);
    if (i == NULL) {
        PyErr_Format(PyExc_TypeError, "shape entries must be integers, not %.100s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow != 0) {
        PyErr_SetString(PyExc_ValueError,
                        "array is too big: a dimension does not fit in 64 bits");
        return -1;
    }
    if (v < 0) {
        PyErr_Format(PyExc_ValueError, "negative dimensions are not allowed (got %lld)",
                     v);
        return -1;
    }
    *out = v;
    return 0;
}

int
pyga_shape_converter(PyObject *o, void *out)
{
    pyga_shape *s = (pyga_shape *)out;
    if (PyLong_Check(o) || (!PySequence_Check(o) && PyIndex_Check(o))) {
        s->ndim = 1;
        return shape_dim(o, &s->dims[0]) == 0;
    }
    PyObject *seq = PySequence_Fast(o, "a shape must be an int or a sequence of ints");
    if (seq == NULL) {
        return 0;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > GA_MAXDIMS) {
        PyErr_Format(PyExc_ValueError, "too many dimensions (%zd; at most %d)", n,
                     GA_MAXDIMS);
        Py_DECREF(seq);
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (shape_dim(PySequence_Fast_GET_ITEM(seq, i), &s->dims[i]) < 0) {
            Py_DECREF(seq);
            return 0;
        }
    }
    s->ndim = (int)n;
    Py_DECREF(seq);
    return 1;
}

PyObject *
pyga_int64_tuple(int n, const int64_t *v)
{
    PyObject *t = PyTuple_New(n);
    if (t == NULL) {
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (x == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

/* normalize_axis(axis, ndim): None, or a tuple of non-negative ints */
static PyObject *
fn_normalize_axis(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *axis, *seq = NULL, *result = NULL;
    int ndim;
    if (!PyArg_ParseTuple(args, "Oi:normalize_axis", &axis, &ndim)) {
        return NULL;
    }
    if (axis == Py_None) {
        Py_RETURN_NONE;
    }
    int64_t in[GA_MAXDIMS + 1];
    int out[GA_MAXDIMS + 1];
    int n;
    if (PyTuple_Check(axis) || PyList_Check(axis)) {
        seq = PySequence_Fast(axis, "axis");
        if (seq == NULL) {
            goto error;
        }
        n = (int)PySequence_Fast_GET_SIZE(seq);
        if (n > GA_MAXDIMS) {
            PyErr_Format(PyExc_ValueError, "too many axes: %d (at most %d)", n,
                         GA_MAXDIMS);
            goto error;
        }
    } else {
        n = 1;
    }
    for (int i = 0; i < n; i++) {
        PyObject *a = seq ? PySequence_Fast_GET_ITEM(seq, i) : axis;
        if (PyBool_Check(a) || !PyIndex_Check(a)) {
            PyErr_Format(PyExc_TypeError,
                         "axis must be None, an int or a tuple of ints, not %.100s",
                         Py_TYPE(a)->tp_name);
            goto error;
        }
        Py_ssize_t v = PyNumber_AsSsize_t(a, NULL);
        if (v == -1 && PyErr_Occurred()) {
            goto error;
        }
        in[i] = (int64_t)v;
    }
    int st = ga_normalize_axes(ndim, n, in, out);
    if (st != GA_OK) {
        pyga_raise(st);
        goto error;
    }
    result = PyTuple_New(n);
    if (result == NULL) {
        goto error;
    }
    for (int i = 0; i < n; i++) {
        PyObject *v = PyLong_FromLong(out[i]);
        if (v == NULL) {
            Py_CLEAR(result);
            goto error;
        }
        PyTuple_SET_ITEM(result, i, v);
    }
error:
    Py_XDECREF(seq);
    return result;
}

/* broadcast_shapes(*shapes): the shape they broadcast to */
static PyObject *
fn_broadcast_shapes(PyObject *m, PyObject *args)
{
    (void)m;
    int nd = 0;
    int64_t shape[GA_MAXDIMS];
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++) {
        pyga_shape s;
        if (!pyga_shape_converter(PyTuple_GET_ITEM(args, i), &s)) {
            return NULL;
        }
        int st = ga_broadcast_shapes(nd, shape, s.ndim, s.dims, &nd, shape);
        if (st != GA_OK) {
            return pyga_raise(st);
        }
    }
    return pyga_int64_tuple(nd, shape);
}

PyMethodDef pyga_axes_functions[] = {
    {"normalize_axis", fn_normalize_axis, METH_VARARGS,
     "normalize_axis(axis, ndim)\n--\n\nNone, or the axes as a tuple of non-negative "
     "ints "
     "(numpy.exceptions.AxisError for one out of range, ValueError for a repeated "
     "one)."},
    {"broadcast_shapes", fn_broadcast_shapes, METH_VARARGS,
     "broadcast_shapes(*shapes)\n--\n\nThe shape that arrays of the given shapes "
     "broadcast to (ValueError if none)."},
    {NULL},
};
