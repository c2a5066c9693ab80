/* ga_host_ready.c: host blocks that queued device work still reads or writes
 * (ga_host_ready.h). */
#include "ga_host_ready.h"

#include <stdlib.h>

#include "ga_device.h"
#include "ga_error.h"
#include "ga_event.h"
#include "ga_ledger.h"

struct ga_host_pending {
    ga_event *ev;
    ga_device dev;       /* the device the copy is on (its copy queue if `writes`) */
    int writes;          /* the copy writes the block (else it reads it) */
    ga_storage *storage; /* NULL once settled */
    int refs;            /* the list's (while storage != NULL) and each waiter's */
    struct ga_host_pending *prev, *next;
};

int64_t ga_host_pending_blocks;
static struct ga_host_pending *head;

static void
put(struct ga_host_pending *e)
{
    if (--e->refs == 0) {
        ga_event_free(e->ev);
        free(e);
    }
}

/* Out of the list and off its storage (the copy is done, or the block is going),
 * dropping the list's reference; the caller holds one of its own. */
static void
unlink_entry(struct ga_host_pending *e)
{
    if (e->storage == NULL) {
        return; /* another thread settled it while this one waited */
    }
    e->storage->pending = NULL;
    e->storage = NULL;
    if (e->prev != NULL) {
        e->prev->next = e->next;
    } else {
        head = e->next;
    }
    if (e->next != NULL) {
        e->next->prev = e->prev;
    }
    ga_host_pending_blocks--;
    e->refs--;
}

/* Wait for e's event and settle it once done. `counted`: one wait in the ledger
 * whether or not the copy was done (ga_host_ready.h), modeled and named in a profile
 * when it was not. A failed wait (a device fault) leaves e pending, unless `always`:
 * every later access then fails the same way, so the data never reads as good. */
static int
wait_entry(struct ga_host_pending *e, int counted, int always)
{
    e->refs++; /* ours: the wait lets the GIL go, and another thread may settle e */
    int done = 0;
    int st = ga_event_query(e->ev, &done);
    if (st == GA_OK && !done) {
        st = counted ? ga_event_wait_as(e->ev, "read of a non-blocking copy")
                     : ga_event_wait_uncounted(e->ev);
    } else if (st == GA_OK && counted) {
        ga_count_sync();
    }
    if (st == GA_OK || always) {
        unlink_entry(e);
    }
    put(e);
    return st;
}

/* ga_device_backend's wait before CPU work (ga_devices_set_cpu_fence) */
static int
cpu_fence(void)
{
    return ga_host_ready_fence();
}

int
ga_host_ready_track(ga_storage *s, ga_device dev, int writes)
{
    struct ga_host_pending *old = s->pending;
    if (old != NULL && (old->writes || writes || !ga_device_eq(old->dev, dev))) {
        /* one event per block: wait for the earlier copy first, unless both only
         * read the block on one in-order queue (the new event comes after the old) */
        GA_TRY(ga_host_ready_wait(s, 1));
        old = NULL;
    }
    struct ga_host_pending *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        return ga_error(GA_ERR_NOMEM, "out of host memory for a queued copy's event");
    }
    /* a copy into a host block is a copy to the host: on dev's copy queue */
    int st = writes ? ga_event_record_copies(dev, &e->ev) : ga_event_record(dev, &e->ev);
    if (st != GA_OK) {
        free(e);
        return st;
    }
    if (old != NULL) { /* superseded: a thread waiting on it keeps it alive */
        old->refs++;
        unlink_entry(old);
        put(old);
    }
    e->dev = dev;
    e->writes = writes;
    e->storage = s;
    e->refs = 1;
    e->next = head;
    if (head != NULL) {
        head->prev = e;
    }
    head = e;
    s->pending = e;
    static int fence_set; /* under the GIL, as every change here */
    if (!fence_set) {
        ga_devices_set_cpu_fence(cpu_fence); /* before the first pending block */
        fence_set = 1;
    }
    ga_host_pending_blocks++;
    return GA_OK;
}

int
ga_host_ready_wait(ga_storage *s, int for_write)
{
    struct ga_host_pending *e = s->pending;
    if (e == NULL || !(for_write || e->writes)) {
        return GA_OK; /* a queued copy that reads the block does not stop a read */
    }
    return wait_entry(e, 1, 0); /* a point where the host meets the device's queue */
}

int
ga_host_ready_fence_slow(void)
{
    int counted = 1; /* one wait for the fence, however many blocks it settles */
    while (head != NULL) {
        GA_TRY(wait_entry(head, counted, 0));
        counted = 0;
    }
    return GA_OK;
}

void
ga_host_ready_settle(ga_device dev)
{
    for (struct ga_host_pending *e = head, *next; e != NULL; e = next) {
        next = e->next;
        if (ga_device_eq(e->dev, dev)) {
            e->refs++;
            unlink_entry(e); /* its copy is done: the caller waited for dev */
            put(e);
        }
    }
}

void
ga_host_ready_release(ga_storage *s)
{
    if (s->pending != NULL) {
        /* a faulted device's copy will not run: the block goes all the same */
        (void)wait_entry(s->pending, 0, 1);
    }
}
