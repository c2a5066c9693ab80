/* ga_dtype.h: the one list of element types, their traits and type promotion.
 *
 * GA_DTYPES(X) drives the enum, the traits table and every dtype switch in the
 * core and the backends: X(ENUM, name, kind, itemsize, numpy_char, ctype)
 * `ctype` is the storage type. float16 is stored as its IEEE bits (uint16_t) and
 * converted by ga_elementwise_math.h, so the core needs no compiler support for half
 * floats. complex64/complex128 are two floats/doubles, real part first (NumPy's
 * layout).
 */
#ifndef GA_DTYPE_H
#define GA_DTYPE_H

#include <stdint.h>

typedef struct {
    float re, im;
} ga_complex64_storage;
typedef struct {
    double re, im;
} ga_complex128_storage;

#define GA_DTYPES(X)                                                                   \
    X(GA_BOOL, bool, GA_KIND_BOOL, 1, '?', uint8_t)                                    \
    X(GA_INT8, int8, GA_KIND_INT, 1, 'b', int8_t)                                      \
    X(GA_INT16, int16, GA_KIND_INT, 2, 'h', int16_t)                                   \
    X(GA_INT32, int32, GA_KIND_INT, 4, 'i', int32_t)                                   \
    X(GA_INT64, int64, GA_KIND_INT, 8, 'q', int64_t)                                   \
    X(GA_UINT8, uint8, GA_KIND_UINT, 1, 'B', uint8_t)                                  \
    X(GA_UINT16, uint16, GA_KIND_UINT, 2, 'H', uint16_t)                               \
    X(GA_UINT32, uint32, GA_KIND_UINT, 4, 'I', uint32_t)                               \
    X(GA_UINT64, uint64, GA_KIND_UINT, 8, 'Q', uint64_t)                               \
    X(GA_FLOAT16, float16, GA_KIND_FLOAT, 2, 'e', uint16_t)                            \
    X(GA_FLOAT32, float32, GA_KIND_FLOAT, 4, 'f', float)                               \
    X(GA_FLOAT64, float64, GA_KIND_FLOAT, 8, 'd', double)                              \
    X(GA_COMPLEX64, complex64, GA_KIND_COMPLEX, 8, 'F', ga_complex64_storage)          \
    X(GA_COMPLEX128, complex128, GA_KIND_COMPLEX, 16, 'D', ga_complex128_storage)

typedef enum {
#define GA_X_ENUM(e, name, kind, size, ch, ctype) e,
    GA_DTYPES(GA_X_ENUM)
#undef GA_X_ENUM
        GA_NTYPES
} ga_dtype;

typedef enum {
    GA_KIND_BOOL = 0,
    GA_KIND_INT = 1,
    GA_KIND_UINT = 2,
    GA_KIND_FLOAT = 3,
    GA_KIND_COMPLEX = 4
} ga_kind;

typedef struct {
    const char *name; /* "float32" */
    ga_kind kind;
    int itemsize;     /* bytes */
    char numpy_char;  /* the struct/buffer-protocol format character */
} ga_dtype_info;

#ifdef __cplusplus
extern "C" {
#endif

extern const ga_dtype_info ga_dtype_infos[GA_NTYPES];

#define GA_DEFAULT_FLOAT GA_FLOAT32
#define GA_DEFAULT_INT GA_INT64
#define GA_DEFAULT_COMPLEX GA_COMPLEX64

static inline int
ga_dtype_itemsize(ga_dtype t)
{
    return ga_dtype_infos[t].itemsize;
}
static inline ga_kind
ga_dtype_kind(ga_dtype t)
{
    return ga_dtype_infos[t].kind;
}
static inline int
ga_dtype_is_integer(ga_dtype t)
{
    return ga_dtype_infos[t].kind == GA_KIND_INT || ga_dtype_infos[t].kind == GA_KIND_UINT;
}
static inline int
ga_dtype_is_inexact(ga_dtype t)
{
    return ga_dtype_infos[t].kind >= GA_KIND_FLOAT;
}

/* Range of an integer dtype: [lo, hi], lo as int64 and hi as uint64 (both exact). */
static inline void
ga_dtype_int_range(ga_dtype t, int64_t *lo, uint64_t *hi)
{
    int bits = 8 * ga_dtype_itemsize(t);
    if (ga_dtype_kind(t) == GA_KIND_UINT) {
        *lo = 0;
        *hi = bits == 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
    }
    else {
        *lo = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
        *hi = bits == 64 ? (uint64_t)INT64_MAX : (((uint64_t)1 << (bits - 1)) - 1);
    }
}

/* Name -> dtype ("float32", "f4", "float", ...); returns GA_OK or GA_ERR_TYPE. */
int ga_dtype_from_name(const char *name, ga_dtype *out);

/* Array-with-array promotion, NumPy 2 / NEP 50 rules (no value-based casting). */
ga_dtype ga_promote(ga_dtype a, ga_dtype b);

/* The smallest float (or complex) dtype that holds every value of `t` the way NumPy's
 * int->float rule does (int8->float16, int16->float32, int32/int64->float64); float and
 * complex types map to themselves, bool to float16. */
ga_dtype ga_dtype_to_inexact(ga_dtype t);

/* The real dtype of a complex one (complex64->float32); others unchanged. */
ga_dtype ga_dtype_real_of(ga_dtype t);

/* The complex dtype with `t`'s precision (float32->complex64, float64->complex128). */
ga_dtype ga_dtype_complex_of(ga_dtype t);

/* Python-scalar kinds for weak promotion (NEP 50). */
typedef enum { GA_PYSCALAR_BOOL, GA_PYSCALAR_INT, GA_PYSCALAR_FLOAT, GA_PYSCALAR_COMPLEX } ga_pyscalar_kind;

/* Result dtype of an array of dtype `t` combined with a weak Python scalar. Python
 * scalars adopt the array's dtype when the kind allows it; otherwise the default
 * dtype of the scalar's kind (gpuarr's defaults: int64, float32, complex64) is
 * promoted with `t`. */
ga_dtype ga_promote_weak(ga_dtype t, ga_pyscalar_kind s);

#ifdef __cplusplus
}
#endif

#endif
