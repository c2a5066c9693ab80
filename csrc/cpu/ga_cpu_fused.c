/* ga_cpu_fused.c: a fused elementwise program (ga_fused_prog) on the CPU.
 *
 * The program runs block by block: each instruction is the very inner loop that
 * ga_cpu_elementwise would run for that op (so a fused result is bitwise the unfused
 * one), applied to a block of elements whose temporaries live in a scratch area on the
 * stack, small enough to stay in the core's L1/L2 cache. Inputs are read in place
 * (their own strides), constants with step 0, and the result register is the output's
 * own memory, so memory sees each input read once and the output written once: no
 * full-size temporary. Blocks of a large loop are split over the thread pool in
 * chunks of several blocks (ga_cpu_run_loop_parallel_chunked), and the next block's
 * memory is prefetched while a block computes (see GA_FUSED_PREFETCH_COST).
 *
 * A final full reduction (ga_cpu_fused_reduce) runs the program over each chunk the
 * reduction is about to read, into a stack buffer, and the reduction folds it at once
 * (ga_cpu_reduce_produced): the result never exists in memory.
 *
 * Interpreting per block rather than compiling per program: the inner loops already
 * exist in every dtype, SIMD variant included, and a call per instruction per block
 * of hundreds of elements costs well under 1% of the block's work.
 */
#include <string.h>

#include "ga_cpu.h"
#include "ga_dtype.h"
#include "ga_error.h"
#include "ga_ops.h"

/* Scratch bytes per thread for the temporaries of one block: with a few float32
 * temporaries, blocks of 1-2k elements; the whole working set stays in L2. */
#define GA_FUSED_SCRATCH (32 * 1024)
#define GA_FUSED_BLOCK_MAX 2048
#define GA_FUSED_BLOCK_MIN 64

/* A block's memory time and its arithmetic come one after the other on a core: its
 * inputs are read, then the heaviest instruction (exp: about 0.9 ns an element)
 * computes while nothing is read, so `(z + 2).exp() * y` took their sum (2.0 ns an
 * element on one thread of the CI machine, 1.2 in cache). The next block's contiguous
 * input lines, and its output lines for writing, are prefetched between pieces of
 * that instruction, about GA_FUSED_PREFETCH_LINES at a time (a core keeps some tens
 * of misses in flight: bursts of 96 lines stalled the math and gained 3%, 8 to 24
 * measured alike, 32 slower), so they arrive while it computes: 1.3-1.4 ns an
 * element. Only where that instruction costs
 * GA_FUSED_PREFETCH_COST or more (a memory-bound program is streamed by the hardware
 * prefetcher already) and the operands span GA_FUSED_PREFETCH_MIN_BYTES or more (in
 * cache, the pieces' calls cost 10-30%). A pool chunk of GA_FUSED_CHUNK elements
 * holds several blocks, so a thread's next block is its own, the one after. */
#define GA_FUSED_PREFETCH_COST 2
#define GA_FUSED_PREFETCH_MIN_BYTES (4 << 20)
#define GA_FUSED_PREFETCH_LINES 16
#define GA_FUSED_CHUNK (1 << 14)

typedef struct {
    const ga_fused_prog *prog;
    ga_cpu_inner_fn fn[GA_FUSED_MAXINSTR];
    void *ctx[GA_FUSED_MAXINSTR];
    int64_t size[GA_FUSED_MAXREGS];   /* element bytes of each register */
    int64_t offset[GA_FUSED_MAXREGS]; /* temporaries: where in the scratch area */
    int64_t block;                    /* elements per block */
    int heavy;                        /* the instruction to prefetch during, or -1 */
} cpu_plan;

/* byte ranges to prefetch, consumed a few lines at a time */
typedef struct {
    const char *at[GA_MAXARGS];
    int64_t bytes[GA_MAXARGS];
    int write[GA_MAXARGS];
    int n, k;      /* ranges; the one being prefetched */
    int64_t done;  /* bytes of range k prefetched */
    int64_t lines; /* in all */
    int64_t per;   /* lines per portion */
} prefetch_list;

static void
prefetch_next(prefetch_list *q)
{
    for (int64_t left = q->per; left > 0 && q->k < q->n; left--) {
        const char *a = q->at[q->k] + q->done;
        if (q->write[q->k]) {
            __builtin_prefetch(a, 1, 1);
        }
        else {
            __builtin_prefetch(a, 0, 1);
        }
        q->done += 64;
        if (q->done >= q->bytes[q->k]) {
            q->k++;
            q->done = 0;
        }
    }
}

/* The contiguous ranges of elements [i, i + m) of the inputs and output */
static void
prefetch_plan(const cpu_plan *pl, char **p, const int64_t *s, int64_t i, int64_t m,
              prefetch_list *q)
{
    const ga_fused_prog *g = pl->prog;
    int64_t lines = 0;
    q->n = q->k = 0;
    q->done = 0;
    for (int a = 0; a <= g->nin; a++) {
        int64_t size = pl->size[a == 0 ? g->result : a - 1];
        if (s[a] == size) {
            q->at[q->n] = p[a] + i * size;
            q->bytes[q->n] = m * size;
            q->write[q->n] = a == 0;
            lines += (m * size + 63) / 64;
            q->n++;
        }
    }
    q->lines = lines;
}

static void
fused_inner(char **p, const int64_t *s, int64_t n, void *arg)
{
    const cpu_plan *pl = (const cpu_plan *)arg;
    const ga_fused_prog *g = pl->prog;
    _Alignas(64) char scratch[GA_FUSED_SCRATCH];
    char *rp[GA_FUSED_MAXREGS];
    int64_t rs[GA_FUSED_MAXREGS];
    int first_temp = g->nin + g->nconst;
    for (int r = 0; r < g->nregs; r++) {
        if (r < g->nin) {
            rs[r] = s[1 + r];
        }
        else if (r < first_temp) {
            rp[r] = (char *)g->consts[r - g->nin].bytes;
            rs[r] = 0;
        }
        else {
            rp[r] = scratch + pl->offset[r];
            rs[r] = pl->size[r];
        }
    }
    rs[g->result] = s[0];
    for (int64_t i0 = 0; i0 < n; i0 += pl->block) {
        int64_t m = n - i0 < pl->block ? n - i0 : pl->block;
        for (int k = 0; k < g->nin; k++) {
            rp[k] = p[1 + k] + i0 * s[1 + k];
        }
        rp[g->result] = p[0] + i0 * s[0];
        int64_t next = n - i0 - m < pl->block ? n - i0 - m : pl->block;
        for (int i = 0; i < g->ninstr; i++) {
            const ga_fused_instr *in = &g->instr[i];
            int nin = ga_op_arity(in->op);
            char *pp[4];
            int64_t ss[4];
            pp[0] = rp[in->dst];
            ss[0] = rs[in->dst];
            for (int a = 0; a < nin; a++) {
                pp[1 + a] = rp[in->src[a]];
                ss[1 + a] = rs[in->src[a]];
            }
            prefetch_list q;
            q.lines = 0;
            if (i == pl->heavy && next > 0) {
                prefetch_plan(pl, p, s, i0 + m, next, &q);
            }
            if (q.lines == 0) { /* not the heavy one, the last block, or nothing contiguous */
                pl->fn[i](pp, ss, m, pl->ctx[i]);
                continue;
            }
            /* pieces of a multiple of 16 elements (whole vectors of every dtype's SIMD
             * loop), each after a portion of the prefetches */
            int64_t parts =
                (q.lines + GA_FUSED_PREFETCH_LINES - 1) / GA_FUSED_PREFETCH_LINES;
            int64_t piece = ((m + parts - 1) / parts + 15) & ~(int64_t)15;
            /* rounding the pieces up leaves fewer of them: each takes its share of
             * all the lines */
            int64_t npieces = (m + piece - 1) / piece;
            q.per = (q.lines + npieces - 1) / npieces;
            for (int64_t j = 0; j < m; j += piece) {
                prefetch_next(&q);
                char *pj[4];
                for (int a = 0; a <= nin; a++) {
                    pj[a] = pp[a] + j * ss[a];
                }
                pl->fn[i](pj, ss, m - j < piece ? m - j : piece, pl->ctx[i]);
            }
        }
    }
}

/* The inner loops, block size and scratch layout of g; *cost for the pool. */
static int
plan_program(const ga_fused_prog *g, cpu_plan *out, int *cost_out)
{
    cpu_plan pl;
    memset(&pl, 0, sizeof(pl));
    pl.prog = g;
    pl.heavy = -1;
    int cost = 0, heaviest = GA_FUSED_PREFETCH_COST - 1;
    for (int i = 0; i < g->ninstr; i++) {
        const ga_fused_instr *in = &g->instr[i];
        int in_dt = in->op == GA_OP_COPY ? g->reg_dtype[in->src[0]] : in->dtype;
        int c;
        GA_TRY(ga_cpu_elementwise_loop(in->op, in_dt, g->reg_dtype[in->dst], &pl.fn[i],
                                       &pl.ctx[i], &c));
        cost += c;
        if (c > heaviest) {
            heaviest = c;
            pl.heavy = i;
        }
    }
    int64_t temp_bytes = 0;
    for (int r = 0; r < g->nregs; r++) {
        pl.size[r] = ga_dtype_itemsize((ga_dtype)g->reg_dtype[r]);
        if (r >= g->nin + g->nconst && r != g->result) {
            temp_bytes += pl.size[r];
        }
    }
    /* each temporary's area is rounded up to a cache line: keep a line per register spare */
    int64_t block = temp_bytes > 0 ? (GA_FUSED_SCRATCH - 64 * GA_FUSED_MAXREGS) / temp_bytes
                                   : GA_FUSED_BLOCK_MAX;
    block = block > GA_FUSED_BLOCK_MAX ? GA_FUSED_BLOCK_MAX : block & ~(int64_t)15;
    if (block < GA_FUSED_BLOCK_MIN) {
        /* 16 temporaries of 16 bytes fit 128 elements: never reached */
        return ga_error(GA_ERR_UNSUPPORTED, "fused program: too many temporaries");
    }
    pl.block = block;
    int64_t at = 0;
    for (int r = g->nin + g->nconst; r < g->nregs; r++) {
        if (r != g->result) {
            pl.offset[r] = at;
            at += ((pl.size[r] * block + 63) & ~(int64_t)63);
        }
    }
    if (at > GA_FUSED_SCRATCH) {
        return ga_error(GA_ERR_UNSUPPORTED, "fused program: too many temporaries");
    }
    *out = pl;
    *cost_out = cost;
    return GA_OK;
}

int
ga_cpu_fused(int dev, const ga_fused_prog *g, const ga_loop *loop)
{
    (void)dev;
    cpu_plan pl;
    int cost;
    GA_TRY(plan_program(g, &pl, &cost));
    int64_t bytes = pl.size[g->result];
    for (int k = 0; k < g->nin; k++) {
        bytes += loop->args[1 + k].is_scalar ? 0 : pl.size[k];
    }
    if (loop->size * bytes < GA_FUSED_PREFETCH_MIN_BYTES) {
        pl.heavy = -1; /* in cache: the pieces would only cost calls */
    }
    ga_cpu_run_loop_parallel_chunked(loop, fused_inner, &pl, cost, GA_FUSED_CHUNK);
    return GA_OK;
}

/* --- a fused program's result reduced as it is made ----------------------------- */

typedef struct {
    const cpu_plan *pl;
    const ga_loop *loop; /* args[0], the output, is never read or written */
    int64_t itemsize;    /* of the result */
} produce_job;

typedef struct {
    const cpu_plan *pl;
    char *cursor; /* where the next result element goes */
    int64_t itemsize;
} cursor_run;

/* fused_inner with the result written at the cursor: a range of the loop is walked in
 * C order, so its pieces are consecutive elements of the chunk */
static void
fused_to_cursor(char **p, const int64_t *s, int64_t n, void *arg)
{
    cursor_run *c = (cursor_run *)arg;
    char *pp[GA_MAXARGS];
    int64_t ss[GA_MAXARGS];
    int nargs = 1 + c->pl->prog->nin;
    memcpy(pp, p, sizeof(char *) * (size_t)nargs);
    memcpy(ss, s, sizeof(int64_t) * (size_t)nargs);
    pp[0] = c->cursor;
    ss[0] = c->itemsize;
    fused_inner(pp, ss, n, (void *)c->pl);
    c->cursor += n * c->itemsize;
}

static void
produce_chunk(void *ctx, int64_t start, int64_t n, char *buf)
{
    const produce_job *j = (const produce_job *)ctx;
    cursor_run c = {j->pl, buf, j->itemsize};
    ga_cpu_run_loop_range(j->loop, fused_to_cursor, &c, start, start + n);
}

/* The contiguous float32 x when g is x * x and nothing else (the 2-norm's sum of
 * squares, ga_norm.c), else NULL */
static const char *
squares_of(const ga_fused_prog *g, const ga_loop *loop)
{
    const ga_fused_instr *in = &g->instr[0];
    int square = g->nin == 1 && g->nconst == 0 && g->ninstr == 1 &&
                 in->op == GA_OP_MULTIPLY && in->src[0] == 0 && in->src[1] == 0 &&
                 in->dst == g->result && in->dtype == GA_FLOAT32 &&
                 g->reg_dtype[0] == GA_FLOAT32 && g->reg_dtype[g->result] == GA_FLOAT32;
    const ga_operand *x = &loop->args[1];
    int contiguous = loop->ndim == 1 && !x->is_scalar && x->strides[0] == 4;
    return square && contiguous ? x->data : NULL;
}

int
ga_cpu_fused_reduce(int dev, const ga_fused_prog *g, const ga_loop *loop,
                    const ga_reduce_desc *r)
{
    (void)dev;
    cpu_plan pl;
    int cost;
    GA_TRY(plan_program(g, &pl, &cost));
    pl.heavy = -1; /* a produced chunk's next block is in another call: nothing to fetch */
    produce_job j = {&pl, loop, ga_dtype_itemsize((ga_dtype)g->reg_dtype[g->result])};
    ga_cpu_reduce_produced(r, produce_chunk, &j, squares_of(g, loop));
    return GA_OK;
}
