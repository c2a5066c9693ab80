/* ga_copy_queue.c: device blocks that a copy on the device's copy queue still reads
 * (ga_copy_queue.h). */
#include "ga_copy_queue.h"

#include "ga_array.h" /* ga_storage */
#include "ga_backend.h"
#include "ga_device.h"
#include "ga_error.h" /* GA_OK */

/* Per GPU: tickets issued, and the last ticket a wait_copies covers. */
static uint64_t issued[GA_MAX_DEVICES], fenced[GA_MAX_DEVICES];

void
ga_copy_queue_note_read(ga_storage *s)
{
    int i = s->device.index;
    s->copy_ticket = __atomic_add_fetch(&issued[i], 1, __ATOMIC_ACQ_REL);
}

void
ga_copy_queue_fence_slow(ga_storage *s, int host)
{
    int i = s->device.index;
    uint64_t ticket = s->copy_ticket;
    s->copy_ticket = 0;
    if (!host && ticket <= __atomic_load_n(&fenced[i], __ATOMIC_ACQUIRE)) {
        return; /* an earlier wait_copies came after its copy */
    }
    const ga_backend *be;
    if (ga_device_backend_nowait(s->device, &be) != GA_OK) {
        return; /* the device existed when the copy was queued: cannot happen */
    }
    uint64_t upto = __atomic_load_n(&issued[i], __ATOMIC_ACQUIRE);
    int local = ga_device_local(s->device);
    if (!host && be->wait_copies != NULL && be->wait_copies(local) == GA_OK) {
        uint64_t old = __atomic_load_n(&fenced[i], __ATOMIC_ACQUIRE);
        while (old < upto && !__atomic_compare_exchange_n(&fenced[i], &old, upto, 0,
                                                          __ATOMIC_ACQ_REL,
                                                          __ATOMIC_ACQUIRE)) {
        }
        return;
    }
    /* On the host: the whole device, copy queue included. A failure here (a device
     * that faulted, or no host memory for a simulated GPU's task) is the device's:
     * the data is lost either way, and the device's next wait reports it. */
    (void)be->synchronize(local);
}
