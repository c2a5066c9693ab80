/* ga_cuda_faults.cu: failure slots, where a kernel reports the bad input of one
 * operation, and how their outcomes reach the core's records without a host wait of
 * their own (docs/DESIGN.md, "Failed queued work").
 *
 * A kernel cannot return a status. An operation that may fail on the device (a gather
 * or scatter with an index array on the device) is given a slot of a ring of error
 * records in device memory (ga_k_errrec, zero when unused) and writes its first bad
 * index there. Nothing on the host waits for it: the slots are copied back, in stream
 * order, into a pinned mirror just before the host waits anyway (synchronize, a copy
 * to the host), and before a copy to another device, each copy followed by an event.
 * Once an event has completed (cudaEventQuery: no wait), the slots it covers are read
 * from the mirror and the owners' ga_fault_records filled: OK, or FAILED with the
 * message the CPU would have raised. A slot that failed is cleared in stream order
 * before it is handed out again.
 *
 * Cost on the success path: no host wait; per host wait that follows fallible work,
 * one small device-to-host copy (24 bytes a slot) and an event record queued before
 * the wait. Only when `nslots` operations are queued with no wait in between does the
 * ring run full, and the next one waits for the stream (counted as a sync).
 *
 * A slot without an owner (the table's plain gather/scatter entries, which tests call
 * directly) reports like a GPU's sticky error: its failure is returned by the next
 * wait on the device, once.
 */
#include "k_common.cuh"

#include <stdio.h>

#include <deque>
#include <mutex>
#include <new>
#include <vector>

namespace
{

const uint64_t nslots = 1024;

struct snapshot {
    uint64_t end; /* covers tickets [previous end, end) */
    cudaEvent_t done;
};

/* A CUDA graph's launch: its owners (one per checked operation, in the graph's slot
 * order; NULL: ownerless), filled from the graph's mirror once `done` completed. */
struct graph_pending {
    cudaEvent_t done;
    std::shared_ptr<const ga_k_errrec> mirror;
    std::vector<ga_fault_record *> owners;
};

struct fault_slots {
    std::mutex lock;
    ga_k_errrec *slots;  /* device memory, nslots records */
    ga_k_errrec *mirror; /* pinned host memory, the same layout */
    ga_fault_record *owner[nslots];
    /* tickets: [tail, head) are in use, [tail, copied) are covered by a snapshot */
    uint64_t head, tail, copied;
    std::deque<snapshot> snapshots;
    std::vector<cudaEvent_t> spare; /* completed snapshots' events, reused */
    /* the first failure of an ownerless slot, returned by the next wait */
    int device_status;
    char device_message[512];
    /* graph launches whose owners are not filled yet, in launch order */
    std::deque<graph_pending> graphs;
};

fault_slots *slots_of[GA_MAX_DEVICES];
std::mutex make_lock;

int
get_slots(int dev, cudaStream_t stream, fault_slots **out)
{
    if (dev < 0 || dev >= GA_MAX_DEVICES) {
        return ga_error(GA_ERR_DEVICE, "failure slots: bad device %d", dev);
    }
    fault_slots *f = __atomic_load_n(&slots_of[dev], __ATOMIC_ACQUIRE);
    if (f != NULL) {
        *out = f;
        return GA_OK;
    }
    std::lock_guard<std::mutex> g(make_lock);
    if (slots_of[dev] == NULL) {
        /* cudaMalloc and cudaHostAlloc, not the caching allocator: the ring lives as
         * long as the process and is no user allocation (memory statistics keep their
         * meaning). Never freed: waits may read it during interpreter shutdown. */
        f = new (std::nothrow) fault_slots();
        if (f == NULL) {
            return ga_error(GA_ERR_NOMEM, "out of host memory for failure slots");
        }
        size_t bytes = nslots * sizeof(ga_k_errrec);
        void *mem = NULL, *host = NULL;
        cudaError_t ce = cudaMalloc(&mem, bytes);
        if (ce == cudaSuccess) {
            ce = cudaHostAlloc(&host, bytes, cudaHostAllocDefault);
        }
        if (ce == cudaSuccess) {
            ce = cudaMemsetAsync(mem, 0, bytes, stream);
        }
        if (ce != cudaSuccess) {
            if (mem != NULL) {
                cudaFree(mem);
            }
            if (host != NULL) {
                cudaFreeHost(host);
            }
            delete f;
            return ga_cuda_error(ce, "failure slots", __FILE__, __LINE__);
        }
        memset(host, 0, bytes);
        f->slots = (ga_k_errrec *)mem;
        f->mirror = (ga_k_errrec *)host;
        __atomic_store_n(&slots_of[dev], f, __ATOMIC_RELEASE);
    }
    *out = slots_of[dev];
    return GA_OK;
}

/* An event (a spare one, or made) recorded on `stream` after the work queued so far.
 * f->lock held. */
int
record_done(fault_slots *f, cudaStream_t stream, cudaEvent_t *out)
{
    cudaEvent_t ev;
    if (!f->spare.empty()) {
        ev = f->spare.back();
        f->spare.pop_back();
    } else {
        GA_CUDA_TRY(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    }
    cudaError_t ce = cudaEventRecord(ev, stream);
    if (ce != cudaSuccess) {
        cudaEventDestroy(ev);
        return ga_cuda_error(ce, "cudaEventRecord(failure slots)", __FILE__, __LINE__);
    }
    *out = ev;
    return GA_OK;
}

/* Queue the copy of the slots not yet covered, and an event after it. f->lock held. */
int
snapshot_locked(fault_slots *f, cudaStream_t stream)
{
    if (f->copied == f->head) {
        return GA_OK;
    }
    uint64_t a = f->copied % nslots, n = f->head - f->copied;
    uint64_t first = a + n <= nslots ? n : nslots - a;
    GA_CUDA_TRY(cudaMemcpyAsync(f->mirror + a, f->slots + a,
                                first * sizeof(ga_k_errrec), cudaMemcpyDeviceToHost,
                                stream));
    if (first < n) {
        GA_CUDA_TRY(cudaMemcpyAsync(f->mirror, f->slots,
                                    (n - first) * sizeof(ga_k_errrec),
                                    cudaMemcpyDeviceToHost, stream));
    }
    cudaEvent_t ev;
    GA_TRY(record_done(f, stream, &ev));
    try {
        f->snapshots.push_back(snapshot{f->head, ev});
    } catch (...) {
        cudaEventDestroy(ev);
        return ga_error(GA_ERR_NOMEM, "out of host memory for a failure snapshot");
    }
    f->copied = f->head;
    return GA_OK;
}

/* Fill one owner (NULL: the device's next wait reports it) from a record read back. */
void
fill(fault_slots *f, ga_fault_record *rec, const ga_k_errrec &e)
{
    if (e.count == 0) {
        if (rec != NULL) {
            __atomic_store_n(&rec->state, (int32_t)GA_FAULT_OK, __ATOMIC_RELEASE);
        }
        return;
    }
    char msg[256];
    snprintf(msg, sizeof(msg), "index %lld is out of bounds for axis with size %lld",
             (long long)e.value, (long long)e.size);
    if (rec != NULL) {
        rec->status = GA_ERR_INDEX;
        memcpy(rec->message, msg, sizeof(msg));
        __atomic_store_n(&rec->state, (int32_t)GA_FAULT_FAILED, __ATOMIC_RELEASE);
    } else if (f->device_status == GA_OK) {
        f->device_status = GA_ERR_INDEX;
        snprintf(f->device_message, sizeof(f->device_message),
                 "%.200s (an index array on the device, checked by the kernel: "
                 "reported at the next synchronizing call on that device)",
                 msg);
    }
}

/* Read the completed graph launches into their owners' records. f->lock held. */
int
harvest_graphs_locked(fault_slots *f)
{
    while (!f->graphs.empty()) {
        graph_pending &g = f->graphs.front();
        cudaError_t q = cudaEventQuery(g.done);
        if (q == cudaErrorNotReady) {
            cudaGetLastError();
            return GA_OK;
        }
        if (q != cudaSuccess) {
            return ga_cuda_error(q, "cudaEventQuery(graph failure slots)", __FILE__,
                                 __LINE__);
        }
        for (size_t i = 0; i < g.owners.size(); i++) {
            fill(f, g.owners[i], g.mirror.get()[i]);
        }
        try {
            f->spare.push_back(g.done);
        } catch (...) {
            cudaEventDestroy(g.done);
        }
        f->graphs.pop_front();
    }
    return GA_OK;
}

/* Read the completed snapshots into their owners' records. f->lock held. */
int
harvest_locked(fault_slots *f, cudaStream_t stream)
{
    GA_TRY(harvest_graphs_locked(f));
    while (!f->snapshots.empty()) {
        snapshot s = f->snapshots.front();
        cudaError_t q = cudaEventQuery(s.done);
        if (q == cudaErrorNotReady) {
            cudaGetLastError();
            return GA_OK;
        }
        if (q != cudaSuccess) {
            /* a sticky fault: the outcomes never arrive; the core's wait reports it */
            return ga_cuda_error(q, "cudaEventQuery(failure slots)", __FILE__,
                                 __LINE__);
        }
        f->snapshots.pop_front();
        try {
            f->spare.push_back(s.done);
        } catch (...) {
            cudaEventDestroy(s.done);
        }
        for (; f->tail < s.end; f->tail++) {
            uint64_t k = f->tail % nslots;
            const ga_k_errrec &e = f->mirror[k];
            ga_fault_record *rec = f->owner[k];
            f->owner[k] = NULL;
            if (e.count != 0) {
                /* cleared in stream order, before any later work is handed the slot */
                GA_CUDA_TRY(
                    cudaMemsetAsync(f->slots + k, 0, sizeof(ga_k_errrec), stream));
            }
            fill(f, rec, e);
        }
    }
    return GA_OK;
}

} // namespace

extern "C" int
ga_cuda_fault_slot(int dev, cudaStream_t stream, ga_fault_record *rec,
                   ga_k_errrec **slot)
{
    if (ga_cuda_capture_device() == dev) { /* the graph's own; its launches fill owners */
        return ga_cuda_graph_slot(dev, slot);
    }
    fault_slots *f = NULL;
    GA_TRY(get_slots(dev, stream, &f));
    std::lock_guard<std::mutex> g(f->lock);
    if (f->head - f->tail == nslots) {
        /* the ring is full: nslots fallible operations were queued with no wait in
         * between. Wait once for all of them (the only wait this file adds). The GIL
         * stays held: a waiting thread needs only this lock, never the GIL, to finish.
         */
        GA_TRY(harvest_locked(f, stream));
        if (f->head - f->tail == nslots) {
            GA_TRY(snapshot_locked(f, stream));
            ga_cuda_count_sync(stream);
            GA_CUDA_TRY(cudaStreamSynchronize(stream));
            GA_TRY(harvest_locked(f, stream));
        }
    }
    uint64_t k = f->head % nslots;
    f->owner[k] = rec;
    f->head++;
    *slot = f->slots + k;
    return GA_OK;
}

extern "C" void
ga_cuda_fault_unslot(int dev, ga_k_errrec *slot)
{
    fault_slots *f = dev >= 0 && dev < GA_MAX_DEVICES
                         ? __atomic_load_n(&slots_of[dev], __ATOMIC_ACQUIRE)
                         : NULL;
    if (f == NULL) {
        return;
    }
    std::lock_guard<std::mutex> g(f->lock);
    if (slot < f->slots || slot >= f->slots + nslots) {
        return; /* a graph's slot (ga_cuda_graph_slot): the graph keeps it */
    }
    /* the operation was not queued: its slot stays untouched (zero) and is read back
     * as OK with no record to fill; the core keeps the record */
    f->owner[slot - f->slots] = NULL;
}

extern "C" int
ga_cuda_fault_snapshot(int dev, cudaStream_t stream)
{
    fault_slots *f = dev >= 0 && dev < GA_MAX_DEVICES
                         ? __atomic_load_n(&slots_of[dev], __ATOMIC_ACQUIRE)
                         : NULL;
    if (f == NULL) {
        return GA_OK; /* nothing fallible was ever queued on dev */
    }
    std::lock_guard<std::mutex> g(f->lock);
    return snapshot_locked(f, stream);
}

extern "C" int
ga_cuda_fault_harvest(int dev, cudaStream_t stream)
{
    fault_slots *f = dev >= 0 && dev < GA_MAX_DEVICES
                         ? __atomic_load_n(&slots_of[dev], __ATOMIC_ACQUIRE)
                         : NULL;
    if (f == NULL) {
        return GA_OK;
    }
    std::lock_guard<std::mutex> g(f->lock);
    GA_TRY(harvest_locked(f, stream));
    if (f->device_status != GA_OK) {
        int st = f->device_status;
        f->device_status = GA_OK; /* reported once */
        return ga_error(st, "%s", f->device_message);
    }
    return GA_OK;
}

int
ga_cuda_fault_graph_launched(int dev, cudaStream_t stream,
                             std::shared_ptr<const ga_k_errrec> mirror,
                             std::vector<ga_fault_record *> owners)
{
    fault_slots *f = NULL;
    GA_TRY(get_slots(dev, stream, &f));
    std::lock_guard<std::mutex> g(f->lock);
    cudaEvent_t ev;
    GA_TRY(record_done(f, stream, &ev));
    try {
        f->graphs.push_back(graph_pending{ev, std::move(mirror), std::move(owners)});
    } catch (...) {
        cudaEventDestroy(ev);
        return ga_error(GA_ERR_NOMEM, "out of host memory for a graph launch's failures");
    }
    return GA_OK;
}
