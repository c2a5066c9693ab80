/* ga_cpu_reduce.c: (placeholder until written). */
#include "ga_cpu.h"
#include "ga_error.h"

int
ga_cpu_reduce(int dev, const ga_reduce_desc *r)
{
    (void)dev;
    (void)r;
    return ga_error(GA_ERR_UNSUPPORTED, "ga_cpu_reduce is not implemented yet");
}

int
ga_cpu_scan(int dev, const ga_scan_desc *s)
{
    (void)dev;
    (void)s;
    return ga_error(GA_ERR_UNSUPPORTED, "ga_cpu_scan is not implemented yet");
}
