/* py_dtype.c: gpuarr.DType and its singletons (gpuarr.float32, ...). */
#include "py_common.h"

#include <string.h>

PyObject *
pyga_dtype_obj(ga_dtype t)
{
    return pyga_state.dtypes[t];
}

/* Resolve anything dtype-like to a ga_dtype; returns 0 and sets *out, or -1 with a
 * TypeError set. */
static int
dtype_from_object(PyObject *o, ga_dtype *out)
{
    if (Py_IS_TYPE(o, pyga_state.DType)) {
        *out = ((PyGaDType *)o)->dtype;
        return 0;
    }
    PyObject *name = NULL;
    /* bool, int, float, complex: by their names, which ga_dtype_from_name maps to
     * gpuarr's defaults (one meaning for dtype=float and dtype="float") */
    if (o == (PyObject *)&PyBool_Type || o == (PyObject *)&PyLong_Type ||
        o == (PyObject *)&PyFloat_Type || o == (PyObject *)&PyComplex_Type) {
        name = PyUnicode_FromString(((PyTypeObject *)o)->tp_name);
        if (name == NULL) {
            return -1;
        }
    } else if (PyUnicode_Check(o)) {
        name = Py_NewRef(o);
    } else {
        /* NumPy dtypes and scalar types: ask NumPy for the canonical name, without
         * importing NumPy ourselves (an object can only be a NumPy dtype if NumPy is
         * already imported). */
        PyObject *mods = PyImport_GetModuleDict();
        PyObject *numpy = mods ? PyDict_GetItemString(mods, "numpy") : NULL;
        if (numpy != NULL) {
            PyObject *dt = PyObject_CallMethod(numpy, "dtype", "O", o);
            int native = 1;
            if (dt != NULL) {
                /* '>i4' on a little-endian machine: NumPy's name says int32, but the
                 * elements it describes are byte-swapped; gpuarr stores none such */
                PyObject *isnative = PyObject_GetAttrString(dt, "isnative");
                native = isnative == NULL || PyObject_IsTrue(isnative) != 0;
                Py_XDECREF(isnative);
                name = native ? PyObject_GetAttrString(dt, "name") : NULL;
            }
            if (name == NULL) {
                PyErr_Clear();
            }
            if (!native) {
                PyObject *str = PyObject_GetAttrString(dt, "str");
                PyErr_Format(PyExc_TypeError,
                             "dtype %R is not in the machine's byte order; gpuarr "
                             "arrays hold native-order elements (convert with "
                             "a.astype(a.dtype.newbyteorder('=')))",
                             str ? str : o);
                Py_XDECREF(str);
                Py_DECREF(dt);
                return -1;
            }
            Py_XDECREF(dt);
        }
    }
    if (name == NULL) {
        PyErr_Format(
            PyExc_TypeError,
            "dtype must be a gpuarr dtype (e.g. gpuarr.float32), a name such as "
            "'float32', or a NumPy dtype; got %R",
            o);
        return -1;
    }
    const char *s = PyUnicode_AsUTF8(name);
    if (s == NULL) {
        Py_DECREF(name);
        return -1;
    }
    int st = ga_dtype_from_name(s, out);
    Py_DECREF(name);
    if (st != GA_OK) {
        pyga_raise(st);
        return -1;
    }
    return 0;
}

int
pyga_dtype_converter(PyObject *o, void *out)
{
    if (o == Py_None) {
        return 1;
    }
    ga_dtype t;
    if (dtype_from_object(o, &t) < 0) {
        return 0;
    }
    *(int *)out = (int)t;
    return 1;
}

static PyObject *
dtype_repr(PyObject *self)
{
    return PyUnicode_FromFormat("gpuarr.%s",
                                ga_dtype_infos[((PyGaDType *)self)->dtype].name);
}

static PyObject *
dtype_str(PyObject *self)
{
    return PyUnicode_FromString(ga_dtype_infos[((PyGaDType *)self)->dtype].name);
}

static Py_hash_t
dtype_hash(PyObject *self)
{
    PyObject *s = dtype_str(self);
    if (s == NULL) {
        return -1;
    }
    Py_hash_t h = PyObject_Hash(s);
    Py_DECREF(s);
    return h;
}

static PyObject *
dtype_richcompare(PyObject *self, PyObject *other, int op)
{
    if (op != Py_EQ && op != Py_NE) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    ga_dtype t;
    if (dtype_from_object(other, &t) < 0) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    int eq = t == ((PyGaDType *)self)->dtype;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *
dtype_get_name(PyObject *self, void *closure)
{
    (void)closure;
    return dtype_str(self);
}

static PyObject *
dtype_get_itemsize(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(ga_dtype_itemsize(((PyGaDType *)self)->dtype));
}

static PyObject *
dtype_get_kind(PyObject *self, void *closure)
{
    (void)closure;
    static const char *kinds[] = {"b", "i", "u", "f", "c"};
    return PyUnicode_FromString(kinds[ga_dtype_kind(((PyGaDType *)self)->dtype)]);
}

/* The matching numpy.dtype. NumPy's np.dtype(obj) reads obj.dtype, so this is what
 * lets np.dtype(gpuarr.float32) work, and with it every library that normalises a
 * dtype through NumPy (Dask's from_array, array_api_compat's helpers). NumPy is
 * imported only here, when someone asks: importing gpuarr does not need it. */
static PyObject *
dtype_get_numpy(PyObject *self, void *closure)
{
    (void)closure;
    PyObject *np = PyImport_ImportModule("numpy");
    if (np == NULL) {
        return NULL;
    }
    PyObject *r = PyObject_CallMethod(np, "dtype", "s",
                                      ga_dtype_infos[((PyGaDType *)self)->dtype].name);
    Py_DECREF(np);
    return r;
}

/* NumPy's scalar type (numpy.float32, ...): code written for np.dtype reads
 * dtype.type (Dask's np.iscomplexobj on a chunk's dtype does). */
static PyObject *
dtype_get_type(PyObject *self, void *closure)
{
    PyObject *d = dtype_get_numpy(self, closure);
    if (d == NULL) {
        return NULL;
    }
    PyObject *r = PyObject_GetAttrString(d, "type");
    Py_DECREF(d);
    return r;
}

static PyObject *
dtype_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    /* pickles as gpuarr.DType("<name>"), which returns the singleton (pickle finds
     * the type by its name, "gpuarr.DType": nothing here imports the package) */
    return Py_BuildValue("O(s)", (PyObject *)pyga_state.DType,
                         ga_dtype_infos[((PyGaDType *)self)->dtype].name);
}

static PyObject *
dtype_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)type;
    PyObject *o;
    static char *kwlist[] = {"dtype", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:dtype", kwlist, &o)) {
        return NULL;
    }
    ga_dtype t;
    if (dtype_from_object(o, &t) < 0) {
        return NULL;
    }
    return Py_NewRef(pyga_state.dtypes[t]);
}

static PyGetSetDef dtype_getset[] = {
    {"name", dtype_get_name, NULL, "The dtype's name, e.g. 'float32'.", NULL},
    {"itemsize", dtype_get_itemsize, NULL, "Bytes per element.", NULL},
    {"kind", dtype_get_kind, NULL, "NumPy's kind character: b, i, u, f or c.", NULL},
    {"dtype", dtype_get_numpy, NULL,
     "The matching numpy.dtype (imports NumPy), so np.dtype(gpuarr.float32) works.", NULL},
    {"type", dtype_get_type, NULL, "NumPy's scalar type, e.g. numpy.float32 (imports NumPy).",
     NULL},
    {NULL},
};

static PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS,
     "__reduce__($self, /)\n--\n\nPickle support: a dtype pickles as its name, so it "
     "unpickles as the same singleton."},
    {NULL},
};

static PyType_Slot dtype_slots[] = {
    {Py_tp_doc,
     "DType(name)\n--\n\nAn element type of gpuarr arrays. The instances are "
     "gpuarr.bool, int8 ... complex128; they compare equal to their names and "
     "to the matching NumPy dtypes."},
    {Py_tp_new, dtype_new},
    {Py_tp_repr, dtype_repr},
    {Py_tp_str, dtype_str},
    {Py_tp_hash, dtype_hash},
    {Py_tp_richcompare, dtype_richcompare},
    {Py_tp_getset, dtype_getset},
    {Py_tp_methods, dtype_methods},
    {0, NULL},
};

static PyType_Spec dtype_spec = {
    .name = "gpuarr.DType",
    .basicsize = sizeof(PyGaDType),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = dtype_slots,
};

int
pyga_init_dtype(PyObject *m)
{
    pyga_state.DType = (PyTypeObject *)PyType_FromSpec(&dtype_spec);
    if (pyga_state.DType == NULL) {
        return -1;
    }
    if (PyModule_AddObjectRef(m, "DType", (PyObject *)pyga_state.DType) < 0) {
        return -1;
    }
    for (int t = 0; t < GA_NTYPES; t++) {
        PyGaDType *d = PyObject_New(PyGaDType, pyga_state.DType);
        if (d == NULL) {
            return -1;
        }
        d->dtype = (ga_dtype)t;
        pyga_state.dtypes[t] = (PyObject *)d;
        if (PyModule_AddObjectRef(m, ga_dtype_infos[t].name, (PyObject *)d) < 0) {
            return -1;
        }
    }
    return 0;
}
