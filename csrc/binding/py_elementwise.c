/* py_elementwise.c: Python operators and the module functions of elementwise ops.
 *
 * Operands become ga_ew_arg: gpuarr arrays as they are; Python bool/int/float/complex
 * as weak scalars (NEP 50); NumPy scalars as strong scalars of their dtype; NumPy
 * arrays and lists beside a CPU array through gpuarr.asarray (a view when possible).
 * The operator path of two arrays runs no Python code.
 */
#include "py_common.h"

#include "ga_cast.h"
#include "ga_elementwise.h"
#include "py_autograd.h"

static PyObject *numpy_generic; /* numpy.generic, looked up once numpy is loaded */

/* Is `o` a NumPy scalar? Only asks numpy when the type comes from it. */
static int
is_numpy_scalar(PyObject *o)
{
    const char *tn = Py_TYPE(o)->tp_name;
    if (strncmp(tn, "numpy.", 6) != 0) {
        return 0;
    }
    if (numpy_generic == NULL) {
        PyObject *np = PyImport_ImportModule("numpy");
        if (np == NULL) {
            PyErr_Clear();
            return 0;
        }
        numpy_generic = PyObject_GetAttrString(np, "generic");
        Py_DECREF(np);
        if (numpy_generic == NULL) {
            PyErr_Clear();
            return 0;
        }
    }
    return PyObject_IsInstance(o, numpy_generic) == 1;
}

static int
set_int(PyObject *o, ga_ew_arg *arg)
{
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    arg->kind = GA_PYSCALAR_INT;
    if (!overflow) {
        arg->int_range = 0;
        arg->i = v;
        arg->re = (double)v;
        return 0;
    }
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (!(u == (unsigned long long)-1 && PyErr_Occurred())) {
            arg->int_range = 1;
            arg->u = u;
            arg->re = (double)u;
            return 0;
        }
        PyErr_Clear();
    }
    arg->int_range = 2;
    arg->re = PyLong_AsDouble(o);
    return (arg->re == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

static int
set_weak(PyObject *o, ga_pyscalar_kind kind, ga_ew_arg *arg)
{
    arg->array = NULL;
    arg->dtype = -1;
    arg->int_range = 0;
    arg->i = 0;
    arg->im = 0;
    switch (kind) {
    case GA_PYSCALAR_BOOL:
        arg->kind = kind;
        arg->i = o == Py_True;
        arg->re = (double)arg->i;
        return 0;
    case GA_PYSCALAR_INT:
        return set_int(o, arg);
    case GA_PYSCALAR_FLOAT:
        arg->kind = kind;
        arg->re = PyFloat_AsDouble(o);
        return (arg->re == -1.0 && PyErr_Occurred()) ? -1 : 0;
    default: {
        Py_complex z = PyComplex_AsCComplex(o);
        if (z.real == -1.0 && PyErr_Occurred()) {
            return -1;
        }
        arg->kind = GA_PYSCALAR_COMPLEX;
        arg->re = z.real;
        arg->im = z.imag;
        return 0;
    }
    }
}

/* A NumPy scalar: its value, and its dtype as a strong type. */
static int
set_numpy_scalar(PyObject *o, ga_ew_arg *arg)
{
    PyObject *dt = PyObject_GetAttrString(o, "dtype");
    if (dt == NULL) {
        return -1;
    }
    int t = -1;
    int ok = pyga_dtype_converter(dt, &t);
    Py_DECREF(dt);
    if (!ok) {
        return -1;
    }
    int st;
    switch (ga_dtype_kind((ga_dtype)t)) {
    case GA_KIND_BOOL:
        st = set_weak(PyObject_IsTrue(o) ? Py_True : Py_False, GA_PYSCALAR_BOOL, arg);
        break;
    case GA_KIND_INT:
    case GA_KIND_UINT: {
        PyObject *v = PyNumber_Index(o);
        if (v == NULL) {
            return -1;
        }
        st = set_weak(v, GA_PYSCALAR_INT, arg);
        Py_DECREF(v);
        break;
    }
    case GA_KIND_FLOAT:
        st = set_weak(o, GA_PYSCALAR_FLOAT, arg);
        break;
    default:
        st = set_weak(o, GA_PYSCALAR_COMPLEX, arg);
        break;
    }
    arg->dtype = t;
    return st;
}

static int
is_array_like(PyObject *o)
{
    return PyList_Check(o) || PyTuple_Check(o) || PyObject_CheckBuffer(o);
}

/* Host data (a NumPy array, a list) beside `other`: a CPU array (converted, a view
 * when possible), or DeviceMismatchError beside a GPU array. *holder gets the new
 * reference. */
static int
convert_host_data(PyObject *o, PyObject *other, PyObject **holder)
{
    if (other != NULL && ga_array_device(pyga_arr(other)).kind != GA_DEV_CPU) {
        char dev[32];
        ga_device_str(ga_array_device(pyga_arr(other)), dev, sizeof(dev));
        PyErr_Format(
            pyga_state.DeviceMismatchError,
            "cannot combine %s (data in host memory) with an array on %s: gpuarr "
            "never copies implicitly. Move the data first with "
            "gpuarr.asarray(data, device=x.device)",
            Py_TYPE(o)->tp_name, dev);
        return -1;
    }
    PyObject *asarray_fn = pyga_asarray_fn();
    if (asarray_fn == NULL) {
        return -1;
    }
    PyObject *args[2] = {NULL, o};
    PyObject *kw = NULL;
    *holder = PyObject_Vectorcall(asarray_fn, args + 1,
                                  1 | PY_VECTORCALL_ARGUMENTS_OFFSET, kw);
    Py_DECREF(asarray_fn);
    if (*holder == NULL) {
        return -1;
    }
    if (!pyga_check(*holder)) {
        Py_CLEAR(*holder);
        PyErr_SetString(PyExc_TypeError, "gpuarr.asarray did not return an array");
        return -1;
    }
    return 0;
}

/* Fill `arg` from `o`. Returns 0 on success, 1 for "not an operand gpuarr handles"
 * (the caller returns NotImplemented), -1 with an exception set. `other` is an
 * Array beside `o` (or NULL). */
static int
to_arg(PyObject *o, PyObject *other, ga_ew_arg *arg, PyObject **holder)
{
    if (pyga_check(o)) {
        arg->array = pyga_arr(o);
        return 0;
    }
    if (PyFloat_CheckExact(o)) {
        return set_weak(o, GA_PYSCALAR_FLOAT, arg);
    }
    if (PyLong_CheckExact(o)) {
        return set_weak(o, GA_PYSCALAR_INT, arg);
    }
    if (PyBool_Check(o)) {
        return set_weak(o, GA_PYSCALAR_BOOL, arg);
    }
    if (PyComplex_CheckExact(o)) {
        return set_weak(o, GA_PYSCALAR_COMPLEX, arg);
    }
    if (is_numpy_scalar(o)) {
        return set_numpy_scalar(o, arg);
    }
    if (PyFloat_Check(o)) {
        return set_weak(o, GA_PYSCALAR_FLOAT, arg);
    }
    if (PyLong_Check(o)) {
        return set_weak(o, GA_PYSCALAR_INT, arg);
    }
    if (PyComplex_Check(o)) {
        return set_weak(o, GA_PYSCALAR_COMPLEX, arg);
    }
    if (is_array_like(o)) {
        if (convert_host_data(o, other, holder) < 0) {
            return -1;
        }
        arg->array = pyga_arr(*holder);
        return 0;
    }
    return 1;
}

int
pyga_ew_arg_from(PyObject *o, ga_ew_arg *arg, PyObject **holder)
{
    return to_arg(o, NULL, arg, holder);
}

/* Run op over the converted operands; `out` may be NULL. */
static PyObject *
run_op(int op, int nin, const ga_ew_arg *args, ga_array *out, PyObject *out_obj)
{
    ga_array res;
    int st = ga_elementwise(op, nin, args, out, &res);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    if (out_obj != NULL) {
        ga_array_release(&res);
        Py_INCREF(out_obj);
        return out_obj;
    }
    return pyga_wrap(&res);
}

/* pyga_ag_check_write for an operator writing into target, named "<before><op><after>"
 * in the message, which is made only where a write may be refused: formatting it on
 * every call cost 10% of a tiny in-place add */
static int
check_op_write(const char *before, int op, const char *after, PyObject *target,
               PyObject *const *operands, Py_ssize_t n)
{
    if (!pyga_ag_write_touches_grad(target, operands, n)) {
        return 0;
    }
    char what[64];
    snprintf(what, sizeof(what), "%s%s%s", before, ga_op_names[op], after);
    return pyga_ag_write_error(what, target, operands, n);
}

static PyObject *
binary(int op, PyObject *a, PyObject *b, int inplace)
{
    ga_ew_arg args[2];
    PyObject *hold[2] = {NULL, NULL};
    PyObject *result = NULL;
    if (pyga_check(a) && pyga_check(b)) { /* the common case, no conversions */
        args[0].array = pyga_arr(a);
        args[1].array = pyga_arr(b);
    } else {
        PyObject *arr = pyga_check(a) ? a : (pyga_check(b) ? b : NULL);
        int ra = to_arg(a, arr, &args[0], &hold[0]);
        int rb = ra == 0 ? to_arg(b, arr, &args[1], &hold[1]) : 0;
        if (ra < 0 || rb < 0) {
            goto done;
        }
        if (ra > 0 || rb > 0) {
            result = Py_NewRef(Py_NotImplemented);
            goto done;
        }
    }
    /* the operands as the recorded node keeps them: host data as converted */
    PyObject *ops[2] = {hold[0] ? hold[0] : a, hold[1] ? hold[1] : b};
    if (inplace) {
        if (check_op_write("in-place ", op, "", a, &ops[1], 1) < 0) {
            goto done;
        }
        result = run_op(op, 2, args, pyga_arr(a), a);
    } else {
        result = run_op(op, 2, args, NULL, NULL);
        if (result != NULL && pyga_ag_wanted(ops, 2)) {
            result = pyga_ag_record(op, result, PyTuple_Pack(2, ops[0], ops[1]),
                                    Py_NewRef(Py_None));
        }
    }
done:
    Py_XDECREF(hold[0]);
    Py_XDECREF(hold[1]);
    return result;
}

PyObject *
pyga_binary(int op, PyObject *a, PyObject *b)
{
    return binary(op, a, b, 0);
}

PyObject *
pyga_inplace(int op, PyObject *a, PyObject *b)
{
    if (!pyga_check(a)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return binary(op, a, b, 1);
}

PyObject *
pyga_unary(int op, PyObject *a)
{
    if (!pyga_check(a)) {
        PyErr_Format(PyExc_TypeError, "%s expects a gpuarr array, not %s",
                     ga_op_names[op], Py_TYPE(a)->tp_name);
        return NULL;
    }
    ga_ew_arg arg;
    arg.array = pyga_arr(a);
    PyObject *result = run_op(op, 1, &arg, NULL, NULL);
    if (result != NULL && pyga_ag_wanted(&a, 1)) {
        result = pyga_ag_record1(op, result, a, NULL);
    }
    return result;
}

/* --- module functions --------------------------------------------------------------
 */

/* op(x1, x2, ..., /, *, out=None). Operands that are not gpuarr arrays join the
 * device of the first array among them; with no array at all, the first operand is
 * converted with gpuarr.asarray (on the default device). */
static PyObject *
ew_call(int op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    int nin = ga_op_nin[op];
    PyObject *out_obj = NULL;
    if (nargs != nin) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes %d positional argument%s but %zd were given",
                     ga_op_names[op], nin, nin == 1 ? "" : "s", nargs);
        return NULL;
    }
    if (kwnames != NULL) {
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, k);
            if (PyUnicode_CompareWithASCIIString(key, "out") != 0) {
                PyErr_Format(PyExc_TypeError,
                             "%s() got an unexpected keyword argument '%U'",
                             ga_op_names[op], key);
                return NULL;
            }
            out_obj = args[nargs + k];
        }
        if (out_obj == Py_None) {
            out_obj = NULL;
        }
        if (out_obj != NULL && !pyga_check(out_obj)) {
            PyErr_Format(PyExc_TypeError, "%s(): out must be a gpuarr array, not %s",
                         ga_op_names[op], Py_TYPE(out_obj)->tp_name);
            return NULL;
        }
    }
    ga_ew_arg in[GA_MAXARGS];
    PyObject *hold[GA_MAXARGS] = {NULL};
    PyObject *result = NULL;
    PyObject *arr = out_obj;
    for (int i = 0; i < nin && arr == NULL; i++) {
        if (pyga_check(args[i])) {
            arr = args[i];
        }
    }
    if (arr == NULL) {
        if (convert_host_data(args[0], NULL, &hold[0]) < 0) {
            return NULL;
        }
        arr = hold[0];
    }
    for (int i = 0; i < nin; i++) {
        int r;
        if (i == 0 && hold[0] != NULL) {
            in[0].array = pyga_arr(hold[0]);
            continue;
        }
        r = to_arg(args[i], arr, &in[i], &hold[i]);
        if (r < 0) {
            goto done;
        }
        if (r > 0) {
            PyErr_Format(
                PyExc_TypeError,
                "%s(): unsupported operand type %s (expected a gpuarr array, a "
                "Python or NumPy scalar, or array data on the CPU)",
                ga_op_names[op], Py_TYPE(args[i])->tp_name);
            goto done;
        }
    }
    PyObject *ops[GA_MAXARGS];
    for (int i = 0; i < nin; i++) {
        ops[i] = hold[i] != NULL ? hold[i] : args[i];
    }
    if (out_obj != NULL) {
        if (check_op_write("", op, "(..., out=)", out_obj, ops, nin) < 0) {
            goto done;
        }
        result = run_op(op, nin, in, pyga_arr(out_obj), out_obj);
    } else {
        result = run_op(op, nin, in, NULL, NULL);
        if (result != NULL && pyga_ag_wanted(ops, nin)) {
            PyObject *inputs = PyTuple_New(nin);
            for (int i = 0; inputs != NULL && i < nin; i++) {
                PyTuple_SET_ITEM(inputs, i, Py_NewRef(ops[i]));
            }
            result = pyga_ag_record(op, result, inputs, Py_NewRef(Py_None));
        }
    }
done:
    for (int i = 0; i < nin; i++) {
        Py_XDECREF(hold[i]);
    }
    return result;
}

#define GA_X_FN(E, name, nin, out)                                                     \
    static PyObject *fn_##name(PyObject *m, PyObject *const *args, Py_ssize_t nargs,   \
                               PyObject *kwnames)                                      \
    {                                                                                  \
        (void)m;                                                                       \
        return ew_call(E, args, nargs, kwnames);                                       \
    }
GA_ELEMENTWISE_OPS(GA_X_FN)
#undef GA_X_FN

/* astype(x, dtype, /, *, copy=True) */
static PyObject *
fn_astype(PyObject *m, PyObject *args, PyObject *kwds)
{
    (void)m;
    static char *kwlist[] = {"x", "dtype", "copy", NULL};
    PyObject *x;
    int dtype = -1, copy = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O&|$p:astype", kwlist,
                                     pyga_state.Array, &x, pyga_dtype_converter, &dtype,
                                     &copy)) {
        return NULL;
    }
    if (dtype < 0) {
        PyErr_SetString(PyExc_TypeError, "astype() needs a dtype, e.g. gpuarr.float32");
        return NULL;
    }
    if (!copy && pyga_arr(x)->dtype == dtype) {
        return Py_NewRef(x);
    }
    ga_array out;
    int st = ga_astype(pyga_arr(x), (ga_dtype)dtype, &out);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    PyObject *result = pyga_wrap(&out);
    if (result != NULL && pyga_ag_wanted(&x, 1)) {
        result = pyga_ag_record1(PYGA_AG_ASTYPE, result, x, NULL);
    }
    return result;
}

/* _result_type_ew(op_name, *operands) -> (loop dtype, output dtype) (for tests) */
static PyObject *
fn_ew_resolve(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs < 1 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "_ew_resolve(op_name, *operands)");
        return NULL;
    }
    const char *name = PyUnicode_AsUTF8(args[0]);
    int op = -1;
    for (int i = 0; i < GA_NOPS; i++) {
        if (name != NULL && strcmp(name, ga_op_names[i]) == 0) {
            op = i;
        }
    }
    if (op < 0 || nargs - 1 != ga_op_nin[op]) {
        PyErr_SetString(PyExc_ValueError, "unknown op or wrong number of operands");
        return NULL;
    }
    ga_ew_arg in[GA_MAXARGS];
    PyObject *hold[GA_MAXARGS] = {NULL};
    PyObject *result = NULL;
    int nin = (int)nargs - 1;
    for (int i = 0; i < nin; i++) {
        int r = to_arg(args[i + 1], NULL, &in[i], &hold[i]);
        if (r != 0) {
            if (r > 0) {
                PyErr_SetString(PyExc_TypeError, "unsupported operand");
            }
            goto done;
        }
    }
    ga_dtype lt, ot;
    int st = ga_elementwise_resolve(op, nin, in, &lt, &ot);
    if (st != GA_OK) {
        pyga_raise(st);
        goto done;
    }
    result = PyTuple_Pack(2, pyga_dtype_obj(lt), pyga_dtype_obj(ot));
done:
    for (int i = 0; i < nin; i++) {
        Py_XDECREF(hold[i]);
    }
    return result;
}

#define GA_EW_DOC(name, sig, text) name sig "\n--\n\n" text
/* The raw entries of gpuarr.<name>: text signatures so that help() and
 * inspect.signature work on them too. */
#define GA_X_DEF(E, name, nin, out)                                                    \
    {#name, (PyCFunction)(void (*)(void))fn_##name, METH_FASTCALL | METH_KEYWORDS,     \
     (nin) == 1 ? #name "(x, /, *, out=None)\n--\n\nThe C entry of gpuarr." #name "."  \
     : (nin) == 2                                                                      \
         ? #name "(x1, x2, /, *, out=None)\n--\n\nThe C entry of gpuarr." #name "."    \
         : #name "(x1, x2, x3, /, *, out=None)\n--\n\nThe C entry of gpuarr." #name    \
                 "."},
PyMethodDef pyga_elementwise_functions[] = {
    GA_ELEMENTWISE_OPS(GA_X_DEF){
        "astype", (PyCFunction)(void (*)(void))fn_astype, METH_VARARGS | METH_KEYWORDS,
        "astype(x, dtype, /, *, copy=True)\n--\n\nx's values converted to dtype "
        "(NumPy's "
        "unsafe casting: float to int truncates, complex to real drops the imaginary "
        "part), "
        "on x's device. With copy=False, x itself when it already has that dtype."},
    {"_ew_resolve", (PyCFunction)(void (*)(void))fn_ew_resolve, METH_FASTCALL,
     "_ew_resolve(op_name, *operands)\n--\n\n(loop dtype, result dtype) of an "
     "elementwise op for these operands (for tests)."},
    {NULL},
};
#undef GA_X_DEF
