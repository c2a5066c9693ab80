/* k_fused.cu: a fused elementwise program (ga_fused_prog, ga_backend.h) as one
 * kernel launch on a CUDA device.
 *
 * One generic kernel interprets the program: each thread takes elements in a
 * grid-stride loop, loads every input element once into a 16-byte register slot,
 * runs the instructions (a switch on op and dtype, the same per warp, so no
 * divergence) with ga_elementwise_math.h's element math (the CPU's and the unfused
 * kernels' math: same results), and stores the result once. Memory traffic is that of
 * the whole chain done once: inputs read, output written, no temporaries.
 *
 * Why interpreted, not compiled per program: NVRTC would be another library to load
 * and a compile per new program; the emulator can run this kernel as it is. The cost
 * is the register file being indexed at run time (local memory, cached in L1) and a
 * switch per instruction: instruction-bound for long programs of cheap ops, which a
 * GPU engineer should measure with bench/gpu.py before trusting the memory-bound
 * estimate. The kernel covers the dtypes and ops training chains use (below); any
 * other program is refused before launch (GA_ERR_UNSUPPORTED) and runs unfused.
 */
#include "k_common.cuh"

/* What the kernel has code for: bool, int32, int64, float32, float64, and the ops of
 * activations, losses, optimizer updates and norms. */
static GA_HD constexpr bool
ga_fused_dtype_ok(int d)
{
    return d == GA_BOOL || d == GA_INT32 || d == GA_INT64 || d == GA_FLOAT32 ||
           d == GA_FLOAT64;
}

static GA_HD constexpr bool
ga_fused_op_ok(int op)
{
    return op == GA_OP_ADD || op == GA_OP_SUBTRACT || op == GA_OP_MULTIPLY ||
           op == GA_OP_DIVIDE || op == GA_OP_NEGATIVE || op == GA_OP_POSITIVE ||
           op == GA_OP_ABS || op == GA_OP_SQUARE || op == GA_OP_RECIPROCAL ||
           op == GA_OP_MAXIMUM || op == GA_OP_MINIMUM || op == GA_OP_CLIP ||
           op == GA_OP_SQRT || op == GA_OP_EXP || op == GA_OP_EXPM1 || op == GA_OP_LOG ||
           op == GA_OP_LOG1P || op == GA_OP_TANH || op == GA_OP_SIN || op == GA_OP_COS ||
           op == GA_OP_POW || op == GA_OP_SIGN || op == GA_OP_EQUAL ||
           op == GA_OP_NOT_EQUAL || op == GA_OP_LESS || op == GA_OP_LESS_EQUAL ||
           op == GA_OP_GREATER || op == GA_OP_GREATER_EQUAL || op == GA_OP_LOGICAL_NOT ||
           op == GA_OP_LOGICAL_AND || op == GA_OP_LOGICAL_OR || op == GA_OP_WHERE ||
           op == GA_OP_COPY;
}

typedef struct {
    int64_t n;
    int32_t ndim;
    int32_t nargs;
    char *data[GA_MAXARGS];
    int64_t shape[GA_MAXDIMS];
    int64_t strides[GA_MAXARGS][GA_MAXDIMS];
    int32_t size[GA_FUSED_MAXREGS]; /* element bytes of each register */
    ga_fused_prog prog;
} ga_fused_params;

/* A register: one element of any dtype. */
typedef struct {
    alignas(16) unsigned char b[16];
} ga_fused_reg;

/* Aligned load / store of one element of `size` bytes (the host checked alignment). */
static GA_DEV inline void
ga_fused_load(ga_fused_reg *r, const char *p, int size)
{
#ifdef GA_CUDA_EMULATION
    memcpy(r->b, p, (size_t)size);
#else
    switch (size) {
    case 1:
        *(uint8_t *)r->b = *(const uint8_t *)p;
        break;
    case 4:
        *(uint32_t *)r->b = *(const uint32_t *)p;
        break;
    default:
        *(uint64_t *)r->b = *(const uint64_t *)p;
        break;
    }
#endif
}

static GA_DEV inline void
ga_fused_store(char *p, const ga_fused_reg *r, int size)
{
#ifdef GA_CUDA_EMULATION
    memcpy(p, r->b, (size_t)size);
#else
    switch (size) {
    case 1:
        *(uint8_t *)p = *(const uint8_t *)r->b;
        break;
    case 4:
        *(uint32_t *)p = *(const uint32_t *)r->b;
        break;
    default:
        *(uint64_t *)p = *(const uint64_t *)r->b;
        break;
    }
#endif
}

/* One instruction on register slots. */
static GA_DEV inline void
ga_fused_step(const ga_fused_instr &in, int src_dtype, ga_fused_reg *reg)
{
    char *o = (char *)reg[in.dst].b;
    const char *a = (const char *)reg[in.src[0] < 0 ? 0 : in.src[0]].b;
    const char *b = (const char *)reg[in.src[1] < 0 ? 0 : in.src[1]].b;
    const char *c = (const char *)reg[in.src[2] < 0 ? 0 : in.src[2]].b;
    if (in.op == GA_OP_COPY) {
        switch (src_dtype * GA_NTYPES + in.dtype) {
#define GA_X_CAST_CASE(F, f, T, t)                                                     \
    case F * GA_NTYPES + T:                                                            \
        if constexpr (ga_fused_dtype_ok(F) && ga_fused_dtype_ok(T)) {                  \
            ga_k_cast_##f##_##t(o, a);                                                 \
        }                                                                              \
        break;
            GA_CAST_LIST(GA_X_CAST_CASE)
#undef GA_X_CAST_CASE
        default:
            break;
        }
        return;
    }
    switch (in.op * GA_NTYPES + in.dtype) {
#define GA_X_OP_CASE(E, op, D, d)                                                      \
    case E * GA_NTYPES + D:                                                            \
        if constexpr (ga_fused_op_ok(E) && ga_fused_dtype_ok(D)) {                     \
            ga_k_##op##_##d(o, a, b, c);                                               \
        }                                                                              \
        break;
        GA_KERNEL_LIST(GA_X_OP_CASE)
#undef GA_X_OP_CASE
    default:
        break;
    }
}

__global__ void
k_fused(const GA_GRID_CONSTANT ga_fused_params p)
{
    const ga_fused_prog &g = p.prog;
    ga_fused_reg reg[GA_FUSED_MAXREGS];
    const int32_t *size = p.size;
    for (int k = 0; k < g.nconst; k++) {
        memcpy(reg[g.nin + k].b, g.consts[k].bytes, 16);
    }
    for (int64_t i = ga_gtid(); i < p.n; i += ga_gstride()) {
        int64_t off[GA_MAXARGS] = {0, 0, 0, 0};
        int64_t rest = i;
        for (int d = p.ndim - 1; d >= 0; d--) {
            int64_t q = rest / p.shape[d];
            int64_t idx = rest - q * p.shape[d];
            rest = q;
            for (int a = 0; a < GA_MAXARGS; a++) {
                off[a] += idx * p.strides[a][d];
            }
        }
        for (int k = 0; k < g.nin; k++) {
            ga_fused_load(&reg[k], p.data[1 + k] + off[1 + k], size[k]);
        }
        for (int s = 0; s < g.ninstr; s++) {
            const ga_fused_instr &in = g.instr[s];
            ga_fused_step(in, in.op == GA_OP_COPY ? g.reg_dtype[in.src[0]] : in.dtype, reg);
        }
        ga_fused_store(p.data[0] + off[0], &reg[g.result], size[g.result]);
    }
}

extern "C" int
ga_cuda_fused(int dev, const ga_fused_prog *g, const ga_loop *loop)
{
    ga_fused_params p;
    memset(&p, 0, sizeof(p));
    for (int r = 0; r < g->nregs; r++) {
        if (!ga_fused_dtype_ok(g->reg_dtype[r])) {
            return ga_error(GA_ERR_UNSUPPORTED, "the CUDA fused kernel has no %s registers",
                            ga_k_dtype_name(g->reg_dtype[r]));
        }
        p.size[r] = ga_k_itemsize(g->reg_dtype[r]);
    }
    for (int i = 0; i < g->ninstr; i++) {
        if (!ga_fused_op_ok(g->instr[i].op)) {
            return ga_error(GA_ERR_UNSUPPORTED, "the CUDA fused kernel has no %s",
                            ga_k_op_name(g->instr[i].op));
        }
    }
    p.n = loop->size;
    p.ndim = loop->ndim;
    p.nargs = loop->nargs;
    for (int a = 0; a < loop->nargs; a++) {
        const ga_operand *op = &loop->args[a];
        int size = ga_k_itemsize(op->dtype);
        /* element-aligned operands only (a foreign tensor at an odd offset runs unfused,
         * where the elementwise kernels stage it) */
        bool aligned = !op->is_scalar && (uintptr_t)op->data % (uintptr_t)size == 0;
        for (int d = 0; d < loop->ndim; d++) {
            p.strides[a][d] = op->strides[d];
            aligned = aligned && op->strides[d] % size == 0;
        }
        if (!aligned) {
            return ga_error(GA_ERR_UNSUPPORTED, "a fused operand is not aligned to its "
                            "element size");
        }
        p.data[a] = op->data;
    }
    for (int d = 0; d < loop->ndim; d++) {
        p.shape[d] = loop->shape[d];
    }
    p.prog = *g;
    cudaStream_t stream;
    GA_TRY(ga_cuda_stream(dev, &stream));
    unsigned grid, block;
    ga_cuda_launch_dims(dev, p.n, &grid, &block);
    GA_LAUNCH(k_fused, grid, block, 0, stream, p);
    GA_CUDA_TRY(cudaGetLastError());
    return GA_OK;
}
