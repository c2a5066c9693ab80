/* ga_cpu_random.c: (placeholder until written). */
#include "ga_cpu.h"
#include "ga_error.h"

int
ga_cpu_random(int dev, const ga_random_desc *r)
{
    (void)dev;
    (void)r;
    return ga_error(GA_ERR_UNSUPPORTED, "ga_cpu_random is not implemented yet");
}

int
ga_cpu_arange(int dev, const ga_arange_desc *d)
{
    (void)dev;
    (void)d;
    return ga_error(GA_ERR_UNSUPPORTED, "ga_cpu_arange is not implemented yet");
}
