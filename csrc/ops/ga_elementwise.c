/* ga_elementwise.c: type resolution and dispatch of elementwise operations.
 *
 * Resolution has two steps, both NumPy 2's:
 *   1. the common dtype of the operands: arrays (and NumPy scalars) promote with
 *      ga_promote; Python scalars are weak (ga_promote_weak, NEP 50);
 *   2. the op's loop dtype for that common dtype (sqrt of int16 runs in float32,
 *      divide of ints in float64, floor_divide of bools in int8, ...) or a TypeError
 *      for what NumPy rejects. The loop dtypes are exactly those of GA_KERNEL_LIST.
 */
#include "ga_elementwise.h"

#include <float.h>
#include <stdio.h>
#include <string.h>

#include "ga_backend.h"
#include "ga_cast.h"
#include "ga_error.h"
#include "ga_fault.h"
#include "ga_elementwise_math.h"
#include "ga_loop.h"
#include "ga_profiler.h"
#include "ga_reduce.h"
#include "ga_scalar.h"
#include "ga_transfer.h"

/* which (op, loop dtype) pairs have a kernel */
static const unsigned char has_kernel[GA_NOPS][GA_NTYPES] = {
#define GA_X_HAS(E, o, D, d) [E][D] = 1,
    GA_KERNEL_LIST(GA_X_HAS)
#undef GA_X_HAS
};


static int
is_comparison(int op)
{
    return op >= GA_OP_EQUAL && op <= GA_OP_GREATER_EQUAL;
}

static int
is_logical(int op)
{
    return op == GA_OP_LOGICAL_AND || op == GA_OP_LOGICAL_OR || op == GA_OP_LOGICAL_XOR;
}

/* The operations NumPy has only inexact loops for (sqrt, arctan2, hypot, ...): an
 * integer or bool operand runs in the float its own size gives (ga_dtype_to_inexact). */
static int
is_float_only(int op)
{
    switch (op) {
    case GA_OP_SQRT: case GA_OP_EXP: case GA_OP_EXPM1: case GA_OP_EXP2: case GA_OP_LOG:
    case GA_OP_LOG1P: case GA_OP_LOG2: case GA_OP_LOG10: case GA_OP_SIN: case GA_OP_COS:
    case GA_OP_TAN: case GA_OP_ASIN: case GA_OP_ACOS: case GA_OP_ATAN: case GA_OP_SINH:
    case GA_OP_COSH: case GA_OP_TANH: case GA_OP_ASINH: case GA_OP_ACOSH: case GA_OP_ATANH:
    case GA_OP_ATAN2: case GA_OP_HYPOT: case GA_OP_COPYSIGN: case GA_OP_NEXTAFTER:
    case GA_OP_LOGADDEXP:
        return 1;
    default:
        return 0;
    }
}

/* The special functions whose SciPy ufunc lists its float32 loop first (the others
 * list float64 first): erf(int8) is float64 in SciPy, betainc(int8, ...) float32 */
static int
special_float32_first(int op)
{
    switch (op) {
    case GA_OP_ERFINV: case GA_OP_NDTRI: case GA_OP_ENTR: case GA_OP_REL_ENTR:
    case GA_OP_KL_DIV: case GA_OP_STDTR: case GA_OP_STDTRIT: case GA_OP_CHDTR:
    case GA_OP_CHDTRC: case GA_OP_CHDTRI: case GA_OP_BETAINC: case GA_OP_BETAINCC:
    case GA_OP_BETAINCINV: case GA_OP_FDTR: case GA_OP_FDTRC: case GA_OP_FDTRI:
    case GA_OP_BOXCOX: case GA_OP_BOXCOX1P: case GA_OP_INV_BOXCOX:
    case GA_OP_INV_BOXCOX1P: case GA_OP_HUBER: case GA_OP_PSEUDO_HUBER: case GA_OP_POCH:
    case GA_OP_BINOM: case GA_OP_ZETA:
    case GA_OP_YN: case GA_OP_EXPN: case GA_OP_EXP1: case GA_OP_EXPI: case GA_OP_SPENCE:
    case GA_OP_HYP1F1: case GA_OP_LPMV:
        return 1;
    default:
        return 0;
    }
}

/* Map the common dtype onto the op's loop dtype (or explain why there is none). */
static int
loop_dtype_for(int op, ga_dtype common, ga_dtype *loop)
{
    ga_kind k = ga_dtype_kind(common);
    const char *name = ga_op_names[op];
    ga_dtype t = common;
    switch (op) {
    case GA_OP_COPY:
        /* every dtype: the copy loop casts between any two (_core.copy(x, out=...)) */
        *loop = common;
        return GA_OK;
    case GA_OP_DIVIDE:
        if (k <= GA_KIND_UINT) {
            t = GA_FLOAT64; /* NumPy divides integers in float64 whatever their size */
        }
        break;
    case GA_OP_SQUARE: case GA_OP_RECIPROCAL: case GA_OP_CONJ: case GA_OP_FLOOR_DIVIDE:
    case GA_OP_REMAINDER: case GA_OP_POW: case GA_OP_LEFT_SHIFT: case GA_OP_RIGHT_SHIFT:
        if (k == GA_KIND_BOOL) {
            t = GA_INT8;
        }
        break;
    case GA_OP_ROUND:
        if (k == GA_KIND_BOOL) {
            t = GA_FLOAT16;
        }
        break;
    case GA_OP_NEGATIVE:
    case GA_OP_POSITIVE:
    case GA_OP_SUBTRACT:
    case GA_OP_SIGN:
        if (k == GA_KIND_BOOL) {
            return ga_error(GA_ERR_TYPE,
                            "%s of booleans is not supported: use logical_not / ~ (for "
                            "negative) or logical_xor / ^ (for subtract), or convert "
                            "with .astype(int)",
                            name);
        }
        break;
    default:
        if (op >= GA_OP_SPECIAL_FIRST && op <= GA_OP_SPECIAL_LAST) {
            /* SciPy's ufuncs take the first of their float32 and float64 loops that
             * the input casts to safely: bool, integers and float16 run in float64
             * where the double loop comes first, in float32 (up to 16 bits) where
             * the float loop does */
            int narrow = k == GA_KIND_BOOL || common == GA_FLOAT16 ||
                         ((k == GA_KIND_INT || k == GA_KIND_UINT) &&
                          ga_dtype_infos[common].itemsize <= 2);
            if (k <= GA_KIND_UINT || common == GA_FLOAT16) {
                t = narrow && special_float32_first(op) ? GA_FLOAT32 : GA_FLOAT64;
            }
        } else if (is_float_only(op)) {
            t = ga_dtype_to_inexact(common);
        }
        break;
    }
    if (!has_kernel[op][t]) {
        const char *what = ga_dtype_infos[common].name;
        switch (op) {
        case GA_OP_BITWISE_INVERT: case GA_OP_BITWISE_AND: case GA_OP_BITWISE_OR:
        case GA_OP_BITWISE_XOR: case GA_OP_LEFT_SHIFT: case GA_OP_RIGHT_SHIFT:
            return ga_error(GA_ERR_TYPE,
                            "%s needs integer or boolean operands, not %s (bitwise "
                            "operations are not defined for floating point)",
                            name, what);
        default:
            return ga_error(GA_ERR_TYPE, "%s is not supported for %s operands", name,
                            what);
        }
    }
    *loop = t;
    return GA_OK;
}

static ga_dtype
out_dtype_for(int op, ga_dtype loop)
{
    if (ga_op_out(op) == GA_OUT_BOOL) {
        return GA_BOOL;
    }
    if (op == GA_OP_ABS || op == GA_OP_REAL || op == GA_OP_IMAG) {
        return ga_dtype_real_of(loop);
    }
    return loop;
}

int
ga_elementwise_loop_out(int op, ga_dtype loop, ga_dtype *out_dtype)
{
    if (op < 0 || op >= GA_NOPS || (int)loop < 0 || (int)loop >= GA_NTYPES ||
        (op != GA_OP_COPY && !has_kernel[op][loop])) {
        return ga_error(GA_ERR_TYPE, "%s has no loop for %s",
                        op >= 0 && op < GA_NOPS ? ga_op_names[op] : "?",
                        (int)loop >= 0 && (int)loop < GA_NTYPES ? ga_dtype_infos[loop].name
                                                                : "?");
    }
    *out_dtype = out_dtype_for(op, loop);
    return GA_OK;
}

static ga_dtype
arg_dtype(const ga_ew_arg *a)
{
    return a->array != NULL ? (ga_dtype)a->array->dtype : (ga_dtype)a->dtype;
}

/* Does a weak Python int fit the integer dtype t? */
static int
int_fits(const ga_ew_arg *a, ga_dtype t)
{
    if (a->int_range == 2) {
        return 0;
    }
    if (a->int_range == 1) {
        return t == GA_UINT64;
    }
    if (!ga_dtype_is_integer(t)) {
        return 1;
    }
    int64_t v = a->i, lo;
    uint64_t hi;
    ga_dtype_int_range(t, &lo, &hi);
    return v >= lo && (v < 0 || (uint64_t)v <= hi);
}

/* A finite Python float (or complex) beyond float32's range. gpuarr's default float
 * for an integer or bool array with a Python float is float32, where NumPy's is
 * float64: int8 + 1e300 would be inf here and 1e300 there. Such a scalar widens the
 * loop to float64 (complex128), so the value NumPy gives is the value gpuarr gives. */
static int
beyond_float32(const ga_ew_arg *a)
{
    if (a->kind != GA_PYSCALAR_FLOAT && a->kind != GA_PYSCALAR_COMPLEX) {
        return 0;
    }
    double re = fabs(a->re), im = a->kind == GA_PYSCALAR_COMPLEX ? fabs(a->im) : 0;
    return (re > FLT_MAX && re <= DBL_MAX) || (im > FLT_MAX && im <= DBL_MAX);
}

static void
int_str(const ga_ew_arg *a, char *buf, size_t n)
{
    if (a->int_range == 0) {
        snprintf(buf, n, "%lld", (long long)a->i);
    }
    else if (a->int_range == 1) {
        snprintf(buf, n, "%llu", (unsigned long long)a->u);
    }
    else {
        snprintf(buf, n, "%.17g", a->re);
    }
}

int
ga_elementwise_resolve(int op, int nin, const ga_ew_arg *in, ga_dtype *loop_dtype,
                       ga_dtype *out_dtype)
{
    /* WHERE's condition does not take part in promotion */
    int first = op == GA_OP_WHERE ? 1 : 0;
    int have = 0;
    ga_dtype common = GA_BOOL;
    for (int i = first; i < nin; i++) {
        if (in[i].array != NULL || in[i].dtype >= 0) {
            ga_dtype t = arg_dtype(&in[i]);
            common = have ? ga_promote(common, t) : t;
            have = 1;
        }
    }
    if (!have) {
        /* only Python scalars (e.g. where(c, 1, 2.5)): their own default dtypes */
        ga_pyscalar_kind best = GA_PYSCALAR_BOOL;
        for (int i = first; i < nin; i++) {
            if (in[i].kind > best) {
                best = in[i].kind;
            }
        }
        common = best == GA_PYSCALAR_BOOL ? GA_BOOL : best == GA_PYSCALAR_INT ? GA_INT64 :
                 best == GA_PYSCALAR_FLOAT ? GA_DEFAULT_FLOAT : GA_DEFAULT_COMPLEX;
    }
    else {
        for (int i = first; i < nin; i++) {
            if (in[i].array == NULL && in[i].dtype < 0) {
                ga_dtype before = common;
                common = ga_promote_weak(common, in[i].kind);
                if (ga_dtype_kind(before) < GA_KIND_FLOAT && beyond_float32(&in[i])) {
                    common = common == GA_COMPLEX64 ? GA_COMPLEX128 : GA_FLOAT64;
                }
            }
        }
    }
    /* A float-only operation (arctan2, hypot, ...) of integer or bool operands runs, as
     * NumPy's, in the smallest float that holds each operand's values
     * (hypot(int8, uint8) in float16, not in int16's float32): the operands' own
     * floats promote, and a Python int is weak there (it becomes that float,
     * arctan2(uint8 array, -1) included). */
    if (have && is_float_only(op) && ga_dtype_kind(common) <= GA_KIND_UINT) {
        int seen = 0;
        for (int i = first; i < nin; i++) {
            if (in[i].array != NULL || in[i].dtype >= 0) {
                ga_dtype f = ga_dtype_to_inexact(arg_dtype(&in[i]));
                common = seen ? ga_promote(common, f) : f;
                seen = 1;
            }
        }
    }
    /* NEP 50 keeps the array's integer dtype for a Python int; one out of its range
     * is an OverflowError, except in comparisons, which NumPy 2 answers exactly, in
     * true division, whose result is a float anyway (int8 / 300): we widen those;
     * and in logical_and/or/xor, which NumPy answers for any int of int64's range
     * (uint8 array and -1): only the truth of each operand matters, so those run on
     * bools. */
    if (ga_dtype_is_integer(common)) {
        for (int i = first; i < nin; i++) {
            if (in[i].array == NULL && in[i].dtype < 0 && in[i].kind == GA_PYSCALAR_INT &&
                !int_fits(&in[i], common)) {
                if (is_comparison(op) || op == GA_OP_DIVIDE) {
                    common = (in[i].int_range == 0 && common != GA_UINT64) ? GA_INT64
                                                                           : GA_FLOAT64;
                    continue;
                }
                if (is_logical(op) && in[i].int_range == 0) {
                    common = GA_BOOL;
                    break;
                }
                if (is_logical(op)) {
                    char buf[64];
                    int_str(&in[i], buf, sizeof(buf));
                    return ga_error(GA_ERR_OVERFLOW,
                                    "Python integer %s is too large for %s: NumPy takes "
                                    "it as a C long (int64); pass a bool (its truth), "
                                    "e.g. bool(value)",
                                    buf, ga_op_names[op]);
                }
                char buf[64];
                int_str(&in[i], buf, sizeof(buf));
                return ga_error(GA_ERR_OVERFLOW, "Python integer %s out of bounds for %s",
                                buf, ga_dtype_infos[common].name);
            }
        }
    }
    GA_TRY(loop_dtype_for(op, common, loop_dtype));
    if (op == GA_OP_POW && ga_dtype_is_integer(*loop_dtype) && nin == 2 &&
        in[1].array == NULL && in[1].kind == GA_PYSCALAR_INT && in[1].int_range == 0 &&
        in[1].i < 0) {
        return ga_error(GA_ERR_VALUE,
                        "Integers to negative integer powers are not allowed (use a "
                        "float base, e.g. x.astype(float) ** %lld)",
                        (long long)in[1].i);
    }
    /* yn and expn take an integer order first, and SciPy's integer-order loop
     * ('ld->d') comes before its float ones: an integer or bool order (an array or a
     * Python int) gives float64 whatever x is; a float order, the usual rule */
    if ((op == GA_OP_YN || op == GA_OP_EXPN) && *loop_dtype == GA_FLOAT32) {
        int integer_order = (in[0].array != NULL || in[0].dtype >= 0)
                                ? ga_dtype_kind(arg_dtype(&in[0])) <= GA_KIND_UINT
                                : in[0].kind <= GA_PYSCALAR_INT;
        if (integer_order) {
            *loop_dtype = GA_FLOAT64;
        }
    }
    *out_dtype = out_dtype_for(op, *loop_dtype);
    return GA_OK;
}

/* A scalar's value as storage bytes of dtype t. */
void
ga_ew_scalar_bytes(const ga_ew_arg *a, ga_dtype t, ga_scalar_bytes *v)
{
    ga_scalar_value s;
    memset(&s, 0, sizeof(s));
    if (a->kind == GA_PYSCALAR_COMPLEX) {
        s.kind = GA_KIND_COMPLEX;
    }
    else if (a->kind == GA_PYSCALAR_FLOAT || a->int_range == 2) {
        s.kind = GA_KIND_FLOAT;
    }
    else if (a->int_range == 1) {
        s.kind = GA_KIND_UINT;
    }
    else {
        s.kind = GA_KIND_INT;
    }
    s.i = a->i;
    s.u = a->u;
    s.re = a->re;
    s.im = a->im;
    ga_scalar_write(t, &s, v);
}


static int
launch(const ga_backend *be, ga_device dev, int op, ga_loop *loop)
{
    if (be->elementwise == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED, "%s is not supported by the %s backend",
                        ga_op_names[op], be->name);
    }
    ga_loop_coalesce_for_output(loop);
    ga_device_count_work(dev, GA_WORK_ELEMENTWISE, 1);
    if (ga_describe_on()) {
        ga_prof_describe_loop(ga_op_names[op], loop);
    }
    return ga_backend_status(be, be->elementwise(ga_device_local(dev), op, loop));
}

/* An integer power with a signed integer exponent array: NumPy refuses a negative
 * exponent as it does a negative scalar (1 / x is not an integer). The minimum is read
 * back to the host: a wait, but only for this rare operation. */
static int
check_int_pow_exponents(const ga_array *e)
{
    if (ga_dtype_kind((ga_dtype)e->dtype) != GA_KIND_INT || ga_array_size(e) == 0) {
        return GA_OK;
    }
    uint32_t mask = e->ndim == 0 ? 0 : (uint32_t)((1u << e->ndim) - 1);
    ga_array m;
    GA_TRY(ga_reduce(GA_RED_MIN, e, mask, 0, -1, &m));
    ga_array m64;
    int st = ga_astype(&m, GA_INT64, &m64);
    ga_array_release(&m);
    GA_TRY(st);
    int64_t lo = 0;
    st = ga_read_to_host(&m64, &lo, sizeof(lo));
    ga_array_release(&m64);
    GA_TRY(st);
    if (lo < 0) {
        return ga_error(GA_ERR_VALUE,
                        "Integers to negative integer powers are not allowed "
                        "(use a float base, e.g. x.astype(float) ** y)");
    }
    return GA_OK;
}

int
ga_elementwise(int op, int nin, const ga_ew_arg *in, ga_array *out, ga_array *result)
{
    const char *name = ga_op_names[op];
    if (nin != ga_op_nin[op] || nin < 1 || nin + 1 > GA_MAXARGS) {
        return ga_error(GA_ERR_TYPE, "%s takes %d operands, got %d", name, ga_op_nin[op],
                        nin);
    }
    /* device and shape from the arrays */
    const ga_array *first = NULL;
    int ndim = 0;
    int64_t shape[GA_MAXDIMS];
    for (int i = 0; i < nin; i++) {
        const ga_array *a = in[i].array;
        if (a == NULL) {
            continue;
        }
        if (first == NULL) {
            first = a;
            ndim = a->ndim;
            memcpy(shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
            continue;
        }
        GA_TRY(ga_check_same_device(name, first, a));
        int64_t tmp[GA_MAXDIMS];
        int nd;
        int st = ga_broadcast_shapes(ndim, shape, a->ndim, a->shape, &nd, tmp);
        if (st != GA_OK) {
            return ga_error_context(st, name);
        }
        ndim = nd;
        memcpy(shape, tmp, sizeof(int64_t) * (size_t)nd);
    }
    if (first == NULL && out == NULL) {
        return ga_error(GA_ERR_TYPE, "%s needs at least one array operand", name);
    }
    ga_dtype loop_dt, out_dt;
    GA_TRY(ga_elementwise_resolve(op, nin, in, &loop_dt, &out_dt));
    if (op == GA_OP_POW && ga_dtype_is_integer(loop_dt) && in[1].array != NULL) {
        GA_TRY(check_int_pow_exponents(in[1].array));
    }

    ga_device dev = first != NULL ? ga_array_device(first) : ga_array_device(out);
    if (out != NULL) {
        if (first != NULL) {
            GA_TRY(ga_check_same_device(name, first, out));
        }
        if (!ga_array_writeable(out)) {
            return ga_error(GA_ERR_VALUE,
                            "assignment destination is read-only (the "
                            "output of %s)",
                            name);
        }
        ga_array_note_write(out);
        int nd;
        int64_t tmp[GA_MAXDIMS];
        int st = ga_broadcast_shapes(out->ndim, out->shape, ndim, shape, &nd, tmp);
        int same = st == GA_OK && nd == out->ndim &&
                   memcmp(tmp, out->shape, sizeof(int64_t) * (size_t)nd) == 0;
        if (!same) {
            char b1[256], b2[256];
            return ga_error(GA_ERR_SHAPE,
                            "%s: a result of shape %s cannot be written into an output "
                            "of shape %s",
                            name, ga_shape_str(ndim, shape, b1, sizeof(b1)),
                            ga_shape_str(out->ndim, out->shape, b2, sizeof(b2)));
        }
        if (!ga_can_cast_same_kind(out_dt, (ga_dtype)out->dtype)) {
            return ga_error(GA_ERR_TYPE,
                            "Cannot cast %s output from %s to %s with casting rule "
                            "'same_kind' (write the result to a new array, or convert "
                            "the operands with .astype() first)",
                            name, ga_dtype_infos[out_dt].name,
                            ga_dtype_infos[out->dtype].name);
        }
        ndim = out->ndim;
        memcpy(shape, out->shape, sizeof(int64_t) * (size_t)ndim);
    }
    const ga_backend *be;
    GA_TRY(ga_device_backend(dev, &be));

    /* inputs in the loop dtype (WHERE's condition in bool); copies of inputs that
     * overlap the output without being the very view it writes */
    ga_array tmps[GA_MAXARGS];
    int owned[GA_MAXARGS] = {0};
    const ga_array *ins[GA_MAXARGS] = {NULL};
    ga_array res;
    int have_res = 0, direct = 0;
    int st = GA_OK;
    for (int i = 0; i < nin && st == GA_OK; i++) {
        const ga_array *a = in[i].array;
        if (a == NULL) {
            continue;
        }
        ga_dtype want = (op == GA_OP_WHERE && i == 0) ? GA_BOOL : loop_dt;
        if ((ga_dtype)a->dtype != want ||
            (out != NULL && ga_array_overlap(out, a) && !ga_array_same_view(out, a))) {
            st = ga_astype(a, want, &tmps[i]);
            if (st == GA_OK) {
                owned[i] = 1;
                ins[i] = &tmps[i];
            }
        } else {
            ins[i] = a;
        }
    }
    if (st != GA_OK) {
        goto done;
    }
    /* where the kernel writes: straight into `out` when its dtype is the op's output
     * dtype, else into a temporary that is then cast into `out` */
    direct = out != NULL && (ga_dtype)out->dtype == out_dt;
    if (direct) {
        ga_array_view(&res, out);
    }
    else {
        st = ga_array_empty(&res, dev, out_dt, ndim, shape);
        if (st != GA_OK) {
            goto done;
        }
    }
    have_res = 1;
    if (ga_array_size(&res) > 0) {
        ga_loop loop;
        ga_loop_init(&loop, &res);
        for (int i = 0; i < nin && st == GA_OK; i++) {
            if (ins[i] != NULL) {
                st = ga_loop_add_array(&loop, ins[i]);
            }
            else {
                ga_scalar_bytes v;
                ga_dtype want = (op == GA_OP_WHERE && i == 0) ? GA_BOOL : loop_dt;
                ga_ew_scalar_bytes(&in[i], want, &v);
                ga_loop_add_scalar(&loop, want, &v);
            }
        }
        if (st == GA_OK) {
            st = launch(be, dev, op, &loop);
        }
        for (int i = 0; i < nin && st == GA_OK; i++) {
            if (ins[i] != NULL) {
                ga_fault_flow(&res, ins[i]);
            }
        }
        if (st == GA_OK && out != NULL && !direct) {
            st = ga_copy_same_device(out, &res);
        }
    }
    else {
        /* an empty result still depends on its inputs: it reads as failed too */
        for (int i = 0; i < nin; i++) {
            if (ins[i] != NULL) {
                ga_fault_flow(out != NULL ? out : &res, ins[i]);
            }
        }
    }
    if (st == GA_OK) {
        if (out != NULL && !direct) {
            ga_array_release(&res);
            ga_array_view(result, out);
        }
        else {
            *result = res;
            have_res = 0;
        }
    }
done:
    if (have_res) {
        ga_array_release(&res);
    }
    for (int i = 0; i < nin; i++) {
        if (owned[i]) {
            ga_array_release(&tmps[i]);
        }
    }
    return st;
}
