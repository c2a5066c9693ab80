/* ga_cuda_emu_fibers.cpp: fibers for an emulated block's threads; warp primitives. */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ga_cuda_emu_internal.h"

using namespace ga_emu;

/* --- launches ----------------------------------------------------------------------- */

/* Switching fibers. A 256-thread block that meets 10 barriers is 5,000 switches, so
 * their cost is the emulator's cost: glibc's swapcontext makes a sigprocmask system
 * call each time (about 0.5 us), while a switch that only saves the callee-saved
 * registers and the stack pointer, as boost.context does, costs a few nanoseconds.
 * That one is used on x86-64; elsewhere (or with shadow stacks, whose `ret` into a
 * new stack would fault) ucontext serves (GA_EMU_FAST_SWITCH, ga_cuda_emu_internal.h,
 * which declares ga_emu_switch). */
#if GA_EMU_FAST_SWITCH
__asm__(".text\n"
        ".p2align 4\n"
        /* global for ga_cuda_emu_launch.cpp's suspend, hidden: not exported */
        ".globl ga_emu_switch\n"
        ".type ga_emu_switch,@function\n"
        ".hidden ga_emu_switch\n"
        "ga_emu_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size ga_emu_switch,.-ga_emu_switch\n");
#endif

namespace ga_emu {

/* Each CUDA thread of a barrier block has a fiber. Kernels keep little on the stack
 * (AddressSanitizer's redzones make frames larger), and a guard page turns an overflow
 * into a fault. */
const size_t fiber_stack_size = GA_EMU_ASAN ? 512 * 1024 : 256 * 1024;
/* Stack tops are staggered by a few cache lines: tops 256 KiB apart would all map to
 * the same cache sets, and 256 fibers' hot frames would evict each other. */
const size_t fiber_stack_colours = 32, fiber_stack_colour = 320;

/* Fibers are reused for the life of the process. The pool is never destroyed, on
 * purpose: a static vector would be destroyed at exit before the leak checker looks,
 * leaving its fibers unreachable (a false leak report); a pool that stays reachable
 * is what it is, a cache. */
std::vector<fiber *> &fiber_pool = *new std::vector<fiber *>();
launch_state L;

/* Run the kernel for the current thread; false when it was abandoned in a spin wait. */
bool
run_thread(void)
{
    try {
        L.fn(L.ctx);
    } catch (const spin_deadlock &) {
        return false;
    }
    return true;
}

fiber *
fiber_get(size_t i)
{
    while (fiber_pool.size() <= i) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        void *m = mmap(NULL, fiber_stack_size + page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            return nullptr;
        }
        mprotect(m, page, PROT_NONE); /* overflow faults instead of corrupting */
        fiber *f = new fiber();
        f->stack = (char *)m + page;
        f->stack_size = fiber_stack_size -
                        fiber_pool.size() % fiber_stack_colours * fiber_stack_colour;
        fiber_pool.push_back(f);
    }
    return fiber_pool[i];
}

void
set_thread_index(uint3 t)
{
    threadIdx = t;
}

uint3
thread_of(unsigned i)
{
    uint3 t;
    t.x = i % blockDim.x;
    t.y = (i / blockDim.x) % blockDim.y;
    t.z = i / (blockDim.x * blockDim.y);
    return t;
}

static void
fiber_entry(void)
{
    fiber *f = L.current;
#if GA_EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &L.sched_bottom, &L.sched_size);
#endif
    run_thread();
    f->state = F_DONE;
#if GA_EMU_ASAN
    __sanitizer_start_switch_fiber(nullptr, L.sched_bottom, L.sched_size);
#endif
#if GA_EMU_FAST_SWITCH
    switch_to_scheduler(f); /* never resumed: a done fiber is started afresh */
    abort();
#endif
    /* ucontext: returning resumes uc_link, the scheduler */
}

/* Run `f` until it reaches a barrier or ends. */
void
resume(fiber *f)
{
    set_thread_index(f->tid);
    L.current = f;
#if GA_EMU_ASAN
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, f->stack, f->stack_size);
#endif
#if GA_EMU_FAST_SWITCH
    ga_emu_switch(&L.sched_sp, f->sp);
#else
    swapcontext(&L.sched, &f->ctx);
#endif
#if GA_EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
    L.current = nullptr;
}

int
start(fiber *f, unsigned index)
{
    f->index = index;
    f->tid = thread_of(index);
    f->state = F_IDLE;
#if GA_EMU_FAST_SWITCH
    /* The frame ga_emu_switch pops, from the (16-byte aligned) top down: a zero return
     * address for fiber_entry (which never returns), fiber_entry as the address `ret`
     * jumps to, six zero registers, then the caller's MXCSR and x87 control word. At
     * fiber_entry's first instruction the stack is aligned as after a call. */
    uintptr_t top = ((uintptr_t)f->stack + f->stack_size) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)top;
    *--sp = 0;
    *--sp = (uint64_t)(uintptr_t)&fiber_entry;
    for (int r = 0; r < 6; r++) {
        *--sp = 0;
    }
    uint32_t mxcsr;
    uint16_t fpucw;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpucw));
    *--sp = (uint64_t)mxcsr | (uint64_t)fpucw << 32;
    f->sp = sp;
#else
    getcontext(&f->ctx);
    f->ctx.uc_stack.ss_sp = f->stack;
    f->ctx.uc_stack.ss_size = f->stack_size;
    f->ctx.uc_link = &L.sched;
    makecontext(&f->ctx, fiber_entry, 0);
#endif
    resume(f);
    return f->state;
}

/* The lane `src` a shuffle of lane `lane` reads, by CUDA's rules for `width`
 * segments; `lane` itself where CUDA returns the caller's own value. */
static unsigned
shuffle_source(const warp_op &w, unsigned lane)
{
    unsigned width = (unsigned)w.width, seg = lane & ~(width - 1);
    switch (w.op) {
    case GA_EMU_SHFL_IDX:
        return seg + ((unsigned)w.arg & (width - 1));
    case GA_EMU_SHFL_UP:
        return lane - seg >= (unsigned)w.arg ? lane - (unsigned)w.arg : lane;
    case GA_EMU_SHFL_DOWN:
        return lane - seg + (unsigned)w.arg < width ? lane + (unsigned)w.arg : lane;
    case GA_EMU_SHFL_XOR: {
        unsigned src = lane ^ (unsigned)w.arg;
        /* earlier segments are readable, later ones are not */
        return src < seg + width && src < 32 ? src : lane;
    }
    }
    return lane;
}

static int
warp_error(const char *fmt, unsigned warp, unsigned a, unsigned b)
{
    snprintf(error_detail, sizeof(error_detail), fmt, warp, a, b, blockIdx.x, blockIdx.y,
             blockIdx.z);
    return -1;
}

/* Complete every warp primitive whose mask's lanes have all arrived at the same kind
 * of primitive (a shuffle does not meet a ballot): compute each
 * such lane's result from the values the lanes brought, and mark it F_READY. Returns
 * the number of lanes released, or -1 (with error_detail) on a malformed call. */
int
resolve_warps(unsigned nthreads)
{
    int released = 0;
    for (unsigned base = 0; base < nthreads; base += 32) {
        unsigned waiting = 0;
        unsigned n = nthreads - base < 32 ? nthreads - base : 32;
        for (unsigned l = 0; l < n; l++) {
            if (fiber_pool[base + l]->state == F_AT_WARP) {
                waiting |= 1u << l;
            }
        }
        if (waiting == 0) {
            continue;
        }
        unsigned ready = 0;
        for (unsigned l = 0; l < n; l++) {
            const warp_op &w = fiber_pool[base + l]->w;
            if (!(waiting >> l & 1)) {
                continue;
            }
            if (!(w.mask >> l & 1)) {
                return warp_error("lane %u of warp %u called a warp primitive with mask 0x%08x, "
                                  "which does not name the calling lane, in block "
                                  "(%u,%u,%u) (emulation check)",
                                  l, base / 32, w.mask);
            }
            if (w.width < 1 || w.width > 32 || (w.width & (w.width - 1)) != 0) {
                return warp_error("warp %u lane %u: shuffle width %d is not a power of two "
                                  "from 1 to 32, in block (%u,%u,%u) (emulation check)",
                                  base / 32, l, (unsigned)w.width);
            }
            /* every lane of the mask has arrived, at the same kind of primitive */
            bool all_here = (w.mask & ~waiting) == 0;
            for (unsigned k = 0; all_here && k < n; k++) {
                all_here = !(w.mask >> k & 1) || fiber_pool[base + k]->w.op == w.op;
            }
            if (all_here) {
                ready |= 1u << l;
            }
        }
        for (unsigned l = 0; l < n; l++) {
            if (!(ready >> l & 1)) {
                continue;
            }
            warp_op &w = fiber_pool[base + l]->w;
            if (w.op == GA_EMU_BALLOT) {
                unsigned bits = 0;
                for (unsigned k = 0; k < n; k++) {
                    if ((w.mask >> k & 1) && fiber_pool[base + k]->w.value != 0) {
                        bits |= 1u << k;
                    }
                }
                w.result = bits;
            } else if (w.op == GA_EMU_MATCH_ANY) {
                unsigned bits = 0;
                for (unsigned k = 0; k < n; k++) {
                    if ((w.mask >> k & 1) && fiber_pool[base + k]->w.value == w.value) {
                        bits |= 1u << k;
                    }
                }
                w.result = bits;
            } else if (w.op == GA_EMU_SYNCWARP) {
                w.result = 0;
            } else {
                unsigned src = shuffle_source(w, l);
                bool readable = src < n && (w.mask >> src & 1);
                w.result = readable ? fiber_pool[base + src]->w.value : w.value;
            }
        }
        for (unsigned l = 0; l < n; l++) {
            if (ready >> l & 1) {
                fiber_pool[base + l]->state = F_READY;
                released++;
            }
        }
    }
    return released;
}

/* Every lane still at a warp primitive names a lane that will never come: say which. */
int
missing_lane_error(unsigned nthreads)
{
    for (unsigned i = 0; i < nthreads; i++) {
        fiber *f = fiber_pool[i];
        if (f->state != F_AT_WARP) {
            continue;
        }
        unsigned base = i - i % 32;
        for (unsigned l = 0; l < 32; l++) {
            if (!(f->w.mask >> l & 1)) {
                continue;
            }
            const char *why = base + l >= nthreads                          ? "does not exist"
                              : fiber_pool[base + l]->state == F_DONE       ? "has exited"
                              : fiber_pool[base + l]->state == F_AT_BARRIER ? "waits at __syncthreads"
                                                                            : nullptr;
            if (why != nullptr) {
                snprintf(error_detail, sizeof(error_detail),
                         "thread (%u,%u,%u) of block (%u,%u,%u) waits at a warp primitive "
                         "with mask 0x%08x, but lane %u of its warp %s (compute-sanitizer "
                         "synccheck: barrier error; emulation check)",
                         f->tid.x, f->tid.y, f->tid.z, blockIdx.x, blockIdx.y, blockIdx.z,
                         f->w.mask, l, why);
                return -1;
            }
        }
    }
    snprintf(error_detail, sizeof(error_detail),
             "the lanes of a warp in block (%u,%u,%u) wait at different warp primitives, "
             "or with masks that never agree (emulation check)",
             blockIdx.x, blockIdx.y, blockIdx.z);
    return -1;
}

}  // namespace ga_emu
