/* ga_sim.h: the simulated GPUs' own entries (ga_backend_sim.c) behind their table's
 * ABI 15 entries (the core reaches them only through the table). */
#ifndef GA_SIM_H
#define GA_SIM_H

#include <stdint.h>

#include "ga_backend.h" /* ga_op_stamp */

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

/* The profiler's stamps (ga_op_stamp, ga_backend.h): every task this thread queues
 * from now on, on any simulated GPU, carries `s` (NULL: none); the table's
 * stamp_tasks. */
void ga_sim_stamp_tasks(ga_op_stamp *s);

#ifdef __cplusplus
}
#endif

#endif
