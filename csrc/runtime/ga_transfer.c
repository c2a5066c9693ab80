/* ga_transfer.c: copies between devices (each counted in the ledger, ga_ledger.c). */
#include "ga_transfer.h"

#include <string.h>

#include "ga_backend.h"
#include "ga_error.h"
#include "ga_fault.h"
#include "ga_copy_queue.h"
#include "ga_host_ready.h"
#include "ga_loop.h"
#include "ga_platform.h"
#include "ga_profiler.h"

int
ga_copy_same_device(ga_array *dst, const ga_array *src)
{
    GA_TRY(ga_check_same_device("copy", dst, src));
    ga_loop loop;
    ga_loop_init(&loop, dst);
    GA_TRY(
        ga_loop_add_array(&loop, src)); /* src must broadcast to dst, even if empty */
    if (ga_array_size(dst) == 0) {
        ga_fault_flow(dst, src);
        return GA_OK;
    }
    /* A source that shares bytes with the destination would be overwritten while it is
     * read (x[:-1] into x[1:], x into x.T, and on a GPU the threads race): copy it
     * first. The very same view is a copy onto itself. */
    if (ga_array_overlap(dst, src)) {
        if (ga_array_same_view(dst, src)) {
            return GA_OK;
        }
        ga_array tmp;
        GA_TRY(ga_array_empty(&tmp, ga_array_device(src), (ga_dtype)src->dtype,
                              src->ndim, src->shape));
        int st = ga_copy_same_device(&tmp, src);
        if (st == GA_OK) {
            st = ga_copy_same_device(dst, &tmp);
        }
        ga_array_release(&tmp);
        return st;
    }
    const ga_backend *be;
    GA_TRY(ga_device_backend(ga_array_device(dst), &be));
    if (ga_array_device(dst).kind == GA_DEV_GPU && dst->dtype == src->dtype &&
        dst->ndim == src->ndim && ga_array_is_c_contiguous(dst) &&
        ga_array_is_c_contiguous(src) &&
        memcmp(dst->shape, src->shape, sizeof(int64_t) * (size_t)dst->ndim) == 0) {
        /* the same bytes in the same order on a GPU: the device's own copy
         * (cudaMemcpyAsync: the copy engine's speed, any alignment). The CPU keeps
         * the elementwise copy, which the thread pool splits. */
        size_t nbytes = (size_t)ga_array_size(dst) * (size_t)ga_dtype_itemsize(dst->dtype);
        ga_device_count_work(ga_array_device(dst), GA_WORK_ELEMENTWISE, 1);
        if (ga_describe_on()) {
            int64_t n = ga_array_size(dst);
            ga_prof_describe("copy", dst->dtype, 1, &n, 2 * (int64_t)nbytes);
        }
        GA_TRY(ga_backend_status(be, be->copy_d2d(ga_device_local(ga_array_device(dst)),
                                                  ga_array_data(dst), ga_array_data(src),
                                                  nbytes)));
        ga_fault_flow(dst, src);
        return GA_OK;
    }
    ga_loop_coalesce_for_output(&loop);
    if (be->elementwise == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED, "copy is not supported by the %s backend",
                        be->name);
    }
    ga_device_count_work(ga_array_device(dst), GA_WORK_ELEMENTWISE, 1);
    if (ga_describe_on()) {
        ga_prof_describe_loop("copy", &loop);
    }
    GA_TRY(ga_backend_status(
        be, be->elementwise(ga_device_local(ga_array_device(dst)), GA_OP_COPY, &loop)));
    ga_fault_flow(dst, src);
    return GA_OK;
}

/* out = src itself (a view) when `as_is`, else a new C-contiguous copy on its device. */
static int
view_or_copy(const ga_array *src, int as_is, ga_array *out)
{
    if (as_is) {
        ga_array_view(out, src);
        return GA_OK;
    }
    GA_TRY(ga_array_empty(out, ga_array_device(src), (ga_dtype)src->dtype, src->ndim,
                          src->shape));
    int st = ga_copy_same_device(out, src);
    if (st != GA_OK) {
        ga_array_release(out);
    }
    return st;
}

int
ga_contiguous(const ga_array *src, ga_array *out)
{
    return view_or_copy(src, ga_array_is_c_contiguous(src), out);
}

int
ga_needs_element_staging(const ga_array *src)
{
    return ga_array_device(src).kind != GA_DEV_CPU && !ga_array_element_aligned(src);
}

int
ga_element_aligned(const ga_array *src, ga_array *out)
{
    return view_or_copy(src, !ga_needs_element_staging(src), out);
}

/* Raw copy of nbytes between two contiguous blocks on any two devices, counted. */
static int
raw_copy(ga_device dd, void *dst, ga_device sd, const void *src, size_t nbytes)
{
    /* the callers wait for the host blocks they pass (ga_host_ready.h) */
    const ga_backend *dbe, *sbe;
    GA_TRY(ga_device_backend_nowait(dd, &dbe));
    GA_TRY(ga_device_backend_nowait(sd, &sbe));
    if (nbytes == 0) {
        return GA_OK;
    }
    if (ga_device_eq(dd, sd)) {
        ga_device_count_work(dd, GA_WORK_ELEMENTWISE, 1);
        if (ga_describe_on()) { /* read and written: twice the bytes */
            int64_t n = (int64_t)nbytes;
            ga_prof_describe("copy", GA_UINT8, 1, &n, 2 * n);
        }
        return ga_backend_status(dbe,
                                 dbe->copy_d2d(ga_device_local(dd), dst, src, nbytes));
    }
    /* the profiler's record of the copy, then the modeled clock, before each backend
     * call: the record closes in ga_backend_status and takes what the model did */
    if (sd.kind == GA_DEV_CPU) {
        ga_prof_copy_begin(GA_PROF_H2D, dd, sd, dd, (int64_t)nbytes, 0, 0);
        ga_perf_model_copy(dd, sd, (int64_t)nbytes);
        GA_TRY(ga_backend_status(dbe,
                                 dbe->copy_h2d(ga_device_local(dd), dst, src, nbytes)));
        ga_ledger_add(GA_LEDGER_H2D, nbytes);
        return GA_OK;
    }
    if (dd.kind == GA_DEV_CPU) {
        /* the host waits for the queue and the copy: one record is both */
        ga_prof_copy_begin(GA_PROF_D2H, sd, sd, dd, (int64_t)nbytes, 1, 0);
        ga_perf_model_copy(dd, sd, (int64_t)nbytes);
        int st = ga_backend_status(sbe, sbe->copy_d2h(ga_device_local(sd), dst, src, nbytes));
        if (st != GA_OK) {
            ga_fault_device_error_raised(sd);
            return st;
        }
        ga_ledger_add(GA_LEDGER_D2H, nbytes);
        return GA_OK;
    }
    /* on the destination's queue (CUDA: its stream, after an event of the source's;
     * a simulated GPU: a task on each, and the record spans both) */
    ga_prof_copy_begin(GA_PROF_D2D, dd, sd, dd, (int64_t)nbytes, 0, 0);
    ga_perf_model_copy(dd, sd, (int64_t)nbytes);
    int st = ga_backend_status(dbe, dbe->copy_peer(ga_device_local(dd), dst,
                                                   ga_device_local(sd), src, nbytes));
    if (st != GA_OK) {
        ga_fault_device_error_raised(sd);
        ga_fault_device_error_raised(dd);
        return st;
    }
    ga_ledger_add(GA_LEDGER_D2D, nbytes);
    return GA_OK;
}

/* A host block a copy is about to read: ready first (a non-blocking copy may still
 * be writing it). */
static int
host_source_ready(const ga_array *c)
{
    return ga_array_device(c).kind == GA_DEV_CPU ? ga_host_ready_wait(c->storage, 0)
                                                 : GA_OK;
}

/* After a copy from host block `c` was queued on GPU `dd`: page-locked memory is read
 * by the device after the call returned, so the block stays from the host until an
 * event after the copy (pageable memory was staged before the call returned). */
static int
host_source_in_use(const ga_array *c, ga_device dd)
{
    if (ga_array_device(c).kind != GA_DEV_CPU || dd.kind == GA_DEV_CPU ||
        c->storage->pinned != GA_PINNED_LOCKED) {
        return GA_OK;
    }
    int st = ga_host_ready_track(c->storage, dd, 0);
    return st == GA_OK ? st : ga_synchronize(dd); /* untracked: wait for it now */
}

int
ga_copy_to_device(const ga_array *src, ga_device device, ga_array *out)
{
    ga_array c;
    GA_TRY(ga_contiguous(src, &c));
    int st = host_source_ready(&c);
    if (st == GA_OK) {
        st = ga_array_empty(out, device, (ga_dtype)src->dtype, src->ndim, src->shape);
    }
    if (st == GA_OK) {
        size_t nbytes =
            (size_t)ga_array_size(src) * (size_t)ga_dtype_itemsize(src->dtype);
        st = raw_copy(device, ga_array_data(out), ga_array_device(&c),
                      ga_array_data(&c), nbytes);
        if (st == GA_OK && nbytes > 0) {
            st = host_source_in_use(&c, device);
        }
        if (st == GA_OK && device.kind == GA_DEV_CPU) {
            /* a read by the host: after its wait, a failed source is no data */
            st = ga_fault_check(&c);
        }
        else if (st == GA_OK) {
            ga_fault_flow(out, &c);
        }
        if (st != GA_OK) {
            ga_array_release(out);
        }
    }
    ga_array_release(&c);
    return st;
}

static void
free_pinned(void *ptr)
{
    const ga_backend *be = ga_device_gpu_backend();
    if (be != NULL && be->host_free_pinned != NULL) {
        be->host_free_pinned(ptr);
    }
}

int
ga_array_empty_pinned(ga_array *a, ga_dtype dtype, int ndim, const int64_t *shape)
{
    const ga_backend *be = ga_device_gpu_backend();
    if (be == NULL || be->host_alloc_pinned == NULL || be->host_free_pinned == NULL) {
        GA_TRY(ga_array_empty(a, ga_cpu(), dtype, ndim, shape));
        a->storage->pinned = GA_PINNED_FLAG;
        return GA_OK;
    }
    int64_t size;
    GA_TRY(ga_shape_size(ndim, shape, ga_dtype_itemsize(dtype), &size));
    size_t nbytes = (size_t)size * (size_t)ga_dtype_itemsize(dtype);
    void *ptr = NULL;
    GA_TRY(ga_backend_status(be, be->host_alloc_pinned(nbytes, &ptr)));
    ga_storage *s;
    int st = ga_storage_wrap(ga_cpu(), ptr, nbytes, free_pinned, ptr, 0, &s);
    if (st != GA_OK) {
        be->host_free_pinned(ptr);
        return st;
    }
    s->pinned = GA_PINNED_LOCKED;
    memset(a, 0, sizeof(*a));
    a->storage = s;
    a->ndim = ndim;
    a->dtype = dtype;
    memcpy(a->shape, shape, sizeof(int64_t) * (size_t)ndim);
    ga_contiguous_strides(ndim, shape, ga_dtype_itemsize(dtype), a->strides);
    return GA_OK;
}

/* Queue the copy of GPU array src (of dst's dtype and shape) into the C-contiguous
 * host array dst, with no wait: dst's block is kept from the host until an event
 * after the copy (ga_host_ready.h). */
static int
queue_to_host(const ga_backend *be, ga_array *dst, const ga_array *src)
{
    ga_device sd = ga_array_device(src);
    size_t nbytes = (size_t)ga_array_size(dst) * (size_t)ga_dtype_itemsize(dst->dtype);
    if (nbytes == 0) {
        return GA_OK;
    }
    ga_array c;
    GA_TRY(ga_contiguous(src, &c));
    /* on the copy queue where the backend has one (ABI 12), else the compute queue */
    ga_prof_copy_begin(GA_PROF_D2H, sd, sd, ga_cpu(), (int64_t)nbytes, 0,
                       be->copies_event_record != NULL);
    ga_perf_model_copy_queued(sd, (int64_t)nbytes);
    int st = ga_backend_status(be, be->copy_d2h_async(ga_device_local(sd), ga_array_data(dst),
                                                      ga_array_data(&c), nbytes));
    if (st == GA_OK) {
        ga_ledger_add(GA_LEDGER_D2H_QUEUED, nbytes);
        if (be->wait_copies != NULL && be->copies_event_record != NULL) {
            /* on the copy queue: c's block is read after this returns */
            ga_copy_queue_note_read(c.storage);
        }
        if (ga_host_ready_track(dst->storage, sd, 1) != GA_OK) {
            st = ga_synchronize(sd); /* queued and untracked: wait for it now */
        }
    }
    ga_array_release(&c);
    return st;
}

int
ga_copy_to_host_nonblocking(const ga_array *src, ga_array *out)
{
    ga_device sd = ga_array_device(src);
    const ga_backend *be;
    GA_TRY(ga_device_backend_nowait(sd, &be));
    if (sd.kind == GA_DEV_CPU || be->copy_d2h_async == NULL ||
        src->storage->faults != NULL) {
        /* nothing to overlap, no queued copy to the host here, or a source whose
         * failure the read must raise now: the copy that waits, into pinned memory
         * all the same (the caller asked for a block it can copy back from) */
        ga_array moved;
        if (sd.kind == GA_DEV_CPU) {
            ga_array_view(&moved, src);
        } else {
            GA_TRY(ga_copy_to_device(src, ga_cpu(), &moved));
        }
        int st = ga_array_empty_pinned(out, (ga_dtype)src->dtype, src->ndim, src->shape);
        if (st == GA_OK) {
            st = ga_copy_same_device(out, &moved);
            if (st != GA_OK) {
                ga_array_release(out);
            }
        }
        ga_array_release(&moved);
        return st;
    }
    int st = ga_array_empty_pinned(out, (ga_dtype)src->dtype, src->ndim, src->shape);
    if (st == GA_OK) {
        st = queue_to_host(be, out, src);
        if (st != GA_OK) {
            ga_array_release(out);
        }
    }
    return st;
}

int
ga_copy_into_nonblocking(ga_array *dst, const ga_array *src)
{
    ga_device sd = ga_array_device(src);
    const ga_backend *be;
    GA_TRY(ga_device_backend_nowait(sd, &be));
    if (ga_array_device(dst).kind != GA_DEV_CPU || sd.kind == GA_DEV_CPU ||
        be->copy_d2h_async == NULL || src->storage->faults != NULL ||
        dst->dtype != src->dtype || dst->ndim != src->ndim ||
        memcmp(dst->shape, src->shape, sizeof(int64_t) * (size_t)dst->ndim) != 0 ||
        !ga_array_is_c_contiguous(dst) || ga_array_size(dst) == 0) {
        return ga_copy_into(dst, src); /* a cast, a broadcast or a layout: it waits */
    }
    ga_array_note_write(dst);
    GA_TRY(ga_host_ready_wait(dst->storage, 1)); /* an earlier copy may still write it */
    return queue_to_host(be, dst, src);
}

int
ga_copy_into(ga_array *dst, const ga_array *src_in)
{
    /* Leading length-1 axes beyond dst's dimensions are dropped, as NumPy's copyto and
     * setitem allow (a (1, 3) source into a (3,) target). */
    ga_array_note_write(dst);
    ga_array src_view = *src_in;
    const ga_array *src = &src_view;
    while (src_view.ndim > dst->ndim && src_view.shape[0] == 1) {
        memmove(src_view.shape, src_view.shape + 1,
                sizeof(int64_t) * (size_t)(src_view.ndim - 1));
        memmove(src_view.strides, src_view.strides + 1,
                sizeof(int64_t) * (size_t)(src_view.ndim - 1));
        src_view.ndim--;
    }
    if (ga_device_eq(ga_array_device(dst), ga_array_device(src))) {
        return ga_copy_same_device(dst, src);
    }
    /* Check shapes before moving anything. */
    int nd;
    int64_t shape[GA_MAXDIMS];
    GA_TRY(
        ga_broadcast_shapes(dst->ndim, dst->shape, src->ndim, src->shape, &nd, shape));
    if (nd != dst->ndim ||
        memcmp(shape, dst->shape, sizeof(int64_t) * (size_t)nd) != 0) {
        char b1[256], b2[256];
        return ga_error(GA_ERR_SHAPE,
                        "cannot copy an array of shape %s into one of shape %s",
                        ga_shape_str(src->ndim, src->shape, b1, sizeof(b1)),
                        ga_shape_str(dst->ndim, dst->shape, b2, sizeof(b2)));
    }
    /* Move src as it is (contiguous) to dst's device, then cast/broadcast there. */
    ga_array moved;
    GA_TRY(ga_copy_to_device(src, ga_array_device(dst), &moved));
    int st = ga_copy_same_device(dst, &moved);
    ga_array_release(&moved);
    return st;
}

int
ga_read_to_host(const ga_array *src, void *dst, size_t nbytes)
{
    size_t need = (size_t)ga_array_size(src) * (size_t)ga_dtype_itemsize(src->dtype);
    if (nbytes != need) {
        return ga_error(GA_ERR_RUNTIME, "internal: host buffer of %zu bytes for %zu",
                        nbytes, need);
    }
    ga_array c;
    GA_TRY(ga_contiguous(src, &c));
    int st = host_source_ready(&c);
    if (st == GA_OK) {
        st = raw_copy(ga_cpu(), dst, ga_array_device(&c), ga_array_data(&c), nbytes);
    }
    if (st == GA_OK) {
        st = ga_fault_check(&c); /* after the wait: a failed source is no data */
    }
    ga_array_release(&c);
    return st;
}

int
ga_synchronize(ga_device device)
{
    const ga_backend *be;
    GA_TRY(ga_device_backend(device, &be));
    if (device.kind == GA_DEV_CPU) {
        return GA_OK;
    }
    ga_ledger_add(GA_LEDGER_SYNC, 0);
    ga_prof_wait_begin(device, "synchronize()", 0);
    ga_perf_model_host_wait(device);
    int st = ga_backend_status(be, be->synchronize(ga_device_local(device)));
    if (st != GA_OK) {
        ga_fault_device_error_raised(device);
    } else if (ga_host_pending_blocks > 0) {
        ga_host_ready_settle(device); /* its copies to the host are done */
    }
    return st;
}

int
ga_synchronize_all(void)
{
    int n = ga_num_gpus();
    for (int i = 0; i < n; i++) {
        ga_device d = {GA_DEV_GPU, i};
        GA_TRY(ga_synchronize(d));
    }
    return GA_OK;
}
