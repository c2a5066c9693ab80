/* py_dlpack.c: the buffer protocol and DLPack (x.__dlpack__, x.__dlpack_device__,
 * gpuarr.from_dlpack).
 *
 * Export: CPU arrays are shared zero-copy as kDLCPU; arrays on real CUDA GPUs as
 * kDLCUDA; simulated and emulated GPUs are host memory behind a GPU's rules, which no
 * consumer may use as device memory, so they are reported as kDLExtDev (12) with the
 * GPU's index and served to the host only through dl_device=(1, 0): a counted
 * device-to-host copy (emulated GPUs are kDLCUDA in the test-only mode
 * GPUARR_CUDA_EMULATE_DLPACK=cuda, which tests the stream hand-off). The exported
 * tensor holds a storage reference (a view or a fresh copy) that the deleter
 * releases, taking the GIL, from any thread.
 *
 * Streams (DLPack's python_spec.rst): the consumer names the stream it will read on,
 * and the producer makes its queued work visible there. As a consumer gpuarr names
 * its own stream of the device; as a producer it orders the consumer's stream after
 * its own with an event. Both deleters wait before memory can be reused; see
 * export_free and import_release for which wait and why.
 */
#include "py_common.h"

#include <string.h>

#include "dlpack.h"
#include "ga_fault.h"
#include "ga_host_ready.h"
#include "ga_stream.h"
#include "ga_transfer.h"
#include "py_autograd.h"
#include "py_capture.h"

/* Buffer protocol for CPU arrays: zero-copy. Device arrays refuse with a message
 * saying how to copy explicitly. The shape/strides arrays live in view->internal. */
int
pyga_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    ga_array *a = pyga_arr(self);
    if (pyga_capture_host_read("the buffer protocol (memoryview(x))") < 0 ||
        pyga_ag_door_error("the buffer protocol (memoryview(x))", self) < 0) {
        view->obj = NULL;
        return -1;
    }
    if (ga_array_device(a).kind != GA_DEV_CPU) {
        char dev[32];
        ga_device_str(ga_array_device(a), dev, sizeof(dev));
        PyErr_Format(PyExc_TypeError,
                     "this array lives on %s; host code cannot read it directly. Copy it "
                     "explicitly with x.numpy() or x.to(gpuarr.cpu())",
                     dev);
        view->obj = NULL;
        return -1;
    }
    if ((flags & PyBUF_WRITABLE) && !ga_array_writeable(a)) {
        PyErr_SetString(PyExc_BufferError, "this array is read-only");
        view->obj = NULL;
        return -1;
    }
    int ready = ga_host_ready_wait(a->storage, 1); /* a non-blocking copy's block */
    if (ready != GA_OK) {
        view->obj = NULL;
        pyga_raise(ready);
        return -1;
    }
    Py_ssize_t *dims = PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (size_t)(a->ndim ? a->ndim : 1));
    if (dims == NULL) {
        PyErr_NoMemory();
        view->obj = NULL;
        return -1;
    }
    for (int i = 0; i < a->ndim; i++) {
        dims[i] = (Py_ssize_t)a->shape[i];
        dims[a->ndim + i] = (Py_ssize_t)a->strides[i];
    }
    /* struct-module codes from the dtype list: its character, or for complex types
     * 'Z' and the part's float code ("Zf", "Zd"), as PEP 3118 spells them */
    static const char formats[GA_NTYPES][3] = {
#define GA_X_FMT(e, name, kind, size, ch, ctype)                                       \
    [e] = {kind == GA_KIND_COMPLEX ? 'Z' : ch,                                         \
           kind == GA_KIND_COMPLEX ? (char)(ch - 'A' + 'a') : 0, 0},
        GA_DTYPES(GA_X_FMT)
#undef GA_X_FMT
    };
    int itemsize = ga_dtype_itemsize((ga_dtype)a->dtype);
    view->buf = ga_array_data(a);
    view->obj = Py_NewRef(self);
    view->len = (Py_ssize_t)(ga_array_size(a) * itemsize);
    view->readonly = !ga_array_writeable(a);
    view->itemsize = itemsize;
    view->format = (flags & PyBUF_FORMAT) ? (char *)formats[a->dtype] : NULL;
    view->ndim = a->ndim;
    view->shape = dims;
    view->strides = dims + a->ndim;
    view->suboffsets = NULL;
    view->internal = dims;
    int contiguous_ok = 1;
    if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS) {
        contiguous_ok = ga_array_is_c_contiguous(a);
    }
    else if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS) {
        contiguous_ok = ga_array_is_f_contiguous(a);
    }
    else if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS) {
        contiguous_ok = ga_array_is_c_contiguous(a) || ga_array_is_f_contiguous(a);
    }
    else if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES) {
        contiguous_ok = ga_array_is_c_contiguous(a);
        view->strides = NULL;
    }
    if (!contiguous_ok) {
        PyErr_SetString(PyExc_BufferError, "this array is not contiguous in the way the "
                                           "consumer asked for");
        PyMem_Free(dims);
        Py_CLEAR(view->obj);
        return -1;
    }
    return 0;
}

void
pyga_releasebuffer(PyObject *self, Py_buffer *view)
{
    (void)self;
    PyMem_Free(view->internal);
}

/* --- export ------------------------------------------------------------------------ */

static const char *const NAME_LEGACY = "dltensor";
static const char *const NAME_USED_LEGACY = "used_dltensor";
static const char *const NAME_VERSIONED = "dltensor_versioned";
static const char *const NAME_USED_VERSIONED = "used_dltensor_versioned";

/* One allocation per export: the managed struct, the array it keeps alive, then
 * shape and strides. */
typedef struct {
    union {
        DLManagedTensor legacy;
        DLManagedTensorVersioned versioned;
    } m;
    ga_array arr;
    int64_t dims[2 * GA_MAXDIMS];
    int wait_dev;   /* the CUDA device whose memory was lent in place, or -1 */
    int named;      /* the consumer named the stream it reads on (not -1) */
    uintptr_t stream; /* that stream (DLPack's numbering) */
    int unconsumed; /* set when the capsule dies unconsumed: no consumer read it */
} export_ctx;

static void
export_free(export_ctx *ctx)
{
    /* At interpreter shutdown storage and allocator may be gone: leak, never crash. */
    if (!Py_IsInitialized()) {
        return;
    }
    if (ctx->wait_dev >= 0 && !ctx->unconsumed) {
        /* The block goes back to gpuarr's cache, and the next allocation on its device
         * may write it at once on gpuarr's stream, while the consumer's kernels that
         * read it may still be queued on the stream it named: the consumer need not
         * wait before calling the deleter. gpuarr's stream waits for an event recorded
         * on that stream (no host wait; all reuse of a cached block is later work on
         * gpuarr's stream, or waits for it). The stream is the one the protocol lets
         * the consumer read on (python_spec.rst); it must live until the consumer
         * drops the tensor, as its reads on it must end before. A consumer that named
         * no stream (stream=-1) promised nothing: the host waits for the whole device.
         * A fault reported here is sticky and raised by the device's next call: free
         * never fails. */
        ga_device d = {GA_DEV_GPU, ctx->wait_dev};
        if (ctx->named) {
            (void)ga_stream_order_after(d, ctx->stream);
        }
        else {
            (void)ga_stream_device_wait(d);
        }
    }
    PyGILState_STATE g = PyGILState_Ensure();
    ga_array_release(&ctx->arr);
    PyMem_Free(ctx);
    PyGILState_Release(g);
}

static void
deleter_legacy(DLManagedTensor *self)
{
    export_free((export_ctx *)self->manager_ctx);
}

static void
deleter_versioned(DLManagedTensorVersioned *self)
{
    export_free((export_ctx *)self->manager_ctx);
}

static void
capsule_destructor_legacy(PyObject *cap)
{
    if (PyCapsule_IsValid(cap, NAME_USED_LEGACY)) {
        return; /* a consumer owns it now */
    }
    DLManagedTensor *m = PyCapsule_GetPointer(cap, NAME_LEGACY);
    if (m == NULL) {
        PyErr_WriteUnraisable(cap);
        return;
    }
    ((export_ctx *)m->manager_ctx)->unconsumed = 1;
    if (m->deleter != NULL) {
        m->deleter(m);
    }
}

static void
capsule_destructor_versioned(PyObject *cap)
{
    if (PyCapsule_IsValid(cap, NAME_USED_VERSIONED)) {
        return;
    }
    DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, NAME_VERSIONED);
    if (m == NULL) {
        PyErr_WriteUnraisable(cap);
        return;
    }
    ((export_ctx *)m->manager_ctx)->unconsumed = 1;
    if (m->deleter != NULL) {
        m->deleter(m);
    }
}

static int
dl_dtype(ga_dtype t, DLDataType *out)
{
    static const uint8_t codes[] = {
        [GA_KIND_BOOL] = kDLBool, [GA_KIND_INT] = kDLInt, [GA_KIND_UINT] = kDLUInt,
        [GA_KIND_FLOAT] = kDLFloat, [GA_KIND_COMPLEX] = kDLComplex,
    };
    out->code = codes[ga_dtype_kind(t)];
    out->bits = (uint8_t)(8 * ga_dtype_itemsize(t));
    out->lanes = 1;
    return 0;
}

/* How a device is named in DLPack. */
static DLDevice
dl_device_of(ga_device d)
{
    DLDevice r;
    if (d.kind == GA_DEV_CPU) {
        r.device_type = kDLCPU;
        r.device_id = 0;
    }
    else {
        r.device_type = ga_stream_shares_memory(d) ? kDLCUDA : kDLExtDev;
        r.device_id = d.index;
    }
    return r;
}

static PyObject *
array_dlpack_device(PyObject *self, PyObject *unused)
{
    (void)unused;
    DLDevice d = dl_device_of(ga_array_device(pyga_arr(self)));
    return Py_BuildValue("(ii)", d.device_type, d.device_id);
}

static PyObject *
buffer_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    PyErr_FormatV(PyExc_BufferError, fmt, ap);
    va_end(ap);
    return NULL;
}

static PyObject *
array_dlpack(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None;
    PyObject *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OOOO:__dlpack__", kwlist, &stream,
                                     &max_version, &dl_device, &copy)) {
        return NULL;
    }
    ga_array *a = pyga_arr(self);
    ga_device own = ga_array_device(a);
    DLDevice own_dl = dl_device_of(own);

    int versioned = 0;
    if (max_version != Py_None) {
        long major;
        if (!PyTuple_Check(max_version) || PyTuple_GET_SIZE(max_version) != 2 ||
            ((major = PyLong_AsLong(PyTuple_GET_ITEM(max_version, 0))) == -1 &&
             PyErr_Occurred())) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "max_version must be a (major, minor) tuple");
            return NULL;
        }
        versioned = major >= 1;
    }
    int want_copy = -1; /* None */
    if (copy != Py_None) {
        want_copy = PyObject_IsTrue(copy);
        if (want_copy < 0) {
            return NULL;
        }
    }
    /* Where the consumer wants the data. */
    ga_device target = own;
    if (dl_device != Py_None) {
        int dt, di;
        if (!PyTuple_Check(dl_device) || !PyArg_ParseTuple(dl_device, "ii", &dt, &di)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError,
                            "dl_device must be a (device_type, device_id) tuple");
            return NULL;
        }
        if (dt == kDLCPU && di != 0) {
            return buffer_error("cannot export to DLPack device (1, %d): the CPU is "
                                "device (1, 0)",
                                di);
        }
        if (dt == kDLCPU) {
            target = ga_cpu();
        }
        else if (dt != own_dl.device_type || di != own_dl.device_id) {
            return buffer_error("cannot export to DLPack device (%d, %d): this array "
                                "lives on (%d, %d); only (1, 0), the host, is served "
                                "besides its own device",
                                dt, di, own_dl.device_type, own_dl.device_id);
        }
    }
    int cross = !ga_device_eq(target, own);
    /* a copy (copy=True, or to the host from a GPU) shares nothing: only a view of
     * the memory is refused for an array that requires grad */
    if (pyga_capture_host_read("__dlpack__ (np.from_dlpack(x))") < 0 ||
        (!cross && want_copy != 1 &&
         pyga_ag_door_error("__dlpack__ (np.from_dlpack(x))", self) < 0)) {
        return NULL;
    }
    if (!cross && own_dl.device_type == kDLExtDev) {
        char dev[32];
        ga_device_str(own, dev, sizeof(dev));
        return buffer_error("this array lives on %s, a %s GPU whose memory no DLPack "
                            "consumer can use in place; ask for a host copy with "
                            "dl_device=(1, 0) (numpy.from_dlpack(x, device='cpu')) or use "
                            "x.numpy()",
                            dev, ga_gpu_mode_get() == GA_GPU_SIMULATED ? "simulated"
                                                                       : "emulated");
    }
    if (cross && want_copy == 0) {
        return buffer_error("copy=False, but exporting this %s array to the host needs "
                            "a device-to-host copy",
                            own.kind == GA_DEV_GPU ? "GPU" : "CPU");
    }
    /* stream: the consumer's. Data without a CUDA stream (the host, simulated or
     * plain emulated GPUs) take None only. On CUDA, None means the legacy default
     * stream (1), 2 the per-thread default stream, above 2 a cudaStream_t, -1 asks for
     * no synchronisation, and 0 is ambiguous. */
    int on_cuda = !cross && ga_stream_shares_memory(own);
    uintptr_t consumer = 1;
    int order = on_cuda;
    if (stream != Py_None) {
        if (!on_cuda) {
            return buffer_error("stream must be None for data exported to the host or "
                                "to a non-CUDA device");
        }
        unsigned long long u = PyLong_AsUnsignedLongLong(stream);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
                return NULL; /* not an integer */
            }
            PyErr_Clear();
            long long v = PyLong_AsLongLong(stream);
            if (v != -1) {
                PyErr_SetString(PyExc_ValueError,
                                "stream must be -1 (no synchronisation), 1 (legacy "
                                "default), 2 (per-thread default) or a CUDA stream handle");
                return NULL;
            }
            order = 0;
        }
        else if (u == 0) {
            PyErr_SetString(PyExc_ValueError, "stream=0 is ambiguous in DLPack; use 1 "
                                              "(legacy default) or 2 (per-thread)");
            return NULL;
        }
        else {
            consumer = (uintptr_t)u;
        }
    }
    if (!versioned && !ga_array_writeable(a)) {
        return buffer_error("this array is read-only, and a legacy DLPack capsule cannot "
                            "say so: ask with max_version=(1, 0) or newer");
    }
    int itemsize = ga_dtype_itemsize((ga_dtype)a->dtype);
    export_ctx *ctx = PyMem_Calloc(1, sizeof(export_ctx));
    if (ctx == NULL) {
        return PyErr_NoMemory();
    }
    int copied = cross || want_copy == 1;
    int st;
    if (copied) {
        st = ga_copy_to_device(a, target, &ctx->arr);
    }
    else {
        ga_array_view(&ctx->arr, a);
        st = GA_OK;
    }
    if (st == GA_OK && ga_array_device(&ctx->arr).kind == GA_DEV_GPU) {
        /* The consumer reads the memory itself, and no error can reach it later: a
         * result of failed work is refused here. Waits only when the array depends
         * on fallible work whose outcome is still unknown (ga_fault.h). */
        st = ga_fault_check(&ctx->arr);
    }
    if (st == GA_OK && order) {
        /* The consumer reads on its own stream, and the work that writes this array
         * (or the copy just made) may still be queued on gpuarr's: its stream waits
         * for an event recorded on ours, so neither side waits on the host. */
        st = ga_stream_order_foreign(own, consumer);
    }
    if (st != GA_OK) {
        ga_array_release(&ctx->arr); /* ctx is zeroed: safe whatever failed */
        PyMem_Free(ctx);
        return pyga_raise(st);
    }
    ga_array *e = &ctx->arr;
    ctx->wait_dev = on_cuda ? own.index : -1;
    ctx->named = order;
    ctx->stream = consumer;
    for (int i = 0; i < e->ndim; i++) {
        if (e->strides[i] % itemsize != 0) {
            ga_array_release(e);
            PyMem_Free(ctx);
            return buffer_error("this view's strides are not whole elements; DLPack "
                                "cannot describe it (make a contiguous copy first)");
        }
        ctx->dims[i] = e->shape[i];
        ctx->dims[GA_MAXDIMS + i] = e->strides[i] / itemsize;
    }
    int ready = ga_host_ready_wait(e->storage, 1); /* a non-blocking copy's block */
    if (ready != GA_OK) {
        ga_array_release(e);
        PyMem_Free(ctx);
        return pyga_raise(ready);
    }
    DLTensor *t = versioned ? &ctx->m.versioned.dl_tensor : &ctx->m.legacy.dl_tensor;
    t->data = ga_array_data(e);
    t->device = dl_device_of(ga_array_device(e));
    t->ndim = e->ndim;
    dl_dtype((ga_dtype)e->dtype, &t->dtype);
    t->shape = ctx->dims;
    t->strides = ctx->dims + GA_MAXDIMS;
    t->byte_offset = 0;
    PyObject *cap;
    if (versioned) {
        DLManagedTensorVersioned *m = &ctx->m.versioned;
        m->version.major = DLPACK_MAJOR_VERSION;
        m->version.minor = DLPACK_MINOR_VERSION;
        m->manager_ctx = ctx;
        m->deleter = deleter_versioned;
        m->flags =
            (copied ? DLPACK_FLAG_BITMASK_IS_COPIED : 0) |
            (!copied && !ga_array_writeable(a) ? DLPACK_FLAG_BITMASK_READ_ONLY : 0);
        cap = PyCapsule_New(m, NAME_VERSIONED, capsule_destructor_versioned);
    }
    else {
        DLManagedTensor *m = &ctx->m.legacy;
        m->manager_ctx = ctx;
        m->deleter = deleter_legacy;
        cap = PyCapsule_New(m, NAME_LEGACY, capsule_destructor_legacy);
    }
    if (cap == NULL) {
        ga_array_release(e);
        PyMem_Free(ctx);
        return NULL;
    }
    return cap;
}

/* --- import ------------------------------------------------------------------------ */

typedef struct {
    void *managed;
    int versioned;
    int wait_dev; /* the CUDA device the tensor lives on, or -1 */
} import_owner;

/* Storage release of an imported tensor: the producer's deleter (storage refcounts
 * change under the GIL, so the GIL is held here). */
static void
import_release(void *p)
{
    import_owner *o = (import_owner *)p;
    if (o->managed != NULL && o->wait_dev >= 0) {
        /* gpuarr's kernels that read the block may still be queued on its stream,
         * and the producer's deleter may free the block or hand it to its own next
         * allocation at once, on a stream gpuarr cannot order itself before. So the
         * host waits for gpuarr's stream of that device first (the GIL released):
         * only gpuarr's stream needs waiting for, since all of gpuarr's work with the
         * block is queued there (a copy to another device included: copy_peer makes
         * the source's stream wait for it). A fault is sticky and raised by the
         * device's next call: free never fails. */
        ga_device d = {GA_DEV_GPU, o->wait_dev};
        (void)ga_synchronize(d);
    }
    if (o->managed == NULL) {
        /* never taken over: the capsule's destructor still owns the tensor */
    }
    else if (o->versioned) {
        DLManagedTensorVersioned *m = o->managed;
        if (m->deleter != NULL) {
            m->deleter(m);
        }
    }
    else {
        DLManagedTensor *m = o->managed;
        if (m->deleter != NULL) {
            m->deleter(m);
        }
    }
    PyMem_Free(o);
}

static int
dtype_from_dl(DLDataType d, ga_dtype *out)
{
    if (d.lanes == 1) {
        for (int t = 0; t < GA_NTYPES; t++) {
            DLDataType x;
            dl_dtype((ga_dtype)t, &x);
            if (x.code == d.code && x.bits == d.bits) {
                *out = (ga_dtype)t;
                return 0;
            }
        }
    }
    PyErr_Format(PyExc_BufferError,
                 "DLPack dtype (code %d, bits %d, lanes %d) has no gpuarr equivalent "
                 "(gpuarr has bool, integers, float16/32/64, complex64/128)",
                 d.code, d.bits, d.lanes);
    return -1;
}

/* Everything a producer can get wrong, checked before any of it is used: the device,
 * ndim, shape, dtype, strides (element strides times the itemsize must not overflow,
 * nor the extent they span), data (NULL only for an empty tensor) and byte_offset
 * (the addresses the view touches must not wrap). Fills the geometry of `arr`, the
 * address of element [0, ...] and the byte range [lo, hi) around it; BufferError
 * naming the field otherwise. */
static int
check_tensor(const DLTensor *t, ga_device *dev, ga_array *arr, char **first,
             int64_t *lo, int64_t *hi)
{
    switch (t->device.device_type) {
    case kDLCPU:
        /* DLPack has one CPU, device_id 0: another id is a producer's mistake (an
         * uninitialised field, a GPU's index), not a place gpuarr can guess */
        if (t->device.device_id != 0) {
            buffer_error("DLPack device (kDLCPU, %d): a CPU tensor's device_id must be "
                         "0; the producer filled it wrongly (ask it for a host copy "
                         "that says (1, 0))",
                         t->device.device_id);
            return -1;
        }
        *dev = ga_cpu();
        break;
    case kDLCUDAHost:
    case kDLROCMHost:
    case kDLCUDAManaged:
        *dev = ga_cpu();
        break;
    case kDLCUDA:
        if (t->device.device_id < 0) {
            buffer_error("DLPack device_id %d is negative", t->device.device_id);
            return -1;
        }
        dev->kind = GA_DEV_GPU;
        dev->index = t->device.device_id;
        if (t->device.device_id >= ga_num_gpus() || !ga_stream_shares_memory(*dev)) {
            buffer_error("the producer's data is on CUDA device %d, which this "
                         "process cannot use; ask for a host copy "
                         "(from_dlpack(x, device=gpuarr.cpu()))",
                         t->device.device_id);
            return -1;
        }
        break;
    default:
        buffer_error("DLPack device_type %d is not supported; ask for a host copy "
                     "(from_dlpack(x, device=gpuarr.cpu()))",
                     t->device.device_type);
        return -1;
    }
    if (t->ndim < 0 || t->ndim > GA_MAXDIMS) {
        buffer_error("DLPack tensor with ndim %d (gpuarr allows 0 to %d)", t->ndim,
                     GA_MAXDIMS);
        return -1;
    }
    if (t->ndim > 0 && t->shape == NULL) {
        buffer_error("DLPack tensor with ndim %d has a NULL shape", t->ndim);
        return -1;
    }
    ga_dtype dtype;
    if (dtype_from_dl(t->dtype, &dtype) < 0) {
        return -1;
    }
    int itemsize = ga_dtype_itemsize(dtype);
    arr->ndim = t->ndim;
    arr->dtype = dtype;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0) {
            buffer_error("DLPack shape[%d] is negative (%lld)", i,
                         (long long)t->shape[i]);
            return -1;
        }
        arr->shape[i] = t->shape[i];
    }
    int64_t size;
    if (ga_shape_size(arr->ndim, arr->shape, itemsize, &size) != GA_OK) {
        buffer_error("DLPack shape: the element count overflows 64 bits");
        return -1;
    }
    if (t->strides == NULL) {
        ga_contiguous_strides(arr->ndim, arr->shape, itemsize, arr->strides);
    } else {
        for (int i = 0; i < t->ndim; i++) {
            if (__builtin_mul_overflow(t->strides[i], (int64_t)itemsize,
                                       &arr->strides[i])) {
                buffer_error(
                    "DLPack strides[%d] = %lld elements overflows as a byte stride", i,
                    (long long)t->strides[i]);
                return -1;
            }
        }
    }
    /* The span the view covers around its first element, summed without wrapping. */
    *lo = 0;
    *hi = size > 0 ? itemsize : 0;
    for (int i = 0; size > 0 && i < t->ndim; i++) {
        int64_t step;
        if (__builtin_mul_overflow(arr->strides[i], arr->shape[i] - 1, &step) ||
            (step < 0 ? __builtin_add_overflow(*lo, step, lo)
                      : __builtin_add_overflow(*hi, step, hi))) {
            buffer_error("DLPack strides: the extent of the tensor overflows 64 bits");
            return -1;
        }
    }
    if (size == 0) {
        *first = (char *)t->data;
        return 0;
    }
    if (t->data == NULL) {
        buffer_error("DLPack data is NULL for a tensor of %lld elements",
                     (long long)size);
        return -1;
    }
    uintptr_t addr;
    if (t->byte_offset > (uint64_t)INT64_MAX ||
        __builtin_add_overflow((uintptr_t)t->data, (uintptr_t)t->byte_offset, &addr)) {
        buffer_error(
            "DLPack byte_offset %llu puts the data past the end of the address "
            "space",
            (unsigned long long)t->byte_offset);
        return -1;
    }
    uintptr_t low, high;
    if (addr < (uintptr_t)(-*lo)) {
        buffer_error("DLPack strides reach below address 0 from the data pointer");
        return -1;
    }
    low = addr - (uintptr_t)(-*lo);
    if (__builtin_add_overflow(addr, (uintptr_t)*hi, &high) || high < low) {
        buffer_error("DLPack strides reach past the end of the address space");
        return -1;
    }
    /* Host memory must hold whole elements at their alignment (a complex number at its
     * part's): NumPy's arrays and the BLAS/LAPACK gpuarr hands them to assume it, and a
     * float64 at data + 4 is no array NumPy makes. A CUDA tensor may be unaligned: the
     * core stages such operands through aligned scratch (ga_element_aligned). */
    int align = ga_dtype_kind((ga_dtype)arr->dtype) == GA_KIND_COMPLEX ? itemsize / 2 : itemsize;
    if (dev->kind == GA_DEV_CPU && align > 1 && addr % (uintptr_t)align != 0) {
        buffer_error("DLPack data + byte_offset (%llu) is not aligned to %s's %d bytes: "
                     "gpuarr does not import misaligned host memory; have the producer "
                     "copy it first (e.g. numpy.array(x))",
                     (unsigned long long)t->byte_offset, ga_dtype_infos[arr->dtype].name,
                     align);
        return -1;
    }
    *first = (char *)addr;
    return 0;
}

/* Wrap the capsule's tensor as a gpuarr array on `dev` (zero-copy). On success the
 * capsule is renamed "used_..." and the array owns the tensor. */
static PyObject *
wrap_capsule(PyObject *cap)
{
    int versioned;
    void *managed;
    DLTensor *t;
    uint64_t flags = 0;
    if (PyCapsule_IsValid(cap, NAME_VERSIONED)) {
        versioned = 1;
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, NAME_VERSIONED);
        if (m->version.major != DLPACK_MAJOR_VERSION) {
            return buffer_error("DLPack version %u.%u is not supported (gpuarr reads %d.x)",
                                m->version.major, m->version.minor, DLPACK_MAJOR_VERSION);
        }
        managed = m;
        t = &m->dl_tensor;
        flags = m->flags;
    }
    else if (PyCapsule_IsValid(cap, NAME_LEGACY)) {
        versioned = 0;
        DLManagedTensor *m = PyCapsule_GetPointer(cap, NAME_LEGACY);
        managed = m;
        t = &m->dl_tensor;
    }
    else {
        PyErr_SetString(PyExc_TypeError, "__dlpack__ returned something that is not an "
                                         "unused DLPack capsule");
        return NULL;
    }
    ga_device dev;
    ga_array arr;
    memset(&arr, 0, sizeof(arr));
    char *first;
    int64_t lo = 0, hi = 0;
    if (check_tensor(t, &dev, &arr, &first, &lo, &hi) < 0) {
        return NULL;
    }
    import_owner *owner = PyMem_Malloc(sizeof(import_owner));
    if (owner == NULL) {
        return PyErr_NoMemory();
    }
    owner->managed = managed;
    owner->versioned = versioned;
    owner->wait_dev = dev.kind == GA_DEV_GPU ? dev.index : -1;
    int readonly = versioned ? (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0 : 0;
    int st = ga_storage_wrap(dev, first + lo, (size_t)(hi - lo), import_release, owner,
                             readonly, &arr.storage);
    if (st != GA_OK) {
        PyMem_Free(owner);
        return pyga_raise(st);
    }
    arr.offset = -lo;
    /* From here the array owns the tensor: rename first, so the capsule's destructor
     * leaves it alone. */
    if (PyCapsule_SetName(cap, versioned ? NAME_USED_VERSIONED : NAME_USED_LEGACY) < 0) {
        owner->managed = NULL; /* the release below frees only `owner` */
        ga_array_release(&arr);
        return NULL;
    }
    return pyga_wrap(&arr);
}

/* The stream to name in x.__dlpack__(stream=...) when gpuarr takes x in place
 * (python_spec.rst: the consumer's stream): when x says (__dlpack_device__) that it
 * lives on a CUDA device whose memory gpuarr shares, gpuarr's own stream of that
 * device, since all of gpuarr's work with the data is queued there. *out stays NULL
 * (no stream=) for everything else: the host, devices gpuarr cannot use, producers
 * without __dlpack_device__. -1 with an exception only for errors x raises. */
static int
consumer_stream(PyObject *x, PyObject **out)
{
    *out = NULL;
    PyObject *dd = PyObject_CallMethod(x, "__dlpack_device__", NULL);
    if (dd == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return -1;
        }
        PyErr_Clear();
        return 0;
    }
    int dt = 0, di = -1;
    if (!PyTuple_Check(dd) || !PyArg_ParseTuple(dd, "ii", &dt, &di)) {
        /* a malformed answer: the capsule's own device field is checked later */
        PyErr_Clear();
        dt = 0;
    }
    Py_DECREF(dd);
    ga_device dev = {GA_DEV_GPU, di};
    if (dt != kDLCUDA || di < 0 || di >= ga_num_gpus() || !ga_stream_shares_memory(dev)) {
        return 0;
    }
    uintptr_t h;
    int st = ga_stream_handle(dev, &h);
    if (st != GA_OK) {
        pyga_raise(st);
        return -1;
    }
    *out = PyLong_FromUnsignedLongLong((unsigned long long)h);
    return *out != NULL ? 0 : -1;
}

static PyObject *
fn_from_dlpack(PyObject *m, PyObject *args, PyObject *kwds)
{
    (void)m;
    static char *kwlist[] = {"x", "device", "copy", NULL};
    PyObject *x, *devobj = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$OO:from_dlpack", kwlist, &x, &devobj,
                                     &copy)) {
        return NULL;
    }
    int want_copy = -1;
    if (copy != Py_None) {
        want_copy = PyObject_IsTrue(copy);
        if (want_copy < 0) {
            return NULL;
        }
    }
    int have_device = devobj != Py_None;
    ga_device device = {GA_DEV_CPU, 0};
    if (have_device && !pyga_device_converter(devobj, &device)) {
        return NULL;
    }
    if (pyga_check(x)) {
        /* our own array: a view, or an explicit copy */
        ga_array *a = pyga_arr(x);
        ga_device own = ga_array_device(a);
        ga_device target = have_device ? device : own;
        int cross = !ga_device_eq(target, own);
        if (cross && want_copy == 0) {
            PyErr_SetString(PyExc_ValueError, "copy=False, but the array lives on another "
                                              "device: moving it needs a copy");
            return NULL;
        }
        ga_array out;
        if (cross || want_copy == 1) {
            int st = ga_copy_to_device(a, target, &out);
            if (st != GA_OK) {
                return pyga_raise(st);
            }
        }
        else {
            ga_array_view(&out, a);
        }
        return pyga_wrap(&out);
    }
    PyObject *meth = PyObject_GetAttrString(x, "__dlpack__");
    if (meth == NULL) {
        return NULL; /* AttributeError, as the standard asks */
    }
    /* Ask for host memory when the caller wants the CPU, so GPU producers copy. */
    PyObject *dl_dev = Py_None;
    if (have_device && device.kind == GA_DEV_CPU) {
        dl_dev = Py_BuildValue("(ii)", kDLCPU, 0);
        if (dl_dev == NULL) {
            Py_DECREF(meth);
            return NULL;
        }
    }
    else {
        Py_INCREF(dl_dev);
    }
    PyObject *stream = NULL;
    if (dl_dev == Py_None && consumer_stream(x, &stream) < 0) {
        Py_DECREF(dl_dev);
        Py_DECREF(meth);
        return NULL;
    }
    PyObject *kw = Py_BuildValue("{s:(ii),s:O,s:O}", "max_version", DLPACK_MAJOR_VERSION,
                                 DLPACK_MINOR_VERSION, "dl_device", dl_dev, "copy", copy);
    if (kw != NULL && stream != NULL && PyDict_SetItemString(kw, "stream", stream) < 0) {
        Py_CLEAR(kw);
    }
    Py_DECREF(dl_dev);
    PyObject *empty = PyTuple_New(0);
    PyObject *old_kw = stream != NULL ? Py_BuildValue("{s:O}", "stream", stream) : NULL;
    PyObject *cap = NULL;
    if (kw != NULL && empty != NULL && (stream == NULL || old_kw != NULL)) {
        cap = PyObject_Call(meth, empty, kw);
        if (cap == NULL && PyErr_ExceptionMatches(PyExc_TypeError) && !have_device &&
            want_copy < 0) {
            /* an old producer without the 2023.12 keywords (stream= is older) */
            PyErr_Clear();
            cap = PyObject_Call(meth, empty, old_kw);
        }
    }
    Py_XDECREF(kw);
    Py_XDECREF(old_kw);
    Py_XDECREF(stream);
    Py_XDECREF(empty);
    Py_DECREF(meth);
    if (cap == NULL) {
        return NULL;
    }
    int producer_copied = 0;
    if (PyCapsule_IsValid(cap, NAME_VERSIONED)) {
        DLManagedTensorVersioned *mt = PyCapsule_GetPointer(cap, NAME_VERSIONED);
        producer_copied = mt->version.major == DLPACK_MAJOR_VERSION &&
                          (mt->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0;
    }
    PyObject *arr = wrap_capsule(cap);
    Py_DECREF(cap); /* a rejected capsule's destructor runs the producer's deleter */
    if (arr == NULL) {
        return NULL;
    }
    ga_array *a = pyga_arr(arr);
    ga_device got = ga_array_device(a);
    int cross = have_device && !ga_device_eq(device, got);
    if (cross && want_copy == 0) {
        Py_DECREF(arr);
        PyErr_SetString(PyExc_ValueError, "copy=False, but the data lives on another "
                                          "device than the one asked for");
        return NULL;
    }
    if (cross || (want_copy == 1 && !producer_copied)) {
        ga_array out;
        int st = ga_copy_to_device(a, have_device ? device : got, &out);
        Py_DECREF(arr);
        if (st != GA_OK) {
            return pyga_raise(st);
        }
        return pyga_wrap(&out);
    }
    return arr;
}

PyMethodDef pyga_dlpack_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))array_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "Export as a DLPack capsule: zero-copy on the array's own device; dl_device=(1, 0) "
     "copies a GPU array to the host (a counted transfer). On a CUDA GPU, stream= is the "
     "consumer's stream (None: the legacy default stream, 2: per-thread default, -1: "
     "no ordering); it is made to wait for gpuarr's queued work, without a host wait. "
     "Elsewhere stream must be None."},
    {"__dlpack_device__", array_dlpack_device, METH_NOARGS,
     "__dlpack_device__($self, /)\n--\n\n(device_type, device_id): (1, 0) for the CPU, (2, i) "
     "for CUDA GPU i, (12, i) for a simulated or emulated GPU i."},
    {NULL},
};

PyMethodDef pyga_dlpack_functions[] = {
    {"from_dlpack", (PyCFunction)(void (*)(void))fn_from_dlpack,
     METH_VARARGS | METH_KEYWORDS,
     "from_dlpack(x, /, *, device=None, copy=None)\n--\n\nAn array sharing memory with "
     "the DLPack producer x (same device) or, when device= names another device, a copy "
     "there. copy=True always copies, copy=False never (ValueError). Data on a CUDA GPU "
     "is asked for with stream= gpuarr's stream of that GPU."},
    {NULL},
};
