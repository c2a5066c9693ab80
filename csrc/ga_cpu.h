/* ga_cpu.h: the CPU kernels behind the CPU and simulated-GPU backends.
 * Each entry has the contract of the matching ga_backend field (ga_backend.h);
 * `dev` is ignored (host memory is host memory). One file per concern:
 * ga_cpu_elementwise.c, ga_cpu_reduce.c, ga_cpu_gemm.c, ga_cpu_random.c,
 * ga_cpu_index.c. */
#ifndef GA_CPU_H
#define GA_CPU_H

#include "ga_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

int ga_cpu_elementwise(int dev, int op, const ga_loop *loop);
int ga_cpu_reduce(int dev, const ga_reduce_desc *r);
int ga_cpu_scan(int dev, const ga_scan_desc *s);
int ga_cpu_gemm(int dev, const ga_gemm_desc *g);
int ga_cpu_random(int dev, const ga_random_desc *r);
int ga_cpu_gather(int dev, const ga_index_desc *d);
int ga_cpu_scatter(int dev, const ga_index_desc *d);
int ga_cpu_nonzero(int dev, const ga_loop *mask, int64_t count, int64_t *out);
int ga_cpu_arange(int dev, const ga_arange_desc *d);
int ga_cpu_sort(int dev, const ga_sort_desc *d);         /* ga_cpu_sort.c */
int ga_cpu_searchsorted(int dev, const ga_search_desc *d);

/* Bytes of freed host blocks the CPU and simulated-GPU backends may keep for reuse
 * per device (0 when the cache is compiled out: under AddressSanitizer). */
size_t ga_host_cache_limit(void);

#ifdef __cplusplus
}
#endif

#endif
