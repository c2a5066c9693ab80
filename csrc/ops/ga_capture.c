/* ga_capture.c: record a step's compute calls once, replay them without Python
 * (ga_capture.h; docs/DESIGN.md, "Captured steps").
 *
 * Written by hand rather than with CUDA graphs alone: the plan must run on every
 * device kind (the CPU and simulated GPUs have no graphs), and one recorder at the
 * backend table serves all of them. On CUDA the first replay of a plan whose every
 * call is a launch on one GPU is captured into a CUDA graph (the backend's graph_*
 * entries), and later replays launch the graph: one launch per step ("graphs" below).
 *
 * The recorder sits above the registry and the storages and is reached through
 * hooks they call (ga_devices_set_backend_filter, ga_storage_set_watch,
 * ga_device_set_work_watch), so that runtime/ never calls up into ops/. */
#include "ga_capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_backend.h"
#include "ga_copy_queue.h"
#include "ga_creation.h" /* the random state */
#include "ga_device.h"
#include "ga_error.h"
#include "ga_fault.h"
#include "ga_perf_model.h"
#include "ga_platform.h"
#include "ga_philox.h" /* ga_random_words */
#include "ga_profiler.h"

typedef enum {
    P_ELEMENTWISE,
    P_REDUCE,
    P_SCAN,
    P_GEMM,
    P_RANDOM,
    P_GATHER,
    P_SCATTER,
    P_INDEX_CHECKED,
    P_ARANGE,
    P_SORT,
    P_SEARCH,
    P_LINALG,
    P_FFT,
    P_FUSED,
    P_FUSED_REDUCE,
    P_COPY_D2D,
    P_COPY_H2D,
    P_COPY_PEER,
} plan_kind;

/* The tables a recording wraps: slot 0 the CPU's, slot 1 the GPU backend's (one per
 * process). */
#define NSLOTS 2

typedef struct {
    int32_t kind; /* plan_kind */
    int32_t slot; /* which real table */
    int32_t dev;  /* the backend-local device */
    int32_t op;   /* elementwise op; scatter flag of P_INDEX_CHECKED */
    void *desc;   /* a copy of the descriptor (ga_loop, ga_reduce_desc, ...) */
    void *desc2;  /* fused: the loop (desc is the program); fused_reduce: the loop */
    void *desc3;  /* fused_reduce: the reduction */
    /* copies: dst, src (P_COPY_H2D: the plan's own copy of the host bytes), bytes,
     * and the source device of a peer copy */
    void *dst;
    const void *src;
    size_t nbytes;
    int32_t src_dev;
    /* P_INDEX_CHECKED: what the fault names, the storage it writes, and the storages
     * written after it (its failure flows into them, as the core's flows would) */
    char what[64];
    ga_storage *target;
    ga_storage **flow;
    int32_t nflow;
} plan_op;

struct ga_plan {
    char name[96];
    plan_op *ops;
    int64_t nops, cap;
    /* every storage the plan holds a reference to; `older` marks those made before
     * the recording (the others are its own temporaries) */
    ga_storage **held;
    unsigned char *older;
    int64_t nheld, capheld;
    uint64_t mark;
    uint64_t draws;
    /* what the devices counted, and the modeled work, per device slot (0 the CPU) */
    int64_t work[1 + GA_MAX_DEVICES][GA_WORK_NKINDS];
    double model_s[1 + GA_MAX_DEVICES];
    int uses_cpu; /* an operation runs on the CPU's table */
    int refused;
    char reason[256];
    /* the plan as a CUDA graph: 0 not tried, 1 made (graph), -1 not possible (why) */
    int graph_state;
    int graph_dev;
    void *graph;
    char graph_why[200];
    /* a graph's random calls: the generator's {seed, counter base} in the device's
     * memory (written before each launch), and each call's counter offset from the
     * base, which the graph holds (valid while a launch's base aligns them alike) */
    ga_storage *graph_rng;
    uint64_t *graph_offsets;
    int64_t graph_nrandom;
};

/* This thread's recording, or NULL; or its paused recording (ga_capture_pause). */
static GA_THREAD_LOCAL ga_plan *recording;
static GA_THREAD_LOCAL ga_plan *paused;
/* Threads recording (paused ones too); under the GIL. */
static int recorders;
static GA_THREAD_LOCAL uint64_t rec_counter0;
static uint64_t next_mark = 1; /* under the GIL */

static const ga_backend *real_be[NSLOTS];
static ga_backend wrap_be[NSLOTS];

/* --- the plan's lists --------------------------------------------------------- */

static int
hold(ga_plan *p, ga_storage *s, int older)
{
    if (s->capture_mark == p->mark) {
        return GA_OK;
    }
    if (p->nheld == p->capheld) {
        int64_t cap = p->capheld ? 2 * p->capheld : 64;
        ga_storage **h = (ga_storage **)realloc(p->held, (size_t)cap * sizeof(*h));
        if (h == NULL) {
            return GA_ERR_NOMEM;
        }
        p->held = h;
        unsigned char *o = (unsigned char *)realloc(p->older, (size_t)cap);
        if (o == NULL) {
            return GA_ERR_NOMEM;
        }
        p->older = o;
        p->capheld = cap;
    }
    ga_storage_plan_hold(s);
    s->capture_mark = p->mark;
    p->held[p->nheld] = s;
    p->older[p->nheld] = (unsigned char)older;
    p->nheld++;
    return GA_OK;
}

static void
refuse(ga_plan *p, const char *fmt, const char *what)
{
    if (!p->refused) {
        p->refused = 1;
        snprintf(p->reason, sizeof(p->reason), fmt, what);
    }
}

static void
on_new(ga_storage *s)
{
    ga_plan *p = recording;
    if (p != NULL && hold(p, s, 0) != GA_OK) {
        refuse(p, "%s", "out of host memory for the plan's list of blocks");
    }
}

static void
on_reach(ga_storage *s)
{
    ga_plan *p = recording;
    if (p != NULL && s->capture_mark != p->mark && hold(p, s, 1) != GA_OK) {
        refuse(p, "%s", "out of host memory for the plan's list of blocks");
    }
}

static void
on_work(ga_device d, ga_work_kind k, int64_t n)
{
    ga_plan *p = recording;
    if (p == NULL || (unsigned)k >= GA_WORK_NKINDS) {
        return;
    }
    int slot = d.kind == GA_DEV_CPU ? 0 : 1 + (int)d.index;
    if (slot >= 0 && slot <= GA_MAX_DEVICES) {
        p->work[slot][k] += n;
    }
}

static plan_op *
add_op(ga_plan *p, int kind, int slot, int dev)
{
    if (p->nops == p->cap) {
        int64_t cap = p->cap ? 2 * p->cap : 64;
        plan_op *ops = (plan_op *)realloc(p->ops, (size_t)cap * sizeof(*ops));
        if (ops == NULL) {
            refuse(p, "%s", "out of host memory for the plan");
            return NULL;
        }
        p->ops = ops;
        p->cap = cap;
    }
    plan_op *o = &p->ops[p->nops++];
    memset(o, 0, sizeof(*o));
    p->uses_cpu |= slot == 0;
    o->kind = kind;
    o->slot = slot;
    o->dev = dev;
    return o;
}

static void *
dup(ga_plan *p, const void *src, size_t n)
{
    void *d = malloc(n);
    if (d == NULL) {
        refuse(p, "%s", "out of host memory for the plan");
        return NULL;
    }
    memcpy(d, src, n);
    return d;
}

/* The device an operation of table `slot`, device `dev`, runs on. */
static ga_device
device_of(int slot, int dev)
{
    ga_device d;
    d.kind = slot == 0 ? GA_DEV_CPU : GA_DEV_GPU;
    d.index = slot == 0 ? 0 : dev;
    return d;
}

static void
note_model(ga_plan *p, int slot, int dev)
{
    ga_device d = device_of(slot, dev);
    if (d.kind == GA_DEV_GPU && d.index >= 0 && d.index < GA_MAX_DEVICES) {
        p->model_s[1 + d.index] += ga_perf_model_last_work_s(d);
    }
}

/* The held storage whose block holds `ptr`, or NULL. */
static ga_storage *
storage_at(ga_plan *p, const void *ptr)
{
    const char *c = (const char *)ptr;
    for (int64_t i = p->nheld - 1; i >= 0; i--) {
        const char *b = (const char *)p->held[i]->data;
        if (c >= b && c < b + (p->held[i]->nbytes ? p->held[i]->nbytes : 1)) {
            return p->held[i];
        }
    }
    return NULL;
}

/* --- the recording tables ------------------------------------------------------ */

/* Each recorded entry copies its descriptor into the plan, then forwards. */
#define REC_DESC(name, KIND, type)                                                     \
    static int rec_##name(int slot, int dev, const type *d)                            \
    {                                                                                  \
        ga_plan *p = recording;                                                        \
        if (p != NULL) {                                                               \
            plan_op *o = add_op(p, KIND, slot, dev);                                   \
            if (o != NULL) {                                                           \
                o->desc = dup(p, d, sizeof(*d));                                       \
            }                                                                          \
            note_model(p, slot, dev);                                                  \
        }                                                                              \
        return real_be[slot]->name(dev, d);                                            \
    }
REC_DESC(reduce, P_REDUCE, ga_reduce_desc)
REC_DESC(scan, P_SCAN, ga_scan_desc)
REC_DESC(gemm, P_GEMM, ga_gemm_desc)
REC_DESC(gather, P_GATHER, ga_index_desc)
REC_DESC(scatter, P_SCATTER, ga_index_desc)
REC_DESC(arange, P_ARANGE, ga_arange_desc)
REC_DESC(sort, P_SORT, ga_sort_desc)
REC_DESC(searchsorted, P_SEARCH, ga_search_desc)
REC_DESC(linalg, P_LINALG, ga_linalg_desc)
REC_DESC(fft, P_FFT, ga_fft_desc)

static int
rec_elementwise(int slot, int dev, int op, const ga_loop *loop)
{
    ga_plan *p = recording;
    if (p != NULL) {
        plan_op *o = add_op(p, P_ELEMENTWISE, slot, dev);
        if (o != NULL) {
            o->op = op;
            o->desc = dup(p, loop, sizeof(*loop));
        }
        note_model(p, slot, dev);
    }
    return real_be[slot]->elementwise(dev, op, loop);
}

static int
rec_random(int slot, int dev, const ga_random_desc *r)
{
    ga_plan *p = recording;
    if (p != NULL) {
        plan_op *o = add_op(p, P_RANDOM, slot, dev);
        if (o != NULL) {
            o->desc = dup(p, r, sizeof(*r));
        }
        note_model(p, slot, dev);
    }
    return real_be[slot]->random(dev, r);
}

static int
rec_fused(int slot, int dev, const ga_fused_prog *prog, const ga_loop *loop)
{
    ga_plan *p = recording;
    /* a program the backend cannot run is refused before anything is queued: record
     * only what ran */
    int st = real_be[slot]->fused(dev, prog, loop);
    if (p != NULL && st == GA_OK) {
        plan_op *o = add_op(p, P_FUSED, slot, dev);
        if (o != NULL) {
            o->desc = dup(p, prog, sizeof(*prog));
            o->desc2 = dup(p, loop, sizeof(*loop));
        }
        note_model(p, slot, dev);
    }
    return st;
}

static int
rec_fused_reduce(int slot, int dev, const ga_fused_prog *prog, const ga_loop *loop,
                 const ga_reduce_desc *r)
{
    ga_plan *p = recording;
    int st = real_be[slot]->fused_reduce(dev, prog, loop, r);
    if (p != NULL && st == GA_OK) {
        plan_op *o = add_op(p, P_FUSED_REDUCE, slot, dev);
        if (o != NULL) {
            o->desc = dup(p, prog, sizeof(*prog));
            o->desc2 = dup(p, loop, sizeof(*loop));
            o->desc3 = dup(p, r, sizeof(*r));
        }
        note_model(p, slot, dev);
    }
    return st;
}

static int
rec_index_checked(int slot, int dev, const ga_index_desc *d, int scatter,
                  ga_fault_record *fr)
{
    ga_plan *p = recording;
    if (p != NULL) {
        plan_op *o = add_op(p, P_INDEX_CHECKED, slot, dev);
        if (o != NULL) {
            o->op = scatter;
            o->desc = dup(p, d, sizeof(*d));
            /* the gather's result, or the scatter's base */
            o->target = storage_at(p, d->loop.args[scatter ? 1 : 0].data);
            snprintf(o->what, sizeof(o->what), "%s", scatter ? "scatter" : "gather");
        }
        note_model(p, slot, dev);
    }
    return real_be[slot]->index_checked(dev, d, scatter, fr);
}

static int refuse_read(const char *what);

static int
rec_copy_d2d(int slot, int dev, void *dst, const void *src, size_t n)
{
    ga_plan *p = recording;
    /* on the CPU a read to the host is a copy within the device into host memory
     * that no array owns (ga_read_to_host): refused as a copy to the host is */
    if (p != NULL && n > 0 && (storage_at(p, dst) == NULL || storage_at(p, src) == NULL)) {
        return refuse_read("a copy to the host");
    }
    if (p != NULL) {
        plan_op *o = add_op(p, P_COPY_D2D, slot, dev);
        if (o != NULL) {
            o->dst = dst;
            o->src = src;
            o->nbytes = n;
        }
        note_model(p, slot, dev);
    }
    return real_be[slot]->copy_d2d(dev, dst, src, n);
}

static int
rec_copy_h2d(int slot, int dev, void *dst, const void *src, size_t n)
{
    ga_plan *p = recording;
    if (p != NULL) {
        plan_op *o = add_op(p, P_COPY_H2D, slot, dev);
        if (o != NULL) {
            o->dst = dst;
            o->nbytes = n;
            if (storage_at(p, src) != NULL) {
                o->src = src; /* a host array the plan holds: read anew each replay */
            } else {
                o->src = dup(p, src, n ? n : 1); /* host bytes no array owns: kept */
                o->op = 1;                       /* (the plan frees its copy) */
            }
        }
    }
    return real_be[slot]->copy_h2d(dev, dst, src, n);
}

static int
rec_copy_peer(int slot, int dst_dev, void *dst, int src_dev, const void *src, size_t n)
{
    ga_plan *p = recording;
    if (p != NULL) {
        plan_op *o = add_op(p, P_COPY_PEER, slot, dst_dev);
        if (o != NULL) {
            o->dst = dst;
            o->src = src;
            o->nbytes = n;
            o->src_dev = src_dev;
        }
    }
    return real_be[slot]->copy_peer(dst_dev, dst, src_dev, src, n);
}

/* A refusal's message, for a plugin's table: the core takes a failing plugin call's
 * message from the plugin (last_error), which knows nothing of the recorder. */
static GA_THREAD_LOCAL char refusal[384];
static GA_THREAD_LOCAL int refusal_set;

/* What a replay could not repeat: refused while recording, with the door named. */
static int
refuse_read(const char *what)
{
    ga_plan *p = recording;
    if (p != NULL) {
        refuse(p, "%s", what);
        snprintf(refusal, sizeof(refusal),
                 "gpuarr.capture: %s reads values back to the host inside the captured "
                 "step %s; a replay could not see them. Keep the step to array "
                 "operations whose shapes do not depend on values",
                 what, p->name);
        refusal_set = 1;
        return ga_error(GA_ERR_RUNTIME, "%s", refusal);
    }
    return GA_OK;
}

static const char *
last_error_of(int slot)
{
    if (refusal_set) {
        refusal_set = 0;
        return refusal;
    }
    return real_be[slot]->last_error();
}

static const char *
s0_last_error(void)
{
    return last_error_of(0);
}

static const char *
s1_last_error(void)
{
    return last_error_of(1);
}

static int
rec_copy_d2h(int slot, int dev, void *dst, const void *src, size_t n)
{
    GA_TRY(refuse_read("a copy to the host"));
    return real_be[slot]->copy_d2h(dev, dst, src, n);
}

static int
rec_copy_d2h_async(int slot, int dev, void *dst, const void *src, size_t n)
{
    GA_TRY(refuse_read("a copy to the host"));
    return real_be[slot]->copy_d2h_async(dev, dst, src, n);
}

static int
rec_nonzero(int slot, int dev, const ga_loop *mask, int64_t count, int64_t *out)
{
    GA_TRY(refuse_read("nonzero (a result sized by values)"));
    return real_be[slot]->nonzero(dev, mask, count, out);
}

/* One set of entry points per slot, bound to it. */
#define SLOT_ENTRIES(S)                                                                \
    static int s##S##_elementwise(int dev, int op, const ga_loop *l)                   \
    {                                                                                  \
        return rec_elementwise(S, dev, op, l);                                         \
    }                                                                                  \
    static int s##S##_reduce(int dev, const ga_reduce_desc *d)                         \
    {                                                                                  \
        return rec_reduce(S, dev, d);                                                  \
    }                                                                                  \
    static int s##S##_scan(int dev, const ga_scan_desc *d) { return rec_scan(S, dev, d); } \
    static int s##S##_gemm(int dev, const ga_gemm_desc *d) { return rec_gemm(S, dev, d); } \
    static int s##S##_random(int dev, const ga_random_desc *d)                         \
    {                                                                                  \
        return rec_random(S, dev, d);                                                  \
    }                                                                                  \
    static int s##S##_gather(int dev, const ga_index_desc *d)                          \
    {                                                                                  \
        return rec_gather(S, dev, d);                                                  \
    }                                                                                  \
    static int s##S##_scatter(int dev, const ga_index_desc *d)                         \
    {                                                                                  \
        return rec_scatter(S, dev, d);                                                 \
    }                                                                                  \
    static int s##S##_arange(int dev, const ga_arange_desc *d)                         \
    {                                                                                  \
        return rec_arange(S, dev, d);                                                  \
    }                                                                                  \
    static int s##S##_sort(int dev, const ga_sort_desc *d) { return rec_sort(S, dev, d); } \
    static int s##S##_searchsorted(int dev, const ga_search_desc *d)                   \
    {                                                                                  \
        return rec_searchsorted(S, dev, d);                                            \
    }                                                                                  \
    static int s##S##_linalg(int dev, const ga_linalg_desc *d)                         \
    {                                                                                  \
        return rec_linalg(S, dev, d);                                                  \
    }                                                                                  \
    static int s##S##_fft(int dev, const ga_fft_desc *d) { return rec_fft(S, dev, d); } \
    static int s##S##_fused(int dev, const ga_fused_prog *g, const ga_loop *l)         \
    {                                                                                  \
        return rec_fused(S, dev, g, l);                                                \
    }                                                                                  \
    static int s##S##_fused_reduce(int dev, const ga_fused_prog *g, const ga_loop *l,  \
                                   const ga_reduce_desc *r)                            \
    {                                                                                  \
        return rec_fused_reduce(S, dev, g, l, r);                                      \
    }                                                                                  \
    static int s##S##_index_checked(int dev, const ga_index_desc *d, int sc,           \
                                    ga_fault_record *fr)                               \
    {                                                                                  \
        return rec_index_checked(S, dev, d, sc, fr);                                   \
    }                                                                                  \
    static int s##S##_copy_d2d(int dev, void *dst, const void *src, size_t n)          \
    {                                                                                  \
        return rec_copy_d2d(S, dev, dst, src, n);                                      \
    }                                                                                  \
    static int s##S##_copy_h2d(int dev, void *dst, const void *src, size_t n)          \
    {                                                                                  \
        return rec_copy_h2d(S, dev, dst, src, n);                                      \
    }                                                                                  \
    static int s##S##_copy_d2h(int dev, void *dst, const void *src, size_t n)          \
    {                                                                                  \
        return rec_copy_d2h(S, dev, dst, src, n);                                      \
    }                                                                                  \
    static int s##S##_copy_d2h_async(int dev, void *dst, const void *src, size_t n)    \
    {                                                                                  \
        return rec_copy_d2h_async(S, dev, dst, src, n);                                \
    }                                                                                  \
    static int s##S##_copy_peer(int dd, void *dst, int sd, const void *src, size_t n)  \
    {                                                                                  \
        return rec_copy_peer(S, dd, dst, sd, src, n);                                  \
    }                                                                                  \
    static int s##S##_nonzero(int dev, const ga_loop *m, int64_t c, int64_t *out)      \
    {                                                                                  \
        return rec_nonzero(S, dev, m, c, out);                                         \
    }

SLOT_ENTRIES(0)
SLOT_ENTRIES(1)

/* The recording table of `real` in `slot`: a copy of it with each entry that does or
 * reads work replaced (entries the real table lacks stay NULL). */
#define BIND(S, e)                                                                     \
    if (w->e != NULL) {                                                                \
        w->e = s##S##_##e;                                                             \
    }
#define BIND_ALL(S)                                                                    \
    BIND(S, elementwise) BIND(S, reduce) BIND(S, scan) BIND(S, gemm) BIND(S, random)   \
    BIND(S, gather) BIND(S, scatter) BIND(S, arange) BIND(S, sort)                     \
    BIND(S, searchsorted) BIND(S, linalg) BIND(S, fft) BIND(S, fused)                  \
    BIND(S, fused_reduce) BIND(S, index_checked) BIND(S, copy_d2d) BIND(S, copy_h2d)   \
    BIND(S, copy_d2h) BIND(S, copy_d2h_async) BIND(S, copy_peer) BIND(S, nonzero)    \
    BIND(S, last_error)

static const ga_backend *
filter(ga_device d, const ga_backend *be)
{
    if (recording == NULL) {
        return be;
    }
    /* slot 0 the CPU's table, slot 1 the GPUs' (one GPU backend per process) */
    int s = d.kind == GA_DEV_CPU ? 0 : 1;
    if (real_be[s] == NULL) { /* under the GIL: the recording thread holds it */
        ga_backend *w = &wrap_be[s];
        *w = *be;
        if (s == 0) {
            BIND_ALL(0)
        } else {
            BIND_ALL(1)
        }
        real_be[s] = be;
    }
    return real_be[s] == be ? &wrap_be[s] : be;
}

/* --- recording ------------------------------------------------------------------ */

void
ga_capture_pause(void)
{
    if (recording != NULL) {
        paused = recording;
        recording = NULL;
    }
}

void
ga_capture_resume(void)
{
    if (paused != NULL) {
        recording = paused;
        paused = NULL;
    }
}

int
ga_capture_recording(void)
{
    return recording != NULL;
}

int
ga_capture_begin(const char *name)
{
    if (recording != NULL || paused != NULL) {
        ga_plan *r = recording != NULL ? recording : paused;
        return ga_error(GA_ERR_RUNTIME,
                        "gpuarr.capture: %s is called while %s records; a captured "
                        "step cannot record another inside it (call the inner "
                        "function itself)",
                        name, r->name);
    }
    ga_plan *p = (ga_plan *)calloc(1, sizeof(*p));
    if (p == NULL) {
        return ga_error(GA_ERR_NOMEM, "out of host memory for a captured step's plan");
    }
    snprintf(p->name, sizeof(p->name), "%s", name);
    p->mark = next_mark++;
    /* the hooks are in place only while some thread records, so that a process that
     * never records (or no longer does) pays nothing per backend lookup or operation;
     * the storage watch is gated by ga_storage_watching */
    if (recorders++ == 0) {
        ga_devices_set_backend_filter(filter);
        ga_storage_set_watch(on_new, on_reach);
        ga_device_set_work_watch(on_work);
    }
    uint64_t seed;
    ga_random_get_state(&seed, &rec_counter0);
    recording = p;
    __atomic_fetch_add(&ga_storage_watching, 1, __ATOMIC_RELAXED);
    return GA_OK;
}

static ga_plan *
stop(void)
{
    ga_plan *p = recording != NULL ? recording : paused;
    if (p != NULL) {
        recording = NULL;
        paused = NULL;
        refusal_set = 0;
        __atomic_fetch_sub(&ga_storage_watching, 1, __ATOMIC_RELAXED);
        if (--recorders == 0) {
            ga_devices_set_backend_filter(NULL);
            ga_device_set_work_watch(NULL);
        }
    }
    return p;
}

void
ga_capture_abort(void)
{
    ga_plan *p = stop();
    if (p != NULL) {
        ga_plan_free(p);
    }
}

/* The storage an operation writes (the first output), for fault flows. */
static const void *
written_by(const plan_op *o)
{
    switch (o->kind) {
    case P_ELEMENTWISE:
        return ((const ga_loop *)o->desc)->args[0].data;
    case P_REDUCE:
        return ((const ga_reduce_desc *)o->desc)->out;
    case P_SCAN:
        return ((const ga_scan_desc *)o->desc)->out;
    case P_GEMM:
        return ((const ga_gemm_desc *)o->desc)->c;
    case P_RANDOM:
        return ((const ga_random_desc *)o->desc)->out;
    case P_GATHER:
        return ((const ga_index_desc *)o->desc)->loop.args[0].data;
    case P_SCATTER:
        return ((const ga_index_desc *)o->desc)->loop.args[1].data;
    case P_INDEX_CHECKED:
        return ((const ga_index_desc *)o->desc)->loop.args[o->op ? 1 : 0].data;
    case P_ARANGE:
        return ((const ga_arange_desc *)o->desc)->out;
    case P_SORT: {
        const ga_sort_desc *s = (const ga_sort_desc *)o->desc;
        return s->values != NULL ? (const void *)s->values : (const void *)s->indices;
    }
    case P_SEARCH:
        return ((const ga_search_desc *)o->desc)->out;
    case P_LINALG:
        return ((const ga_linalg_desc *)o->desc)->a;
    case P_FFT:
        return ((const ga_fft_desc *)o->desc)->out;
    case P_FUSED:
        return ((const ga_loop *)o->desc2)->args[0].data;
    case P_FUSED_REDUCE:
        return ((const ga_reduce_desc *)o->desc3)->out;
    default:
        return o->dst;
    }
}

int
ga_capture_end(ga_plan **out)
{
    ga_plan *p = stop();
    *out = NULL;
    if (p == NULL) {
        return ga_error(GA_ERR_RUNTIME, "gpuarr.capture: this thread is not recording");
    }
    if (p->refused) {
        int st = ga_error(GA_ERR_RUNTIME,
                          "gpuarr.capture: %s cannot be replayed: %s inside it",
                          p->name, p->reason);
        ga_plan_free(p);
        return st;
    }
    uint64_t seed, counter;
    ga_random_get_state(&seed, &counter);
    p->draws = counter - rec_counter0;
    /* a checked gather's failure flows into what the operations after it write */
    for (int64_t i = 0; i < p->nops; i++) {
        plan_op *o = &p->ops[i];
        if (o->kind != P_INDEX_CHECKED || o->target == NULL) {
            continue;
        }
        o->flow = (ga_storage **)calloc((size_t)(p->nops - i), sizeof(*o->flow));
        if (o->flow == NULL) {
            ga_plan_free(p);
            return ga_error(GA_ERR_NOMEM, "out of host memory for a captured plan");
        }
        for (int64_t j = i + 1; j < p->nops; j++) {
            ga_storage *s = storage_at(p, written_by(&p->ops[j]));
            if (s != NULL && s != o->target) {
                o->flow[o->nflow++] = s;
            }
        }
    }
    *out = p;
    return GA_OK;
}

/* --- replay --------------------------------------------------------------------- */

/* A random call's counter as the uncaptured call takes it from the generator's
 * `counter` (aligned to its words per element, ga_creation.c), which moves past the
 * call's words. */
static uint64_t
take_counter(const plan_op *o, uint64_t *counter)
{
    const ga_random_desc *r = (const ga_random_desc *)o->desc;
    const uint64_t q = (uint64_t)ga_random_words(r->dist, r->dtype);
    const uint64_t at = *counter + (q - *counter % q) % q;
    *counter = at + (uint64_t)r->n * q;
    return at;
}

static int
run_op(const plan_op *o, uint64_t seed, uint64_t counter)
{
    const ga_backend *be = real_be[o->slot];
    int dev = o->dev;
    switch (o->kind) {
    case P_ELEMENTWISE:
        return be->elementwise(dev, o->op, (const ga_loop *)o->desc);
    case P_REDUCE:
        return be->reduce(dev, (const ga_reduce_desc *)o->desc);
    case P_SCAN:
        return be->scan(dev, (const ga_scan_desc *)o->desc);
    case P_GEMM:
        return be->gemm(dev, (const ga_gemm_desc *)o->desc);
    case P_RANDOM: {
        ga_random_desc r = *(const ga_random_desc *)o->desc;
        r.seed = seed;
        r.counter = counter;
        return be->random(dev, &r);
    }
    case P_GATHER:
        return be->gather(dev, (const ga_index_desc *)o->desc);
    case P_SCATTER:
        return be->scatter(dev, (const ga_index_desc *)o->desc);
    case P_INDEX_CHECKED: {
        ga_device d = device_of(o->slot, dev);
        ga_fault *f;
        GA_TRY(ga_fault_begin(d, o->what, &f));
        int st = be->index_checked(dev, (const ga_index_desc *)o->desc, o->op,
                                   ga_fault_record_of(f));
        if (st != GA_OK) {
            ga_fault_cancel(f);
            return st;
        }
        if (o->target == NULL) {
            ga_fault_cancel(f);
            return GA_OK;
        }
        ga_fault_queued(f, o->target);
        for (int32_t k = 0; k < o->nflow; k++) {
            ga_fault_flow_slow(o->flow[k], o->target);
        }
        return GA_OK;
    }
    case P_ARANGE:
        return be->arange(dev, (const ga_arange_desc *)o->desc);
    case P_SORT:
        return be->sort(dev, (const ga_sort_desc *)o->desc);
    case P_SEARCH:
        return be->searchsorted(dev, (const ga_search_desc *)o->desc);
    case P_LINALG:
        return be->linalg(dev, (const ga_linalg_desc *)o->desc);
    case P_FFT:
        return be->fft(dev, (const ga_fft_desc *)o->desc);
    case P_FUSED:
        return be->fused(dev, (const ga_fused_prog *)o->desc, (const ga_loop *)o->desc2);
    case P_FUSED_REDUCE:
        return be->fused_reduce(dev, (const ga_fused_prog *)o->desc,
                                (const ga_loop *)o->desc2,
                                (const ga_reduce_desc *)o->desc3);
    case P_COPY_D2D:
        return be->copy_d2d(dev, o->dst, o->src, o->nbytes);
    case P_COPY_H2D:
        return be->copy_h2d(dev, o->dst, o->src, o->nbytes);
    case P_COPY_PEER:
        return be->copy_peer(dev, o->dst, o->src_dev, o->src, o->nbytes);
    }
    return ga_error(GA_ERR_RUNTIME, "gpuarr.capture: a plan holds an unknown operation");
}

/* --- graphs ------------------------------------------------------------------- *
 *
 * A plan replays as one CUDA graph when every call is a launch on one GPU whose backend
 * makes graphs, with the same arguments at every replay: kernels, cuBLAS calls,
 * copies between blocks the plan holds, and checked gathers and scatters (a cross
 * entropy's), whose failure slots are the graph's own: each launch reports to failure
 * records made for it, as the loop's calls do; and random numbers (a dropout's), whose
 * calls read the generator's seed and counter base from device words written before
 * each launch (ga_random_desc.state), so that every replay draws what the uncaptured
 * step would, as PyTorch's graph-safe generator reads its offset. Not: copies from the
 * host or another device, linear algebra and FFTs (their libraries wait or plan on the
 * host), and anything on the CPU. Such a plan replays as the loop of calls. */

/* The most checked operations a graph launch reports for (the backend's own bound
 * may be lower: its capture then fails, and the plan replays as its calls). */
#define GRAPH_MAX_CHECKED 64

static const char *
not_graphable(const ga_plan *p)
{
    const ga_backend *be = real_be[1];
    if (be == NULL || be->graph_begin == NULL) {
        return "its device makes no CUDA graphs (the CPU and simulated GPUs replay the "
               "calls)";
    }
    if (p->uses_cpu) {
        return "it runs work on the CPU";
    }
    if (p->nops == 0) {
        return "it launches nothing";
    }
    for (int64_t i = 0; i < p->nops; i++) {
        const plan_op *o = &p->ops[i];
        if (o->slot != 1 || o->dev != p->ops[0].dev) {
            return "it runs on more than one device";
        }
        switch (o->kind) {
        case P_COPY_H2D:
            return "it copies from the host";
        case P_COPY_PEER:
            return "it copies from another device";
        case P_LINALG:
            return "it runs linear algebra (cuSOLVER)";
        case P_FFT:
            return "it runs FFTs (cuFFT)";
        default:
            break;
        }
    }
    return NULL;
}

/* Capture the plan's calls into a graph (nothing runs); on any failure the plan
 * replays as its loop of calls from now on, and says why. */
static void
make_graph(ga_plan *p)
{
    const char *why = not_graphable(p);
    if (why != NULL) {
        p->graph_state = -1;
        snprintf(p->graph_why, sizeof(p->graph_why), "%s", why);
        return;
    }
    const ga_backend *be = real_be[1];
    int dev = p->ops[0].dev;
    int checked = 0;
    for (int64_t i = 0; i < p->nops; i++) {
        checked += p->ops[i].kind == P_INDEX_CHECKED;
    }
    if (checked > GRAPH_MAX_CHECKED) {
        p->graph_state = -1;
        snprintf(p->graph_why, sizeof(p->graph_why),
                 "it checks indices in more than %d operations", GRAPH_MAX_CHECKED);
        return;
    }
    /* the random calls' counters, as offsets from the generator's counter now (a
     * launch checks that its own base gives the same ones: launch_fits) */
    int st = GA_OK;
    uint64_t seed, counter0, counter;
    ga_random_get_state(&seed, &counter0);
    counter = counter0;
    for (int64_t i = 0; i < p->nops; i++) {
        p->graph_nrandom += p->ops[i].kind == P_RANDOM;
    }
    if (p->graph_nrandom > 0) {
        p->graph_offsets = (uint64_t *)malloc((size_t)p->graph_nrandom * sizeof(uint64_t));
        st = p->graph_offsets == NULL
                 ? ga_error(GA_ERR_NOMEM, "out of host memory for a captured plan")
                 : ga_storage_new(device_of(1, dev), 2 * sizeof(uint64_t), &p->graph_rng);
    }
    if (st == GA_OK) {
        st = be->graph_begin(dev);
    }
    void *graph = NULL;
    if (st == GA_OK) {
        for (int64_t i = 0, k = 0; i < p->nops && st == GA_OK; i++) {
            const plan_op *o = &p->ops[i];
            if (o->kind == P_RANDOM) {
                ga_random_desc r = *(const ga_random_desc *)o->desc;
                p->graph_offsets[k] = take_counter(o, &counter) - counter0;
                r.seed = 0;
                r.counter = p->graph_offsets[k++];
                r.state = (const uint64_t *)p->graph_rng->data;
                st = be->random(dev, &r);
                continue;
            }
            /* a checked operation's record is the launch's (graph_launch) */
            st = o->kind == P_INDEX_CHECKED
                     ? be->index_checked(dev, (const ga_index_desc *)o->desc, o->op, NULL)
                     : run_op(o, 0, 0);
        }
        if (st == GA_OK) {
            st = be->graph_end(dev, 1, &graph);
        }
        else {
            const char *m = be->last_error != NULL ? be->last_error() : "";
            snprintf(p->graph_why, sizeof(p->graph_why), "its capture failed: %s", m);
            be->graph_end(dev, 0, &graph);
        }
    }
    if (st != GA_OK) {
        if (p->graph_why[0] == '\0') {
            const char *m = be->last_error != NULL ? be->last_error() : "";
            snprintf(p->graph_why, sizeof(p->graph_why), "its capture failed: %s", m);
        }
        p->graph_state = -1;
        return;
    }
    p->graph = graph;
    p->graph_dev = dev;
    p->graph_state = 1;
}

/* Whether a launch from the generator's `counter` gives the graph's random calls the
 * counter offsets it was made with (they differ only when the counter's alignment to
 * a call's words per element does: a float64 or normal draw after an odd count of
 * words drawn elsewhere); the counter after the plan goes to *end. */
static int
launch_fits(const ga_plan *p, uint64_t counter0, uint64_t *end)
{
    uint64_t counter = counter0;
    for (int64_t i = 0, k = 0; i < p->nops; i++) {
        if (p->ops[i].kind == P_RANDOM &&
            take_counter(&p->ops[i], &counter) - counter0 != p->graph_offsets[k++]) {
            return 0;
        }
    }
    *end = counter;
    return 1;
}

/* One launch of the plan's graph, with a failure record per checked operation made
 * for it, queued on its target and flowing into what the later operations write, as
 * run_op does for each call; the generator's state, {seed, counter0}, goes to the
 * random calls' device words first (a copy from pageable memory is staged at once:
 * the words on the host may go). */
static int
launch_graph(ga_plan *p, uint64_t seed, uint64_t counter0)
{
    const ga_backend *be = real_be[1];
    ga_fault *faults[GRAPH_MAX_CHECKED];
    ga_fault_record *recs[GRAPH_MAX_CHECKED];
    const plan_op *ops[GRAPH_MAX_CHECKED];
    int n = 0, st = GA_OK;
    if (p->graph_rng != NULL) {
        const uint64_t words[2] = {seed, counter0};
        st = be->copy_h2d(p->graph_dev, p->graph_rng->data, words, sizeof(words));
        if (st != GA_OK) {
            return ga_backend_status(be, st);
        }
    }
    for (int64_t i = 0; i < p->nops && st == GA_OK; i++) {
        const plan_op *o = &p->ops[i];
        if (o->kind != P_INDEX_CHECKED) {
            continue;
        }
        faults[n] = NULL;
        recs[n] = NULL;
        ops[n] = o;
        if (o->target != NULL) {
            st = ga_fault_begin(device_of(o->slot, o->dev), o->what, &faults[n]);
            recs[n] = st == GA_OK ? ga_fault_record_of(faults[n]) : NULL;
        }
        n++;
    }
    if (st == GA_OK) {
        st = be->graph_launch(p->graph_dev, p->graph, recs, n);
        if (st != GA_OK) {
            st = ga_backend_status(be, st);
        }
    }
    for (int k = 0; k < n; k++) {
        if (faults[k] == NULL) {
            continue;
        }
        if (st != GA_OK) {
            ga_fault_cancel(faults[k]);
            continue;
        }
        ga_fault_queued(faults[k], ops[k]->target);
        for (int32_t j = 0; j < ops[k]->nflow; j++) {
            ga_fault_flow_slow(ops[k]->flow[j], ops[k]->target);
        }
    }
    return st;
}

int
ga_plan_replay(ga_plan *p)
{
    if (recording != NULL) {
        return ga_error(GA_ERR_RUNTIME,
                        "gpuarr.capture: %s is replayed while %s records; call the "
                        "inner step's function itself",
                        p->name, recording->name);
    }
    /* the devices count what the recording counted; the profiler sees one record
     * (the first device's), and the modeled clock one launch per device with the
     * recorded work, as a CUDA graph launch costs */
    int profiled = 0;
    for (int s = 0; s <= GA_MAX_DEVICES; s++) {
        int kind = -1;
        ga_device d = device_of(s == 0 ? 0 : 1, s - 1);
        for (int k = 0; k < GA_WORK_NKINDS; k++) {
            if (p->work[s][k] != 0) {
                ga_device_add_work(d, (ga_work_kind)k, p->work[s][k]);
                kind = kind < 0 ? k : kind;
            }
        }
        if (kind < 0) {
            continue;
        }
        if (!profiled && ga_prof_on()) {
            ga_prof_op_begin(d, kind);
            profiled = 1;
        }
        if (ga_perf_model_on()) {
            ga_perf_model_replay(d, p->model_s[s]);
        }
        if (profiled == 1) {
            int64_t shape[1] = {p->nops};
            ga_prof_describe("capture replay", -1, 1, shape, 0);
            profiled = 2;
        }
    }
    /* what the core does before queued work touches a block (ga_device_backend's
     * host fence for the CPU; ga_array_note_write's order after a non-blocking copy
     * to the host that still reads it, such as the step's loss read with
     * `loss.to(cpu(), non_blocking=True)` after the previous call) */
    if (p->uses_cpu) {
        const ga_backend *cpu_be;
        GA_TRY(ga_device_backend(ga_cpu(), &cpu_be));
    }
    for (int64_t i = 0; i < p->nheld; i++) {
        if (p->held[i]->copy_ticket != 0) {
            ga_copy_queue_fence_slow(p->held[i], 0);
        }
    }
    if (p->graph_state == 0) {
        make_graph(p);
    }
    /* random numbers: each call's counter as the uncaptured call would take it from
     * the generator's state now */
    uint64_t seed, counter, end;
    ga_random_get_state(&seed, &counter);
    if (p->graph_state == 1 && launch_fits(p, counter, &end)) {
        int st = launch_graph(p, seed, counter);
        if (st == GA_OK) {
            ga_random_set_state(seed, end);
        }
        if (profiled) {
            ga_prof_close();
        }
        return st;
    }
    int st = GA_OK;
    for (int64_t i = 0; i < p->nops && st == GA_OK; i++) {
        const plan_op *o = &p->ops[i];
        if (o->kind == P_RANDOM) {
            st = run_op(o, seed, take_counter(o, &counter));
        } else {
            st = run_op(o, seed, 0);
        }
        if (st != GA_OK) {
            st = ga_backend_status(real_be[o->slot], st);
        }
    }
    ga_random_set_state(seed, counter);
    if (profiled) {
        ga_prof_close();
    }
    return st;
}

void
ga_plan_get_info(const ga_plan *p, ga_plan_info *out)
{
    memset(out, 0, sizeof(*out));
    out->ops = p->nops;
    out->held = p->nheld;
    out->draws = (int64_t)p->draws;
    out->graph = p->graph_state;
    out->graph_why = p->graph_why;
    for (int64_t i = 0; i < p->nheld; i++) {
        out->held_bytes += (int64_t)p->held[i]->nbytes;
        if (p->older[i] && p->held[i]->refcount == 0) {
            out->orphans++;
        }
    }
}

void
ga_plan_free(ga_plan *p)
{
    if (p == NULL) {
        return;
    }
    for (int64_t i = 0; i < p->nops; i++) {
        plan_op *o = &p->ops[i];
        free(o->desc);
        free(o->desc2);
        free(o->desc3);
        free(o->flow);
        if (o->kind == P_COPY_H2D && o->op == 1) {
            free((void *)o->src);
        }
    }
    free(p->ops);
    if (p->graph != NULL) { /* before the blocks its kernels use go back */
        real_be[1]->graph_destroy(p->graph_dev, p->graph);
    }
    if (p->graph_rng != NULL) {
        ga_storage_decref(p->graph_rng);
    }
    free(p->graph_offsets);
    for (int64_t i = 0; i < p->nheld; i++) {
        if (p->held[i]->capture_mark == p->mark) {
            p->held[i]->capture_mark = 0;
        }
        ga_storage_plan_release(p->held[i]);
    }
    free(p->held);
    free(p->older);
    free(p);
}
