/* py_reduce.c: reductions (placeholder until written). */
#include "py_common.h"

PyMethodDef pyga_reduce_functions[] = {{NULL}};
