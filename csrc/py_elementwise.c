/* py_elementwise.c: elementwise operators and functions (placeholder until written). */
#include "py_common.h"

PyObject *
pyga_binary(int op, PyObject *a, PyObject *b)
{
    (void)op;
    (void)a;
    (void)b;
    Py_RETURN_NOTIMPLEMENTED;
}

PyObject *
pyga_inplace(int op, PyObject *a, PyObject *b)
{
    (void)op;
    (void)a;
    (void)b;
    Py_RETURN_NOTIMPLEMENTED;
}

PyObject *
pyga_unary(int op, PyObject *a)
{
    (void)op;
    (void)a;
    PyErr_SetString(PyExc_TypeError, "not implemented yet");
    return NULL;
}

PyMethodDef pyga_elementwise_functions[] = {{NULL}};
