/* py_device.c: gpuarr.Device, the default device, and the device functions. */
#include "py_common.h"

#include <string.h>

/* The default device: the innermost `with device:` scope of the running context,
 * else the global default. The scopes live in a contextvars.ContextVar, so each
 * asyncio task and each thread sees its own (a C thread-local was shared by every task
 * of an event loop). Its value is a linked list of (Device, outer scope) tuples, None
 * at the bottom: an immutable value, so a context copied into a new task cannot be
 * changed from outside. PyContextVar_Get is a cached pointer read on the creation fast
 * path. */
static PyObject *scope_var;
static ga_device global_default = {GA_DEV_CPU, 0};
/* how many times set_default_device was called: gpuarr.cuda.current_device() compares it
 * with the count when set_device() ran, so whichever of the two came later wins */
static unsigned long long global_default_sets;

ga_device
pyga_default_device(void)
{
    PyObject *top = NULL;
    if (PyContextVar_Get(scope_var, NULL, &top) < 0) {
        PyErr_Clear(); /* cannot fail for a ContextVar */
        return global_default;
    }
    if (top == NULL) {
        return global_default;
    }
    ga_device d = global_default;
    if (PyTuple_Check(top)) {
        d = ((PyGaDevice *)PyTuple_GET_ITEM(top, 0))->dev;
    }
    Py_DECREF(top);
    return d;
}

PyObject *
pyga_device_new(ga_device d)
{
    if (d.kind == GA_DEV_CPU && pyga_state.cpu_device != NULL) {
        return Py_NewRef(pyga_state.cpu_device);
    }
    PyGaDevice *o = PyObject_New(PyGaDevice, pyga_state.Device);
    if (o == NULL) {
        return NULL;
    }
    o->dev = d;
    return (PyObject *)o;
}

/* "cpu", "cpu:0", "gpu", "gpu:1", "cuda", "cuda:1" */
static int
parse_device_string(PyObject *s, ga_device *out)
{
    const char *txt = PyUnicode_AsUTF8(s);
    if (txt == NULL) {
        return -1;
    }
    const char *colon = strchr(txt, ':');
    size_t klen = colon ? (size_t)(colon - txt) : strlen(txt);
    ga_device d = {0, 0};
    if (klen == 3 && strncmp(txt, "cpu", 3) == 0) {
        d.kind = GA_DEV_CPU;
    }
    else if ((klen == 3 && strncmp(txt, "gpu", 3) == 0) ||
             (klen == 4 && strncmp(txt, "cuda", 4) == 0)) {
        d.kind = GA_DEV_GPU;
    }
    else {
        goto bad;
    }
    if (colon) {
        char *end;
        long idx = strtol(colon + 1, &end, 10);
        if (colon[1] == '\0' || *end != '\0' || idx < 0 || idx > 1 << 20) {
            goto bad;
        }
        d.index = (int32_t)idx;
    }
    *out = d;
    return 0;
bad:
    PyErr_Format(PyExc_ValueError,
                 "invalid device string %R: use 'cpu', 'gpu', 'gpu:1' or 'cuda:1'", s);
    return -1;
}

int
pyga_device_converter(PyObject *o, void *out)
{
    ga_device *d = (ga_device *)out;
    if (o == Py_None) {
        *d = pyga_default_device();
        return 1;
    }
    if (Py_IS_TYPE(o, pyga_state.Device)) {
        *d = ((PyGaDevice *)o)->dev;
        return 1;
    }
    if (PyUnicode_Check(o)) {
        return parse_device_string(o, d) == 0;
    }
    if (PyCFunction_Check(o)) { /* x.to(gpuarr.gpu): the function, not a device */
        const char *name = ((PyCFunctionObject *)o)->m_ml->ml_name;
        if (strcmp(name, "gpu") == 0 || strcmp(name, "cpu") == 0) {
            PyErr_Format(PyExc_TypeError,
                         "device must be a gpuarr.Device; got the function gpuarr.%s "
                         "itself: call it, %s",
                         name, strcmp(name, "gpu") == 0 ? "gpu() or gpu(1)" : "cpu()");
            return 0;
        }
    }
    PyErr_Format(PyExc_TypeError,
                 "device must be a gpuarr.Device (gpuarr.cpu(), gpuarr.gpu(1)) or a string "
                 "such as 'cpu' or 'gpu:1'; got %R",
                 o);
    return 0;
}

int
pyga_existing_device_converter(PyObject *o, void *out)
{
    if (!pyga_device_converter(o, out)) {
        return 0;
    }
    int st = ga_device_check(*(ga_device *)out);
    if (st != GA_OK) {
        pyga_raise(st);
        return 0;
    }
    return 1;
}

static PyObject *
device_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)type;
    static char *kwlist[] = {"device", "index", NULL};
    PyObject *spec;
    PyObject *index = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:Device", kwlist, &spec, &index)) {
        return NULL;
    }
    ga_device d;
    if (!pyga_device_converter(spec, &d)) {
        return NULL;
    }
    if (index != Py_None) {
        long i = PyLong_AsLong(index);
        if (i == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (i < 0) {
            PyErr_SetString(PyExc_ValueError, "a device index must be >= 0");
            return NULL;
        }
        if (i > INT32_MAX) {
            PyErr_Format(PyExc_OverflowError,
                         "device index %ld does not fit in 32 bits", i);
            return NULL;
        }
        d.index = (int32_t)i;
    }
    if (d.kind == GA_DEV_CPU && d.index != 0) {
        PyErr_Format(PyExc_ValueError, "there is only one CPU device, cpu(0); got cpu(%d)",
                     (int)d.index);
        return NULL;
    }
    return pyga_device_new(d);
}

static PyObject *
device_repr(PyObject *self)
{
    char buf[32];
    return PyUnicode_FromString(ga_device_str(((PyGaDevice *)self)->dev, buf, sizeof(buf)));
}

static Py_hash_t
device_hash(PyObject *self)
{
    ga_device d = ((PyGaDevice *)self)->dev;
    Py_hash_t h = (Py_hash_t)(d.kind * 1000003 + d.index + 1);
    return h == -1 ? -2 : h;
}

static PyObject *
device_richcompare(PyObject *self, PyObject *other, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !Py_IS_TYPE(other, pyga_state.Device)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    int eq = ga_device_eq(((PyGaDevice *)self)->dev, ((PyGaDevice *)other)->dev);
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *
device_get_type(PyObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(((PyGaDevice *)self)->dev.kind == GA_DEV_CPU ? "cpu" : "gpu");
}

static PyObject *
device_get_index(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(((PyGaDevice *)self)->dev.index);
}

static PyObject *
device_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *outer = NULL;
    if (PyContextVar_Get(scope_var, Py_None, &outer) < 0) {
        return NULL;
    }
    PyObject *node = PyTuple_Pack(2, self, outer);
    Py_DECREF(outer);
    if (node == NULL) {
        return NULL;
    }
    PyObject *token = PyContextVar_Set(scope_var, node);
    Py_DECREF(node);
    if (token == NULL) {
        return NULL;
    }
    Py_DECREF(token);
    return Py_NewRef(self);
}

/* Undo this scope's own entry: the innermost scope of this device object in the
 * running context is replaced by what was current at its __enter__. Scopes entered
 * above it and not exited (a generator suspended inside its `with`) end with it; an
 * entry that is not there (already undone that way) leaves the scopes alone. */
static PyObject *
device_exit(PyObject *self, PyObject *args)
{
    (void)args;
    PyObject *node = NULL;
    if (PyContextVar_Get(scope_var, Py_None, &node) < 0) {
        return NULL;
    }
    PyObject *n = node;
    while (PyTuple_Check(n) && PyTuple_GET_ITEM(n, 0) != self) {
        n = PyTuple_GET_ITEM(n, 1);
    }
    if (PyTuple_Check(n)) {
        PyObject *token = PyContextVar_Set(scope_var, PyTuple_GET_ITEM(n, 1));
        if (token == NULL) {
            Py_DECREF(node);
            return NULL;
        }
        Py_DECREF(token);
    }
    Py_DECREF(node);
    Py_RETURN_FALSE;
}

static PyObject *
device_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    char buf[32];
    ga_device d = ((PyGaDevice *)self)->dev;
    snprintf(buf, sizeof(buf), "%s:%d", d.kind == GA_DEV_CPU ? "cpu" : "gpu", (int)d.index);
    return Py_BuildValue("O(s)", (PyObject *)pyga_state.Device, buf);
}

static PyGetSetDef device_getset[] = {
    {"type", device_get_type, NULL, "'cpu' or 'gpu'.", NULL},
    {"index", device_get_index, NULL, "The device's number (0 for the CPU).", NULL},
    {NULL},
};

static PyMethodDef device_methods[] = {
    {"__enter__", device_enter, METH_NOARGS,
     "__enter__($self, /)\n--\n\nMake this device the default for array creation in "
     "this context (thread or asyncio task), until the matching __exit__ (use it as "
     "`with gpuarr.gpu(1): ...`)."},
    {"__exit__", device_exit, METH_VARARGS,
     "__exit__($self, exc_type=None, exc_value=None, traceback=None, /)\n--\n\n"
     "Restore the default device that was current before the matching __enter__. "
     "Exceptions are not suppressed."},
    {"__reduce__", device_reduce, METH_NOARGS,
     "__reduce__($self, /)\n--\n\nPickle support: a device pickles as its name "
     "('cpu:0', 'gpu:1')."},
    {NULL},
};

static PyType_Slot device_slots[] = {
    {Py_tp_doc, "Device(device, index=None)\n--\n\n"
                "A device: the CPU (cpu(0)) or one GPU (gpu(i)). Devices are cheap "
                "values: building gpu(9) never fails; placing data on a device that does "
                "not exist does. Accepts 'cpu', 'gpu', 'gpu:1' and 'cuda:1'. A device is "
                "also a context manager that sets the default device for creation.\n\n"
                "Example::\n\n"
                "    >>> gpuarr.Device(\"cuda:0\") == gpuarr.gpu(0)\n"
                "    True\n"
                "    >>> with gpuarr.Device(\"cpu\"):\n"
                "    ...     x = gpuarr.zeros(3)   # made on cpu(0)\n"},
    {Py_tp_new, device_new},
    {Py_tp_repr, device_repr},
    {Py_tp_hash, device_hash},
    {Py_tp_richcompare, device_richcompare},
    {Py_tp_getset, device_getset},
    {Py_tp_methods, device_methods},
    {0, NULL},
};

static PyType_Spec device_spec = {
    .name = "gpuarr.Device",
    .basicsize = sizeof(PyGaDevice),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = device_slots,
};

/* --- module functions ------------------------------------------------------------ */

static PyObject *
fn_cpu(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return Py_NewRef(pyga_state.cpu_device);
}

static PyObject *
fn_gpu(PyObject *m, PyObject *args, PyObject *kwds)
{
    (void)m;
    static char *kwlist[] = {"i", NULL};
    int i = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|i:gpu", kwlist, &i)) {
        return NULL;
    }
    if (i < 0) {
        PyErr_Format(PyExc_ValueError, "a GPU index must be >= 0, got %d", i);
        return NULL;
    }
    ga_device d = {GA_DEV_GPU, i};
    return pyga_device_new(d);
}

static PyObject *
fn_num_gpus(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    int st = ga_devices_env_error(); /* a misspelt GPUARR_SIMULATE_GPUS is no "0" */
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return PyLong_FromLong(ga_num_gpus());
}

static PyObject *
fn_set_default_device(PyObject *m, PyObject *arg)
{
    (void)m;
    ga_device d;
    if (arg == Py_None) {
        d = ga_cpu();
    }
    else if (!pyga_device_converter(arg, &d)) {
        return NULL;
    }
    if (d.kind == GA_DEV_GPU) {
        int st = ga_device_check(d);
        if (st != GA_OK) {
            return pyga_raise(st);
        }
    }
    global_default = d;
    global_default_sets++;
    Py_RETURN_NONE;
}

static PyObject *
fn_default_device_sets(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyLong_FromUnsignedLongLong(global_default_sets);
}

static PyObject *
fn_get_default_device(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return pyga_device_new(pyga_default_device());
}

static PyObject *
fn_gpu_mode(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    static const char *names[] = {"none", "cuda", "simulated", "emulated"};
    ga_gpu_mode mode = ga_gpu_mode_get();
    return Py_BuildValue("(ss)", names[mode], ga_gpu_reason());
}

static PyObject *
fn_simulate_gpus_if_none(PyObject *m, PyObject *args)
{
    (void)m;
    long n;
    const char *model = NULL;
    if (!PyArg_ParseTuple(args, "l|z:_simulate_gpus_if_none", &n, &model)) {
        return NULL;
    }
    if (n < 1 || n > GA_MAX_DEVICES) {
        return PyErr_Format(PyExc_ValueError,
                            "simulate_gpus_if_none(n): n must be between 1 and %d, got %ld",
                            GA_MAX_DEVICES, n);
    }
    int switched;
    int st = ga_simulate_gpus_if_none((int)n, model, &switched);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return PyBool_FromLong(switched);
}

static PyObject *
fn_device_info(PyObject *m, PyObject *arg)
{
    (void)m;
    ga_device d;
    if (!pyga_device_converter(arg, &d)) {
        return NULL;
    }
    ga_device_desc desc;
    int st = ga_device_describe(d, &desc);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    return Py_BuildValue("{s:s,s:s,s:n,s:(ii)}", "kind", desc.kind_word, "name", desc.name,
                         "total_memory", (Py_ssize_t)desc.total_memory, "compute_capability",
                         desc.cc_major, desc.cc_minor);
}

PyMethodDef pyga_device_functions[] = {
    {"cpu", fn_cpu, METH_NOARGS, "cpu()\n--\n\nThe CPU device, cpu(0)."},
    {"gpu", (PyCFunction)(void (*)(void))fn_gpu, METH_VARARGS | METH_KEYWORDS,
     "gpu(i=0)\n--\n\nThe i-th GPU. Building it never fails; placing data on it fails "
     "if it does not exist."},
    {"num_gpus", fn_num_gpus, METH_NOARGS,
     "num_gpus()\n--\n\nThe number of GPUs (real, simulated or emulated); 0 without a "
     "driver. Never raises."},
    {"set_default_device", fn_set_default_device, METH_O,
     "set_default_device(device)\n--\n\nSet the global default device for creation "
     "functions (a `with device:` block overrides it in its thread). A GPU set here (or "
     "by `with gpu(i):`) is also the current GPU, where a bare x.cuda() goes; "
     "gpuarr.cuda.set_device(i) changes only the current GPU, as in PyTorch."},
    {"_default_device_sets", fn_default_device_sets, METH_NOARGS,
     "How many times set_default_device has been called (gpuarr.cuda.current_device)."},
    {"get_default_device", fn_get_default_device, METH_NOARGS,
     "get_default_device()\n--\n\nThe device creation functions use when device= is "
     "not given."},
    {"_gpu_mode", fn_gpu_mode, METH_NOARGS, "(mode, reason) of gpu(i) in this process."},
    {"_simulate_gpus_if_none", fn_simulate_gpus_if_none, METH_VARARGS,
     "Switch to n simulated GPUs when no GPU exists; True if it switched."},
    {"_device_info", fn_device_info, METH_O, "Kind, name and memory of one device."},
    {NULL},
};

int
pyga_init_device(PyObject *m)
{
    pyga_state.Device = (PyTypeObject *)PyType_FromSpec(&device_spec);
    if (pyga_state.Device == NULL) {
        return -1;
    }
    if (PyModule_AddObjectRef(m, "Device", (PyObject *)pyga_state.Device) < 0) {
        return -1;
    }
    scope_var = PyContextVar_New("gpuarr.default_device_scope", NULL);
    if (scope_var == NULL) {
        return -1;
    }
    /* read by gpuarr.cuda.current_device(): a `with gpu(i):` entered after set_device()
     * shows as a new scope node, and then wins */
    if (PyModule_AddObjectRef(m, "_default_device_scope", scope_var) < 0) {
        return -1;
    }
    pyga_state.cpu_device = pyga_device_new(ga_cpu());
    return pyga_state.cpu_device == NULL ? -1 : 0;
}
