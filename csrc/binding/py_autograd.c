/* py_autograd.c: autograd's C half (py_autograd.h says how the layer is split).
 *
 * What lives here: the thread's grad mode; the Node type (one per recorded
 * operation: its operands, the arguments, the result when the formula reads it, and
 * the storage versions of what it saved); the recording function the operation files
 * call; the checks that refuse in-place writes and operations autograd cannot
 * differentiate; and the Array attributes (requires_grad, grad, grad_fn, is_leaf,
 * detach, requires_grad_). What does not: the formulas and the engine (Python).
 *
 * Ownership and cycles: a result owns its node, a node owns its operands (arrays and
 * scalars), and a node saves its own result as a separate alias without a grad_fn, so
 * a recorded graph is acyclic and refcounting frees it. A grad set by the user is
 * stored as such an alias too when it has autograd state of its own, so x.grad = x
 * cannot make a cycle either. Nodes are GC types all the same (ctx may hold any
 * object) and free long chains through the trashcan.
 */
#include "py_common.h"
#include "py_autograd.h"

#include <structmember.h>

GA_THREAD_LOCAL int pyga_grad_off;
GA_THREAD_LOCAL int pyga_record_depth;

/* --- the Node type ------------------------------------------------------------------
 */

#define SMALL_NIN 3

typedef struct {
    PyObject_HEAD int op;
    int released;     /* after a backward without retain_graph */
    PyObject *inputs; /* tuple of the operands as given (NULL once released) */
    PyObject *result; /* alias of the output, when the formula reads it, else NULL */
    PyObject *ctx;    /* the other arguments (axis, key, ...) */
    /* nin + 1 storage versions at recording (the last: the result's), then nin
     * flags: did operand i require grad (an edge of the graph)? In `small` for up to
     * SMALL_NIN operands (every primitive but concat), else one PyMem block. */
    uint64_t *versions;
    unsigned char *needs;
    uint64_t small[SMALL_NIN + 1 + 1]; /* + one word for the flags */
} pyga_node;

static PyTypeObject *node_type;

#define SAVES_RESULT (1u << 31)
/* Per primitive: the node type the Python table registered (NULL: not
 * differentiable, no graph) and which operands (bit i) and whether the result
 * (SAVES_RESULT) its formula reads, whose versions backward checks. */
static struct {
    PyTypeObject *type;
    uint32_t saves;
} ag_ops[PYGA_AG_NOPS];

static int
node_traverse(PyObject *self, visitproc visit, void *arg)
{
    pyga_node *n = (pyga_node *)self;
    Py_VISIT(n->inputs);
    Py_VISIT(n->result);
    Py_VISIT(n->ctx);
    Py_VISIT(Py_TYPE(self)); /* heap type */
    return 0;
}

static int
node_clear(PyObject *self)
{
    pyga_node *n = (pyga_node *)self;
    Py_CLEAR(n->inputs);
    Py_CLEAR(n->result);
    Py_CLEAR(n->ctx);
    return 0;
}

static void
node_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    /* a chain of nodes (a long loop's graph) is freed without deep C recursion */
    Py_TRASHCAN_BEGIN(self, node_dealloc);
    node_clear(self);
    pyga_node *n = (pyga_node *)self;
    if (n->versions != n->small) {
        PyMem_Free(n->versions);
    }
    tp->tp_free(self);
    Py_DECREF(tp);
    Py_TRASHCAN_END;
}

static PyObject *
node_name(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyObject_GetAttrString((PyObject *)Py_TYPE(self), "__name__");
}

static int
node_check_alive(pyga_node *n)
{
    if (n->released || n->inputs == NULL) {
        PyErr_SetString(
            PyExc_RuntimeError,
            "Trying to backward through the graph a second time (or directly access "
            "saved arrays after they have already been freed). Saved intermediate "
            "values of the graph are freed when you call .backward() or "
            "autograd.grad(). Specify retain_graph=True if you need to backward "
            "through the graph a second time or if you need to access saved arrays "
            "after calling backward.");
        return -1;
    }
    return 0;
}

/* PyTorch's words for a saved array written since it was saved. */
static int
version_error(pyga_node *n, const char *which, Py_ssize_t i, const ga_array *a,
              uint64_t expected)
{
    char shape[256], dev[32];
    ga_shape_str(a->ndim, a->shape, shape, sizeof(shape));
    ga_device_str(ga_array_device(a), dev, sizeof(dev));
    PyObject *name = PyObject_GetAttrString((PyObject *)Py_TYPE(n), "__name__");
    if (name == NULL) {
        return -1;
    }
    PyErr_Format(
        PyExc_RuntimeError,
        "one of the arrays needed for gradient computation has been modified "
        "by an in-place operation: %s%s%zd of %U (%s %s on %s) is at version "
        "%llu; expected version %llu instead. Modify a copy instead (y = x + 1 "
        "rather than x += 1), or run backward before the in-place update",
        which, i >= 0 ? " " : "", i >= 0 ? i : 0, name, ga_dtype_infos[a->dtype].name,
        shape, dev, (unsigned long long)a->storage->version,
        (unsigned long long)expected);
    Py_DECREF(name);
    return -1;
}

/* node._unpack() -> (inputs, result, ctx), after checking that the node was not
 * freed and that nothing the formula reads was written since it was recorded. */
static PyObject *
node_unpack(PyObject *self, PyObject *unused)
{
    (void)unused;
    pyga_node *n = (pyga_node *)self;
    if (node_check_alive(n) < 0) {
        return NULL;
    }
    uint32_t saves = n->op >= 0 && n->op < PYGA_AG_NOPS ? ag_ops[n->op].saves : 0;
    Py_ssize_t nin = PyTuple_GET_SIZE(n->inputs);
    for (Py_ssize_t i = 0; i < nin && i < 31; i++) {
        PyObject *o = PyTuple_GET_ITEM(n->inputs, i);
        if ((saves & (1u << i)) && pyga_check(o) &&
            pyga_arr(o)->storage->version != n->versions[i]) {
            version_error(n, "input", i, pyga_arr(o), n->versions[i]);
            return NULL;
        }
    }
    if (n->result != NULL &&
        pyga_arr(n->result)->storage->version != n->versions[nin]) {
        version_error(n, "the result", -1, pyga_arr(n->result), n->versions[nin]);
        return NULL;
    }
    return PyTuple_Pack(3, n->inputs, n->result ? n->result : Py_None,
                        n->ctx ? n->ctx : Py_None);
}

/* node._edges() -> ((i, operand), ...) for the operands that required grad when the
 * operation was recorded: where the engine sends gradients. */
static PyObject *
node_edges(PyObject *self, PyObject *unused)
{
    (void)unused;
    pyga_node *n = (pyga_node *)self;
    if (node_check_alive(n) < 0) {
        return NULL;
    }
    Py_ssize_t nin = PyTuple_GET_SIZE(n->inputs), k = 0;
    for (Py_ssize_t i = 0; i < nin; i++) {
        k += n->needs[i] != 0;
    }
    PyObject *out = PyTuple_New(k);
    if (out == NULL) {
        return NULL;
    }
    k = 0;
    for (Py_ssize_t i = 0; i < nin; i++) {
        if (n->needs[i]) {
            PyObject *pair = Py_BuildValue("(nO)", i, PyTuple_GET_ITEM(n->inputs, i));
            if (pair == NULL) {
                Py_DECREF(out);
                return NULL;
            }
            PyTuple_SET_ITEM(out, k++, pair);
        }
    }
    return out;
}

/* node._release(): free what the node holds (the engine, after using it once). */
static PyObject *
node_release(PyObject *self, PyObject *unused)
{
    (void)unused;
    ((pyga_node *)self)->released = 1;
    node_clear(self);
    Py_RETURN_NONE;
}

/* node.next_functions: PyTorch's view of the graph, ((node or None, 0), ...) per
 * operand; None for an operand that does not require grad. A leaf appears as the
 * array itself (PyTorch shows an AccumulateGrad node there). */
static PyObject *
node_next_functions(PyObject *self, void *c)
{
    (void)c;
    pyga_node *n = (pyga_node *)self;
    if (node_check_alive(n) < 0) {
        return NULL;
    }
    Py_ssize_t nin = PyTuple_GET_SIZE(n->inputs);
    PyObject *out = PyTuple_New(nin);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nin; i++) {
        PyObject *o = PyTuple_GET_ITEM(n->inputs, i), *target = Py_None;
        if (n->needs[i]) {
            PyObject *fn = ((PyGaArray *)o)->grad_fn;
            target = fn != NULL ? fn : o;
        }
        PyObject *pair = Py_BuildValue("(Oi)", target, 0);
        if (pair == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, pair);
    }
    return out;
}

static PyObject *
node_get_op(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(((pyga_node *)self)->op);
}

static PyMethodDef node_methods[] = {
    {"name", node_name, METH_NOARGS,
     "name($self, /)\n--\n\nThe operation's PyTorch-style name, e.g. 'MulBackward'."},
    {"_unpack", node_unpack, METH_NOARGS,
     "_unpack($self, /)\n--\n\n(inputs, result, ctx) for the backward formula; "
     "RuntimeError when the node was freed or a saved array was modified in place."},
    {"_edges", node_edges, METH_NOARGS,
     "_edges($self, /)\n--\n\n((i, operand), ...) for the operands that require grad."},
    {"_release", node_release, METH_NOARGS,
     "_release($self, /)\n--\n\nFree the saved operands (after a backward pass)."},
    {NULL},
};

static PyGetSetDef node_getset[] = {
    {"next_functions", node_next_functions, NULL,
     "((node or leaf array or None, 0), ...): where the gradient of each operand goes.",
     NULL},
    {"_op", node_get_op, NULL, "The primitive's code (_core.autograd_ops).", NULL},
    {NULL},
};

static PyObject *
node_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)type;
    (void)args;
    (void)kwds;
    PyErr_SetString(PyExc_TypeError,
                    "autograd nodes are made by recorded operations, not directly");
    return NULL;
}

static PyType_Slot node_slots[] = {
    {Py_tp_doc, "A recorded operation (an array's grad_fn). Its type's name is the "
                "operation's PyTorch-style name (MulBackward, MatmulBackward, ...)."},
    {Py_tp_new, node_new},
    {Py_tp_dealloc, node_dealloc},
    {Py_tp_traverse, node_traverse},
    {Py_tp_clear, node_clear},
    {Py_tp_methods, node_methods},
    {Py_tp_getset, node_getset},
    {0, NULL},
};

static PyType_Spec node_spec = {
    .name = "gpuarr.autograd.Node",
    .basicsize = sizeof(pyga_node),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    .slots = node_slots,
};

/* --- recording ----------------------------------------------------------------------
 */

/* A new Array object viewing x's elements, with no autograd state. */
static PyObject *
alias(PyObject *x)
{
    ga_array v;
    ga_array_view(&v, pyga_arr(x));
    return pyga_wrap(&v);
}

PyObject *
pyga_ag_record(int op, PyObject *result, PyObject *inputs, PyObject *ctx)
{
    pyga_node *n = NULL;
    if (result == NULL || inputs == NULL || ctx == NULL) {
        goto error;
    }
    Py_ssize_t nin = PyTuple_GET_SIZE(inputs);
    for (Py_ssize_t i = 0; i < nin; i++) {
        if (PyTuple_GET_ITEM(inputs, i) == result) {
            goto no_graph; /* x.to(x.device), astype(copy=False): nothing happened */
        }
    }
    PyTypeObject *tp = op >= 0 && op < PYGA_AG_NOPS ? ag_ops[op].type : NULL;
    ga_kind kind = ga_dtype_kind((ga_dtype)pyga_arr(result)->dtype);
    if (tp != NULL && kind == GA_KIND_COMPLEX) {
        PyErr_Format(
            PyExc_NotImplementedError,
            "%s of an array that requires grad gives a complex result, and "
            "gpuarr's autograd differentiates real floating arrays only "
            "(float16, float32, float64). Take the real part first, or compute "
            "it on x.detach() (or under gpuarr.no_grad())",
            op < GA_NOPS ? ga_op_names[op] : tp->tp_name);
        goto error;
    }
    if (tp == NULL || kind != GA_KIND_FLOAT) {
        goto no_graph; /* not differentiable: the result does not require grad */
    }
    n = (pyga_node *)tp->tp_alloc(tp, 0);
    if (n == NULL) {
        goto error;
    }
    n->op = op;
    n->versions =
        nin <= SMALL_NIN
            ? n->small
            : PyMem_Malloc((size_t)(nin + 1) * sizeof(uint64_t) + (size_t)nin);
    if (n->versions == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    n->needs = (unsigned char *)(n->versions + nin + 1);
    for (Py_ssize_t i = 0; i < nin; i++) {
        PyObject *o = PyTuple_GET_ITEM(inputs, i);
        n->needs[i] = (unsigned char)pyga_ag_requires(o);
        n->versions[i] = pyga_check(o) ? pyga_arr(o)->storage->version : 0;
    }
    n->versions[nin] = pyga_arr(result)->storage->version;
    if (ag_ops[op].saves & SAVES_RESULT) {
        n->result = alias(result);
        if (n->result == NULL) {
            goto error;
        }
    }
    n->inputs = inputs;
    n->ctx = ctx;
    PyGaArray *r = (PyGaArray *)result;
    r->requires_grad = 1;
    Py_XSETREF(r->grad_fn, (PyObject *)n);
    return result;
no_graph:
    Py_DECREF(inputs);
    Py_DECREF(ctx);
    return result;
error:
    if (n != NULL && n->inputs == NULL) {
        Py_DECREF(n);
        n = NULL;
    }
    Py_XDECREF(inputs);
    Py_XDECREF(ctx);
    Py_XDECREF(result);
    return NULL;
}

PyObject *
pyga_ag_record1(int op, PyObject *result, PyObject *x, PyObject *ctx)
{
    if (result == NULL) {
        return NULL;
    }
    return pyga_ag_record(op, result, PyTuple_Pack(1, x),
                          Py_NewRef(ctx != NULL ? ctx : Py_None));
}

int
pyga_ag_write_error(const char *what, PyObject *target, PyObject *const *operands,
                    Py_ssize_t n)
{
    if (!pyga_grad_enabled()) {
        return 0;
    }
    if (pyga_ag_requires(target) && ((PyGaArray *)target)->grad_req != 0 &&
        ((PyGaArray *)target)->grad_fn == NULL) {
        /* MXNet's parameters (attach_grad) are updated in place outside record(), as
         * d2l's sgd does (param[:] = param - lr * param.grad); MXNet refuses it inside
         */
        if (pyga_record_depth == 0) {
            return 0;
        }
        PyErr_Format(
            PyExc_RuntimeError,
            "in-place operations (%s) on an array given attach_grad() are not "
            "supported inside autograd.record(): update parameters outside the "
            "record() block (or under autograd.pause())",
            what);
        return -1;
    }
    if (pyga_ag_requires(target)) {
        if (((PyGaArray *)target)->grad_fn == NULL) {
            PyErr_Format(PyExc_RuntimeError,
                         "a leaf array that requires grad is being used in an in-place "
                         "operation (%s). Update parameters under `with "
                         "gpuarr.no_grad():` (as an optimizer does), or write into "
                         "x.detach()",
                         what);
        } else {
            PyErr_Format(PyExc_RuntimeError,
                         "%s would modify an array that is part of a recorded graph "
                         "(it has a grad_fn): gpuarr's autograd does not record "
                         "in-place operations. Make a new array instead (y = y + 1 "
                         "rather than y += 1; gpuarr.where for a masked update)",
                         what);
        }
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (operands[i] != NULL && pyga_ag_requires(operands[i])) {
            PyErr_Format(PyExc_RuntimeError,
                         "%s would write an array that requires grad into one that "
                         "does not, and gpuarr's autograd does not record in-place "
                         "operations. Make a new array instead (x + y, gpuarr.where, "
                         "gpuarr.concat), or write value.detach() to drop its gradient",
                         what);
            return -1;
        }
    }
    return 0;
}

int
pyga_ag_door_closed(PyObject *x)
{
    if (!pyga_ag_requires(x) || !pyga_grad_enabled()) {
        return 0;
    }
    PyGaArray *p = (PyGaArray *)x;
    /* an attach_grad() parameter outside record() may be written, as above */
    return !(p->grad_req != 0 && p->grad_fn == NULL && pyga_record_depth == 0);
}

int
pyga_ag_door_error(const char *door, PyObject *x)
{
    if (!pyga_ag_door_closed(x)) {
        return 0;
    }
    PyErr_Format(PyExc_RuntimeError,
                 "%s would give out the memory of an array that requires grad, and a "
                 "write through it would bypass autograd's in-place check (a silent "
                 "wrong gradient). For a NumPy copy use x.detach().numpy(); for "
                 "memory you take charge of, use x.detach() (or work under `with "
                 "gpuarr.no_grad():`)",
                 door);
    return -1;
}

int
pyga_ag_refuse(const char *what, PyObject *const *operands, Py_ssize_t n)
{
    if (!pyga_ag_wanted(operands, n)) {
        return 0;
    }
    PyErr_Format(PyExc_NotImplementedError,
                 "%s is not differentiable by gpuarr's autograd, and one of its arrays "
                 "requires grad. Compute it under `with gpuarr.no_grad():` or on "
                 "x.detach() if no gradient needs to flow through it",
                 what);
    return -1;
}

/* --- Array attributes ---------------------------------------------------------------
 */

static int
differentiable_dtype(const ga_array *a, const char *what)
{
    ga_kind kind = ga_dtype_kind((ga_dtype)a->dtype);
    if (kind == GA_KIND_FLOAT) {
        return 1;
    }
    if (kind == GA_KIND_COMPLEX) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s: gpuarr's autograd differentiates real floating arrays only "
                     "(float16, float32, float64); this one is %s",
                     what, ga_dtype_infos[a->dtype].name);
    } else {
        PyErr_Format(PyExc_RuntimeError,
                     "%s: only arrays of a floating dtype (float16, float32, float64) "
                     "can require gradients; this one is %s. Convert it first, e.g. "
                     "x.astype(gpuarr.float32)",
                     what, ga_dtype_infos[a->dtype].name);
    }
    return 0;
}

/* Set requires_grad (the checks of the attribute, requires_grad_() and the creation
 * functions' requires_grad=). */
static int
set_requires_grad(PyObject *self, int flag, const char *what)
{
    PyGaArray *a = (PyGaArray *)self;
    if (a->grad_fn != NULL) {
        if (flag) {
            return 0; /* a non-leaf requires grad already (PyTorch allows this) */
        }
        PyErr_SetString(
            PyExc_RuntimeError,
            "you can only change requires_grad flags of leaf arrays. If you "
            "want to use a computed array in a subgraph that doesn't "
            "require differentiation use y_no_grad = y.detach()");
        return -1;
    }
    if (flag && !differentiable_dtype(&a->arr, what)) {
        return -1;
    }
    a->requires_grad = flag;
    if (!flag) {
        a->grad_req = 0;
    }
    return 0;
}

int
pyga_set_requires_grad(PyObject *self, int flag)
{
    return set_requires_grad(self, flag, "requires_grad=True");
}

static PyObject *
get_requires_grad(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(((PyGaArray *)self)->requires_grad);
}

static int
put_requires_grad(PyObject *self, PyObject *value, void *c)
{
    (void)c;
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "cannot delete requires_grad");
        return -1;
    }
    if (!PyBool_Check(value)) {
        PyErr_Format(PyExc_TypeError, "requires_grad must be a bool, not %.100s",
                     Py_TYPE(value)->tp_name);
        return -1;
    }
    return set_requires_grad(self, value == Py_True, "x.requires_grad = True");
}

static PyObject *
get_grad(PyObject *self, void *c)
{
    (void)c;
    PyObject *g = ((PyGaArray *)self)->grad;
    return Py_NewRef(g != NULL ? g : Py_None);
}

/* x.grad = value: None, or an Array of x's shape, dtype and device. One with autograd
 * state of its own is stored as a plain alias of its elements (no cycle through
 * grads). */
static int
put_grad(PyObject *self, PyObject *value, void *c)
{
    (void)c;
    PyGaArray *a = (PyGaArray *)self;
    if (value == NULL || value == Py_None) {
        Py_CLEAR(a->grad);
        return 0;
    }
    if (!pyga_check(value)) {
        PyErr_Format(PyExc_TypeError,
                     "assigned grad must be a gpuarr.Array or None, not %.100s",
                     Py_TYPE(value)->tp_name);
        return -1;
    }
    const ga_array *x = &a->arr, *g = pyga_arr(value);
    char d1[32], d2[32];
    if (!ga_device_eq(ga_array_device(x), ga_array_device(g))) {
        ga_device_str(ga_array_device(g), d1, sizeof(d1));
        ga_device_str(ga_array_device(x), d2, sizeof(d2));
        PyErr_Format(pyga_state.DeviceMismatchError,
                     "assigned grad is on %s but the array is on %s: a gradient lives "
                     "on its array's device (move it with g.to(x.device))",
                     d1, d2);
        return -1;
    }
    if (g->dtype != x->dtype) {
        PyErr_Format(PyExc_TypeError,
                     "assigned grad has dtype %s but the array has dtype %s (convert "
                     "it with g.astype(x.dtype))",
                     ga_dtype_infos[g->dtype].name, ga_dtype_infos[x->dtype].name);
        return -1;
    }
    if (g->ndim != x->ndim ||
        memcmp(g->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim) != 0) {
        char s1[256], s2[256];
        PyErr_Format(PyExc_ValueError,
                     "assigned grad has shape %s but the array has shape %s",
                     ga_shape_str(g->ndim, g->shape, s1, sizeof(s1)),
                     ga_shape_str(x->ndim, x->shape, s2, sizeof(s2)));
        return -1;
    }
    PyGaArray *v = (PyGaArray *)value;
    PyObject *stored = v->requires_grad || v->grad != NULL || v->grad_fn != NULL
                           ? alias(value)
                           : Py_NewRef(value);
    if (stored == NULL) {
        return -1;
    }
    Py_XSETREF(a->grad, stored);
    return 0;
}

static PyObject *
get_grad_fn(PyObject *self, void *c)
{
    (void)c;
    PyObject *f = ((PyGaArray *)self)->grad_fn;
    return Py_NewRef(f != NULL ? f : Py_None);
}

static PyObject *
get_is_leaf(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(((PyGaArray *)self)->grad_fn == NULL);
}

static PyObject *
get_version(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(pyga_arr(self)->storage->version);
}

static PyObject *
get_storage_refs(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLongLong(pyga_arr(self)->storage->refcount);
}

static PyObject *
get_grad_req(PyObject *self, void *c)
{
    (void)c;
    PyGaArray *a = (PyGaArray *)self;
    return PyUnicode_FromString(!a->requires_grad  ? "null"
                                : a->grad_req == 2 ? "write"
                                                   : "add");
}

static PyGetSetDef autograd_getset[] = {
    {"grad_req", get_grad_req, NULL,
     "MXNet's name for how backward() stores this leaf's gradient: 'write' "
     "(replaced, attach_grad()'s default), 'add' (accumulated, as PyTorch does) or "
     "'null' (no gradient).",
     NULL},
    {"requires_grad", get_requires_grad, put_requires_grad,
     "Does autograd record operations on this array (and give leaves a .grad)? "
     "Settable on leaves of a floating dtype.",
     NULL},
    {"grad", get_grad, put_grad,
     "The gradient accumulated into this leaf by backward() (None before), an array of "
     "its shape and dtype on its device. Settable (None or such an array) and "
     "deletable.",
     NULL},
    {"grad_fn", get_grad_fn, NULL,
     "The recorded operation that made this array (None for leaves); its type's name "
     "is the operation's, e.g. MatmulBackward.",
     NULL},
    {"is_leaf", get_is_leaf, NULL,
     "True unless a recorded operation made this array (then grad_fn is set).", NULL},
    {"_version", get_version, NULL,
     "How many in-place writes the memory has had (views share it).", NULL},
    {"_storage_refs", get_storage_refs, NULL, "How many arrays view this memory block.",
     NULL},
    {NULL},
};

static PyObject *
array_detach(PyObject *self, PyObject *unused)
{
    (void)unused;
    return alias(self);
}

static PyObject *
array_requires_grad_(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"requires_grad", NULL};
    int flag = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|p:requires_grad_", kwlist, &flag)) {
        return NULL;
    }
    if (set_requires_grad(self, flag, "requires_grad_()") < 0) {
        return NULL;
    }
    return Py_NewRef(self);
}

static PyMethodDef autograd_methods[] = {
    {"detach", array_detach, METH_NOARGS,
     "detach($self, /)\n--\n\nA new array sharing this one's memory, outside any "
     "recorded graph: it does not require grad and has no grad_fn."},
    {"requires_grad_", (PyCFunction)(void (*)(void))array_requires_grad_,
     METH_VARARGS | METH_KEYWORDS,
     "requires_grad_($self, /, requires_grad=True)\n--\n\nSet requires_grad (on a leaf "
     "of a floating dtype) and return the array itself."},
    {NULL},
};

/* --- module functions ------------------------------------------------------------- */

static PyObject *
fn_is_grad_enabled(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyBool_FromLong(pyga_grad_enabled());
}

static PyObject *
fn_set_grad_enabled(PyObject *m, PyObject *arg)
{
    (void)m;
    int flag = PyObject_IsTrue(arg);
    if (flag < 0) {
        return NULL;
    }
    int was = pyga_grad_enabled();
    pyga_grad_off = !flag;
    return PyBool_FromLong(was);
}

/* _attach_grad(x, write): MXNet's attach_grad (the grad array is the caller's). */
static PyObject *
fn_attach_grad(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *x;
    int write;
    if (!PyArg_ParseTuple(args, "O!p:_attach_grad", pyga_state.Array, &x, &write)) {
        return NULL;
    }
    /* MXNet's attach_grad makes any array a variable of its own, a computed one
     * too (d2l moves its parameters inside record(), then attaches): its history is
     * cut, as y.detach_() would */
    if (((PyGaArray *)x)->grad_fn != NULL) {
        if (!differentiable_dtype(pyga_arr(x), "attach_grad()")) {
            return NULL;
        }
        Py_CLEAR(((PyGaArray *)x)->grad_fn);
    }
    if (set_requires_grad(x, 1, "attach_grad()") < 0) {
        return NULL;
    }
    ((PyGaArray *)x)->grad_req = write ? 2 : 1;
    Py_RETURN_NONE;
}

/* _record_depth(delta) -> the new depth (autograd.record() enters +1, leaves -1) */
static PyObject *
fn_record_depth(PyObject *m, PyObject *arg)
{
    (void)m;
    long d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) {
        return NULL;
    }
    pyga_record_depth += (int)d;
    return PyLong_FromLong(pyga_record_depth);
}

/* _ag_register(op, name, saves) -> the node type: the Python table's entry for a
 * primitive. The type is made here, a subtype of Node with Node's own dealloc (a
 * class statement would give it CPython's generic subtype dealloc, slower on every
 * freed node). */
static PyObject *
fn_ag_register(PyObject *m, PyObject *args)
{
    (void)m;
    int op;
    const char *name;
    unsigned long saves;
    /* PyType_FromSpec keeps a pointer to the spec's name before Python 3.12 */
    static char names[PYGA_AG_NOPS][96];
    if (!PyArg_ParseTuple(args, "isk:_ag_register", &op, &name, &saves)) {
        return NULL;
    }
    if (op < 0 || op >= PYGA_AG_NOPS) {
        return PyErr_Format(PyExc_ValueError, "_ag_register: no primitive %d", op);
    }
    snprintf(names[op], sizeof(names[op]), "gpuarr.autograd.%s", name);
    static PyType_Slot slots[] = {{Py_tp_dealloc, node_dealloc},
                                  {Py_tp_traverse, node_traverse},
                                  {Py_tp_clear, node_clear},
                                  {0, NULL}};
    PyType_Spec spec = {
        .name = names[op],
        .basicsize = sizeof(pyga_node),
        .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
        .slots = slots,
    };
    PyObject *tp = PyType_FromSpecWithBases(&spec, (PyObject *)node_type);
    if (tp == NULL) {
        return NULL;
    }
    Py_XSETREF(ag_ops[op].type, (PyTypeObject *)Py_NewRef(tp));
    ag_ops[op].saves = (uint32_t)saves;
    return tp;
}

/* _ag_record(op, result, inputs, ctx): record a composite the package computes in
 * Python (logsumexp) as one node; returns result. */
static PyObject *
fn_ag_record(PyObject *m, PyObject *args)
{
    (void)m;
    int op;
    PyObject *result, *inputs, *ctx;
    if (!PyArg_ParseTuple(args, "iO!O!O:_ag_record", &op, pyga_state.Array, &result,
                          &PyTuple_Type, &inputs, &ctx)) {
        return NULL;
    }
    if (!pyga_ag_wanted(&PyTuple_GET_ITEM(inputs, 0), PyTuple_GET_SIZE(inputs))) {
        return Py_NewRef(result);
    }
    return pyga_ag_record(op, Py_NewRef(result), Py_NewRef(inputs), Py_NewRef(ctx));
}

static PyMethodDef autograd_functions[] = {
    {"is_grad_enabled", fn_is_grad_enabled, METH_NOARGS,
     "is_grad_enabled()\n--\n\nIs grad mode on in this thread (operations on arrays "
     "that require grad are recorded)?"},
    {"_set_grad_enabled", fn_set_grad_enabled, METH_O,
     "_set_grad_enabled(flag, /)\n--\n\nSet this thread's grad mode; returns the "
     "previous "
     "one."},
    {"_attach_grad", fn_attach_grad, METH_VARARGS,
     "_attach_grad(x, write, /)\n--\n\nMXNet's attach_grad: x requires grad, updated "
     "in "
     "place outside record(); write: backward replaces its grad."},
    {"_record_depth", fn_record_depth, METH_O,
     "_record_depth(delta, /)\n--\n\nEnter (+1) or leave (-1) an autograd.record() "
     "block of this thread; returns the depth."},
    {"_ag_register", fn_ag_register, METH_VARARGS,
     "_ag_register(op, name, saves, /)\n--\n\nMake and register the node type of a "
     "primitive (its PyTorch-style name, and what its formula reads: bit i operand i, "
     "bit 31 the result); returns the type."},
    {"_ag_record", fn_ag_record, METH_VARARGS,
     "_ag_record(op, result, inputs, ctx, /)\n--\n\nRecord `result` as made by "
     "primitive "
     "`op` from `inputs` when the recording rule says so; returns result."},
    {NULL},
};

/* --- initialisation -----------------------------------------------------------------
 */

static int
add_to_array_type(void)
{
    PyTypeObject *tp = pyga_state.Array;
    for (PyGetSetDef *d = autograd_getset; d->name != NULL; d++) {
        PyObject *descr = PyDescr_NewGetSet(tp, d);
        if (descr == NULL || PyDict_SetItemString(tp->tp_dict, d->name, descr) < 0) {
            Py_XDECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    for (PyMethodDef *d = autograd_methods; d->ml_name != NULL; d++) {
        PyObject *descr = PyDescr_NewMethod(tp, d);
        if (descr == NULL || PyDict_SetItemString(tp->tp_dict, d->ml_name, descr) < 0) {
            Py_XDECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    PyType_Modified(tp);
    return 0;
}

/* _core.autograd_ops: every primitive's name -> code (elementwise and the others). */
static int
add_ops(PyObject *m)
{
#define PYGA_X_NAME(e, name) #name,
#define PYGA_X_CODE(e, name) e,
    static const char *const names[] = {PYGA_AG_PRIMS(PYGA_X_NAME)};
    static const int codes[] = {PYGA_AG_PRIMS(PYGA_X_CODE)};
#undef PYGA_X_NAME
#undef PYGA_X_CODE
    PyObject *d = PyDict_New();
    if (d == NULL) {
        return -1;
    }
    for (int i = 0; i < GA_NOPS + (int)(sizeof(codes) / sizeof(codes[0])); i++) {
        const char *name = i < GA_NOPS ? ga_op_names[i] : names[i - GA_NOPS];
        int code = i < GA_NOPS ? i : codes[i - GA_NOPS];
        PyObject *v = PyLong_FromLong(code);
        if (v == NULL || PyDict_SetItemString(d, name, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return -1;
        }
        Py_DECREF(v);
    }
    int st = PyModule_AddObjectRef(m, "autograd_ops", d);
    Py_DECREF(d);
    return st;
}

int
pyga_init_autograd(PyObject *m)
{
    node_type = (PyTypeObject *)PyType_FromSpec(&node_spec);
    if (node_type == NULL ||
        PyModule_AddObjectRef(m, "Node", (PyObject *)node_type) < 0 ||
        add_to_array_type() < 0 || PyModule_AddFunctions(m, autograd_functions) < 0) {
        return -1;
    }
    return add_ops(m);
}
