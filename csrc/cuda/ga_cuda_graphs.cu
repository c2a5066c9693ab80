/* ga_cuda_graphs.cu: a captured step's plan as one CUDA graph (the table's ABI 16
 * entries; docs/DESIGN.md, "Captured steps").
 *
 * The plan (ops/ga_capture.c) replays its calls once between graph_begin and
 * graph_end; every launch, copy and cuBLAS call they queue is captured into one graph
 * instead of run, and graph_launch runs it on the device's stream: one launch per
 * step, with no per-kernel host work.
 *
 * The capture is on a stream of its own (ga_cuda_stream hands it to this thread's
 * calls while it captures), so another thread's work on the device's stream is never
 * captured by mistake. Relaxed mode: a cache miss may call cudaMalloc while capturing,
 * which is safe here because the graph keeps every block freed during its capture
 * (ga_cuda_graph_keeps, asked by cuda_free) and the plan keeps the arrays'. A host
 * wait during the capture is refused (not_capturing, ga_cuda_backend.cu); the caller
 * then runs the calls one by one. */
#include "ga_cuda.h"

#include <string.h>

#include <atomic>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

namespace {

/* A graph's checked operations (a step's cross entropy has two); a capture with more
 * fails and the step replays as its calls. */
const int max_graph_slots = 64;

typedef std::vector<std::pair<void *, size_t>> block_list;

/* One device's capture, touched only by the thread that captures it (`capturing`);
 * made at the device's first capture and never freed (as the backend's states). */
struct capture_state {
    cudaStream_t stream;
    int64_t kernels, max_blocks;
    block_list kept;       /* blocks freed during the capture: the graph's */
    ga_k_errrec *slots;    /* its failure slots (a kept block of max_graph_slots) */
    int nslots;
};

struct cuda_graph {
    cudaGraphExec_t exec;
    int64_t kernels, max_blocks;
    block_list kept; /* given back when it is destroyed */
    /* its failure slots' host mirror (copied by its last node) and how many */
    std::shared_ptr<const ga_k_errrec> mirror;
    int slots;
};

/* The device whose calls this thread is capturing into a graph, or -1. */
thread_local int capturing = -1;
capture_state *states[GA_MAX_DEVICES];
std::mutex states_lock;
std::atomic<int64_t> launched[GA_MAX_DEVICES], launched_kernels[GA_MAX_DEVICES];

/* The capture keeps a block for its graph until the graph is destroyed; false when
 * no host memory is left to note it. */
bool
keep(capture_state *c, void *ptr, size_t nbytes) noexcept
{
    try {
        c->kept.emplace_back(ptr, nbytes);
        return true;
    } catch (...) {
        return false;
    }
}

/* The blocks a graph (or a dropped capture) kept go back to the cache, in stream order
 * after everything queued so far, its launches included. */
void
give_back(int dev, block_list &kept)
{
    for (auto &b : kept) {
        ga_cuda_free(dev, b.first, b.second);
    }
    kept.clear();
}

}  // namespace

extern "C" int
ga_cuda_capture_device(void)
{
    return capturing;
}

extern "C" cudaStream_t
ga_cuda_capture_stream(int dev)
{
    return capturing == dev && dev >= 0 ? states[dev]->stream : NULL;
}

extern "C" int
ga_cuda_graph_keeps(int dev, void *ptr, size_t nbytes)
{
    if (capturing != dev || dev < 0) {
        return 0;
    }
    /* with no host memory to note it, leaked rather than reused under the graph */
    (void)keep(states[dev], ptr, nbytes);
    return 1;
}

extern "C" int
ga_cuda_graph_counts(cudaStream_t stream, unsigned long long blocks)
{
    if (capturing < 0 || states[capturing]->stream != stream) {
        return 0;
    }
    capture_state *c = states[capturing];
    c->kernels++;
    c->max_blocks = c->max_blocks > (int64_t)blocks ? c->max_blocks : (int64_t)blocks;
    return 1;
}

extern "C" void
ga_cuda_graph_counters(int dev, int64_t *launches, int64_t *kernels)
{
    *launches = launched[dev].load();
    *kernels = launched_kernels[dev].load();
}

extern "C" int
ga_cuda_graph_slot(int dev, ga_k_errrec **slot)
{
    capture_state *c = states[dev];
    if (c->nslots == max_graph_slots) {
        return ga_error(GA_ERR_UNSUPPORTED, "a CUDA graph holds at most %d checked index "
                        "operations", max_graph_slots);
    }
    if (c->slots == NULL) {
        /* zeroed once, outside the capture, on the device's stream before the graph's
         * launches: the graph never clears its slots (ga_cuda.h) */
        void *p = NULL;
        size_t bytes = sizeof(ga_k_errrec) * max_graph_slots;
        GA_TRY(ga_cuda_alloc(dev, bytes, &p));
        /* the device's own stream, and its cache for a block the capture cannot keep */
        capturing = -1;
        cudaStream_t s = NULL;
        int st = ga_cuda_stream(dev, &s);
        if (st == GA_OK && !keep(c, p, bytes)) {
            st = ga_error(GA_ERR_NOMEM, "out of host memory for a CUDA graph's blocks");
        }
        if (st != GA_OK) {
            ga_cuda_free(dev, p, bytes);
        }
        capturing = dev;
        GA_TRY(st);
        GA_CUDA_TRY(cudaMemsetAsync(p, 0, bytes, s));
        c->slots = (ga_k_errrec *)p;
    }
    *slot = c->slots + c->nslots++;
    return GA_OK;
}

extern "C" int
ga_cuda_graph_begin(int dev)
{
    if (capturing >= 0) {
        return ga_error(GA_ERR_RUNTIME, "a CUDA graph capture on gpu(%d) began while one "
                        "on gpu(%d) runs on this thread", dev, capturing);
    }
    if (dev < 0 || dev >= GA_MAX_DEVICES) {
        return ga_error(GA_ERR_DEVICE, "CUDA graphs: bad device %d", dev);
    }
    cudaStream_t own = NULL;
    GA_TRY(ga_cuda_stream(dev, &own)); /* the device exists, and is current */
    capture_state *c;
    {
        std::lock_guard<std::mutex> g(states_lock);
        if (states[dev] == NULL) {
            c = new (std::nothrow) capture_state();
            if (c == NULL) {
                return ga_error(GA_ERR_NOMEM, "out of host memory for a CUDA graph");
            }
            cudaError_t e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
            if (e != cudaSuccess) {
                delete c;
                return ga_cuda_error(e, "cudaStreamCreateWithFlags(capture stream)",
                                     __FILE__, __LINE__);
            }
            states[dev] = c;
        }
        c = states[dev];
    }
    GA_CUDA_TRY(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeRelaxed));
    c->kept.clear();
    c->slots = NULL;
    c->nslots = 0;
    c->kernels = 0;
    c->max_blocks = 0;
    capturing = dev;
    return GA_OK;
}

extern "C" int
ga_cuda_graph_end(int dev, int keep, void **out)
{
    *out = NULL;
    if (capturing != dev || dev < 0) {
        return ga_error(GA_ERR_RUNTIME, "no CUDA graph capture on gpu(%d) runs on this "
                        "thread", dev);
    }
    capture_state *c = states[dev];
    cudaError_t err = cudaSuccess;
    /* the last node: the failure slots to the host mirror, for each launch's owners */
    std::shared_ptr<const ga_k_errrec> mirror;
    size_t mirror_bytes = sizeof(ga_k_errrec) * (size_t)c->nslots;
    if (keep && c->nslots > 0) {
        void *host = NULL;
        err = cudaHostAlloc(&host, mirror_bytes, cudaHostAllocDefault);
        if (err == cudaSuccess) {
            memset(host, 0, mirror_bytes);
            mirror.reset((const ga_k_errrec *)host,
                         [](const ga_k_errrec *h) { cudaFreeHost((void *)h); });
            err = cudaMemcpyAsync(host, c->slots, mirror_bytes, cudaMemcpyDeviceToHost,
                                  c->stream);
        }
    }
    capturing = -1;
    block_list kept;
    kept.swap(c->kept);
    cudaGraph_t graph = NULL;
    cudaError_t end = cudaStreamEndCapture(c->stream, &graph);
    err = err != cudaSuccess ? err : end;
    cudaGraphExec_t exec = NULL;
    if (err == cudaSuccess && keep) {
        err = cudaGraphInstantiate(&exec, graph, 0);
    }
    if (graph != NULL) {
        cudaGraphDestroy(graph);
    }
    cuda_graph *cg = NULL;
    if (err == cudaSuccess && keep) {
        cg = new (std::nothrow) cuda_graph();
        if (cg == NULL) {
            cudaGraphExecDestroy(exec);
        }
    }
    if (cg == NULL) {
        give_back(dev, kept);
        if (err != cudaSuccess) {
            return ga_cuda_error(err, "cudaStreamEndCapture / cudaGraphInstantiate",
                                 __FILE__, __LINE__);
        }
        return keep ? ga_error(GA_ERR_NOMEM, "out of host memory for a CUDA graph") : GA_OK;
    }
    cg->exec = exec;
    cg->mirror = std::move(mirror);
    cg->slots = c->nslots;
    cg->kernels = c->kernels;
    cg->max_blocks = c->max_blocks;
    cg->kept.swap(kept);
    *out = cg;
    return GA_OK;
}

extern "C" int
ga_cuda_graph_launch(int dev, void *graph, ga_fault_record **owners, int nowners)
{
    cuda_graph *cg = (cuda_graph *)graph;
    if (nowners != cg->slots) {
        return ga_error(GA_ERR_RUNTIME, "a CUDA graph with %d checked operations was "
                        "launched with %d failure records", cg->slots, nowners);
    }
    std::vector<ga_fault_record *> list;
    try {
        list.assign(owners, owners + nowners);
    } catch (...) {
        return ga_error(GA_ERR_NOMEM, "out of host memory for a CUDA graph launch");
    }
    cudaStream_t s = NULL;
    GA_TRY(ga_cuda_stream(dev, &s)); /* the device's: no capture runs on this thread */
    GA_CUDA_TRY(cudaGraphLaunch(cg->exec, s));
    ga_cuda_count_launch(s, (unsigned long long)cg->max_blocks); /* one launch */
    launched[dev]++;
    launched_kernels[dev] += cg->kernels;
    if (cg->slots > 0) {
        GA_TRY(ga_cuda_fault_graph_launched(dev, s, cg->mirror, std::move(list)));
    }
    return GA_OK;
}

extern "C" void
ga_cuda_graph_destroy(int dev, void *graph)
{
    cuda_graph *cg = (cuda_graph *)graph;
    if (cg == NULL) {
        return;
    }
    /* pending launches still run (CUDA keeps what they need); the kept blocks go back
     * to the cache after them in stream order */
    cudaStream_t s = NULL;
    if (ga_cuda_stream(dev, &s) == GA_OK) { /* makes dev current */
        cudaGraphExecDestroy(cg->exec);
    }
    give_back(dev, cg->kept);
    delete cg;
}
