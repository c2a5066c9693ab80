/* ga_cpu_random.c: random numbers (ga_philox.h) and ranges on the CPU.
 * Both kernels write element i from i alone, so splitting the index range between
 * threads cannot change a single bit of the result. */
#include <string.h>

#include "ga_cpu.h"
#include "ga_cpu_loop.h"
#include "ga_error.h"
#include "ga_half.h"
#include "ga_philox.h"

/* Below this many elements waking the pool costs more than it saves; above, chunks of
 * this many elements go to the pool. */
#define GA_RANDOM_PARALLEL_MIN 32768

typedef struct {
    const ga_random_desc *r;
    int64_t size; /* bytes per element */
} random_job;

static void
random_chunk(void *ctx, int64_t chunk)
{
    const random_job *J = ctx;
    int64_t first = chunk * GA_RANDOM_PARALLEL_MIN;
    int64_t last = first + GA_RANDOM_PARALLEL_MIN < J->r->n
                       ? first + GA_RANDOM_PARALLEL_MIN
                       : J->r->n;
    for (int64_t i = first; i < last; i++) {
        ga_random_element(J->r, i, J->r->out + i * J->size);
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
    random_job job = {r, ga_dtype_itemsize((ga_dtype)r->dtype)};
    ga_cpu_parallel_for((r->n + GA_RANDOM_PARALLEL_MIN - 1) / GA_RANDOM_PARALLEL_MIN,
                        random_chunk, &job);
    return GA_OK;
}

#define ARANGE_INT(ctype)                                                              \
    do {                                                                               \
        ctype *o = (ctype *)d->out;                                                    \
        for (int64_t i = 0; i < d->n; i++) {                                           \
            o[i] = (ctype)((uint64_t)d->istart + (uint64_t)i * (uint64_t)d->istep);    \
        }                                                                              \
    } while (0)

int
ga_cpu_arange(int dev, const ga_arange_desc *d)
{
    (void)dev;
    switch (d->dtype) {
    case GA_INT8:
        ARANGE_INT(int8_t);
        break;
    case GA_INT16:
        ARANGE_INT(int16_t);
        break;
    case GA_INT32:
        ARANGE_INT(int32_t);
        break;
    case GA_INT64:
        ARANGE_INT(int64_t);
        break;
    case GA_UINT8:
        ARANGE_INT(uint8_t);
        break;
    case GA_UINT16:
        ARANGE_INT(uint16_t);
        break;
    case GA_UINT32:
        ARANGE_INT(uint32_t);
        break;
    case GA_UINT64:
        ARANGE_INT(uint64_t);
        break;
    case GA_BOOL: {
        uint8_t *o = (uint8_t *)d->out;
        for (int64_t i = 0; i < d->n; i++) {
            o[i] = (d->start + (double)i * d->step) != 0;
        }
        break;
    }
    case GA_FLOAT16: {
        uint16_t *o = (uint16_t *)d->out;
        for (int64_t i = 0; i < d->n; i++) {
            o[i] = ga_double_to_half(d->start + (double)i * d->step);
        }
        break;
    }
    case GA_FLOAT32: {
        float *o = (float *)d->out;
        for (int64_t i = 0; i < d->n; i++) {
            o[i] = (float)(d->start + (double)i * d->step);
        }
        break;
    }
    case GA_FLOAT64: {
        double *o = (double *)d->out;
        for (int64_t i = 0; i < d->n; i++) {
            o[i] = d->start + (double)i * d->step;
        }
        break;
    }
    case GA_COMPLEX64: {
        float *o = (float *)d->out;
        for (int64_t i = 0; i < d->n; i++) {
            o[2 * i] = (float)(d->start + (double)i * d->step);
            o[2 * i + 1] = 0.0f;
        }
        break;
    }
    case GA_COMPLEX128: {
        double *o = (double *)d->out;
        for (int64_t i = 0; i < d->n; i++) {
            o[2 * i] = d->start + (double)i * d->step;
            o[2 * i + 1] = 0.0;
        }
        break;
    }
    default:
        return ga_error(GA_ERR_TYPE, "arange: unknown dtype %d", d->dtype);
    }
    return GA_OK;
}
