/* ga_cpu_fft_impl.h: the CPU FFT's plans, for the CPU backend's plan cache.
 *
 * ga_cpu_fft.c computes (the emulated CUDA plugin links it alone: ga_cpu_fft builds a
 * plan per call and runs on one thread); ga_cpu_fft_plans.c keeps plans between calls
 * and spreads lines over the thread pool. A plan is read-only once built, so threads
 * may share one. */
#ifndef GA_CPU_FFT_IMPL_H
#define GA_CPU_FFT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "ga_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fft_plan ga_fft_plan;
/* A parallel-for (ga_cpu_parallel_for's contract) or NULL for one thread. */
typedef void (*ga_fft_parallel_fn)(int64_t nchunks,
                                   void (*fn)(void *ctx, int64_t chunk), void *ctx);

int ga_fft_desc_check(const ga_fft_desc *d); /* GA_OK, or a GA_ERR_* with its message */
/* real: a plan for R2C and C2R lines (half the work when n is even). */
int ga_fft_plan_new(int64_t n, int real, ga_fft_plan **out);
int ga_fft_plan_is_real(const ga_fft_plan *p);
void ga_fft_plan_free(ga_fft_plan *p);
size_t ga_fft_plan_bytes(const ga_fft_plan *p); /* what the plan holds, for the cache */
int64_t ga_fft_plan_length(const ga_fft_plan *p);
/* Lines the plan runs side by side (4 for a real plan of a batch in SIMD lanes, else
 * 1): a chunk of a batch is best a multiple of it. */
int ga_fft_plan_lanes(const ga_fft_plan *p);
/* Scratch (in complex doubles, 16 bytes each) one thread needs to run lines. */
int64_t ga_fft_line_scratch(const ga_fft_plan *p);
/* Lines [b0, b1) of a checked descriptor whose length is the plan's. Cannot fail:
 * the caller provides the scratch. `par` splits a long line between threads. */
void ga_fft_plan_lines(const ga_fft_plan *p, const ga_fft_desc *d, int64_t b0,
                       int64_t b1, void *scratch, ga_fft_parallel_fn par);

#ifdef __cplusplus
}
#endif

#endif
