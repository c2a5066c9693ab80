/* ga_host_ready.h: host blocks that queued device work still reads or writes.
 *
 * x.to(cpu(), non_blocking=True) returns while the copy into its new host block is
 * queued on x's device (ga_backend.copy_d2h_async); a copy from page-locked host
 * memory to a GPU (ga_storage.pinned == GA_PINNED_LOCKED) reads its source after the
 * call returned. Until an event recorded after such a copy completes, the host may
 * not read the block the copy writes, nor write either block, and neither may go
 * back to the allocator. The storage carries that event (ga_storage.pending), and:
 *
 *   - every operation computed on the CPU first waits for every pending block
 *     (ga_device_backend of the CPU calls ga_host_ready_fence, which this file
 *     registers with the device registry at its first block). At that point the
 *     CPU's operations hold no arrays, only the device, so the wait is for all
 *     pending blocks, not the operands; with none pending it is a pointer load and
 *     one counter test;
 *   - a host access to one block outside the operations (the buffer protocol,
 *     DLPack export, data_ptr, a copy to a device or to a host buffer) waits for
 *     that block (ga_host_ready_wait);
 *   - the last reference to a block waits for it before the memory goes back
 *     (ga_host_ready_release, from ga_storage_decref).
 *
 * Each such access is a point where the host meets the device's queue, counted in
 * the transfer ledger as a wait (syncs) whether or not the copy had finished by
 * then, as synchronize() counts one on an idle device: the count shows where a
 * program synchronizes, the same on every run, not how lucky its timing was. A wait
 * for the device itself (synchronize) settles that device's blocks without a count.
 *
 * Threads: entries change under the GIL, as storage reference counts do. A wait
 * lets the GIL go inside the backend (its wait hooks), so an entry is reference-
 * counted: a thread waiting on it keeps it alive while another settles it.
 */
#ifndef GA_HOST_READY_H
#define GA_HOST_READY_H

#include <stdint.h>

#include "ga_array.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How many host blocks have a queued copy (read with no lock: a hint that is exact
 * under the GIL, which every change holds). */
extern int64_t ga_host_pending_blocks;

/* A copy that writes (`writes`: a copy to the host, on dev's copy queue where it has
 * one) or reads host block `s` was just queued on `dev`: record an event after it
 * and keep the block from the host until it completes. On
 * failure the copy is still queued: the caller waits for `dev` instead. */
int ga_host_ready_track(ga_storage *s, ga_device dev, int writes);
/* Wait (counted) until `s` may be read (`for_write` = 0: a queued copy that only
 * reads it does not stop that) or written and handed out (`for_write` = 1). */
int ga_host_ready_wait(ga_storage *s, int for_write);
/* Wait (counted) until every pending block is ready: CPU work is about to run. */
int ga_host_ready_fence_slow(void);
static inline int
ga_host_ready_fence(void)
{
    return ga_host_pending_blocks == 0 ? 0 : ga_host_ready_fence_slow();
}
/* The caller waited for everything queued on `dev`: its blocks are ready. */
void ga_host_ready_settle(ga_device dev);
/* `s` is being freed: wait (not counted: nobody reads it) and forget its entry. */
void ga_host_ready_release(ga_storage *s);

#ifdef __cplusplus
}
#endif

#endif
