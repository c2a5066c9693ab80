/* ga_fault.c: failures of queued work belong to their results (ga_fault.h). */
#include "ga_fault.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_backend.h"
#include "ga_device.h"
#include "ga_error.h"
#include "ga_platform.h"

/* One operation that may fail on its device after it was queued. */
struct ga_fault {
    int64_t refs;        /* atomic: sets, the registry and the queuing code hold them */
    ga_fault_record rec; /* the backend's, filled once */
    int verdict; /* the core's view: PENDING until rec (or a lost device) says */
    int status;  /* FAILED: the operation's status and message */
    char message[256];
    ga_device device;
    uint64_t seq;    /* queue order, process-wide */
    uint64_t thread; /* the queuing thread (thread_id()) */
    int reported;    /* raised to the user at least once */
    int list;        /* registry list it is on: 0 none, 1 pending, 2 failed */
    ga_fault *prev, *next;
    char what[48];
    char where[256];
    char item[32], items[32]; /* ga_fault_set_index_terms's, "" for none */
};

/* What a storage's contents depend on: immutable once made, shared by reference.
 * Either one failed origin (n == 0), or origins not known to have succeeded, by
 * seq. */
struct ga_faultset {
    int64_t refs;
    ga_fault *failed;
    int n;
    ga_fault *pending[];
};
typedef struct ga_faultset ga_faultset;

static void (*where_hook)(char *buf, size_t n);
static uint64_t next_seq = 1;    /* atomic */
static uint64_t next_thread = 1; /* atomic */
static GA_THREAD_LOCAL uint64_t my_thread;
/* ga_fault_set_index_terms's, for the origins this thread makes; "" when unset */
static GA_THREAD_LOCAL char index_what[48], index_item[32], index_items[32];

/* The registry: origins whose outcome is unknown (`pending`, by seq) and failures
 * not yet raised (`failed`). Each entry holds a reference. */
typedef struct {
    ga_fault *head, *tail;
} fault_list;
static fault_list pending, failed;
static ga_mutex reg_mu = GA_MUTEX_INIT;
static int atfork_installed; /* atomic */
/* GPUs that had storage (the exit report waits only for those), and GPUs whose wait
 * returned a device fault to the user */
static uint64_t devices_used, device_errors_raised; /* atomic bit sets */
static int cuda_error_seen;                         /* atomic */

static uint64_t
thread_id(void)
{
    if (my_thread == 0) {
        my_thread = __atomic_fetch_add(&next_thread, 1, __ATOMIC_RELAXED);
    }
    return my_thread;
}

/* ga_backend_status's observer (registered, so that the device registry below never
 * calls up into this file by name) */
static void
observe_status(int st)
{
    if (st == GA_ERR_CUDA) {
        ga_fault_cuda_error_seen();
    }
}

void
ga_fault_set_where_hook(void (*where)(char *buf, size_t n))
{
    where_hook = where;
    static int watching;
    if (!watching) {
        watching = ga_device_observe_status(observe_status) == GA_OK;
    }
}

int
ga_fault_sync_checks(void)
{
    static int on = -1; /* read once; a race only reads the environment twice */
    if (on < 0) {
        const char *v = getenv("GPUARR_SYNC_CHECKS");
        on = v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
    }
    return on;
}

void
ga_fault_device_used(ga_device d)
{
    if (d.kind == GA_DEV_GPU && d.index >= 0 && d.index < 64) {
        __atomic_fetch_or(&devices_used, (uint64_t)1 << d.index, __ATOMIC_RELAXED);
    }
}

void
ga_fault_device_error_raised(ga_device d)
{
    if (d.kind == GA_DEV_GPU && d.index >= 0 && d.index < 64) {
        __atomic_fetch_or(&device_errors_raised, (uint64_t)1 << d.index,
                          __ATOMIC_RELAXED);
    }
}

void
ga_fault_cuda_error_seen(void)
{
    __atomic_store_n(&cuda_error_seen, 1, __ATOMIC_RELAXED);
}

/* --- origins ------------------------------------------------------------------- */

static void
fault_incref(ga_fault *f)
{
    __atomic_fetch_add(&f->refs, 1, __ATOMIC_RELAXED);
}

static void
fault_decref(ga_fault *f)
{
    if (f == NULL || __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) > 0) {
        return;
    }
    /* A record the backend may still write (its device was lost before the outcome
     * came back) is never freed: a few hundred bytes, against a write into freed
     * memory. */
    if (__atomic_load_n(&f->rec.state, __ATOMIC_ACQUIRE) != GA_FAULT_PENDING) {
        free(f);
    }
}

/* The outcome as the host knows it now (no wait). */
static int
poll(ga_fault *f)
{
    if (f->verdict == GA_FAULT_PENDING) {
        int s = __atomic_load_n(&f->rec.state, __ATOMIC_ACQUIRE);
        if (s == GA_FAULT_FAILED) {
            f->status = f->rec.status != GA_OK ? f->rec.status : GA_ERR_RUNTIME;
            snprintf(f->message, sizeof(f->message), "%s", f->rec.message);
            long long i, n;
            if (f->item[0] != '\0' &&
                sscanf(f->rec.message,
                       "index %lld is out of bounds for axis with size %lld", &i,
                       &n) == 2) {
                snprintf(f->message, sizeof(f->message),
                         "%s %lld is out of range for %lld %s", f->item,
                         i < 0 ? i + n : i, n, f->items);
            }
        }
        f->verdict = s;
    }
    return f->verdict;
}

/* A device whose outcomes can no longer arrive (a fault, a forked child): the
 * operation's result is unknown, so it counts as failed, with the reason. */
static void
mark_lost(ga_fault *f, int status, const char *why)
{
    if (f->verdict == GA_FAULT_PENDING) {
        f->status = status != GA_OK ? status : GA_ERR_RUNTIME;
        snprintf(f->message, sizeof(f->message),
                 "the outcome of this operation is "
                 "unknown: %.200s",
                 why);
        f->verdict = GA_FAULT_FAILED;
    }
}

static void
list_unlink(fault_list *l, ga_fault *f)
{
    if (f->prev != NULL) {
        f->prev->next = f->next;
    } else {
        l->head = f->next;
    }
    if (f->next != NULL) {
        f->next->prev = f->prev;
    } else {
        l->tail = f->prev;
    }
    f->prev = f->next = NULL;
}

static void
list_append(fault_list *l, ga_fault *f)
{
    f->prev = l->tail;
    f->next = NULL;
    if (l->tail != NULL) {
        l->tail->next = f;
    } else {
        l->head = f;
    }
    l->tail = f;
}

/* Take f off the registry (reg_mu held); the caller drops the registry's reference
 * after unlocking. Returns 1 if it was on it. */
static int
reg_remove_locked(ga_fault *f)
{
    if (f->list == 0) {
        return 0;
    }
    list_unlink(f->list == 1 ? &pending : &failed, f);
    f->list = 0;
    return 1;
}

/* Move settled entries off the pending list (reg_mu held): successes leave the
 * registry (their references go to `drop`), failures go to the failed list unless
 * already raised. With `all`, every entry is looked at, else only the leading ones
 * (amortised O(1) per origin). Returns how many references were put in drop. */
static int
sweep_locked(int all, ga_fault **drop, int ndrop_max)
{
    int ndrop = 0;
    for (ga_fault *f = pending.head, *next; f != NULL && ndrop < ndrop_max; f = next) {
        next = f->next;
        int v = poll(f);
        if (v == GA_FAULT_PENDING) {
            if (!all) {
                break;
            }
            continue;
        }
        list_unlink(&pending, f);
        f->list = 0;
        if (v == GA_FAULT_FAILED && !f->reported) {
            list_append(&failed, f);
            f->list = 2;
        } else {
            drop[ndrop++] = f;
        }
    }
    return ndrop;
}

static void
drop_all(ga_fault **drop, int n)
{
    for (int i = 0; i < n; i++) {
        fault_decref(drop[i]);
    }
}

/* Sweep the whole pending list (reg_mu not held): failures found move to the failed
 * list, successes leave (their references dropped outside the lock, a batch at a
 * time). */
static void
sweep_all(void)
{
    for (;;) {
        ga_fault *drop[64];
        ga_mutex_lock(&reg_mu);
        int ndrop = sweep_locked(1, drop, 64);
        ga_mutex_unlock(&reg_mu);
        drop_all(drop, ndrop);
        if (ndrop < 64) {
            return;
        }
    }
}

/* A forked child has none of its parent's queued work: it starts with no registry
 * (the parent's entries stay the parent's to report). */
static void
after_fork_child(void)
{
    ga_mutex_reset(&reg_mu);
    pending.head = pending.tail = NULL;
    failed.head = failed.tail = NULL;
}

void
ga_fault_set_index_terms(const char *what, const char *item, const char *items)
{
    int on = what != NULL;
    snprintf(index_what, sizeof(index_what), "%s", on ? what : "");
    snprintf(index_item, sizeof(index_item), "%s", on && item != NULL ? item : "");
    snprintf(index_items, sizeof(index_items), "%s", on && items != NULL ? items : "");
}

int
ga_fault_begin(ga_device dev, const char *what, ga_fault **out)
{
    /* the first failure record installs the fork handler (two threads racing here
     * leave a moment in which a fork would keep the parent's entries: harmless, the
     * child only reports them) */
    if (__atomic_exchange_n(&atfork_installed, 1, __ATOMIC_ACQ_REL) == 0) {
        ga_atfork(NULL, NULL, after_fork_child);
    }
    ga_fault *f = (ga_fault *)calloc(1, sizeof(*f));
    if (f == NULL) {
        return ga_error(GA_ERR_NOMEM, "out of host memory queuing %s", what);
    }
    f->refs = 2; /* the caller's and the registry's */
    f->device = dev;
    f->seq = __atomic_fetch_add(&next_seq, 1, __ATOMIC_RELAXED);
    f->thread = thread_id();
    snprintf(f->what, sizeof(f->what), "%s", index_what[0] != '\0' ? index_what : what);
    memcpy(f->item, index_item, sizeof(f->item));
    memcpy(f->items, index_items, sizeof(f->items));
    if (where_hook != NULL) {
        where_hook(f->where, sizeof(f->where));
    }
    if (f->where[0] == '\0') {
        snprintf(f->where, sizeof(f->where), "<unknown>");
    }
    ga_fault *drop[8];
    ga_mutex_lock(&reg_mu);
    int ndrop = sweep_locked(0, drop, 8);
    list_append(&pending, f);
    f->list = 1;
    ga_mutex_unlock(&reg_mu);
    drop_all(drop, ndrop);
    *out = f;
    return GA_OK;
}

ga_fault_record *
ga_fault_record_of(ga_fault *f)
{
    return &f->rec;
}

void
ga_fault_cancel(ga_fault *f)
{
    ga_mutex_lock(&reg_mu);
    int was = reg_remove_locked(f);
    ga_mutex_unlock(&reg_mu);
    /* never handed to a backend that kept it: settle the record so it can be freed */
    __atomic_store_n(&f->rec.state, (int32_t)GA_FAULT_OK, __ATOMIC_RELEASE);
    if (was) {
        fault_decref(f);
    }
    fault_decref(f);
}

/* The message of a raised failure: the operation's own, then where it came from. */
static int
raise_fault(ga_fault *f)
{
    char dev[32];
    ga_device_str(f->device, dev, sizeof(dev));
    f->reported = 1;
    ga_mutex_lock(&reg_mu);
    int was = f->list == 2 ? reg_remove_locked(f) : 0;
    ga_mutex_unlock(&reg_mu);
    int st = ga_error(f->status, "%s (failed in %s queued at %s on %s)", f->message,
                      f->what, f->where, dev);
    if (was) {
        fault_decref(f);
    }
    return st;
}

int
ga_fault_settled_now(ga_fault *f)
{
    int st = GA_OK;
    if (poll(f) == GA_FAULT_FAILED) {
        st = raise_fault(f);
    } else if (f->verdict == GA_FAULT_PENDING) {
        mark_lost(f, GA_ERR_RUNTIME, "its device did not report it after a wait");
        st = raise_fault(f);
    }
    ga_mutex_lock(&reg_mu);
    int was = reg_remove_locked(f);
    ga_mutex_unlock(&reg_mu);
    if (was) {
        fault_decref(f);
    }
    fault_decref(f);
    return st;
}

/* --- dependency sets ----------------------------------------------------------- */

static ga_faultset *
set_new(int n)
{
    ga_faultset *s =
        (ga_faultset *)malloc(sizeof(ga_faultset) + (size_t)n * sizeof(ga_fault *));
    if (s != NULL) {
        s->refs = 1;
        s->failed = NULL;
        s->n = 0;
    }
    return s;
}

static ga_faultset *
set_ref(ga_faultset *s)
{
    if (s != NULL) {
        s->refs++;
    }
    return s;
}

void
ga_faultset_release(ga_faultset *s)
{
    if (s == NULL || --s->refs > 0) {
        return;
    }
    fault_decref(s->failed);
    for (int i = 0; i < s->n; i++) {
        fault_decref(s->pending[i]);
    }
    free(s);
}

static ga_faultset *
set_failed(ga_fault *f)
{
    ga_faultset *s = set_new(0);
    if (s != NULL) {
        fault_incref(f);
        s->failed = f;
    }
    return s;
}

/* s with its settled origins taken into account (a new reference; NULL: none
 * left): a failed one makes the whole set failed, successes are dropped. */
static ga_faultset *
prune(ga_faultset *s)
{
    if (s == NULL || s->failed != NULL) {
        return set_ref(s);
    }
    ga_fault *worst = NULL;
    int ok = 0;
    for (int i = 0; i < s->n; i++) {
        int v = poll(s->pending[i]);
        if (v == GA_FAULT_FAILED &&
            (worst == NULL || s->pending[i]->seq < worst->seq)) {
            worst = s->pending[i];
        }
        ok += v == GA_FAULT_OK;
    }
    if (worst != NULL) {
        ga_faultset *f = set_failed(worst);
        return f != NULL ? f : set_ref(s);
    }
    if (ok == 0) {
        return set_ref(s);
    }
    if (ok == s->n) {
        return NULL;
    }
    ga_faultset *u = set_new(s->n - ok);
    if (u == NULL) {
        return set_ref(s);
    }
    for (int i = 0; i < s->n; i++) {
        if (s->pending[i]->verdict != GA_FAULT_OK) {
            fault_incref(s->pending[i]);
            u->pending[u->n++] = s->pending[i];
        }
    }
    return u;
}

/* a's and b's dependencies together (a new reference; NULL: none left). A failure
 * wins: results that depend on a failed origin are failed, whatever else they
 * depend on (the earliest is kept; any other is still reported by synchronize() or
 * at exit). Without host memory for a new set (a few dozen bytes), a's set is kept
 * and b's dependencies are dropped: the one way a failure could go unseen, and it
 * would still be reported by synchronize() and at exit. */
static ga_faultset *
set_union(ga_faultset *a, ga_faultset *b)
{
    if (a == NULL || a == b) {
        return prune(b);
    }
    if (b == NULL) {
        return prune(a);
    }
    ga_faultset *pa = prune(a), *pb = prune(b);
    ga_faultset *u = NULL;
    if (pa == NULL || pb == NULL || pa == pb) {
        u = set_ref(pa != NULL ? pa : pb);
    } else if (pa->failed != NULL || pb->failed != NULL) {
        int take_a = pb->failed == NULL ||
                     (pa->failed != NULL && pa->failed->seq <= pb->failed->seq);
        u = set_ref(take_a ? pa : pb);
    } else {
        u = set_new(pa->n + pb->n);
        if (u != NULL) {
            /* merge by seq, without duplicates */
            int i = 0, j = 0;
            while (i < pa->n || j < pb->n) {
                ga_fault *f;
                if (j >= pb->n ||
                    (i < pa->n && pa->pending[i]->seq <= pb->pending[j]->seq)) {
                    f = pa->pending[i++];
                    if (j < pb->n && pb->pending[j] == f) {
                        j++;
                    }
                } else {
                    f = pb->pending[j++];
                }
                fault_incref(f);
                u->pending[u->n++] = f;
            }
            if (u->n == pa->n) { /* b added nothing */
                ga_faultset_release(u);
                u = set_ref(pa);
            }
        } else {
            u = set_ref(pa);
        }
    }
    ga_faultset_release(pa);
    ga_faultset_release(pb);
    return u;
}

static void
storage_set(ga_storage *s, ga_faultset *fs)
{
    ga_faultset *old = s->faults;
    s->faults = fs;
    ga_faultset_release(old);
}

void
ga_fault_flow_slow(ga_storage *out, const ga_storage *in)
{
    storage_set(out, set_union(out->faults, in->faults));
}

void
ga_fault_queued(ga_fault *f, ga_storage *s)
{
    ga_faultset *one = set_new(1);
    if (one == NULL) {
        /* no host memory to mark the result: fail it at its first read instead of
         * letting it read as data */
        mark_lost(f, GA_ERR_NOMEM, "no host memory was left to track it");
        one = set_failed(f);
    } else {
        fault_incref(f);
        one->pending[0] = f;
        one->n = 1;
    }
    if (one != NULL) {
        storage_set(s, set_union(s->faults, one));
        ga_faultset_release(one);
    }
    fault_decref(f);
}

/* --- settling ------------------------------------------------------------------ */

/* Settle the storage's set: poll, then ask the backends for outcomes that arrived
 * with an event (no wait), then, only for outcomes still unknown, wait for their
 * devices (their work ran before the wait the caller did, unless it ran on another
 * device that no event brought back: a rare case, and the only extra wait). */
static int
settle(ga_storage *st)
{
    for (int round = 0;; round++) {
        storage_set(st, prune(st->faults));
        ga_faultset *s = st->faults;
        if (s == NULL) {
            return GA_OK;
        }
        if (s->failed != NULL) {
            return raise_fault(s->failed);
        }
        if (round == 2) {
            /* every device was waited for: nothing can still be unknown */
            for (int k = 0; k < s->n; k++) {
                mark_lost(
                    s->pending[k], GA_ERR_RUNTIME,
                    "its device did not report it after a wait (was the work lost "
                    "in a fork?)");
            }
            continue;
        }
        /* a wait lets other threads run (and replace st's set): hold this one */
        set_ref(s);
        uint64_t asked = 0;
        for (int i = 0; i < s->n; i++) {
            ga_device d = s->pending[i]->device;
            const ga_backend *be;
            if (d.index < 0 || d.index >= 64 || ((asked >> d.index) & 1) ||
                ga_device_backend_nowait(d, &be) != GA_OK) {
                continue;
            }
            asked |= (uint64_t)1 << d.index;
            int wst = GA_OK;
            if (round == 0) {
                wst =
                    be->fault_poll != NULL ? be->fault_poll(ga_device_local(d)) : GA_OK;
            } else {
                wst = be->synchronize(ga_device_local(d));
            }
            if (wst != GA_OK) {
                wst = ga_backend_status(be, wst);
                char why[300];
                snprintf(why, sizeof(why), "waiting for its device failed: %.250s",
                         ga_error_message());
                for (int k = 0; k < s->n; k++) {
                    if (ga_device_eq(s->pending[k]->device, d)) {
                        mark_lost(s->pending[k], wst, why);
                    }
                }
            }
        }
        ga_faultset_release(s);
    }
}

int
ga_fault_check_slow(const ga_array *a)
{
    return settle(a->storage);
}

/* --- reports ------------------------------------------------------------------- */

static const char *
status_name(int st)
{
    static const char *names[] = {
#define GA_X_NAME(code, name) name,
        GA_STATUSES(GA_X_NAME)
#undef GA_X_NAME
    };
    return st >= 0 && st < GA_NSTATUS ? names[st] : "error";
}

/* Take the registry's failures that `want` selects off it, by seq, into out[]
 * (references handed over); n of them at most. */
static int
take_failures(int (*want)(const ga_fault *, const void *), const void *arg,
              ga_fault **out, int nmax, int *more)
{
    int n = 0;
    *more = 0;
    sweep_all();
    ga_mutex_lock(&reg_mu);
    for (ga_fault *f = failed.head, *next; f != NULL; f = next) {
        next = f->next;
        if (!want(f, arg)) {
            continue;
        }
        if (n == nmax) {
            (*more)++;
            continue;
        }
        reg_remove_locked(f);
        /* insertion by seq: failures are found in the order their devices report */
        int k = n++;
        while (k > 0 && out[k - 1]->seq > f->seq) {
            out[k] = out[k - 1];
            k--;
        }
        out[k] = f;
    }
    ga_mutex_unlock(&reg_mu);
    return n;
}

typedef struct {
    uint64_t thread;
    int all;
    ga_device dev;
} thread_filter;

static int
want_thread(const ga_fault *f, const void *arg)
{
    const thread_filter *t = (const thread_filter *)arg;
    return f->thread == t->thread && !f->reported &&
           (t->all || ga_device_eq(f->device, t->dev));
}

static size_t
describe(char *buf, size_t n, const ga_fault *f)
{
    char dev[32];
    ga_device_str(f->device, dev, sizeof(dev));
    int w = snprintf(buf, n, "%s: %s (failed in %s queued at %s on %s)",
                     status_name(f->status), f->message, f->what, f->where, dev);
    return w < 0 ? 0 : (size_t)w >= n ? n - 1 : (size_t)w;
}

int
ga_fault_report_thread(int all, ga_device dev)
{
    thread_filter t = {thread_id(), all, dev};
    ga_fault *got[16];
    int more;
    int n = take_failures(want_thread, &t, got, 16, &more);
    if (n == 0) {
        return GA_OK;
    }
    for (int i = 0; i < n; i++) {
        got[i]->reported = 1;
    }
    char dev0[32], rest[768];
    ga_device_str(got[0]->device, dev0, sizeof(dev0));
    size_t len = 0;
    rest[0] = '\0';
    if (n > 1 || more > 0) {
        len += (size_t)snprintf(rest, sizeof(rest),
                                "; %d more failed operation%s queued "
                                "by this thread:",
                                n - 1 + more, n - 1 + more == 1 ? "" : "s");
        for (int i = 1; i < n && len < sizeof(rest) - 2; i++) {
            rest[len++] = ' ';
            len += describe(rest + len, sizeof(rest) - len, got[i]);
        }
        if (more > 0 && len < sizeof(rest) - 1) {
            snprintf(rest + len, sizeof(rest) - len,
                     " ... (%d more, raised by the next "
                     "synchronize())",
                     more);
        }
    }
    int st = ga_error(got[0]->status, "%s (failed in %s queued at %s on %s)%s",
                      got[0]->message, got[0]->what, got[0]->where, dev0, rest);
    drop_all(got, n);
    return st;
}

static int
want_any(const ga_fault *f, const void *arg)
{
    (void)arg;
    return !f->reported;
}

int
ga_fault_report_exit(char *buf, size_t n)
{
    /* wait for every device with outcomes still unknown, and every used GPU (a fault
     * of the device itself that no wait returned yet) */
    uint64_t devs = __atomic_load_n(&devices_used, __ATOMIC_RELAXED);
    ga_mutex_lock(&reg_mu);
    for (ga_fault *f = pending.head; f != NULL; f = f->next) {
        if (f->device.index >= 0 && f->device.index < 64) {
            devs |= (uint64_t)1 << f->device.index;
        }
    }
    ga_mutex_unlock(&reg_mu);
    size_t len = 0;
    int count = 0;
    buf[0] = '\0';
    for (int i = 0; i < 64; i++) {
        if (!((devs >> i) & 1)) {
            continue;
        }
        ga_device d = {GA_DEV_GPU, i};
        const ga_backend *be;
        if (ga_device_backend_nowait(d, &be) != GA_OK) {
            continue;
        }
        int cuda_before = __atomic_load_n(&cuda_error_seen, __ATOMIC_RELAXED);
        int st = be->synchronize(i);
        if (st == GA_OK) {
            continue;
        }
        st = ga_backend_status(be, st);
        char why[300];
        snprintf(why, sizeof(why), "waiting for its device failed: %.250s",
                 ga_error_message());
        ga_mutex_lock(&reg_mu);
        for (ga_fault *f = pending.head; f != NULL; f = f->next) {
            if (ga_device_eq(f->device, d)) {
                poll(f);
                mark_lost(f, st, why);
            }
        }
        ga_mutex_unlock(&reg_mu);
        int seen = (__atomic_load_n(&device_errors_raised, __ATOMIC_RELAXED) >> i) & 1;
        /* a CUDA fault is sticky: any call that returned one raised it already */
        seen |= st == GA_ERR_CUDA && cuda_before;
        if (!seen) {
            count++;
            if (len + 1 < n) {
                int w = snprintf(buf + len, n - len,
                                 "%s: %s (a fault of gpu(%d) in work "
                                 "queued earlier)\n",
                                 status_name(st), ga_error_message(), i);
                len += w < 0 ? 0 : (size_t)w;
                len = len >= n ? n - 1 : len;
            }
        }
    }
    if (len + 1 < n) {
        count += ga_fault_take_unreported(buf + len, n - len);
    } else {
        char none[1];
        count += ga_fault_take_unreported(none, 0);
    }
    return count;
}

int
ga_fault_take_unreported(char *buf, size_t n)
{
    size_t len = 0;
    int count = 0;
    if (n > 0) {
        buf[0] = '\0';
    }
    for (;;) {
        ga_fault *got[16];
        int more;
        int k = take_failures(want_any, NULL, got, 16, &more);
        for (int i = 0; i < k; i++) {
            got[i]->reported = 1;
            count++;
            if (len + 1 < n) {
                len += describe(buf + len, n - len, got[i]);
                if (len + 1 < n) {
                    buf[len++] = '\n';
                    buf[len] = '\0';
                }
            }
        }
        drop_all(got, k);
        if (more == 0) {
            break;
        }
    }
    return count;
}

int
ga_fault_unreported(void)
{
    int n = 0;
    sweep_all();
    ga_mutex_lock(&reg_mu);
    for (ga_fault *f = failed.head; f != NULL; f = f->next) {
        n += !f->reported;
    }
    ga_mutex_unlock(&reg_mu);
    return n;
}
