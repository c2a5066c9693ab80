/* ga_backend_cpu.c: the CPU backend table, and the simulated-GPU one beside it.
 *
 * Both use host memory and the CPU kernels (ga_cpu_*.c). They differ in identity and
 * bookkeeping: each simulated GPU has its own memory statistics, and copies between
 * host and a simulated GPU are real memcpy's that the core counts as transfers, so a
 * student sees the same ledger as on real hardware.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_backend.h"
#include "ga_cpu.h"
#include "ga_error.h"

/* Alignment of every host block: a cache line and enough for AVX-512 loads. */
#define GA_HOST_ALIGN 64

/* Index 0: the CPU; 1 + i: simulated gpu(i). Changed under the GIL only. */
static ga_memory_stats host_stats[1 + GA_MAX_DEVICES];

static int
host_alloc(ga_memory_stats *st, size_t nbytes, void **ptr)
{
    size_t rounded = (nbytes + GA_HOST_ALIGN - 1) / GA_HOST_ALIGN * GA_HOST_ALIGN;
    if (rounded < nbytes) {
        return ga_error(GA_ERR_NOMEM, "cannot allocate %zu bytes", nbytes);
    }
    void *p = aligned_alloc(GA_HOST_ALIGN, rounded ? rounded : GA_HOST_ALIGN);
    if (p == NULL) {
        return ga_error(GA_ERR_NOMEM,
                        "out of host memory: could not allocate %zu bytes (%zu already "
                        "in use by gpuarr on this device)",
                        nbytes, st->allocated_bytes);
    }
    st->allocated_bytes += nbytes;
    st->reserved_bytes += nbytes;
    st->alloc_calls++;
    if (st->allocated_bytes > st->peak_allocated_bytes) {
        st->peak_allocated_bytes = st->allocated_bytes;
    }
    *ptr = p;
    return GA_OK;
}

static void
host_free(ga_memory_stats *st, void *ptr, size_t nbytes)
{
    free(ptr);
    st->allocated_bytes -= nbytes;
    st->reserved_bytes -= nbytes;
}

/* --- the CPU ------------------------------------------------------------------ */

static int
cpu_count(int *count)
{
    *count = 1;
    return GA_OK;
}

static int
cpu_props(int dev, ga_device_props *out)
{
    (void)dev;
    memset(out, 0, sizeof(*out));
    strcpy(out->name, "host CPU");
    return GA_OK;
}

static int
nop_sync(int dev)
{
    (void)dev;
    return GA_OK;
}

static int
cpu_alloc(int dev, size_t nbytes, void **ptr)
{
    (void)dev;
    return host_alloc(&host_stats[0], nbytes, ptr);
}

static void
cpu_free(int dev, void *ptr, size_t nbytes)
{
    (void)dev;
    host_free(&host_stats[0], ptr, nbytes);
}

static int
cpu_stats(int dev, ga_memory_stats *out)
{
    (void)dev;
    *out = host_stats[0];
    return GA_OK;
}

static int
nop_empty_cache(int dev)
{
    (void)dev;
    return GA_OK;
}

static int
host_copy(int dev, void *dst, const void *src, size_t nbytes)
{
    (void)dev;
    memcpy(dst, src, nbytes);
    return GA_OK;
}

static int
host_copy_peer(int dst_dev, void *dst, int src_dev, const void *src, size_t nbytes)
{
    (void)dst_dev;
    (void)src_dev;
    memcpy(dst, src, nbytes);
    return GA_OK;
}

#define GA_CPU_COMPUTE_ENTRIES                                                         \
    .elementwise = ga_cpu_elementwise, .reduce = ga_cpu_reduce, .scan = ga_cpu_scan,   \
    .gemm = ga_cpu_gemm, .random = ga_cpu_random, .gather = ga_cpu_gather,             \
    .scatter = ga_cpu_scatter, .nonzero = ga_cpu_nonzero,             \
    .arange = ga_cpu_arange

const ga_backend ga_backend_cpu = {
    .abi_version = GA_BACKEND_ABI_VERSION,
    .name = "cpu",
    .device_count = cpu_count,
    .device_props = cpu_props,
    .synchronize = nop_sync,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .memory_stats = cpu_stats,
    .empty_cache = nop_empty_cache,
    .copy_h2d = host_copy,
    .copy_d2h = host_copy,
    .copy_d2d = host_copy,
    .copy_peer = host_copy_peer,
    GA_CPU_COMPUTE_ENTRIES,
};

/* --- simulated GPUs ----------------------------------------------------------- */

static int
sim_props(int dev, ga_device_props *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "simulated GPU %d (host memory, CPU kernels)",
             dev);
    return GA_OK;
}

static int
sim_alloc(int dev, size_t nbytes, void **ptr)
{
    return host_alloc(&host_stats[1 + dev], nbytes, ptr);
}

static void
sim_free(int dev, void *ptr, size_t nbytes)
{
    host_free(&host_stats[1 + dev], ptr, nbytes);
}

static int
sim_stats(int dev, ga_memory_stats *out)
{
    *out = host_stats[1 + dev];
    return GA_OK;
}

const ga_backend ga_backend_simulated = {
    .abi_version = GA_BACKEND_ABI_VERSION,
    .name = "simulated",
    .device_count = cpu_count, /* the core decides the count from the environment */
    .device_props = sim_props,
    .synchronize = nop_sync,
    .alloc = sim_alloc,
    .free = sim_free,
    .memory_stats = sim_stats,
    .empty_cache = nop_empty_cache,
    .copy_h2d = host_copy,
    .copy_d2h = host_copy,
    .copy_d2d = host_copy,
    .copy_peer = host_copy_peer,
    GA_CPU_COMPUTE_ENTRIES,
};
