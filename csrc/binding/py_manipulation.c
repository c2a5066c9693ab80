/* py_manipulation.c: the array manipulation functions behind
 * python/gpuarr/_manipulation.py: views (reshape, permute_dims, squeeze, expand_dims,
 * flip, broadcast_to), concat, nonzero, take and copy. Each parses its arguments,
 * calls the core (ga_view.h, ga_index.h) and, for the differentiable ones, records
 * the autograd node. */
#include "py_common.h"

#include "py_autograd.h"

#include "ga_index.h"
#include "ga_view.h"

/* An int or a sequence of ints (negatives allowed) into a pyga_shape. */
static int
int_list_converter(PyObject *o, void *out)
{
    pyga_shape *s = (pyga_shape *)out;
    if (PyIndex_Check(o) && !pyga_check(o)) {
        s->ndim = 1;
        s->dims[0] = PyLong_AsLongLong(o);
        return !(s->dims[0] == -1 && PyErr_Occurred());
    }
    PyObject *seq = PySequence_Fast(o, "expected an int or a sequence of ints");
    if (seq == NULL) {
        return 0;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > GA_MAXDIMS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError,
                     "too many dimensions: %zd (gpuarr supports up to %d)", n,
                     GA_MAXDIMS);
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *idx = PyNumber_Index(item);
        if (idx == NULL) {
            Py_DECREF(seq);
            return 0;
        }
        s->dims[i] = PyLong_AsLongLong(idx);
        Py_DECREF(idx);
        if (s->dims[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return 0;
        }
    }
    s->ndim = (int)n;
    Py_DECREF(seq);
    return 1;
}

static int
array_converter(PyObject *o, void *out)
{
    if (!pyga_check(o)) {
        PyErr_Format(PyExc_TypeError, "expected a gpuarr.Array, got %.100s",
                     Py_TYPE(o)->tp_name);
        return 0;
    }
    *(ga_array **)out = pyga_arr(o);
    return 1;
}

static PyObject *
finish(int st, ga_array *out)
{
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return pyga_wrap(out);
}

/* finish, then record primitive `op` of args[0] with the other arguments as ctx */
static PyObject *
finish_ag(int st, ga_array *out, int op, PyObject *args)
{
    PyObject *result = finish(st, out);
    PyObject *x = PyTuple_GET_ITEM(args, 0);
    if (result != NULL && pyga_ag_wanted(&x, 1)) {
        result = pyga_ag_record(op, result, PyTuple_Pack(1, x),
                                PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args)));
    }
    return result;
}

static PyObject *
fn_reshape(PyObject *m, PyObject *args)
{
    ga_array *x, out;
    pyga_shape s;
    PyObject *copy = Py_None;
    if (!PyArg_ParseTuple(args, "O&O&|O:reshape", array_converter, &x,
                          int_list_converter, &s, &copy)) {
        return NULL;
    }
    int c = copy == Py_None ? -1 : PyObject_IsTrue(copy);
    if (c == -1 && copy != Py_None) {
        return NULL;
    }
    return finish_ag(ga_view_reshape(x, s.ndim, s.dims, c, &out), &out, PYGA_AG_RESHAPE,
                     args);
}

static PyObject *
fn_permute_dims(PyObject *m, PyObject *args)
{
    ga_array *x, out;
    pyga_shape s;
    if (!PyArg_ParseTuple(args, "O&O&:permute_dims", array_converter, &x,
                          int_list_converter, &s)) {
        return NULL;
    }
    return finish_ag(ga_view_permute(x, s.ndim, s.dims, &out), &out,
                     PYGA_AG_PERMUTE_DIMS, args);
}

/* f(x, axes or None) for squeeze and flip */
static PyObject *
axes_fn(PyObject *args, const char *fmt,
        int (*fn)(const ga_array *, int, const int64_t *, ga_array *), int op)
{
    ga_array *x, out;
    PyObject *axes = Py_None;
    pyga_shape s;
    if (!PyArg_ParseTuple(args, fmt, array_converter, &x, &axes)) {
        return NULL;
    }
    if (axes == Py_None) {
        return finish_ag(fn(x, 0, NULL, &out), &out, op, args);
    }
    if (!int_list_converter(axes, &s)) {
        return NULL;
    }
    return finish_ag(fn(x, s.ndim, s.dims, &out), &out, op, args);
}

static PyObject *
fn_squeeze(PyObject *m, PyObject *args)
{
    return axes_fn(args, "O&|O:squeeze", ga_view_squeeze, PYGA_AG_SQUEEZE);
}

static PyObject *
fn_flip(PyObject *m, PyObject *args)
{
    return axes_fn(args, "O&|O:flip", ga_view_flip, PYGA_AG_FLIP);
}

static PyObject *
fn_expand_dims(PyObject *m, PyObject *args)
{
    ga_array *x, out;
    pyga_shape s;
    if (!PyArg_ParseTuple(args, "O&O&:expand_dims", array_converter, &x,
                          int_list_converter, &s)) {
        return NULL;
    }
    return finish_ag(ga_view_expand_dims(x, s.ndim, s.dims, &out), &out,
                     PYGA_AG_EXPAND_DIMS, args);
}

static PyObject *
fn_broadcast_to(PyObject *m, PyObject *args)
{
    ga_array *x, out;
    pyga_shape s;
    if (!PyArg_ParseTuple(args, "O&O&:broadcast_to", array_converter, &x,
                          int_list_converter, &s)) {
        return NULL;
    }
    return finish_ag(ga_view_broadcast_to(x, s.ndim, s.dims, &out), &out,
                     PYGA_AG_BROADCAST_TO, args);
}

static PyObject *
fn_concat(PyObject *m, PyObject *args)
{
    PyObject *seq_in;
    long long axis;
    if (!PyArg_ParseTuple(args, "OL:concat", &seq_in, &axis)) {
        return NULL;
    }
    PyObject *seq = PySequence_Fast(seq_in, "concat: expected a sequence of arrays");
    if (seq == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    const ga_array **arrs = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(*arrs));
    if (arrs == NULL) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(seq, i);
        if (!pyga_check(o)) {
            PyErr_Format(PyExc_TypeError,
                         "concat: element %zd is a %.100s, not a "
                         "gpuarr.Array",
                         i, Py_TYPE(o)->tp_name);
            PyMem_Free(arrs);
            Py_DECREF(seq);
            return NULL;
        }
        arrs[i] = pyga_arr(o);
    }
    ga_array out;
    int st = n > INT32_MAX ? ga_error(GA_ERR_VALUE, "concat: too many arrays")
                           : ga_concat((int)n, arrs, axis, &out);
    PyMem_Free(arrs);
    PyObject *result = finish(st, &out);
    if (result != NULL && pyga_ag_wanted(PySequence_Fast_ITEMS(seq), n)) {
        result = pyga_ag_record(PYGA_AG_CONCAT, result, PySequence_Tuple(seq),
                                Py_BuildValue("(L)", axis));
    }
    Py_DECREF(seq);
    return result;
}

static PyObject *
fn_nonzero(PyObject *m, PyObject *arg)
{
    ga_array *x, out;
    if (!array_converter(arg, &x)) {
        return NULL;
    }
    return finish(ga_nonzero(x, &out), &out);
}

static PyObject *
fn_take(PyObject *m, PyObject *args)
{
    ga_array *x, *idx, out;
    PyObject *axis = Py_None;
    int host = 0;
    if (!PyArg_ParseTuple(args, "O&O&|Op:take", array_converter, &x, array_converter,
                          &idx, &axis, &host)) {
        return NULL;
    }
    long long ax = 0;
    if (axis != Py_None) {
        ax = PyLong_AsLongLong(axis);
        if (ax == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    return finish_ag(ga_take(x, idx, axis != Py_None, ax, host, &out), &out,
                     PYGA_AG_TAKE, args);
}

static PyObject *
fn_copy(PyObject *m, PyObject *arg)
{
    ga_array *x, out;
    if (!array_converter(arg, &x)) {
        return NULL;
    }
    PyObject *result = finish(ga_copy_new(x, &out), &out);
    if (result != NULL && pyga_ag_wanted(&arg, 1)) {
        result = pyga_ag_record1(GA_OP_COPY, result, arg, NULL);
    }
    return result;
}

PyMethodDef pyga_manipulation_functions[] = {
    {"_reshape", fn_reshape, METH_VARARGS,
     "_reshape(x, shape, copy=None)\n--\n\nA view with a new shape when the strides "
     "allow it (copy=None), else a copy."},
    {"_permute_dims", fn_permute_dims, METH_VARARGS,
     "_permute_dims(x, axes)\n--\n\nA view with reordered axes."},
    {"_squeeze", fn_squeeze, METH_VARARGS,
     "_squeeze(x, axes=None)\n--\n\nA view without the given length-1 axes."},
    {"_expand_dims", fn_expand_dims, METH_VARARGS,
     "_expand_dims(x, axes)\n--\n\nA view with new length-1 axes."},
    {"_flip", fn_flip, METH_VARARGS,
     "_flip(x, axes=None)\n--\n\nA negative-stride view reversed along axes."},
    {"_broadcast_to", fn_broadcast_to, METH_VARARGS,
     "_broadcast_to(x, shape)\n--\n\nA broadcast view (stride 0 along new axes)."},
    {"_concat", fn_concat, METH_VARARGS,
     "_concat(arrays, axis)\n--\n\nA new array joining the arrays along axis."},
    {"_nonzero", fn_nonzero, METH_O,
     "_nonzero(x)\n--\n\nThe (count, ndim) int64 coordinates of the nonzero elements."},
    {"_take", fn_take, METH_VARARGS,
     "_take(x, indices, axis=None, host=False)\n--\n\nElements at integer "
     "indices along axis; host: indices are host data on the CPU, checked before the "
     "upload."},
    {"_copy", fn_copy, METH_O,
     "_copy(x)\n--\n\nA new C-contiguous copy on x's device."},
    {NULL},
};
