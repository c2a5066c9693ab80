/* ga_cpu_sort.c: stable sort and binary search on the CPU (contracts in ga_backend.h).
 *
 * Sort: a bottom-up merge sort of each row's positions, ordered by the keys they
 * point to: insertion sort of runs of 32 (few moves, all in cache), then merges
 * that take from the left run on ties, which is what makes it stable. O(n log n)
 * comparisons, one int64 scratch row. The order is NumPy's: NaNs last (in descending
 * order too), complex numbers by real then imaginary part. One comparison macro per
 * dtype and direction generates a specialised sort, so no call through a pointer
 * sits in the inner loop.
 */
#include <stdlib.h>
#include <string.h>

#include "ga_cpu.h"
#include "ga_error.h"
#include "ga_half.h"

#define GA_SORT_RUN 32

/* a before b: ascending / descending, NaN last in both. */
#define LT_PLAIN(a, b) ((a) < (b))
#define GT_PLAIN(a, b) ((a) > (b))
#define LT_FLOAT(a, b) ((a) < (b) || ((b) != (b) && (a) == (a)))
#define GT_FLOAT(a, b) ((a) > (b) || ((b) != (b) && (a) == (a)))
/* Complex numbers in NumPy's order: by NaN class first (no NaN, NaN imaginary part,
 * NaN real part, both), then by the parts that are numbers, real part first. */
#define GA_CPLX_ORDER(CT)                                                              \
    static inline int nan_class_##CT(CT z)                                             \
    {                                                                                  \
        return (z.re != z.re) * 2 + (z.im != z.im);                                    \
    }                                                                                  \
    static inline int before_##CT(CT a, CT b, int desc)                                \
    {                                                                                  \
        int ca = nan_class_##CT(a), cb = nan_class_##CT(b);                           \
        if (ca != cb) {                                                                \
            return ca < cb;                                                            \
        }                                                                              \
        if (ca == 0) {                                                                 \
            return desc ? (a.re > b.re || (a.re == b.re && a.im > b.im))               \
                        : (a.re < b.re || (a.re == b.re && a.im < b.im));              \
        }                                                                              \
        if (ca == 1) {                                                                 \
            return desc ? a.re > b.re : a.re < b.re;                                   \
        }                                                                              \
        if (ca == 2) {                                                                 \
            return desc ? a.im > b.im : a.im < b.im;                                   \
        }                                                                              \
        return 0;                                                                      \
    }
GA_CPLX_ORDER(ga_complex64_storage)
GA_CPLX_ORDER(ga_complex128_storage)
#define LT_C64(a, b) before_ga_complex64_storage(a, b, 0)
#define GT_C64(a, b) before_ga_complex64_storage(a, b, 1)
#define LT_C128(a, b) before_ga_complex128_storage(a, b, 0)
#define GT_C128(a, b) before_ga_complex128_storage(a, b, 1)

#define LOAD_PLAIN(k, i) ((k)[i])
#define LOAD_HALF(k, i) ga_half_to_float((k)[i])

/* sort_<name>(keys, n, idx, tmp): idx <- the stable order of keys[0..n). */
#define GA_SORT_FN(name, T, LOAD, BEFORE)                                              \
    static void sort_##name(const T *k, int64_t n, int64_t *idx, int64_t *tmp)         \
    {                                                                                  \
        for (int64_t s = 0; s < n; s += GA_SORT_RUN) {                                 \
            int64_t e = s + GA_SORT_RUN < n ? s + GA_SORT_RUN : n;                     \
            for (int64_t i = s; i < e; i++) {                                          \
                int64_t cur = i, j = i;                                                \
                while (j > s && BEFORE(LOAD(k, cur), LOAD(k, idx[j - 1]))) {           \
                    idx[j] = idx[j - 1];                                               \
                    j--;                                                               \
                }                                                                      \
                idx[j] = cur;                                                          \
            }                                                                          \
        }                                                                              \
        int64_t *src = idx, *dst = tmp;                                                \
        for (int64_t w = GA_SORT_RUN; w < n; w *= 2) {                                 \
            for (int64_t lo = 0; lo < n; lo += 2 * w) {                                \
                int64_t mid = lo + w < n ? lo + w : n;                                 \
                int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;                          \
                int64_t a = lo, b = mid, o = lo;                                       \
                while (a < mid && b < hi) {                                            \
                    /* the right element goes first only when strictly before */       \
                    dst[o++] = BEFORE(LOAD(k, src[b]), LOAD(k, src[a])) ? src[b++]     \
                                                                        : src[a++];    \
                }                                                                      \
                while (a < mid) {                                                      \
                    dst[o++] = src[a++];                                               \
                }                                                                      \
                while (b < hi) {                                                       \
                    dst[o++] = src[b++];                                               \
                }                                                                      \
            }                                                                          \
            int64_t *t = src;                                                          \
            src = dst;                                                                 \
            dst = t;                                                                   \
        }                                                                              \
        if (src != idx) {                                                              \
            memcpy(idx, src, (size_t)n * sizeof(*idx));                                \
        }                                                                              \
    }

/* search_<name>: the first position p in s[0..n) where (right ? v[i] before s[p]
 * : !(s[p] before v[i])). */
#define GA_SEARCH_FN(name, T, LOAD, BEFORE)                                            \
    static int64_t search_##name(const T *s, int64_t n, const T *v, int64_t i, int right) \
    {                                                                                  \
        int64_t lo = 0, hi = n;                                                        \
        while (lo < hi) {                                                              \
            int64_t mid = lo + (hi - lo) / 2;                                          \
            int go_right = right ? !BEFORE(LOAD(v, i), LOAD(s, mid))                   \
                                 : BEFORE(LOAD(s, mid), LOAD(v, i));                   \
            if (go_right) {                                                            \
                lo = mid + 1;                                                          \
            }                                                                          \
            else {                                                                     \
                hi = mid;                                                              \
            }                                                                          \
        }                                                                              \
        return lo;                                                                     \
    }

/* X(name, storage type, loader, ascending comparison, descending comparison) */
#define GA_SORT_TYPES(X)                                                               \
    X(bool, uint8_t, LOAD_PLAIN, LT_PLAIN, GT_PLAIN)                                   \
    X(int8, int8_t, LOAD_PLAIN, LT_PLAIN, GT_PLAIN)                                    \
    X(int16, int16_t, LOAD_PLAIN, LT_PLAIN, GT_PLAIN)                                  \
    X(int32, int32_t, LOAD_PLAIN, LT_PLAIN, GT_PLAIN)                                  \
    X(int64, int64_t, LOAD_PLAIN, LT_PLAIN, GT_PLAIN)                                  \
    X(uint8, uint8_t, LOAD_PLAIN, LT_PLAIN, GT_PLAIN)                                  \
    X(uint16, uint16_t, LOAD_PLAIN, LT_PLAIN, GT_PLAIN)                                \
    X(uint32, uint32_t, LOAD_PLAIN, LT_PLAIN, GT_PLAIN)                                \
    X(uint64, uint64_t, LOAD_PLAIN, LT_PLAIN, GT_PLAIN)                                \
    X(float16, uint16_t, LOAD_HALF, LT_FLOAT, GT_FLOAT)                                \
    X(float32, float, LOAD_PLAIN, LT_FLOAT, GT_FLOAT)                                  \
    X(float64, double, LOAD_PLAIN, LT_FLOAT, GT_FLOAT)                                 \
    X(complex64, ga_complex64_storage, LOAD_PLAIN, LT_C64, GT_C64)                     \
    X(complex128, ga_complex128_storage, LOAD_PLAIN, LT_C128, GT_C128)

#define GA_X_SORT(name, T, LOAD, LT, GT)                                               \
    GA_SORT_FN(name##_asc, T, LOAD, LT)                                                \
    GA_SORT_FN(name##_desc, T, LOAD, GT)                                               \
    GA_SEARCH_FN(name, T, LOAD, LT)
GA_SORT_TYPES(GA_X_SORT)
#undef GA_X_SORT

static int
sort_row(int32_t dtype, int desc, const char *keys, int64_t n, int64_t *idx, int64_t *tmp)
{
    for (int64_t i = 0; i < n; i++) {
        idx[i] = i;
    }
    switch (dtype) {
#define GA_X_CASE(name, T, LOAD, LT, GT)                                               \
    case GA_##name##_ENUM:                                                             \
        if (desc) {                                                                    \
            sort_##name##_desc((const T *)keys, n, idx, tmp);                          \
        }                                                                              \
        else {                                                                         \
            sort_##name##_asc((const T *)keys, n, idx, tmp);                           \
        }                                                                              \
        return GA_OK;
#define GA_bool_ENUM GA_BOOL
#define GA_int8_ENUM GA_INT8
#define GA_int16_ENUM GA_INT16
#define GA_int32_ENUM GA_INT32
#define GA_int64_ENUM GA_INT64
#define GA_uint8_ENUM GA_UINT8
#define GA_uint16_ENUM GA_UINT16
#define GA_uint32_ENUM GA_UINT32
#define GA_uint64_ENUM GA_UINT64
#define GA_float16_ENUM GA_FLOAT16
#define GA_float32_ENUM GA_FLOAT32
#define GA_float64_ENUM GA_FLOAT64
#define GA_complex64_ENUM GA_COMPLEX64
#define GA_complex128_ENUM GA_COMPLEX128
        GA_SORT_TYPES(GA_X_CASE)
#undef GA_X_CASE
    default:
        return ga_error(GA_ERR_TYPE, "sort: unsupported dtype %d", (int)dtype);
    }
}

int
ga_cpu_sort(int dev, const ga_sort_desc *d)
{
    (void)dev;
    if (d->n <= 0 || d->rows <= 0) {
        return GA_OK;
    }
    size_t isz = (size_t)ga_dtype_itemsize((ga_dtype)d->dtype);
    int64_t *idx = malloc(2 * (size_t)d->n * sizeof(int64_t));
    if (idx == NULL) {
        return ga_error(GA_ERR_NOMEM, "sort: cannot allocate %lld bytes of scratch",
                        (long long)(2 * d->n * (int64_t)sizeof(int64_t)));
    }
    int st = GA_OK;
    for (int64_t r = 0; r < d->rows && st == GA_OK; r++) {
        const char *keys = d->keys + (size_t)(r * d->n) * isz;
        st = sort_row(d->dtype, d->descending, keys, d->n, idx, idx + d->n);
        if (st != GA_OK) {
            break;
        }
        if (d->values != NULL) {
            char *v = d->values + (size_t)(r * d->n) * isz;
            for (int64_t i = 0; i < d->n; i++) {
                memcpy(v + (size_t)i * isz, keys + (size_t)idx[i] * isz, isz);
            }
        }
        if (d->indices != NULL) {
            memcpy(d->indices + r * d->n, idx, (size_t)d->n * sizeof(int64_t));
        }
    }
    free(idx);
    return st;
}

int
ga_cpu_searchsorted(int dev, const ga_search_desc *d)
{
    (void)dev;
    switch (d->dtype) {
#define GA_X_CASE(name, T, LOAD, LT, GT)                                               \
    case GA_##name##_ENUM:                                                             \
        for (int64_t i = 0; i < d->m; i++) {                                           \
            d->out[i] = search_##name((const T *)d->sorted, d->n, (const T *)d->values, \
                                      i, d->right);                                    \
        }                                                                              \
        return GA_OK;
        GA_SORT_TYPES(GA_X_CASE)
#undef GA_X_CASE
    default:
        return ga_error(GA_ERR_TYPE, "searchsorted: unsupported dtype %d", (int)d->dtype);
    }
}
