/* ga_cpu_index.c: (placeholder until written). */
#include "ga_cpu.h"
#include "ga_error.h"

int
ga_cpu_gather(int dev, const ga_index_desc *d)
{
    (void)dev;
    (void)d;
    return ga_error(GA_ERR_UNSUPPORTED, "ga_cpu_gather is not implemented yet");
}

int
ga_cpu_scatter(int dev, const ga_index_desc *d)
{
    (void)dev;
    (void)d;
    return ga_error(GA_ERR_UNSUPPORTED, "ga_cpu_scatter is not implemented yet");
}

int
ga_cpu_nonzero(int dev, const ga_loop *mask, int64_t count, int64_t *out)
{
    (void)dev;
    (void)mask;
    (void)count;
    (void)out;
    return ga_error(GA_ERR_UNSUPPORTED, "ga_cpu_nonzero is not implemented yet");
}
