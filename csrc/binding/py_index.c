/* py_index.c: x[key] and x[key] = value (the Array's mapping slots).
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
