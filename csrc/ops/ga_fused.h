/* ga_fused.h: fused elementwise programs in the core (gpuarr.fuse): the checks a
 * program passes before any backend runs it, broadcasting of its inputs, allocation
 * of the result and dispatch to the device's `fused` entry. The program itself
 * (ga_fused_prog) is described in ga_backend.h; docs/DESIGN.md, "Fused elementwise
 * chains", says how the binding builds one from a traced Python function.
 */
#ifndef GA_FUSED_H
#define GA_FUSED_H

#include "ga_array.h"
#include "ga_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GA_OK when `prog` is well formed (registers, dtypes and arities agree with each op's
 * loop, every register is written before it is read, `result` is a temporary that is
 * written), else GA_ERR_VALUE naming the first fault. Inputs' dtypes are checked
 * against the arrays by ga_fused_run. */
int ga_fused_check(const ga_fused_prog *prog);

/* Run `prog` over its prog->nin input arrays (one device, broadcast together) into a
 * new array `result` of the result register's dtype. GA_ERR_UNSUPPORTED, with nothing
 * run, when the device's backend cannot run this program (the caller runs the ops
 * one by one); GA_ERR_MISMATCH / GA_ERR_SHAPE as an elementwise op would. */
int ga_fused_run(const ga_fused_prog *prog, const ga_array *const *in, ga_array *result);

/* The same, written into `out` (result becomes a view of it): out has the broadcast
 * shape and the result register's dtype, is writeable and on the inputs' device.
 * An input may be out itself (the very view: each element is read before it is
 * written, and the program writes its result register only in its last
 * instruction); one that overlaps out otherwise gives GA_ERR_UNSUPPORTED (the caller
 * runs the ops one by one, which copy it first). */
int ga_fused_run_into(const ga_fused_prog *prog, const ga_array *const *in, ga_array *out,
                      ga_array *result);

/* A full reduction (GA_RED_SUM, PROD, MAX or MIN, the dtype NumPy's would give) of
 * what ga_fused_run would return, into a new 0-d array (keepdims: all ones), reduced
 * as it is made where the backend can (fused_reduce): bitwise ga_reduce of
 * ga_fused_run's result. GA_ERR_UNSUPPORTED, with nothing run, where it cannot (the
 * backend has no fused_reduce, another reduction, an empty result): the caller runs
 * the program, then the reduction. */
int ga_fused_reduce(const ga_fused_prog *prog, const ga_array *const *in, int op,
                    int keepdims, ga_array *result);
/* The full mean of a float32 or float64 result the same way: ga_mean's sum, then its
 * division by the count; GA_ERR_UNSUPPORTED as ga_fused_reduce, and for other dtypes. */
int ga_fused_mean(const ga_fused_prog *prog, const ga_array *const *in, int keepdims,
                  ga_array *result);

#ifdef __cplusplus
}
#endif

#endif
