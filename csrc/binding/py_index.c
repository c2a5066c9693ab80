/* py_index.c: x[key], x[key] = value, and the shape functions (views, reshape,
 * concat, nonzero, take) behind python/gpuarr/_manipulation.py.
 *
 * Keys are parsed here into ga_key items (ga_index.h); everything else is the core's.
 * Host data used as an index: Python lists/tuples of ints (or bools) are accepted for
 * arrays on any device; for a GPU array they are put on the device first, which is a
 * host-to-device transfer the ledger counts (they are small and common in user code,
 * x[[0, 2]]). NumPy integer and bool arrays used as an index are the same kind of
 * host data and follow the same path (since issue 31: Dask indexes GPU chunks with
 * NumPy index grids and lists turned into NumPy arrays): checked on the host, then one
 * counted upload. A NumPy array as an assigned value (x[i] = ndarray) or an operand
 * stays a DeviceMismatchError beside a GPU array: that is data, not a key.
 */
#include "py_common.h"

#include "py_autograd.h"

#include <string.h>

#include "ga_index.h"
#include "ga_transfer.h"
#include "ga_view.h"

#define MAX_KEYS (2 * GA_MAXDIMS + 1)

static const char bad_index_msg[] =
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer "
    "or boolean arrays are valid indices";

typedef struct {
    int n;
    ga_key keys[MAX_KEYS];
    PyObject *owned[MAX_KEYS]; /* arrays made from host data for this key */
} parsed_key;

static void
parsed_key_clear(parsed_key *k)
{
    for (int i = 0; i < k->n; i++) {
        Py_CLEAR(k->owned[i]);
    }
}

/* numpy.ndarray, numpy.generic, numpy.bool_ and numpy.empty, looked up once */
static PyObject *np_ndarray, *np_generic, *np_bool, *np_empty;

static int
lookup_helpers(void)
{
    if (np_empty != NULL) {
        return 0;
    }
    PyObject *np = PyImport_ImportModule("numpy");
    if (np == NULL) {
        return -1;
    }
    np_ndarray = PyObject_GetAttrString(np, "ndarray");
    np_generic = PyObject_GetAttrString(np, "generic");
    np_bool = PyObject_GetAttrString(np, "bool_");
    np_empty = PyObject_GetAttrString(np, "empty");
    Py_DECREF(np);
    if (np_ndarray == NULL || np_generic == NULL || np_bool == NULL ||
        np_empty == NULL) {
        /* all or nothing: a later call starts again from a clean slate */
        Py_CLEAR(np_ndarray);
        Py_CLEAR(np_generic);
        Py_CLEAR(np_bool);
        Py_CLEAR(np_empty);
        return -1;
    }
    return 0;
}

static int
is_numpy_array(PyObject *o)
{
    return PyObject_IsInstance(o, np_ndarray) == 1;
}

static PyObject *
device_mismatch_host(const char *what, const ga_array *x)
{
    char dev[32];
    ga_device_str(ga_array_device(x), dev, sizeof(dev));
    PyErr_Format(pyga_state.DeviceMismatchError,
                 "%s: a NumPy array lives in host memory and this array lives on %s. "
                 "gpuarr never moves data implicitly: put it on the device first, e.g. "
                 "gpuarr.asarray(a, device=x.device)",
                 what, dev);
    return NULL;
}

/* gpuarr.asarray(obj, device=dev) */
static PyObject *
asarray_on(PyObject *obj, ga_device dev)
{
    PyObject *d = pyga_device_new(dev);
    if (d == NULL) {
        return NULL;
    }
    PyObject *args = PyTuple_Pack(1, obj);
    PyObject *kw = Py_BuildValue("{sO}", "device", d);
    PyObject *r = NULL;
    PyObject *asarray = pyga_asarray_fn();
    if (args != NULL && kw != NULL && asarray != NULL) {
        r = PyObject_Call(asarray, args, kw);
    }
    Py_XDECREF(asarray);
    Py_XDECREF(args);
    Py_XDECREF(kw);
    Py_DECREF(d);
    return r;
}

/* A list / tuple / NumPy array / bool used as an index: an integer or bool gpuarr
 * array on the CPU (see the file comment for which host data is accepted). The key is
 * marked as host data: the core checks its indices on the host and uploads it to x's
 * device (ga_key.host), so an out-of-range index raises at once on every device. */
static PyObject *
host_index_array(PyObject *o)
{
    PyObject *arr = asarray_on(o, ga_cpu());
    if (arr == NULL) {
        if (PyErr_ExceptionMatches(PyExc_ValueError) ||
            PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_IndexError, bad_index_msg);
        }
        return NULL;
    }
    ga_array *a = pyga_arr(arr);
    if (a->dtype == GA_BOOL || ga_dtype_is_integer((ga_dtype)a->dtype)) {
        return arr;
    }
    if (ga_array_size(a) == 0 && !is_numpy_array(o)) {
        /* [] is an empty integer index, as in NumPy */
        ga_array e;
        int st = ga_array_empty(&e, ga_array_device(a), GA_INT64, a->ndim, a->shape);
        Py_DECREF(arr);
        if (st != GA_OK) {
            return pyga_raise(st);
        }
        return pyga_wrap(&e);
    }
    Py_DECREF(arr);
    PyErr_SetString(PyExc_IndexError, bad_index_msg);
    return NULL;
}

static int
parse_one(PyObject *o, const ga_array *x, parsed_key *k)
{
    if (k->n >= MAX_KEYS) {
        PyErr_Format(PyExc_IndexError, "too many indices for array (at most %d)",
                     MAX_KEYS);
        return -1;
    }
    ga_key *key = &k->keys[k->n];
    memset(key, 0, sizeof(*key));
    k->owned[k->n] = NULL;
    if (pyga_check(o)) {
        key->kind = GA_KEY_ARRAY;
        key->array = pyga_arr(o);
    } else if (o == Py_None) {
        key->kind = GA_KEY_NEWAXIS;
    } else if (o == Py_Ellipsis) {
        key->kind = GA_KEY_ELLIPSIS;
    } else if (PySlice_Check(o)) {
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(o, &start, &stop, &step) < 0) {
            if (PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                PyErr_SetString(PyExc_IndexError, bad_index_msg);
            }
            return -1;
        }
        key->kind = GA_KEY_SLICE;
        key->start = start;
        key->stop = stop;
        key->step = step;
    } else if (PyBool_Check(o) || PyObject_IsInstance(o, np_bool) == 1 ||
               PyList_Check(o) || PyTuple_Check(o) || is_numpy_array(o)) {
        PyObject *arr = host_index_array(o);
        if (arr == NULL) {
            return -1;
        }
        k->owned[k->n] = arr;
        key->kind = GA_KEY_ARRAY;
        key->array = pyga_arr(arr);
        key->host = 1;
    } else if (PyLong_Check(o) || PyIndex_Check(o)) {
        PyObject *i = PyNumber_Index(o);
        if (i == NULL) {
            return -1;
        }
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
        Py_DECREF(i);
        if (overflow || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            PyErr_SetString(PyExc_IndexError,
                            "cannot fit 'int' into an index-sized integer");
            return -1;
        }
        key->kind = GA_KEY_INT;
        key->value = v;
    } else {
        PyErr_SetString(PyExc_IndexError, bad_index_msg);
        return -1;
    }
    k->n++;
    return 0;
}

static int
parse_key(PyObject *key, const ga_array *x, parsed_key *k)
{
    k->n = 0;
    if (lookup_helpers() < 0) {
        return -1;
    }
    if (PyTuple_Check(key)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++) {
            if (parse_one(PyTuple_GET_ITEM(key, i), x, k) < 0) {
                parsed_key_clear(k);
                return -1;
            }
        }
        return 0;
    }
    if (parse_one(key, x, k) < 0) {
        parsed_key_clear(k);
        return -1;
    }
    return 0;
}

PyObject *
pyga_getitem(PyObject *self, PyObject *key)
{
    ga_array *x = pyga_arr(self);
    parsed_key k;
    if (parse_key(key, x, &k) < 0) {
        return NULL;
    }
    ga_array out;
    int st = ga_index_get(x, k.n, k.keys, &out);
    parsed_key_clear(&k);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    PyObject *result = pyga_wrap(&out);
    if (result != NULL && pyga_ag_wanted(&self, 1)) {
        result = pyga_ag_record(PYGA_AG_GETITEM, result, PyTuple_Pack(1, self),
                                PyTuple_Pack(1, key));
    }
    return result;
}

/* A Python (or NumPy) scalar as one element of dtype t, with NumPy's assignment
 * rules (OverflowError for a Python int out of range, unsafe casts otherwise). */
static int
scalar_to_bytes(PyObject *value, ga_dtype t, ga_scalar_bytes *out)
{
    PyObject *tmp = PyObject_CallFunction(np_empty, "()s", ga_dtype_infos[t].name);
    if (tmp == NULL) {
        return -1;
    }
    PyObject *empty = PyTuple_New(0);
    int r = empty == NULL ? -1 : PyObject_SetItem(tmp, empty, value);
    Py_XDECREF(empty);
    if (r == 0) {
        Py_buffer view;
        r = PyObject_GetBuffer(tmp, &view, PyBUF_SIMPLE);
        if (r == 0) {
            memset(out, 0, sizeof(*out));
            memcpy(out->bytes, view.buf, (size_t)ga_dtype_itemsize(t));
            PyBuffer_Release(&view);
        }
    }
    Py_DECREF(tmp);
    return r;
}

int
pyga_setitem(PyObject *self, PyObject *key, PyObject *value)
{
    ga_array *x = pyga_arr(self);
    if (value == NULL) {
        PyErr_SetString(PyExc_ValueError, "cannot delete array elements");
        return -1;
    }
    if (!ga_array_writeable(x)) {
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
        return -1;
    }
    if (pyga_ag_check_write("x[key] = value", self, &value, 1) < 0) {
        return -1;
    }
    parsed_key k;
    if (parse_key(key, x, &k) < 0) {
        return -1;
    }
    PyObject *varr = NULL;
    ga_scalar_bytes scalar;
    const ga_array *v = NULL;
    int st = GA_OK;
    if (pyga_check(value)) {
        v = pyga_arr(value);
    } else if (PyBool_Check(value) || PyLong_Check(value) || PyFloat_Check(value) ||
               PyComplex_Check(value) || PyObject_IsInstance(value, np_generic) == 1) {
        if (scalar_to_bytes(value, (ga_dtype)x->dtype, &scalar) < 0) {
            goto error;
        }
    } else if (is_numpy_array(value) && ga_array_device(x).kind != GA_DEV_CPU) {
        device_mismatch_host("assignment", x);
        goto error;
    } else {
        /* lists, tuples, host NumPy arrays for a CPU x: an array on x's device (for a
         * GPU x, a counted host-to-device transfer of a Python list) */
        varr = asarray_on(value, ga_array_device(x));
        if (varr == NULL) {
            goto error;
        }
        v = pyga_arr(varr);
    }
    st = ga_index_set(x, k.n, k.keys, v, &scalar);
    Py_XDECREF(varr);
    parsed_key_clear(&k);
    if (st != GA_OK) {
        return pyga_raise_int(st);
    }
    return 0;
error:
    Py_XDECREF(varr);
    parsed_key_clear(&k);
    return -1;
}

/* --- shape functions ------------------------------------------------------------ */

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

PyMethodDef pyga_index_functions[] = {
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
