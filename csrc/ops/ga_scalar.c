/* ga_scalar.c: one element as a host value and back (ga_scalar.h). */
#include "ga_scalar.h"

#include <string.h>

#include "ga_elementwise_math.h"

/* One case per dtype from GA_DTYPES: the element is read by ga_elementwise_math.h's
 * reader for its dtype and written by the writer of its kind's widest type
 * (GA_K_READ_<dtype> pastes the target name into the writer, so each kind names its
 * target here). */
#define READ_GA_KIND_BOOL(name) GA_K_READ_##name(0, in, int64, (char *)&out->i)
#define READ_GA_KIND_INT(name) GA_K_READ_##name(0, in, int64, (char *)&out->i)
#define READ_GA_KIND_UINT(name) GA_K_READ_##name(0, in, uint64, (char *)&out->u)
#define READ_GA_KIND_FLOAT(name) GA_K_READ_##name(0, in, float64, (char *)&out->re)
#define READ_GA_KIND_COMPLEX(name) GA_K_READ_##name(0, in, complex128, (char *)&c)
#define READ_CASE(e, name, kind, size, ch, ctype)                                      \
    case e:                                                                            \
        READ_##kind(name);                                                             \
        break;

void
ga_scalar_read(ga_dtype t, const void *p, ga_scalar_value *out)
{
    const char *in = (const char *)p;
    ga_c128 c = {0.0, 0.0};
    memset(out, 0, sizeof(*out));
    out->kind = ga_dtype_kind(t);
    switch (t) {
        GA_DTYPES(READ_CASE)
    default:
        break;
    }
    if (out->kind == GA_KIND_COMPLEX) {
        out->re = c.re;
        out->im = c.im;
    }
}

#define WRITE_CASE(e, name, k, size, ch, ctype)                                        \
    case e:                                                                            \
        switch (v->kind) {                                                             \
        case GA_KIND_BOOL:                                                             \
        case GA_KIND_INT:                                                              \
            ga_w_i_##name(o, v->i);                                                    \
            break;                                                                     \
        case GA_KIND_UINT:                                                             \
            ga_w_u_##name(o, v->u);                                                    \
            break;                                                                     \
        case GA_KIND_FLOAT:                                                            \
            ga_w_d_##name(o, v->re);                                                   \
            break;                                                                     \
        case GA_KIND_COMPLEX:                                                          \
            ga_w_c_##name(o, v->re, v->im);                                            \
            break;                                                                     \
        }                                                                              \
        break;

void
ga_scalar_write(ga_dtype t, const ga_scalar_value *v, ga_scalar_bytes *out)
{
    char *o = (char *)out->bytes;
    memset(out, 0, sizeof(*out));
    switch (t) {
        GA_DTYPES(WRITE_CASE)
    default:
        break;
    }
}
