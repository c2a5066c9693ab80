/* py_convert.c: arrays from buffer-protocol objects (NumPy arrays, memoryviews,
 * bytes...). Nested lists and scalars are turned into NumPy arrays by the Python layer
 * first (python/gpuarr/_creation.py), so the parsing of Python data is NumPy's. */
#include "py_common.h"

#include <string.h>

#include "ga_transfer.h"

int
pyga_array_arg(PyObject *o, void *out)
{
    if (!pyga_check(o)) {
        PyErr_Format(PyExc_TypeError, "expected a gpuarr.Array, got %.100s",
                     Py_TYPE(o)->tp_name);
        return 0;
    }
    *(PyObject **)out = o;
    return 1;
}

/* Format string of the buffer protocol -> dtype. */
static int
dtype_from_format(const char *fmt, Py_ssize_t itemsize, ga_dtype *out)
{
    if (fmt == NULL) {
        fmt = "B";
    }
    while (*fmt == '@' || *fmt == '=' || *fmt == '<' || *fmt == '|') {
        fmt++;
    }
    int complex_ = 0;
    if (*fmt == 'Z') {
        complex_ = 1;
        fmt++;
    }
    if (fmt[0] == '\0' || fmt[1] != '\0') {
        goto bad;
    }
    char c = fmt[0];
    ga_kind kind;
    switch (c) {
    case '?':
        kind = GA_KIND_BOOL;
        break;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n':
        kind = GA_KIND_INT;
        break;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N':
        kind = GA_KIND_UINT;
        break;
    case 'e':
    case 'f':
    case 'd':
        kind = complex_ ? GA_KIND_COMPLEX : GA_KIND_FLOAT;
        break;
    default:
        goto bad;
    }
    for (int t = 0; t < GA_NTYPES; t++) {
        if (ga_dtype_infos[t].kind == kind && ga_dtype_infos[t].itemsize == itemsize) {
            *out = (ga_dtype)t;
            return 0;
        }
    }
bad:
    PyErr_Format(PyExc_TypeError,
                 "cannot make a gpuarr array from a buffer of format '%s' (itemsize %zd): "
                 "gpuarr supports bool, integers, float16/32/64 and complex64/128",
                 fmt ? fmt : "?", itemsize);
    return -1;
}

static void
release_buffer(void *owner)
{
    Py_buffer *view = (Py_buffer *)owner;
    PyBuffer_Release(view);
    PyMem_Free(view);
}

/* _from_buffer(obj, dtype=None, device=None, copy=None) -> Array */
static PyObject *
fn_from_buffer(PyObject *m, PyObject *args, PyObject *kwds)
{
    (void)m;
    static char *kwlist[] = {"obj", "dtype", "device", "copy", NULL};
    PyObject *obj, *copy = Py_None;
    int dtype = -1;
    ga_device device;
    PyObject *devobj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O&OO:_from_buffer", kwlist, &obj,
                                     pyga_dtype_converter, &dtype, &devobj, &copy)) {
        return NULL;
    }
    if (!pyga_device_converter(devobj, &device)) {
        return NULL;
    }
    Py_buffer *view = PyMem_Calloc(1, sizeof(Py_buffer));
    if (view == NULL) {
        return PyErr_NoMemory();
    }
    if (PyObject_GetBuffer(obj, view, PyBUF_RECORDS_RO) < 0) {
        PyMem_Free(view);
        return NULL;
    }
    ga_dtype src_dtype;
    if (dtype_from_format(view->format, view->itemsize, &src_dtype) < 0 ||
        view->ndim > GA_MAXDIMS) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "too many dimensions (%d; at most %d)",
                         view->ndim, GA_MAXDIMS);
        }
        release_buffer(view);
        return NULL;
    }
    ga_array host;
    memset(&host, 0, sizeof(host));
    host.ndim = view->ndim;
    host.dtype = src_dtype;
    for (int i = 0; i < view->ndim; i++) {
        host.shape[i] = view->shape[i];
        host.strides[i] = view->strides ? view->strides[i] : 0;
    }
    if (view->strides == NULL) {
        ga_contiguous_strides(host.ndim, host.shape, (int)view->itemsize, host.strides);
    }
    int st = ga_storage_wrap(ga_cpu(), view->buf, (size_t)view->len, release_buffer, view,
                             view->readonly, &host.storage);
    if (st != GA_OK) {
        release_buffer(view);
        return pyga_raise(st);
    }
    /* `host` now owns the buffer view. */
    ga_dtype want = dtype >= 0 ? (ga_dtype)dtype : src_dtype;
    int need_copy = want != src_dtype || device.kind != GA_DEV_CPU;
    if (copy == Py_False && need_copy) {
        ga_array_release(&host);
        PyErr_SetString(PyExc_ValueError,
                        "copy=False, but making this array needs a copy (another dtype "
                        "or another device)");
        return NULL;
    }
    if (!need_copy && copy != Py_True) {
        return pyga_wrap(&host); /* zero-copy view of the buffer */
    }
    /* Cast on the host first (if needed), then one transfer to the device. */
    ga_array cast;
    if (want != src_dtype) {
        st = ga_array_empty(&cast, ga_cpu(), want, host.ndim, host.shape);
        if (st == GA_OK) {
            st = ga_copy_same_device(&cast, &host);
            if (st != GA_OK) {
                ga_array_release(&cast);
            }
        }
        ga_array_release(&host);
        if (st != GA_OK) {
            return pyga_raise(st);
        }
    }
    else {
        cast = host;
    }
    ga_array out;
    if (device.kind == GA_DEV_CPU && want != src_dtype) {
        return pyga_wrap(&cast); /* the cast already made a fresh copy */
    }
    st = ga_copy_to_device(&cast, device, &out);
    ga_array_release(&cast);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return pyga_wrap(&out);
}

PyMethodDef pyga_convert_functions[] = {
    {"_from_buffer", (PyCFunction)(void (*)(void))fn_from_buffer,
     METH_VARARGS | METH_KEYWORDS,
     "_from_buffer(obj, dtype=None, device=None, copy=None)\n--\n\nAn array from a "
     "buffer-protocol object: a view when no copy is needed, else a copy (cast on the "
     "host, then one host-to-device transfer)."},
    {NULL},
};
