/* ga_cpu_loop.h: running a 1-d inner loop over an n-d ga_loop on the CPU.
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

typedef void (*ga_cpu_inner_fn)(char **ptrs, const int64_t *steps, int64_t n, void *ctx);

#ifdef __cplusplus
extern "C" {
#endif

/* Run `fn` over the whole loop. Elements [start, stop) of the flattened C-order
 * iteration only, so callers may split the work between threads. */
void ga_cpu_run_loop_range(const ga_loop *loop, ga_cpu_inner_fn fn, void *ctx,
                           int64_t start, int64_t stop);
void ga_cpu_run_loop(const ga_loop *loop, ga_cpu_inner_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
