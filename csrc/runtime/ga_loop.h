/* ga_loop.h: building the ga_loop descriptor an elementwise kernel runs over. */
#ifndef GA_LOOP_H
#define GA_LOOP_H

#include "ga_array.h"
#include "ga_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Start a loop over `out`'s shape with `out` as args[0]. */
void ga_loop_init(ga_loop *loop, const ga_array *out);
/* Add an input broadcast to the loop's shape (GA_ERR_SHAPE if it cannot be). */
int ga_loop_add_array(ga_loop *loop, const ga_array *in);
/* Add a scalar input (same value for every element), given as storage bytes. */
void ga_loop_add_scalar(ga_loop *loop, ga_dtype dtype, const ga_scalar_bytes *value);
/* Drop length-1 axes and merge axes that are contiguous in every operand, so the
 * kernel's inner loop runs as long as possible. Call after adding all operands. */
void ga_loop_coalesce(ga_loop *loop);
/* The same, with the axes first put in the order of the output's memory (largest
 * stride outermost), as NumPy's iterator orders its loops: a write into a transposed
 * view (a column-major copy for LAPACK, out= into x.T) then goes through memory in
 * order instead of a stride apart, with reads strided instead. Only for loops whose
 * elements are independent (elementwise operations and copies), never for an
 * ordered walk (nonzero's C order). */
void ga_loop_coalesce_for_output(ga_loop *loop);

#ifdef __cplusplus
}
#endif

#endif
