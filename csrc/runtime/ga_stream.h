/* ga_stream.h: gpuarr's device streams as other CUDA libraries see them.
 *
 * DLPack hands device memory between libraries that queue work on different streams
 * (python_spec.rst: the consumer names its stream, the producer makes its queued work
 * visible there). These functions serve that hand-off for the backends whose devices
 * are CUDA devices (ga_backend's ABI 5 entries); on the CPU and simulated GPUs there
 * are no streams to hand over and they say so. Streams are numbered as in DLPack: 1
 * the legacy default stream, 2 the per-thread default stream, above 2 a cudaStream_t.
 */
#ifndef GA_STREAM_H
#define GA_STREAM_H

#include <stdint.h>

#include "ga_device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when `d`'s memory is CUDA memory that other libraries may use in place (a real
 * GPU, or an emulated one in the test-only mode GPUARR_CUDA_EMULATE_DLPACK=cuda); 0
 * for the CPU, simulated GPUs and plain emulated ones. Never fails. */
int ga_stream_shares_memory(ga_device d);

/* The handle of the stream gpuarr queues `d`'s work on (GA_ERR_UNSUPPORTED where
 * ga_stream_shares_memory(d) is 0). */
int ga_stream_handle(ga_device d, uintptr_t *out);

/* Make another library's `stream` on `d` wait for everything gpuarr queued on `d`
 * so far, without a host wait. */
int ga_stream_order_foreign(ga_device d, uintptr_t stream);

/* Wait on the host until every stream of `d` is idle, other libraries' streams
 * included (counted as a sync). */
int ga_stream_device_wait(ga_device d);

/* Order d's own stream after all work queued so far on the foreign `stream` (DLPack's
 * numbering), without a host wait; a device-wide host wait where the backend cannot
 * (ga_backend.order_after). */
int ga_stream_order_after(ga_device d, uintptr_t stream);

#ifdef __cplusplus
}
#endif

#endif
