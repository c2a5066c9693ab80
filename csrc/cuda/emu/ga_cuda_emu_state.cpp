/* ga_cuda_emu_state.cpp: the emulator's state, address map and memcheck window. */
#include "ga_cuda_emu_internal.h"

using namespace ga_emu;

namespace ga_emu {

/* --- state ------------------------------------------------------------------------ */

/* What each holds: ga_cuda_emu_internal.h. */
std::mutex state_lock;
std::mutex launch_lock;
int ndevices;
int physical_device[64];
size_t memory_limit;
int multiprocessors = 132;
ga_emu_device devices[64];
double watchdog_seconds;
long spin_limit = 10000;
std::atomic<unsigned long long> schedule_seed{default_schedule_seed};
unsigned long long random_schedule_seed;
std::atomic<bool> schedule_said;
std::atomic<bool> schedule_is_random;
cudaError_t device_fault[64];
char device_fault_detail[64][512];
std::map<uintptr_t, block_info> blocks;
thread_local int current_device;
std::atomic<long long> set_device_calls{0};
std::atomic<long long> occupancy_calls{0};
thread_local cudaError_t last_error = cudaSuccess;
thread_local char error_detail[512];

cudaError_t
fail(cudaError_t err)
{
    last_error = err;
    return err;
}

void
detail(const char *fmt, const char *arg)
{
    snprintf(error_detail, sizeof(error_detail), fmt, arg);
}

/* The block that holds [p, p + n), or NULL. Caller holds state_lock. */
block_info *
find_block(const void *p, size_t n, uintptr_t *start)
{
    uintptr_t a = (uintptr_t)p;
    auto it = blocks.upper_bound(a);
    if (it == blocks.begin()) {
        return nullptr;
    }
    --it;
    if (a - it->first + n > it->second.size && !(n == 0 && a - it->first <= it->second.size)) {
        return nullptr;
    }
    if (start) {
        *start = it->first;
    }
    return &it->second;
}

/* Device code may touch only the first n of the `size` bytes at offset `off` of `b`
 * (n <= size): close [off + n, off + size), open the rest of that range, and leave
 * the block's other ranges as they are. Caller holds state_lock. */
void
set_extent(block_info &b, size_t off, size_t size, size_t n)
{
    size_t end = off + size;
    auto c = b.closed.upper_bound(off);
    if (c != b.closed.begin() && std::prev(c)->second > off) {
        --c; /* it starts before off and reaches into the range */
    }
    while (c != b.closed.end() && c->first < end) {
        size_t from = c->first, to = c->second;
        c = b.closed.erase(c);
        /* the parts outside [off, end) stay closed; the next range starts past to */
        if (from < off) {
            b.closed[from] = off;
        }
        if (to > end) {
            b.closed[end] = to;
        }
    }
    if (n < size) {
        b.closed[off + n] = end;
    }
}

/* Memcheck (AddressSanitizer builds only). Device memory is host memory here, so a
 * host dereference of a device pointer (a bug that crashes on a GPU, or reads garbage)
 * would pass silently. So every device block is poisoned for the host, and opened
 * only while device work runs: a kernel, copy, memset or cuBLAS call on a stream's
 * worker. Emulator code that reads device memory on the host's behalf (the index
 * error record, the DLPack selftests' fake libraries) goes through these copies, as
 * it would on a GPU.
 *
 * Which blocks does a running task touch? A copy knows, a kernel does not: its
 * arguments are opaque values (a pointer may hide in a struct, or be computed).
 * So the window is all or nothing: while at least one task of any device runs, every
 * live device block is addressable up to its extent; when none runs, all are
 * poisoned. All devices, not one: a kernel may read a peer's memory. The price: a
 * host dereference is caught only when it happens while no device work runs (a
 * stream is idle, or the host waited), which is where it usually is, since host
 * code that reads device results does so after a wait (a read while work runs is a
 * race on a GPU too, which this cannot see). Tasks on several streams may overlap:
 * the count of tasks in the window (under state_lock) opens on 0 -> 1 and poisons on
 * 1 -> 0. Opening costs a shadow write of 1/8 of the live device bytes per
 * idle-to-busy transition.
 *
 * Within a block, the ranges ga_emu_mem_extent closed (the caching allocator's
 * rounding after each request, in a whole block or in each piece of a split one) and
 * ASan's redzone after the block stay unaddressable, so reading one byte past the
 * requested size is a report. Pinned host memory is never poisoned: the host may
 * touch it, as on a GPU. */
int window_users; /* tasks in the window; state_lock */

void
shadow_open(uintptr_t start, const block_info &b)
{
#if GA_EMU_ASAN
    ASAN_UNPOISON_MEMORY_REGION((void *)start, b.size);
    for (auto &c : b.closed) {
        ASAN_POISON_MEMORY_REGION((void *)(start + c.first), c.second - c.first);
    }
#else
    (void)start, (void)b;
#endif
}

void
shadow_close(uintptr_t start, const block_info &b)
{
#if GA_EMU_ASAN
    ASAN_POISON_MEMORY_REGION((void *)start, b.size);
#else
    (void)start, (void)b;
#endif
}

void
window_enter(void)
{
    if (!GA_EMU_ASAN) {
        return;
    }
    std::lock_guard<std::mutex> g(state_lock);
    if (window_users++ == 0) {
        for (auto &kv : blocks) {
            if (kv.second.device >= 0) {
                shadow_open(kv.first, kv.second);
            }
        }
    }
}

void
window_leave(void)
{
    if (!GA_EMU_ASAN) {
        return;
    }
    std::lock_guard<std::mutex> g(state_lock);
    if (--window_users == 0) {
        for (auto &kv : blocks) {
            if (kv.second.device >= 0) {
                shadow_close(kv.first, kv.second);
            }
        }
    }
}

/* The device of the block that holds [p, p + n): -1 for pinned host memory, -2 for
 * anything else (pageable host memory). */
int
where(const void *p, size_t n)
{
    std::lock_guard<std::mutex> g(state_lock);
    const block_info *b = find_block(p, n, nullptr);
    return b ? b->device : -2;
}

}  // namespace ga_emu

/* --- hooks for the library references of other files ----------------------------------- */

void
ga_emu_enqueue_task(cudaStream_t stream, std::function<void()> task)
{
    enqueue(resolve(stream), [t = std::move(task)] {
        in_window w;
        t();
    });
}

bool
ga_emu_on_device(const void *p, size_t n)
{
    return where(p, n) >= 0;
}

void
ga_emu_set_error_detail(const char *msg)
{
    snprintf(error_detail, sizeof(error_detail), "%s", msg);
}
