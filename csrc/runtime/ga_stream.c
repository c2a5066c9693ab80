/* ga_stream.c: gpuarr's device streams as other CUDA libraries see them. */
#include "ga_stream.h"

#include "ga_backend.h"
#include "ga_error.h"

/* The backend of `d` when its memory may be shared, else a status naming why not. */
static int
sharing_backend(ga_device d, const ga_backend **out)
{
    GA_TRY(ga_device_backend_nowait(d, out));
    if (!ga_stream_shares_memory(d)) {
        char dev[32];
        return ga_error(GA_ERR_UNSUPPORTED, "%s has no CUDA stream to share",
                        ga_device_str(d, dev, sizeof(dev)));
    }
    return GA_OK;
}

int
ga_stream_shares_memory(ga_device d)
{
    const ga_backend *be;
    /* a device that does not exist shares nothing; the caller reports it later */
    if (d.kind != GA_DEV_GPU || ga_device_backend_nowait(d, &be) != GA_OK) {
        return 0;
    }
    return be->shares_memory != NULL && be->stream_handle != NULL &&
           be->order_stream != NULL && be->device_wait != NULL && be->shares_memory();
}

int
ga_stream_handle(ga_device d, uintptr_t *out)
{
    const ga_backend *be;
    GA_TRY(sharing_backend(d, &be));
    return ga_backend_status(be, be->stream_handle(ga_device_local(d), out));
}

int
ga_stream_order_foreign(ga_device d, uintptr_t stream)
{
    const ga_backend *be;
    GA_TRY(sharing_backend(d, &be));
    return ga_backend_status(be, be->order_stream(ga_device_local(d), stream));
}

int
ga_stream_order_after(ga_device d, uintptr_t stream)
{
    const ga_backend *be;
    GA_TRY(sharing_backend(d, &be));
    if (be->order_after == NULL) {
        return ga_backend_status(be, be->device_wait(ga_device_local(d)));
    }
    return ga_backend_status(be, be->order_after(ga_device_local(d), stream));
}

int
ga_stream_device_wait(ga_device d)
{
    const ga_backend *be;
    GA_TRY(sharing_backend(d, &be));
    return ga_backend_status(be, be->device_wait(ga_device_local(d)));
}
