/* py_fused.c: the binding of fused elementwise programs (ga_fused.h). gpuarr/_fuse.py
 * traces a Python function into a program, compiles it once with _fused_compile and
 * runs it with _fused_run; everything about tracing, caching and falling back to the
 * unfused operations lives there. */
#include "py_common.h"

#include <string.h>

#include "ga_fused.h"
#include "ga_ops.h"

static int
op_from_name(PyObject *o)
{
    const char *name = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    for (int i = 0; name != NULL && i < GA_NOPS; i++) {
        if (strcmp(name, ga_op_names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

static int
small_int(PyObject *o, int lo, int hi, int *out)
{
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "fused program: %ld is out of range", v);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* _fused_compile(nin, nconst, reg_dtypes, instrs, result) -> bytes */
static PyObject *
fn_fused_compile(PyObject *m, PyObject *args)
{
    (void)m;
    int nin, nconst, result;
    PyObject *dtypes, *instrs;
    if (!PyArg_ParseTuple(args, "iiO!O!i", &nin, &nconst, &PyTuple_Type, &dtypes,
                          &PyTuple_Type, &instrs, &result)) {
        return NULL;
    }
    ga_fused_prog g;
    memset(&g, 0, sizeof(g));
    if (PyTuple_GET_SIZE(dtypes) > GA_FUSED_MAXREGS ||
        PyTuple_GET_SIZE(instrs) > GA_FUSED_MAXINSTR) {
        PyErr_Format(PyExc_ValueError, "fused program: more than %d registers or %d "
                     "instructions", GA_FUSED_MAXREGS, GA_FUSED_MAXINSTR);
        return NULL;
    }
    g.nin = nin;
    g.nconst = nconst;
    g.result = result;
    g.nregs = (int32_t)PyTuple_GET_SIZE(dtypes);
    g.ninstr = (int32_t)PyTuple_GET_SIZE(instrs);
    for (int r = 0; r < g.nregs; r++) {
        int dt = -1;
        if (!pyga_dtype_converter(PyTuple_GET_ITEM(dtypes, r), &dt)) {
            return NULL;
        }
        g.reg_dtype[r] = (int8_t)dt;
    }
    for (int i = 0; i < g.ninstr; i++) {
        PyObject *t = PyTuple_GET_ITEM(instrs, i);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 6) {
            PyErr_SetString(PyExc_TypeError, "fused program: an instruction is "
                            "(op, dtype, dst, src0, src1, src2)");
            return NULL;
        }
        int op = op_from_name(PyTuple_GET_ITEM(t, 0)), dt = -1, v[4];
        if (op < 0) {
            PyErr_SetString(PyExc_ValueError, "fused program: unknown op");
            return NULL;
        }
        if (!pyga_dtype_converter(PyTuple_GET_ITEM(t, 1), &dt)) {
            return NULL;
        }
        for (int k = 0; k < 4; k++) {
            if (small_int(PyTuple_GET_ITEM(t, 2 + k), -1, GA_FUSED_MAXREGS - 1, &v[k]) < 0) {
                return NULL;
            }
        }
        g.instr[i].op = (int16_t)op;
        g.instr[i].dtype = (int16_t)dt;
        g.instr[i].dst = (int8_t)v[0];
        for (int k = 0; k < 3; k++) {
            g.instr[i].src[k] = (int8_t)v[1 + k];
        }
    }
    int st = ga_fused_check(&g);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return PyBytes_FromStringAndSize((const char *)&g, sizeof(g));
}

/* _fused_run(prog, arrays, consts, out=None, reduce=None) -> Array (out itself when
 * given). reduce: (name, keepdims) of a full reduction of the result, made as the
 * result is (ga_fused_reduce); None back when the device cannot (the caller runs the
 * program, then the reduction). */
static PyObject *
fn_fused_run(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    PyObject *out = nargs >= 4 && args[3] != Py_None ? args[3] : NULL;
    PyObject *reduce = nargs == 5 && args[4] != Py_None ? args[4] : NULL;
    int red_op = -1, keepdims = 0;
    if (reduce != NULL) {
        const char *name;
        if (out != NULL || !PyArg_ParseTuple(reduce, "sp", &name, &keepdims)) {
            PyErr_Clear();
            name = "";
        }
        for (int i = 0; i < GA_NREDUCE; i++) {
            if (strcmp(name, ga_reduce_names[i]) == 0) {
                red_op = i;
            }
        }
        red_op = strcmp(name, "mean") == 0 ? GA_NREDUCE : red_op; /* ga_fused_mean */
        if (red_op < 0) {
            PyErr_SetString(PyExc_TypeError, "_fused_run: reduce is (a reduction's name, "
                            "keepdims), without out");
            return NULL;
        }
    }
    if (nargs < 3 || nargs > 5 || (out != NULL && !pyga_check(out)) ||
        !PyBytes_Check(args[0]) ||
        PyBytes_GET_SIZE(args[0]) != (Py_ssize_t)sizeof(ga_fused_prog) ||
        !PyTuple_Check(args[1]) || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "_fused_run(prog, arrays, consts, out=None, reduce=None)");
        return NULL;
    }
    ga_fused_prog g;
    memcpy(&g, PyBytes_AS_STRING(args[0]), sizeof(g));
    if (PyTuple_GET_SIZE(args[1]) != g.nin || PyTuple_GET_SIZE(args[2]) != g.nconst) {
        PyErr_SetString(PyExc_ValueError, "fused program: wrong number of inputs");
        return NULL;
    }
    const ga_array *in[GA_MAXARGS];
    for (int k = 0; k < g.nin; k++) {
        PyObject *a = PyTuple_GET_ITEM(args[1], k);
        if (!pyga_check(a)) {
            PyErr_SetString(PyExc_TypeError, "fused program: inputs are gpuarr arrays");
            return NULL;
        }
        in[k] = pyga_arr(a);
    }
    for (int c = 0; c < g.nconst; c++) {
        ga_ew_arg arg;
        memset(&arg, 0, sizeof(arg));
        PyObject *hold = NULL;
        int r = pyga_ew_arg_from(PyTuple_GET_ITEM(args[2], c), &arg, &hold);
        Py_XDECREF(hold);
        if (r != 0 || arg.array != NULL) {
            if (r >= 0) {
                PyErr_SetString(PyExc_TypeError, "fused program: constants are scalars");
            }
            return NULL;
        }
        ga_ew_scalar_bytes(&arg, (ga_dtype)g.reg_dtype[g.nin + c], &g.consts[c]);
    }
    if (out != NULL) {
        ga_array view;
        int st = ga_fused_run_into(&g, in, pyga_arr(out), &view);
        if (st != GA_OK) {
            return pyga_raise(st);
        }
        ga_array_release(&view);
        return Py_NewRef(out);
    }
    ga_array res;
    if (red_op >= 0) {
        int st = red_op == GA_NREDUCE ? ga_fused_mean(&g, in, keepdims, &res)
                                      : ga_fused_reduce(&g, in, red_op, keepdims, &res);
        if (st == GA_ERR_UNSUPPORTED) {
            Py_RETURN_NONE;
        }
        return st == GA_OK ? pyga_wrap(&res) : pyga_raise(st);
    }
    int st = ga_fused_run(&g, in, &res);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return pyga_wrap(&res);
}

PyMethodDef pyga_fused_functions[] = {
    {"_fused_compile", fn_fused_compile, METH_VARARGS,
     "_fused_compile(nin, nconst, reg_dtypes, instrs, result)\n--\n\nA checked fused "
     "program (gpuarr/_fuse.py builds it)."},
    {"_fused_run", (PyCFunction)(void (*)(void))fn_fused_run, METH_FASTCALL,
     "_fused_run(prog, arrays, consts, out=None, reduce=None)\n--\n\nRun a compiled "
     "fused program (into out, and return it, when given; reduced when reduce is given, "
     "or None when the device cannot)."},
    {NULL},
};
