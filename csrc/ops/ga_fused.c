/* ga_fused.c: checking and dispatching fused elementwise programs (ga_fused.h). */
#include "ga_fused.h"

#include <string.h>

#include "ga_device.h"
#include "ga_elementwise.h"
#include "ga_error.h"
#include "ga_fault.h"
#include "ga_loop.h"
#include "ga_ops.h"
#include "ga_profiler.h"
#include "ga_reduce.h"

static int
bad(int i, const char *what)
{
    return ga_error(GA_ERR_VALUE, "fused program: instruction %d: %s", i, what);
}

int
ga_fused_check(const ga_fused_prog *g)
{
    if (g->nin < 1 || g->nin > GA_MAXARGS - 1 || g->nconst < 0 ||
        g->nconst > GA_FUSED_MAXCONSTS || g->nregs > GA_FUSED_MAXREGS ||
        g->nin + g->nconst >= g->nregs || g->ninstr < 1 || g->ninstr > GA_FUSED_MAXINSTR ||
        g->result < g->nin + g->nconst || g->result >= g->nregs) {
        return ga_error(GA_ERR_VALUE, "fused program: bad sizes (%d inputs, %d constants, "
                        "%d registers, %d instructions)", g->nin, g->nconst, g->nregs,
                        g->ninstr);
    }
    for (int r = 0; r < g->nregs; r++) {
        if (g->reg_dtype[r] < 0 || g->reg_dtype[r] >= GA_NTYPES) {
            return ga_error(GA_ERR_VALUE, "fused program: register %d has no dtype", r);
        }
    }
    /* temporaries must be written before they are read: scratch memory is garbage */
    unsigned written = (1u << (g->nin + g->nconst)) - 1u;
    for (int i = 0; i < g->ninstr; i++) {
        const ga_fused_instr *in = &g->instr[i];
        if (in->op < 0 || in->op >= GA_NOPS || in->dtype < 0 || in->dtype >= GA_NTYPES) {
            return bad(i, "unknown op or dtype");
        }
        if (in->dst < g->nin + g->nconst || in->dst >= g->nregs) {
            return bad(i, "writes an input, a constant or no register");
        }
        int nin = ga_op_arity(in->op);
        for (int a = 0; a < nin; a++) {
            int r = in->src[a];
            if (r < 0 || r >= g->nregs || r == in->dst || !(written & (1u << r))) {
                return bad(i, "reads its own output, no register or an unwritten one");
            }
            ga_dtype want = in->op == GA_OP_WHERE && a == 0 ? GA_BOOL : (ga_dtype)in->dtype;
            if (in->op != GA_OP_COPY && g->reg_dtype[r] != (int8_t)want) {
                return bad(i, "an operand's dtype is not the op's loop dtype");
            }
        }
        ga_dtype out;
        GA_TRY(ga_elementwise_loop_out(in->op, (ga_dtype)in->dtype, &out));
        if (in->op == GA_OP_COPY) {
            out = (ga_dtype)in->dtype;
        }
        if (g->reg_dtype[in->dst] != (int8_t)out) {
            return bad(i, "the register written does not have the op's output dtype");
        }
        written |= 1u << in->dst;
    }
    if (!(written & (1u << g->result))) {
        return ga_error(GA_ERR_VALUE, "fused program: the result is never written");
    }
    return GA_OK;
}

/* The inputs' broadcast shape and device, checked against the program. */
static int
inputs_shape(const ga_fused_prog *g, const ga_array *const *in, int *ndim, int64_t *shape)
{
    *ndim = in[0]->ndim;
    memcpy(shape, in[0]->shape, sizeof(int64_t) * (size_t)*ndim);
    for (int k = 0; k < g->nin; k++) {
        if (in[k]->dtype != g->reg_dtype[k]) {
            return ga_error(GA_ERR_VALUE, "fused program: input %d is %s, the program "
                            "reads %s", k, ga_dtype_infos[in[k]->dtype].name,
                            ga_dtype_infos[g->reg_dtype[k]].name);
        }
        if (k == 0) {
            continue;
        }
        GA_TRY(ga_check_same_device("fused function", in[0], in[k]));
        int64_t tmp[GA_MAXDIMS];
        int nd;
        int st = ga_broadcast_shapes(*ndim, shape, in[k]->ndim, in[k]->shape, &nd, tmp);
        if (st != GA_OK) {
            return ga_error_context(st, "fused function");
        }
        *ndim = nd;
        memcpy(shape, tmp, sizeof(int64_t) * (size_t)nd);
    }
    return GA_OK;
}

/* Run g over the inputs into res (its shape is the loop's). */
static int
launch(const ga_backend *be, ga_device dev, const ga_fused_prog *g,
       const ga_array *const *in, const ga_array *res)
{
    if (ga_array_size(res) == 0) {
        return GA_OK;
    }
    ga_loop loop;
    ga_loop_init(&loop, res);
    for (int k = 0; k < g->nin; k++) {
        GA_TRY(ga_loop_add_array(&loop, in[k]));
    }
    ga_loop_coalesce_for_output(&loop);
    if (ga_describe_on()) {
        ga_prof_describe_loop("fused", &loop);
    }
    GA_TRY(ga_backend_status(be, be->fused(ga_device_local(dev), g, &loop)));
    ga_device_count_work(dev, GA_WORK_ELEMENTWISE, 1);
    return GA_OK;
}

static int
backend_of(ga_device dev, const ga_backend **be)
{
    GA_TRY(ga_device_backend(dev, be));
    if ((*be)->fused == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED, "the %s backend cannot run fused programs",
                        (*be)->name);
    }
    return GA_OK;
}

int
ga_fused_run(const ga_fused_prog *g, const ga_array *const *in, ga_array *result)
{
    GA_TRY(ga_fused_check(g));
    int ndim;
    int64_t shape[GA_MAXDIMS];
    GA_TRY(inputs_shape(g, in, &ndim, shape));
    ga_device dev = ga_array_device(in[0]);
    const ga_backend *be;
    GA_TRY(backend_of(dev, &be));
    ga_array res;
    GA_TRY(ga_array_empty(&res, dev, (ga_dtype)g->reg_dtype[g->result], ndim, shape));
    int st = launch(be, dev, g, in, &res);
    if (st != GA_OK) {
        ga_array_release(&res);
        return st;
    }
    for (int k = 0; k < g->nin; k++) {
        ga_fault_flow(&res, in[k]);
    }
    *result = res;
    return GA_OK;
}

int
ga_fused_run_into(const ga_fused_prog *g, const ga_array *const *in, ga_array *out,
                  ga_array *result)
{
    GA_TRY(ga_fused_check(g));
    int ndim;
    int64_t shape[GA_MAXDIMS];
    GA_TRY(inputs_shape(g, in, &ndim, shape));
    GA_TRY(ga_check_same_device("fused function", in[0], out));
    if (out->dtype != g->reg_dtype[g->result] || out->ndim != ndim ||
        memcmp(out->shape, shape, sizeof(int64_t) * (size_t)ndim) != 0 ||
        !ga_array_writeable(out)) {
        return ga_error(GA_ERR_UNSUPPORTED, "fused program: out is not a writeable array "
                        "of the result's shape and dtype");
    }
    for (int i = 0; i < g->ninstr - 1; i++) {
        if (g->instr[i].dst == g->result) {
            return ga_error(GA_ERR_UNSUPPORTED, "fused program: the result register is "
                            "written before the last instruction");
        }
    }
    for (int k = 0; k < g->nin; k++) {
        if (ga_array_overlap(out, in[k]) && !ga_array_same_view(out, in[k])) {
            return ga_error(GA_ERR_UNSUPPORTED, "fused program: an input overlaps out");
        }
    }
    ga_device dev = ga_array_device(out);
    const ga_backend *be;
    GA_TRY(backend_of(dev, &be));
    ga_array_note_write(out);
    GA_TRY(launch(be, dev, g, in, out));
    for (int k = 0; k < g->nin; k++) {
        ga_fault_flow(out, in[k]);
    }
    ga_array_view(result, out);
    return GA_OK;
}

/* The output operand of a fused reduction's loop: never read or written (the backend
 * writes each block of results into its own buffer), zero strides, so the loop keeps
 * the C order of the inputs' broadcast shape. */
static char unused_output[16];

int
ga_fused_reduce(const ga_fused_prog *g, const ga_array *const *in, int op, int keepdims,
                ga_array *result)
{
    GA_TRY(ga_fused_check(g));
    if (op != GA_RED_SUM && op != GA_RED_PROD && op != GA_RED_MAX && op != GA_RED_MIN) {
        return ga_error(GA_ERR_UNSUPPORTED, "fused reduction: only sum, prod, max, min");
    }
    ga_loop loop;
    memset(&loop, 0, sizeof(loop));
    int ndim;
    GA_TRY(inputs_shape(g, in, &ndim, loop.shape));
    loop.ndim = ndim;
    ga_device dev = ga_array_device(in[0]);
    const ga_backend *be;
    GA_TRY(ga_device_backend(dev, &be));
    loop.size = 1;
    for (int d = 0; d < loop.ndim; d++) {
        loop.size *= loop.shape[d];
    }
    if (be->fused_reduce == NULL || loop.size == 0) {
        return ga_error(GA_ERR_UNSUPPORTED, "fused reduction: the %s backend runs the "
                        "program, then the reduction", be->name);
    }
    ga_dtype idt = (ga_dtype)g->reg_dtype[g->result], odt;
    GA_TRY(ga_reduce_result_dtype((ga_reduce_op)op, idt, -1, &odt));
    loop.nargs = 1;
    loop.args[0].data = unused_output;
    loop.args[0].dtype = idt;
    for (int k = 0; k < g->nin; k++) {
        GA_TRY(ga_loop_add_array(&loop, in[k]));
    }
    ga_loop_coalesce(&loop); /* C order kept: the flat index is the result's */
    int64_t ones[GA_MAXDIMS];
    for (int d = 0; d < GA_MAXDIMS; d++) {
        ones[d] = 1;
    }
    ga_array res;
    GA_TRY(ga_array_empty(&res, dev, odt, keepdims ? ndim : 0, ones));
    ga_reduce_desc r;
    memset(&r, 0, sizeof(r));
    r.op = op;
    r.in_dtype = idt;
    r.out_dtype = odt;
    r.red_ndim = 1;
    r.red_size = loop.size;
    r.out_size = 1;
    r.red_shape[0] = loop.size;
    r.in_red_strides[0] = ga_dtype_itemsize(idt);
    r.out = ga_array_data(&res);
    if (ga_describe_on()) {
        ga_prof_describe_loop("fused", &loop);
    }
    int st = ga_backend_status(be, be->fused_reduce(ga_device_local(dev), g, &loop, &r));
    if (st != GA_OK) {
        ga_array_release(&res);
        return st;
    }
    ga_device_count_work(dev, GA_WORK_REDUCE, 1);
    for (int k = 0; k < g->nin; k++) {
        ga_fault_flow(&res, in[k]);
    }
    *result = res;
    return GA_OK;
}

int
ga_fused_mean(const ga_fused_prog *g, const ga_array *const *in, int keepdims,
              ga_array *result)
{
    GA_TRY(ga_fused_check(g));
    int dt = g->reg_dtype[g->result];
    if (dt != GA_FLOAT32 && dt != GA_FLOAT64) {
        /* ga_mean computes others in another dtype (float16 in float32, ints in
         * float64) than their sum's */
        return ga_error(GA_ERR_UNSUPPORTED, "fused mean: only of float32 and float64");
    }
    int ndim;
    int64_t shape[GA_MAXDIMS], n = 1;
    GA_TRY(inputs_shape(g, in, &ndim, shape));
    for (int d = 0; d < ndim; d++) {
        n *= shape[d];
    }
    ga_array s;
    GA_TRY(ga_fused_reduce(g, in, GA_RED_SUM, keepdims, &s));
    /* as ga_mean: the sum in the result's dtype, divided in place by the count */
    int st = ga_elementwise_scalar(GA_OP_DIVIDE, &s, &s, (double)n);
    if (st != GA_OK) {
        ga_array_release(&s);
        return st;
    }
    *result = s;
    return GA_OK;
}
