/* ga_cpu_index.c: gather, scatter and nonzero on the CPU (contracts in ga_backend.h).
 *
 * Gather and scatter walk the descriptor's loop with the shared odometer: per element
 * they read the index values, wrap negatives once, check the range, and move one
 * element with memcpy (the element size is all that matters, so one kernel serves
 * every dtype). Gather splits the loop between threads; scatter stays sequential so
 * that repeated indices keep NumPy's "last assignment wins".
 */
#include <string.h>

#include "ga_cpu.h"
#include "ga_cpu_loop.h"
#include "ga_error.h"

#ifdef GA_HAVE_OPENMP
#include <omp.h>
#endif

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
        }
        else {
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

int
ga_cpu_gather(int dev, const ga_index_desc *d)
{
    (void)dev;
    GA_TRY(check_desc(d));
    index_ctx base = {d, d->loop.nargs - 2,
                      (size_t)ga_dtype_itemsize((ga_dtype)d->loop.args[1].dtype), 0, 0, 0, 0};
    int64_t size = d->loop.size;
#ifdef GA_HAVE_OPENMP
    /* Memory bound: worth threads only when there is a lot to move. */
    if (size >= (1 << 16)) {
        int nt = omp_get_max_threads();
        if (nt > ga_cpu_thread_share()) {
            nt = ga_cpu_thread_share(); /* a simulated GPU's share of the cores */
        }
        index_ctx ctx[64];
        if (nt > 64) {
            nt = 64;
        }
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int t = 0; t < nt; t++) {
            ctx[t] = base;
            ga_cpu_run_loop_range(&d->loop, index_inner, &ctx[t], size * t / nt,
                                  size * (t + 1) / nt);
        }
        for (int t = 0; t < nt; t++) {
            if (ctx[t].failed) {
                return index_error(&ctx[t]);
            }
        }
        return GA_OK;
    }
#endif
    ga_cpu_run_loop(&d->loop, index_inner, &base);
    return base.failed ? index_error(&base) : GA_OK;
}

int
ga_cpu_scatter(int dev, const ga_index_desc *d)
{
    (void)dev;
    GA_TRY(check_desc(d));
    index_ctx c = {d, d->loop.nargs - 2,
                   (size_t)ga_dtype_itemsize((ga_dtype)d->loop.args[1].dtype), 1, 0, 0, 0};
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
                return ga_error(GA_ERR_RUNTIME, "internal: nonzero found more than the %lld "
                                "true elements counted", (long long)count);
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
        return ga_error(GA_ERR_RUNTIME, "internal: nonzero found %lld true elements, %lld "
                        "were counted", (long long)found, (long long)count);
    }
    return GA_OK;
}
