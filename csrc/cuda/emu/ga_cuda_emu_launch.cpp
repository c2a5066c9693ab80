/* ga_cuda_emu_launch.cpp: an emulated launch: schedule, blocks, barriers, warp calls. */
#include <chrono>

#include "ga_cuda_emu_internal.h"

using namespace ga_emu;

/* CUDA's built-in variables (ga_cuda_emu.h): the running thread's (launch_lock). */
uint3 threadIdx;
uint3 blockIdx;
dim3 blockDim;
dim3 gridDim;

namespace {

/* --- the schedule (GPUARR_CUDA_EMULATE_SCHEDULE) ------------------------------------
 * A GPU promises no order between the blocks of a grid, nor between the threads of a
 * block from one barrier to the next; a kernel that depends on one has a race that
 * an emulator running everything in index order would never show. So blocks run in a
 * pseudo-random order, and so do the threads of a block between two barriers (thread
 * 0 first: it decides how the block runs), both drawn from the seed, the stream and
 * the launch's number on it: the same program with the same seed replays the same
 * schedule, another seed gives another. */

uint64_t
mix64(uint64_t z)
{
    /* splitmix64's finaliser: every input bit moves every output bit */
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

struct schedule_rng {
    uint64_t state;
    unsigned
    below(unsigned n)
    {
        state += 0x9e3779b97f4a7c15ull;
        return (unsigned)((mix64(state) >> 32) * n >> 32);
    }
};

/* Put order[from..] in a random order (Fisher-Yates). */
void
shuffle(std::vector<unsigned> &order, size_t from, schedule_rng &r)
{
    for (size_t i = order.size(); i > from + 1; i--) {
        size_t j = from + r.below((unsigned)(i - from));
        std::swap(order[i - 1], order[j]);
    }
}

/* A random permutation of [0, n) for any n up to 2^64 without storing it: a 4-round
 * Feistel network is a bijection on [0, 4^h) with 4^h >= n, and walking its cycle
 * until the value falls below n makes it one on [0, n) (fewer than 4 steps on
 * average). A grid may have billions of blocks; this costs nothing per launch. */
struct block_order {
    uint64_t n, key, mask;
    unsigned half;

    block_order(uint64_t blocks, uint64_t k) : n(blocks), key(k), half(0)
    {
        while (half < 32 && (half == 0 || ((uint64_t)1 << (2 * half)) < n)) {
            half++;
        }
        mask = ((uint64_t)1 << half) - 1;
    }
    uint64_t
    at(uint64_t i) const
    {
        uint64_t x = i;
        do {
            uint64_t l = x >> half, r = x & mask;
            for (uint64_t round = 0; round < 4; round++) {
                uint64_t t = l ^ (mix64(r ^ key ^ round << 60) & mask);
                l = r;
                r = t;
            }
            x = l << half | r;
        } while (x >= n);
        return x;
    }
};

/* The running block's thread order (under launch_lock); never destroyed, like the
 * fiber pool: a detached worker may still be in a launch when the process exits. */
std::vector<unsigned> &thread_order = *new std::vector<unsigned>();

/* Resume, in a random order, every fiber in state `from`. */
void
resume_all(int from, schedule_rng &r)
{
    shuffle(thread_order, 0, r);
    for (unsigned i : thread_order) {
        fiber *f = fiber_pool[i];
        if (f->state == from) {
            f->state = F_IDLE;
            resume(f);
        }
    }
}

/* One block, its threads ordered by `key`; returns 0, or -1 after a malformed barrier
 * or warp primitive (with error_detail), or -2 when no fiber stack could be had.
 *
 * Warps. A lane reaching a warp primitive suspends (F_AT_WARP) like one at a barrier.
 * When every live fiber is suspended, the warp primitives whose lanes have all
 * arrived complete together (resolve_warps) and their lanes run on; only when no warp
 * primitive can complete does a __syncthreads complete. A warp primitive that still
 * cannot complete then names a lane that exited or waits at the barrier: an error. */
int
run_block(unsigned nthreads, uint64_t key)
{
    fiber *f0 = fiber_get(0);
    if (f0 == nullptr) {
        return -2;
    }
    schedule_rng rng{key};
    thread_order.resize(nthreads);
    for (unsigned i = 0; i < nthreads; i++) {
        thread_order[i] = i;
    }
    shuffle(thread_order, 1, rng);
    L.bar_acc = 0;
    L.bar_count = 0;
    L.nthreads = nthreads;
    L.spins = 0;
    L.deadlock = 0;
    const int first = start(f0, 0);
    if (L.deadlock) {
        return -3;
    }
    if (first == F_DONE) {
        /* Thread 0 met no barrier and no warp primitive: the block has no intra-block
         * communication, so its threads may run one after another as plain calls. */
        for (unsigned k = 1; k < nthreads; k++) {
            set_thread_index(thread_of(thread_order[k]));
            run_thread();
            if (L.direct_barrier) {
                return -1;
            }
            if (L.deadlock) {
                return -3;
            }
        }
        return 0;
    }
    for (unsigned k = 1; k < nthreads; k++) {
        fiber *f = fiber_get(thread_order[k]);
        if (f == nullptr) {
            return -2;
        }
    }
    for (unsigned k = 1; k < nthreads; k++) {
        start(fiber_pool[thread_order[k]], thread_order[k]);
    }
    for (;;) {
        if (L.deadlock) {
            return -3;
        }
        int released = resolve_warps(nthreads);
        if (released < 0) {
            return -1;
        }
        if (released > 0) {
            resume_all(F_READY, rng);
            continue;
        }
        int live = 0;
        for (unsigned i = 0; i < nthreads; i++) {
            int st = fiber_pool[i]->state;
            if (st == F_AT_WARP) {
                return missing_lane_error(nthreads);
            }
            live |= st == F_AT_BARRIER;
        }
        if (!live) {
            return 0;
        }
        L.bar_result = L.bar_acc;
        L.bar_acc = 0;
        L.bar_count = 0;
        resume_all(F_AT_BARRIER, rng);
    }
}

}  // namespace

extern "C" {

void *
ga_emu_dynamic_shared(void)
{
    return L.dynamic_shared.empty() ? nullptr : L.dynamic_shared.data();
}

/* Suspend the running fiber in `state`; returns when the scheduler resumes it. */
static void
suspend(fiber *f, int state)
{
    f->state = state;
#if GA_EMU_ASAN
    __sanitizer_start_switch_fiber(&f->fake_stack, L.sched_bottom, L.sched_size);
#endif
    switch_to_scheduler(f);
#if GA_EMU_ASAN
    __sanitizer_finish_switch_fiber(f->fake_stack, &L.sched_bottom, &L.sched_size);
#endif
}

/* A synchronisation point reached outside a fiber: thread 0 of this block reached
 * none, so the block runs as plain calls and cannot wait. */
static void
direct_sync(const char *what)
{
    if (!L.direct_barrier) {
        snprintf(error_detail, sizeof(error_detail),
                 "kernel reached %s in thread (%u,%u,%u) of block (%u,%u,%u) but thread 0 "
                 "of that block reached no barrier or warp primitive: a divergent barrier, "
                 "or a warp primitive only some warps run (the emulator runs blocks whose "
                 "thread 0 meets no synchronisation as plain loops; emulation check)",
                 what, threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x, blockIdx.y,
                 blockIdx.z);
    }
    L.direct_barrier = 1;
}

static void
barrier(int pred)
{
    fiber *f = L.current;
    if (f == nullptr) {
        direct_sync("__syncthreads");
        return;
    }
    L.bar_acc += pred != 0;
    L.bar_count++;
    suspend(f, F_AT_BARRIER);
}

unsigned long long
ga_emu_warp(int op, unsigned mask, unsigned long long value, int arg, int width)
{
    fiber *f = L.current;
    if (f == nullptr) {
        direct_sync("a warp primitive");
        return value;
    }
    f->w.op = op;
    f->w.mask = mask;
    f->w.value = value;
    f->w.arg = arg;
    f->w.width = width;
    suspend(f, F_AT_WARP);
    return f->w.result;
}

unsigned
__activemask(void)
{
    unsigned index = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned base = index - index % 32, bits = 0;
    for (unsigned l = 0; l < 32 && base + l < L.nthreads; l++) {
        bool exited = L.current != nullptr && base + l < fiber_pool.size() &&
                      fiber_pool[base + l]->state == F_DONE;
        if (!exited) {
            bits |= 1u << l;
        }
    }
    return bits;
}

void
ga_emu_fault(cudaError_t err, const char *what, const void *p)
{
    if (L.fault == cudaSuccess) {
        char where_[64];
        snprintf(where_, sizeof(where_), "%p", p);
        snprintf(error_detail, sizeof(error_detail),
                 "%s at address %s in thread (%u,%u,%u) of block (%u,%u,%u): not aligned to "
                 "the access size (emulation check)",
                 what, where_, threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x, blockIdx.y,
                 blockIdx.z);
        L.fault = err;
    }
}

/* An element load or store (GA_K_ELEMENT, ga_config.h) at an address not aligned to
 * the element: on a GPU the typed access faults; so does the emulated one. */
extern "C" void
ga_emu_check_element(const void *p, unsigned long align)
{
    char what[64];
    snprintf(what, sizeof(what), "%lu-byte element load or store", align);
    ga_emu_fault(cudaErrorMisalignedAddress, what, p);
}

void
__syncthreads(void)
{
    barrier(0);
}

int
__syncthreads_count(int pred)
{
    barrier(pred);
    return L.bar_result;
}

int
__syncthreads_and(int pred)
{
    /* all true <=> no thread passed a false predicate */
    barrier(!pred);
    return L.bar_result == 0;
}

int
__syncthreads_or(int pred)
{
    barrier(pred);
    return L.bar_result != 0;
}

void
__threadfence(void)
{
}

void
__nanosleep(unsigned ns)
{
    (void)ns;
    if (++L.spins < spin_limit) {
        return;
    }
    snprintf(error_detail, sizeof(error_detail),
             "thread (%u,%u,%u) of block (%u,%u,%u) paused %ld times in a spin wait that "
             "did not end: the emulator runs blocks one after another, so it waited for a "
             "block that runs later, or for nothing (a deadlock on a GPU whenever the two "
             "are not resident together; GPUARR_CUDA_EMULATE_SPINS; emulation check)",
             threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x, blockIdx.y, blockIdx.z,
             L.spins);
    L.deadlock = 1;
    throw spin_deadlock();
}

void
__threadfence_block(void)
{
}

}  // extern "C"
static void run_grid(dim3 grid, dim3 block, size_t shmem, void (*thread_fn)(void *),
                     void *ctx, uint64_t key);
extern "C" {

void
ga_emu_run(dim3 grid, dim3 block, size_t shmem, cudaStream_t stream,
           void (*thread_fn)(void *), void *ctx, void (*free_ctx)(void *))
{
    if (ga_emu_inject("launch")) {
        free_ctx(ctx);
        return;
    }
    if (fault_of(current_device) != cudaSuccess) { /* sticky, as on a GPU */
        free_ctx(ctx);
        return;
    }
    unsigned long long nthreads = (unsigned long long)block.x * block.y * block.z;
    if (nthreads == 0 || nthreads > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 ||
        grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535) {
        snprintf(error_detail, sizeof(error_detail),
                 "launch with grid (%u,%u,%u) and block (%u,%u,%u) (emulation check)",
                 grid.x, grid.y, grid.z, block.x, block.y, block.z);
        fail(cudaErrorInvalidConfiguration);
        free_ctx(ctx);
        return;
    }
    if (shmem > 48 * 1024) {
        fail(cudaErrorInvalidValue);
        free_ctx(ctx);
        return;
    }
    /* checked now (cudaGetLastError reports a bad launch at once); run on the worker,
     * whose faults the next wait reports. The schedule is keyed by the launch's place
     * in its stream, which the program decides, not by when the worker gets to it. */
    ga_emu_stream *s = resolve(stream);
    uint64_t n;
    {
        std::lock_guard<std::mutex> g(s->m);
        n = s->launches++;
    }
    uint64_t stream_id = (uint64_t)s->device << 32 | s->ordinal;
    uint64_t key = mix64(mix64(mix64(schedule_seed) ^ stream_id) ^ n);
    /* the arguments live as long as the task: one run for a launch, every run of a
     * graph for a launch captured into one (ga_cuda_emu_graphs.cpp) */
    std::shared_ptr<void> args(ctx, free_ctx);
    enqueue(s, [grid, block, shmem, thread_fn, args, key] {
        in_window w;
        run_grid(grid, block, shmem, thread_fn, args.get(), key);
    });
}

}  // extern "C"

/* A launch failed: name the schedule's seed in the message, so the failure can be
 * replayed (GPUARR_CUDA_EMULATE_SCHEDULE=seed); a race may fail under one seed only. */
void
ga_emu::fail_launch(cudaError_t err)
{
    size_t used = strlen(error_detail);
    snprintf(error_detail + used, sizeof(error_detail) - used,
             "%s[emulated schedule seed %llu: GPUARR_CUDA_EMULATE_SCHEDULE=%llu replays it]",
             used ? " " : "", schedule_seed.load(), schedule_seed.load());
    fail(err);
}

/* The grid's blocks, in the schedule's order, on a stream's worker. */
static void
run_grid(dim3 grid, dim3 block, size_t shmem, void (*thread_fn)(void *), void *ctx,
         uint64_t key)
{
    if (schedule_is_random && !schedule_said.exchange(true)) {
        fprintf(stderr,
                "gpuarr: emulated CUDA schedule seed %llu "
                "(GPUARR_CUDA_EMULATE_SCHEDULE=random; set it to %llu to replay)\n",
                schedule_seed.load(), schedule_seed.load());
    }
    unsigned long long nthreads = (unsigned long long)block.x * block.y * block.z;
    uint64_t nblocks = (uint64_t)grid.x * grid.y * grid.z;
    block_order order(nblocks, key);
    auto started = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> g(launch_lock);
    L.fn = thread_fn;
    L.ctx = ctx;
    L.direct_barrier = 0;
    L.fault = cudaSuccess;
    L.current = nullptr;
    L.dynamic_shared.assign(shmem, 0xA5); /* not zero, like real shared memory */
    gridDim = grid;
    blockDim = block;
    for (uint64_t i = 0; i < nblocks; i++) {
        uint64_t b = order.at(i);
        blockIdx.x = (unsigned)(b % grid.x);
        blockIdx.y = (unsigned)(b / grid.x % grid.y);
        blockIdx.z = (unsigned)(b / grid.x / grid.y);
        if (watchdog_seconds > 0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
                    .count() > watchdog_seconds) {
            snprintf(error_detail, sizeof(error_detail),
                     "a kernel ran for more than %g s (GPUARR_CUDA_EMULATE_WATCHDOG, the "
                     "emulated display watchdog)",
                     watchdog_seconds);
            fail_launch(cudaErrorLaunchTimeout);
            return;
        }
        int r = run_block((unsigned)nthreads, mix64(key ^ b));
        if (r == -2) {
            fail_launch(cudaErrorLaunchOutOfResources);
            return;
        }
        if (r == -3) {
            fail_launch(cudaErrorLaunchTimeout);
            return;
        }
        if (r != 0) {
            fail_launch(cudaErrorLaunchFailure);
            return;
        }
        if (L.fault != cudaSuccess) {
            fail_launch(L.fault);
            return;
        }
    }
    /* a launch of few blocks (one serial block over a large input) passes the check
     * between blocks; it still ran too long: a GPU's watchdog would have killed it */
    if (watchdog_seconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() >
            watchdog_seconds) {
        snprintf(error_detail, sizeof(error_detail),
                 "a kernel ran for more than %g s (GPUARR_CUDA_EMULATE_WATCHDOG, the "
                 "emulated display watchdog)",
                 watchdog_seconds);
        fail_launch(cudaErrorLaunchTimeout);
    }
}
