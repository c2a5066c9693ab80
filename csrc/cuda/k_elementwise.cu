/* k_elementwise.cu: every elementwise operation and cast on a CUDA device.
 *
 * The scalar math is ../ga_kernels.h's (the same functions the CPU backend calls), so
 * this file only adds the iteration: one kernel template over a functor, instantiated
 * once per entry of GA_KERNEL_LIST (op, loop dtype) and GA_CAST_LIST (from, to), and
 * a host table [op][dtype] / [from][to] of launchers. No per-element switch.
 *
 * Memory traffic: an elementwise op reads nin elements and writes one; it is memory
 * bound for every op here, so the kernel's job is coalesced access and nothing else.
 */
#include "k_common.cuh"

/* The ga_loop travels BY VALUE as the kernel's parameter (about 1.1 KB, within the 4 KB
 * parameter space): its scalar operands carry their values with it, and no host
 * pointer is ever dereferenced on the device. */
template <class F>
__global__ void
k_elementwise(ga_loop loop)
{
    /* Scalar operands: a private copy of the value and a step of 0. Unused operand
     * slots point at a dummy so the functor's signature is always satisfied. */
    ga_scalar_bytes vals[GA_MAXARGS];
    char *base[GA_MAXARGS];
    int64_t step[GA_MAXARGS];
    bool strided[GA_MAXARGS];
    for (int a = 0; a < GA_MAXARGS; a++) {
        vals[a] = loop.args[a].value;
        strided[a] = a < loop.nargs && !loop.args[a].is_scalar;
        base[a] = strided[a] ? loop.args[a].data : (char *)vals[a].bytes;
        step[a] = strided[a] && loop.ndim >= 1 ? loop.args[a].strides[0] : 0;
    }
    const int64_t n = loop.size;
    if (loop.ndim <= 1) {
        /* The fast path: after coalescing, a loop whose operands are all contiguous
         * (the common case) is 1-d, so element i sits at base + i * step: one multiply
         * per operand, consecutive threads touch consecutive addresses. */
        for (int64_t i = ga_gtid(); i < n; i += ga_gstride()) {
            F::apply(base[0] + i * step[0], base[1] + i * step[1], base[2] + i * step[2],
                     base[3] + i * step[3]);
        }
        return;
    }
    /* The general strided path (broadcasts, transposes, negative strides). */
    for (int64_t i = ga_gtid(); i < n; i += ga_gstride()) {
        char *p[GA_MAXARGS];
        for (int a = 0; a < GA_MAXARGS; a++) {
            p[a] = base[a];
            if (strided[a]) {
                p[a] += ga_offset(loop.ndim, loop.shape, loop.args[a].strides, i);
            }
        }
        F::apply(p[0], p[1], p[2], p[3]);
    }
}

typedef int (*ga_ew_launcher)(int dev, const ga_loop *loop);

template <class F>
static int
ga_ew_launch(int dev, const ga_loop *loop)
{
    unsigned grid, block;
    cudaStream_t stream;
    int st = ga_k_setup(dev, loop->size, &grid, &block, &stream);
    if (st != GA_OK) {
        return st;
    }
    GA_LAUNCH(k_elementwise<F>, grid, block, 0, stream, *loop);
    GA_CUDA_TRY(cudaGetLastError());
    return GA_OK;
}

/* One functor per (op, dtype) and per cast, each a thin wrapper of the shared math. */
#define GA_X_FUNCTOR(OPE, opname, DTE, dtname)                                          \
    struct ga_f_##opname##_##dtname {                                                  \
        static GA_HD void                                                              \
        apply(char *o, const char *a, const char *b, const char *c)                    \
        {                                                                              \
            ga_k_##opname##_##dtname(o, a, b, c);                                      \
        }                                                                              \
    };
GA_KERNEL_LIST(GA_X_FUNCTOR)
#undef GA_X_FUNCTOR

#define GA_X_CAST_FUNCTOR(FROME, from, TOE, to)                                         \
    struct ga_fc_##from##_##to {                                                       \
        static GA_HD void                                                              \
        apply(char *o, const char *a, const char *b, const char *c)                    \
        {                                                                              \
            (void)b;                                                                   \
            (void)c;                                                                   \
            ga_k_cast_##from##_##to(o, a);                                             \
        }                                                                              \
    };
GA_CAST_LIST(GA_X_CAST_FUNCTOR)
#undef GA_X_CAST_FUNCTOR

/* A same-dtype COPY is a byte copy of the element: one functor per element size, so it
 * works even for a pair the cast list leaves out. */
template <int SIZE> struct ga_f_bytes {
    static GA_HD void
    apply(char *o, const char *a, const char *b, const char *c)
    {
        (void)b;
        (void)c;
        memcpy(o, a, SIZE);
    }
};

typedef struct {
    ga_ew_launcher op[GA_NOPS][GA_NTYPES];
    ga_ew_launcher cast[GA_NTYPES][GA_NTYPES];
} ga_ew_table;

static ga_ew_table
ga_ew_build_table(void)
{
    ga_ew_table t;
    memset(&t, 0, sizeof(t));
#define GA_X_ENTRY(OPE, opname, DTE, dtname)                                            \
    t.op[OPE][DTE] = ga_ew_launch<ga_f_##opname##_##dtname>;
    GA_KERNEL_LIST(GA_X_ENTRY)
#undef GA_X_ENTRY
#define GA_X_CAST_ENTRY(FROME, from, TOE, to)                                           \
    t.cast[FROME][TOE] = ga_ew_launch<ga_fc_##from##_##to>;
    GA_CAST_LIST(GA_X_CAST_ENTRY)
#undef GA_X_CAST_ENTRY
    for (int d = 0; d < GA_NTYPES; d++) {
        if (t.cast[d][d] != NULL) {
            continue;
        }
        switch (ga_k_itemsize(d)) {
        case 1:
            t.cast[d][d] = ga_ew_launch<ga_f_bytes<1>>;
            break;
        case 2:
            t.cast[d][d] = ga_ew_launch<ga_f_bytes<2>>;
            break;
        case 4:
            t.cast[d][d] = ga_ew_launch<ga_f_bytes<4>>;
            break;
        case 8:
            t.cast[d][d] = ga_ew_launch<ga_f_bytes<8>>;
            break;
        default:
            t.cast[d][d] = ga_ew_launch<ga_f_bytes<16>>;
            break;
        }
    }
    return t;
}

extern "C" int
ga_cuda_elementwise(int dev, int op, const ga_loop *loop)
{
    /* built once, on first use (C++ guarantees a thread-safe initialisation) */
    static const ga_ew_table table = ga_ew_build_table();
    if (op < 0 || op >= GA_NOPS || loop->nargs < 1 || loop->nargs > GA_MAXARGS) {
        return ga_error(GA_ERR_VALUE, "elementwise: bad operation %d or operand count %d",
                        op, (int)loop->nargs);
    }
    if (loop->size <= 0) {
        return GA_OK;
    }
    ga_ew_launcher fn = NULL;
    int out_dt = loop->args[0].dtype;
    if (op == GA_OP_COPY) {
        if (loop->nargs != 2) {
            return ga_error(GA_ERR_VALUE, "copy: expected 2 operands, got %d",
                            (int)loop->nargs);
        }
        int in_dt = loop->args[1].dtype;
        if (in_dt >= 0 && in_dt < GA_NTYPES && out_dt >= 0 && out_dt < GA_NTYPES) {
            fn = table.cast[in_dt][out_dt];
        }
        if (fn == NULL) {
            return ga_error(GA_ERR_UNSUPPORTED,
                            "the CUDA backend has no cast from %s to %s",
                            ga_k_dtype_name(in_dt), ga_k_dtype_name(out_dt));
        }
        return fn(dev, loop);
    }
    /* The loop dtype is the inputs' (the output may be bool or real); the last input
     * always has it (WHERE's bool condition comes first). */
    int loop_dt = loop->nargs >= 2 ? loop->args[loop->nargs - 1].dtype : out_dt;
    if (loop_dt >= 0 && loop_dt < GA_NTYPES) {
        fn = table.op[op][loop_dt];
    }
    if (fn == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED, "%s is not supported for %s on a CUDA device",
                        ga_k_op_name(op), ga_k_dtype_name(loop_dt));
    }
    return fn(dev, loop);
}
