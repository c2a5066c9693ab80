/* ga_scalar.h: one element read as a host value (Python scalars: item(), float()) and a
 * host value written as one element (fills, scalar operands), each through the shared
 * casts of ga_elementwise_math.h: one switch over GA_DTYPES, instead of one per
 * caller. */
#ifndef GA_SCALAR_H
#define GA_SCALAR_H

#include <stdint.h>

#include "ga_backend.h"
#include "ga_dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The element's value in the widest type of its kind: bool and signed integers in `i`,
 * unsigned integers in `u`, floats in `re`, complex numbers in `re` and `im`. */
typedef struct {
    ga_kind kind;
    int64_t i;
    uint64_t u;
    double re, im;
} ga_scalar_value;

/* Read the element of dtype t at p (any alignment) through the shared casts of
 * ga_elementwise_math.h: every value is exact in the widened type. */
void ga_scalar_read(ga_dtype t, const void *p, ga_scalar_value *out);

/* Write v as one element of dtype t into out (zero-filled first), converted by the
 * writers the kernels use (ga_w_<i|u|d|c>_<dtype>): v->kind picks the source (BOOL and
 * INT: i; UINT: u; FLOAT: re; COMPLEX: re and im). Integers wrap into narrower
 * integer types; floats go to integers by the float -> int rule
 * (ga_elementwise_math.h). */
void ga_scalar_write(ga_dtype t, const ga_scalar_value *v, ga_scalar_bytes *out);

#ifdef __cplusplus
}
#endif

#endif
