/* ga_backend_sim.c: simulated GPUs, each with an in-order queue and a worker thread.
 *
 * A simulated GPU keeps its data in host memory and computes with the CPU kernels
 * (ga_cpu_*.c), but it keeps time like a GPU: an operation is copied into a task,
 * appended to the device's queue and the call returns at once; the device's own
 * worker thread runs the tasks in order. So `synchronize()` has something to wait for,
 * two devices compute side by side, and a host read pays for the work before it. The
 * ordering rules are the CUDA backend's (docs/DESIGN.md, "Ordering: one model for
 * simulated and CUDA devices"):
 *
 *   queued, returning at once: elementwise, reduce, scan, gemm, random, gather,
 *     scatter, nonzero, arange, fft, copies within the device, and timing events
 *     (the worker takes an event's timestamp when it reaches it);
 *   free: as in the CUDA backend, a freed block goes straight back to the device's
 *     cache, because only later work of the same in-order queue can be handed it (host
 *     and peer copies into a block wait for the queue first, and empty_cache too). A
 *     block that would go back to the system is freed by the worker, after the work
 *     queued before the free;
 *   copies between devices (copy_peer): a task on each device's queue; the copy is
 *     made when both workers have reached theirs (peer_meet), so it follows the work
 *     queued before it on both devices and precedes the work queued after it on
 *     either, with no wait on the host;
 *   non-blocking copies to the host (copy_d2h_async): a task on the device's copy
 *     queue, served by a second worker, so it overlaps the compute queue's later
 *     work. A mark task on the compute queue lets the copy start once the work queued
 *     before it is done; wait_copies queues a task on the compute queue that waits for
 *     the copies queued so far (the core calls it before a write into, or the free of,
 *     a block a queued copy reads); events recorded on the copy queue
 *     (copies_event_record) tell the core when the host block holds the data;
 *   copies from the host (copy_h2d): the source staged at once into a buffer the
 *     task owns, the copy queued (the destination may still be in use by queued
 *     work); above 64 MiB the host waits for the queue and copies instead;
 *   waiting for the queue: copy_d2h (the host reads what the queue wrote),
 *     synchronize, memory_stats and empty_cache (exact numbers);
 *   errors: an operation queued with a failure record (index_checked) writes its
 *     outcome there when it has run, and the core marks its results failed
 *     (docs/DESIGN.md, "Failed queued work"). Any other task that fails keeps its
 *     status and message (the first one since the last report) for the device; the
 *     next synchronizing call on that device (synchronize, copy_d2h)
 *     returns it, as CUDA reports a faulted kernel at the next synchronizing call.
 *     Later tasks still run (their inputs may be garbage, as on a GPU).
 *
 * Cores: the worker of each of N simulated GPUs gets C / N of the C threads of the
 * CPU pool (at least one; GPUARR_NUM_THREADS still caps C), so two simulated GPUs on a
 * 2-core laptop run side by side on a core each.
 *
 * Every descriptor is plain data (pointers into device blocks and inline arrays), so
 * a task copies it by value; the caller's descriptor may be gone when the task runs.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_backend.h"
#include "ga_cpu.h"
#include "ga_cpu_loop.h"
#include "ga_error.h"
#include "ga_platform.h"
#include "ga_sim.h"

typedef enum {
    TASK_ELEMENTWISE,
    TASK_FUSED,
    TASK_FUSED_REDUCE,
    TASK_REDUCE,
    TASK_SCAN,
    TASK_GEMM,
    TASK_RANDOM,
    TASK_GATHER,
    TASK_SCATTER,
    TASK_NONZERO,
    TASK_ARANGE,
    TASK_FFT,
    TASK_COPY,
    TASK_FREE,
    TASK_EVENT,
    TASK_PEER, /* one half of a copy between two devices (peer_meet) */
    TASK_GATE, /* tests: the worker waits here until ga_sim_hold(dev, ., 0) */
    /* the copy queue (copy_d2h_async): */
    TASK_MARK,        /* compute queue: the work before copy `seq` is done */
    TASK_COPY_QUEUED, /* copy queue: copy `seq`, which first waits for its mark */
    TASK_WAIT_COPIES  /* compute queue: waits until copies_done reaches `seq` */
} task_kind;

/* A copy between two simulated GPUs: a task on each queue, and the copy happens when
 * both workers have reached theirs, so it comes after the work queued before it on
 * both devices and before the work queued after it on either (the CUDA backend's
 * rule: the destination stream waits for the source's, and the source's for the
 * copy). Owned by the two tasks; the last to leave frees it. */
typedef struct {
    void *dst;
    const void *src;
    size_t nbytes;
    int arrived, done, refs; /* under peer_mu */
} sim_peer;

struct sim_queue;

/* A timing event (ABI 9): owned by the caller and by its task until the worker has
 * stamped it, whichever lets go last frees it. */
typedef struct {
    struct sim_queue *q; /* the queue it is on (a waiter sleeps on its `idle`) */
    int refs;    /* __atomic */
    int done;    /* __atomic; 1 once `ns` is written */
    int64_t ns;  /* ga_monotonic_ns() when the worker reached it */
} sim_event;

typedef struct task {
    struct task *next;
    task_kind kind;
    int op;
    union {
        ga_loop loop; /* elementwise, nonzero */
        struct {
            ga_loop loop;
            ga_fused_prog prog;
            ga_reduce_desc reduce; /* TASK_FUSED_REDUCE */
        } fused;
        ga_reduce_desc reduce;
        ga_scan_desc scan;
        ga_gemm_desc gemm;
        ga_random_desc random;
        ga_index_desc index; /* gather, scatter */
        ga_arange_desc arange;
        ga_fft_desc fft;
        struct {
            void *dst;
            const void *src;
            size_t nbytes;
            void *owned; /* a staged source the task frees when done, or NULL */
        } copy;
        struct {
            void *ptr;
            size_t nbytes;
        } block;
        sim_event *event;
        sim_peer *peer;
    } u;
    int64_t seq;         /* mark, copy, wait_copies: a copy's number (copies_queued) */
    int64_t count;       /* nonzero */
    int64_t *nonzero_out; /* nonzero */
    ga_fault_record *rec; /* index_checked: where the outcome goes, or NULL */
    ga_op_stamp *stamp;  /* the profiler's, or NULL (ga_sim_stamp_tasks) */
} task;

typedef struct sim_queue {
    ga_mutex mu;
    ga_cond work; /* a task was queued */
    ga_cond idle; /* pending dropped to 0 */
    task *head, *tail;
    int started;
    int64_t pending; /* queued or running */
    int held;        /* ga_sim_hold: a gate task keeps the worker waiting */
    int err_status;  /* first failure since the last report, GA_OK if none */
    char err_msg[1024];
} sim_queue;

static sim_queue queues[GA_MAX_DEVICES];
/* Each device's copy queue (copy_d2h_async), with a worker of its own. */
static sim_queue copy_queues[GA_MAX_DEVICES];
/* Between a device's compute queue and its copy queue, under xq_mu (xq_cv wakes the
 * waiters): each copy is numbered as it is queued, its mark on the compute queue
 * carries the same number, and each worker publishes how far it got (the compute
 * worker the last mark it passed, the copy worker the last copy it made). The number
 * is taken and both tasks queued under xq_mu, so both queues hold them in order. */
static ga_mutex xq_mu = GA_MUTEX_INIT;
static ga_cond xq_cv = GA_COND_INIT;
static int64_t copies_queued[GA_MAX_DEVICES], marks_reached[GA_MAX_DEVICES],
    copies_done[GA_MAX_DEVICES];
static ga_mutex start_mu = GA_MUTEX_INIT;
static GA_THREAD_LOCAL ga_op_stamp *stamp_next; /* ga_sim_stamp_tasks */
/* How many simulated GPUs the core made (set_device_count, when it chose this backend,
 * before any queue starts): the workers share the CPU's threads among them. Told
 * rather than asked, so the backend never calls up into the device registry. */
static int sim_ndevices;
/* Peer copies: their two halves enter the two queues under pair_mu, so all pairs are
 * queued in one global order and no two workers can wait for each other in a cycle
 * (each waits only for a pair queued before the one it holds). peer_mu and peer_cv
 * serve every pair's meeting. */
static ga_mutex pair_mu = GA_MUTEX_INIT;
static ga_mutex peer_mu = GA_MUTEX_INIT;
static ga_cond peer_cv = GA_COND_INIT;

void
ga_sim_stamp_tasks(ga_op_stamp *s)
{
    stamp_next = s;
}

static void
event_release(sim_event *ev)
{
    if (__atomic_sub_fetch(&ev->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        free(ev);
    }
}

/* A worker reaches its half of a peer copy: the second to arrive copies (outside the
 * lock, so pairs of other devices go on) and wakes the first. */
static void
peer_meet(sim_peer *p)
{
    ga_mutex_lock(&peer_mu);
    int second = ++p->arrived == 2;
    ga_mutex_unlock(&peer_mu);
    if (second) {
        memcpy(p->dst, p->src, p->nbytes);
        ga_mutex_lock(&peer_mu);
        p->done = 1;
        ga_cond_broadcast(&peer_cv);
    } else {
        ga_mutex_lock(&peer_mu);
        while (!p->done) {
            ga_cond_wait(&peer_cv, &peer_mu);
        }
    }
    int last = --p->refs == 0;
    ga_mutex_unlock(&peer_mu);
    if (last) {
        free(p);
    }
}

/* Wait under xq_mu until *counter reaches `seq`. */
static void
xq_wait(const int64_t *counter, int64_t seq)
{
    ga_mutex_lock(&xq_mu);
    while (*counter < seq) {
        ga_cond_wait(&xq_cv, &xq_mu);
    }
    ga_mutex_unlock(&xq_mu);
}

static void
xq_publish(int64_t *counter, int64_t seq)
{
    ga_mutex_lock(&xq_mu);
    *counter = seq;
    ga_cond_broadcast(&xq_cv);
    ga_mutex_unlock(&xq_mu);
}

static int
run_task(int dev, sim_queue *q, task *t)
{
    switch (t->kind) {
    case TASK_GATE:
        ga_mutex_lock(&q->mu);
        while (q->held) {
            ga_cond_wait(&q->work, &q->mu);
        }
        ga_mutex_unlock(&q->mu);
        return GA_OK;
    case TASK_ELEMENTWISE:
        return ga_cpu_elementwise(dev, t->op, &t->u.loop);
    case TASK_FUSED:
        return ga_cpu_fused(dev, &t->u.fused.prog, &t->u.fused.loop);
    case TASK_FUSED_REDUCE:
        return ga_cpu_fused_reduce(dev, &t->u.fused.prog, &t->u.fused.loop,
                                   &t->u.fused.reduce);
    case TASK_REDUCE:
        return ga_cpu_reduce(dev, &t->u.reduce);
    case TASK_SCAN:
        return ga_cpu_scan(dev, &t->u.scan);
    case TASK_GEMM:
        return ga_cpu_gemm(dev, &t->u.gemm);
    case TASK_RANDOM:
        return ga_cpu_random(dev, &t->u.random);
    case TASK_GATHER:
        return ga_cpu_gather(dev, &t->u.index);
    case TASK_SCATTER:
        return ga_cpu_scatter(dev, &t->u.index);
    case TASK_NONZERO:
        return ga_cpu_nonzero(dev, &t->u.loop, t->count, t->nonzero_out);
    case TASK_ARANGE:
        return ga_cpu_arange(dev, &t->u.arange);
    case TASK_FFT:
        return ga_cpu_fft_cached(dev, &t->u.fft);
    case TASK_COPY:
        memcpy(t->u.copy.dst, t->u.copy.src, t->u.copy.nbytes);
        free(t->u.copy.owned);
        return GA_OK;
    case TASK_PEER:
        peer_meet(t->u.peer);
        return GA_OK;
    case TASK_MARK:
        xq_publish(&marks_reached[dev], t->seq);
        return GA_OK;
    case TASK_COPY_QUEUED:
        xq_wait(&marks_reached[dev], t->seq);
        if (t->stamp != NULL) {
            /* the profiler's copy starts once the compute queue reached its mark (the
             * data is ready), not when this worker began to wait for it */
            __atomic_store_n(&t->stamp->start_ns, ga_monotonic_ns(), __ATOMIC_RELAXED);
        }
        memcpy(t->u.copy.dst, t->u.copy.src, t->u.copy.nbytes);
        xq_publish(&copies_done[dev], t->seq);
        return GA_OK;
    case TASK_WAIT_COPIES:
        xq_wait(&copies_done[dev], t->seq);
        return GA_OK;
    case TASK_FREE:
        ga_host_free(1 + dev, t->u.block.ptr, t->u.block.nbytes);
        return GA_OK;
    case TASK_EVENT:
        t->u.event->ns = ga_monotonic_ns();
        __atomic_store_n(&t->u.event->done, 1, __ATOMIC_RELEASE);
        return GA_OK;
    }
    return GA_OK;
}

typedef struct {
    int dev;
    int share;
    sim_queue *q;
} worker_arg;

static void *
worker_main(void *arg)
{
    worker_arg a = *(worker_arg *)arg;
    free(arg);
    sim_queue *q = a.q;
    ga_cpu_set_thread_share(a.share);
    for (;;) {
        ga_mutex_lock(&q->mu);
        while (q->head == NULL) {
            ga_cond_wait(&q->work, &q->mu);
        }
        task *t = q->head;
        q->head = t->next;
        if (q->head == NULL) {
            q->tail = NULL;
        }
        ga_mutex_unlock(&q->mu);

        ga_op_stamp *stamp = t->stamp;
        if (stamp != NULL && __atomic_load_n(&stamp->start_ns, __ATOMIC_RELAXED) == 0) {
            __atomic_store_n(&stamp->start_ns, ga_monotonic_ns(), __ATOMIC_RELAXED);
        }
        int st = run_task(a.dev, q, t);
        if (stamp != NULL) {
            __atomic_store_n(&stamp->end_ns, ga_monotonic_ns(), __ATOMIC_RELAXED);
        }
        if (t->rec != NULL) {
            /* the operation's own outcome, filled before `pending` drops, so a wait
             * for the queue sees it; the failure belongs to the operation's results
             * (the core marks them), not to the device */
            if (st != GA_OK) {
                t->rec->status = st;
                snprintf(t->rec->message, sizeof(t->rec->message), "%s",
                         ga_error_message());
            }
            __atomic_store_n(&t->rec->state,
                             (int32_t)(st == GA_OK ? GA_FAULT_OK : GA_FAULT_FAILED),
                             __ATOMIC_RELEASE);
            st = GA_OK;
        }

        ga_mutex_lock(&q->mu);
        if (st != GA_OK && q->err_status == GA_OK) {
            q->err_status = st;
            snprintf(q->err_msg, sizeof(q->err_msg), "%s", ga_error_message());
        }
        if (--q->pending == 0 || t->kind == TASK_EVENT) {
            ga_cond_broadcast(&q->idle); /* sim_event_synchronize waits on it too */
        }
        ga_mutex_unlock(&q->mu);
        if (t->kind == TASK_EVENT) {
            event_release(t->u.event);
        }
        free(t);
    }
    return NULL;
}

/* Wait until the work queued so far on every device is done before fork(): the child
 * has none of the workers, so it must start with empty queues (and fresh locks). */
static void
before_fork(void)
{
    for (int d = 0; d < 2 * GA_MAX_DEVICES; d++) {
        sim_queue *q = d < GA_MAX_DEVICES ? &queues[d] : &copy_queues[d - GA_MAX_DEVICES];
        if (!q->started) {
            continue;
        }
        ga_mutex_lock(&q->mu);
        while (q->pending > 0) {
            ga_cond_wait(&q->idle, &q->mu);
        }
        ga_mutex_unlock(&q->mu);
    }
}

static void
after_fork_child(void)
{
    for (int d = 0; d < 2 * GA_MAX_DEVICES; d++) {
        sim_queue *q = d < GA_MAX_DEVICES ? &queues[d] : &copy_queues[d - GA_MAX_DEVICES];
        if (!q->started) {
            continue;
        }
        ga_mutex_reset(&q->mu);
        ga_cond_reset(&q->work);
        ga_cond_reset(&q->idle);
        q->head = q->tail = NULL;
        q->pending = 0;
        q->started = 0;
    }
    /* another thread of the parent may have held them (no pair is in flight: the
     * queues were drained before the fork, so every mark and copy has run) */
    ga_mutex_reset(&pair_mu);
    ga_mutex_reset(&peer_mu);
    ga_cond_reset(&peer_cv);
    ga_mutex_reset(&xq_mu);
    ga_cond_reset(&xq_cv);
}

/* Queue `q` of `dev` (its compute queue, or with `copies` its copy queue), its
 * worker started on first use. The copy worker only copies memory: one thread. */
static int
start_queue(int dev, int copies, sim_queue **out)
{
    sim_queue *q = copies ? &copy_queues[dev] : &queues[dev];
    *out = q;
    if (q->started) {
        return GA_OK;
    }
    ga_mutex_lock(&start_mu);
    static int atfork_done;
    if (!atfork_done) {
        ga_atfork(before_fork, NULL, after_fork_child);
        atfork_done = 1;
    }
    if (!q->started) {
        ga_mutex_init(&q->mu);
        ga_cond_init(&q->work);
        ga_cond_init(&q->idle);
        q->head = q->tail = NULL;
        q->pending = 0;
        q->err_status = GA_OK;
        int ngpus = sim_ndevices;
        int share = copies ? 1 : ga_cpu_num_threads() / (ngpus > 0 ? ngpus : 1);
        worker_arg *a = malloc(sizeof(*a));
        int ok = a != NULL;
        if (ok) {
            a->dev = dev;
            a->share = share < 1 ? 1 : share;
            a->q = q;
            ok = ga_thread_start_detached(worker_main, a, 8 << 20);
            if (!ok) {
                free(a);
            }
        }
        if (!ok) {
            ga_mutex_unlock(&start_mu);
            return ga_error(GA_ERR_RUNTIME, "could not start the %s thread of simulated "
                            "gpu(%d)", copies ? "copy" : "worker", dev);
        }
        q->started = 1;
    }
    ga_mutex_unlock(&start_mu);
    return GA_OK;
}

static int
queue_of(int dev, sim_queue **out)
{
    return start_queue(dev, 0, out);
}

/* Append t to q (started). */
static void
push(sim_queue *q, task *t)
{
    t->next = NULL;
    ga_mutex_lock(&q->mu);
    if (q->tail != NULL) {
        q->tail->next = t;
    }
    else {
        q->head = t;
    }
    q->tail = t;
    q->pending++;
    ga_cond_signal(&q->work);
    ga_mutex_unlock(&q->mu);
}

static int
enqueue(int dev, task *t)
{
    sim_queue *q;
    int st = queue_of(dev, &q);
    if (st != GA_OK) {
        free(t);
        return st;
    }
    push(q, t);
    return GA_OK;
}

static task *
new_task(task_kind kind)
{
    task *t = malloc(sizeof(*t));
    if (t != NULL) {
        t->kind = kind;
        t->op = 0;
        t->rec = NULL;
        t->seq = 0;
        t->stamp = stamp_next;
    }
    return t;
}

#define NEW_TASK(t, kind)                                                              \
    task *t = new_task(kind);                                                          \
    if (t == NULL) {                                                                   \
        return ga_error(GA_ERR_NOMEM, "out of host memory queuing work on gpu(%d)", dev); \
    }

/* Wait until everything queued on `dev` is done. With `report`, hand back (and forget)
 * the first failure of that work. */
static int
wait_queue(sim_queue *q, int dev, int report)
{
    if (!q->started) {
        return GA_OK;
    }
    /* the GIL goes while the host waits, as in the CUDA backend (its wait hooks):
     * other Python threads run, and one of them may be what the queue waits for */
    void *token = ga_host_work_begin();
    ga_mutex_lock(&q->mu);
    while (q->pending > 0) {
        ga_cond_wait(&q->idle, &q->mu);
    }
    int st = GA_OK;
    char msg[sizeof(q->err_msg)];
    if (report && q->err_status != GA_OK) {
        st = q->err_status;
        snprintf(msg, sizeof(msg), "%s", q->err_msg);
        q->err_status = GA_OK;
    }
    ga_mutex_unlock(&q->mu);
    ga_host_work_end(token);
    if (st != GA_OK) {
        return ga_error(st, "%s (raised by work queued earlier on gpu(%d), reported at "
                            "the next synchronizing call)",
                        msg, dev);
    }
    return GA_OK;
}

static int
wait_idle(int dev, int report)
{
    return wait_queue(&queues[dev], dev, report);
}

int
ga_sim_hold(int dev, int copies, int hold)
{
    sim_queue *q;
    GA_TRY(start_queue(dev, copies, &q));
    if (hold) {
        NEW_TASK(t, TASK_GATE);
        ga_mutex_lock(&q->mu);
        q->held = 1;
        ga_mutex_unlock(&q->mu);
        push(q, t);
        return GA_OK;
    }
    ga_mutex_lock(&q->mu);
    q->held = 0;
    ga_cond_broadcast(&q->work);
    ga_mutex_unlock(&q->mu);
    return GA_OK;
}

int64_t
ga_sim_pending(int dev)
{
    if (dev < 0 || dev >= GA_MAX_DEVICES || !queues[dev].started) {
        return 0;
    }
    sim_queue *q = &queues[dev];
    ga_mutex_lock(&q->mu);
    int64_t n = q->pending;
    ga_mutex_unlock(&q->mu);
    return n;
}

/* --- the backend table ------------------------------------------------------- */

static void
sim_set_device_count(int count)
{
    sim_ndevices = count;
}

static int
sim_count(int *count)
{
    *count = 1; /* the core decides the count from the environment */
    return GA_OK;
}

static int
sim_props(int dev, ga_device_props *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "simulated GPU %d (host memory, CPU kernels)",
             dev);
    return GA_OK;
}

/* The whole device: its compute queue and its copy queue (cudaDeviceSynchronize). */
static int
sim_synchronize(int dev)
{
    GA_TRY(wait_idle(dev, 1));
    return wait_queue(&copy_queues[dev], dev, 1);
}

static int
sim_alloc(int dev, size_t nbytes, void **ptr)
{
    if (ga_host_alloc(1 + dev, nbytes, ptr, 0) == GA_OK) {
        return GA_OK;
    }
    /* out of memory: the cache may go back to the system once no queued work uses it */
    wait_idle(dev, 0);
    return ga_host_alloc(1 + dev, nbytes, ptr, 1);
}

static void
sim_free(int dev, void *ptr, size_t nbytes)
{
    sim_queue *q = &queues[dev];
    if (ga_host_free_to_cache(1 + dev, ptr, nbytes)) {
        return;
    }
    if (q->started) {
        task *t = new_task(TASK_FREE);
        if (t != NULL) {
            t->u.block.ptr = ptr;
            t->u.block.nbytes = nbytes;
            if (enqueue(dev, t) == GA_OK) {
                return;
            }
        }
        /* no memory for a task: free once the queue is done with the block */
        wait_idle(dev, 0);
    }
    ga_host_free(1 + dev, ptr, nbytes);
}

static int
sim_stats(int dev, ga_memory_stats *out)
{
    wait_idle(dev, 0); /* queued frees count */
    ga_host_stats(1 + dev, out);
    return GA_OK;
}

static int
sim_empty_cache(int dev)
{
    wait_idle(dev, 0);
    return ga_host_empty_cache(1 + dev);
}

/* Up to this many bytes, a copy from the host is staged and queued; above it, the
 * host waits for the queue and copies (no second copy of a large upload in memory). */
#define SIM_STAGE_MAX ((size_t)64 << 20)

static int
sim_copy_h2d(int dev, void *dst, const void *src, size_t nbytes)
{
    /* The destination may be read or written by queued work (a block freed to the
     * cache is handed on at once), and the source is the caller's, valid only during
     * this call: copy the source now into a buffer the queue owns and queue the
     * copy into dst, as CUDA stages pageable memory before cudaMemcpyAsync returns.
     * The host goes on at once. */
    task *t = nbytes <= SIM_STAGE_MAX ? new_task(TASK_COPY) : NULL;
    void *staged = t != NULL ? malloc(nbytes ? nbytes : 1) : NULL;
    if (staged == NULL) {
        free(t);
        wait_idle(dev, 0);
        memcpy(dst, src, nbytes);
        return GA_OK;
    }
    memcpy(staged, src, nbytes);
    t->u.copy.dst = dst;
    t->u.copy.src = staged;
    t->u.copy.nbytes = nbytes;
    t->u.copy.owned = staged;
    int st = enqueue(dev, t); /* on failure t is freed, staged is still ours */
    if (st != GA_OK) {
        free(staged);
    }
    return st;
}

static int
sim_copy_d2h(int dev, void *dst, const void *src, size_t nbytes)
{
    GA_TRY(wait_idle(dev, 1));
    memcpy(dst, src, nbytes);
    return GA_OK;
}

static int
sim_copy_d2d(int dev, void *dst, const void *src, size_t nbytes)
{
    NEW_TASK(t, TASK_COPY);
    t->u.copy.dst = dst;
    t->u.copy.src = src;
    t->u.copy.nbytes = nbytes;
    t->u.copy.owned = NULL;
    return enqueue(dev, t);
}

/* x.to(cpu(), non_blocking=True): a mark on the compute queue and the copy on the
 * copy queue, which starts once the compute worker passed the mark (the work that
 * writes `src` is done) and runs beside the compute queue's later work. The core
 * waits for an event on the copy queue (copies_event_record) before the host touches
 * `dst`, and calls wait_copies before `src` is written again or freed. */
static int
sim_copy_d2h_async(int dev, void *dst, const void *src, size_t nbytes)
{
    sim_queue *q, *cq;
    GA_TRY(queue_of(dev, &q));
    GA_TRY(start_queue(dev, 1, &cq));
    task *mark = new_task(TASK_MARK), *copy = new_task(TASK_COPY_QUEUED);
    if (mark == NULL || copy == NULL) {
        free(mark);
        free(copy);
        return ga_error(GA_ERR_NOMEM, "out of host memory queuing work on gpu(%d)", dev);
    }
    mark->stamp = NULL; /* the profiler's span is the copy's */
    copy->u.copy.dst = dst;
    copy->u.copy.src = src;
    copy->u.copy.nbytes = nbytes;
    copy->u.copy.owned = NULL;
    ga_mutex_lock(&xq_mu);
    mark->seq = copy->seq = ++copies_queued[dev];
    push(q, mark);
    push(cq, copy);
    ga_mutex_unlock(&xq_mu);
    return GA_OK;
}

/* Later work on dev's compute queue waits for the copies queued so far (none: no
 * task). No host wait. */
static int
sim_wait_copies(int dev)
{
    sim_queue *q;
    GA_TRY(queue_of(dev, &q));
    NEW_TASK(t, TASK_WAIT_COPIES);
    t->stamp = NULL;
    ga_mutex_lock(&xq_mu);
    t->seq = copies_queued[dev];
    if (copies_done[dev] >= t->seq) {
        ga_mutex_unlock(&xq_mu);
        free(t);
        return GA_OK;
    }
    push(q, t);
    ga_mutex_unlock(&xq_mu);
    return GA_OK;
}

static int
sim_copy_peer(int dst_dev, void *dst, int src_dev, const void *src, size_t nbytes)
{
    if (dst_dev == src_dev) {
        return sim_copy_d2d(dst_dev, dst, src, nbytes);
    }
    /* both workers first: once one half is queued the other must be (enqueue fails
     * only when a worker cannot start) */
    sim_queue *q;
    GA_TRY(queue_of(src_dev, &q));
    GA_TRY(queue_of(dst_dev, &q));
    sim_peer *p = malloc(sizeof(*p));
    task *a = new_task(TASK_PEER), *b = new_task(TASK_PEER);
    if (p == NULL || a == NULL || b == NULL) {
        free(p);
        free(a);
        free(b);
        return ga_error(GA_ERR_NOMEM, "out of host memory queuing a copy from gpu(%d) to "
                        "gpu(%d)", src_dev, dst_dev);
    }
    p->dst = dst;
    p->src = src;
    p->nbytes = nbytes;
    p->arrived = p->done = 0;
    p->refs = 2;
    a->u.peer = b->u.peer = p;
    ga_mutex_lock(&pair_mu);
    (void)enqueue(src_dev, a); /* both queues are started: cannot fail */
    (void)enqueue(dst_dev, b);
    ga_mutex_unlock(&pair_mu);
    return GA_OK;
}

static int
sim_elementwise(int dev, int op, const ga_loop *loop)
{
    NEW_TASK(t, TASK_ELEMENTWISE);
    t->op = op;
    t->u.loop = *loop;
    return enqueue(dev, t);
}

static int
sim_fused(int dev, const ga_fused_prog *prog, const ga_loop *loop)
{
    NEW_TASK(t, TASK_FUSED);
    t->u.fused.loop = *loop;
    t->u.fused.prog = *prog;
    return enqueue(dev, t);
}

static int
sim_fused_reduce(int dev, const ga_fused_prog *prog, const ga_loop *loop,
                 const ga_reduce_desc *r)
{
    NEW_TASK(t, TASK_FUSED_REDUCE);
    t->u.fused.loop = *loop;
    t->u.fused.prog = *prog;
    t->u.fused.reduce = *r;
    return enqueue(dev, t);
}

static int
sim_reduce(int dev, const ga_reduce_desc *r)
{
    NEW_TASK(t, TASK_REDUCE);
    t->u.reduce = *r;
    return enqueue(dev, t);
}

static int
sim_scan(int dev, const ga_scan_desc *s)
{
    NEW_TASK(t, TASK_SCAN);
    t->u.scan = *s;
    return enqueue(dev, t);
}

static int
sim_gemm(int dev, const ga_gemm_desc *g)
{
    NEW_TASK(t, TASK_GEMM);
    t->u.gemm = *g;
    return enqueue(dev, t);
}

static int
sim_random(int dev, const ga_random_desc *r)
{
    NEW_TASK(t, TASK_RANDOM);
    t->u.random = *r;
    return enqueue(dev, t);
}

static int
sim_gather(int dev, const ga_index_desc *d)
{
    NEW_TASK(t, TASK_GATHER);
    t->u.index = *d;
    return enqueue(dev, t);
}

static int
sim_scatter(int dev, const ga_index_desc *d)
{
    NEW_TASK(t, TASK_SCATTER);
    t->u.index = *d;
    return enqueue(dev, t);
}

static int
sim_index_checked(int dev, const ga_index_desc *d, int scatter, ga_fault_record *rec)
{
    NEW_TASK(t, scatter ? TASK_SCATTER : TASK_GATHER);
    t->u.index = *d;
    t->rec = rec;
    return enqueue(dev, t);
}

static int
sim_nonzero(int dev, const ga_loop *mask, int64_t count, int64_t *out)
{
    NEW_TASK(t, TASK_NONZERO);
    t->u.loop = *mask;
    t->count = count;
    t->nonzero_out = out;
    return enqueue(dev, t);
}

static int
sim_arange(int dev, const ga_arange_desc *d)
{
    NEW_TASK(t, TASK_ARANGE);
    t->u.arange = *d;
    return enqueue(dev, t);
}

static int
sim_fft(int dev, const ga_fft_desc *d)
{
    NEW_TASK(t, TASK_FFT);
    t->u.fft = *d;
    return enqueue(dev, t);
}

/* Sorting runs on the calling thread after the queue drains: correct in stream order,
 * but not queued (a queued sort is left for later; it is no lesson of the chapter). */
static int
sim_sort(int dev, const ga_sort_desc *d)
{
    GA_TRY(wait_idle(dev, 1));
    return ga_cpu_sort(dev, d);
}

static int
sim_searchsorted(int dev, const ga_search_desc *d)
{
    GA_TRY(wait_idle(dev, 1));
    return ga_cpu_searchsorted(dev, d);
}

/* The factorisations too run after the queue drains, on the CPU's LAPACK driver. */
static int
sim_linalg(int dev, const ga_linalg_desc *d)
{
    GA_TRY(wait_idle(dev, 1));
    return ga_cpu_linalg(dev, d);
}

/* Timing events (ABI 9): a task whose timestamp the worker takes when it gets there;
 * on the copy queue with `copies` (ABI 12). */
static int
record_on(int dev, int copies, void **out)
{
    sim_queue *q;
    GA_TRY(start_queue(dev, copies, &q));
    sim_event *ev = malloc(sizeof(*ev));
    if (ev == NULL) {
        return ga_error(GA_ERR_NOMEM, "out of host memory for an event on gpu(%d)", dev);
    }
    ev->q = q;
    ev->refs = 2; /* the caller's and the task's */
    ev->done = 0;
    ev->ns = 0;
    task *t = new_task(TASK_EVENT);
    if (t == NULL) {
        free(ev);
        return ga_error(GA_ERR_NOMEM, "out of host memory queuing work on gpu(%d)", dev);
    }
    t->u.event = ev;
    push(q, t);
    *out = ev;
    return GA_OK;
}

static int
sim_event_record(int dev, void **out)
{
    return record_on(dev, 0, out);
}

static int
sim_copies_event_record(int dev, void **out)
{
    return record_on(dev, 1, out);
}

static int
sim_event_query(int dev, void *ev, int *done)
{
    (void)dev;
    *done = __atomic_load_n(&((sim_event *)ev)->done, __ATOMIC_ACQUIRE);
    return GA_OK;
}

static int
sim_event_synchronize(int dev, void *ev)
{
    (void)dev;
    sim_event *e = ev;
    sim_queue *q = e->q;
    void *token = ga_host_work_begin(); /* as wait_idle */
    ga_mutex_lock(&q->mu);
    while (!__atomic_load_n(&e->done, __ATOMIC_ACQUIRE)) {
        ga_cond_wait(&q->idle, &q->mu);
    }
    ga_mutex_unlock(&q->mu);
    ga_host_work_end(token);
    return GA_OK;
}

static int
sim_event_elapsed(int dev, void *start, void *end, double *ms)
{
    (void)dev;
    int64_t from = start != NULL ? ((sim_event *)start)->ns : 0; /* NULL: the host's */
    *ms = (double)(((sim_event *)end)->ns - from) / 1e6;
    return GA_OK;
}

static void
sim_event_destroy(int dev, void *ev)
{
    (void)dev;
    event_release(ev);
}

const ga_backend ga_backend_simulated = {
    .abi_version = GA_BACKEND_ABI_VERSION,
    .name = "simulated",
    .device_count = sim_count,
    .device_props = sim_props,
    .synchronize = sim_synchronize,
    .alloc = sim_alloc,
    .free = sim_free,
    .memory_stats = sim_stats,
    .empty_cache = sim_empty_cache,
    .copy_h2d = sim_copy_h2d,
    .copy_d2h = sim_copy_d2h,
    .copy_d2d = sim_copy_d2d,
    .copy_peer = sim_copy_peer,
    .elementwise = sim_elementwise,
    .reduce = sim_reduce,
    .scan = sim_scan,
    .gemm = sim_gemm,
    .random = sim_random,
    .gather = sim_gather,
    .scatter = sim_scatter,
    .nonzero = sim_nonzero,
    .arange = sim_arange,
    .sort = sim_sort,
    .searchsorted = sim_searchsorted,
    .linalg = sim_linalg,
    .fft = sim_fft,
    .index_checked = sim_index_checked,
    .event_record = sim_event_record,
    .event_query = sim_event_query,
    .event_synchronize = sim_event_synchronize,
    .event_elapsed = sim_event_elapsed,
    .event_destroy = sim_event_destroy,
    .copy_d2h_async = sim_copy_d2h_async,
    .copies_event_record = sim_copies_event_record,
    .wait_copies = sim_wait_copies,
    .set_wait_hooks = ga_host_set_wait_hooks, /* its host waits use the CPU's hooks */
    .fused = sim_fused,
    .fused_reduce = sim_fused_reduce,
    .set_device_count = sim_set_device_count,
    .pending_work = ga_sim_pending,
    .hold_queue = ga_sim_hold,
    .stamp_tasks = ga_sim_stamp_tasks,
};
