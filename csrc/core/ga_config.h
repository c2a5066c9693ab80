/* ga_config.h: limits shared by the core, the binding and the backends. */
#ifndef GA_CONFIG_H
#define GA_CONFIG_H

/* Most dimensions an array may have. Shapes and strides live inline in the array
 * (no second allocation per array); 24 keeps a Python array object small. */
#define GA_MAXDIMS 24

/* Most operands (outputs + inputs) of one elementwise kernel. */
#define GA_MAXARGS 4

/* Most devices of one kind the library tracks. */
#define GA_MAX_DEVICES 16

#if defined(__CUDACC__)
#define GA_HD __host__ __device__
#else
#define GA_HD
#endif

/* GA_NO_UNROLL before a loop whose copies would cost more machine code than they save
 * time: in device code, one copy of a body with 64-bit divisions (each tens of
 * instructions); elsewhere nothing. */
#if defined(__CUDA_ARCH__)
#define GA_NO_UNROLL _Pragma("unroll 1")
#else
#define GA_NO_UNROLL
#endif

/* GA_IVDEP before a CPU loop whose iterations do not depend on each other through
 * memory (outputs never overlap inputs except in place), so GCC vectorises it without
 * a runtime overlap check. Clang has no such hint (its vectorize(assume_safety) warns
 * about every loop it cannot vectorise, e.g. complex or float16 ones) and checks
 * overlap at run time itself; to it, GCC's pragma is an unknown one (a warning: -Werror
 * fails the macOS and Windows builds), so clang gets nothing. */
#if defined(__GNUC__) && !defined(__clang__)
#define GA_IVDEP _Pragma("GCC ivdep")
#else
#define GA_IVDEP
#endif

/* GA_OPAQUE(v): the int v, unknown to the optimiser from here on, in device code. For
 * code written to be shared by several paths, which nvcc would otherwise copy into
 * each of them again (jump threading): see ga_rm_put. Elsewhere nothing. */
#if defined(__CUDA_ARCH__)
#define GA_OPAQUE(v) asm volatile("" : "+r"(v))
#else
#define GA_OPAQUE(v) ((void)0)
#endif

/* GA_K_ELEMENT(p, A): p as the address of an element aligned to A bytes, for the
 * memcpy that loads or stores it (ga_elementwise_math.h, ga_philox.h, the CUDA
 * kernels).
 *   - CPU (C11): p itself. CPU arrays may be unaligned (a NumPy view at an odd byte
 *     offset), and memcpy of a constant size is one plain load on every CPU we build for.
 *   - nvcc device code: p with the alignment promised to the compiler, so the memcpy is
 *     one LDG/STG of the element's width instead of one per byte (a GPU has no
 *     unaligned loads, so unknown alignment forces byte loads). The promise holds
 *     because the core hands GPU kernels element-aligned operands only
 *     (ga_element_aligned in ga_transfer.h stages the rest).
 *   - the emulated build: the promise is checked, as a GPU checks it: an unaligned
 *     element is a cudaErrorMisalignedAddress fault of the launch. */
#if defined(__CUDA_ARCH__)
#define GA_K_ELEMENT(p, A) __builtin_assume_aligned((p), (A))
#elif defined(GA_CUDA_EMULATION) && defined(__cplusplus)
extern "C" void ga_emu_check_element(const void *p, unsigned long align);
static inline void *
ga_k_element_checked(const void *p, unsigned long align)
{
    if ((unsigned long)(__UINTPTR_TYPE__)p % align != 0) {
        ga_emu_check_element(p, align);
    }
    return (void *)p;
}
#define GA_K_ELEMENT(p, A) ga_k_element_checked((p), (A))
#else
#define GA_K_ELEMENT(p, A) (p)
#endif

#endif
