/* py_stats.c: the transfer ledger, memory statistics and synchronisation. */
#include "py_common.h"

#include "ga_device.h"
#include "ga_fault.h"
#include "ga_transfer.h"

static PyObject *
stats_tuple(const ga_transfer_stats *p)
{
    const ga_transfer_stats s = *p;
    return Py_BuildValue("(LLLLLLL)", (long long)s.h2d_bytes, (long long)s.h2d_count,
                         (long long)s.d2h_bytes, (long long)s.d2h_count,
                         (long long)s.d2d_bytes, (long long)s.d2d_count,
                         (long long)s.syncs);
}

static PyObject *
fn_transfer_stats(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    ga_transfer_stats s;
    ga_ledger_get(&s);
    return stats_tuple(&s);
}

static PyObject *
fn_transfer_totals(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    ga_transfer_stats s;
    ga_ledger_total(&s);
    return stats_tuple(&s);
}

static PyObject *
fn_reset_transfer_stats(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    ga_ledger_reset();
    Py_RETURN_NONE;
}

static PyObject *
fn_memory_stats(PyObject *m, PyObject *arg)
{
    (void)m;
    ga_device d;
    if (!pyga_device_converter(arg, &d)) {
        return NULL;
    }
    ga_memory_stats s;
    int st = ga_device_memory_stats(d, &s);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    ga_arrays_memory am;
    ga_device_arrays_memory(d, &am);
    return Py_BuildValue("{s:n,s:n,s:n,s:n,s:L,s:n,s:n,s:n}", "allocated_bytes",
                         (Py_ssize_t)s.allocated_bytes, "reserved_bytes",
                         (Py_ssize_t)s.reserved_bytes, "peak_allocated_bytes",
                         (Py_ssize_t)s.peak_allocated_bytes, "total_bytes",
                         (Py_ssize_t)s.total_bytes, "alloc_calls", (long long)s.alloc_calls,
                         "array_bytes", (Py_ssize_t)am.bytes, "peak_array_bytes",
                         (Py_ssize_t)am.peak_bytes, "array_count", (Py_ssize_t)am.count);
}

static PyObject *
fn_reset_peak_memory(PyObject *m, PyObject *arg)
{
    (void)m;
    ga_device d;
    if (!pyga_device_converter(arg, &d)) {
        return NULL;
    }
    int st = ga_device_check(d);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    ga_device_arrays_reset_peak(d);
    Py_RETURN_NONE;
}

/* _kernel_counters(device, reset_max): the backend's ga_kernel_counters as a dict, or
 * None where the backend does not count (CPU, simulated GPUs). */
static PyObject *
fn_kernel_counters(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *dev;
    int reset_max = 0;
    if (!PyArg_ParseTuple(args, "O|p:_kernel_counters", &dev, &reset_max)) {
        return NULL;
    }
    ga_device d;
    if (!pyga_device_converter(dev, &d)) {
        return NULL;
    }
    ga_kernel_counters c;
    int counted;
    int st = ga_device_kernel_counters(d, reset_max, &c, &counted);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    if (!counted) {
        Py_RETURN_NONE;
    }
    return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:L,s:L}", "launches", (long long)c.launches,
                         "syncs", (long long)c.syncs, "h2d", (long long)c.h2d, "d2h",
                         (long long)c.d2h, "max_grid_blocks", (long long)c.max_grid_blocks,
                         "graph_launches", (long long)c.graph_launches, "graph_kernels",
                         (long long)c.graph_kernels);
}

static int
set_count(PyObject *dict, const char *key, int64_t n)
{
    PyObject *v = PyLong_FromLongLong((long long)n);
    int r = v == NULL ? -1 : PyDict_SetItemString(dict, key, v);
    Py_XDECREF(v);
    return r;
}

/* _work_counters(device): the operations the core handed the device's backend since
 * the process started, as {kind: count} (ga_device.h's GA_WORK_KINDS names them). */
static PyObject *
fn_work_counters(PyObject *m, PyObject *arg)
{
    (void)m;
    ga_device d;
    if (!pyga_existing_device_converter(arg, &d)) {
        return NULL;
    }
    int64_t c[GA_WORK_NKINDS];
    ga_device_work_counters(d, c);
    PyObject *out = PyDict_New();
    if (out == NULL) {
        return NULL;
    }
#define SET_WORK_(e, name, what)                                                       \
    if (set_count(out, #name, c[GA_WORK_##e]) < 0) {                                   \
        goto error;                                                                    \
    }
    GA_WORK_KINDS(SET_WORK_)
#undef SET_WORK_
    return out;
error:
    Py_DECREF(out);
    return NULL;
}

static PyObject *
fn_empty_cache(PyObject *m, PyObject *arg)
{
    (void)m;
    ga_device d;
    if (!pyga_device_converter(arg, &d)) {
        return NULL;
    }
    int st = ga_device_empty_cache(d);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    Py_RETURN_NONE;
}

static PyObject *
fn_synchronize(PyObject *m, PyObject *args, PyObject *kwds)
{
    (void)m;
    static char *kwlist[] = {"device", NULL};
    PyObject *devobj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:synchronize", kwlist, &devobj)) {
        return NULL;
    }
    int st;
    ga_device d = ga_cpu();
    if (devobj == Py_None) {
        st = ga_synchronize_all();
    }
    else {
        if (!pyga_device_converter(devobj, &d)) {
            return NULL;
        }
        st = ga_synchronize(d);
    }
    if (st == GA_OK) {
        /* the errors of work this thread queued there, each raised once */
        st = ga_fault_report_thread(devobj == Py_None, d);
    }
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    Py_RETURN_NONE;
}

static PyObject *
fn_set_warn_transfers(PyObject *m, PyObject *arg)
{
    (void)m;
    int on = PyObject_IsTrue(arg);
    if (on < 0) {
        return NULL;
    }
    int old = pyga_state.warn_transfers;
    pyga_state.warn_transfers = on;
    return PyBool_FromLong(old);
}

static PyObject *
fn_set_plugin_dir(PyObject *m, PyObject *arg)
{
    (void)m;
    const char *s = PyUnicode_AsUTF8(arg);
    if (s == NULL) {
        return NULL;
    }
    ga_devices_set_plugin_dir(s);
    /* called once, at import: the moment CUDA_VISIBLE_DEVICES is read for the GPUs that
     * gpuarr makes itself */
    ga_devices_read_visible_env();
    Py_RETURN_NONE;
}

static PyObject *
fn_num_threads(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyLong_FromLong(ga_device_cpu_threads());
}

static PyObject *
fn_host_cache_limit(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyLong_FromSize_t(ga_device_host_cache_limit());
}

static PyObject *
fn_pending_work(PyObject *m, PyObject *arg)
{
    (void)m;
    ga_device d;
    if (!pyga_device_converter(arg, &d)) {
        return NULL;
    }
    return PyLong_FromLongLong((long long)ga_device_pending_work(d));
}

static PyObject *
fn_hold_queue(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *devobj;
    int hold, copies = 0;
    if (!PyArg_ParseTuple(args, "Op|p:_hold_queue", &devobj, &hold, &copies)) {
        return NULL;
    }
    ga_device d;
    if (!pyga_device_converter(devobj, &d)) {
        return NULL;
    }
    int st = ga_device_hold_queue(d, copies, hold);
    if (st != GA_OK) {
        return pyga_raise(st);
    }
    Py_RETURN_NONE;
}

PyMethodDef pyga_stats_functions[] = {
    {"_hold_queue", fn_hold_queue, METH_VARARGS,
     "_hold_queue(device, hold, copies=False, /)\n--\n\nTests only: keep a simulated "
     "GPU's worker waiting (hold=True) so queued work stays pending, or let it go on "
     "(False); copies=True: the worker of its copy queue (non-blocking copies to the "
     "host)."},
    {"_pending_work", fn_pending_work, METH_O,
     "_pending_work(device, /)\n--\n\nOperations queued on a simulated GPU and not "
     "finished yet (0 elsewhere): for tests of the asynchrony."},
    {"_host_cache_limit", fn_host_cache_limit, METH_NOARGS,
     "_host_cache_limit()\n--\n\nBytes of freed host blocks kept for reuse per device "
     "(0 when compiled out, as under AddressSanitizer)."},
    {"_num_threads", fn_num_threads, METH_NOARGS,
     "_num_threads()\n--\n\nThreads the CPU kernels use (GPUARR_NUM_THREADS, else "
     "OMP_NUM_THREADS, else one per core)."},
    {"_transfer_stats", fn_transfer_stats, METH_NOARGS,
     "(h2d_bytes, h2d_count, d2h_bytes, d2h_count, d2d_bytes, d2d_count, syncs)"},
    {"_transfer_totals", fn_transfer_totals, METH_NOARGS,
     "_transfer_stats() since the process started: no reset changes it"},
    {"reset_transfer_stats", fn_reset_transfer_stats, METH_NOARGS,
     "reset_transfer_stats()\n--\n\nSet every counter of the transfer ledger to 0."},
    {"_memory_stats", fn_memory_stats, METH_O, "Memory statistics of one device."},
    {"_reset_peak_memory", fn_reset_peak_memory, METH_O,
     "Start the peak of one GPU's array bytes again from what its arrays hold now."},
    {"_empty_cache", fn_empty_cache, METH_O, "Give a device's cached blocks back."},
    {"_work_counters", fn_work_counters, METH_O,
     "_work_counters(device, /)\n--\n\nOperations handed to the device's backend since "
     "the process started, by kind (gpuarr.testing.count_work reads it)."},
    {"_kernel_counters", fn_kernel_counters, METH_VARARGS,
     "_kernel_counters(device, reset_max=False, /)\n--\n\nThe CUDA plugin's counters of "
     "a device (launches, syncs, h2d, d2h, max_grid_blocks, graph_launches, graph_kernels), or None where not counted."},
    {"synchronize", (PyCFunction)(void (*)(void))fn_synchronize,
     METH_VARARGS | METH_KEYWORDS,
     "synchronize(device=None)\n--\n\nWait until all work queued on `device` (or on "
     "every GPU) has finished, then raise the errors of work this thread queued there "
     "that nothing raised yet (an out-of-range index in a device index array: the "
     "first one, with the others listed in its message; each is raised once)."},
    {"_set_warn_transfers", fn_set_warn_transfers, METH_O,
     "Turn TransferWarning on or off; returns the previous setting."},
    {"_set_plugin_dir", fn_set_plugin_dir, METH_O,
     "Where libgpuarr_cuda.so is (set once at import)."},
    {NULL},
};
