/* ga_fault.h: failures of queued work belong to their results.
 *
 * An operation that can fail on a device after it was queued (today: a gather or
 * scatter whose index array is on the device, which only the kernel reads) gets an
 * origin: a record that the backend fills with the outcome once it reaches the host
 * (ga_fault_record in ga_backend.h), the operation's name, the Python line that
 * queued it (from the binding's hook) and the queuing thread. The storage the
 * operation writes then depends on the origin, and every operation that computes
 * from that storage passes the dependency on to the storage it writes
 * (ga_fault_flow): elementwise operations, reductions, scans, matmul, copies to
 * other devices, sorts, FFTs, factorisations, gathers and scatters; views share their
 * storage and so its dependencies.
 *
 * A host read of an array (a copy to the host: numpy(), item(), printing, tolist,
 * save, DLPack to the host) waits for the device anyway; after that wait it settles
 * the array's dependencies (ga_fault_check): an origin whose record says FAILED
 * makes the read fail with the origin's own status and message, naming the operation
 * and the line that queued it. So a failed result never reads as data, and a read of
 * an unrelated array never raises it. A storage once failed stays failed.
 *
 * Every failure is also kept in a registry until it has been raised: synchronize()
 * raises those of the calling thread's work (ga_fault_report_thread), and the ones
 * never raised are reported at interpreter exit (ga_fault_report_exit).
 *
 * Cost: an array that depends on nothing fallible has faults == NULL, and every
 * check is one pointer test; no host wait is added on the success path (the records
 * come back with the waits that exist: docs/DESIGN.md, "Failed queued work").
 *
 * Threads: origins, sets and storages are changed under the GIL, as storage
 * reference counts are; the backends touch only the records (atomic state), and the
 * registry has a lock of its own.
 */
#ifndef GA_FAULT_H
#define GA_FAULT_H

#include <stddef.h>

#include "ga_array.h"

struct ga_fault_record;
typedef struct ga_fault ga_fault;

#ifdef __cplusplus
extern "C" {
#endif

/* The binding's hook: "file.py:12" of the user's code that is running, into buf. Set
 * once at import; it also starts watching every backend status for a CUDA error
 * (ga_device_observe_status), which the exit report needs from then on. */
void ga_fault_set_where_hook(void (*where)(char *buf, size_t n));

/* GPUARR_SYNC_CHECKS=1 (read once): a fallible operation waits for its outcome and
 * fails at once, as on the CPU (for debugging: a host wait per operation). */
int ga_fault_sync_checks(void);

/* The caller's terms for index errors (what NULL: none). While set on this thread,
 * an origin made here is named `what` instead of the operation, and reports an
 * out-of-range index as "<item> <i> is out of range for <n> <items>" instead of the
 * gather's "index <i> is out of bounds for axis with size <n>", a negative index
 * counted back by <n> (so a caller that moved it below -n to make it fail gets its
 * own value back). For a library function over a gather (cross_entropy's target
 * classes): its failure, raised later at some read, speaks of what the user passed.
 * The strings are copied. */
void ga_fault_set_index_terms(const char *what, const char *item, const char *items);

/* --- origins (ga_index.c) ------------------------------------------------------ */

/* A new origin for an operation named `what` about to be queued on `dev`. */
int ga_fault_begin(ga_device dev, const char *what, ga_fault **out);
/* Its record, for the backend. */
struct ga_fault_record *ga_fault_record_of(ga_fault *f);
/* The operation was queued and writes the storage `s`: s's contents depend on f.
 * Takes over the caller's reference. */
void ga_fault_queued(ga_fault *f, ga_storage *s);
/* The operation was queued and the caller waited for its device (sync checks): its
 * error, raised now (the results are not marked), or GA_OK. Takes the reference. */
int ga_fault_settled_now(ga_fault *f);
/* The operation could not be queued (the backend kept no record): forget f. */
void ga_fault_cancel(ga_fault *f);

/* --- dependencies -------------------------------------------------------------- */

void ga_fault_flow_slow(ga_storage *out, const ga_storage *in);
/* The storage `out` writes now depends on what `in`'s does (a no-op when in depends
 * on nothing fallible, or is out's own storage). Call after the operation is
 * queued. */
static inline void
ga_fault_flow(const ga_array *out, const ga_array *in)
{
    if (in->storage->faults != NULL && in->storage != out->storage) {
        ga_fault_flow_slow(out->storage, in->storage);
    }
}
/* The same, for a storage the caller holds no array of (the target of a gather or
 * scatter). */
static inline void
ga_fault_flow_into(ga_storage *out, const ga_array *in)
{
    if (in->storage->faults != NULL && in->storage != out) {
        ga_fault_flow_slow(out, in->storage);
    }
}
/* Release a storage's dependencies (ga_storage_decref). */
void ga_faultset_release(struct ga_faultset *s);

/* --- checks -------------------------------------------------------------------- */

int ga_fault_check_slow(const ga_array *a);
/* After a host wait for `a`'s device: GA_OK, or the failure `a` depends on (its
 * original status; message naming the operation and where it was queued). When an
 * outcome has not reached the host yet (the failed work ran on another device), it
 * is fetched, with a wait for that device only if no event has brought it. */
static inline int
ga_fault_check(const ga_array *a)
{
    return a->storage->faults == NULL ? 0 : ga_fault_check_slow(a);
}

/* The failures of work the calling thread queued on `dev` (every GPU when `all`),
 * after the caller waited for it: GA_OK, or the first one's status with a message
 * that lists the others. Each is reported once. */
int ga_fault_report_thread(int all, ga_device dev);

/* `dev` holds arrays (ga_storage_new): the exit report waits for it. */
void ga_fault_device_used(ga_device dev);
/* A wait on `dev` returned `st` to the user (a device fault, not an operation's). */
void ga_fault_device_error_raised(ga_device dev);

/* A backend returned GA_ERR_CUDA (seen through ga_backend_status's observers): a CUDA
 * fault is sticky, every later call returns it, so one that was returned once need not
 * be reported at exit. */
void ga_fault_cuda_error_seen(void);

/* At exit: wait for every device with work whose outcome is unknown, then write the
 * failures never raised, one a line, into buf (NUL-terminated, truncated to n).
 * Returns how many there were. */
int ga_fault_report_exit(char *buf, size_t n);

/* Failures found and not yet raised, with no wait (tests). */
int ga_fault_unreported(void);
/* The same failures, one a line into buf, each now counted as raised (tests, and
 * the end of ga_fault_report_exit). Returns how many. */
int ga_fault_take_unreported(char *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif
