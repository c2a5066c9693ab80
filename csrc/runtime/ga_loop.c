/* ga_loop.c: broadcasting operands onto a loop and coalescing its axes. */
#include "ga_loop.h"

#include <string.h>

#include "ga_error.h"

void
ga_loop_init(ga_loop *loop, const ga_array *out)
{
    loop->ndim = out->ndim;
    loop->nargs = 1;
    loop->size = ga_array_size(out);
    memcpy(loop->shape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
    ga_operand *op = &loop->args[0];
    op->data = ga_array_data(out);
    op->dtype = out->dtype;
    op->is_scalar = 0;
    memcpy(op->strides, out->strides, sizeof(int64_t) * (size_t)out->ndim);
}

int
ga_loop_add_array(ga_loop *loop, const ga_array *in)
{
    if (loop->nargs >= GA_MAXARGS) {
        return ga_error(GA_ERR_RUNTIME, "internal: too many loop operands");
    }
    if (in->ndim > loop->ndim) {
        char b1[256], b2[256];
        return ga_error(GA_ERR_SHAPE, "input of shape %s cannot be broadcast to shape %s",
                        ga_shape_str(in->ndim, in->shape, b1, sizeof(b1)),
                        ga_shape_str(loop->ndim, loop->shape, b2, sizeof(b2)));
    }
    ga_operand *op = &loop->args[loop->nargs];
    int lead = loop->ndim - in->ndim;
    for (int i = 0; i < loop->ndim; i++) {
        int j = i - lead;
        if (j < 0) {
            op->strides[i] = 0;
        }
        else if (in->shape[j] == loop->shape[i]) {
            op->strides[i] = in->shape[j] == 1 ? 0 : in->strides[j];
        }
        else if (in->shape[j] == 1) {
            op->strides[i] = 0;
        }
        else {
            char b1[256], b2[256];
            return ga_error(GA_ERR_SHAPE,
                            "input of shape %s cannot be broadcast to shape %s",
                            ga_shape_str(in->ndim, in->shape, b1, sizeof(b1)),
                            ga_shape_str(loop->ndim, loop->shape, b2, sizeof(b2)));
        }
    }
    op->data = ga_array_data(in);
    op->dtype = in->dtype;
    op->is_scalar = 0;
    loop->nargs++;
    return GA_OK;
}

void
ga_loop_add_scalar(ga_loop *loop, ga_dtype dtype, const ga_scalar_bytes *value)
{
    ga_operand *op = &loop->args[loop->nargs++];
    memset(op->strides, 0, sizeof(int64_t) * (size_t)loop->ndim);
    op->data = NULL;
    op->dtype = dtype;
    op->is_scalar = 1;
    op->value = *value;
}

/* Reorder the axes so that the output's (args[0]) byte strides shrink from the
 * outermost axis to the innermost (a stable insertion sort by magnitude: at most
 * GA_MAXDIMS axes). */
static void
order_by_output(ga_loop *loop, int nd)
{
    for (int i = 1; i < nd; i++) {
        for (int j = i; j > 0; j--) {
            int64_t a = loop->args[0].strides[j - 1], b = loop->args[0].strides[j];
            if ((a < 0 ? -a : a) >= (b < 0 ? -b : b)) {
                break;
            }
            int64_t t = loop->shape[j - 1];
            loop->shape[j - 1] = loop->shape[j];
            loop->shape[j] = t;
            for (int k = 0; k < loop->nargs; k++) {
                t = loop->args[k].strides[j - 1];
                loop->args[k].strides[j - 1] = loop->args[k].strides[j];
                loop->args[k].strides[j] = t;
            }
        }
    }
}

static void
coalesce(ga_loop *loop, int by_output)
{
    /* 1. drop axes of length 1 (they contribute nothing to any address) */
    int nd = 0;
    for (int i = 0; i < loop->ndim; i++) {
        if (loop->shape[i] == 1) {
            continue;
        }
        loop->shape[nd] = loop->shape[i];
        for (int a = 0; a < loop->nargs; a++) {
            loop->args[a].strides[nd] = loop->args[a].strides[i];
        }
        nd++;
    }
    if (by_output) {
        order_by_output(loop, nd);
    }
    /* 2. merge axis i into i+1 when, for every operand, stepping once along i is the
     * same as stepping shape[i+1] times along i+1 */
    int out = 0;
    for (int i = 1; i < nd; i++) {
        int mergeable = 1;
        for (int a = 0; a < loop->nargs; a++) {
            if (loop->args[a].strides[out] != loop->args[a].strides[i] * loop->shape[i]) {
                mergeable = 0;
                break;
            }
        }
        if (mergeable) {
            loop->shape[out] *= loop->shape[i];
            for (int a = 0; a < loop->nargs; a++) {
                loop->args[a].strides[out] = loop->args[a].strides[i];
            }
        }
        else {
            out++;
            loop->shape[out] = loop->shape[i];
            for (int a = 0; a < loop->nargs; a++) {
                loop->args[a].strides[out] = loop->args[a].strides[i];
            }
        }
    }
    loop->ndim = nd == 0 ? 0 : out + 1;
}

void
ga_loop_coalesce(ga_loop *loop)
{
    coalesce(loop, 0);
}

void
ga_loop_coalesce_for_output(ga_loop *loop)
{
    coalesce(loop, 1);
}
