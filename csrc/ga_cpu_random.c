/* ga_cpu_random.c: random numbers (ga_philox.h) and ranges on the CPU.
 * Both kernels write element i from i alone, so splitting the index range between
 * OpenMP threads cannot change a single bit of the result. */
#include <string.h>

#include "ga_cpu.h"
#include "ga_cpu_loop.h"
#include "ga_error.h"
#include "ga_half.h"
#include "ga_philox.h"

/* Below this many elements a thread team costs more than it saves. */
#define GA_RANDOM_PARALLEL_MIN 32768

int
ga_cpu_random(int dev, const ga_random_desc *r)
{
    (void)dev;
    if (!ga_random_dtype_ok(r->dist, r->dtype)) {
        return ga_error(GA_ERR_TYPE, "random: unsupported dtype %s for this distribution",
                        ga_dtype_infos[r->dtype].name);
    }
    int64_t size = ga_dtype_itemsize((ga_dtype)r->dtype);
#if defined(GA_HAVE_OPENMP)
#pragma omp parallel for schedule(static) if (r->n >= GA_RANDOM_PARALLEL_MIN) num_threads(ga_cpu_thread_share())
#endif
    for (int64_t i = 0; i < r->n; i++) {
        ga_random_element(r, i, r->out + i * size);
    }
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
