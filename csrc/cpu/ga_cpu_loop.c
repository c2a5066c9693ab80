/* ga_cpu_loop.c: the odometer that drives CPU inner loops. */
#include "ga_cpu_loop.h"

void
ga_cpu_run_loop_range(const ga_loop *loop, ga_cpu_inner_fn fn, void *ctx, int64_t start,
                      int64_t stop)
{
    int nargs = loop->nargs;
    char *ptrs[GA_MAXARGS];
    int64_t steps[GA_MAXARGS];
    if (start >= stop) {
        return;
    }
    if (loop->ndim == 0) {
        for (int a = 0; a < nargs; a++) {
            const ga_operand *op = &loop->args[a];
            ptrs[a] = op->is_scalar ? (char *)op->value.bytes : op->data;
            steps[a] = 0;
        }
        fn(ptrs, steps, 1, ctx);
        return;
    }
    int nd = loop->ndim;
    int64_t inner = loop->shape[nd - 1];
    /* position of `start` in the odometer */
    int64_t idx[GA_MAXDIMS];
    int64_t rem = start;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = rem % loop->shape[d];
        rem /= loop->shape[d];
    }
    for (int a = 0; a < nargs; a++) {
        steps[a] = loop->args[a].is_scalar ? 0 : loop->args[a].strides[nd - 1];
    }
    int64_t done = start;
    while (done < stop) {
        for (int a = 0; a < nargs; a++) {
            const ga_operand *op = &loop->args[a];
            if (op->is_scalar) {
                ptrs[a] = (char *)op->value.bytes;
                continue;
            }
            char *p = op->data;
            for (int d = 0; d < nd; d++) {
                p += idx[d] * op->strides[d];
            }
            ptrs[a] = p;
        }
        int64_t n = inner - idx[nd - 1];
        if (n > stop - done) {
            n = stop - done;
        }
        fn(ptrs, steps, n, ctx);
        done += n;
        /* advance the odometer by n along the last axis */
        idx[nd - 1] += n;
        for (int d = nd - 1; d > 0 && idx[d] >= loop->shape[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

void
ga_cpu_run_loop(const ga_loop *loop, ga_cpu_inner_fn fn, void *ctx)
{
    ga_cpu_run_loop_range(loop, fn, ctx, 0, loop->size);
}

/* --- the thread pool --------------------------------------------------------------
 *
 * Why not an OpenMP parallel region: its closing barrier waits for every thread of
 * the team, and on a shared 2-core machine the second thread is often not running
 * when the region starts, so a 3 ms loop took 8 to 12 ms on two threads. Here the
 * workers claim chunks from a counter; one that wakes after the caller took the last
 * chunk finds nothing to do and the caller does not wait for it.
 *
 * The claim counter holds (job generation << 32 | next chunk), so a worker still
 * holding an old job can never claim a chunk of a newer one. Workers spin briefly
 * after a job (back-to-back operations such as `(z + 2).exp() * y` then find them
 * awake), then sleep on a condition variable. */

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "ga_platform.h"

#define GA_POOL_MAX 64
#define GA_POOL_SPIN 4000 /* polls of the generation before a worker sleeps */

static struct {
    ga_mutex mu;
    ga_cond wake;
    int nthreads; /* 0: not decided yet */
    int started;  /* workers running (in this process: reset after fork) */
    int sleepers;
    /* each counter on a cache line of its own: the claiming threads and the
     * caller polling `done` would otherwise fight over one line per chunk */
    _Alignas(64) _Atomic uint32_t gen;
    _Alignas(64) _Atomic uint64_t claim;
    _Alignas(64) _Atomic int64_t done;
    _Alignas(64) char pad_;
    /* the current job, written under mu before gen is bumped */
    ga_cpu_chunk_fn fn;
    void *ctx;
    int64_t nchunks;
} pool = {.mu = GA_MUTEX_INIT, .wake = GA_COND_INIT};

static GA_THREAD_LOCAL int in_job;

/* Threads this thread may use for one job (0: the whole pool). A simulated GPU's
 * worker sets its share of the cores. The pool runs one job at a time: a caller that
 * finds it busy (another simulated GPU's worker, or the CPU device's caller) runs its
 * chunks alone rather than wait, so two devices always progress side by side. */
static GA_THREAD_LOCAL int thread_share;
static ga_mutex pool_owner = GA_MUTEX_INIT;

void
ga_cpu_set_thread_share(int n)
{
    thread_share = n;
}

int
ga_cpu_thread_share(void)
{
    int n = ga_cpu_num_threads();
    return thread_share > 0 && thread_share < n ? thread_share : n;
}

/* A thread cap from the environment, 0 when unset. A value that is not a count from
 * 1 to 99999 is ignored with a warning on stderr (the pool starts inside some
 * operation, where no error can reach the user's code): 0, -1 or junk used to be
 * ignored without a word. OpenMP's "4,2" (nesting) reads as 4 for OMP_NUM_THREADS. */
static int
env_threads(const char *name, int allow_list)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') {
        return 0;
    }
    char *end;
    long n = strtol(v, &end, 10);
    int tail_ok = *end == '\0' || (allow_list && *end == ',');
    if (end == v || !tail_ok || n < 1 || n >= 100000) {
        fprintf(stderr,
                "gpuarr: %s=%s is not a thread count from 1 to 99999; ignored\n", name,
                v);
        return 0;
    }
    return (int)n;
}

int
ga_cpu_num_threads(void)
{
    if (pool.nthreads == 0) {
        int n = ga_cpu_count();
        int cap = env_threads("GPUARR_NUM_THREADS", 0);
        if (cap == 0) {
            cap = env_threads("OMP_NUM_THREADS", 1);
        }
        if (cap > 0 && cap < n) {
            n = cap;
        }
        pool.nthreads = n < 1 ? 1 : n > GA_POOL_MAX ? GA_POOL_MAX : n;
    }
    return pool.nthreads;
}

/* Claim and run chunks of job `gen` until none is left. */
static void
work_on(uint32_t gen, ga_cpu_chunk_fn fn, void *ctx, int64_t nchunks)
{
    for (;;) {
        uint64_t v = atomic_load_explicit(&pool.claim, memory_order_relaxed);
        int64_t c;
        do {
            if ((uint32_t)(v >> 32) != gen) {
                return;
            }
            c = (int64_t)(v & 0xffffffffu);
            if (c >= nchunks) {
                return;
            }
        } while (!atomic_compare_exchange_weak_explicit(&pool.claim, &v, v + 1,
                                                        memory_order_acquire,
                                                        memory_order_relaxed));
        fn(ctx, c);
        atomic_fetch_add_explicit(&pool.done, 1, memory_order_release);
    }
}

static void *
worker_main(void *arg)
{
    (void)arg;
    in_job = 1; /* a worker never starts nested parallel work */
    uint32_t seen = atomic_load(&pool.gen);
    for (;;) {
        uint32_t g = seen;
        for (int i = 0; i < GA_POOL_SPIN; i++) {
            g = atomic_load_explicit(&pool.gen, memory_order_acquire);
            if (g != seen) {
                break;
            }
            ga_cpu_relax();
        }
        ga_mutex_lock(&pool.mu);
        while ((g = atomic_load(&pool.gen)) == seen) {
            pool.sleepers++;
            ga_cond_wait(&pool.wake, &pool.mu);
            pool.sleepers--;
        }
        ga_cpu_chunk_fn fn = pool.fn;
        void *ctx = pool.ctx;
        int64_t nchunks = pool.nchunks;
        ga_mutex_unlock(&pool.mu);
        seen = g;
        work_on(g, fn, ctx, nchunks);
    }
    return NULL;
}

static void
after_fork_child(void)
{
    /* the workers do not exist in a forked child; start new ones on first use */
    ga_mutex_reset(&pool.mu);
    ga_cond_reset(&pool.wake);
    pool.started = 0;
    pool.sleepers = 0;
    in_job = 0;
    ga_mutex_reset(&pool_owner);
}

static void
start_workers(void)
{
    static int atfork_done;
    if (!atfork_done) {
        ga_atfork(NULL, NULL, after_fork_child);
        atfork_done = 1;
    }
    int want = ga_cpu_num_threads() - 1;
    for (int i = pool.started; i < want; i++) {
        if (!ga_thread_start_detached(worker_main, NULL, 1 << 20)) {
            break; /* fewer workers: still correct, the caller does the rest */
        }
        pool.started++;
    }
}

void
ga_cpu_parallel_for(int64_t nchunks, ga_cpu_chunk_fn fn, void *ctx)
{
    if (nchunks <= 0) {
        return;
    }
    if (nchunks == 1 || in_job || nchunks > 0xffffffffLL || ga_cpu_thread_share() < 2 ||
        !ga_mutex_trylock(&pool_owner)) {
        for (int64_t c = 0; c < nchunks; c++) {
            fn(ctx, c);
        }
        return;
    }
    if (pool.started < pool.nthreads - 1) {
        start_workers();
    }
    in_job = 1;
    ga_mutex_lock(&pool.mu);
    uint32_t gen = atomic_load(&pool.gen) + 1;
    pool.fn = fn;
    pool.ctx = ctx;
    pool.nchunks = nchunks;
    atomic_store(&pool.done, 0);
    atomic_store(&pool.claim, (uint64_t)gen << 32);
    atomic_store(&pool.gen, gen);
    if (pool.sleepers > 0) {
        ga_cond_broadcast(&pool.wake);
    }
    ga_mutex_unlock(&pool.mu);
    work_on(gen, fn, ctx, nchunks);
    /* only chunks already claimed by a running worker remain */
    for (int spins = 0; atomic_load_explicit(&pool.done, memory_order_acquire) < nchunks;
         spins++) {
        if (spins < 1000) {
            ga_cpu_relax();
        }
        else {
            ga_thread_yield();
        }
    }
    in_job = 0;
    ga_mutex_unlock(&pool_owner);
}

typedef struct {
    const ga_loop *loop;
    ga_cpu_inner_fn fn;
    void *ctx;
    int64_t chunk;
} loop_job;

static void
loop_chunk(void *arg, int64_t c)
{
    const loop_job *j = (const loop_job *)arg;
    int64_t lo = c * j->chunk;
    int64_t hi = lo + j->chunk < j->loop->size ? lo + j->chunk : j->loop->size;
    ga_cpu_run_loop_range(j->loop, j->fn, j->ctx, lo, hi);
}

void
ga_cpu_run_loop_parallel_chunked(const ga_loop *loop, ga_cpu_inner_fn fn, void *ctx,
                                 int cost, int64_t chunk)
{
    cost = cost < 1 ? 1 : cost > 16 ? 16 : cost;
    if (loop->size < GA_CPU_PARALLEL_MIN / cost || ga_cpu_thread_share() < 2) {
        ga_cpu_run_loop(loop, fn, ctx);
        return;
    }
    loop_job j = {loop, fn, ctx, chunk};
    ga_cpu_parallel_for((loop->size + chunk - 1) / chunk, loop_chunk, &j);
}

/* --- loops that compute more than they read: memory prefetched ahead -------------
 * A loop of SIMD math (exp: about 0.9 ns an element a core) over operands in memory
 * waited for each line and then computed, one after the other: exp of 10^7 float32
 * took the sum of both. Called in pieces of GA_CPU_AHEAD_PIECE elements, each after
 * prefetching its operands' lines GA_CPU_AHEAD_DISTANCE elements ahead (the output's
 * for writing), the lines arrive while earlier pieces compute: that exp 17.9 -> 11.0 ms
 * on one thread of the CI machine, 8.4 -> 5.3 on two; float64 15.3 -> 10.7 on two
 * (pieces of 64-512 and distances of 1024-4096 measured: within 10%). Only for 1-d
 * loops of contiguous operands spanning GA_CPU_AHEAD_MIN_BYTES or more (in cache, the
 * pieces would only cost calls); a memory-bound loop (cost 1) is streamed by the
 * hardware prefetcher already. A fused program prefetches its own way (its next block
 * during its heaviest instruction, ga_cpu_fused.c): its inputs are read by several
 * instructions, not by one loop. */
#define GA_CPU_AHEAD_PIECE 128
#define GA_CPU_AHEAD_DISTANCE 1024
#define GA_CPU_AHEAD_MIN_BYTES (4 << 20)

typedef struct {
    ga_cpu_inner_fn fn;
    void *ctx;
    int nargs;
} ahead_job;

static void
ahead_inner(char **p, const int64_t *s, int64_t n, void *arg)
{
    const ahead_job *j = (const ahead_job *)arg;
    char *pj[GA_MAXARGS];
    for (int64_t i = 0; i < n; i += GA_CPU_AHEAD_PIECE) {
        int64_t m = n - i < GA_CPU_AHEAD_PIECE ? n - i : GA_CPU_AHEAD_PIECE;
        int64_t f = i + GA_CPU_AHEAD_DISTANCE;
        int64_t fm = n - f < m ? n - f : m;
        for (int a = 0; a < j->nargs; a++) {
            pj[a] = p[a] + i * s[a];
            const char *q = p[a] + f * s[a];
            for (int64_t b = 0; s[a] != 0 && b < fm * s[a]; b += 64) {
                if (a == 0) {
                    __builtin_prefetch(q + b, 1, 1);
                }
                else {
                    __builtin_prefetch(q + b, 0, 1);
                }
            }
        }
        j->fn(pj, s, m, j->ctx);
    }
}

static int
ahead_pays(const ga_loop *loop, int cost)
{
    if (cost < 2 || loop->ndim != 1) {
        return 0;
    }
    int64_t bytes = 0;
    for (int a = 0; a < loop->nargs; a++) {
        const ga_operand *op = &loop->args[a];
        int64_t size = ga_dtype_itemsize((ga_dtype)op->dtype);
        if (op->is_scalar) {
            continue;
        }
        if (op->strides[0] != size) {
            return 0;
        }
        bytes += size * loop->size;
    }
    return bytes >= GA_CPU_AHEAD_MIN_BYTES;
}

void
ga_cpu_run_loop_parallel(const ga_loop *loop, ga_cpu_inner_fn fn, void *ctx, int cost)
{
    if (ahead_pays(loop, cost)) {
        ahead_job j = {fn, ctx, loop->nargs};
        ga_cpu_run_loop_parallel_chunked(loop, ahead_inner, &j, cost, GA_CPU_CHUNK);
        return;
    }
    cost = cost < 1 ? 1 : cost > 16 ? 16 : cost;
    ga_cpu_run_loop_parallel_chunked(loop, fn, ctx, cost, GA_CPU_CHUNK / cost);
}
