/* ga_cpu_reduce_simd.h: the SIMD runs of the CPU reductions (ga_cpu_reduce_simd.c),
 * called by ga_cpu_reduce.c for each contiguous run it folds, and the function
 * multiversioning both files use. Hand-vectorised copies of ga_reduce_math.h's rules
 * (the .c file says how they agree with it). */
#ifndef GA_CPU_REDUCE_SIMD_H
#define GA_CPU_REDUCE_SIMD_H
#include <stdint.h>

/* AVX-512, AVX2 and baseline x86-64 builds of a function, the loader picking one at
 * run time (GCC on x86-64 Linux; elsewhere one build). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) &&                 \
    defined(__linux__)
#define GA_SIMD_CLONES                                                                 \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define GA_SIMD_CLONES
#endif

/* The sum of n float32 at p (with `square`, of their float32 squares) in double, by
 * the widest code this CPU runs. */
double ga_cpu_sum_f32(const char *p, int64_t n, int square);

/* max (is_max) or min of n >= 1 float32 or float64 (dt) at p, by the widest code this
 * CPU runs; *nan is set when a NaN was among them (the caller stores NaN). */
double ga_cpu_minmax_run(int dt, int is_max, const char *p, int64_t n, int *nan);

#endif
