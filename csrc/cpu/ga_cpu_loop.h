/* ga_cpu_loop.h: running a 1-d inner loop over an n-d ga_loop on the CPU, and the
 * small thread pool that splits large loops between cores.
 *
 * An inner loop gets one pointer and one byte step per operand (outputs first) and a
 * count; scalar operands get a pointer to their value and step 0. The driver walks
 * the outer axes with an odometer, so the inner loop runs along the last (after
 * coalescing: the longest contiguous) axis.
 */
#ifndef GA_CPU_LOOP_H
#define GA_CPU_LOOP_H

#include <stdint.h>

#include "ga_backend.h"

typedef void (*ga_cpu_inner_fn)(char **ptrs, const int64_t *steps, int64_t n,
                                void *ctx);

/* One piece of a parallel job: `chunk` is in [0, nchunks). */
typedef void (*ga_cpu_chunk_fn)(void *ctx, int64_t chunk);

/* Elements per chunk of a parallel loop of simple elements (add, compare, copy):
 * about 5 us of work, small enough that a core which joins late (the machine is
 * busy) still finds work and that the caller rarely waits on a worker preempted in
 * the middle of its chunk, big enough that claiming a chunk costs nothing. */
#define GA_CPU_CHUNK (1 << 14)
/* Below this many simple elements a loop runs on the calling thread alone: waking a
 * worker costs a few microseconds, and on a shared machine the other core is often
 * busy, so only loops of tens of microseconds and more are split. */
#define GA_CPU_PARALLEL_MIN (1 << 17)

#ifdef __cplusplus
extern "C" {
#endif

/* Run `fn` over the whole loop. Elements [start, stop) of the flattened C-order
 * iteration only, so callers may split the work between threads. */
void ga_cpu_run_loop_range(const ga_loop *loop, ga_cpu_inner_fn fn, void *ctx,
                           int64_t start, int64_t stop);
void ga_cpu_run_loop(const ga_loop *loop, ga_cpu_inner_fn fn, void *ctx);

/* Run fn(ctx, c) for every c < nchunks, on the calling thread and the pool's workers.
 * Chunks are claimed one at a time, so the caller never waits for a worker that has
 * not started (on a loaded machine it may do every chunk itself); it returns when
 * every chunk is done. fn must not fail, call BLAS or start parallel work itself.
 * Any thread may call; one job uses the pool at a time, and a call that finds the pool
 * busy, or a nested call, runs serially on its caller. */
void ga_cpu_parallel_for(int64_t nchunks, ga_cpu_chunk_fn fn, void *ctx);
/* Threads that ga_cpu_parallel_for uses, the caller included (>= 1): the CPUs this
 * process may run on, capped by GPUARR_NUM_THREADS or else OMP_NUM_THREADS. */
int ga_cpu_num_threads(void);
/* The calling thread's share of those threads (a simulated GPU's worker gets about
 * ga_cpu_num_threads() / number of simulated GPUs; every other thread all of them).
 * Libraries that start threads of their own (BLAS) size them by this. */
int ga_cpu_thread_share(void);
void ga_cpu_set_thread_share(int n);
/* Run `fn` over the loop, split into chunks between threads when it is large.
 * `cost`: time per element relative to a simple one (1; transcendental math about 8),
 * which scales the threshold and the chunk down. */
void ga_cpu_run_loop_parallel(const ga_loop *loop, ga_cpu_inner_fn fn, void *ctx,
                              int cost);
/* The same with chunks of `chunk` elements whatever the cost (a caller that walks
 * its own blocks inside each chunk: ga_cpu_fused.c) */
void ga_cpu_run_loop_parallel_chunked(const ga_loop *loop, ga_cpu_inner_fn fn, void *ctx,
                                      int cost, int64_t chunk);

#ifdef __cplusplus
}
#endif

#endif
