/* ga_reduce_math.h: the math of every reduction and scan, shared by the CPU backend
 * (ga_cpu_reduce.c, C11) and the CUDA kernels (cuda/k_reduce.cu and cuda/k_block.cuh,
 * nvcc and the emulated host C++ build).
 *
 * The two backends traverse their input differently (chunks of a work buffer and a
 * binary counter of pairwise sums on the CPU; threads, warps, blocks and split passes
 * on a GPU), but what a partial result is, what the partial result of no elements is,
 * how two partial results combine and how the last one becomes an output element is
 * written here once. Before, each backend had its own copy and only
 * tests/devices/test_device_twins.py held them equal (they had drifted: of several complex
 * NaNs, max and min kept the last on the CPU and any on a GPU; all/any of float16
 * read bits on a GPU, a cast on the CPU).
 *
 * Accumulator kinds, by suffix: f32 / f64 (float / double), i32 / i64 (int /
 * int64_t; integers narrower than 32 bits compare as int), u32 / u64, c64 / c128
 * (ga_c64 / ga_c128, ga_elementwise_math.h's complex storage). Per operation:
 *
 *   SUM, PROD, CUMSUM, CUMPROD  identity ga_rm_identity_<k>(prod): 0 or 1 (1 + 0j);
 *                               combine ga_rm_sum_<k> / ga_rm_mul_<k>, or
 *                               ga_rm_sp_<k>(a, b, prod). Integers wrap (unsigned
 *                               arithmetic), as NumPy's integer sums do. Complex
 *                               products are the plain formula from the identity, so
 *                               (1+0j) * (-inf+0.5j) has a NaN imaginary part (0 *
 *                               -inf), as in NumPy's reduce. A scan's first
 *                               partial result is the first element itself
 *                               (NumPy's accumulate copies it): ga_rm_scan_step_<k>.
 *   MAX, MIN                    no identity (a dtype's lowest value is not one for a
 *                               NaN-aware max): "no element yet" is a flag the
 *                               backend keeps. Of two partial results a (earlier) and
 *                               b (later), ga_rm_takes_<k>(a, b, is_max) says whether
 *                               b replaces a: NaN wins and the first NaN stays; else
 *                               b only when strictly greater (less), so ties keep the
 *                               earlier one (max(0.0, -0.0) is 0.0, as NumPy's).
 *                               Complex numbers order lexicographically (real part,
 *                               then imaginary part); NaN in either part is NaN.
 *   ARGMAX, ARGMIN              the same order over (value, flat index): first NaN
 *                               wins, ties keep the lower index.
 *                               ga_rm_arg_takes_<k>(av, ai, bv, bi, is_max) for
 *                               partial results in any order (a GPU's tree).
 *   ALL, ANY                    truth is "nonzero" (NaN is true; complex: either part
 *                               nonzero), read through the shared casts to bool;
 *                               identity ga_rm_bool_identity(op), combine
 *                               ga_rm_bool_combine(a, b, op).
 *
 * The final accumulator reaches the output dtype through ga_elementwise_math.h's
 * writers (ga_rm_store_<k>): the elementwise cast's rules, so float -> int truncates
 * and NaN or out-of-range values give NumPy's x86 results (ga_f64_to_<dt>), integers
 * wrap. Elements reach an accumulator through the same casts (GA_K_READ_<dtype>,
 * ga_k_cast_*).
 *
 * Floating scans accumulate in double (complex128) on every device and round once,
 * into the output: float16, float32 and complex64 cumulative sums are more accurate
 * than NumPy's, which round every step. What stays a backend's choice is the order of
 * the combines and the width of a reduction's floating accumulator: the CPU sums
 * floats in double, pairwise; a GPU in the output's precision, Kahan-compensated per
 * thread, then a tree. Equal values (0.0 and -0.0) grouped differently may leave
 * either sign of zero.
 *
 * Compiles as C11, CUDA C++ and host C++: only GA_HD static inline functions, no
 * <complex.h>, no _Generic, no compound literals. Under C++ the bottom of the file
 * gives the same functions as overloads (ga_rm_takes(a, b, is_max)) for templates.
 */
#ifndef GA_REDUCE_MATH_H
#define GA_REDUCE_MATH_H

#include <stdint.h>

#include "ga_config.h"
#include "ga_dtype.h"
#include "ga_elementwise_math.h"
#include "ga_ops.h"

/* --- SUM / PROD and their scans ------------------------------------------------- */

/* 1 when `op` (a ga_reduce_op or, with is_scan, a ga_scan_op) multiplies. */
GA_HD static inline int
ga_rm_is_prod(int op, int is_scan)
{
    return is_scan ? op == GA_SCAN_CUMPROD : op == GA_RED_PROD;
}

#define GA_RM_REAL(k, T, WT)                                                           \
    GA_HD static inline T ga_rm_identity_##k(int prod)                                 \
    {                                                                                  \
        return (T)(prod ? 1 : 0);                                                      \
    }                                                                                  \
    GA_HD static inline T ga_rm_sum_##k(T a, T b)                                      \
    {                                                                                  \
        return (T)((WT)a + (WT)b);                                                     \
    }                                                                                  \
    GA_HD static inline T ga_rm_mul_##k(T a, T b)                                      \
    {                                                                                  \
        return (T)((WT)a * (WT)b);                                                     \
    }                                                                                  \
    GA_HD static inline T ga_rm_sp_##k(T a, T b, int prod)                             \
    {                                                                                  \
        return prod ? ga_rm_mul_##k(a, b) : ga_rm_sum_##k(a, b);                       \
    }
GA_RM_REAL(f32, float, float)
GA_RM_REAL(f64, double, double)
GA_RM_REAL(i64, int64_t, uint64_t)
GA_RM_REAL(u64, uint64_t, uint64_t)
#undef GA_RM_REAL

#define GA_RM_CPLX(k, CT, RT, dt)                                                      \
    GA_HD static inline CT ga_rm_identity_##k(int prod)                                \
    {                                                                                  \
        return ga_cmk_##dt((RT)(prod ? 1 : 0), (RT)0);                                 \
    }                                                                                  \
    GA_HD static inline CT ga_rm_sum_##k(CT a, CT b)                                   \
    {                                                                                  \
        return ga_cadd_##dt(a, b);                                                     \
    }                                                                                  \
    GA_HD static inline CT ga_rm_mul_##k(CT a, CT b)                                   \
    {                                                                                  \
        return ga_cmul_##dt(a, b);                                                     \
    }                                                                                  \
    GA_HD static inline CT ga_rm_sp_##k(CT a, CT b, int prod)                          \
    {                                                                                  \
        return prod ? ga_rm_mul_##k(a, b) : ga_rm_sum_##k(a, b);                       \
    }
GA_RM_CPLX(c64, ga_c64, float, complex64)
GA_RM_CPLX(c128, ga_c128, double, complex128)
#undef GA_RM_CPLX

/* Kahan's compensated sum *s += x (*c carries the lost low bits), for a serial fold
 * in a narrow accumulator (a GPU thread's float sum). Once *s is infinite or NaN the
 * compensation is dropped, so inf + 1 stays inf instead of becoming inf - inf = NaN. */
#define GA_RM_KAHAN(k, T)                                                              \
    GA_HD static inline void ga_rm_kahan_##k(T *s, T *c, T x)                          \
    {                                                                                  \
        T y = x - *c;                                                                  \
        T t = *s + y;                                                                  \
        T d = t - t;                                                                   \
        *c = d == d ? (t - *s) - y : (T)0;                                             \
        *s = t;                                                                        \
    }
GA_RM_KAHAN(f32, float)
GA_RM_KAHAN(f64, double)
#undef GA_RM_KAHAN

/* A scan's partial result after element x: the element itself when it is the first
 * of its row (NumPy's accumulate copies it; (1+0j) * (-inf+0.5j) would be -inf+nanj),
 * else the combine with the partial result before it. */
#define GA_RM_SCAN_STEP(k, T)                                                          \
    GA_HD static inline T ga_rm_scan_step_##k(T acc, T x, int prod, int first)         \
    {                                                                                  \
        return first ? x : ga_rm_sp_##k(acc, x, prod);                                 \
    }
GA_RM_SCAN_STEP(f64, double)
GA_RM_SCAN_STEP(i64, int64_t)
GA_RM_SCAN_STEP(u64, uint64_t)
GA_RM_SCAN_STEP(c128, ga_c128)
#undef GA_RM_SCAN_STEP

/* --- MAX / MIN / ARGMAX / ARGMIN -------------------------------------------------- */

GA_HD static inline int
ga_rm_isnan_f32(float v)
{
    return v != v;
}
GA_HD static inline int
ga_rm_isnan_f64(double v)
{
    return v != v;
}
GA_HD static inline int
ga_rm_isnan_c64(ga_c64 v)
{
    return (v.re != v.re) | (v.im != v.im);
}
GA_HD static inline int
ga_rm_isnan_c128(ga_c128 v)
{
    return (v.re != v.re) | (v.im != v.im);
}

/* b replaces a (a is the earlier partial result). Written with & and | on the
 * comparisons, not && and ||, so the CPU's loops over a buffer stay branch-free
 * (selects that vectorise). */
#define GA_RM_TAKES_FLOAT(k, T)                                                        \
    GA_HD static inline int ga_rm_takes_##k(T a, T b, int is_max)                      \
    {                                                                                  \
        return (a == a) & ((b != b) | (is_max ? b > a : b < a));                       \
    }
GA_RM_TAKES_FLOAT(f32, float)
GA_RM_TAKES_FLOAT(f64, double)
#undef GA_RM_TAKES_FLOAT

#define GA_RM_TAKES_INT(k, T)                                                          \
    GA_HD static inline int ga_rm_takes_##k(T a, T b, int is_max)                      \
    {                                                                                  \
        return is_max ? b > a : b < a;                                                 \
    }
GA_RM_TAKES_INT(i32, int32_t)
GA_RM_TAKES_INT(i64, int64_t)
GA_RM_TAKES_INT(u32, uint32_t)
GA_RM_TAKES_INT(u64, uint64_t)
#undef GA_RM_TAKES_INT

/* complex: lexicographic, NaN (in either part) above everything */
#define GA_RM_TAKES_CPLX(k, CT)                                                        \
    GA_HD static inline int ga_rm_takes_##k(CT a, CT b, int is_max)                    \
    {                                                                                  \
        int gt = is_max ? (b.re > a.re) | ((b.re == a.re) & (b.im > a.im))             \
                        : (a.re > b.re) | ((a.re == b.re) & (a.im > b.im));            \
        return (!ga_rm_isnan_##k(a)) & (ga_rm_isnan_##k(b) | gt);                      \
    }
GA_RM_TAKES_CPLX(c64, ga_c64)
GA_RM_TAKES_CPLX(c128, ga_c128)
#undef GA_RM_TAKES_CPLX

/* max (is_max) or min of two present partial results, a the earlier, and the
 * (value, index) pair that wins argmax / argmin when the indices may come in any
 * order: the rule above read over (value, index). */
#define GA_RM_SELECT(k, T)                                                             \
    GA_HD static inline T ga_rm_ext_##k(T a, T b, int is_max)                          \
    {                                                                                  \
        return ga_rm_takes_##k(a, b, is_max) ? b : a;                                  \
    }                                                                                  \
    GA_HD static inline int ga_rm_arg_takes_##k(T av, int64_t ai, T bv, int64_t bi,    \
                                                int is_max)                            \
    {                                                                                  \
        return bi < ai ? !ga_rm_takes_##k(bv, av, is_max)                              \
                       : ga_rm_takes_##k(av, bv, is_max);                              \
    }
GA_RM_SELECT(f32, float)
GA_RM_SELECT(f64, double)
GA_RM_SELECT(i32, int32_t)
GA_RM_SELECT(i64, int64_t)
GA_RM_SELECT(u32, uint32_t)
GA_RM_SELECT(u64, uint64_t)
GA_RM_SELECT(c64, ga_c64)
GA_RM_SELECT(c128, ga_c128)
#undef GA_RM_SELECT

/* --- ALL / ANY -------------------------------------------------------------------- */

GA_HD static inline int
ga_rm_bool_identity(int op)
{
    return op == GA_RED_ALL;
}
GA_HD static inline int
ga_rm_bool_combine(int a, int b, int op)
{
    return op == GA_RED_ALL ? a & b : a | b;
}

/* --- the final accumulator into an output element of dtype `dt` ------------------
 * Through ga_elementwise_math.h's writers (ga_w_<i|u|d|c>_<dtype>), the elementwise
 * cast. A switch per element: for one output element per reduction it costs nothing
 * that matters (the CPU's scans store a chunk at a time with the switch outside).
 * The writers fill a local word, and one store per element size writes it: a switch of
 * 14 stores would put three byte stores (bool, int8, uint8) and three of two bytes in
 * every reduction and scan kernel, where one of each does (the static report counts
 * global accesses by width). */
typedef struct {
    uint64_t lo, hi;
} ga_rm_word;

GA_HD static inline void
ga_rm_put(char *p, int size, const ga_rm_word *w)
{
    switch (size) {
    case 1: {
        uint8_t v = (uint8_t)w->lo;
        memcpy(GA_K_ELEMENT(p, 1), &v, 1);
        return;
    }
    case 2: {
        uint16_t v = (uint16_t)w->lo;
        memcpy(GA_K_ELEMENT(p, 2), &v, 2);
        return;
    }
    case 4: {
        uint32_t v = (uint32_t)w->lo;
        memcpy(GA_K_ELEMENT(p, 4), &v, 4);
        return;
    }
    case 8:
        memcpy(GA_K_ELEMENT(p, 8), &w->lo, 8);
        return;
    default:
        memcpy(GA_K_ELEMENT(p, 8), &w->lo, 8);
        memcpy(GA_K_ELEMENT(p + 8, 8), &w->hi, 8);
        return;
    }
}

#define GA_RM_STORE_CASE(e, name, kind, size, ch, ctype)                               \
    case e:                                                                            \
        GA_RM_WRITE(name);                                                             \
        n = size;                                                                      \
        break;
#define GA_RM_STORE(k, T)                                                              \
    GA_HD static inline void ga_rm_store_##k(char *p, int dt, T v)                     \
    {                                                                                  \
        ga_rm_word w = {0, 0};                                                         \
        int n;                                                                         \
        switch (dt) {                                                                  \
            GA_DTYPES(GA_RM_STORE_CASE)                                                \
        default:                                                                       \
            return;                                                                    \
        }                                                                              \
        GA_OPAQUE(n); /* one store per size for all 14 dtypes, not one per dtype */    \
        ga_rm_put(p, n, &w);                                                           \
    }
#define GA_RM_WRITE(name) ga_w_d_##name((char *)&w, (double)v) /* float: exact in double */
GA_RM_STORE(f32, float)
GA_RM_STORE(f64, double)
#undef GA_RM_WRITE
#define GA_RM_WRITE(name) ga_w_i_##name((char *)&w, (int64_t)v)
GA_RM_STORE(i32, int32_t)
GA_RM_STORE(i64, int64_t)
#undef GA_RM_WRITE
#define GA_RM_WRITE(name) ga_w_u_##name((char *)&w, (uint64_t)v)
GA_RM_STORE(u32, uint32_t)
GA_RM_STORE(u64, uint64_t)
#undef GA_RM_WRITE
#define GA_RM_WRITE(name) ga_w_c_##name((char *)&w, (double)v.re, (double)v.im)
GA_RM_STORE(c64, ga_c64)
GA_RM_STORE(c128, ga_c128)
#undef GA_RM_WRITE
#undef GA_RM_STORE
#undef GA_RM_STORE_CASE

/* --- C++: the same functions as overloads, for templates over the accumulator ----
 * Integers narrower than 32 bits promote to int (i32), as the GPU keeps them. */
#ifdef __cplusplus
#define GA_RM_OVERLOADS(k, T)                                                          \
    GA_HD static inline int ga_rm_takes(T a, T b, int is_max)                          \
    {                                                                                  \
        return ga_rm_takes_##k(a, b, is_max);                                          \
    }                                                                                  \
    GA_HD static inline int ga_rm_arg_takes(T av, int64_t ai, T bv, int64_t bi,        \
                                            int is_max)                                \
    {                                                                                  \
        return ga_rm_arg_takes_##k(av, ai, bv, bi, is_max);                            \
    }                                                                                  \
    GA_HD static inline void ga_rm_store(char *p, int dt, T v)                         \
    {                                                                                  \
        ga_rm_store_##k(p, dt, v);                                                     \
    }
GA_RM_OVERLOADS(f32, float)
GA_RM_OVERLOADS(f64, double)
GA_RM_OVERLOADS(i32, int32_t)
GA_RM_OVERLOADS(i64, int64_t)
GA_RM_OVERLOADS(u32, uint32_t)
GA_RM_OVERLOADS(u64, uint64_t)
GA_RM_OVERLOADS(c64, ga_c64)
GA_RM_OVERLOADS(c128, ga_c128)
#undef GA_RM_OVERLOADS

#define GA_RM_OVERLOADS_SP(k, T)                                                       \
    GA_HD static inline T ga_rm_identity_of(int prod, const T *)                       \
    {                                                                                  \
        return ga_rm_identity_##k(prod);                                               \
    }                                                                                  \
    GA_HD static inline T ga_rm_sp(T a, T b, int prod)                                 \
    {                                                                                  \
        return ga_rm_sp_##k(a, b, prod);                                               \
    }                                                                                  \
    GA_HD static inline T ga_rm_scan_step(T acc, T x, int prod, int first)             \
    {                                                                                  \
        return first ? x : ga_rm_sp_##k(acc, x, prod);                                 \
    }
GA_RM_OVERLOADS_SP(f32, float)
GA_RM_OVERLOADS_SP(f64, double)
GA_RM_OVERLOADS_SP(i64, int64_t)
GA_RM_OVERLOADS_SP(u64, uint64_t)
GA_RM_OVERLOADS_SP(c64, ga_c64)
GA_RM_OVERLOADS_SP(c128, ga_c128)
/* ga_rm_identity<A>(prod): SUM's or PROD's identity in accumulator A */
template <class A>
GA_HD static inline A
ga_rm_identity(int prod)
{
    return ga_rm_identity_of(prod, (const A *)0);
}
#undef GA_RM_OVERLOADS_SP
#endif /* __cplusplus */

#endif
