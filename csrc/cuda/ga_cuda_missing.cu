/* ga_cuda_missing.cu: TEMPORARY stand-ins for kernel entry points not yet written.
 *
 * Each is a weak definition, so the real one in k_*.cu (a strong definition) wins at
 * link time and this file can stay until every k_*.cu exists; then delete it. Each
 * answers GA_ERR_UNSUPPORTED, which the core turns into a clear error.
 */
#include "ga_cuda.h"

#define GA_MISSING(name, params)                                                       \
    extern "C" __attribute__((weak)) int name params                                   \
    {                                                                                  \
        return ga_error(GA_ERR_UNSUPPORTED,                                            \
                        #name " is not implemented in the CUDA backend yet");         \
    }

GA_MISSING(ga_cuda_elementwise, (int dev, int op, const ga_loop *loop))
GA_MISSING(ga_cuda_reduce, (int dev, const ga_reduce_desc *r))
GA_MISSING(ga_cuda_scan, (int dev, const ga_scan_desc *s))
GA_MISSING(ga_cuda_random, (int dev, const ga_random_desc *r))
GA_MISSING(ga_cuda_gather, (int dev, const ga_index_desc *d))
GA_MISSING(ga_cuda_scatter, (int dev, const ga_index_desc *d))
GA_MISSING(ga_cuda_nonzero, (int dev, const ga_loop *mask, int64_t count, int64_t *out))
GA_MISSING(ga_cuda_arange, (int dev, const ga_arange_desc *d))
