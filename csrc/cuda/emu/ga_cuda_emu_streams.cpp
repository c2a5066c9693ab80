/* ga_cuda_emu_streams.cpp: emulated streams (a queue, a worker each) and events. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>

#include "ga_cuda_emu_internal.h"

using namespace ga_emu;

/* --- streams ------------------------------------------------------------------------ */

namespace ga_emu {

/* The bound on each stream's queue. A GPU's launch queue is bounded (about 1,024
 * pending launches): past it, the launching host thread waits for the device. Without
 * a bound the host here ran ahead without limit, each queued task holding its
 * arguments (~1.3 KB per launch: 40,000 queued adds grew the process by 50 MB), so the
 * emulator bounds its queues the same way. GPUARR_CUDA_EMULATE_QUEUE_DEPTH sets the
 * depth (1 to 1048576, default 1024), read once; another value is reported on stderr
 * and the default used, as the emulator's other settings are. */
static const size_t default_queue_depth = 1024;

static size_t
queue_depth(void)
{
    static const size_t depth = [] {
        const char *v = getenv("GPUARR_CUDA_EMULATE_QUEUE_DEPTH");
        if (v == NULL || *v == '\0') {
            return default_queue_depth;
        }
        char *end;
        errno = 0;
        long d = strtol(v, &end, 10);
        if (errno == 0 && *end == '\0' && d >= 1 && d <= 1048576) {
            return (size_t)d;
        }
        fprintf(stderr,
                "gpuarr: GPUARR_CUDA_EMULATE_QUEUE_DEPTH=%s is not a queue depth from 1 "
                "to 1048576; using %zu\n",
                v, default_queue_depth);
        return default_queue_depth;
    }();
    return depth;
}

/* The most tasks any stream's queue has held at once (a test's check of the bound). */
static std::atomic<size_t> queue_high_water{0};

/* The stream whose worker this thread is; NULL on a host thread. A worker never waits
 * for room (a task that queues more work, on its own stream or another, must not
 * wait for a queue that only it or a stream waiting on it can drain). */
static thread_local ga_emu_stream *worker_of = nullptr;

/* Every stream ever made (never destroyed while the process runs: the backend's
 * streams live as long as the plugin), and each device's legacy stream. */
static std::vector<ga_emu_stream *> &all_streams =
    *new std::vector<ga_emu_stream *>();
static ga_emu_stream *legacy[64];

static void
record_fault(int dev)
{
    if (last_error == cudaSuccess) {
        return;
    }
    std::lock_guard<std::mutex> g(state_lock);
    if (device_fault[dev] == cudaSuccess) {
        device_fault[dev] = last_error;
        snprintf(device_fault_detail[dev], sizeof(device_fault_detail[dev]), "%s",
                 error_detail);
    }
    last_error = cudaSuccess;
    error_detail[0] = '\0';
}

static void
worker_main(ga_emu_stream *s)
{
    current_device = s->device;
    worker_of = s;
    for (;;) {
        std::function<void()> task;
        {
            std::unique_lock<std::mutex> g(s->m);
            s->cv.wait(g, [s] { return !s->q.empty(); });
            task = std::move(s->q.front());
            s->q.pop_front();
        }
        task();
        task = nullptr; /* what it held (a launch's arguments) goes before it is done */
        record_fault(s->device);
        {
            std::lock_guard<std::mutex> g(s->m);
            s->done++;
        }
        s->cv.notify_all();
    }
}

static ga_emu_stream *
new_stream(int dev, unsigned flags)
{
    ga_emu_stream *s = new ga_emu_stream();
    s->device = dev;
    s->flags = flags;
    s->worker = std::thread(worker_main, s);
    s->worker.detach();
    std::lock_guard<std::mutex> g(state_lock);
    for (ga_emu_stream *o : all_streams) {
        s->ordinal += o->device == dev;
    }
    all_streams.push_back(s);
    return s;
}

/* Each host thread's per-thread default stream, one per device (cudaStreamPerThread):
 * blocking, so ordered with the legacy stream as in CUDA. Made at first use. */
static thread_local ga_emu_stream *per_thread[64];

/* Stream 0 (and cudaStreamLegacy) means the current device's legacy default stream;
 * cudaStreamPerThread the calling thread's stream of the current device. */
ga_emu_stream *
resolve(cudaStream_t s)
{
    if (s == cudaStreamPerThread) {
        if (per_thread[current_device] == nullptr) {
            per_thread[current_device] = new_stream(current_device, 0);
        }
        return per_thread[current_device];
    }
    if (s != nullptr && s != cudaStreamLegacy) {
        return s;
    }
    int dev = current_device;
    {
        std::lock_guard<std::mutex> g(state_lock);
        if (legacy[dev] != nullptr) {
            return legacy[dev];
        }
    }
    ga_emu_stream *l = new_stream(dev, 0);
    std::lock_guard<std::mutex> g(state_lock);
    if (legacy[dev] == nullptr) {
        legacy[dev] = l;
    }
    return legacy[dev];
}

static uint64_t
tail(ga_emu_stream *s)
{
    std::lock_guard<std::mutex> g(s->m);
    return s->enqueued;
}

static void
wait_for(ga_emu_stream *s, uint64_t seq)
{
    std::unique_lock<std::mutex> g(s->m);
    s->cv.wait(g, [s, seq] { return s->done >= seq; });
}

/* Queue a task; a host thread waits first while the queue is full (queue_depth). The
 * worker notifies s->cv after each task, which is what wakes the wait. */
static void
push(ga_emu_stream *s, std::function<void()> task)
{
    size_t depth = queue_depth();
    {
        std::unique_lock<std::mutex> g(s->m);
        if (worker_of == nullptr) {
            s->cv.wait(g, [s, depth] { return s->q.size() < depth; });
        }
        s->q.push_back(std::move(task));
        s->enqueued++;
        size_t held = s->q.size(), seen = queue_high_water.load();
        while (held > seen && !queue_high_water.compare_exchange_weak(seen, held)) {
        }
    }
    s->cv.notify_all();
}

/* Legacy default stream semantics: work on stream 0 waits for every blocking stream
 * of the device, and work on a blocking stream waits for stream 0. */
void
enqueue(ga_emu_stream *s, std::function<void()> task)
{
    if (capture_take(s, task)) { /* a node of the capture on s, not run now */
        return;
    }
    if (s->flags == 0) {
        std::vector<std::pair<ga_emu_stream *, uint64_t>> deps;
        {
            std::lock_guard<std::mutex> g(state_lock);
            for (ga_emu_stream *o : all_streams) {
                if (o != s && o->device == s->device && o->flags == 0 &&
                    (s == legacy[s->device] || o == legacy[s->device])) {
                    deps.emplace_back(o, 0);
                }
            }
        }
        for (auto &d : deps) {
            uint64_t seq = tail(d.first);
            ga_emu_stream *o = d.first;
            push(s, [o, seq] { wait_for(o, seq); });
        }
    }
    push(s, std::move(task));
}

/* The device's fault, if a worker recorded one, as the result of a wait. */
cudaError_t
fault_of(int dev)
{
    std::lock_guard<std::mutex> g(state_lock);
    if (device_fault[dev] != cudaSuccess) {
        snprintf(error_detail, sizeof(error_detail), "%s", device_fault_detail[dev]);
        last_error = device_fault[dev];
    }
    return device_fault[dev];
}

/* Wait on the host for everything queued so far on `s`. */
cudaError_t
host_wait(ga_emu_stream *s)
{
    wait_for(s, tail(s));
    return fault_of(s->device);
}

/* Wait for every stream of `dev` (cudaDeviceSynchronize, cudaFree). */
cudaError_t
device_wait(int dev)
{
    std::vector<ga_emu_stream *> mine;
    {
        std::lock_guard<std::mutex> g(state_lock);
        for (ga_emu_stream *o : all_streams) {
            if (o->device == dev) {
                mine.push_back(o);
            }
        }
    }
    for (ga_emu_stream *o : mine) {
        wait_for(o, tail(o));
    }
    return fault_of(dev);
}

}  // namespace ga_emu

/* --- streams and events (the queues are above) --------------------------------------- */

extern "C" {

void
gpuarr_cuda_emu_queue_stats(size_t *depth, size_t *high_water)
{
    *depth = queue_depth();
    *high_water = queue_high_water.load();
}

cudaError_t
cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags)
{
    GA_EMU_FAIL_POINT("cudaStreamCreateWithFlags");
    *stream = new_stream(current_device, flags);
    return cudaSuccess;
}

cudaError_t
cudaStreamCreate(cudaStream_t *stream)
{
    return cudaStreamCreateWithFlags(stream, 0);
}

cudaError_t
cudaStreamDestroy(cudaStream_t stream)
{
    /* as in CUDA, queued work still runs; the worker and queue stay (never reused) */
    (void)stream;
    return cudaSuccess;
}

cudaError_t
cudaStreamSynchronize(cudaStream_t stream)
{
    GA_EMU_FAIL_POINT("cudaStreamSynchronize");
    /* A test can make a wait last (GPUARR_CUDA_EMULATE_WAIT_MS, test only) to check
     * that the host lets other threads run while it waits. */
    unsigned ms = (unsigned)ga_emu_env_number("GPUARR_CUDA_EMULATE_WAIT_MS", 0.0,
                                              3600000.0, 1, 0.0);
    if (ms > 0) {
        usleep((useconds_t)ms * 1000u);
    }
    ga_emu_stream *s = resolve(stream);
    cudaError_t refused = capture_forbids(s, -1, "cudaStreamSynchronize");
    return refused != cudaSuccess ? refused : host_wait(s);
}

cudaError_t
cudaStreamQuery(cudaStream_t stream)
{
    ga_emu_stream *s = resolve(stream);
    cudaError_t refused = capture_forbids(s, -1, "cudaStreamQuery");
    if (refused != cudaSuccess) {
        return refused;
    }
    {
        std::lock_guard<std::mutex> g(s->m);
        if (s->done < s->enqueued) {
            return cudaErrorNotReady; /* not an error: not recorded as the last one */
        }
    }
    return fault_of(s->device);
}

int
ga_emu_stream_known(cudaStream_t stream)
{
    if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
        return 1;
    }
    std::lock_guard<std::mutex> g(state_lock);
    for (ga_emu_stream *o : all_streams) {
        if (o == stream) {
            return 1;
        }
    }
    return 0;
}

cudaError_t
ga_emu_stream_sleep(cudaStream_t stream, unsigned ms)
{
    enqueue(resolve(stream), [ms] { usleep((useconds_t)ms * 1000u); });
    return cudaSuccess;
}

cudaError_t
cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags)
{
    (void)flags;
    if (event == NULL) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    ga_emu_stream *s = resolve(stream);
    ga_emu_stream *on;
    uint64_t seq, captured;
    {
        std::lock_guard<std::mutex> g(state_lock);
        on = event->stream;
        seq = event->seq;
        captured = event->captured;
    }
    uint64_t mine = capture_id(s);
    if (captured != 0 && captured == mine && on == s) {
        return cudaSuccess; /* in order on the capturing stream already */
    }
    if (captured != 0 || (mine != 0 && on != nullptr)) {
        /* a wait across the capture's edge (or a second stream joining it: a fork,
         * which CUDA allows and the emulation does not) */
        detail("%s (emulation check)",
               captured != 0 && mine == 0 ? "a wait for an event recorded in a capture"
                                          : "a wait that crosses a capture's edge");
        if (mine != 0) {
            capture_forbids(s, -1, "cudaStreamWaitEvent");
        }
        return fail(cudaErrorStreamCaptureIsolation);
    }
    if (on != nullptr && on != s) {
        enqueue(s, [on, seq] { wait_for(on, seq); });
    }
    return cudaSuccess;
}

cudaError_t
cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags)
{
    (void)flags;
    GA_EMU_FAIL_POINT("cudaEventCreateWithFlags");
    *event = new ga_emu_event{current_device, nullptr, 0, flags, nullptr};
    return cudaSuccess;
}

cudaError_t
cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, 0);
}

cudaError_t
cudaEventDestroy(cudaEvent_t event)
{
    delete event;
    return cudaSuccess;
}

cudaError_t
cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    GA_EMU_FAIL_POINT("cudaEventRecord");
    if (event == NULL) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    ga_emu_stream *s = resolve(stream);
    /* the real runtime requires the event and the stream to be of one device */
    if (s->device != event->device) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    /* the event completes when the stream has done everything queued so far; the
     * record itself is a task so that the position is a real queue entry, and it
     * takes the timestamp when the stream gets there, as the GPU does */
    std::shared_ptr<std::atomic<int64_t>> stamp;
    if (!(event->flags & cudaEventDisableTiming)) {
        stamp = std::make_shared<std::atomic<int64_t>>(0);
    }
    enqueue(s, [stamp] {
        if (stamp) {
            stamp->store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now().time_since_epoch())
                             .count());
        }
    });
    uint64_t seq = tail(s), captured = capture_id(s);
    std::lock_guard<std::mutex> g(state_lock);
    event->stream = s;
    event->seq = seq;
    event->stamp = stamp;
    event->captured = captured;
    return cudaSuccess;
}

cudaError_t
cudaEventSynchronize(cudaEvent_t event)
{
    GA_EMU_FAIL_POINT("cudaEventSynchronize");
    if (event == NULL) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    ga_emu_stream *on;
    uint64_t seq, captured;
    {
        std::lock_guard<std::mutex> g(state_lock);
        on = event->stream;
        seq = event->seq;
        captured = event->captured;
    }
    if (captured != 0) {
        return fail(cudaErrorCapturedEvent);
    }
    if (on == nullptr) {
        return cudaSuccess;
    }
    wait_for(on, seq);
    return fault_of(on->device);
}

cudaError_t
cudaEventQuery(cudaEvent_t event)
{
    if (event == NULL) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    ga_emu_stream *on;
    uint64_t seq, captured;
    {
        std::lock_guard<std::mutex> g(state_lock);
        on = event->stream;
        seq = event->seq;
        captured = event->captured;
    }
    if (captured != 0) {
        return fail(cudaErrorCapturedEvent);
    }
    if (on == nullptr) {
        return cudaSuccess;
    }
    {
        std::lock_guard<std::mutex> g(on->m);
        if (on->done < seq) {
            return cudaErrorNotReady; /* not an error: not recorded as the last one */
        }
    }
    return fault_of(on->device);
}

cudaError_t
cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (ms == NULL) {
        return fail(cudaErrorInvalidValue);
    }
    if (start == NULL || end == NULL) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    std::shared_ptr<std::atomic<int64_t>> a, b;
    {
        std::lock_guard<std::mutex> g(state_lock);
        a = start->stamp;
        b = end->stamp;
    }
    /* never recorded, or made with cudaEventDisableTiming: as the runtime says */
    if (!a || !b) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    cudaError_t q = cudaEventQuery(start);
    if (q == cudaSuccess) {
        q = cudaEventQuery(end);
    }
    if (q != cudaSuccess) {
        return q; /* cudaErrorNotReady (not recorded as the last error) or a fault */
    }
    *ms = (float)((double)(b->load() - a->load()) / 1e6);
    return cudaSuccess;
}

cudaError_t
ga_emu_event_time_ns(cudaEvent_t event, int64_t *ns)
{
    if (event == NULL || ns == NULL) {
        return fail(cudaErrorInvalidValue);
    }
    std::shared_ptr<std::atomic<int64_t>> a;
    {
        std::lock_guard<std::mutex> g(state_lock);
        a = event->stamp;
    }
    if (!a) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    cudaError_t q = cudaEventQuery(event);
    if (q != cudaSuccess) {
        return q;
    }
    *ns = a->load();
    return cudaSuccess;
}

cudaError_t
ga_emu_occupancy(int *blocks, int block_size, size_t dynamic_shared)
{
    occupancy_calls++;
    if (blocks == NULL || block_size <= 0 || block_size > 1024 ||
        dynamic_shared > 48 * 1024) {
        return fail(cudaErrorInvalidValue);
    }
    int warps = (block_size + 31) / 32;
    int by_threads = 64 / warps; /* 2048 threads = 64 warps a multiprocessor */
    /* 1 KiB of shared memory a block is reserved by the system, as on sm_90 */
    int by_shared = (int)((228 * 1024) / (dynamic_shared + 1024));
    int b = by_threads < 32 ? by_threads : 32;
    *blocks = b < by_shared ? b : by_shared;
    return cudaSuccess;
}

cudaError_t
cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
    if (!valid_device(device) || !valid_device(peer)) {
        return fail(cudaErrorInvalidDevice);
    }
    *can = device != peer;
    return cudaSuccess;
}

cudaError_t
cudaDeviceEnablePeerAccess(int peer, unsigned flags)
{
    (void)flags;
    if (!valid_device(peer) || peer == current_device) {
        return fail(cudaErrorInvalidDevice);
    }
    std::lock_guard<std::mutex> g(state_lock);
    int &on = devices[current_device].peer_enabled[peer];
    if (on) {
        /* as the runtime does, and it stays as the last error until read */
        return fail(cudaErrorPeerAccessAlreadyEnabled);
    }
    on = 1;
    return cudaSuccess;
}

}  // extern "C"
