/* ga_cpu_reduce.c: reductions and scans on the CPU.
 *
 * Every element is first converted, a chunk at a time, into a small stack buffer of
 * one "working" type (double, int64, uint64, complex double or a nonzero flag), and
 * the typed reducers run on that buffer. This keeps one reducer per (op, working
 * type) instead of one per (op, input dtype, output dtype), and the conversion loop
 * over a contiguous chunk vectorises. Floating sums accumulate in double, pairwise
 * within a chunk and through a binary counter across chunks, so a sum of n elements
 * has O(log n) rounding error like NumPy's pairwise summation.
 *
 * Two traversals:
 *   - per output: each output element reduces its own run of input (last-axis
 *     reductions such as x.max(axis=1));
 *   - row accumulation: when the kept axis is the one with the small stride (x.sum(
 *     axis=0) of a C-contiguous matrix), whole rows of outputs are accumulated at once
 *     so the inner loop walks memory contiguously.
 * On the thread pool, work is split over outputs (or, for one output, over fixed-size
 * blocks combined in order), so results do not depend on the number of threads. Built
 * with -fno-trapping-math (CMakeLists.txt), so the max/min selects vectorise.
 *
 * The math itself (identities, how two partial results combine, NaN rules, the final
 * conversion to the output dtype) is ga_reduce_math.h's, shared with the CUDA
 * kernels; this file only decides the traversal. The SIMD runs of contiguous
 * float32/float64 sums and max/min (ga_cpu_reduce_simd.c) are hand-vectorised copies
 * of those rules; see the comment there. The row accumulation's own SIMD loops
 * (rows_f32, rows_f64, rows_f32_ext) are below.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ga_cpu.h"
#include "ga_cpu_convert.h"
#include "ga_cpu_loop.h"
#include "ga_error.h"
#include "ga_half.h"
#include "ga_elementwise_math.h"
#include "ga_reduce_math.h"
#include "ga_cpu_reduce_simd.h"

#define CHUNK 1024
/* Below this many input elements, threads cost more than they save. */
#define PAR_MIN_WORK (1 << 18)
/* Fixed block of a single-output reduction split between threads (a multiple of
 * CHUNK, independent of the thread count, so the result is deterministic). */
#define PAR_BLOCK (64 * CHUNK)

typedef enum { WK_F64, WK_I64, WK_U64, WK_C128, WK_B } work_kind;

typedef ga_c128 cplx;

/* --- reduction state ------------------------------------------------------------ */

/* Levels of the binary counter that combines chunk sums pairwise. */
#define NLEVELS 48

typedef struct {
    int has;     /* a value has been seen (max/min/arg*) */
    int nan;     /* max/min/arg* of floats: a NaN was seen (then `f` may not hold it:
                  * the SIMD chunks report NaN through this flag) */
    int64_t idx; /* arg*: flat index of the best so far */
    double f;
    int64_t i;
    cplx c;
    int64_t nsums; /* sum: how many chunk sums were pushed */
    cplx lvl[NLEVELS];
} red_state;

typedef union {
    double f[CHUNK];
    int64_t i[CHUNK];
    cplx c[CHUNK];
    uint8_t b[CHUNK];
} work_buf;

static work_kind
work_kind_of(int op, int in_dtype, int out_dtype)
{
    int t = (op == GA_RED_SUM || op == GA_RED_PROD) ? out_dtype : in_dtype;
    if (op == GA_RED_ALL || op == GA_RED_ANY) {
        return WK_B;
    }
    switch (ga_dtype_kind((ga_dtype)t)) {
    case GA_KIND_FLOAT:
        return WK_F64;
    case GA_KIND_COMPLEX:
        return WK_C128;
    case GA_KIND_UINT:
        return WK_U64;
    default:
        return WK_I64;
    }
}

/* The identity of op (max/min/arg* have none: `has` stays 0 until an element). */
static void
state_init(red_state *st, int op, work_kind wk)
{
    int prod = ga_rm_is_prod(op, 0);
    st->has = 0;
    st->nan = 0;
    st->idx = 0;
    st->nsums = 0;
    st->f = ga_rm_identity_f64(prod);
    /* int64 and uint64 identities have the same bits */
    st->i = op == GA_RED_ALL || op == GA_RED_ANY ? ga_rm_bool_identity(op)
                                                 : ga_rm_identity_i64(prod);
    st->c = ga_rm_identity_c128(prod);
    (void)wk;
}

/* Pairwise sum of n doubles spaced `step` apart: blocks of 8 independent partial
 * sums (they vectorise), halves recursively above 128 elements. */
static double
pairwise_sum(const double *x, int64_t n, int64_t step)
{
    if (n < 8) {
        double r = ga_rm_identity_f64(0);
        for (int64_t i = 0; i < n; i++) {
            r = ga_rm_sum_f64(r, x[i * step]);
        }
        return r;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; j++) {
            r[j] = x[j * step];
        }
        int64_t i;
        for (i = 8; i + 8 <= n; i += 8) {
            for (int j = 0; j < 8; j++) {
                r[j] = ga_rm_sum_f64(r[j], x[(i + j) * step]);
            }
        }
        double res = ga_rm_sum_f64(
            ga_rm_sum_f64(ga_rm_sum_f64(r[0], r[1]), ga_rm_sum_f64(r[2], r[3])),
            ga_rm_sum_f64(ga_rm_sum_f64(r[4], r[5]), ga_rm_sum_f64(r[6], r[7])));
        for (; i < n; i++) {
            res = ga_rm_sum_f64(res, x[i * step]);
        }
        return res;
    }
    int64_t h = (n / 2) & ~(int64_t)7;
    return ga_rm_sum_f64(pairwise_sum(x, h, step),
                         pairwise_sum(x + h * step, n - h, step));
}

/* Push one partial sum into the binary counter (carry while the level is full). */
static void
push_sum(red_state *st, cplx s)
{
    int l = 0;
    while (l < NLEVELS - 1 && (st->nsums >> l) & 1) {
        s = ga_rm_sum_c128(st->lvl[l], s);
        l++;
    }
    st->lvl[l] = s;
    st->nsums++;
}

static cplx
total_sum(const red_state *st)
{
    cplx t = ga_rm_identity_c128(0);
    /* up to the highest level in use: the other levels were never written (a
     * per-output reduction stores one state per output, and walking all 48 levels
     * for each cost x.sum(axis=1) of a (128, 10) array 2.8x NumPy's time) */
    for (int l = 0; l < NLEVELS && (st->nsums >> l) != 0; l++) {
        if ((st->nsums >> l) & 1) {
            t = ga_rm_sum_c128(t, st->lvl[l]);
        }
    }
    return t;
}

/* Fold n working values (flat indices base..base+n-1) into the state, the earlier
 * partial result first: every rule is ga_reduce_math.h's. WK_I64 and WK_U64 sums and
 * products share the int64 functions (wrapping arithmetic: the same bits). */
static void
fold_chunk(red_state *st, int op, work_kind wk, const work_buf *b, int64_t n,
           int64_t base)
{
    int is_max = op == GA_RED_MAX || op == GA_RED_ARGMAX;
    switch (op) {
    case GA_RED_SUM:
        if (wk == WK_F64) {
            cplx s = {pairwise_sum(b->f, n, 1), 0.0};
            push_sum(st, s);
        } else if (wk == WK_C128) {
            cplx s = {pairwise_sum(&b->c[0].re, n, 2), pairwise_sum(&b->c[0].im, n, 2)};
            push_sum(st, s);
        } else {
            int64_t acc = st->i;
            for (int64_t k = 0; k < n; k++) {
                acc = ga_rm_sum_i64(acc, b->i[k]);
            }
            st->i = acc;
        }
        return;
    case GA_RED_PROD:
        if (wk == WK_F64) {
            double acc = st->f;
            for (int64_t k = 0; k < n; k++) {
                acc = ga_rm_mul_f64(acc, b->f[k]);
            }
            st->f = acc;
        } else if (wk == WK_C128) {
            for (int64_t k = 0; k < n; k++) {
                st->c = ga_rm_mul_c128(st->c, b->c[k]);
            }
        } else {
            int64_t acc = st->i;
            for (int64_t k = 0; k < n; k++) {
                acc = ga_rm_mul_i64(acc, b->i[k]);
            }
            st->i = acc;
        }
        return;
    case GA_RED_ALL:
    case GA_RED_ANY: {
        /* stop at the first element that decides it */
        int stop = !ga_rm_bool_identity(op);
        for (int64_t k = 0; k < n && st->i != stop; k++) {
            st->i = ga_rm_bool_combine((int)st->i, b->b[k], op);
        }
        return;
    }
    case GA_RED_MAX:
    case GA_RED_MIN:
        if (wk == WK_F64) {
            /* branch-free selects (they vectorise); a NaN sticks in m */
            double m = st->has ? st->f : b->f[0];
            if (is_max) {
                for (int64_t k = 0; k < n; k++) {
                    m = ga_rm_ext_f64(m, b->f[k], 1);
                }
            } else {
                for (int64_t k = 0; k < n; k++) {
                    m = ga_rm_ext_f64(m, b->f[k], 0);
                }
            }
            st->f = m;
            st->nan |= ga_rm_isnan_f64(m);
        } else if (wk == WK_C128) {
            cplx m = st->has ? st->c : b->c[0];
            for (int64_t k = 0; k < n; k++) {
                m = ga_rm_ext_c128(m, b->c[k], is_max);
            }
            st->c = m;
        } else if (wk == WK_U64) {
            uint64_t m = st->has ? (uint64_t)st->i : (uint64_t)b->i[0];
            for (int64_t k = 0; k < n; k++) {
                m = ga_rm_ext_u64(m, (uint64_t)b->i[k], is_max);
            }
            st->i = (int64_t)m;
        } else {
            int64_t m = st->has ? st->i : b->i[0];
            for (int64_t k = 0; k < n; k++) {
                m = ga_rm_ext_i64(m, b->i[k], is_max);
            }
            st->i = m;
        }
        st->has = 1;
        return;
    case GA_RED_ARGMAX:
    case GA_RED_ARGMIN: {
        if (st->nan) {
            return; /* the first NaN wins: nothing later can take over */
        }
        /* the best so far in locals (the state is memory the loads may alias);
         * `at`: its position in this chunk, -1 while it is the state's */
        int64_t k = 0, at = -1;
        if (!st->has) {
            at = 0;
            k = 1;
        }
        if (wk == WK_F64) {
            double m = at == 0 ? b->f[0] : st->f;
            for (; k < n && m == m; k++) { /* a NaN best: the first NaN, final */
                if (ga_rm_takes_f64(m, b->f[k], is_max)) {
                    m = b->f[k];
                    at = k;
                }
            }
            st->f = m;
            st->nan = ga_rm_isnan_f64(m);
        } else if (wk == WK_C128) {
            cplx m = at == 0 ? b->c[0] : st->c;
            for (; k < n && !ga_rm_isnan_c128(m); k++) {
                if (ga_rm_takes_c128(m, b->c[k], is_max)) {
                    m = b->c[k];
                    at = k;
                }
            }
            st->c = m;
            st->nan = ga_rm_isnan_c128(m);
        } else if (wk == WK_U64) {
            uint64_t m = (uint64_t)(at == 0 ? b->i[0] : st->i);
            for (; k < n; k++) {
                if (ga_rm_takes_u64(m, (uint64_t)b->i[k], is_max)) {
                    m = (uint64_t)b->i[k];
                    at = k;
                }
            }
            st->i = (int64_t)m;
        } else {
            int64_t m = at == 0 ? b->i[0] : st->i;
            for (; k < n; k++) {
                if (ga_rm_takes_i64(m, b->i[k], is_max)) {
                    m = b->i[k];
                    at = k;
                }
            }
            st->i = m;
        }
        if (at >= 0) {
            st->idx = base + at;
        }
        st->has = 1;
        return;
    }
    }
}

/* Combine a later block's state into an earlier one (blocks in flat order). */
static void
merge_state(red_state *a, const red_state *b, int op, work_kind wk)
{
    work_buf one;
    switch (op) {
    case GA_RED_SUM:
        if (wk == WK_F64 || wk == WK_C128) {
            push_sum(a, total_sum(b));
        } else {
            a->i = ga_rm_sum_i64(a->i, b->i);
        }
        return;
    case GA_RED_PROD:
        if (wk == WK_F64) {
            a->f = ga_rm_mul_f64(a->f, b->f);
        } else if (wk == WK_C128) {
            a->c = ga_rm_mul_c128(a->c, b->c);
        } else {
            a->i = ga_rm_mul_i64(a->i, b->i);
        }
        return;
    case GA_RED_ALL:
    case GA_RED_ANY:
        a->i = ga_rm_bool_combine((int)a->i, (int)b->i, op);
        return;
    default:
        break;
    }
    if (!b->has) {
        return;
    }
    /* max/min/arg*: feed b's best value through fold_chunk as a one-element chunk */
    if (wk == WK_F64) {
        one.f[0] = b->nan ? NAN : b->f;
    } else if (wk == WK_C128) {
        one.c[0] = b->c;
    } else {
        one.i[0] = b->i;
    }
    fold_chunk(a, op, wk, &one, 1, b->idx);
}

static void
load_work(work_kind wk, int dt, const char *p, int64_t s, int64_t n, work_buf *b)
{
    switch (wk) {
    case WK_F64:
        ga_cv_load_f64(dt, p, s, n, b->f);
        break;
    case WK_I64:
    case WK_U64:
        ga_cv_load_i64(dt, p, s, n, b->i, wk == WK_U64);
        break;
    case WK_C128:
        ga_cv_load_c128(dt, p, s, n, b->c);
        break;
    case WK_B:
        ga_cv_load_nz(dt, p, s, n, b->b);
        break;
    }
}

/* The final state into output element p (ga_reduce_math.h's writers). */
static void
store_state(const ga_reduce_desc *r, work_kind wk, red_state *st, char *p)
{
    int op = r->op;
    int dt = r->out_dtype;
    if (op == GA_RED_ARGMAX || op == GA_RED_ARGMIN) {
        ga_rm_store_i64(p, dt, st->idx);
        return;
    }
    if (op == GA_RED_ALL || op == GA_RED_ANY) {
        ga_rm_store_i64(p, dt, st->i != 0);
        return;
    }
    if (op == GA_RED_SUM && (wk == WK_F64 || wk == WK_C128)) {
        cplx t = total_sum(st);
        st->f = t.re;
        st->c = t;
    }
    switch (wk) {
    case WK_F64:
        ga_rm_store_f64(
            p, dt, st->nan && (op == GA_RED_MAX || op == GA_RED_MIN) ? NAN : st->f);
        break;
    case WK_C128:
        ga_rm_store_c128(p, dt, st->c);
        break;
    case WK_U64:
        ga_rm_store_u64(p, dt, (uint64_t)st->i);
        break;
    default:
        ga_rm_store_i64(p, dt, st->i);
        break;
    }
}

/* Fold a contiguous run of n >= 1 elements into st, or return 0 when this (op, dtype)
 * has no SIMD chunk (the caller then takes the general path). */
static int
fast_run(red_state *st, int op, int dt, const char *p, int64_t n)
{
    if (op == GA_RED_SUM && dt == GA_FLOAT32) {
        cplx s = {ga_cpu_sum_f32(p, n, 0), 0.0};
        push_sum(st, s);
        return 1;
    }
    if (op == GA_RED_SUM && dt == GA_FLOAT64) {
        /* the general path's pairwise_sum, on the input itself rather than on a copy
         * of it converted to double (the same values: the same bits) */
        cplx s = {pairwise_sum((const double *)(const void *)p, n, 1), 0.0};
        push_sum(st, s);
        return 1;
    }
    if ((op == GA_RED_MAX || op == GA_RED_MIN) &&
        (dt == GA_FLOAT32 || dt == GA_FLOAT64)) {
        int is_max = op == GA_RED_MAX, nan = 0;
        double m = ga_cpu_minmax_run(dt, is_max, p, n, &nan);
        st->f = st->has ? ga_rm_ext_f64(st->f, m, is_max) : m;
        st->nan |= nan;
        st->has = 1;
        return 1;
    }
    return 0;
}

/* --- per-output traversal ----------------------------------------------------------
 */

/* Reduced axes after dropping length-1 axes and merging contiguous ones; the flat
 * index order (C order over the original reduced axes) is preserved. */
typedef struct {
    int nd;
    int64_t shape[GA_MAXDIMS];
    int64_t strides[GA_MAXDIMS];
} geom;

static void
coalesce(int nd, const int64_t *shape, const int64_t *strides, geom *g)
{
    g->nd = 0;
    for (int i = 0; i < nd; i++) {
        if (shape[i] == 1) {
            continue;
        }
        if (g->nd > 0 && g->strides[g->nd - 1] == strides[i] * shape[i]) {
            g->shape[g->nd - 1] *= shape[i];
            g->strides[g->nd - 1] = strides[i];
            continue;
        }
        g->shape[g->nd] = shape[i];
        g->strides[g->nd] = strides[i];
        g->nd++;
    }
}

/* Fold flat reduced indices [r0, r1) of the run starting at `base` into st. */
static void
reduce_range(const ga_reduce_desc *r, work_kind wk, const geom *g, const char *base,
             int64_t r0, int64_t r1, red_state *st)
{
    work_buf buf;
    if (g->nd == 0) { /* a single element */
        load_work(wk, r->in_dtype, base, 0, 1, &buf);
        fold_chunk(st, r->op, wk, &buf, 1, 0);
        return;
    }
    int nd = g->nd;
    int64_t inner = g->shape[nd - 1];
    int64_t istride = g->strides[nd - 1];
    int contig = wk == WK_F64 && istride == ga_dtype_itemsize((ga_dtype)r->in_dtype);
    int64_t idx[GA_MAXDIMS];
    int64_t rem = r0;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = rem % g->shape[d];
        rem /= g->shape[d];
    }
    int64_t pos = r0;
    while (pos < r1) {
        const char *p = base;
        for (int d = 0; d < nd; d++) {
            p += idx[d] * g->strides[d];
        }
        int64_t n = inner - idx[nd - 1];
        if (n > r1 - pos) {
            n = r1 - pos;
        }
        for (int64_t k = 0; k < n; k += CHUNK) {
            int64_t m = n - k < CHUNK ? n - k : CHUNK;
            if (contig && fast_run(st, r->op, r->in_dtype, p + k * istride, m)) {
                continue;
            }
            load_work(wk, r->in_dtype, p + k * istride, istride, m, &buf);
            fold_chunk(st, r->op, wk, &buf, m, pos + k);
        }
        pos += n;
        idx[nd - 1] += n;
        for (int d = nd - 1; d > 0 && idx[d] >= g->shape[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

static const char *
out_input_base(const ga_reduce_desc *r, int64_t o, char **outp)
{
    const char *in = r->in;
    char *out = r->out;
    for (int d = r->out_ndim - 1; d >= 0; d--) {
        int64_t k = o % r->out_shape[d];
        o /= r->out_shape[d];
        in += k * r->in_out_strides[d];
        out += k * r->out_strides[d];
    }
    *outp = out;
    return in;
}

typedef struct {
    const ga_reduce_desc *r;
    work_kind wk;
    const geom *g;
    red_state *parts;
    int64_t per; /* outputs per chunk */
} per_output_job;

/* one fixed block of a single-output reduction */
static void
block_chunk(void *arg, int64_t bi)
{
    const per_output_job *j = (const per_output_job *)arg;
    const ga_reduce_desc *r = j->r;
    int64_t r0 = bi * PAR_BLOCK;
    int64_t r1 = r0 + PAR_BLOCK < r->red_size ? r0 + PAR_BLOCK : r->red_size;
    state_init(&j->parts[bi], r->op, j->wk);
    reduce_range(r, j->wk, j->g, r->in, r0, r1, &j->parts[bi]);
}

/* a group of whole outputs */
static void
outputs_chunk(void *arg, int64_t c)
{
    const per_output_job *j = (const per_output_job *)arg;
    const ga_reduce_desc *r = j->r;
    int64_t o1 = (c + 1) * j->per < r->out_size ? (c + 1) * j->per : r->out_size;
    for (int64_t o = c * j->per; o < o1; o++) {
        char *outp;
        const char *base = out_input_base(r, o, &outp);
        red_state st;
        state_init(&st, r->op, j->wk);
        reduce_range(r, j->wk, j->g, base, 0, r->red_size, &st);
        store_state(r, j->wk, &st, outp);
    }
}

/* Short contiguous rows, few of them (a (128, 10) array's sum or max along its last
 * axis: a softmax's): outputs_chunk's work with its per-output index arithmetic taken
 * out of the loop. The same state_init, fast_run and store_state per output, so the
 * same bits; 1 when it ran, 0 when the shape is not one of these. */
static int
short_rows(const ga_reduce_desc *r, work_kind wk, const geom *g)
{
    int64_t isz = ga_dtype_itemsize((ga_dtype)r->in_dtype);
    if (wk != WK_F64 || g->nd != 1 || g->strides[0] != isz || r->red_size > CHUNK ||
        r->out_size * r->red_size >= PAR_MIN_WORK) {
        return 0;
    }
    geom oi, oo;
    coalesce(r->out_ndim, r->out_shape, r->in_out_strides, &oi);
    coalesce(r->out_ndim, r->out_shape, r->out_strides, &oo);
    if (oi.nd > 1 || oo.nd != oi.nd) {
        return 0;
    }
    int64_t is = oi.nd ? oi.strides[0] : 0, os = oo.nd ? oo.strides[0] : 0;
    red_state st;
    state_init(&st, r->op, wk);
    if (!fast_run(&st, r->op, r->in_dtype, r->in, r->red_size)) {
        return 0;
    }
    store_state(r, wk, &st, r->out);
    for (int64_t o = 1; o < r->out_size; o++) {
        state_init(&st, r->op, wk);
        fast_run(&st, r->op, r->in_dtype, r->in + o * is, r->red_size);
        store_state(r, wk, &st, r->out + o * os);
    }
    return 1;
}

static void
reduce_per_output(const ga_reduce_desc *r, work_kind wk)
{
    geom g;
    coalesce(r->red_ndim, r->red_shape, r->in_red_strides, &g);
    if (short_rows(r, wk, &g)) {
        return;
    }
    per_output_job job = {r, wk, &g, NULL, 1};
    if (r->out_size == 1 && r->red_size >= 2 * PAR_BLOCK) {
        /* one output: fixed blocks in parallel, merged in order */
        int64_t nblocks = (r->red_size + PAR_BLOCK - 1) / PAR_BLOCK;
        job.parts = (red_state *)malloc(sizeof(red_state) * (size_t)nblocks);
        if (job.parts != NULL) {
            ga_cpu_parallel_for(nblocks, block_chunk, &job);
            red_state st;
            state_init(&st, r->op, wk);
            for (int64_t bi = 0; bi < nblocks; bi++) {
                merge_state(&st, &job.parts[bi], r->op, wk);
            }
            free(job.parts);
            store_state(r, wk, &st, r->out);
            return;
        }
    }
    /* groups of outputs of about GA_CPU_CHUNK input elements each */
    int64_t work = r->out_size * r->red_size;
    if (work < PAR_MIN_WORK || r->out_size == 1) {
        outputs_chunk(&(per_output_job){r, wk, &g, NULL, r->out_size}, 0);
        return;
    }
    job.per = GA_CPU_CHUNK / r->red_size > 1 ? GA_CPU_CHUNK / r->red_size : 1;
    ga_cpu_parallel_for((r->out_size + job.per - 1) / job.per, outputs_chunk, &job);
}

/* --- a produced input (a fused program's result, ga_cpu_fused.c) -------------------
 * reduce_per_output for one output of a contiguous 1-d input, each CHUNK made by the
 * producer into a stack buffer just before reduce_range would have read it: the same
 * chunks, the same fast_run or load_work and fold_chunk, the same fixed blocks merged
 * in order, so the result is bitwise that of the input materialised first. A float32
 * sum of squares (squares_of) skips the chunk: fast_run's sum, squaring as it reads. */

typedef struct {
    const ga_reduce_desc *r;
    work_kind wk;
    ga_cpu_produce_fn produce;
    void *ctx;
    const char *squares_of;
    red_state *parts;
} produced_job;

static void
reduce_produced_range(const produced_job *j, int64_t r0, int64_t r1, red_state *st)
{
    const ga_reduce_desc *r = j->r;
    _Alignas(64) char vals[CHUNK * sizeof(cplx)];
    work_buf buf;
    int64_t isz = ga_dtype_itemsize((ga_dtype)r->in_dtype);
    /* reduce_range reads a single element (coalesced to no axes) without fast_run */
    int contig = j->wk == WK_F64 && r->red_size > 1;
    int squares = contig && j->squares_of != NULL && r->op == GA_RED_SUM &&
                  r->in_dtype == GA_FLOAT32;
    for (int64_t pos = r0; pos < r1; pos += CHUNK) {
        int64_t m = r1 - pos < CHUNK ? r1 - pos : CHUNK;
        if (squares) {
            cplx s = {ga_cpu_sum_f32(j->squares_of + 4 * pos, m, 1), 0.0};
            push_sum(st, s);
            continue;
        }
        j->produce(j->ctx, pos, m, vals);
        if (contig && fast_run(st, r->op, r->in_dtype, vals, m)) {
            continue;
        }
        load_work(j->wk, r->in_dtype, vals, isz, m, &buf);
        fold_chunk(st, r->op, j->wk, &buf, m, pos);
    }
}

static void
produced_block(void *arg, int64_t bi)
{
    const produced_job *j = (const produced_job *)arg;
    int64_t r0 = bi * PAR_BLOCK;
    int64_t r1 = r0 + PAR_BLOCK < j->r->red_size ? r0 + PAR_BLOCK : j->r->red_size;
    state_init(&j->parts[bi], j->r->op, j->wk);
    reduce_produced_range(j, r0, r1, &j->parts[bi]);
}

void
ga_cpu_reduce_produced(const ga_reduce_desc *r, ga_cpu_produce_fn produce, void *ctx,
                       const char *squares_of)
{
    produced_job j = {r,   work_kind_of(r->op, r->in_dtype, r->out_dtype),
                      produce, ctx, squares_of, NULL};
    red_state st;
    state_init(&st, r->op, j.wk);
    int64_t nblocks = (r->red_size + PAR_BLOCK - 1) / PAR_BLOCK;
    if (r->red_size >= 2 * PAR_BLOCK &&
        (j.parts = (red_state *)malloc(sizeof(red_state) * (size_t)nblocks)) != NULL) {
        ga_cpu_parallel_for(nblocks, produced_block, &j);
        for (int64_t bi = 0; bi < nblocks; bi++) {
            merge_state(&st, &j.parts[bi], r->op, j.wk);
        }
        free(j.parts);
    }
    else {
        reduce_produced_range(&j, 0, r->red_size, &st);
    }
    store_state(r, j.wk, &st, r->out);
}

/* --- row accumulation (kept axis has the small stride) -----------------------------
 */

/* Combine one row of working values into the accumulators, elementwise (the rows
 * before it are the earlier partial results). A NaN sticks in its max/min
 * accumulator (ga_rm_ext_f64), read back when storing. */
static void
combine_rows(int op, work_kind wk, work_buf *acc, const work_buf *row, int64_t n,
             int first)
{
    int64_t k;
    if (first) {
        memcpy(acc, row, sizeof(*acc));
        if (wk == WK_C128 && op == GA_RED_PROD) {
            /* from the identity, as NumPy and the GPU do: (1+0j) * (-inf+0.5j) has a
             * NaN imaginary part (0 * -inf), which the first row alone would not */
            for (k = 0; k < n; k++) {
                acc->c[k] = ga_rm_mul_c128(ga_rm_identity_c128(1), row->c[k]);
            }
        }
        return;
    }
    switch (op) {
    case GA_RED_SUM:
        if (wk == WK_F64) {
            for (k = 0; k < n; k++) {
                acc->f[k] = ga_rm_sum_f64(acc->f[k], row->f[k]);
            }
        } else if (wk == WK_C128) {
            for (k = 0; k < n; k++) {
                acc->c[k] = ga_rm_sum_c128(acc->c[k], row->c[k]);
            }
        } else {
            for (k = 0; k < n; k++) {
                acc->i[k] = ga_rm_sum_i64(acc->i[k], row->i[k]);
            }
        }
        break;
    case GA_RED_PROD:
        if (wk == WK_F64) {
            for (k = 0; k < n; k++) {
                acc->f[k] = ga_rm_mul_f64(acc->f[k], row->f[k]);
            }
        } else if (wk == WK_C128) {
            for (k = 0; k < n; k++) {
                acc->c[k] = ga_rm_mul_c128(acc->c[k], row->c[k]);
            }
        } else {
            for (k = 0; k < n; k++) {
                acc->i[k] = ga_rm_mul_i64(acc->i[k], row->i[k]);
            }
        }
        break;
    case GA_RED_ALL:
    case GA_RED_ANY:
        for (k = 0; k < n; k++) {
            acc->b[k] = (uint8_t)ga_rm_bool_combine(acc->b[k], row->b[k], op);
        }
        break;
    case GA_RED_MAX:
    case GA_RED_MIN: {
        int mx = op == GA_RED_MAX;
        if (wk == WK_F64) {
            for (k = 0; k < n; k++) {
                acc->f[k] = ga_rm_ext_f64(acc->f[k], row->f[k], mx);
            }
        } else if (wk == WK_U64) {
            for (k = 0; k < n; k++) {
                acc->i[k] = (int64_t)ga_rm_ext_u64((uint64_t)acc->i[k],
                                                   (uint64_t)row->i[k], mx);
            }
        } else {
            for (k = 0; k < n; k++) {
                acc->i[k] = ga_rm_ext_i64(acc->i[k], row->i[k], mx);
            }
        }
        break;
    }
    default:
        break;
    }
}

static int
rows_supported(int op, work_kind wk)
{
    if (op == GA_RED_ARGMAX || op == GA_RED_ARGMIN) {
        return 0;
    }
    if ((op == GA_RED_MAX || op == GA_RED_MIN) && wk == WK_C128) {
        return 0;
    }
    return 1;
}

/* Rows of a float32/float64 input straight into the double accumulators (sum, max,
 * min), one pass instead of convert-then-combine, with ga_reduce_math.h's combines. A
 * NaN sticks in its accumulator, read back when storing. Four rows are combined per
 * pass over the accumulators, in row order (the same operations, in the same order,
 * as one row at a time): the accumulators are loaded and stored a quarter as often,
 * which was the bound (x.sum(axis=0) of a (1000, 1000) float32 array took 2.2x
 * NumPy's time, whose float32 accumulators are half as wide). */
#define GA_ROWS_LOAD(T, W, q, k, v)                                                    \
    T v##_t;                                                                           \
    memcpy(&v##_t, (q) + sizeof(T) * (k), sizeof(T));                                 \
    W v = (W)v##_t
#define GA_ROWS_PASS(T, W, COMBINE)                                                    \
    for (; r + 4 <= nrows; r += 4) {                                                   \
        const char *q0 = p + r * rstride, *q1 = q0 + rstride, *q2 = q1 + rstride,      \
                   *q3 = q2 + rstride;                                                 \
        for (int64_t k = 0; k < n; k++) {                                              \
            GA_ROWS_LOAD(T, W, q0, k, v0);                                             \
            GA_ROWS_LOAD(T, W, q1, k, v1);                                             \
            GA_ROWS_LOAD(T, W, q2, k, v2);                                             \
            GA_ROWS_LOAD(T, W, q3, k, v3);                                             \
            acc[k] = COMBINE(COMBINE(COMBINE(COMBINE(acc[k], v0), v1), v2), v3);       \
        }                                                                              \
    }                                                                                  \
    for (; r < nrows; r++) {                                                           \
        const char *q = p + r * rstride;                                               \
        for (int64_t k = 0; k < n; k++) {                                              \
            GA_ROWS_LOAD(T, W, q, k, v);                                               \
            acc[k] = COMBINE(acc[k], v);                                               \
        }                                                                              \
    }
#define GA_ROWS_SUM(a, b) ga_rm_sum_f64(a, b)
/* Max and min down the rows: ga_rm_ext_f64 without its (a == a) term, which keeps the
 * first NaN's bits: here any NaN stays a NaN (a NaN b never takes over from, and a NaN
 * a is replaced by a NaN b only), and the store writes NAN for every NaN. GCC turns
 * this form into vector compares and blends; the three-term form stayed scalar (4-8x
 * NumPy's time for x.max(axis=0)). Two selects, each on one double comparison: vector
 * compares and blends with no mask conversions in between (an int `|` of the two tests
 * made GCC narrow and widen the masks, 4.5x NumPy's time). */
static inline double
rows_max(double a, double b)
{
    double t = b > a ? b : a;
    return b != b ? b : t;
}

static inline double
rows_min(double a, double b)
{
    double t = b < a ? b : a;
    return b != b ? b : t;
}
#define GA_X_ROWS(name, T)                                                             \
    GA_SIMD_CLONES static void name(int op, double *restrict acc,                      \
                                    const char *restrict p, int64_t n, int64_t nrows,  \
                                    int64_t rstride, int first)                        \
    {                                                                                  \
        int64_t r = 0;                                                                 \
        if (first) {                                                                   \
            for (int64_t k = 0; k < n; k++) {                                          \
                GA_ROWS_LOAD(T, double, p, k, v);                                      \
                acc[k] = v;                                                            \
            }                                                                          \
            r = 1;                                                                     \
        }                                                                              \
        if (op == GA_RED_SUM) {                                                        \
            GA_ROWS_PASS(T, double, GA_ROWS_SUM)                                       \
        }                                                                              \
        else if (op == GA_RED_MAX) {                                                   \
            GA_ROWS_PASS(T, double, rows_max)                                       \
        }                                                                              \
        else {                                                                         \
            GA_ROWS_PASS(T, double, rows_min)                                       \
        }                                                                              \
    }
GA_X_ROWS(rows_f32, float)
GA_X_ROWS(rows_f64, double)
#undef GA_X_ROWS

/* float32 max/min down the rows in float32: exact (the result is one of the inputs),
 * with twice the lanes of the double accumulators and no conversion per element
 * (2.3x NumPy's time for x.max(axis=0) of a (1000, 1000) float32 array in double);
 * rows_task converts the accumulators to double for the store */
static inline float
rows_maxf(float a, float b)
{
    float t = b > a ? b : a;
    return b != b ? b : t;
}

static inline float
rows_minf(float a, float b)
{
    float t = b < a ? b : a;
    return b != b ? b : t;
}

GA_SIMD_CLONES static void
rows_f32_ext(int op, float *restrict acc, const char *restrict p, int64_t n,
             int64_t nrows, int64_t rstride, int first)
{
    int64_t r = 0;
    if (first) {
        memcpy(acc, p, sizeof(float) * (size_t)n);
        r = 1;
    }
    if (op == GA_RED_MAX) {
        GA_ROWS_PASS(float, float, rows_maxf)
    }
    else {
        GA_ROWS_PASS(float, float, rows_minf)
    }
}
#undef GA_ROWS_SUM
#undef GA_ROWS_PASS
#undef GA_ROWS_LOAD

typedef struct {
    const ga_reduce_desc *r;
    work_kind wk;
    const geom *og;
    geom rg;
    int64_t width;  /* kept elements per task along the innermost kept axis */
    int64_t ntiles; /* tasks per outer index */
    int fast;       /* rows_f32 / rows_f64 apply */
} rows_job;

static void
rows_task(void *arg, int64_t t)
{
    const rows_job *j = (const rows_job *)arg;
    const ga_reduce_desc *r = j->r;
    const geom *og = j->og;
    const geom *rg = &j->rg;
    work_kind wk = j->wk;
    int ond = og->nd;
    int64_t inner = og->shape[ond - 1];
    work_buf acc, row;
    /* float32 max/min accumulate in float32, in `row` (unused on the fast path) */
    int f32_ext = j->fast && r->in_dtype == GA_FLOAT32 && r->op != GA_RED_SUM;
    float *facc = (float *)(void *)row.f;
    int64_t oi = t / j->ntiles;
    int64_t j0 = (t % j->ntiles) * j->width;
    int64_t n = inner - j0 < j->width ? inner - j0 : j->width;
    /* input address of output (oi, j0) over the coalesced kept axes */
    const char *base = r->in;
    int64_t rem = oi;
    for (int d = ond - 2; d >= 0; d--) {
        base += (rem % og->shape[d]) * og->strides[d];
        rem /= og->shape[d];
    }
    base += j0 * og->strides[ond - 1];
    /* walk every reduced position; the fast kernels take a whole run of the last
     * reduced axis per call */
    int64_t idx[GA_MAXDIMS] = {0};
    int64_t run = j->fast && rg->nd > 0 ? rg->shape[rg->nd - 1] : 1;
    int last = rg->nd - 1;
    for (int64_t pos = 0; pos < r->red_size; pos += run) {
        const char *p = base;
        for (int d = 0; d < rg->nd; d++) {
            p += idx[d] * rg->strides[d];
        }
        if (j->fast && f32_ext) {
            rows_f32_ext(r->op, facc, p, n, run, rg->nd > 0 ? rg->strides[last] : 0,
                         pos == 0);
            if (rg->nd > 0) {
                idx[last] = run - 1;
            }
        } else if (j->fast) {
            (r->in_dtype == GA_FLOAT32 ? rows_f32 : rows_f64)(
                r->op, acc.f, p, n, run, rg->nd > 0 ? rg->strides[last] : 0, pos == 0);
            if (rg->nd > 0) {
                idx[last] = run - 1; /* the odometer below moves past the run */
            }
        } else {
            load_work(wk, r->in_dtype, p, og->strides[ond - 1], n, &row);
            combine_rows(r->op, wk, &acc, &row, n, pos == 0);
        }
        for (int d = rg->nd - 1; d >= 0; d--) {
            if (++idx[d] < rg->shape[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
    if (f32_ext) {
        for (int64_t k = 0; k < n; k++) {
            acc.f[k] = (double)facc[k];
        }
    }
    /* store: flat output index of (oi, j0 + k) in C order over the kept axes, walked
     * with an odometer from the first one (a division per axis and output, and a
     * full state per output, made this store cost 70% of x.sum(axis=0) of a
     * (32, 4096) float32 array: 11x NumPy's time) */
    int64_t oidx[GA_MAXDIMS];
    char *outp = r->out;
    {
        int64_t o = oi * inner + j0;
        for (int d = r->out_ndim - 1; d >= 0; d--) {
            oidx[d] = o % r->out_shape[d];
            o /= r->out_shape[d];
            outp += oidx[d] * r->out_strides[d];
        }
    }
    int plain = wk == WK_F64 && (r->op == GA_RED_SUM || r->op == GA_RED_MAX ||
                                 r->op == GA_RED_MIN);
    int olast = r->out_ndim - 1;
    if (plain && (r->out_dtype == GA_FLOAT32 || r->out_dtype == GA_FLOAT64) &&
        oidx[olast] + n <= r->out_shape[olast]) {
        /* the common case, every output along the last axis: the same values as the
         * loop below, stored without a dtype switch per element (it vectorises) */
        int64_t os = r->out_strides[olast];
        int sum = r->op == GA_RED_SUM;
        for (int64_t k = 0; k < n; k++) {
            double v = acc.f[k];
            acc.f[k] = sum ? ga_rm_sum_f64(ga_rm_identity_f64(0), v)
                           : (ga_rm_isnan_f64(v) ? NAN : v);
        }
        if (r->out_dtype == GA_FLOAT32) {
            for (int64_t k = 0; k < n; k++) {
                float f = (float)acc.f[k];
                memcpy(outp + k * os, &f, sizeof(f));
            }
        }
        else {
            for (int64_t k = 0; k < n; k++) {
                memcpy(outp + k * os, &acc.f[k], sizeof(double));
            }
        }
        return;
    }
    for (int64_t k = 0; k < n; k++) {
        if (k > 0) {
            for (int d = r->out_ndim - 1; d >= 0; d--) {
                outp += r->out_strides[d];
                if (++oidx[d] < r->out_shape[d]) {
                    break;
                }
                outp -= oidx[d] * r->out_strides[d];
                oidx[d] = 0;
            }
        }
        if (plain) {
            /* what the state below stores, without it: a sum is one pushed level,
             * added to the identity (total_sum); max/min store NaN when one stuck */
            double v = acc.f[k];
            if (r->op == GA_RED_SUM) {
                v = ga_rm_sum_f64(ga_rm_identity_f64(0), v);
            }
            else if (ga_rm_isnan_f64(v)) {
                v = NAN;
            }
            ga_rm_store_f64(outp, r->out_dtype, v);
            continue;
        }
        red_state st;
        state_init(&st, r->op, wk);
        st.has = 1;
        switch (wk) {
        case WK_F64:
            st.f = acc.f[k];
            st.nan = ga_rm_isnan_f64(acc.f[k]);
            if (r->op == GA_RED_SUM) {
                cplx s = {acc.f[k], 0.0};
                push_sum(&st, s);
            }
            break;
        case WK_C128:
            st.c = acc.c[k];
            if (r->op == GA_RED_SUM) {
                push_sum(&st, acc.c[k]);
            }
            break;
        case WK_B:
            st.i = acc.b[k];
            break;
        default:
            st.i = acc.i[k];
            break;
        }
        store_state(r, wk, &st, outp);
    }
}

static void
reduce_rows(const ga_reduce_desc *r, work_kind wk, const geom *og)
{
    /* og: the kept axes (coalesced); the innermost one is cut into tiles of `width`
     * (at most CHUNK) kept elements, each task accumulating all reduced rows of one
     * tile. Narrower tiles only when there would be fewer tasks than threads: each
     * tile is a pass over the input reading a part of every row, and four passes
     * of 256 columns on one thread took 3.5x NumPy's one pass over a (10000, 1000)
     * float32 matrix. */
    rows_job j;
    j.r = r;
    j.wk = wk;
    j.og = og;
    coalesce(r->red_ndim, r->red_shape, r->in_red_strides, &j.rg);
    int ond = og->nd;
    int64_t inner = og->shape[ond - 1];
    int64_t outer = r->out_size / inner;
    int64_t work = r->out_size * r->red_size;
    j.width = CHUNK;
    int64_t threads = work >= PAR_MIN_WORK ? ga_cpu_num_threads() : 1;
    while (j.width > 256 && outer * ((inner + j.width - 1) / j.width) < threads) {
        j.width /= 2;
    }
    j.ntiles = (inner + j.width - 1) / j.width;
    int64_t isz = ga_dtype_itemsize((ga_dtype)r->in_dtype);
    j.fast = wk == WK_F64 && (r->in_dtype == GA_FLOAT32 || r->in_dtype == GA_FLOAT64) &&
             og->strides[ond - 1] == isz &&
             (r->op == GA_RED_SUM || r->op == GA_RED_MAX || r->op == GA_RED_MIN);
    int64_t ntasks = outer * j.ntiles;
    if (work < PAR_MIN_WORK) {
        for (int64_t t = 0; t < ntasks; t++) {
            rows_task(&j, t);
        }
        return;
    }
    ga_cpu_parallel_for(ntasks, rows_task, &j);
}

int
ga_cpu_reduce(int dev, const ga_reduce_desc *r)
{
    (void)dev;
    if (r->out_size <= 0 || r->red_size <= 0) {
        return GA_OK;
    }
    work_kind wk = work_kind_of(r->op, r->in_dtype, r->out_dtype);
    /* Row accumulation pays when the kept axes are walked with a smaller stride than
     * the reduced ones, and the kept axes coalesce in the same C order as the output
     * (the flat output index then maps back through out_input_base). */
    geom og, rg;
    coalesce(r->out_ndim, r->out_shape, r->in_out_strides, &og);
    coalesce(r->red_ndim, r->red_shape, r->in_red_strides, &rg);
    if (og.nd >= 1 && rg.nd >= 1 && rows_supported(r->op, wk) && r->red_size > 1) {
        int64_t os = llabs(og.strides[og.nd - 1]);
        int64_t rs = llabs(rg.strides[rg.nd - 1]);
        if (os < rs && og.shape[og.nd - 1] >= 4) {
            reduce_rows(r, wk, &og);
            return GA_OK;
        }
    }
    reduce_per_output(r, wk);
    return GA_OK;
}

/* --- scans --------------------------------------------------------------------------
 */

/* One scan job: rows are independent, so each pool chunk scans a run of rows. */
typedef struct {
    const ga_scan_desc *s;
    int64_t rows, len, rows_per_chunk, is, os;
    work_kind wk;
    ga_kind k;
    int prod;
} scan_job;

static void
scan_rows_chunk(void *ctx, int64_t chunk)
{
    const scan_job *J = ctx;
    const ga_scan_desc *s = J->s;
    int nd = s->ndim;
    int64_t len = J->len, is = J->is, os = J->os;
    work_kind wk = J->wk;
    ga_kind k = J->k;
    int prod = J->prod;
    int64_t first = chunk * J->rows_per_chunk;
    int64_t last =
        first + J->rows_per_chunk < J->rows ? first + J->rows_per_chunk : J->rows;
    for (int64_t row = first; row < last; row++) {
        const char *ip = s->in;
        char *op = s->out;
        int64_t rem = row;
        for (int d = nd - 2; d >= 0; d--) {
            int64_t i = rem % s->shape[d];
            rem /= s->shape[d];
            ip += i * s->in_strides[d];
            op += i * s->out_strides[d];
        }
        work_buf b;
        int odt = s->out_dtype;
        double f = ga_rm_identity_f64(prod);
        int64_t u = ga_rm_identity_i64(prod);
        cplx c = ga_rm_identity_c128(prod);
        for (int64_t j = 0; j < len; j += CHUNK) {
            int64_t n = len - j < CHUNK ? len - j : CHUNK;
            load_work(wk, s->in_dtype, ip + j * is, is, n, &b);
            /* each partial result into the working buffer, in place (the row's
             * first element is its own: ga_rm_scan_step) */
            switch (wk) {
            case WK_F64:
                for (int64_t t = 0; t < n; t++) {
                    b.f[t] = f = ga_rm_scan_step_f64(f, b.f[t], prod, j + t == 0);
                }
                break;
            case WK_C128:
                for (int64_t t = 0; t < n; t++) {
                    b.c[t] = c = ga_rm_scan_step_c128(c, b.c[t], prod, j + t == 0);
                }
                break;
            default:
                for (int64_t t = 0; t < n; t++) {
                    b.i[t] = u = ga_rm_scan_step_i64(u, b.i[t], prod, j + t == 0);
                }
                break;
            }
            char *dst = op + j * os;
            switch (wk) {
            case WK_F64:
                ga_cv_store_f64(odt, dst, os, n, b.f);
                break;
            case WK_C128:
                ga_cv_store_c128(odt, dst, os, n, b.c);
                break;
            default:
                ga_cv_store_i64(odt, dst, os, n, b.i, k == GA_KIND_UINT);
                break;
            }
        }
    }
}

int
ga_cpu_scan(int dev, const ga_scan_desc *s)
{
    (void)dev;
    int nd = s->ndim;
    int64_t len = s->shape[nd - 1];
    int64_t rows = 1;
    for (int d = 0; d < nd - 1; d++) {
        rows *= s->shape[d];
    }
    if (len == 0 || rows == 0) {
        return GA_OK;
    }
    ga_kind k = ga_dtype_kind((ga_dtype)s->out_dtype);
    scan_job job = {
        .s = s,
        .rows = rows,
        .len = len,
        .is = s->in_strides[nd - 1],
        .os = s->out_strides[nd - 1],
        .k = k,
        .prod = s->op == GA_SCAN_CUMPROD,
        /* uint64 accumulates in WK_U64 so a float input takes the uint64 side of
         * the float -> int rule (uint64's side), as on a GPU; floating
         * scans accumulate in double, rounded once when stored, as on a GPU */
        .wk = k == GA_KIND_FLOAT     ? WK_F64
              : k == GA_KIND_COMPLEX ? WK_C128
              : k == GA_KIND_UINT    ? WK_U64
                                     : WK_I64,
    };
    /* rows of about PAR_MIN_WORK / 4 elements per chunk; small scans stay serial */
    int64_t per = (PAR_MIN_WORK / 4) / len;
    job.rows_per_chunk = per < 1 ? 1 : per;
    if (rows * len < PAR_MIN_WORK || rows == 1) {
        job.rows_per_chunk = rows;
    }
    ga_cpu_parallel_for((rows + job.rows_per_chunk - 1) / job.rows_per_chunk,
                        scan_rows_chunk, &job);
    return GA_OK;
}
