/* ga_cpu_fft_plans.c: the CPU and simulated-GPU backends' FFT, with plans kept between
 * calls and lines spread over the thread pool (the transform itself: ga_cpu_fft.c).
 *
 * Why a cache: a plan's tables (n twiddles, and for Bluestein's sizes the chirp and
 * the transform of its kernel, itself a transform of length M >= 2n - 1) cost as much
 * as a transform or more, and a training loop or a batch of calls repeats one length.
 * numpy.fft (pocketfft) and cuFFT plans are kept the same way. The cache holds at most
 * GA_FFT_PLANS plans and GA_FFT_PLAN_BYTES bytes; an unused plan leaves it least
 * recently used first. A plan in use is never freed (a reference count), so threads
 * (a simulated GPU's worker beside the caller) can share it. */
#include <stdlib.h>
#include <string.h>

#include "ga_cpu.h"
#include "ga_cpu_fft_impl.h"
#include "ga_cpu_loop.h"
#include "ga_error.h"
#include "ga_platform.h"

#define GA_FFT_PLANS 8
#define GA_FFT_PLAN_BYTES ((size_t)64 << 20)
/* Lines per chunk of the pool: enough work that a chunk's claim is noise. */
#define GA_FFT_CHUNK_POINTS (1 << 15)
#define GA_FFT_CHUNKS_PER_THREAD 4

typedef struct {
    ga_fft_plan *plan; /* NULL: a free slot */
    int users;
    uint64_t last_use;
} plan_slot;

static struct {
    ga_mutex mu;
    plan_slot slot[GA_FFT_PLANS];
    uint64_t clock;
    size_t bytes;
} cache = {GA_MUTEX_INIT};

static void
after_fork_child(void)
{
    ga_mutex_reset(&cache.mu); /* the plans stay valid: they are only memory */
}

static ga_fft_plan *
cached_take(int64_t n, int real)
{
    ga_fft_plan *found = NULL;
    ga_mutex_lock(&cache.mu);
    for (int i = 0; i < GA_FFT_PLANS; i++) {
        plan_slot *s = &cache.slot[i];
        if (s->plan != NULL && ga_fft_plan_length(s->plan) == n &&
            ga_fft_plan_is_real(s->plan) == (real && n % 2 == 0)) {
            s->users++;
            s->last_use = ++cache.clock;
            found = s->plan;
            break;
        }
    }
    ga_mutex_unlock(&cache.mu);
    return found;
}

/* Offer a new plan to the cache, in use by the caller. 1: the cache owns it now. */
static int
cached_put(ga_fft_plan *p)
{
    size_t bytes = ga_fft_plan_bytes(p);
    if (bytes > GA_FFT_PLAN_BYTES / 2) {
        return 0; /* one huge length would push every other plan out */
    }
    int kept = 0;
    ga_mutex_lock(&cache.mu);
    for (;;) {
        int free_slot = -1, victim = -1;
        for (int i = 0; i < GA_FFT_PLANS; i++) {
            plan_slot *s = &cache.slot[i];
            if (s->plan == NULL) {
                free_slot = free_slot < 0 ? i : free_slot;
            } else if (s->users == 0 &&
                       (victim < 0 || s->last_use < cache.slot[victim].last_use)) {
                victim = i;
            }
        }
        if (free_slot >= 0 && cache.bytes + bytes <= GA_FFT_PLAN_BYTES) {
            cache.slot[free_slot] = (plan_slot){p, 1, ++cache.clock};
            cache.bytes += bytes;
            kept = 1;
            break;
        }
        if (victim < 0) {
            break; /* every cached plan is in use: this one stays the caller's */
        }
        cache.bytes -= ga_fft_plan_bytes(cache.slot[victim].plan);
        ga_fft_plan_free(cache.slot[victim].plan);
        cache.slot[victim] = (plan_slot){0};
    }
    ga_mutex_unlock(&cache.mu);
    return kept;
}

static void
cached_release(ga_fft_plan *p)
{
    ga_mutex_lock(&cache.mu);
    for (int i = 0; i < GA_FFT_PLANS; i++) {
        if (cache.slot[i].plan == p) {
            cache.slot[i].users--;
            break;
        }
    }
    ga_mutex_unlock(&cache.mu);
}

typedef struct {
    const ga_fft_plan *plan;
    const ga_fft_desc *d;
    int64_t lines_per_chunk;
    char *scratch; /* one line's scratch per chunk */
    size_t scratch_bytes;
} lines_job;

static void
run_chunk(void *ctx, int64_t c)
{
    const lines_job *j = ctx;
    int64_t b0 = c * j->lines_per_chunk;
    int64_t b1 =
        b0 + j->lines_per_chunk < j->d->batch ? b0 + j->lines_per_chunk : j->d->batch;
    ga_fft_plan_lines(j->plan, j->d, b0, b1, j->scratch + (size_t)c * j->scratch_bytes,
                      NULL);
}

int
ga_cpu_fft_cached(int dev, const ga_fft_desc *d)
{
    (void)dev;
    static int atfork_done;
    if (!atfork_done) {
        ga_atfork(NULL, NULL, after_fork_child);
        atfork_done = 1;
    }
    GA_TRY(ga_fft_desc_check(d));
    if (d->batch == 0) {
        return GA_OK;
    }
    int real = d->kind != GA_FFT_C2C;
    ga_fft_plan *p = cached_take(d->n, real);
    int owned = 0;
    if (p == NULL) {
        GA_TRY(ga_fft_plan_new(d->n, real, &p));
        owned = !cached_put(p);
    }
    /* One line: the pool splits it (ga_cpu_fft.c, exec_direct). Several: chunks of
     * whole lines, each with its own scratch, allocated here so no chunk can fail. */
    int threads = ga_cpu_thread_share();
    int64_t per = GA_FFT_CHUNK_POINTS / d->n > 1 ? GA_FFT_CHUNK_POINTS / d->n : 1;
    /* At most GA_FFT_CHUNKS_PER_THREAD chunks a thread, since each has a scratch of
     * its own (lines of 2^16 points in chunks of one took a scratch per line), and
     * whole groups of the lines the plan runs side by side. */
    int64_t cap = (int64_t)threads * GA_FFT_CHUNKS_PER_THREAD;
    if (per < (d->batch + cap - 1) / cap) {
        per = (d->batch + cap - 1) / cap;
    }
    int lanes = ga_fft_plan_lanes(p);
    per = (per + lanes - 1) / lanes * lanes;
    int64_t nchunks = d->batch == 1 || threads < 2 ? 1 : (d->batch + per - 1) / per;
    size_t scratch_bytes = (size_t)ga_fft_line_scratch(p) * 16;
    char *scratch = malloc(scratch_bytes * (size_t)nchunks);
    int st = GA_OK;
    if (scratch == NULL) {
        st = ga_error(GA_ERR_NOMEM,
                      "fft: out of host memory for the scratch of %lld "
                      "line(s) of length %lld",
                      (long long)nchunks, (long long)d->n);
    } else if (nchunks == 1) {
        ga_fft_plan_lines(p, d, 0, d->batch, scratch,
                          d->batch == 1 && threads > 1 ? ga_cpu_parallel_for : NULL);
    } else {
        lines_job j = {p, d, per, scratch, scratch_bytes};
        ga_cpu_parallel_for(nchunks, run_chunk, &j);
    }
    free(scratch);
    if (owned) {
        ga_fft_plan_free(p);
    } else {
        cached_release(p);
    }
    return st;
}
