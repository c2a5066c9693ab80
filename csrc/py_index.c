/* py_index.c: indexing (placeholder until written). */
#include "py_common.h"

PyObject *
pyga_getitem(PyObject *self, PyObject *key)
{
    (void)self;
    (void)key;
    PyErr_SetString(PyExc_TypeError, "indexing is not implemented yet");
    return NULL;
}

int
pyga_setitem(PyObject *self, PyObject *key, PyObject *value)
{
    (void)self;
    (void)key;
    (void)value;
    PyErr_SetString(PyExc_TypeError, "indexing is not implemented yet");
    return -1;
}

PyMethodDef pyga_index_functions[] = {{NULL}};
