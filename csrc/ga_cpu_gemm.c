/* ga_cpu_gemm.c: (placeholder until written). */
#include "ga_cpu.h"
#include "ga_error.h"

int
ga_cpu_gemm(int dev, const ga_gemm_desc *g)
{
    (void)dev;
    (void)g;
    return ga_error(GA_ERR_UNSUPPORTED, "ga_cpu_gemm is not implemented yet");
}
