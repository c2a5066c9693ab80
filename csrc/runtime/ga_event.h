/* ga_event.h: timing events (gpuarr.Event), one model for every device kind.
 *
 * An event marks a point in a device's queue: recorded, it completes when the device
 * has done everything queued before it, and its timestamp is taken then, by whoever
 * runs the queue: the CUDA runtime (cudaEventRecord on the device's stream), a
 * simulated GPU's worker when it reaches the event, or the host at once on the CPU
 * (whose work is done when the call returns). Two events of one device give the
 * measured time between them. docs/DESIGN.md, "Events".
 */
#ifndef GA_EVENT_H
#define GA_EVENT_H

#include <stdint.h>

#include "ga_device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ga_event ga_event;

/* A new event recorded now at the end of `d`'s queue (GA_ERR_DEVICE if `d` does not
 * exist). Free it with ga_event_free (also while it is still pending). */
int ga_event_record(ga_device d, ga_event **out);
/* The same at the end of `d`'s copy queue (ga_copy_queue.h), where its backend has
 * one, else of its queue. */
int ga_event_record_copies(ga_device d, ga_event **out);
/* *done = 1 when the work before the event has finished; never waits. */
int ga_event_query(ga_event *ev, int *done);
/* Wait on the host until the event has completed (a sync in the transfer ledger for
 * a GPU). */
int ga_event_synchronize(ga_event *ev);
/* The device the event was recorded on. */
ga_device ga_event_device(const ga_event *ev);
/* The same wait, named `what` in a profile (a static string). */
int ga_event_wait_as(ga_event *ev, const char *what);
/* Called at the start of each such counted wait with its device and `what` (the
 * profiler's ga_prof_wait_begin, set when it first starts; NULL: none). */
typedef void (*ga_event_wait_hook_fn)(ga_device d, const char *what, int64_t bytes);
void ga_event_set_wait_hook(ga_event_wait_hook_fn hook);
/* The same wait, not counted in the ledger (the profiler's own waits). */
int ga_event_wait_uncounted(ga_event *ev);
/* Milliseconds from `start` to `end`, measured by the device's own clock. Both must
 * be of one device and completed (GA_ERR_VALUE saying which and how to fix it). */
int ga_event_elapsed_ms(ga_event *start, ga_event *end, double *ms);
/* Milliseconds from `start` to `end` on their device's modeled clock (ga_perf_model.h),
 * known from the record on (no wait); GA_ERR_VALUE for two devices or a device
 * without a model. */
int ga_event_elapsed_modeled_ms(ga_event *start, ga_event *end, double *ms);
/* A completed event's time on the host's monotonic clock (ga_monotonic_ns), where
 * the device stamps with that clock (CPU, simulated, emulated); GA_ERR_UNSUPPORTED
 * for a GPU's own clock. */
int ga_event_host_time_ns(ga_event *ev, int64_t *ns);
void ga_event_free(ga_event *ev);

#ifdef __cplusplus
}
#endif

#endif
