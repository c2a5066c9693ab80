/* py_random.c: random numbers (placeholder until written). */
#include "py_common.h"

PyMethodDef pyga_random_functions[] = {{NULL}};
