/* ga_backend_cpu.c: the CPU backend table, and the host memory it shares with the
 * simulated GPUs (ga_backend_sim.c).
 *
 * Both use host memory and the CPU kernels (ga_cpu_*.c). They differ in identity,
 * bookkeeping and timing: each simulated GPU has its own memory statistics and its own
 * queue, and copies between host and a simulated GPU are real memcpy's that the core
 * counts as transfers, so a student sees the same ledger as on real hardware.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_backend.h"
#include "ga_cpu.h"
#include "ga_cpu_loop.h"
#include "ga_error.h"
#include "ga_platform.h"

/* Alignment of every host block: a cache line and enough for AVX-512 loads. */
#define GA_HOST_ALIGN 64

/* Freed host blocks are kept for reuse, per device and per size class, because a
 * fresh block costs far more than the work done in it: a new 40 MB block takes
 * 10^4 page faults (about 20 ms) before the first write, four times what `a + b` on
 * it needs, and a loop such as `c = a + b` frees and asks for the same size every
 * time. Size classes are 1/8 of a power of two wide (at most 12.5% waste); the cache
 * holds at most GA_HOST_CACHE_MAX bytes per device, and blocks above a quarter of
 * that are never cached. reserved_bytes counts live and cached blocks at their class
 * size, allocated_bytes what the arrays asked for, so memory_stats stays honest and
 * empty_cache() gives everything cached back to the system. */
#if defined(__SANITIZE_ADDRESS__)
/* AddressSanitizer must see every free, or a use after free goes unnoticed. */
#define GA_HOST_CACHE_MAX ((size_t)0)
#else
#define GA_HOST_CACHE_MAX ((size_t)512 << 20)
#endif
#define GA_HOST_CACHE_BLOCK_MAX (GA_HOST_CACHE_MAX / 4)
#define GA_HOST_NCLASSES 512

size_t
ga_host_cache_limit(void)
{
    return GA_HOST_CACHE_MAX;
}

/* The list node of a cached block lives outside the block: a simulated GPU caches a
 * block while work queued before the free may still read or write it (only later work
 * of the same queue can be handed it), so nothing may be written into it. Nodes are
 * recycled through `spare_nodes`. */
typedef struct free_block {
    struct free_block *next;
    void *block;
} free_block;

static free_block *spare_nodes;

typedef struct {
    free_block *lists[GA_HOST_NCLASSES];
    size_t cached_bytes;
} host_cache;

/* Index 0: the CPU; 1 + i: simulated gpu(i). Allocations come from the Python thread,
 * but a simulated GPU frees its blocks on its own worker thread once the work queued
 * before the free is done, so the slots share a lock (held for microseconds). */
static ga_memory_stats host_stats[1 + GA_MAX_DEVICES];
static host_cache host_caches[1 + GA_MAX_DEVICES];
static ga_mutex host_lock = GA_MUTEX_INIT;

/* The size class of an n-byte request: its index and the block size it gets.
 * Classes up to 512 bytes are multiples of 64; above, 8 classes per power of two. */
static int
size_class(size_t nbytes, size_t *block)
{
    if (nbytes <= 512) {
        size_t k = nbytes == 0 ? 1 : (nbytes + 63) / 64;
        *block = k * 64;
        return (int)k - 1; /* 0..7 */
    }
    int e =
        63 - __builtin_clzll((unsigned long long)(nbytes - 1)); /* 2^e < n <= 2^(e+1) */
    size_t step = (size_t)1 << (e - 3);
    size_t k = (nbytes + step - 1) / step; /* 9..16 */
    *block = k * step;
    return 8 + (e - 9) * 8 + (int)(k - 9);
}

static void
cache_release(host_cache *c, ga_memory_stats *st)
{
    for (int i = 0; i < GA_HOST_NCLASSES; i++) {
        free_block *b = c->lists[i];
        while (b != NULL) {
            free_block *next = b->next;
            ga_aligned_free(b->block);
            b->next = spare_nodes;
            spare_nodes = b;
            b = next;
        }
        c->lists[i] = NULL;
    }
    st->reserved_bytes -= c->cached_bytes;
    c->cached_bytes = 0;
}

static int
host_alloc_locked(int slot, size_t nbytes, void **ptr, int may_release)
{
    ga_memory_stats *st = &host_stats[slot];
    host_cache *c = &host_caches[slot];
    if (nbytes > ((size_t)1 << 62)) {
        return ga_error(GA_ERR_NOMEM, "cannot allocate %zu bytes", nbytes);
    }
    size_t block;
    int cls = size_class(nbytes, &block);
    void *p = NULL;
    if (cls < GA_HOST_NCLASSES && c->lists[cls] != NULL) {
        free_block *b = c->lists[cls];
        c->lists[cls] = b->next;
        c->cached_bytes -= block;
        p = b->block;
        b->next = spare_nodes;
        spare_nodes = b;
    } else {
        p = ga_aligned_alloc(GA_HOST_ALIGN, block);
        if (p == NULL && may_release && c->cached_bytes > 0) { /* give the cache back */
            cache_release(c, st);
            p = ga_aligned_alloc(GA_HOST_ALIGN, block);
        }
        if (p == NULL) {
            return ga_error(GA_ERR_NOMEM,
                            "out of host memory: could not allocate %zu bytes (%zu "
                            "already in use by gpuarr on this device)",
                            nbytes, st->allocated_bytes);
        }
        st->reserved_bytes += block;
        st->alloc_calls++;
    }
    st->allocated_bytes += nbytes;
    if (st->allocated_bytes > st->peak_allocated_bytes) {
        st->peak_allocated_bytes = st->allocated_bytes;
    }
    *ptr = p;
    return GA_OK;
}

/* Put the block in the cache if it fits there (returns 1); else, with `to_system`,
 * give it back to the system, and otherwise leave it alone (returns 0). */
static int
host_free_locked(int slot, void *ptr, size_t nbytes, int to_system)
{
    ga_memory_stats *st = &host_stats[slot];
    host_cache *c = &host_caches[slot];
    size_t block;
    int cls = size_class(nbytes, &block);
    free_block *b = NULL;
    if (cls < GA_HOST_NCLASSES && block <= GA_HOST_CACHE_BLOCK_MAX &&
        c->cached_bytes + block <= GA_HOST_CACHE_MAX) {
        b = spare_nodes;
        if (b != NULL) {
            spare_nodes = b->next;
        } else {
            b = malloc(sizeof(*b));
        }
    }
    if (b != NULL) {
        b->block = ptr;
        b->next = c->lists[cls];
        c->lists[cls] = b;
        c->cached_bytes += block;
        st->allocated_bytes -= nbytes;
        return 1;
    }
    if (!to_system) {
        return 0;
    }
    ga_aligned_free(ptr);
    st->allocated_bytes -= nbytes;
    st->reserved_bytes -= block;
    return 1;
}

int
ga_host_alloc(int slot, size_t nbytes, void **ptr, int may_release_cache)
{
    ga_mutex_lock(&host_lock);
    int st = host_alloc_locked(slot, nbytes, ptr, may_release_cache);
    ga_mutex_unlock(&host_lock);
    return st;
}

void
ga_host_free(int slot, void *ptr, size_t nbytes)
{
    ga_mutex_lock(&host_lock);
    host_free_locked(slot, ptr, nbytes, 1);
    ga_mutex_unlock(&host_lock);
}

int
ga_host_free_to_cache(int slot, void *ptr, size_t nbytes)
{
    ga_mutex_lock(&host_lock);
    int cached = host_free_locked(slot, ptr, nbytes, 0);
    ga_mutex_unlock(&host_lock);
    return cached;
}

void
ga_host_stats(int slot, ga_memory_stats *out)
{
    ga_mutex_lock(&host_lock);
    *out = host_stats[slot];
    ga_mutex_unlock(&host_lock);
}

int
ga_host_empty_cache(int slot)
{
    ga_mutex_lock(&host_lock);
    cache_release(&host_caches[slot], &host_stats[slot]);
    ga_mutex_unlock(&host_lock);
    return GA_OK;
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
    return ga_host_alloc(0, nbytes, ptr, 1);
}

static void
cpu_free(int dev, void *ptr, size_t nbytes)
{
    (void)dev;
    ga_host_free(0, ptr, nbytes);
}

static int
cpu_stats(int dev, ga_memory_stats *out)
{
    (void)dev;
    ga_host_stats(0, out);
    return GA_OK;
}

static int
cpu_empty_cache(int dev)
{
    (void)dev;
    return ga_host_empty_cache(0);
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

/* The binding's "release/retake the GIL" pair, handed to this table (and the simulated
 * GPUs') through set_wait_hooks by the device registry when the binding sets it
 * (ga_devices_set_wait_hooks): the host backends keep their own copy rather than call
 * up into the registry for it. Set once at import, before any kernel runs. */
static void *(*host_wait_begin)(void);
static void (*host_wait_end)(void *);

void
ga_host_set_wait_hooks(void *(*begin)(void), void (*end)(void *))
{
    host_wait_begin = begin;
    host_wait_end = end;
}

void *
ga_host_work_begin(void)
{
    return host_wait_begin != NULL ? host_wait_begin() : NULL;
}

void
ga_host_work_end(void *token)
{
    if (host_wait_end != NULL) {
        host_wait_end(token);
    }
}

/* --- the CPU device's kernels, with the GIL released -----------------------------
 *
 * A CPU kernel above a few tens of microseconds runs with the GIL released, so a
 * notebook's UI thread or a data loader keeps running beside a large matmul. Safe
 * because a kernel reads and writes only the buffers in its descriptor (kept alive by
 * the caller's references) and the thread pool, the BLAS thread setting and the host
 * block cache have locks of their own; the core's other state (the ledger, device
 * tables) is touched before and after, with the GIL held. Below the threshold the
 * release costs more than it gives (about a microsecond). */
#define GA_RELEASE_MIN (1 << 15) /* elements (multiply-adds for a GEMM) */

#define GA_UNLOCKED(work, call)                                                        \
    do {                                                                               \
        if ((work) < GA_RELEASE_MIN) {                                                 \
            return call;                                                               \
        }                                                                              \
        void *token_ = ga_host_work_begin();                                           \
        int st_ = call;                                                                \
        ga_host_work_end(token_);                                                      \
        return st_;                                                                    \
    } while (0)

static int
cpu_elementwise(int dev, int op, const ga_loop *loop)
{
    GA_UNLOCKED(loop->size, ga_cpu_elementwise(dev, op, loop));
}

static int
cpu_fused(int dev, const ga_fused_prog *prog, const ga_loop *loop)
{
    GA_UNLOCKED(loop->size, ga_cpu_fused(dev, prog, loop));
}

static int
cpu_fused_reduce(int dev, const ga_fused_prog *prog, const ga_loop *loop,
                 const ga_reduce_desc *r)
{
    GA_UNLOCKED(loop->size, ga_cpu_fused_reduce(dev, prog, loop, r));
}

static int
cpu_reduce(int dev, const ga_reduce_desc *r)
{
    GA_UNLOCKED((double)r->out_size * (double)r->red_size, ga_cpu_reduce(dev, r));
}

static int
cpu_scan(int dev, const ga_scan_desc *s)
{
    double n = 1;
    for (int d = 0; d < s->ndim; d++) {
        n *= (double)s->shape[d];
    }
    GA_UNLOCKED(n, ga_cpu_scan(dev, s));
}

static int
cpu_gemm(int dev, const ga_gemm_desc *g)
{
    GA_UNLOCKED((double)g->m * (double)g->n * (double)g->k * (double)g->batch,
                ga_cpu_gemm(dev, g));
}

static int
cpu_random(int dev, const ga_random_desc *r)
{
    GA_UNLOCKED(r->n, ga_cpu_random(dev, r));
}

static int
cpu_gather(int dev, const ga_index_desc *d)
{
    GA_UNLOCKED(d->loop.size, ga_cpu_gather(dev, d));
}

static int
cpu_scatter(int dev, const ga_index_desc *d)
{
    GA_UNLOCKED(d->loop.size, ga_cpu_scatter(dev, d));
}

static int
cpu_sort(int dev, const ga_sort_desc *d)
{
    GA_UNLOCKED((double)d->rows * (double)d->n, ga_cpu_sort(dev, d));
}

static int
cpu_linalg(int dev, const ga_linalg_desc *d)
{
    double n = (double)(d->m > d->n ? d->m : d->n);
    GA_UNLOCKED((double)d->batch * n * n * n, ga_cpu_linalg(dev, d));
}

static int
cpu_fft(int dev, const ga_fft_desc *d)
{
    GA_UNLOCKED((double)d->n * (double)d->batch, ga_cpu_fft_cached(dev, d));
}

static int
cpu_copy(int dev, void *dst, const void *src, size_t nbytes)
{
    GA_UNLOCKED((double)nbytes / 8, host_copy(dev, dst, src, nbytes));
}

const ga_backend ga_backend_cpu = {
    .abi_version = GA_BACKEND_ABI_VERSION,
    .name = "cpu",
    .device_count = cpu_count,
    .device_props = cpu_props,
    .synchronize = nop_sync,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .memory_stats = cpu_stats,
    .empty_cache = cpu_empty_cache,
    .copy_h2d = cpu_copy,
    .copy_d2h = cpu_copy,
    .copy_d2d = cpu_copy,
    .copy_peer = host_copy_peer,
    .elementwise = cpu_elementwise,
    .reduce = cpu_reduce,
    .scan = cpu_scan,
    .gemm = cpu_gemm,
    .random = cpu_random,
    .gather = cpu_gather,
    .scatter = cpu_scatter,
    .nonzero = ga_cpu_nonzero,
    .arange = ga_cpu_arange,
    .sort = cpu_sort,
    .searchsorted = ga_cpu_searchsorted,
    .linalg = cpu_linalg,
    .fft = cpu_fft,
    .set_wait_hooks = ga_host_set_wait_hooks,
    .fused = cpu_fused,
    .fused_reduce = cpu_fused_reduce,
    .num_threads = ga_cpu_num_threads,
    .host_cache_limit = ga_host_cache_limit,
};
