/* ga_dtype.c: dtype traits and promotion (NumPy 2 / NEP 50). */
#include "ga_dtype.h"

#include <string.h>

#include "ga_error.h"

const ga_dtype_info ga_dtype_infos[GA_NTYPES] = {
#define GA_X_INFO(e, nm, k, size, ch, ctype)                                           \
    [e] = {.name = #nm, .kind = k, .itemsize = size, .numpy_char = ch},
    GA_DTYPES(GA_X_INFO)
#undef GA_X_INFO
};

int
ga_dtype_from_name(const char *name, ga_dtype *out)
{
    static const struct {
        const char *alias;
        ga_dtype t;
    } aliases[] = {
        {"bool_", GA_BOOL},
        {"?", GA_BOOL},
        {"b1", GA_BOOL},
        {"i1", GA_INT8},
        {"i2", GA_INT16},
        {"i4", GA_INT32},
        {"i8", GA_INT64},
        {"u1", GA_UINT8},
        {"u2", GA_UINT16},
        {"u4", GA_UINT32},
        {"u8", GA_UINT64},
        {"f2", GA_FLOAT16},
        {"half", GA_FLOAT16},
        {"f4", GA_FLOAT32},
        {"f8", GA_FLOAT64},
        {"double", GA_FLOAT64},
        {"c8", GA_COMPLEX64},
        {"c16", GA_COMPLEX128},
        /* The names of Python's types mean what the types mean as dtypes: gpuarr's
         * defaults (float32 as in PyTorch, not NumPy's float64). This is the one
         * place that says so: dtype=float and dtype="float" both come here. */
        {"int", GA_DEFAULT_INT},
        {"float", GA_DEFAULT_FLOAT},
        {"complex", GA_DEFAULT_COMPLEX},
    };
    if (name[0] == '<' || name[0] == '=' || name[0] == '|') {
        name++; /* native byte order is the only one there is here */
    }
    for (int t = 0; t < GA_NTYPES; t++) {
        if (strcmp(name, ga_dtype_infos[t].name) == 0) {
            *out = (ga_dtype)t;
            return GA_OK;
        }
    }
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
        if (strcmp(name, aliases[i].alias) == 0) {
            *out = aliases[i].t;
            return GA_OK;
        }
    }
    return ga_error(GA_ERR_TYPE,
                    "data type '%s' not understood; gpuarr supports bool, int8, int16, "
                    "int32, int64, uint8, uint16, uint32, uint64, float16, float32, "
                    "float64, complex64 and complex128",
                    name);
}

static ga_dtype
sized(ga_kind kind, int size)
{
    for (int t = 0; t < GA_NTYPES; t++) {
        if (ga_dtype_infos[t].kind == kind && ga_dtype_infos[t].itemsize == size) {
            return (ga_dtype)t;
        }
    }
    return GA_FLOAT64;
}

/* Bytes of float needed to hold every value of an integer type exactly enough for
 * NumPy's rule: 8-bit ints fit float16, 16-bit ints float32, wider ones float64. */
static int
float_size_for_int(int int_size)
{
    return int_size == 1 ? 2 : int_size == 2 ? 4 : 8;
}

ga_dtype
ga_promote(ga_dtype a, ga_dtype b)
{
    if (a == b) {
        return a;
    }
    ga_kind ka = ga_dtype_kind(a), kb = ga_dtype_kind(b);
    int sa = ga_dtype_itemsize(a), sb = ga_dtype_itemsize(b);
    if (ka > kb || (ka == kb && sa < sb)) { /* order so that a is the "lesser" */
        ga_dtype t = a;
        a = b;
        b = t;
        ga_kind tk = ka;
        ka = kb;
        kb = tk;
        int ts = sa;
        sa = sb;
        sb = ts;
    }
    /* now ka <= kb */
    if (ka == GA_KIND_BOOL) {
        return b;
    }
    if (ka == kb) { /* same kind: the larger */
        return sa >= sb ? a : b;
    }
    if (ka == GA_KIND_INT && kb == GA_KIND_UINT) {
        if (sa > sb) {
            return a;
        }
        if (sb >= 8) {
            return GA_FLOAT64; /* int64 with uint64: NumPy's answer */
        }
        return sized(GA_KIND_INT, sb * 2);
    }
    if (ka == GA_KIND_INT || ka == GA_KIND_UINT) {
        int need = float_size_for_int(sa);
        if (kb == GA_KIND_FLOAT) {
            return sized(GA_KIND_FLOAT, sb > need ? sb : need);
        }
        /* complex: each component as a float */
        int comp = sb / 2 > need ? sb / 2 : need;
        if (comp < 4) {
            comp = 4;
        }
        return sized(GA_KIND_COMPLEX, comp * 2);
    }
    /* float with complex */
    int comp = sb / 2 > sa ? sb / 2 : sa;
    if (comp < 4) {
        comp = 4;
    }
    return sized(GA_KIND_COMPLEX, comp * 2);
}

ga_dtype
ga_dtype_to_inexact(ga_dtype t)
{
    switch (ga_dtype_kind(t)) {
    case GA_KIND_BOOL:
        return GA_FLOAT16;
    case GA_KIND_INT:
    case GA_KIND_UINT:
        return sized(GA_KIND_FLOAT, float_size_for_int(ga_dtype_itemsize(t)));
    default:
        return t;
    }
}

ga_dtype
ga_dtype_real_of(ga_dtype t)
{
    if (t == GA_COMPLEX64) {
        return GA_FLOAT32;
    }
    if (t == GA_COMPLEX128) {
        return GA_FLOAT64;
    }
    return t;
}

ga_dtype
ga_dtype_complex_of(ga_dtype t)
{
    if (t == GA_FLOAT64 || t == GA_COMPLEX128) {
        return GA_COMPLEX128;
    }
    return GA_COMPLEX64;
}

ga_dtype
ga_promote_weak(ga_dtype t, ga_pyscalar_kind s)
{
    ga_kind k = ga_dtype_kind(t);
    switch (s) {
    case GA_PYSCALAR_BOOL:
        return t;
    case GA_PYSCALAR_INT:
        return k == GA_KIND_BOOL ? GA_DEFAULT_INT : t;
    case GA_PYSCALAR_FLOAT:
        return k >= GA_KIND_FLOAT ? t : GA_DEFAULT_FLOAT;
    case GA_PYSCALAR_COMPLEX:
        if (k == GA_KIND_COMPLEX) {
            return t;
        }
        if (k == GA_KIND_FLOAT) {
            return ga_dtype_complex_of(t);
        }
        return GA_DEFAULT_COMPLEX;
    }
    return t;
}
