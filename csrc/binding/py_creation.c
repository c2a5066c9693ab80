/* py_creation.c: zeros, ones, empty, full (the fast C path) and the private entry
 * points behind arange, linspace, eye and array printing (python/gpuarr/_creation.py,
 * _printing.py). Values are made on the device (ga_creation.h). */
#include "py_common.h"

#include "py_autograd.h"

#include <string.h>

#include "ga_creation.h"
#include "ga_transfer.h"

/* --- fill values --------------------------------------------------------------------
 */

/* The storage bytes of Python scalar `v` in *dtype; when *dtype < 0 it is inferred
 * from the scalar's kind (bool, int64, float32, complex64: the array API's rule with
 * gpuarr's default dtypes). NumPy scalars keep their own dtype. */
static int
fill_value(PyObject *v, int *dtype, ga_scalar_bytes *out)
{
    enum { K_BOOL, K_INT, K_FLOAT, K_COMPLEX } kind;
    int inferred = -1;
    /* NumPy scalars first: np.float64 is a float subclass but keeps its dtype */
    if (!PyLong_CheckExact(v) && !PyFloat_CheckExact(v) && !PyComplex_CheckExact(v) &&
        !PyBool_Check(v) && !pyga_check(v) && PyObject_HasAttrString(v, "dtype") &&
        (PyNumber_Check(v) || PyObject_HasAttrString(v, "__bool__"))) {
        /* a NumPy scalar */
        PyObject *dt = PyObject_GetAttrString(v, "dtype");
        if (dt == NULL) {
            return -1;
        }
        int ok = pyga_dtype_converter(dt, &inferred);
        Py_DECREF(dt);
        if (!ok) {
            return -1;
        }
        ga_kind k = ga_dtype_kind((ga_dtype)inferred);
        kind = k == GA_KIND_BOOL      ? K_BOOL
               : k == GA_KIND_COMPLEX ? K_COMPLEX
               : k == GA_KIND_FLOAT   ? K_FLOAT
                                      : K_INT;
    } else if (PyBool_Check(v)) {
        kind = K_BOOL;
    } else if (PyLong_Check(v)) {
        kind = K_INT;
    } else if (PyFloat_Check(v)) {
        kind = K_FLOAT;
    } else if (PyComplex_Check(v)) {
        kind = K_COMPLEX;
    } else {
        PyErr_Format(PyExc_TypeError,
                     "fill_value must be a Python or NumPy scalar (bool, int, float or "
                     "complex), not %.100s",
                     Py_TYPE(v)->tp_name);
        return -1;
    }
    if (*dtype < 0) {
        *dtype = inferred >= 0     ? inferred
                 : kind == K_BOOL  ? GA_BOOL
                 : kind == K_INT   ? GA_DEFAULT_INT
                 : kind == K_FLOAT ? GA_DEFAULT_FLOAT
                                   : GA_DEFAULT_COMPLEX;
    }
    ga_dtype t = (ga_dtype)*dtype;
    int st;
    if (kind == K_BOOL) {
        int b = PyObject_IsTrue(v);
        if (b < 0) {
            return -1;
        }
        st = ga_scalar_from_int(t, b, 0, out);
    } else if (kind == K_INT) {
        PyObject *i = PyNumber_Index(v);
        if (i == NULL) {
            return -1;
        }
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(i, &overflow);
        if (x == -1 && PyErr_Occurred()) {
            Py_DECREF(i);
            return -1;
        }
        if (overflow == 0) {
            st = ga_scalar_from_int(t, x, 0, out);
        } else if (overflow > 0 && t == GA_UINT64) {
            unsigned long long u = PyLong_AsUnsignedLongLong(i);
            if (u == (unsigned long long)-1 && PyErr_Occurred()) {
                Py_DECREF(i);
                return -1;
            }
            st = ga_scalar_from_int(t, (int64_t)u, 1, out);
        } else if (ga_dtype_is_inexact(t)) {
            double d = PyLong_AsDouble(i);
            if (d == -1.0 && PyErr_Occurred()) {
                Py_DECREF(i);
                return -1;
            }
            st = ga_scalar_from_double(t, d, 0.0, out);
        } else {
            Py_DECREF(i);
            PyErr_Format(PyExc_OverflowError, "Python integer %R out of bounds for %s",
                         v, ga_dtype_infos[t].name);
            return -1;
        }
        Py_DECREF(i);
    } else {
        Py_complex c = PyComplex_AsCComplex(v);
        if (c.real == -1.0 && PyErr_Occurred()) {
            return -1;
        }
        st = ga_scalar_from_double(t, c.real, c.imag, out);
    }
    return st == GA_OK ? 0 : pyga_raise_int(st);
}

/* --- argument parsing for the fast path ---------------------------------------------
 */

/* Positional-or-keyword `npos` leading names, then keyword-only names; fills vals
 * (borrowed, NULL when absent). Hand-written because ones(3) must cost little more
 * than the allocation (PyArg_ParseTupleAndKeywords builds a tuple and a dict). */
static int
parse_fast(const char *fname, PyObject *const *args, Py_ssize_t nargs,
           PyObject *kwnames, const char *const *names, int npos, int nreq, int nall,
           PyObject **vals)
{
    if (nargs > npos) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes at most %d positional arguments (%zd "
                     "given)",
                     fname, npos, nargs);
        return -1;
    }
    for (int i = 0; i < nall; i++) {
        vals[i] = i < nargs ? args[i] : NULL;
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int found = 0;
        for (int i = 0; i < nall; i++) {
            if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0) {
                if (vals[i] != NULL) {
                    PyErr_Format(PyExc_TypeError,
                                 "%s() got multiple values for argument "
                                 "'%s'",
                                 fname, names[i]);
                    return -1;
                }
                vals[i] = args[nargs + k];
                found = 1;
                break;
            }
        }
        if (!found) {
            PyErr_Format(PyExc_TypeError,
                         "%s() got an unexpected keyword argument '%U'", fname, key);
            return -1;
        }
    }
    for (int i = 0; i < nreq; i++) {
        if (vals[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname,
                         names[i]);
            return -1;
        }
    }
    return 0;
}

/* shape, dtype, device from parsed values */
static int
shape_dtype_device(PyObject *shape_o, PyObject *dtype_o, PyObject *device_o,
                   pyga_shape *shape, int *dtype, ga_device *dev)
{
    if (!pyga_shape_converter(shape_o, shape)) {
        return -1;
    }
    if (dtype_o != NULL && !pyga_dtype_converter(dtype_o, dtype)) {
        return -1;
    }
    if (device_o == NULL) {
        *dev = pyga_default_device();
    } else if (!pyga_device_converter(device_o, dev)) {
        return -1;
    }
    return 0;
}

/* The creation functions' requires_grad= (NULL: not given) on a new array. */
static PyObject *
with_requires_grad(PyObject *result, PyObject *flag_o)
{
    int flag = flag_o == NULL || result == NULL ? 0 : PyObject_IsTrue(flag_o);
    if (flag < 0 || (flag && pyga_set_requires_grad(result, 1) < 0)) {
        Py_XDECREF(result);
        return NULL;
    }
    return result;
}

static PyObject *
make_filled(const char *fname, PyObject *const *args, Py_ssize_t nargs,
            PyObject *kwnames, int which /* 0 zeros, 1 ones, 2 empty */)
{
    static const char *const names[] = {"shape", "dtype", "device", "requires_grad"};
    PyObject *vals[4];
    if (parse_fast(fname, args, nargs, kwnames, names, 1, 1, 4, vals) < 0) {
        return NULL;
    }
    pyga_shape shape;
    int dtype = -1;
    ga_device dev;
    if (shape_dtype_device(vals[0], vals[1], vals[2], &shape, &dtype, &dev) < 0) {
        return NULL;
    }
    ga_dtype t = dtype < 0 ? GA_DEFAULT_FLOAT : (ga_dtype)dtype;
    ga_array out;
    int st;
    if (which == 2) {
        st = ga_array_empty(&out, dev, t, shape.ndim, shape.dims);
    } else {
        ga_scalar_bytes v;
        memset(&v, 0, sizeof(v));
        if (which == 1) {
            st = ga_scalar_from_int(t, 1, 0, &v);
            if (st != GA_OK) {
                return pyga_raise(st);
            }
        }
        st = ga_full(&out, dev, t, shape.ndim, shape.dims, &v);
    }
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return with_requires_grad(pyga_wrap(&out), vals[3]);
}

static PyObject *
fn_zeros(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)m;
    return make_filled("zeros", args, nargs, kwnames, 0);
}

static PyObject *
fn_ones(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)m;
    return make_filled("ones", args, nargs, kwnames, 1);
}

static PyObject *
fn_empty(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)m;
    return make_filled("empty", args, nargs, kwnames, 2);
}

static PyObject *
fn_full(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)m;
    static const char *const names[] = {"shape", "fill_value", "dtype", "device",
                                        "requires_grad"};
    PyObject *vals[5];
    if (parse_fast("full", args, nargs, kwnames, names, 2, 2, 5, vals) < 0) {
        return NULL;
    }
    pyga_shape shape;
    int dtype = -1;
    ga_device dev;
    if (shape_dtype_device(vals[0], vals[2], vals[3], &shape, &dtype, &dev) < 0) {
        return NULL;
    }
    ga_scalar_bytes v;
    if (fill_value(vals[1], &dtype, &v) < 0) {
        return NULL;
    }
    ga_array out;
    int st = ga_full(&out, dev, (ga_dtype)dtype, shape.ndim, shape.dims, &v);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return with_requires_grad(pyga_wrap(&out), vals[4]);
}

/* _fill(x, value): every element of x (any view) = value, on x's device. */
static PyObject *
fn_fill(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *x, *value;
    if (!PyArg_ParseTuple(args, "O!O:_fill", pyga_state.Array, &x, &value)) {
        return NULL;
    }
    ga_array *a = pyga_arr(x);
    if (!ga_array_writeable(a)) {
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only (fill)");
        return NULL;
    }
    if (pyga_ag_check_write("fill", x, NULL, 0) < 0) {
        return NULL;
    }
    int dtype = a->dtype;
    ga_scalar_bytes v;
    if (fill_value(value, &dtype, &v) < 0) {
        return NULL;
    }
    int st = ga_fill(a, &v);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    Py_RETURN_NONE;
}

/* _arange(integer, dtype, device, start, stop, step, istart, istop, istep) */
static PyObject *
fn_arange(PyObject *m, PyObject *args)
{
    (void)m;
    long long istart, istop, istep;
    int integer, dtype = -1;
    ga_device dev;
    double start, stop, step;
    if (!PyArg_ParseTuple(args, "pO&O&dddLLL:_arange", &integer, pyga_dtype_converter,
                          &dtype, pyga_device_converter, &dev, &start, &stop, &step,
                          &istart, &istop, &istep)) {
        return NULL;
    }
    if (dtype < 0) {
        PyErr_SetString(PyExc_TypeError, "_arange needs a dtype");
        return NULL;
    }
    int64_t n;
    int st = ga_arange_count(integer, start, stop, step, istart, istop, istep, &n);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    ga_array out;
    st = ga_arange(&out, dev, (ga_dtype)dtype, n, start, step, istart, istep);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return pyga_wrap(&out);
}

/* _linspace(num, dtype, device, start, stop, endpoint) */
static PyObject *
fn_linspace(PyObject *m, PyObject *args)
{
    (void)m;
    long long num;
    int dtype = -1, endpoint;
    ga_device dev;
    double start, stop;
    if (!PyArg_ParseTuple(args, "LO&O&ddp:_linspace", &num, pyga_dtype_converter,
                          &dtype, pyga_device_converter, &dev, &start, &stop,
                          &endpoint)) {
        return NULL;
    }
    ga_array out;
    int st = ga_linspace(&out, dev, dtype < 0 ? GA_DEFAULT_FLOAT : (ga_dtype)dtype, num,
                         start, stop, endpoint);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return pyga_wrap(&out);
}

/* _empty_pinned(shape, dtype): an uninitialised host array in page-locked memory
 * (gpuarr.empty(..., pin_memory=True), x.pin_memory()). */
static PyObject *
fn_empty_pinned(PyObject *mod, PyObject *args)
{
    (void)mod;
    pyga_shape shape;
    int dtype = -1;
    if (!PyArg_ParseTuple(args, "O&O&:_empty_pinned", pyga_shape_converter, &shape,
                          pyga_dtype_converter, &dtype)) {
        return NULL;
    }
    ga_array out;
    int st = ga_array_empty_pinned(&out, dtype < 0 ? GA_DEFAULT_FLOAT : (ga_dtype)dtype,
                                   shape.ndim, shape.dims);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return pyga_wrap(&out);
}

/* _eye(n, m, k, dtype, device) */
static PyObject *
fn_eye(PyObject *mod, PyObject *args)
{
    (void)mod;
    long long n, m, k;
    int dtype = -1;
    ga_device dev;
    if (!PyArg_ParseTuple(args, "LLLO&O&:_eye", &n, &m, &k, pyga_dtype_converter,
                          &dtype, pyga_device_converter, &dev)) {
        return NULL;
    }
    ga_array out;
    int st = ga_eye(&out, dev, dtype < 0 ? GA_DEFAULT_FLOAT : (ga_dtype)dtype, n, m, k);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return pyga_wrap(&out);
}

/* _summary_gather(x, edgeitems): the corners NumPy shows, gathered on x's device. */
static PyObject *
fn_summary_gather(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *x;
    long long edge;
    if (!PyArg_ParseTuple(args, "O!L:_summary_gather", pyga_state.Array, &x, &edge)) {
        return NULL;
    }
    if (edge < 0) {
        PyErr_SetString(PyExc_ValueError, "edgeitems must be >= 0");
        return NULL;
    }
    ga_array out;
    int st = ga_summary_gather(pyga_arr(x), edge, &out);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return pyga_wrap(&out);
}

/* _warn_transfer(what, x): gpuarr.TransferWarning for a read of x by the host, when
 * warnings are on (printing is written in Python). */
static PyObject *
fn_warn_transfer(PyObject *m, PyObject *args)
{
    (void)m;
    const char *what;
    PyObject *x;
    if (!PyArg_ParseTuple(args, "sO!:_warn_transfer", &what, pyga_state.Array, &x)) {
        return NULL;
    }
    if (pyga_warn_transfer(what, pyga_arr(x)) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

#define FASTKW (METH_FASTCALL | METH_KEYWORDS)
#define FN(f) (PyCFunction)(void (*)(void))(f)

PyMethodDef pyga_creation_functions[] = {
    {"zeros", FN(fn_zeros), FASTKW,
     "zeros(shape, *, dtype=None, device=None, requires_grad=False)\n--\n\nAn array of "
     "zeros, made on "
     "`device` (default: the current default device). dtype defaults to float32; "
     "requires_grad=True makes it a leaf that autograd records."},
    {"ones", FN(fn_ones), FASTKW,
     "ones(shape, *, dtype=None, device=None, requires_grad=False)\n--\n\nAn array of "
     "ones, made on "
     "`device` (default: the current default device). dtype defaults to float32; "
     "requires_grad=True makes it a leaf that autograd records."},
    {"_empty_pinned", (PyCFunction)fn_empty_pinned, METH_VARARGS,
     "_empty_pinned(shape, dtype, /)\n--\n\nAn uninitialised host array in page-locked "
     "memory (gpuarr.empty(..., pin_memory=True))."},
    {"empty", FN(fn_empty), FASTKW,
     "empty(shape, *, dtype=None, device=None, requires_grad=False)\n--\n\nAn "
     "uninitialised array on "
     "`device` (its values are whatever the memory held)."},
    {"full", FN(fn_full), FASTKW,
     "full(shape, fill_value, *, dtype=None, device=None, "
     "requires_grad=False)\n--\n\nAn array filled with "
     "`fill_value`. Without dtype it follows the value: bool, int64, float32 or "
     "complex64."},
    {"_fill", fn_fill, METH_VARARGS, "_fill(x, value): set every element of x."},
    {"_arange", fn_arange, METH_VARARGS,
     "_arange(integer, dtype, device, start, stop, step, istart, istop, istep): the "
     "backend's arange; the core counts the elements."},
    {"_linspace", fn_linspace, METH_VARARGS,
     "_linspace(num, dtype, device, start, stop, endpoint): the core's linspace."},
    {"_eye", fn_eye, METH_VARARGS, "_eye(n, m, k, dtype, device)"},
    {"_summary_gather", fn_summary_gather, METH_VARARGS,
     "_summary_gather(x, edgeitems): the corners of x that a summarised print shows."},
    {"_warn_transfer", fn_warn_transfer, METH_VARARGS,
     "_warn_transfer(what, x): emit TransferWarning for a host read of x if enabled."},
    {NULL},
};
