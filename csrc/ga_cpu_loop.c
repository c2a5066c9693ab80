/* ga_cpu_loop.c: the odometer that drives CPU inner loops. */
#include "ga_cpu_loop.h"

void
ga_cpu_run_loop_range(const ga_loop *loop, ga_cpu_inner_fn fn, void *ctx, int64_t start,
                      int64_t stop)
{
    int nargs = loop->nargs;
    char *ptrs[GA_MAXARGS];
    int64_t steps[GA_MAXARGS];
    if (start >= stop) {
        return;
    }
    if (loop->ndim == 0) {
        for (int a = 0; a < nargs; a++) {
            const ga_operand *op = &loop->args[a];
            ptrs[a] = op->is_scalar ? (char *)op->value.bytes : op->data;
            steps[a] = 0;
        }
        fn(ptrs, steps, 1, ctx);
        return;
    }
    int nd = loop->ndim;
    int64_t inner = loop->shape[nd - 1];
    /* position of `start` in the odometer */
    int64_t idx[GA_MAXDIMS];
    int64_t rem = start;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = rem % loop->shape[d];
        rem /= loop->shape[d];
    }
    for (int a = 0; a < nargs; a++) {
        steps[a] = loop->args[a].is_scalar ? 0 : loop->args[a].strides[nd - 1];
    }
    int64_t done = start;
    while (done < stop) {
        for (int a = 0; a < nargs; a++) {
            const ga_operand *op = &loop->args[a];
            if (op->is_scalar) {
                ptrs[a] = (char *)op->value.bytes;
                continue;
            }
            char *p = op->data;
            for (int d = 0; d < nd; d++) {
                p += idx[d] * op->strides[d];
            }
            ptrs[a] = p;
        }
        int64_t n = inner - idx[nd - 1];
        if (n > stop - done) {
            n = stop - done;
        }
        fn(ptrs, steps, n, ctx);
        done += n;
        /* advance the odometer by n along the last axis */
        idx[nd - 1] += n;
        for (int d = nd - 1; d > 0 && idx[d] >= loop->shape[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

void
ga_cpu_run_loop(const ga_loop *loop, ga_cpu_inner_fn fn, void *ctx)
{
    ga_cpu_run_loop_range(loop, fn, ctx, 0, loop->size);
}
