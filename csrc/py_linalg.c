/* py_linalg.c: matmul and linear algebra (placeholder until written). */
#include "py_common.h"

PyObject *
pyga_matmul(PyObject *a, PyObject *b)
{
    (void)a;
    (void)b;
    Py_RETURN_NOTIMPLEMENTED;
}

PyMethodDef pyga_linalg_functions[] = {{NULL}};
