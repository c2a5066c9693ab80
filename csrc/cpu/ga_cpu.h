/* ga_cpu.h: the CPU kernels behind the CPU and simulated-GPU backends.
 * Each entry has the contract of the matching ga_backend field (ga_backend.h);
 * `dev` is ignored (host memory is host memory). One file per concern:
 * ga_cpu_elementwise.c, ga_cpu_reduce.c, ga_cpu_gemm.c, ga_cpu_random.c,
 * ga_cpu_index.c, ga_cpu_sort.c, ga_cpu_fft.c. */
#ifndef GA_CPU_H
#define GA_CPU_H

#include "ga_backend.h"
#include "ga_cpu_loop.h"

#ifdef __cplusplus
extern "C" {
#endif

int ga_cpu_elementwise(int dev, int op, const ga_loop *loop);
/* The inner loop ga_cpu_elementwise runs for `op` with operands of loop dtype in_dt
 * (GA_OP_COPY: cast from in_dt) and output out_dt, its ctx, and its time per element
 * relative to an add (ga_cpu_run_loop_parallel's cost); GA_ERR_UNSUPPORTED when the
 * CPU has no such loop. */
int ga_cpu_elementwise_loop(int op, int in_dt, int out_dt, ga_cpu_inner_fn *fn, void **ctx,
                            int *cost);
/* ga_cpu_fused.c: a fused program (ga_fused_prog) in cache-sized blocks over the pool */
int ga_cpu_fused(int dev, const ga_fused_prog *prog, const ga_loop *loop);
/* The same over a fused program's result, computed a block at a time and reduced
 * as it is made (no full-size temporary): r describes a full reduction (out_size 1)
 * of a contiguous 1-d input that is never read (r->in is NULL). */
int ga_cpu_fused_reduce(int dev, const ga_fused_prog *prog, const ga_loop *loop,
                        const ga_reduce_desc *r);
int ga_cpu_reduce(int dev, const ga_reduce_desc *r);
/* ga_cpu_reduce for such a desc, the input's elements [start, start + n) (n <= 1024)
 * written into buf by produce(ctx, start, n, buf) when the reduction needs them, in
 * the chunks and order ga_cpu_reduce reads a contiguous input: the result is bitwise
 * the reduction of the input made first. produce may run on several threads at once.
 * squares_of: NULL, or a contiguous float32 array x whose squares x * x produce makes;
 * a float32 sum then squares x's elements as it reads them instead (the same bits,
 * without storing and reloading each chunk: the 2-norm's sum). */
typedef void (*ga_cpu_produce_fn)(void *ctx, int64_t start, int64_t n, char *buf);
void ga_cpu_reduce_produced(const ga_reduce_desc *r, ga_cpu_produce_fn produce, void *ctx,
                            const char *squares_of);
int ga_cpu_scan(int dev, const ga_scan_desc *s);
int ga_cpu_gemm(int dev, const ga_gemm_desc *g);
int ga_cpu_random(int dev, const ga_random_desc *r);
int ga_cpu_gather(int dev, const ga_index_desc *d);
int ga_cpu_scatter(int dev, const ga_index_desc *d);
int ga_cpu_nonzero(int dev, const ga_loop *mask, int64_t count, int64_t *out);
int ga_cpu_arange(int dev, const ga_arange_desc *d);
int ga_cpu_sort(int dev, const ga_sort_desc *d);         /* ga_cpu_sort.c */
int ga_cpu_searchsorted(int dev, const ga_search_desc *d);
int ga_cpu_linalg(int dev, const ga_linalg_desc *d);     /* ga_cpu_linalg.c (LAPACK) */
int ga_cpu_fft(int dev, const ga_fft_desc *d); /* ga_cpu_fft.c: a plan per call, one thread */
int ga_cpu_fft_cached(int dev, const ga_fft_desc *d); /* ga_cpu_fft_plans.c: kept plans, the pool */

/* Around long host work that touches nothing but the buffers it was given (a CPU
 * kernel, a simulated GPU's host wait): lets other Python threads run meanwhile
 * through the hooks set by ga_host_set_wait_hooks (the CPU and simulated tables'
 * set_wait_hooks). The token from begin goes to end; both are no-ops on threads that
 * do not hold the GIL (a simulated GPU's worker) and before the hooks are set. */
void ga_host_set_wait_hooks(void *(*begin)(void), void (*end)(void *));
void *ga_host_work_begin(void);
void ga_host_work_end(void *token);

/* Bytes of freed host blocks the CPU and simulated-GPU backends may keep for reuse
 * per device (0 when the cache is compiled out: under AddressSanitizer). */
size_t ga_host_cache_limit(void);

/* Host blocks with their cache and statistics, shared by the CPU backend (slot 0) and
 * simulated gpu(i) (slot 1 + i). Safe to call from any thread.
 * may_release_cache: when the system has no memory left, free the slot's cached
 * blocks and retry (a simulated GPU first waits for its queue: queued work may still
 * read a cached block). ga_host_free_to_cache caches the block and returns 1, or
 * returns 0 and leaves it alone when it would go back to the system. */
int ga_host_alloc(int slot, size_t nbytes, void **ptr, int may_release_cache);
void ga_host_free(int slot, void *ptr, size_t nbytes);
int ga_host_free_to_cache(int slot, void *ptr, size_t nbytes);
void ga_host_stats(int slot, ga_memory_stats *out);
int ga_host_empty_cache(int slot);

#ifdef __cplusplus
}
#endif

#endif
