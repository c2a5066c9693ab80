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
 * waiting (work queued after it stays pending) until a call with hold = 0 opens it.
 * Synchronizing a held device waits forever: open it first. */
int ga_sim_hold(int dev, int hold);

#ifdef __cplusplus
}
#endif

#endif
