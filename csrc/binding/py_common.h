/* py_common.h: what every binding file shares: the object layouts, the module's
 * global state and the status -> exception translation.
 *
 * The binding is the only layer that includes Python.h. A binding function has one
 * shape: parse arguments, call the core, translate the status (pyga_raise).
 *
 * State is one static struct rather than PEP 3121 module state: the hot paths
 * (operators on tiny arrays) would otherwise pay a type->module lookup per call, and
 * the extension supports one interpreter per process (it holds device state that
 * cannot be shared between interpreters anyway).
 */
#ifndef PY_COMMON_H
#define PY_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ga_array.h"
#include "ga_device.h"
#include "ga_dtype.h"
#include "ga_elementwise.h"
#include "ga_error.h"

typedef struct {
    PyObject_HEAD ga_array arr;
    PyObject *weakreflist;
    /* autograd (py_autograd.c): NULL/0 unless the array takes part in it. grad_fn
     * is the node that made a non-leaf; grad the leaf's accumulated gradient. */
    PyObject *grad;
    PyObject *grad_fn;
    int requires_grad;
    int grad_req; /* 0: PyTorch's leaf; MXNet's attach_grad: 1 'add', 2 'write' */
} PyGaArray;

typedef struct {
    PyObject_HEAD ga_dtype dtype;
} PyGaDType;

typedef struct {
    PyObject_HEAD ga_device dev;
} PyGaDevice;

typedef struct {
    PyTypeObject *Array;
    PyTypeObject *DType;
    PyTypeObject *Device;
    PyObject *dtypes[GA_NTYPES];   /* the DType singletons */
    PyObject *DeviceMismatchError; /* ValueError */
    PyObject *OutOfMemoryError;    /* MemoryError */
    PyObject *CudaError;           /* RuntimeError */
    PyObject *TransferWarning;     /* UserWarning */
    PyObject *LinAlgError;         /* ValueError (gpuarr.linalg.LinAlgError) */
    PyObject *cpu_device;          /* Device cpu(0) */
    PyObject *numpy;               /* the numpy module, imported lazily */
    PyObject *AxisError; /* numpy.exceptions.AxisError, looked up at its first raise */
    PyObject *asarray;   /* gpuarr.asarray, handed over by the package at import
                          * (_core._register_asarray): C never imports gpuarr */
    int warn_transfers;  /* emit TransferWarning on implicit-looking reads */
} pyga_state_t;

extern pyga_state_t pyga_state; /* py_state.c; filled by PyInit__core (py_module.c) */

/* Translate a core status into the matching Python exception (with the core's
 * message) and return NULL, so a binding writes `return pyga_raise(st);`. */
PyObject *pyga_raise(int status);
/* The same for functions returning int: returns -1. */
int pyga_raise_int(int status);

/* py_state.c: the package's asarray (a new reference), or NULL with RuntimeError when
 * _core is used without the gpuarr package. */
PyObject *pyga_asarray_fn(void);

/* py_state.c: wrap a filled ga_array (takes over its storage reference) in a new
 * Python Array. On failure the storage reference is released and NULL is returned. */
PyObject *pyga_wrap(ga_array *arr);

static inline int
pyga_check(PyObject *o)
{
    return PyObject_TypeCheck(o, pyga_state.Array);
}
static inline ga_array *
pyga_arr(PyObject *o)
{
    return &((PyGaArray *)o)->arr;
}

/* Argument converters for PyArg_Parse* ("O&"). */
/* A gpuarr.Array (borrowed PyObject*), else TypeError. */
int pyga_array_arg(PyObject *o, void *out /* PyObject** */);
/* dtype: None leaves *out untouched (callers preset -1 for "not given"); accepts a
 * gpuarr DType, a string, a NumPy dtype or scalar type, or Python's bool/int/float/
 * complex. */
int pyga_dtype_converter(PyObject *o, void *out /* int* */);
/* device: None -> the current default device; a Device or a string. */
int pyga_device_converter(PyObject *o, void *out /* ga_device* */);
/* The same, for a device that must exist (a GPU index past num_gpus() raises, as
 * ga_device_check says). */
int pyga_existing_device_converter(PyObject *o, void *out /* ga_device* */);
/* The current default device for creation (the innermost `with device:` of this
 * thread, else the global default). */
ga_device pyga_default_device(void);

PyObject *pyga_device_new(ga_device d);
PyObject *pyga_dtype_obj(ga_dtype t); /* borrowed reference */

/* py_axes.c: a shape from an int or a sequence of ints ("O&" converter into
 * pyga_shape). */
typedef struct {
    int ndim;
    int64_t dims[GA_MAXDIMS];
} pyga_shape;
int pyga_shape_converter(PyObject *o, void *out);
/* A tuple of Python ints from n int64 values (a shape, strides). New reference. */
PyObject *pyga_int64_tuple(int n, const int64_t *v);

/* Submodule registration: each py_*.c file exposes its method table. */
extern PyMethodDef pyga_device_functions[];  /* py_device.c */
extern PyMethodDef pyga_convert_functions[]; /* py_convert.c */
extern PyMethodDef pyga_stats_functions[];   /* py_stats.c */
extern PyMethodDef pyga_axes_functions[];    /* py_axes.c */
extern PyMethodDef pyga_abi_functions[];     /* py_abi.c */
extern PyMethodDef pyga_live_functions[];    /* py_live.c */

int pyga_init_dtype(PyObject *m);          /* py_dtype.c */
int pyga_init_device(PyObject *m);         /* py_device.c */
int pyga_init_array(PyObject *m);          /* py_array.c */
int pyga_init_autograd(PyObject *m);       /* py_autograd.c: after pyga_init_array */
int pyga_init_fault(PyObject *m);          /* py_fault.c */
extern PyMethodDef pyga_fault_functions[]; /* py_fault.c */
extern PyMethodDef pyga_event_functions[]; /* py_event.c */

/* Transfer warnings (printing/item()/bool() of a device array): emits
 * gpuarr.TransferWarning when enabled. Returns -1 if the warning became an error. */
int pyga_warn_transfer(const char *what, const ga_array *a);

/* --- entry points implemented by the operation files ------------------------------ */
/* py_elementwise.c: Python operators. `a` or `b` may be a Python scalar or any
 * array-like; return Py_NotImplemented for operand types gpuarr does not handle. */
PyObject *pyga_binary(int op, PyObject *a, PyObject *b);
PyObject *pyga_inplace(int op, PyObject *a, PyObject *b);
PyObject *pyga_unary(int op, PyObject *a);
extern PyMethodDef pyga_elementwise_functions[];
/* An operand of an elementwise op as ga_elementwise takes it (a Python or NumPy
 * scalar, an Array, or host data copied to the CPU into *holder): 0, 1 for a type
 * gpuarr does not handle (no exception set), -1 with an exception set. Needs
 * ga_elementwise.h's ga_ew_arg. */
int pyga_ew_arg_from(PyObject *o, ga_ew_arg *arg, PyObject **holder);
extern PyMethodDef pyga_fused_functions[]; /* py_fused.c */
extern PyMethodDef pyga_capture_functions[]; /* py_capture.c */
/* py_index.c: x[key] and x[key] = value */
PyObject *pyga_getitem(PyObject *self, PyObject *key);
int pyga_setitem(PyObject *self, PyObject *key, PyObject *value);
/* py_manipulation.c: reshape, permute_dims, ..., concat, nonzero, take, copy */
extern PyMethodDef pyga_manipulation_functions[];
/* py_matmul.c: a @ b */
PyObject *pyga_matmul(PyObject *a, PyObject *b);
extern PyMethodDef pyga_matmul_functions[];
extern PyMethodDef pyga_linalg_functions[]; /* py_linalg.c */
/* py_reduce.c */
extern PyMethodDef pyga_reduce_functions[];
/* py_creation.c (zeros, ones, full, arange, ...) and py_random.c */
extern PyMethodDef pyga_creation_functions[];
extern PyMethodDef pyga_random_functions[];
extern PyMethodDef pyga_sort_functions[]; /* py_sort.c */
extern PyMethodDef pyga_fft_functions[];  /* py_fft.c */
/* py_dlpack.c: buffer protocol and DLPack */
int pyga_getbuffer(PyObject *self, Py_buffer *view, int flags);
void pyga_releasebuffer(PyObject *self, Py_buffer *view);
extern PyMethodDef
    pyga_dlpack_methods[]; /* Array methods: __dlpack__, __dlpack_device__ */
extern PyMethodDef pyga_dlpack_functions[]; /* module: from_dlpack */

#endif
