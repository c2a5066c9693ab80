/* py_state.c: the bottom of the binding: the module state (pyga_state: the types,
 * the exceptions, the package's asarray) and pyga_wrap, which makes a Python Array of
 * a core array.
 *
 * Nearly every binding file calls these, and they call no other binding file: kept
 * here rather than beside the module init (py_module.c, which fills the state) or the
 * Array type (py_array.c, whose operator slots call the operation files), so that no
 * two binding files call each other in a loop. */
#include "py_common.h"

#include <string.h>

pyga_state_t pyga_state;

PyObject *
pyga_asarray_fn(void)
{
    if (pyga_state.asarray == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "gpuarr._core is used without the gpuarr "
                                            "package: import gpuarr first");
        return NULL;
    }
    return Py_NewRef(pyga_state.asarray);
}

PyObject *
pyga_wrap(ga_array *arr)
{
    PyGaArray *o = PyObject_New(PyGaArray, pyga_state.Array);
    if (o == NULL) {
        ga_array_release(arr);
        return NULL;
    }
    memcpy(&o->arr, arr, sizeof(*arr));
    o->weakreflist = NULL;
    o->grad = NULL;
    o->grad_fn = NULL;
    o->requires_grad = 0;
    o->grad_req = 0;
    return (PyObject *)o;
}
