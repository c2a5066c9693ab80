/* k_random.cu: random numbers on a CUDA device.
 *
 * One thread per element (grid-stride), each calling ga_random_element from
 * ../ga_philox.h: the element's Philox counter is desc->counter + i, independent of
 * every other element, so the numbers are the CPU backend's for the same (seed,
 * counter), whatever the grid: bit-identical, except that normal draws go through
 * the device's log and cos (within their documented ulp errors of the host's). The
 * output is contiguous. Philox4x32-10 is
 * about 40 integer multiplies per element: compute-light enough that the kernel is
 * still bound by its single write per element.
 */
#include "k_common.cuh"

#include "../ga_philox.h"

/* The descriptor travels by value (no host pointer is dereferenced on the device). */
__global__ void
k_random(const GA_GRID_CONSTANT ga_random_desc r, int itemsize)
{
    for (int64_t i = ga_gtid(); i < r.n; i += ga_gstride()) {
        ga_random_element(&r, i, r.out + i * itemsize);
    }
}

extern "C" int
ga_cuda_random(int dev, const ga_random_desc *r)
{
    if (!ga_random_dtype_ok(r->dist, r->dtype)) {
        return ga_error(GA_ERR_TYPE, "random: distribution %d cannot produce %s",
                        (int)r->dist, ga_k_dtype_name(r->dtype));
    }
    if (r->n <= 0) {
        return GA_OK;
    }
    unsigned grid, block;
    cudaStream_t stream;
    int st = ga_k_setup(dev, r->n, &grid, &block, &stream);
    if (st != GA_OK) {
        return st;
    }
    GA_LAUNCH(k_random, grid, block, 0, stream, *r, ga_k_itemsize(r->dtype));
    GA_CUDA_TRY(cudaGetLastError());
    return GA_OK;
}
