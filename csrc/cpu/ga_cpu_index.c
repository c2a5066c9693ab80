/* ga_cpu_index.c: gather, scatter and nonzero on the CPU (contracts in ga_backend.h).
 *
 * Gather and scatter walk the descriptor's loop with the shared odometer: per element
 * they read the index values, wrap negatives once, check the range, and move one
 * element with memcpy (the element size is all that matters, so one kernel serves
 * every dtype). Gather splits the loop between threads; scatter stays sequential so
 * that repeated indices keep NumPy's "last assignment wins".
 */
#include <stdlib.h>
#include <string.h>

#include "ga_cpu.h"
#include "ga_cpu_loop.h"
#include "ga_error.h"

typedef struct {
    const ga_index_desc *d;
    int nidx;
    size_t itemsize;
    int scatter;
    /* the first bad index found (per thread context) */
    int failed;
    int64_t bad_value, bad_dim;
} index_ctx;

static void
index_inner(char **p, const int64_t *s, int64_t n, void *vctx)
{
    index_ctx *c = (index_ctx *)vctx;
    if (c->failed) {
        return;
    }
    const ga_index_desc *d = c->d;
    for (int64_t i = 0; i < n; i++) {
        char *addr = p[1] + i * s[1];
        for (int j = 0; j < c->nidx; j++) {
            int64_t v = *(const int64_t *)(p[2 + j] + i * s[2 + j]);
            int64_t dim = d->index_dims[j];
            if (v < 0) {
                v += dim;
            }
            if (v < 0 || v >= dim) {
                c->failed = 1;
                c->bad_value = *(const int64_t *)(p[2 + j] + i * s[2 + j]);
                c->bad_dim = dim;
                return;
            }
            addr += v * d->index_strides[j];
        }
        if (c->scatter) {
            memcpy(addr, p[0] + i * s[0], c->itemsize);
        } else {
            memcpy(p[0] + i * s[0], addr, c->itemsize);
        }
    }
}

static int
index_error(const index_ctx *c)
{
    return ga_error(GA_ERR_INDEX, "index %lld is out of bounds for axis with size %lld",
                    (long long)c->bad_value, (long long)c->bad_dim);
}

static int
check_desc(const ga_index_desc *d)
{
    if (d->loop.nargs < 3 || d->loop.nargs > GA_MAXARGS) {
        return ga_error(GA_ERR_RUNTIME, "internal: index descriptor with %d operands",
                        d->loop.nargs);
    }
    return GA_OK;
}

/* elements per chunk of a parallel gather */
#define GATHER_CHUNK (1 << 14)

typedef struct {
    const ga_index_desc *d;
    index_ctx base;
    int64_t size;
    index_ctx *ctx; /* one per chunk */
} gather_job;

static void
gather_chunk(void *arg, int64_t chunk)
{
    gather_job *J = arg;
    index_ctx *c = &J->ctx[chunk];
    *c = J->base;
    int64_t start = chunk * GATHER_CHUNK;
    int64_t stop = start + GATHER_CHUNK < J->size ? start + GATHER_CHUNK : J->size;
    ga_cpu_run_loop_range(&J->d->loop, index_inner, c, start, stop);
}

int
ga_cpu_gather(int dev, const ga_index_desc *d)
{
    (void)dev;
    GA_TRY(check_desc(d));
    index_ctx base = {d,
                      d->loop.nargs - 2,
                      (size_t)ga_dtype_itemsize((ga_dtype)d->loop.args[1].dtype),
                      0,
                      0,
                      0,
                      0};
    int64_t size = d->loop.size;
    /* Memory bound: worth threads only when there is a lot to move. Each chunk keeps
     * its own context (the first failure it meets); the first failing chunk wins. */
    if (size >= GATHER_CHUNK * 4) {
        int64_t nchunks = (size + GATHER_CHUNK - 1) / GATHER_CHUNK;
        gather_job job = {.d = d,
                          .base = base,
                          .size = size,
                          .ctx = calloc((size_t)nchunks, sizeof(index_ctx))};
        if (job.ctx == NULL) {
            return ga_error(GA_ERR_NOMEM, "indexing: out of memory");
        }
        ga_cpu_parallel_for(nchunks, gather_chunk, &job);
        int st = GA_OK;
        for (int64_t c = 0; c < nchunks; c++) {
            if (job.ctx[c].failed) {
                st = index_error(&job.ctx[c]);
                break;
            }
        }
        free(job.ctx);
        return st;
    }
    ga_cpu_run_loop(&d->loop, index_inner, &base);
    return base.failed ? index_error(&base) : GA_OK;
}

int
ga_cpu_scatter(int dev, const ga_index_desc *d)
{
    (void)dev;
    GA_TRY(check_desc(d));
    index_ctx c = {d,
                   d->loop.nargs - 2,
                   (size_t)ga_dtype_itemsize((ga_dtype)d->loop.args[1].dtype),
                   1,
                   0,
                   0,
                   0};
    /* Check every index before writing anything, so a bad index leaves x as it was. */
    ga_index_desc probe = *d;
    index_ctx pc = c;
    pc.scatter = 0;
    char scratch[16];
    probe.loop.args[0].is_scalar = 0;
    probe.loop.args[0].data = scratch;
    memset(probe.loop.args[0].strides, 0, sizeof(probe.loop.args[0].strides));
    pc.d = &probe;
    ga_cpu_run_loop(&probe.loop, index_inner, &pc);
    if (pc.failed) {
        return index_error(&pc);
    }
    ga_cpu_run_loop(&d->loop, index_inner, &c);
    return c.failed ? index_error(&c) : GA_OK;
}

int
ga_cpu_nonzero(int dev, const ga_loop *mask, int64_t count, int64_t *out)
{
    (void)dev;
    int nd = mask->ndim;
    const ga_operand *m = &mask->args[0];
    int64_t idx[GA_MAXDIMS] = {0};
    int64_t found = 0;
    for (int64_t e = 0; e < mask->size; e++) {
        const char *p = m->data;
        for (int k = 0; k < nd; k++) {
            p += idx[k] * m->strides[k];
        }
        if (*(const uint8_t *)p) {
            if (found >= count) {
                return ga_error(GA_ERR_RUNTIME,
                                "internal: nonzero found more than the %lld "
                                "true elements counted",
                                (long long)count);
            }
            memcpy(out + found * nd, idx, sizeof(int64_t) * (size_t)nd);
            found++;
        }
        for (int k = nd - 1; k >= 0; k--) {
            if (++idx[k] < mask->shape[k]) {
                break;
            }
            idx[k] = 0;
        }
    }
    if (found != count) {
        return ga_error(GA_ERR_RUNTIME,
                        "internal: nonzero found %lld true elements, %lld "
                        "were counted",
                        (long long)found, (long long)count);
    }
    return GA_OK;
}
