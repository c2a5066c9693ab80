/* py_creation.c: creation functions (placeholder until written). */
#include "py_common.h"

PyMethodDef pyga_creation_functions[] = {{NULL}};
