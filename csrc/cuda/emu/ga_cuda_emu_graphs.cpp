/* ga_cuda_emu_graphs.cpp: emulated stream capture and graphs (the rules are in
 * ga_cuda_emu.h, "Stream capture and graphs").
 *
 * A capture takes over its stream's queue: enqueue() hands each task to
 * capture_take, which keeps it as a node. Every task the emulator queues may run more
 * than once (a launch keeps its arguments alive in a shared block, ga_emu_run), so a
 * graph launch is one task of the launching stream that runs the nodes in order.
 * One stream per capture: a second stream joining it through an event (a fork, which
 * CUDA allows) is refused, since the backend never forks a capture. */
#include "ga_cuda_emu_internal.h"

using namespace ga_emu;

struct ga_emu_graph {
    std::vector<std::function<void()>> nodes;
};
struct ga_emu_graph_exec {
    /* shared with launches still queued: an exec may be destroyed before they run */
    std::shared_ptr<const std::vector<std::function<void()>>> nodes;
};

namespace ga_emu {

/* The streams capturing now. Taken before a stream's m, never after. */
static std::mutex capture_lock;
static std::vector<ga_emu_stream *> capturing;
static std::atomic<int> active{0}; /* capturing.size(), read without the lock */
static std::atomic<uint64_t> next_capture{1};

bool
capture_take(ga_emu_stream *s, std::function<void()> &task)
{
    if (active.load(std::memory_order_acquire) == 0) {
        return false;
    }
    std::lock_guard<std::mutex> g(s->m);
    if (s->capture == nullptr) {
        return false;
    }
    s->capture->nodes.push_back(std::move(task));
    return true;
}

uint64_t
capture_id(ga_emu_stream *s)
{
    if (active.load(std::memory_order_acquire) == 0) {
        return 0;
    }
    std::lock_guard<std::mutex> g(s->m);
    return s->capture != nullptr ? s->capture->id : 0;
}

static void
invalidate(ga_emu_stream *s, cudaError_t err)
{
    std::lock_guard<std::mutex> g(s->m);
    if (s->capture != nullptr && s->capture->broken == cudaSuccess) {
        s->capture->broken = err;
    }
}

cudaError_t
capture_forbids(ga_emu_stream *s, int dev, const char *what)
{
    if (active.load(std::memory_order_acquire) == 0) {
        return cudaSuccess;
    }
    std::vector<ga_emu_stream *> hit;
    {
        std::lock_guard<std::mutex> g(capture_lock);
        for (ga_emu_stream *c : capturing) {
            if (s != nullptr ? c == s : c->device == dev) {
                hit.push_back(c);
            }
        }
    }
    if (hit.empty()) {
        return cudaSuccess;
    }
    for (ga_emu_stream *c : hit) {
        invalidate(c, cudaErrorStreamCaptureUnsupported);
    }
    detail("%s while a stream capture is in progress (emulation check)", what);
    return fail(cudaErrorStreamCaptureUnsupported);
}

cudaError_t
capture_forbids_malloc(void)
{
    if (active.load(std::memory_order_acquire) == 0) {
        return cudaSuccess;
    }
    std::vector<ga_emu_stream *> mine;
    {
        std::lock_guard<std::mutex> g(capture_lock);
        for (ga_emu_stream *c : capturing) {
            std::lock_guard<std::mutex> g2(c->m);
            if (c->capture != nullptr && c->capture->owner == std::this_thread::get_id() &&
                c->capture->mode != cudaStreamCaptureModeRelaxed) {
                mine.push_back(c);
            }
        }
    }
    if (mine.empty()) {
        return cudaSuccess;
    }
    for (ga_emu_stream *c : mine) {
        invalidate(c, cudaErrorStreamCaptureUnsupported);
    }
    detail("%s on a thread whose stream capture is not in relaxed mode (emulation check)",
           "cudaMalloc");
    return fail(cudaErrorStreamCaptureUnsupported);
}

}  // namespace ga_emu

extern "C" {

cudaError_t
cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    GA_EMU_FAIL_POINT("cudaStreamBeginCapture");
    if (stream == nullptr || stream == cudaStreamLegacy) {
        detail("%s cannot be captured", "the legacy default stream");
        return fail(cudaErrorStreamCaptureUnsupported);
    }
    if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
        mode != cudaStreamCaptureModeRelaxed) {
        return fail(cudaErrorInvalidValue);
    }
    ga_emu_stream *s = resolve(stream);
    ga_emu_capture *c = new ga_emu_capture();
    c->id = next_capture++;
    c->mode = mode;
    c->owner = std::this_thread::get_id();
    std::lock_guard<std::mutex> g(capture_lock);
    {
        std::lock_guard<std::mutex> g2(s->m);
        if (s->capture != nullptr) {
            delete c;
            return fail(cudaErrorIllegalState);
        }
        s->capture = c;
    }
    capturing.push_back(s);
    active.fetch_add(1, std::memory_order_release);
    return cudaSuccess;
}

cudaError_t
cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
    if (graph == NULL) {
        return fail(cudaErrorInvalidValue);
    }
    *graph = nullptr;
    ga_emu_stream *s = resolve(stream);
    ga_emu_capture *c;
    {
        std::lock_guard<std::mutex> g(capture_lock);
        std::lock_guard<std::mutex> g2(s->m);
        c = s->capture;
        if (c == nullptr) {
            return fail(cudaErrorIllegalState);
        }
        if (c->mode != cudaStreamCaptureModeRelaxed &&
            c->owner != std::this_thread::get_id()) {
            return fail(cudaErrorStreamCaptureWrongThread);
        }
        s->capture = nullptr;
        for (size_t i = 0; i < capturing.size(); i++) {
            if (capturing[i] == s) {
                capturing.erase(capturing.begin() + (long)i);
                break;
            }
        }
        active.fetch_sub(1, std::memory_order_release);
    }
    std::unique_ptr<ga_emu_capture> gone(c);
    if (c->broken != cudaSuccess) {
        return fail(cudaErrorStreamCaptureInvalidated);
    }
    *graph = new ga_emu_graph{std::move(c->nodes)};
    return cudaSuccess;
}

cudaError_t
cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
    if (status == NULL) {
        return fail(cudaErrorInvalidValue);
    }
    ga_emu_stream *s = resolve(stream);
    std::lock_guard<std::mutex> g(s->m);
    *status = s->capture == nullptr                 ? cudaStreamCaptureStatusNone
              : s->capture->broken == cudaSuccess ? cudaStreamCaptureStatusActive
                                                  : cudaStreamCaptureStatusInvalidated;
    return cudaSuccess;
}

cudaError_t
cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
    (void)flags;
    GA_EMU_FAIL_POINT("cudaGraphInstantiate");
    if (exec == NULL || graph == NULL) {
        return fail(cudaErrorInvalidValue);
    }
    *exec = new ga_emu_graph_exec{
        std::make_shared<const std::vector<std::function<void()>>>(graph->nodes)};
    return cudaSuccess;
}

cudaError_t
cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
    GA_EMU_FAIL_POINT("cudaGraphLaunch");
    if (exec == NULL) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    ga_emu_stream *s = resolve(stream);
    cudaError_t f = fault_of(s->device); /* sticky, as on a GPU */
    if (f != cudaSuccess) {
        return f;
    }
    auto nodes = exec->nodes;
    enqueue(s, [nodes] {
        for (const std::function<void()> &n : *nodes) {
            n();
            if (last_error != cudaSuccess) { /* a fault ends the graph, as on a GPU */
                break;
            }
        }
    });
    return cudaSuccess;
}

cudaError_t
cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    delete exec;
    return cudaSuccess;
}

cudaError_t
cudaGraphDestroy(cudaGraph_t graph)
{
    delete graph;
    return cudaSuccess;
}

}  // extern "C"
