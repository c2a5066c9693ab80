/* py_fft.c: the binding of the one-dimensional FFT (the rest is gpuarr/fft.py). */
#include "py_common.h"

#include "py_autograd.h"

#include "ga_fft.h"

/* Names rather than numbers cross the boundary, so Python holds no copy of the C
 * enums (ga_fft_kind, ga_fft_norm). */
static const struct {
    const char *name;
    int kind, inverse;
} kinds[] = {
    {"fft", GA_FFT_C2C, 0},
    {"ifft", GA_FFT_C2C, 1},
    {"rfft", GA_FFT_R2C, 0},
    {"irfft", GA_FFT_C2R, 1},
};

static const struct {
    const char *name;
    int norm;
} norms[] = {
    {"backward", GA_FFT_NORM_BACKWARD},
    {"ortho", GA_FFT_NORM_ORTHO},
    {"forward", GA_FFT_NORM_FORWARD},
};

/* _fft(x, kind, n, axis, norm): kind "fft" | "ifft" | "rfft" | "irfft"; n None for
 * the default length. */
static PyObject *
fn_fft(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *x, *n_obj;
    const char *kind_name;
    PyObject *norm_obj;
    long long axis;
    if (!PyArg_ParseTuple(args, "O&sOLO:_fft", pyga_array_arg, &x, &kind_name, &n_obj,
                          &axis, &norm_obj)) {
        return NULL;
    }
    if (pyga_ag_refuse("gpuarr.fft", &x, 1) < 0) {
        return NULL;
    }
    int kind = -1, inverse = 0, norm = -1;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp(kind_name, kinds[i].name) == 0) {
            kind = kinds[i].kind;
            inverse = kinds[i].inverse;
        }
    }
    if (kind < 0) {
        return PyErr_Format(PyExc_ValueError, "_fft: unknown kind %s", kind_name);
    }
    if (PyUnicode_Check(norm_obj)) {
        const char *s = PyUnicode_AsUTF8(norm_obj);
        if (s == NULL) {
            return NULL;
        }
        for (size_t i = 0; i < sizeof norms / sizeof norms[0]; i++) {
            if (strcmp(s, norms[i].name) == 0) {
                norm = norms[i].norm;
            }
        }
    }
    if (norm < 0) {
        return PyErr_Format(PyExc_ValueError,
                            "%s: invalid norm %R; pass \"backward\" (the default), "
                            "\"ortho\" or \"forward\"",
                            kind_name, norm_obj);
    }
    long long n = -1;
    if (n_obj != Py_None) {
        if (PyBool_Check(n_obj) || !PyIndex_Check(n_obj)) {
            return PyErr_Format(PyExc_TypeError,
                                "%s: n must be an int or None, got %.100s", kind_name,
                                Py_TYPE(n_obj)->tp_name);
        }
        n = PyLong_AsLongLong(n_obj);
        if (n == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (n < 1) {
            return PyErr_Format(
                PyExc_ValueError,
                "%s: invalid number of data points n=%lld; n must be at "
                "least 1 (or None for the input's length)",
                kind_name, n);
        }
    }
    ga_array out;
    int st = ga_fft(pyga_arr(x), kind, inverse, (int64_t)n, (int64_t)axis, norm, &out);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return pyga_wrap(&out);
}

PyMethodDef pyga_fft_functions[] = {
    {"_fft", fn_fft, METH_VARARGS,
     "_fft(x, kind, n, axis, norm)\n--\n\nOne-dimensional FFT of x along axis: kind "
     "'fft', 'ifft', 'rfft' or 'irfft'; n None for the default length; norm "
     "'backward', 'ortho' or 'forward' (gpuarr.fft holds the public functions)."},
    {NULL},
};
