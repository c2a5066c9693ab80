/* py_array.c: the gpuarr.Array type: attributes, moves between devices, reads to
 * the host, and the operator slots (which forward to py_elementwise.c, py_index.c and
 * py_matmul.c).
 *
 * The type is a heap type that Python code may add methods to (python/gpuarr/
 * _methods.py adds the ones written in Python); it cannot be subclassed.
 */
#include "py_common.h"

#include <structmember.h>

#include <string.h>

#include "ga_host_ready.h"
#include "ga_ops.h"
#include "ga_profiler.h"
#include "ga_scalar.h"
#include "ga_transfer.h"
#include "py_autograd.h"
#include "py_capture.h"

static void
array_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyGaArray *a = (PyGaArray *)self;
    if (a->weakreflist != NULL) {
        PyObject_ClearWeakRefs(self);
    }
    ga_array_release(&a->arr);
    Py_CLEAR(a->grad);
    Py_CLEAR(a->grad_fn);
    PyObject_Free(self);
    Py_DECREF(tp);
}

/* --- attributes ------------------------------------------------------------------ */

static PyObject *
get_shape(PyObject *self, void *c)
{
    (void)c;
    return pyga_int64_tuple(pyga_arr(self)->ndim, pyga_arr(self)->shape);
}

static PyObject *
get_strides(PyObject *self, void *c)
{
    (void)c;
    return pyga_int64_tuple(pyga_arr(self)->ndim, pyga_arr(self)->strides);
}

static PyObject *
get_ndim(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(pyga_arr(self)->ndim);
}

static PyObject *
get_size(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLongLong(ga_array_size(pyga_arr(self)));
}

static PyObject *
get_dtype(PyObject *self, void *c)
{
    (void)c;
    return Py_NewRef(pyga_dtype_obj((ga_dtype)pyga_arr(self)->dtype));
}

static PyObject *
get_device(PyObject *self, void *c)
{
    (void)c;
    return pyga_device_new(ga_array_device(pyga_arr(self)));
}

static PyObject *
get_itemsize(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(ga_dtype_itemsize((ga_dtype)pyga_arr(self)->dtype));
}

static PyObject *
get_nbytes(PyObject *self, void *c)
{
    (void)c;
    ga_array *a = pyga_arr(self);
    return PyLong_FromLongLong(ga_array_size(a) * ga_dtype_itemsize((ga_dtype)a->dtype));
}

static PyObject *
get_c_contiguous(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(ga_array_is_c_contiguous(pyga_arr(self)));
}

static PyObject *
get_base_shares(PyObject *self, void *c)
{
    (void)c;
    /* identity of the storage block, so tests and users can tell views from copies */
    return PyLong_FromVoidPtr(pyga_arr(self)->storage);
}

static PyObject *
get_data_ptr(PyObject *self, void *c)
{
    (void)c;
    if (pyga_capture_host_read("x._data_ptr") < 0 ||
        pyga_ag_door_error("x._data_ptr", self) < 0) {
        return NULL;
    }
    /* the address is for code that reads it: a non-blocking copy's block is ready */
    int st = ga_host_ready_wait(pyga_arr(self)->storage, 1);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return PyLong_FromVoidPtr(ga_array_data(pyga_arr(self)));
}

static PyObject *
get_writeable(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(ga_array_writeable(pyga_arr(self)));
}

/* x.flags.writeable = flag (NumPy's rule): False always; True only where the memory
 * is writable and no axis longer than 1 has stride 0 (a broadcast view). */
static int
set_writeable(PyObject *self, PyObject *value, void *c)
{
    (void)c;
    ga_array *a = pyga_arr(self);
    int flag = value == NULL ? -1 : PyObject_IsTrue(value);
    if (flag < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "cannot delete the writeable flag");
        }
        return -1;
    }
    if (!flag) {
        a->readonly = 1;
        return 0;
    }
    int aliased = 0;
    for (int i = 0; i < a->ndim; i++) {
        aliased |= a->shape[i] > 1 && a->strides[i] == 0;
    }
    if (a->storage->readonly || aliased) {
        PyErr_SetString(
            PyExc_ValueError,
            a->storage->readonly
                ? "cannot set WRITEABLE flag to True of this array: its memory "
                  "is read-only"
                : "cannot set WRITEABLE flag to True of this array: it is a "
                  "broadcast view (copy it first)");
        return -1;
    }
    a->readonly = 0;
    return 0;
}

static PyObject *
get_pinned(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(pyga_arr(self)->storage->pinned);
}

static PyGetSetDef array_getset[] = {
    {"shape", get_shape, NULL, "The array's dimensions, a tuple of ints.", NULL},
    {"strides", get_strides, NULL, "Bytes to step in each dimension.", NULL},
    {"ndim", get_ndim, NULL, "Number of dimensions.", NULL},
    {"size", get_size, NULL, "Number of elements.", NULL},
    {"dtype", get_dtype, NULL, "The element type (a gpuarr.DType).", NULL},
    {"device", get_device, NULL,
     "The device the array lives on (read-only). Operations run there.", NULL},
    {"itemsize", get_itemsize, NULL, "Bytes per element.", NULL},
    {"nbytes", get_nbytes, NULL, "Bytes of the elements (size * itemsize).", NULL},
    {"is_contiguous", get_c_contiguous, NULL,
     "True when the elements are in C order "
     "with no gaps.",
     NULL},
    {"_storage_id", get_base_shares, NULL,
     "Identity of the memory block (views share it).", NULL},
    {"_data_ptr", get_data_ptr, NULL, "Address of the first element on its device.",
     NULL},
    {"_writeable", get_writeable, set_writeable,
     "May the elements be written through this array (see x.flags.writeable)?", NULL},
    {"_pinned", get_pinned, NULL,
     "Is the memory page-locked host memory (see x.is_pinned())?", NULL},
    {NULL},
};

/* --- moves between devices ------------------------------------------------------- */

/* A copy of self on device d, recorded for autograd (the gradient goes back to
 * self's device). */
static PyObject *
copy_to_device(PyObject *self, ga_device d, int non_blocking)
{
    ga_array out;
    /* non_blocking matters for a copy to the host only: every other copy is queued
     * without a host wait already (docs/DESIGN.md, "Non-blocking copies") */
    int st = non_blocking && d.kind == GA_DEV_CPU
                 ? ga_copy_to_host_nonblocking(pyga_arr(self), &out)
                 : ga_copy_to_device(pyga_arr(self), d, &out);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    PyObject *result = pyga_wrap(&out);
    if (result != NULL && pyga_ag_wanted(&self, 1)) {
        result = pyga_ag_record1(PYGA_AG_TO, result, self, NULL);
    }
    return result;
}

static PyObject *
array_to(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"device", "non_blocking", NULL};
    ga_device d;
    int non_blocking = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&|$p:to", kwlist,
                                     pyga_device_converter, &d, &non_blocking)) {
        return NULL;
    }
    ga_array *a = pyga_arr(self);
    if (ga_device_eq(d, ga_array_device(a))) {
        return Py_NewRef(self); /* already there: no copy, the same object */
    }
    return copy_to_device(self, d, non_blocking);
}

/* to_device(device, /, *, stream=None, non_blocking=False): the array API's to().
 * gpuarr has no stream objects to name: each device orders its copies on its own
 * queues (docs/DESIGN.md, "Ordering"), so stream=None is the one value with a
 * meaning, and any other is refused rather than ignored (ignoring it would drop the
 * ordering the caller asked for). */
static PyObject *
array_to_device(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"device", "stream", "non_blocking", NULL};
    ga_device d;
    PyObject *stream = Py_None;
    int non_blocking = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&|$Op:to_device", kwlist,
                                     pyga_device_converter, &d, &stream,
                                     &non_blocking)) {
        return NULL;
    }
    if (stream != Py_None) {
        PyErr_Format(PyExc_ValueError,
                     "to_device(..., stream=%R): gpuarr has no stream objects; every "
                     "copy is ordered on the devices' own queues, after the work that "
                     "wrote the array. Pass stream=None (or leave it out)",
                     stream);
        return NULL;
    }
    if (ga_device_eq(d, ga_array_device(pyga_arr(self)))) {
        return Py_NewRef(self); /* already there: no copy, the same object */
    }
    return copy_to_device(self, d, non_blocking);
}

static PyObject *
array_copyto(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"", "non_blocking", NULL};
    PyObject *target;
    int non_blocking = 0; /* as to(); into a host array of the same dtype and shape */
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$p:copyto", kwlist, &target,
                                     &non_blocking)) {
        return NULL;
    }
    ga_array *a = pyga_arr(self);
    if (pyga_check(target)) {
        ga_array *dst = pyga_arr(target);
        if (!ga_array_writeable(dst)) {
            PyErr_SetString(PyExc_ValueError,
                            "assignment destination is read-only (the "
                            "target of copyto)");
            return NULL;
        }
        if (pyga_ag_check_write("copyto into an array", target, &self, 1) < 0) {
            return NULL;
        }
        int st = non_blocking ? ga_copy_into_nonblocking(dst, a) : ga_copy_into(dst, a);
        if (st != GA_OK) {
            return pyga_raise(st);
        }
        return Py_NewRef(target);
    }
    ga_device d;
    if (!pyga_device_converter(target, &d)) {
        return NULL;
    }
    if (target == Py_None) {
        PyErr_SetString(PyExc_TypeError,
                        "copyto needs a target: a device (x.copyto(gpuarr.gpu(1))) or an "
                        "array to copy into");
        return NULL;
    }
    return copy_to_device(self, d, non_blocking);
}

static PyObject *
array_cuda(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"i", NULL};
    int i = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|i:cuda", kwlist, &i)) {
        return NULL;
    }
    ga_device d = {GA_DEV_GPU, i};
    ga_array *a = pyga_arr(self);
    if (ga_device_eq(d, ga_array_device(a))) {
        return Py_NewRef(self);
    }
    return copy_to_device(self, d, 0);
}

static PyObject *
array_cpu(PyObject *self, PyObject *unused)
{
    (void)unused;
    ga_array *a = pyga_arr(self);
    if (ga_array_device(a).kind == GA_DEV_CPU) {
        return Py_NewRef(self);
    }
    return copy_to_device(self, ga_cpu(), 0);
}

/* --- reads to the host ----------------------------------------------------------- */

/* Python scalar from one element's storage bytes. */
static PyObject *
scalar_from_bytes(ga_dtype t, const void *p)
{
    ga_scalar_value v;
    ga_scalar_read(t, p, &v);
    switch (v.kind) {
    case GA_KIND_BOOL:
        return PyBool_FromLong(v.i != 0);
    case GA_KIND_INT:
        return PyLong_FromLongLong(v.i);
    case GA_KIND_UINT:
        return PyLong_FromUnsignedLongLong(v.u);
    case GA_KIND_FLOAT:
        return PyFloat_FromDouble(v.re);
    case GA_KIND_COMPLEX:
        return PyComplex_FromDoubles(v.re, v.im);
    }
    PyErr_SetString(PyExc_SystemError, "unknown dtype");
    return NULL;
}

/* The single element of a one-element array as a Python scalar (one transfer for
 * device arrays). `what` names the caller for errors and the transfer warning. */
static PyObject *
array_item_impl(PyObject *self, const char *what)
{
    ga_array *a = pyga_arr(self);
    if (ga_array_size(a) != 1) {
        PyObject *shape = get_shape(self, NULL); /* a new reference: released below */
        if (shape != NULL) {
            PyErr_Format(PyExc_ValueError,
                         "%s needs an array with exactly one element; this one has %lld "
                         "(shape %S). Reduce it first (e.g. x.sum()) or index one element",
                         what, (long long)ga_array_size(a), shape);
            Py_DECREF(shape);
        }
        return NULL;
    }
    if (pyga_capture_host_read(what) < 0 || pyga_warn_transfer(what, a) < 0) {
        return NULL;
    }
    unsigned char buf[16];
    int st = ga_read_to_host(a, buf, (size_t)ga_dtype_itemsize((ga_dtype)a->dtype));
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return scalar_from_bytes((ga_dtype)a->dtype, buf);
}

static PyObject *
array_item(PyObject *self, PyObject *unused)
{
    (void)unused;
    return array_item_impl(self, "item()");
}

static PyObject *
array_float(PyObject *self)
{
    PyObject *v = array_item_impl(self, "float()");
    if (v == NULL) {
        return NULL;
    }
    if (PyComplex_Check(v)) {
        Py_DECREF(v);
        PyErr_SetString(PyExc_TypeError,
                        "float() of a complex array: take .real or abs() first");
        return NULL;
    }
    PyObject *r = PyNumber_Float(v);
    Py_DECREF(v);
    return r;
}

static PyObject *
array_int(PyObject *self)
{
    PyObject *v = array_item_impl(self, "int()");
    if (v == NULL) {
        return NULL;
    }
    if (PyComplex_Check(v)) {
        Py_DECREF(v);
        PyErr_SetString(PyExc_TypeError,
                        "int() of a complex array: take .real or abs() first");
        return NULL;
    }
    PyObject *r = PyNumber_Long(v);
    Py_DECREF(v);
    return r;
}

static PyObject *
array_index(PyObject *self)
{
    if (!ga_dtype_is_integer((ga_dtype)pyga_arr(self)->dtype) &&
        pyga_arr(self)->dtype != GA_BOOL) {
        PyErr_SetString(PyExc_TypeError,
                        "only integer arrays with one element can be used as an index");
        return NULL;
    }
    return array_int(self);
}

static int
array_bool(PyObject *self)
{
    ga_array *a = pyga_arr(self);
    if (ga_array_size(a) != 1) {
        PyErr_Format(PyExc_ValueError,
                     "the truth value of an array with %lld elements is ambiguous; use "
                     "a.any() or a.all()",
                     (long long)ga_array_size(a));
        return -1;
    }
    PyObject *v = array_item_impl(self, "bool()");
    if (v == NULL) {
        return -1;
    }
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

static PyObject *
numpy_module(void)
{
    if (pyga_state.numpy == NULL) {
        pyga_state.numpy = PyImport_ImportModule("numpy");
    }
    return pyga_state.numpy;
}

/* x.numpy(): a new NumPy array with the values (a device-to-host copy for GPU
 * arrays; a copy for CPU arrays too, so it never aliases gpuarr memory). */
static PyObject *
array_numpy(PyObject *self, PyObject *unused)
{
    (void)unused;
    ga_array *a = pyga_arr(self);
    if (pyga_capture_host_read("numpy()") < 0) {
        return NULL;
    }
    PyObject *np = numpy_module();
    if (np == NULL) {
        return NULL;
    }
    if (ga_array_device(a).kind != GA_DEV_CPU) {
        ga_prof_set_cause("numpy()", 1); /* unless printing or item() named it */
    }
    PyObject *shape = get_shape(self, NULL);
    if (shape == NULL) {
        return NULL;
    }
    PyObject *out = PyObject_CallMethod(np, "empty", "Os", shape,
                                        ga_dtype_infos[a->dtype].name);
    Py_DECREF(shape);
    if (out == NULL) {
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(out, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    int st = ga_read_to_host(a, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    if (st != GA_OK) {
        Py_DECREF(out);
        return pyga_raise(st);
    }
    return out;
}

/* __array__(dtype=None, copy=None): NumPy's protocol. CPU arrays convert (without a
 * copy when possible, through the buffer protocol); device arrays refuse, because
 * that would be an implicit transfer: the message says how to copy explicitly. */
static PyObject *
array_array(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO:__array__", kwlist, &dtype, &copy)) {
        return NULL;
    }
    ga_array *a = pyga_arr(self);
    if (pyga_capture_host_read("__array__ (np.asarray(x))") < 0 ||
        (copy != Py_True && pyga_ag_door_error("__array__ (np.asarray(x))", self) < 0)) {
        return NULL;
    }
    if (ga_array_device(a).kind != GA_DEV_CPU) {
        char dev[32];
        ga_device_str(ga_array_device(a), dev, sizeof(dev));
        PyErr_Format(PyExc_TypeError,
                     "this array lives on %s, and NumPy arrays live in host memory: "
                     "gpuarr never copies implicitly. Copy it explicitly with x.numpy() "
                     "(or gpuarr.asnumpy(x)), or move it with x.to(gpuarr.cpu()) first",
                     dev);
        return NULL;
    }
    PyObject *np = numpy_module();
    if (np == NULL) {
        return NULL;
    }
    PyObject *kw = PyDict_New();
    if (kw == NULL) {
        return NULL;
    }
    if (PyDict_SetItemString(kw, "dtype", dtype) < 0 ||
        (copy != Py_None && PyDict_SetItemString(kw, "copy", copy) < 0)) {
        Py_DECREF(kw);
        return NULL;
    }
    /* a memoryview goes through our buffer protocol: zero-copy. A copy asked of an
     * array that requires grad reads through numpy() instead, as the buffer protocol
     * refuses it (pyga_ag_door_error): a copy shares nothing. */
    PyObject *mv = copy == Py_True && pyga_ag_door_closed(self)
                       ? array_numpy(self, NULL)
                       : PyMemoryView_FromObject(self);
    if (mv == NULL) {
        Py_DECREF(kw);
        return NULL;
    }
    PyObject *fn = PyObject_GetAttrString(np, copy == Py_True ? "array" : "asarray");
    PyObject *r = NULL;
    if (fn != NULL) {
        PyObject *a1 = PyTuple_Pack(1, mv);
        if (a1 != NULL) {
            if (copy == Py_True) {
                PyDict_DelItemString(kw, "copy");
            }
            r = PyObject_Call(fn, a1, kw);
            Py_DECREF(a1);
        }
        Py_DECREF(fn);
    }
    Py_DECREF(mv);
    Py_DECREF(kw);
    return r;
}

static Py_ssize_t
array_len(PyObject *self)
{
    ga_array *a = pyga_arr(self);
    if (a->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d array");
        return -1;
    }
    return (Py_ssize_t)a->shape[0];
}

/* --- operator slots ------------------------------------------------------------- */

#define BINARY_SLOT(name, op)                                                          \
    static PyObject *name(PyObject *a, PyObject *b)                                    \
    {                                                                                  \
        return pyga_binary(op, a, b);                                                  \
    }
#define INPLACE_SLOT(name, op)                                                         \
    static PyObject *name(PyObject *a, PyObject *b)                                    \
    {                                                                                  \
        return pyga_inplace(op, a, b);                                                 \
    }
#define UNARY_SLOT(name, op)                                                           \
    static PyObject *name(PyObject *a)                                                 \
    {                                                                                  \
        return pyga_unary(op, a);                                                      \
    }

BINARY_SLOT(nb_add, GA_OP_ADD)
BINARY_SLOT(nb_sub, GA_OP_SUBTRACT)
BINARY_SLOT(nb_mul, GA_OP_MULTIPLY)
BINARY_SLOT(nb_truediv, GA_OP_DIVIDE)
BINARY_SLOT(nb_floordiv, GA_OP_FLOOR_DIVIDE)
BINARY_SLOT(nb_rem, GA_OP_REMAINDER)
BINARY_SLOT(nb_and, GA_OP_BITWISE_AND)
BINARY_SLOT(nb_or, GA_OP_BITWISE_OR)
BINARY_SLOT(nb_xor, GA_OP_BITWISE_XOR)
BINARY_SLOT(nb_lshift, GA_OP_LEFT_SHIFT)
BINARY_SLOT(nb_rshift, GA_OP_RIGHT_SHIFT)
INPLACE_SLOT(nb_iadd, GA_OP_ADD)
INPLACE_SLOT(nb_isub, GA_OP_SUBTRACT)
INPLACE_SLOT(nb_imul, GA_OP_MULTIPLY)
INPLACE_SLOT(nb_itruediv, GA_OP_DIVIDE)
INPLACE_SLOT(nb_ifloordiv, GA_OP_FLOOR_DIVIDE)
INPLACE_SLOT(nb_irem, GA_OP_REMAINDER)
INPLACE_SLOT(nb_iand, GA_OP_BITWISE_AND)
INPLACE_SLOT(nb_ior, GA_OP_BITWISE_OR)
INPLACE_SLOT(nb_ixor, GA_OP_BITWISE_XOR)
INPLACE_SLOT(nb_ilshift, GA_OP_LEFT_SHIFT)
INPLACE_SLOT(nb_irshift, GA_OP_RIGHT_SHIFT)
INPLACE_SLOT(nb_ipow_2, GA_OP_POW)
UNARY_SLOT(nb_neg, GA_OP_NEGATIVE)
UNARY_SLOT(nb_pos, GA_OP_POSITIVE)
UNARY_SLOT(nb_abs, GA_OP_ABS)
UNARY_SLOT(nb_invert, GA_OP_BITWISE_INVERT)

static PyObject *
nb_pow(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None) {
        PyErr_SetString(PyExc_TypeError, "pow() with a modulus is not supported by gpuarr");
        return NULL;
    }
    return pyga_binary(GA_OP_POW, a, b);
}

static PyObject *
nb_ipow(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None) {
        PyErr_SetString(PyExc_TypeError, "pow() with a modulus is not supported by gpuarr");
        return NULL;
    }
    return nb_ipow_2(a, b);
}

static PyObject *
nb_matmul(PyObject *a, PyObject *b)
{
    return pyga_matmul(a, b);
}

static PyObject *
nb_imatmul(PyObject *a, PyObject *b)
{
    (void)a;
    (void)b;
    PyErr_SetString(PyExc_TypeError,
                    "in-place matrix multiplication (a @= b) is not supported: write "
                    "a = a @ b");
    return NULL;
}

static PyObject *
array_richcompare(PyObject *a, PyObject *b, int op)
{
    static const int ops[] = {
        [Py_LT] = GA_OP_LESS,        [Py_LE] = GA_OP_LESS_EQUAL, [Py_EQ] = GA_OP_EQUAL,
        [Py_NE] = GA_OP_NOT_EQUAL,   [Py_GT] = GA_OP_GREATER,    [Py_GE] = GA_OP_GREATER_EQUAL,
    };
    return pyga_binary(ops[op], a, b);
}

/* Arrays are made by the creation functions (pyga_wrap); without this slot the type
 * would inherit object's tp_new and Array() would build an array with no storage. */
static PyObject *
array_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)type;
    (void)args;
    (void)kwds;
    PyErr_SetString(PyExc_TypeError,
                    "gpuarr.Array cannot be created directly: use gpuarr.array(obj), "
                    "gpuarr.asarray(obj), gpuarr.zeros(shape), ... (each takes device=)");
    return NULL;
}

static PyMethodDef array_methods[] = {
    {"to", (PyCFunction)(void (*)(void))array_to, METH_VARARGS | METH_KEYWORDS,
     "to($self, /, device, *, non_blocking=False)\n--\n\nThis array on `device`: the "
     "array itself (no copy) when it is already there, else a new copy there. `device` "
     "is a Device or a string: 'cpu', 'gpu', 'gpu:1', 'cuda:0' (PyTorch's spelling). "
     "A copy to a GPU is queued without waiting either way. A copy from a GPU to the "
     "host waits for its data, unless `non_blocking=True`: then it is queued into a new "
     "pinned host array and the call returns; the host waits for the copy only when "
     "it touches that array (a read, a write, a CPU operation).\n\n"
     "Example::\n\n"
     "    >>> X = gpuarr.ones(3).to(gpuarr.try_gpu())   # one host-to-device copy\n"
     "    >>> X.to(X.device) is X                        # already there: no copy\n"
     "    True\n"},
    {"to_device", (PyCFunction)(void (*)(void))array_to_device,
     METH_VARARGS | METH_KEYWORDS,
     "to_device($self, /, device, *, stream=None, non_blocking=False)\n--\n\nThe array "
     "API name of to(device). `stream` must be None: gpuarr orders every copy on the "
     "devices' own queues and has no stream objects to name."},
    {"copyto", (PyCFunction)(void (*)(void))array_copyto, METH_VARARGS | METH_KEYWORDS,
     "copyto($self, target, /, *, non_blocking=False)\n--\n\nAlways a copy: to a device (a new array, also "
     "on the same device), or into an existing array of the same shape on any device. "
     "To move an array where it will be used, you usually want to(device), which "
     "copies nothing when it is already there. `non_blocking=True` as in to(); into "
     "an existing host array too, when the source is on a GPU and the target has its "
     "dtype and shape and is C-contiguous (else the copy waits).\n\n"
     "Example::\n\n"
     "    >>> Z = X.copyto(gpuarr.try_gpu(1))   # a new array; X stays where it is\n"
     "    >>> X.copyto(W)                       # into W (same shape), W's device\n"},
    {"cuda", (PyCFunction)(void (*)(void))array_cuda, METH_VARARGS | METH_KEYWORDS,
     "cuda($self, /, i=0)\n--\n\nx.to(gpu(i))."},
    {"cpu", array_cpu, METH_NOARGS, "cpu($self, /)\n--\n\nx.to(cpu())."},
    {"item", array_item, METH_NOARGS,
     "item($self, /)\n--\n\nThe one element as a Python scalar (a device-to-host "
     "transfer for a GPU array)."},
    {"numpy", array_numpy, METH_NOARGS,
     "numpy($self, /)\n--\n\nA new NumPy array with a copy of the values (an explicit "
     "device-to-host transfer for a GPU array)."},
    {"__array__", (PyCFunction)(void (*)(void))array_array, METH_VARARGS | METH_KEYWORDS,
     "__array__($self, /, dtype=None, copy=None)\n--\n\nNumPy's conversion protocol "
     "(numpy.asarray(x)): works for arrays on the CPU and raises TypeError for device "
     "arrays, which must be copied explicitly with x.numpy()."},
    {NULL},
};

static PyMemberDef array_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(PyGaArray, weakreflist), READONLY, NULL},
    {NULL},
};

static PyType_Slot array_slots[] = {
    {Py_tp_doc, "An n-dimensional array that lives on one device (the CPU or one GPU).\n\n"
                "Create arrays with gpuarr.array, zeros, ones, ... (device= places them). "
                "Operations run on the device of their operands; mixing devices raises "
                "DeviceMismatchError. Move data explicitly with to(), copyto() and "
                "numpy()."},
    {Py_tp_new, array_new},
    {Py_tp_dealloc, array_dealloc},
    {Py_tp_getset, array_getset},
    {Py_tp_methods, array_methods},
    {Py_tp_members, array_members},
    {Py_tp_richcompare, array_richcompare},
    {Py_nb_add, nb_add},
    {Py_nb_subtract, nb_sub},
    {Py_nb_multiply, nb_mul},
    {Py_nb_true_divide, nb_truediv},
    {Py_nb_floor_divide, nb_floordiv},
    {Py_nb_remainder, nb_rem},
    {Py_nb_power, nb_pow},
    {Py_nb_and, nb_and},
    {Py_nb_or, nb_or},
    {Py_nb_xor, nb_xor},
    {Py_nb_lshift, nb_lshift},
    {Py_nb_rshift, nb_rshift},
    {Py_nb_inplace_add, nb_iadd},
    {Py_nb_inplace_subtract, nb_isub},
    {Py_nb_inplace_multiply, nb_imul},
    {Py_nb_inplace_true_divide, nb_itruediv},
    {Py_nb_inplace_floor_divide, nb_ifloordiv},
    {Py_nb_inplace_remainder, nb_irem},
    {Py_nb_inplace_power, nb_ipow},
    {Py_nb_inplace_and, nb_iand},
    {Py_nb_inplace_or, nb_ior},
    {Py_nb_inplace_xor, nb_ixor},
    {Py_nb_inplace_lshift, nb_ilshift},
    {Py_nb_inplace_rshift, nb_irshift},
    {Py_nb_negative, nb_neg},
    {Py_nb_positive, nb_pos},
    {Py_nb_absolute, nb_abs},
    {Py_nb_invert, nb_invert},
    {Py_nb_matrix_multiply, nb_matmul},
    {Py_nb_inplace_matrix_multiply, nb_imatmul},
    {Py_nb_bool, array_bool},
    {Py_nb_int, array_int},
    {Py_nb_float, array_float},
    {Py_nb_index, array_index},
    {Py_mp_length, array_len},
    {Py_mp_subscript, pyga_getitem},
    {Py_mp_ass_subscript, pyga_setitem},
    {Py_bf_getbuffer, pyga_getbuffer},
    {Py_bf_releasebuffer, pyga_releasebuffer},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {0, NULL},
};

static PyType_Spec array_spec = {
    .name = "gpuarr.Array",
    .basicsize = sizeof(PyGaArray),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = array_slots,
};

int
pyga_init_array(PyObject *m)
{
    pyga_state.Array = (PyTypeObject *)PyType_FromSpec(&array_spec);
    if (pyga_state.Array == NULL) {
        return -1;
    }
    /* DLPack methods live in py_dlpack.c; add them to the type's dict. */
    for (PyMethodDef *d = pyga_dlpack_methods; d->ml_name != NULL; d++) {
        PyObject *descr = PyDescr_NewMethod(pyga_state.Array, d);
        if (descr == NULL ||
            PyDict_SetItemString(pyga_state.Array->tp_dict, d->ml_name, descr) < 0) {
            Py_XDECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    PyType_Modified(pyga_state.Array);
    return PyModule_AddObjectRef(m, "Array", (PyObject *)pyga_state.Array);
}
