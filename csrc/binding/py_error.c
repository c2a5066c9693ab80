/* py_error.c: core status -> Python exception, in one place. */
#include "py_common.h"

#include "ga_profiler.h"

PyObject *
pyga_raise(int status)
{
    const char *msg = ga_error_message();
    PyObject *type;
    switch (status) {
    case GA_ERR_VALUE:
    case GA_ERR_SHAPE:
        type = PyExc_ValueError;
        break;
    case GA_ERR_TYPE:
        type = PyExc_TypeError;
        break;
    case GA_ERR_INDEX:
        type = PyExc_IndexError;
        break;
    case GA_ERR_NOMEM:
        type = PyExc_MemoryError;
        break;
    case GA_ERR_OOM_DEVICE:
        type = pyga_state.OutOfMemoryError;
        break;
    case GA_ERR_DEVICE:
        type = PyExc_RuntimeError;
        break;
    case GA_ERR_MISMATCH:
        type = pyga_state.DeviceMismatchError;
        break;
    case GA_ERR_UNSUPPORTED:
        type = PyExc_TypeError;
        break;
    case GA_ERR_CUDA:
        type = pyga_state.CudaError;
        break;
    case GA_ERR_OVERFLOW:
        type = PyExc_OverflowError;
        break;
    case GA_ERR_ZERODIV:
        type = PyExc_ZeroDivisionError;
        break;
    case GA_ERR_BUFFER:
        type = PyExc_BufferError;
        break;
    case GA_ERR_LINALG:
        type = pyga_state.LinAlgError;
        break;
    case GA_ERR_AXIS: {
        /* NumPy's AxisError (a ValueError and an IndexError), as NumPy raises it.
         * Looked up once and kept: a lookup per raise made a new "AxisError" string
         * each time, which CPython's type attribute cache keeps (tests/devices/test_leaks.py
         * saw 30 to 75 of them held per 1000 raises). */
        if (pyga_state.AxisError == NULL) {
            PyObject *mod = PyImport_ImportModule("numpy.exceptions");
            pyga_state.AxisError = mod ? PyObject_GetAttrString(mod, "AxisError") : NULL;
            Py_XDECREF(mod);
            if (pyga_state.AxisError == NULL) {
                return NULL;
            }
        }
        PyErr_SetString(pyga_state.AxisError, msg);
        return NULL;
    }
    default:
        type = PyExc_RuntimeError;
        break;
    }
    PyErr_SetString(type, msg[0] ? msg : "gpuarr: unknown error");
    return NULL;
}

int
pyga_raise_int(int status)
{
    pyga_raise(status);
    return -1;
}

int
pyga_warn_transfer(const char *what, const ga_array *a)
{
    if (ga_array_device(a).kind == GA_DEV_CPU) {
        return 0;
    }
    ga_prof_set_cause(what, 0); /* the profiler names the host wait that follows */
    if (!pyga_state.warn_transfers) {
        return 0;
    }
    char dev[32];
    ga_device_str(ga_array_device(a), dev, sizeof(dev));
    return PyErr_WarnFormat(pyga_state.TransferWarning, 2,
                            "%s copies data from %s to the host (a device-to-host "
                            "transfer and a wait for the device)",
                            what, dev);
}
