/* ga_cpu_reduce_simd.c: the SIMD runs of the CPU reductions (ga_cpu_reduce_simd.h):
 * contiguous float32/float64 sum, max and min, split from ga_cpu_reduce.c, which
 * decides the traversal and calls these for each contiguous run.
 *
 * Hand-vectorised copies of ga_reduce_math.h's rules, kept here for speed; they must
 * agree with it: a sum adds (in double, so a float32 run is exact to ~1e-13 before
 * the pairwise counter); max/min let a NaN stick in its lane and report it through
 * `*nan` (the caller stores NaN: NaN wins), and a lane takes a value only when it is
 * strictly greater (less), like ga_rm_takes_<k>. Lanes hold interleaved elements, so
 * of equal values (0.0 and -0.0) the one kept may differ from a serial fold's, as it
 * does between NumPy's SIMD loops and its scalar ones and on a GPU.
 *
 * The general path converts a chunk into doubles, then reduces the buffer: two passes
 * and a 4-5x gap to NumPy on float32. These read the input directly into 32 lanes of
 * independent accumulators (which the compiler keeps in vector registers). A float32
 * chunk sums in double, so it is exact to ~1e-13 relative before the pairwise counter
 * combines chunks; float64 keeps the general path's pairwise_sum. Compiled for
 * AVX-512, AVX2 and baseline x86-64, picked at run time; sum_f32_avx512 below is the
 * same order of additions written with intrinsics. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ga_cpu_reduce_simd.h"
#include "ga_dtype.h"
#include "ga_reduce_math.h"

#define LANES 32

/* sum_f32_run, and with square set the sum of the float32 squares x * x (each
 * rounded to float32, as the multiply loop stores it): a fused x * x summed folds its
 * squares as they are made (ga_cpu_reduce_produced's squares_of), in the same order */
static inline double
sum_f32_lanes(const char *p, int64_t n, int square)
{
    double acc[LANES] = {0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        for (int j = 0; j < LANES; j++) {
            float v;
            memcpy(&v, p + 4 * (i + j), 4);
            acc[j] += (double)(square ? v * v : v);
        }
    }
    for (int w = LANES / 2; w > 0; w /= 2) {
        for (int j = 0; j < w; j++) {
            acc[j] += acc[j + w];
        }
    }
    double r = acc[0];
    for (; i < n; i++) {
        float v;
        memcpy(&v, p + 4 * i, 4);
        r += (double)(square ? v * v : v);
    }
    return r;
}

GA_SIMD_CLONES static double
sum_f32_run(const char *p, int64_t n)
{
    return sum_f32_lanes(p, n, 0);
}

GA_SIMD_CLONES static double
sumsq_f32_run(const char *p, int64_t n)
{
    return sum_f32_lanes(p, n, 1);
}

/* max (is_max) or min of a run of n >= 1 elements, and whether a NaN was in it. A
 * NaN sticks in its lane (`v != v` selects it, and nothing compares above it). GCC
 * does not if-convert the lane selects of an unrolled block, so they are written with
 * vector types (64 bytes: one AVX-512 register, two AVX2 or four SSE ones). */
#if defined(__GNUC__)
#define GA_X_MINMAX(name, T, IT, NL)                                                   \
    typedef T name##_vf __attribute__((vector_size(64)));                              \
    typedef IT name##_vi __attribute__((vector_size(64)));                             \
    GA_SIMD_CLONES static T name(const char *p, int64_t n, int is_max, int *nan)       \
    {                                                                                  \
        T first;                                                                       \
        memcpy(&first, p, sizeof(T));                                                  \
        name##_vf m = first - (name##_vf){0}; /* broadcast */                          \
        int64_t i = 0;                                                                 \
        for (; i + NL <= n; i += NL) {                                                 \
            name##_vf v;                                                               \
            memcpy(&v, p + sizeof(T) * i, sizeof(v));                                  \
            name##_vi take = (is_max ? v > m : v < m) | (v != v);                      \
            m = (name##_vf)(((name##_vi)v & take) | ((name##_vi)m & ~take));           \
        }                                                                              \
        T r = m[0];                                                                    \
        int anynan = 0;                                                                \
        for (int j = 0; j < NL; j++) {                                                 \
            r = is_max ? (m[j] > r ? m[j] : r) : (m[j] < r ? m[j] : r);                \
            anynan |= m[j] != m[j];                                                    \
        }                                                                              \
        for (; i < n; i++) {                                                           \
            T v;                                                                       \
            memcpy(&v, p + sizeof(T) * i, sizeof(T));                                  \
            r = is_max ? (v > r ? v : r) : (v < r ? v : r);                            \
            anynan |= v != v;                                                          \
        }                                                                              \
        *nan = anynan;                                                                 \
        return r;                                                                      \
    }
#else
#define GA_X_MINMAX(name, T, IT, NL)                                                   \
    static T name(const char *p, int64_t n, int is_max, int *nan)                      \
    {                                                                                  \
        T r;                                                                           \
        memcpy(&r, p, sizeof(T));                                                      \
        int anynan = 0;                                                                \
        for (int64_t i = 0; i < n; i++) {                                              \
            T v;                                                                       \
            memcpy(&v, p + sizeof(T) * i, sizeof(T));                                  \
            r = is_max ? (v > r ? v : r) : (v < r ? v : r);                            \
            anynan |= v != v;                                                          \
        }                                                                              \
        *nan = anynan;                                                                 \
        return r;                                                                      \
    }
#endif
GA_X_MINMAX(minmax_f32_run, float, int32_t, 16)
GA_X_MINMAX(minmax_f64_run, double, int64_t, 8)
#undef GA_X_MINMAX

/* The end both vector max/min loops below share: fold the accumulator's NL lanes
 * (stored in `lanes`) and the scalar tail from element i on into r, note any NaN, and
 * return r. */
#define GA_X_FOLD_LANES_AND_TAIL(T, NL, CMPOP)                                         \
        T r = lanes[0];                                                                \
        int anynan = 0;                                                                \
        for (int j = 0; j < NL; j++) {                                                 \
            T v = lanes[j];                                                            \
            r = CMPOP == _CMP_GT_OQ ? (v > r ? v : r) : (v < r ? v : r);               \
            anynan |= v != v;                                                          \
        }                                                                              \
        for (; i < n; i++) {                                                           \
            T v;                                                                       \
            memcpy(&v, p + sizeof(T) * i, sizeof(T));                                  \
            r = CMPOP == _CMP_GT_OQ ? (v > r ? v : r) : (v < r ? v : r);               \
            anynan |= v != v;                                                          \
        }                                                                              \
        *nan = anynan;                                                                 \
        return r;

/* AVX-512 max/min with four accumulators. The vector-extension loop above keeps one
 * accumulator (GCC scalarises the selects when given more), so it waits on the
 * compare-blend latency: 10 GB/s per core, below what memory gives. Chosen at run
 * time when the CPU has AVX-512F. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) &&                 \
    defined(__linux__)
#include <immintrin.h>
#define GA_HAVE_AVX512 1
#define GA_X_MM512(name, T, VT, NL, LOADU, SET1, CMPM, MOVM, STOREU, CMPOP)            \
    __attribute__((target("avx512f"))) static T name(const char *p, int64_t n,         \
                                                     int *nan)                         \
    {                                                                                  \
        const T *x = (const T *)(const void *)p; /* vector loads need no alignment */  \
        T first;                                                                       \
        memcpy(&first, p, sizeof(T));                                                  \
        VT m0 = SET1(first), m1 = m0, m2 = m0, m3 = m0;                                \
        int64_t i = 0;                                                                 \
        for (; i + 4 * NL <= n; i += 4 * NL) {                                         \
            VT v0 = LOADU(x + i), v1 = LOADU(x + i + NL);                              \
            VT v2 = LOADU(x + i + 2 * NL), v3 = LOADU(x + i + 3 * NL);                 \
            m0 = MOVM(m0, CMPM(v0, m0, CMPOP) | CMPM(v0, v0, _CMP_UNORD_Q), v0);       \
            m1 = MOVM(m1, CMPM(v1, m1, CMPOP) | CMPM(v1, v1, _CMP_UNORD_Q), v1);       \
            m2 = MOVM(m2, CMPM(v2, m2, CMPOP) | CMPM(v2, v2, _CMP_UNORD_Q), v2);       \
            m3 = MOVM(m3, CMPM(v3, m3, CMPOP) | CMPM(v3, v3, _CMP_UNORD_Q), v3);       \
        }                                                                              \
        for (; i + NL <= n; i += NL) {                                                 \
            VT v0 = LOADU(x + i);                                                      \
            m0 = MOVM(m0, CMPM(v0, m0, CMPOP) | CMPM(v0, v0, _CMP_UNORD_Q), v0);       \
        }                                                                              \
        m0 = MOVM(m0, CMPM(m1, m0, CMPOP) | CMPM(m1, m1, _CMP_UNORD_Q), m1);           \
        m2 = MOVM(m2, CMPM(m3, m2, CMPOP) | CMPM(m3, m3, _CMP_UNORD_Q), m3);           \
        m0 = MOVM(m0, CMPM(m2, m0, CMPOP) | CMPM(m2, m2, _CMP_UNORD_Q), m2);           \
        T lanes[NL];                                                                   \
        STOREU(lanes, m0);                                                             \
        GA_X_FOLD_LANES_AND_TAIL(T, NL, CMPOP)                                         \
    }
GA_X_MM512(max_f32_avx512, float, __m512, 16, _mm512_loadu_ps, _mm512_set1_ps,
           _mm512_cmp_ps_mask, _mm512_mask_mov_ps, _mm512_storeu_ps, _CMP_GT_OQ)
GA_X_MM512(min_f32_avx512, float, __m512, 16, _mm512_loadu_ps, _mm512_set1_ps,
           _mm512_cmp_ps_mask, _mm512_mask_mov_ps, _mm512_storeu_ps, _CMP_LT_OQ)
GA_X_MM512(max_f64_avx512, double, __m512d, 8, _mm512_loadu_pd, _mm512_set1_pd,
           _mm512_cmp_pd_mask, _mm512_mask_mov_pd, _mm512_storeu_pd, _CMP_GT_OQ)
GA_X_MM512(min_f64_avx512, double, __m512d, 8, _mm512_loadu_pd, _mm512_set1_pd,
           _mm512_cmp_pd_mask, _mm512_mask_mov_pd, _mm512_storeu_pd, _CMP_LT_OQ)
#undef GA_X_MM512

/* The same four accumulators with AVX2's compare and blend, for CPUs without
 * AVX-512 (issue 46: on this project's 2-core AVX2 machine the one-accumulator loop
 * above took 1.8 ms for max of 10^6 float64 in cache, NumPy 0.2 ms, and nanmax
 * starts with this reduction). Lanes and NaN rule as above: a NaN sticks in its
 * lane. */
#define GA_X_MM256(name, T, VT, NL, LOADU, SET1, CMP, OR, BLEND, STOREU, CMPOP)        \
    __attribute__((target("avx2"))) static T name(const char *p, int64_t n, int *nan)  \
    {                                                                                  \
        const T *x = (const T *)(const void *)p; /* vector loads need no alignment */  \
        T first;                                                                       \
        memcpy(&first, p, sizeof(T));                                                  \
        VT m[4] = {SET1(first), SET1(first), SET1(first), SET1(first)};                \
        int64_t i = 0;                                                                 \
        for (; i + 4 * NL <= n; i += 4 * NL) {                                         \
            for (int k = 0; k < 4; k++) {                                              \
                VT v = LOADU(x + i + k * NL);                                          \
                m[k] = BLEND(m[k], v, OR(CMP(v, m[k], CMPOP), CMP(v, v, _CMP_UNORD_Q))); \
            }                                                                          \
        }                                                                              \
        for (int k = 1; k < 4; k++) {                                                  \
            m[0] = BLEND(m[0], m[k], OR(CMP(m[k], m[0], CMPOP),                        \
                                        CMP(m[k], m[k], _CMP_UNORD_Q)));               \
        }                                                                              \
        T lanes[NL];                                                                   \
        STOREU(lanes, m[0]);                                                           \
        GA_X_FOLD_LANES_AND_TAIL(T, NL, CMPOP)                                         \
    }
GA_X_MM256(max_f32_avx2, float, __m256, 8, _mm256_loadu_ps, _mm256_set1_ps,
           _mm256_cmp_ps, _mm256_or_ps, _mm256_blendv_ps, _mm256_storeu_ps, _CMP_GT_OQ)
GA_X_MM256(min_f32_avx2, float, __m256, 8, _mm256_loadu_ps, _mm256_set1_ps,
           _mm256_cmp_ps, _mm256_or_ps, _mm256_blendv_ps, _mm256_storeu_ps, _CMP_LT_OQ)
GA_X_MM256(max_f64_avx2, double, __m256d, 4, _mm256_loadu_pd, _mm256_set1_pd,
           _mm256_cmp_pd, _mm256_or_pd, _mm256_blendv_pd, _mm256_storeu_pd, _CMP_GT_OQ)
GA_X_MM256(min_f64_avx2, double, __m256d, 4, _mm256_loadu_pd, _mm256_set1_pd,
           _mm256_cmp_pd, _mm256_or_pd, _mm256_blendv_pd, _mm256_storeu_pd, _CMP_LT_OQ)
#undef GA_X_MM256
#undef GA_X_FOLD_LANES_AND_TAIL

/* sum_f32_lanes' additions in its order, with intrinsics: GCC's vectorisation of it
 * loads 16 floats and splits them with a shuffle (port 5, as the conversions are) and
 * folds its lanes through the stack: 86 ns a 1024-element chunk in cache on this
 * project's CI machine, 64 converting from memory into four accumulators. The
 * accumulators are acc[0..7], acc[8..15], acc[16..23] and acc[24..31], and the halving
 * fold is the same additions, so both give the same bits. */
#if LANES != 32
#error "sum_f32_avx512 folds 32 lanes, as sum_f32_lanes must"
#endif
__attribute__((target("avx512f"))) static inline double
sum_f32_avx512_lanes(const char *p, int64_t n, int square)
{
    const float *x = (const float *)(const void *)p; /* vector loads need no alignment */
    __m512d a[4] = {_mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd(),
                    _mm512_setzero_pd()};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        for (int k = 0; k < 4; k++) {
            __m256 v = _mm256_loadu_ps(x + i + 8 * k);
            v = square ? _mm256_mul_ps(v, v) : v;
            a[k] = _mm512_add_pd(a[k], _mm512_cvtps_pd(v));
        }
    }
    __m512d a0 = _mm512_add_pd(a[0], a[2]); /* w = 16 */
    __m512d a1 = _mm512_add_pd(a[1], a[3]);
    a0 = _mm512_add_pd(a0, a1); /* w = 8 */
    __m256d h = _mm256_add_pd(_mm512_castpd512_pd256(a0), _mm512_extractf64x4_pd(a0, 1));
    __m128d q = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
    double r = _mm_cvtsd_f64(q) + _mm_cvtsd_f64(_mm_unpackhi_pd(q, q));
    for (; i < n; i++) {
        r += (double)(square ? x[i] * x[i] : x[i]);
    }
    return r;
}

__attribute__((target("avx512f"))) static double
sum_f32_avx512(const char *p, int64_t n)
{
    return sum_f32_avx512_lanes(p, n, 0);
}

__attribute__((target("avx512f"))) static double
sumsq_f32_avx512(const char *p, int64_t n)
{
    return sum_f32_avx512_lanes(p, n, 1);
}

static int
have_avx512(void)
{
    static int known = -1;
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx512f") ? 1 : 0;
    }
    return known;
}

static int
have_avx2(void)
{
    static int known = -1;
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    return known;
}
#endif

double
ga_cpu_sum_f32(const char *p, int64_t n, int square)
{
    if (n < LANES) {
        /* no full block: every lane stays +0.0, the fold gives +0.0, and the tail's
         * additions are all there is (both versions below): the same additions
         * without zeroing and folding 32 lanes, a third of a 10-element row's time */
        double r = 0.0;
        for (int64_t i = 0; i < n; i++) {
            float v;
            memcpy(&v, p + 4 * i, 4);
            r += (double)(square ? v * v : v);
        }
        return r;
    }
#ifdef GA_HAVE_AVX512
    if (have_avx512()) {
        return square ? sumsq_f32_avx512(p, n) : sum_f32_avx512(p, n);
    }
#endif
    return square ? sumsq_f32_run(p, n) : sum_f32_run(p, n);
}

double
ga_cpu_minmax_run(int dt, int is_max, const char *p, int64_t n, int *nan)
{
#ifdef GA_HAVE_AVX512
    if (have_avx512()) {
        return dt == GA_FLOAT32
                   ? (double)(is_max ? max_f32_avx512 : min_f32_avx512)(p, n, nan)
                   : (is_max ? max_f64_avx512 : min_f64_avx512)(p, n, nan);
    }
    if (have_avx2()) {
        return dt == GA_FLOAT32
                   ? (double)(is_max ? max_f32_avx2 : min_f32_avx2)(p, n, nan)
                   : (is_max ? max_f64_avx2 : min_f64_avx2)(p, n, nan);
    }
#endif
    return dt == GA_FLOAT32 ? (double)minmax_f32_run(p, n, is_max, nan)
                            : minmax_f64_run(p, n, is_max, nan);
}
