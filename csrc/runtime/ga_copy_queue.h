/* ga_copy_queue.h: device blocks that a copy on the device's copy queue still reads.
 *
 * A non-blocking copy to the host (x.to(cpu(), non_blocking=True)) runs on the
 * device's copy queue (backend ABI 12: a simulated GPU's copy worker, a CUDA device's
 * second stream), so the compute queue's later work runs beside it. The copy starts
 * after the work queued before it on the compute queue, so it reads what that work
 * wrote; what the compute queue must not do is write the source block again, or hand
 * it to a new array, before the copy has read it. So the block carries a ticket (its
 * copy's number on the device's copy queue, ga_storage.copy_ticket), and before a
 * write into it is queued (ga_array_note_write) or it is freed (ga_storage_decref),
 * the compute queue is made to wait for the copies queued so far (wait_copies: on
 * the device, no host wait). One such wait covers every ticket issued before it, so a
 * loop that copies one result a step and frees it the next queues at most one wait a
 * step, and none for a block whose copy an earlier wait already covered.
 *
 * Threads: tickets change under the GIL, as storage reference counts do; the
 * per-device counters are atomic all the same (a race costs an extra wait, never a
 * missing one: `fenced` only grows to a value that was queued before the wait).
 */
#ifndef GA_COPY_QUEUE_H
#define GA_COPY_QUEUE_H

/* ga_storage (ga_array.h) is named, not included: ga_array.h includes this header
 * for ga_array_note_write, which fences when the block carries a ticket. */
struct ga_storage;

#ifdef __cplusplus
extern "C" {
#endif

/* A copy that reads block `s` was just queued on its device's copy queue. */
void ga_copy_queue_note_read(struct ga_storage *s);
/* `s` (whose copy_ticket is not 0: the callers test it first, inline) is about to be
 * written by queued work or freed: order the device's compute queue after the copies
 * that read it. `host`: wait on the host instead (memory that goes back to another
 * owner, whose own queues ours cannot order). */
void ga_copy_queue_fence_slow(struct ga_storage *s, int host);

#ifdef __cplusplus
}
#endif

#endif
