/* py_linalg.c: the factorisations behind gpuarr.linalg (ga_linalg.h), each
 * "parse, call, raise". The public functions (solve, cholesky, eigh, svd, qr, det,
 * ...) are Python compositions in python/gpuarr/_lapack.py. */
#include "py_common.h"

#include "py_autograd.h"

#include "ga_linalg.h"

/* wrap two results as a tuple, releasing both on failure */
static PyObject *
pair(ga_array *a, ga_array *b)
{
    PyObject *x = pyga_wrap(a);
    if (x == NULL) {
        ga_array_release(b);
        return NULL;
    }
    PyObject *y = pyga_wrap(b);
    if (y == NULL) {
        Py_DECREF(x);
        return NULL;
    }
    PyObject *t = PyTuple_Pack(2, x, y);
    Py_DECREF(x);
    Py_DECREF(y);
    return t;
}

static PyObject *
fn_solve(PyObject *m, PyObject *args)
{
    PyObject *a, *b;
    (void)m;
    if (!PyArg_ParseTuple(args, "O&O&:_solve", pyga_array_arg, &a, pyga_array_arg, &b)) {
        return NULL;
    }
    if (pyga_ag_refuse("linalg.solve", &PyTuple_GET_ITEM(args, 0),
                       PyTuple_GET_SIZE(args)) < 0) {
        return NULL;
    }
    ga_array x;
    int st = ga_linalg_solve(pyga_arr(a), pyga_arr(b), &x);
    return st != GA_OK ? pyga_raise(st) : pyga_wrap(&x);
}

static PyObject *
fn_lu(PyObject *m, PyObject *args)
{
    PyObject *a;
    (void)m;
    if (!PyArg_ParseTuple(args, "O&:_lu", pyga_array_arg, &a)) {
        return NULL;
    }
    if (pyga_ag_refuse("linalg (LU: det, slogdet)", &PyTuple_GET_ITEM(args, 0),
                       PyTuple_GET_SIZE(args)) < 0) {
        return NULL;
    }
    ga_array lu, piv;
    int st = ga_linalg_lu(pyga_arr(a), &lu, &piv);
    return st != GA_OK ? pyga_raise(st) : pair(&lu, &piv);
}

static PyObject *
fn_cholesky(PyObject *m, PyObject *args)
{
    PyObject *a;
    int upper;
    (void)m;
    if (!PyArg_ParseTuple(args, "O&p:_cholesky", pyga_array_arg, &a, &upper)) {
        return NULL;
    }
    if (pyga_ag_refuse("linalg.cholesky", &PyTuple_GET_ITEM(args, 0),
                       PyTuple_GET_SIZE(args)) < 0) {
        return NULL;
    }
    ga_array out;
    int st = ga_linalg_cholesky(pyga_arr(a), upper, &out);
    return st != GA_OK ? pyga_raise(st) : pyga_wrap(&out);
}

static PyObject *
fn_eigh(PyObject *m, PyObject *args)
{
    PyObject *a;
    int vectors;
    (void)m;
    if (!PyArg_ParseTuple(args, "O&p:_eigh", pyga_array_arg, &a, &vectors)) {
        return NULL;
    }
    if (pyga_ag_refuse("linalg.eigh", &PyTuple_GET_ITEM(args, 0),
                       PyTuple_GET_SIZE(args)) < 0) {
        return NULL;
    }
    ga_array w, v;
    int st = ga_linalg_eigh(pyga_arr(a), vectors, &w, &v);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return vectors ? pair(&w, &v) : pyga_wrap(&w);
}

static PyObject *
fn_svd(PyObject *m, PyObject *args)
{
    PyObject *a;
    int mode;
    (void)m;
    if (!PyArg_ParseTuple(args, "O&i:_svd", pyga_array_arg, &a, &mode)) {
        return NULL;
    }
    if (pyga_ag_refuse("linalg.svd", &PyTuple_GET_ITEM(args, 0),
                       PyTuple_GET_SIZE(args)) < 0) {
        return NULL;
    }
    if (mode < 0 || mode > 2) {
        PyErr_SetString(PyExc_ValueError, "_svd: mode is 0, 1 or 2");
        return NULL;
    }
    ga_array u, s, vh;
    int st = ga_linalg_svd(pyga_arr(a), mode, &u, &s, &vh);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    if (mode == 0) {
        return pyga_wrap(&s);
    }
    PyObject *uo = pyga_wrap(&u), *rest = NULL, *t = NULL;
    if (uo == NULL) {
        ga_array_release(&s);
        ga_array_release(&vh);
        return NULL;
    }
    rest = pair(&s, &vh);
    if (rest != NULL) {
        t = PyTuple_Pack(3, uo, PyTuple_GET_ITEM(rest, 0), PyTuple_GET_ITEM(rest, 1));
    }
    Py_DECREF(uo);
    Py_XDECREF(rest);
    return t;
}

static PyObject *
fn_qr(PyObject *m, PyObject *args)
{
    PyObject *a;
    int complete;
    (void)m;
    if (!PyArg_ParseTuple(args, "O&p:_qr", pyga_array_arg, &a, &complete)) {
        return NULL;
    }
    if (pyga_ag_refuse("linalg.qr", &PyTuple_GET_ITEM(args, 0),
                       PyTuple_GET_SIZE(args)) < 0) {
        return NULL;
    }
    ga_array q, r;
    int st = ga_linalg_qr(pyga_arr(a), complete, &q, &r);
    return st != GA_OK ? pyga_raise(st) : pair(&q, &r);
}

PyMethodDef pyga_linalg_functions[] = {
    {"_solve", fn_solve, METH_VARARGS,
     "_solve(a, b)\n--\n\na^-1 b for (..., n, n) a and (n,) or (..., n, k) b."},
    {"_lu", fn_lu, METH_VARARGS,
     "_lu(a)\n--\n\n(lu, pivots): LU with partial pivoting, pivots 1-based int32."},
    {"_cholesky", fn_cholesky, METH_VARARGS,
     "_cholesky(a, upper)\n--\n\nThe Cholesky factor in one triangle (the other is "
     "unspecified)."},
    {"_eigh", fn_eigh, METH_VARARGS,
     "_eigh(a, vectors)\n--\n\nEigenvalues (and eigenvectors as columns) of a Hermitian "
     "a from its lower triangle."},
    {"_svd", fn_svd, METH_VARARGS,
     "_svd(a, mode)\n--\n\nmode 0: singular values; 1: (u, s, vh) reduced; 2: full."},
    {"_qr", fn_qr, METH_VARARGS,
     "_qr(a, complete)\n--\n\n(q, r) with R in r's upper triangle (reflectors below)."},
    {NULL},
};
