/* ga_sim.h: what the simulated GPUs' queues (ga_backend_sim.c) tell beyond the backend
 * table. */
#ifndef GA_SIM_H
#define GA_SIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Operations queued on simulated gpu(dev) and not finished yet (0 for a device that
 * has queued nothing). For tests of the asynchrony: non-zero right after queuing a
 * large operation, 0 after synchronize(). */
int64_t ga_sim_pending(int dev);

/* Tests only: with hold = 1, queue a gate on simulated gpu(dev) that keeps its worker
 * (with `copies`, the worker of its copy queue) waiting: work queued after it stays
 * pending until a call with hold = 0 opens it. Synchronizing a held device waits
 * forever: open it first. */
int ga_sim_hold(int dev, int copies, int hold);

/* The profiler's device times of one operation on a simulated GPU (ga_profiler.c): the
 * worker writes when it began the first task queued for the operation and when it
 * finished the last (ga_monotonic_ns, with relaxed atomic stores); 0 while none has
 * run. A wait for the queue (wait_idle) orders the writes before the reader. */
typedef struct {
    int64_t start_ns, end_ns;
} ga_sim_stamp;

/* Every task this thread queues from now on, on any simulated GPU, carries `s` (NULL:
 * none), so its worker stamps it. The profiler's device times cost two clock reads in
 * the worker, where two timing events per operation cost two more tasks each (issue
 * 25: at most 1 us per operation with a profile on). `s` must outlive those tasks. */
void ga_sim_stamp_tasks(ga_sim_stamp *s);

#ifdef __cplusplus
}
#endif

#endif
