/* ga_cast.c: dtype casts of whole arrays and NumPy's same_kind casting rule. */
#include "ga_cast.h"

#include "ga_error.h"
#include "ga_transfer.h"

/* kind order for same_kind casting: bool < uint < int < float < complex */
static int
cast_rank(ga_dtype t)
{
    switch (ga_dtype_kind(t)) {
    case GA_KIND_BOOL:
        return 0;
    case GA_KIND_UINT:
        return 1;
    case GA_KIND_INT:
        return 2;
    case GA_KIND_FLOAT:
        return 3;
    default:
        return 4;
    }
}

int
ga_can_cast_same_kind(ga_dtype from, ga_dtype to)
{
    return cast_rank(from) <= cast_rank(to);
}

int
ga_astype(const ga_array *x, ga_dtype t, ga_array *out)
{
    GA_TRY(ga_array_empty(out, ga_array_device(x), t, x->ndim, x->shape));
    int st = ga_copy_same_device(out, x);
    if (st != GA_OK) {
        ga_array_release(out);
    }
    return st;
}

int
ga_as_dtype(const ga_array *x, ga_dtype t, ga_array *out)
{
    if (x->dtype == (int32_t)t) {
        ga_array_view(out, x);
        return GA_OK;
    }
    return ga_astype(x, t, out);
}
