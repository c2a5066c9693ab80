/* py_dlpack.c: the buffer protocol and DLPack (placeholder: buffer protocol only). */
#include "py_common.h"

#include <string.h>

/* Buffer protocol for CPU arrays: zero-copy. Device arrays refuse with a message
 * saying how to copy explicitly. The shape/strides arrays live in view->internal. */
int
pyga_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    ga_array *a = pyga_arr(self);
    if (ga_array_device(a).kind != GA_DEV_CPU) {
        char dev[32];
        ga_device_str(ga_array_device(a), dev, sizeof(dev));
        PyErr_Format(PyExc_TypeError,
                     "this array lives on %s; host code cannot read it directly. Copy it "
                     "explicitly with x.numpy() or x.to(gpuarr.cpu())",
                     dev);
        view->obj = NULL;
        return -1;
    }
    if ((flags & PyBUF_WRITABLE) && a->storage->readonly) {
        PyErr_SetString(PyExc_BufferError, "this array is read-only");
        view->obj = NULL;
        return -1;
    }
    Py_ssize_t *dims = PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (size_t)(a->ndim ? a->ndim : 1));
    if (dims == NULL) {
        PyErr_NoMemory();
        view->obj = NULL;
        return -1;
    }
    for (int i = 0; i < a->ndim; i++) {
        dims[i] = (Py_ssize_t)a->shape[i];
        dims[a->ndim + i] = (Py_ssize_t)a->strides[i];
    }
    static const char *formats[GA_NTYPES] = {
        [GA_BOOL] = "?",    [GA_INT8] = "b",   [GA_INT16] = "h",   [GA_INT32] = "i",
        [GA_INT64] = "q",   [GA_UINT8] = "B",  [GA_UINT16] = "H",  [GA_UINT32] = "I",
        [GA_UINT64] = "Q",  [GA_FLOAT16] = "e", [GA_FLOAT32] = "f", [GA_FLOAT64] = "d",
        [GA_COMPLEX64] = "Zf", [GA_COMPLEX128] = "Zd",
    };
    int itemsize = ga_dtype_itemsize((ga_dtype)a->dtype);
    view->buf = ga_array_data(a);
    view->obj = Py_NewRef(self);
    view->len = (Py_ssize_t)(ga_array_size(a) * itemsize);
    view->readonly = a->storage->readonly;
    view->itemsize = itemsize;
    view->format = (flags & PyBUF_FORMAT) ? (char *)formats[a->dtype] : NULL;
    view->ndim = a->ndim;
    view->shape = dims;
    view->strides = dims + a->ndim;
    view->suboffsets = NULL;
    view->internal = dims;
    int contiguous_ok = 1;
    if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS) {
        contiguous_ok = ga_array_is_c_contiguous(a);
    }
    else if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS) {
        contiguous_ok = ga_array_is_f_contiguous(a);
    }
    else if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS) {
        contiguous_ok = ga_array_is_c_contiguous(a) || ga_array_is_f_contiguous(a);
    }
    else if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES) {
        contiguous_ok = ga_array_is_c_contiguous(a);
        view->strides = NULL;
    }
    if (!contiguous_ok) {
        PyErr_SetString(PyExc_BufferError, "this array is not contiguous in the way the "
                                           "consumer asked for");
        PyMem_Free(dims);
        Py_CLEAR(view->obj);
        return -1;
    }
    return 0;
}

void
pyga_releasebuffer(PyObject *self, Py_buffer *view)
{
    (void)self;
    PyMem_Free(view->internal);
}

PyMethodDef pyga_dlpack_methods[] = {
    {NULL},
};

PyMethodDef pyga_dlpack_functions[] = {
    {NULL},
};
