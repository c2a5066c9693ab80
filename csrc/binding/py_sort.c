/* py_sort.c: the binding of sort and searchsorted (the rest is gpuarr/_sorting.py). */
#include "py_common.h"

#include "ga_sort.h"
#include "py_autograd.h"

static int
sort_array(PyObject *o, void *out)
{
    if (!pyga_check(o)) {
        PyErr_Format(PyExc_TypeError, "expected a gpuarr.Array, got %.100s",
                     Py_TYPE(o)->tp_name);
        return 0;
    }
    *(ga_array **)out = pyga_arr(o);
    return 1;
}

/* _sort(x, descending, want_values, want_indices) -> (values | None, indices | None) */
static PyObject *
fn_sort(PyObject *m, PyObject *args)
{
    (void)m;
    ga_array *x;
    int desc, want_v, want_i;
    if (!PyArg_ParseTuple(args, "O&ppp:_sort", sort_array, &x, &desc, &want_v, &want_i)) {
        return NULL;
    }
    if (want_v &&
        pyga_ag_refuse("sort (its values)", &PyTuple_GET_ITEM(args, 0), 1) < 0) {
        return NULL;
    }
    ga_array v = {0}, i = {0};
    int st = ga_sort_last(x, desc, want_v ? &v : NULL, want_i ? &i : NULL);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    /* pyga_wrap takes over (or releases) its array, so each is wrapped exactly once. */
    PyObject *pv = want_v ? pyga_wrap(&v) : Py_NewRef(Py_None);
    PyObject *pi = want_i ? pyga_wrap(&i) : Py_NewRef(Py_None);
    if (pv == NULL || pi == NULL) {
        Py_XDECREF(pv);
        Py_XDECREF(pi);
        return NULL;
    }
    return Py_BuildValue("(NN)", pv, pi);
}

static PyObject *
fn_searchsorted(PyObject *m, PyObject *args)
{
    (void)m;
    ga_array *s, *v, out;
    int right;
    if (!PyArg_ParseTuple(args, "O&O&p:_searchsorted", sort_array, &s, sort_array, &v,
                          &right)) {
        return NULL;
    }
    int st = ga_searchsorted(s, v, right, &out);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return pyga_wrap(&out);
}

PyMethodDef pyga_sort_functions[] = {
    {"_sort", fn_sort, METH_VARARGS,
     "_sort(x, descending, want_values, want_indices)\n--\n\nStable sort along the last "
     "axis (NaNs last): (values or None, int64 indices or None)."},
    {"_searchsorted", fn_searchsorted, METH_VARARGS,
     "_searchsorted(sorted, values, right)\n--\n\nInsertion points of values into the "
     "1-D ascending `sorted` (same dtype and device), as int64."},
    {NULL},
};
