/* py_matmul.c: matmul (the @ operator), tensordot, vecdot, and the CPU BLAS switch. */
#include "py_common.h"

#include "ga_blas.h"
#include "ga_matmul.h"
#include "ga_norm.h"
#include "ga_reduce.h"
#include "py_autograd.h"

PyObject *
pyga_matmul(PyObject *a, PyObject *b)
{
    if (!pyga_check(a) || !pyga_check(b)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    ga_array out;
    int st = ga_matmul(pyga_arr(a), pyga_arr(b), &out);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    PyObject *result = pyga_wrap(&out), *ops[2] = {a, b};
    if (result != NULL && pyga_ag_wanted(ops, 2)) {
        result = pyga_ag_record(PYGA_AG_MATMUL, result, PyTuple_Pack(2, a, b),
                                Py_NewRef(Py_None));
    }
    return result;
}


static PyObject *
fn_matmul(PyObject *m, PyObject *args)
{
    PyObject *a, *b;
    (void)m;
    if (!PyArg_ParseTuple(args, "O&O&:matmul", pyga_array_arg, &a, pyga_array_arg, &b)) {
        return NULL;
    }
    return pyga_matmul(a, b);
}

static int
int_list(PyObject *seq, int64_t *out, int *n)
{
    PyObject *fast = PySequence_Fast(seq, "tensordot: axes must be sequences of ints");
    if (fast == NULL) {
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    if (len > GA_MAXDIMS) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "tensordot: too many axes");
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        out[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
        if (out[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
    }
    *n = (int)len;
    Py_DECREF(fast);
    return 0;
}

static PyObject *
fn_tensordot(PyObject *m, PyObject *args)
{
    PyObject *a, *b, *la, *lb;
    (void)m;
    if (!PyArg_ParseTuple(args, "O&O&OO:_tensordot", pyga_array_arg, &a, pyga_array_arg, &b, &la,
                          &lb)) {
        return NULL;
    }
    int64_t axa[GA_MAXDIMS], axb[GA_MAXDIMS];
    int na, nb;
    if (int_list(la, axa, &na) < 0 || int_list(lb, axb, &nb) < 0) {
        return NULL;
    }
    if (na != nb) {
        PyErr_SetString(PyExc_ValueError, "tensordot: the two axes lists must have the same "
                        "length");
        return NULL;
    }
    ga_array out;
    int st = ga_tensordot(pyga_arr(a), pyga_arr(b), na, axa, axb, &out);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    PyObject *result = pyga_wrap(&out), *ops[2] = {a, b};
    if (result != NULL && pyga_ag_wanted(ops, 2)) {
        result = pyga_ag_record(PYGA_AG_TENSORDOT, result, PyTuple_Pack(2, a, b),
                                Py_BuildValue("(OO)", la, lb));
    }
    return result;
}

static PyObject *
fn_vecdot(PyObject *m, PyObject *args)
{
    PyObject *a, *b;
    int axis;
    (void)m;
    if (!PyArg_ParseTuple(args, "O&O&i:_vecdot", pyga_array_arg, &a, pyga_array_arg, &b, &axis)) {
        return NULL;
    }
    ga_array out;
    int st = ga_vecdot(pyga_arr(a), pyga_arr(b), axis, &out);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    PyObject *result = pyga_wrap(&out), *ops[2] = {a, b};
    if (result != NULL && pyga_ag_wanted(ops, 2)) {
        result = pyga_ag_record(PYGA_AG_VECDOT, result, PyTuple_Pack(2, a, b),
                                Py_BuildValue("(i)", axis));
    }
    return result;
}

static PyObject *
fn_set_blas(PyObject *m, PyObject *arg)
{
    (void)m;
    const char *path = NULL;
    if (arg != Py_None) {
        path = PyUnicode_AsUTF8(arg);
        if (path == NULL) {
            return NULL;
        }
    }
    int st = ga_blas_load(path);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    Py_RETURN_NONE;
}

static PyObject *
fn_blas_info(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    const ga_blas_table *t = ga_blas_get();
    if (t == NULL) {
        Py_RETURN_NONE;
    }
    return Py_BuildValue("{s:s,s:s}", "path", t->path, "prefix", t->prefix);
}

/* _gemm_plan(dtype, a, b, c, batch): a/b/c are (rows, cols, row_stride, col_stride,
 * batch_stride) in bytes; returns the descriptor as a dict, or {"need_copy": mask}.
 * Exposed so tests can check the mapping cuBLAS receives. */
static int
operand_arg(PyObject *o, ga_gemm_operand *x)
{
    long long v[5];
    if (!PyArg_ParseTuple(o, "LLLLL", &v[0], &v[1], &v[2], &v[3], &v[4])) {
        return -1;
    }
    x->data = NULL;
    x->rows = v[0];
    x->cols = v[1];
    x->row_stride = v[2];
    x->col_stride = v[3];
    x->batch_stride = v[4];
    return 0;
}

static PyObject *
fn_gemm_plan(PyObject *m, PyObject *args)
{
    int dtype = -1;
    PyObject *oa, *ob, *oc;
    long long batch;
    (void)m;
    if (!PyArg_ParseTuple(args, "O&OOOL:_gemm_plan", pyga_dtype_converter, &dtype, &oa,
                          &ob, &oc, &batch)) {
        return NULL;
    }
    ga_gemm_operand a, b, c;
    if (dtype < 0 || operand_arg(oa, &a) < 0 || operand_arg(ob, &b) < 0 ||
        operand_arg(oc, &c) < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "_gemm_plan: give a dtype");
        }
        return NULL;
    }
    /* distinct fake addresses tell which operand went where */
    a.data = (const char *)0x1000;
    b.data = (const char *)0x2000;
    c.data = (const char *)0x3000;
    ga_gemm_desc g;
    int need = 0;
    int st = ga_gemm_plan((ga_dtype)dtype, &a, &b, &c, batch, &g, &need);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    if (need) {
        return Py_BuildValue("{s:i}", "need_copy", need);
    }
    return Py_BuildValue(
        "{s:s,s:i,s:i,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L}", "a",
        g.a == a.data ? "A" : "B", "transa", g.transa, "transb", g.transb, "m",
        (long long)g.m, "n", (long long)g.n, "k", (long long)g.k, "lda", (long long)g.lda,
        "ldb", (long long)g.ldb, "ldc", (long long)g.ldc, "stride_a",
        (long long)g.stride_a, "stride_b", (long long)g.stride_b, "stride_c",
        (long long)g.stride_c, "batch", (long long)g.batch);
}

/* axes: None or a sequence of ints (normalised by the Python layer) -> mask */
static int
axes_mask(PyObject *axes, int ndim, uint32_t *mask)
{
    int64_t ax[GA_MAXDIMS];
    int n = -1;
    if (axes != Py_None && int_list(axes, ax, &n) < 0) {
        return -1;
    }
    int st = ga_reduce_axes(ndim, n, ax, mask);
    return st == GA_OK ? 0 : pyga_raise_int(st);
}

static PyObject *
fn_vector_norm(PyObject *m, PyObject *args)
{
    PyObject *x, *axes;
    int keepdims;
    double ord;
    (void)m;
    if (!PyArg_ParseTuple(args, "O&Opd:_vector_norm", pyga_array_arg, &x, &axes, &keepdims,
                          &ord)) {
        return NULL;
    }
    uint32_t mask;
    if (axes_mask(axes, pyga_arr(x)->ndim, &mask) < 0) {
        return NULL;
    }
    ga_array out;
    int st = ga_vector_norm(pyga_arr(x), mask, keepdims, ord, &out);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    PyObject *result = pyga_wrap(&out);
    if (result != NULL && pyga_ag_wanted(&x, 1)) {
        result =
            pyga_ag_record(PYGA_AG_VECTOR_NORM, result, PyTuple_Pack(1, x),
                           Py_BuildValue("(kid)", (unsigned long)mask, keepdims, ord));
    }
    return result;
}

static PyObject *
fn_matrix_norm(PyObject *m, PyObject *args)
{
    PyObject *x;
    int row, col, keepdims, sign, kind;
    (void)m;
    if (!PyArg_ParseTuple(args, "O&iipCi:_matrix_norm", pyga_array_arg, &x, &row, &col,
                          &keepdims, &kind, &sign)) {
        return NULL;
    }
    int nd = pyga_arr(x)->ndim;
    if (row < 0 || row >= nd || col < 0 || col >= nd || row == col) {
        PyErr_SetString(PyExc_ValueError, "matrix norm: two distinct axes are needed");
        return NULL;
    }
    if (pyga_ag_refuse("linalg.matrix_norm", &x, 1) < 0) {
        return NULL;
    }
    ga_array out;
    int st = ga_matrix_norm(pyga_arr(x), row, col, keepdims, (char)kind, sign, &out);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return pyga_wrap(&out);
}

PyMethodDef pyga_matmul_functions[] = {
    {"_vector_norm", fn_vector_norm, METH_VARARGS,
     "_vector_norm(x, axes, keepdims, ord)\n--\n\nVector norm over normalised axes."},
    {"_matrix_norm", fn_matrix_norm, METH_VARARGS,
     "_matrix_norm(x, row, col, keepdims, kind, sign)\n--\n\nMatrix norm ('f', '1', "
     "'i')."},
    {"matmul", fn_matmul, METH_VARARGS,
     "matmul(x1, x2, /)\n--\n\nMatrix product with NumPy's rules (1-d operands, "
     "broadcast batches); the same as x1 @ x2."},
    {"_tensordot", fn_tensordot, METH_VARARGS,
     "_tensordot(a, b, axes_a, axes_b)\n--\n\nContract axes_a of a with axes_b of b."},
    {"_vecdot", fn_vecdot, METH_VARARGS,
     "_vecdot(x1, x2, axis)\n--\n\nsum(conj(x1) * x2) along axis."},
    {"_set_blas", fn_set_blas, METH_O,
     "_set_blas(path_or_None)\n--\n\nUse the CPU BLAS at path for float and complex "
     "matmul (None: the portable C kernel)."},
    {"_blas_info", fn_blas_info, METH_NOARGS,
     "_blas_info()\n--\n\nThe CPU BLAS in use ({'path', 'prefix'}) or None."},
    {"_gemm_plan", fn_gemm_plan, METH_VARARGS,
     "_gemm_plan(dtype, a, b, c, batch)\n--\n\nThe column-major GEMM descriptor for "
     "row-major operands (rows, cols, row_stride, col_stride, batch_stride) in bytes."},
    {NULL},
};
