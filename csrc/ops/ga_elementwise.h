/* ga_elementwise.h: elementwise operations in the core: type resolution (NumPy 2 /
 * NEP 50), device checks, broadcasting, casts of inputs, allocation of the result,
 * in-place forms, and dispatch to the device's backend.
 */
#ifndef GA_ELEMENTWISE_H
#define GA_ELEMENTWISE_H

#include <stdint.h>

#include "ga_array.h"
#include "ga_backend.h"
#include "ga_dtype.h"
#include "ga_ops.h"

/* One operand: an array, or a scalar passed by value.
 * Scalars are weak (Python bool/int/float/complex: NEP 50) when dtype < 0, or strong
 * (a NumPy scalar: it promotes like a 0-d array of `dtype`) when dtype >= 0.
 * Integers: int_range says which field holds the value (0: i, 1: u for values above
 * INT64_MAX, 2: re only, for magnitudes beyond 64 bits). */
typedef struct {
    const ga_array *array; /* NULL for a scalar */
    int dtype;             /* scalars: -1 weak, else the strong ga_dtype */
    ga_pyscalar_kind kind; /* scalars: what the value is */
    int int_range;
    int64_t i;
    uint64_t u;
    double re, im; /* float/complex value (and re = the value of a huge int) */
} ga_ew_arg;

#ifdef __cplusplus
extern "C" {
#endif

/* Run `op` (nin = ga_op_nin[op] operands, at least one of them an array) and fill
 * `result` with a new reference to the result array.
 * With `out` (not NULL) the result is written into `out` (broadcast inputs must give
 * out's shape; the result dtype must cast to out's dtype under NumPy's same_kind
 * rule; inputs overlapping out are copied first) and `result` becomes a view of out.
 * Errors: GA_ERR_TYPE (unsupported dtypes), GA_ERR_OVERFLOW (a Python int out of the
 * range of the array's integer dtype), GA_ERR_VALUE (negative integer power),
 * GA_ERR_SHAPE, GA_ERR_MISMATCH; `result` is left untouched on error. */
int ga_elementwise(int op, int nin, const ga_ew_arg *in, ga_array *out, ga_array *result);

/* The output and loop dtype `op` would use for these operands (no work done). */
int ga_elementwise_resolve(int op, int nin, const ga_ew_arg *in, ga_dtype *loop_dtype,
                           ga_dtype *out_dtype);

/* A scalar operand's value as the storage bytes of dtype t, as an op whose loop dtype
 * is t reads it (ga_backend.h's ga_scalar_bytes). */
void ga_ew_scalar_bytes(const ga_ew_arg *a, ga_dtype t, ga_scalar_bytes *v);

/* GA_OK with the output dtype when `op` has a loop (a kernel) for loop dtype `loop`,
 * else GA_ERR_TYPE: what a fused program (ga_fused.c) may ask of each instruction. */
int ga_elementwise_loop_out(int op, ga_dtype loop, ga_dtype *out_dtype);

#ifdef __cplusplus
}
#endif

#endif
