/* py_module.c: the gpuarr._core extension module: types, exceptions, and the method
 * tables of the binding files gathered into one module. */
#include "py_common.h"

#include "ga_ops.h" /* GA_RAND_DISTS, GA_REDUCE_OPS */

/* _register_asarray(fn): the package hands over its asarray, for Python data (lists,
 * NumPy arrays) that operators and indexing meet */
static PyObject *
fn_register_asarray(PyObject *m, PyObject *fn)
{
    (void)m;
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "_register_asarray needs a callable");
        return NULL;
    }
    Py_XSETREF(pyga_state.asarray, Py_NewRef(fn));
    Py_RETURN_NONE;
}

static PyMethodDef module_functions[] = {
    {"_register_asarray", fn_register_asarray, METH_O,
     "_register_asarray(fn)\n--\n\nThe package's asarray, for Python data met by "
     "operators and indexing (called once, by gpuarr/__init__.py)."},
    {NULL},
};

static PyMethodDef *const function_tables[] = {
    pyga_device_functions,       pyga_convert_functions,
    pyga_stats_functions,        pyga_elementwise_functions,
    pyga_manipulation_functions, pyga_matmul_functions,
    pyga_reduce_functions,       pyga_creation_functions,
    pyga_random_functions,       pyga_dlpack_functions,
    pyga_sort_functions,         pyga_axes_functions,
    pyga_abi_functions,          pyga_linalg_functions,
    pyga_fft_functions,          pyga_live_functions,
    pyga_fault_functions,        pyga_event_functions,
    pyga_fused_functions,        pyga_capture_functions,
    module_functions,
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "gpuarr._core",
    .m_doc = "The C core of gpuarr (use the gpuarr package, not this module).",
    .m_size = -1,
};

static int
add_exception(PyObject *m, const char *name, PyObject *base, const char *doc,
              PyObject **slot)
{
    char full[128];
    snprintf(full, sizeof(full), "gpuarr.%s", name);
    *slot = PyErr_NewExceptionWithDoc(full, doc, base, NULL);
    if (*slot == NULL) {
        return -1;
    }
    return PyModule_AddObjectRef(m, name, *slot);
}

/* While a CUDA device is waited for, other Python threads may run (the plugin calls
 * these around blocking waits only, holding no lock of its own). */
static void *
release_gil_for_wait(void)
{
    return PyGILState_Check() ? (void *)PyEval_SaveThread() : NULL;
}

static void
retake_gil_after_wait(void *token)
{
    if (token != NULL) {
        PyEval_RestoreThread((PyThreadState *)token);
    }
}

/* The core's operation codes for the Python package (`_core.reduce_ops["sum"]`), from
 * the same X-macro lists that make the C enums: Python never counts positions. */
static int
add_enum(PyObject *m, const char *attr, const char *const *names, const int *codes,
         int n)
{
    PyObject *d = PyDict_New();
    if (d == NULL) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        PyObject *v = PyLong_FromLong(codes[i]);
        if (v == NULL || PyDict_SetItemString(d, names[i], v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return -1;
        }
        Py_DECREF(v);
    }
    int st = PyModule_AddObjectRef(m, attr, d);
    Py_DECREF(d);
    return st;
}

static int
add_enums(PyObject *m)
{
#define GA_X_NAME(e, name) #name,
#define GA_X_CODE(e, name) e,
    static const char *const red_names[] = {GA_REDUCE_OPS(GA_X_NAME)};
    static const int red_codes[] = {GA_REDUCE_OPS(GA_X_CODE)};
    static const char *const scan_names[] = {GA_SCAN_OPS(GA_X_NAME)};
    static const int scan_codes[] = {GA_SCAN_OPS(GA_X_CODE)};
    static const char *const rand_names[] = {GA_RAND_DISTS(GA_X_NAME)};
    static const int rand_codes[] = {GA_RAND_DISTS(GA_X_CODE)};
#undef GA_X_NAME
#undef GA_X_CODE
#define GA_X_NAME(e, name, nin, out) #name,
#define GA_X_CODE(e, name, nin, out) e,
    static const char *const ew_names[] = {GA_ELEMENTWISE_OPS(GA_X_NAME)};
    static const int ew_codes[] = {GA_ELEMENTWISE_OPS(GA_X_CODE)};
#undef GA_X_NAME
#undef GA_X_CODE
    if (add_enum(m, "elementwise_ops", ew_names, ew_codes,
                 (int)(sizeof(ew_codes) / sizeof(int))) < 0) {
        return -1;
    }
    if (add_enum(m, "reduce_ops", red_names, red_codes,
                 (int)(sizeof(red_codes) / sizeof(int))) < 0) {
        return -1;
    }
    if (add_enum(m, "scan_ops", scan_names, scan_codes,
                 (int)(sizeof(scan_codes) / sizeof(int))) < 0) {
        return -1;
    }
    return add_enum(m, "random_dists", rand_names, rand_codes,
                    (int)(sizeof(rand_codes) / sizeof(int)));
}

PyMODINIT_FUNC
PyInit__core(void)
{
    PyObject *m = PyModule_Create(&core_module);
    if (m == NULL) {
        return NULL;
    }
    if (pyga_init_dtype(m) < 0 || pyga_init_device(m) < 0 || pyga_init_array(m) < 0 ||
        pyga_init_autograd(m) < 0 || pyga_init_fault(m) < 0) {
        goto error;
    }
    if (add_exception(m, "DeviceMismatchError", PyExc_ValueError,
                      "Raised when one operation is given arrays on different devices. "
                      "gpuarr never moves data implicitly: move one with .to(device).",
                      &pyga_state.DeviceMismatchError) < 0 ||
        add_exception(m, "OutOfMemoryError", PyExc_MemoryError,
                      "A device ran out of memory (after its cache was freed and the "
                      "allocation retried).",
                      &pyga_state.OutOfMemoryError) < 0 ||
        add_exception(m, "CudaError", PyExc_RuntimeError,
                      "An error reported by the CUDA runtime or cuBLAS.",
                      &pyga_state.CudaError) < 0 ||
        add_exception(m, "TransferWarning", PyExc_UserWarning,
                      "An implicit-looking device-to-host transfer (printing, item(), "
                      "bool() of a device array); opt in with "
                      "gpuarr.warn_on_transfers(True).",
                      &pyga_state.TransferWarning) < 0) {
        goto error;
    }
    /* NumPy's numpy.linalg.LinAlgError is a ValueError too; ours is re-exported as
     * gpuarr.linalg.LinAlgError, hence its qualified name */
    pyga_state.LinAlgError = PyErr_NewExceptionWithDoc(
        "gpuarr.linalg.LinAlgError",
        "A matrix has no answer for a linalg function: singular (solve, inv), not "
        "positive definite (cholesky), or the algorithm did not converge (eigh, svd).",
        PyExc_ValueError, NULL);
    if (pyga_state.LinAlgError == NULL ||
        PyModule_AddObjectRef(m, "LinAlgError", pyga_state.LinAlgError) < 0) {
        goto error;
    }
    for (size_t t = 0; t < sizeof(function_tables) / sizeof(function_tables[0]); t++) {
        if (PyModule_AddFunctions(m, function_tables[t]) < 0) {
            goto error;
        }
    }
    ga_devices_set_wait_hooks(release_gil_for_wait, retake_gil_after_wait);
    if (PyModule_AddIntConstant(m, "MAXDIMS", GA_MAXDIMS) < 0 || add_enums(m) < 0) {
        goto error;
    }
    return m;
error:
    Py_DECREF(m);
    return NULL;
}
