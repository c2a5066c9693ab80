/* ga_cpu_random.c: random numbers (ga_philox.h) and ranges on the CPU.
 * Both kernels write element i from i alone (random numbers: from its Philox draw), so
 * splitting the range between threads cannot change a single bit of the result. */
#include <string.h>

#include "ga_cpu.h"
#include "ga_cpu_loop.h"
#include "ga_error.h"
#include "ga_elementwise_math.h"
#include "ga_philox.h"

/* Below this many draws waking the pool costs more than it saves; above, chunks of
 * this many draws (up to 4 elements each) go to the pool. */
#define GA_RANDOM_PARALLEL_MIN 8192

typedef struct {
    const ga_random_desc *r;
    int64_t size;  /* bytes per element */
    int64_t draws; /* Philox evaluations of the request */
} random_job;

/* A draw at a time, as a GPU thread does: one Philox evaluation for its 4 / q elements
 * (ga_philox.h), the ones inside the request copied out. */
static void
random_chunk(void *ctx, int64_t chunk)
{
    const random_job *J = ctx;
    const ga_random_desc *r = J->r;
    const int per = ga_random_per_draw(r);
    int64_t first = chunk * GA_RANDOM_PARALLEL_MIN;
    int64_t last = first + GA_RANDOM_PARALLEL_MIN < J->draws
                       ? first + GA_RANDOM_PARALLEL_MIN
                       : J->draws;
    char buf[16];
    for (int64_t g = first; g < last; g++) {
        int64_t e0 = ga_random_draw(r, r->dist, r->dtype, g, buf);
        for (int k = 0; k < per; k++) {
            if (e0 + k >= 0 && e0 + k < r->n) {
                memcpy(r->out + (e0 + k) * J->size, buf + k * J->size, (size_t)J->size);
            }
        }
    }
}

int
ga_cpu_random(int dev, const ga_random_desc *r)
{
    (void)dev;
    if (!ga_random_dtype_ok(r->dist, r->dtype)) {
        return ga_error(GA_ERR_TYPE,
                        "random: unsupported dtype %s for this distribution",
                        ga_dtype_infos[r->dtype].name);
    }
    /* the generator's state read now (ga_backend.h): a host backend's memory is the
     * host's */
    ga_random_desc now;
    if (r->state != NULL) {
        now = *r;
        now.seed = r->state[0];
        now.counter += r->state[1];
        now.state = NULL;
        r = &now;
    }
    random_job job = {r, ga_dtype_itemsize((ga_dtype)r->dtype), ga_random_draws(r)};
    ga_cpu_parallel_for((job.draws + GA_RANDOM_PARALLEL_MIN - 1) /
                            GA_RANDOM_PARALLEL_MIN,
                        random_chunk, &job);
    return GA_OK;
}

/* out[i] = start + i * step, written by ga_elementwise_math.h's writers as k_arange
 * writes it on a GPU: integers exact in 64 bits and wrapping like a cast, the other
 * kinds in double (bool: nonzero; complex: a zero imaginary part). One case per dtype
 * from GA_DTYPES; the kind column picks the arithmetic. */
#define ARANGE_GA_KIND_INT(name, o, i)                                                 \
    ga_w_u_##name(o, (uint64_t)d->istart + (uint64_t)(i) * (uint64_t)d->istep)
#define ARANGE_GA_KIND_UINT(name, o, i) ARANGE_GA_KIND_INT(name, o, i)
#define ARANGE_GA_KIND_BOOL(name, o, i) ga_w_d_##name(o, d->start + (double)(i)*d->step)
#define ARANGE_GA_KIND_FLOAT(name, o, i) ARANGE_GA_KIND_BOOL(name, o, i)
#define ARANGE_GA_KIND_COMPLEX(name, o, i) ARANGE_GA_KIND_BOOL(name, o, i)
#define ARANGE_CASE(e, name, kind, size, ch, ctype)                                    \
    case e:                                                                            \
        for (int64_t i = 0; i < d->n; i++) {                                           \
            ARANGE_##kind(name, d->out + i * size, i);                                 \
        }                                                                              \
        return GA_OK;

int
ga_cpu_arange(int dev, const ga_arange_desc *d)
{
    (void)dev;
    switch (d->dtype) {
        GA_DTYPES(ARANGE_CASE)
    }
    return ga_error(GA_ERR_TYPE, "arange: unknown dtype %d", d->dtype);
}
