/* ga_transfer.h: every crossing between devices, and the ledger that counts them.
 *
 * These are the only functions that move array data between the host and a device
 * or between devices; each one adds to the ledger. Copies inside one device (a
 * strided view made contiguous, a dtype cast) are not transfers and are not counted.
 */
#ifndef GA_TRANSFER_H
#define GA_TRANSFER_H

#include "ga_array.h"
#include "ga_ledger.h" /* the ledger these copies add to */

#ifdef __cplusplus
extern "C" {
#endif

/* dst = src, elementwise with casting, on dst's device; shapes must broadcast from
 * src to dst. Both on one device (else GA_ERR_MISMATCH). */
int ga_copy_same_device(ga_array *dst, const ga_array *src);

/* A C-contiguous array with src's values on src's device: a view (incref) when src is
 * already contiguous, else a copy. */
int ga_contiguous(const ga_array *src, ga_array *out);

/* src as a GPU kernel may read or write it: a view of src (incref) when it lives on the
 * CPU (CPU loops load through memcpy and need no alignment) or is element-aligned
 * (ga_array_element_aligned); else a C-contiguous copy on its device. Every GPU kernel
 * loads and stores whole elements, as a GPU's typed loads need; only the copy kernel
 * takes unaligned operands (it stages them itself), so it makes the copy. A caller that
 * writes `out` copies it back into src afterwards (ga_copy_same_device). */
int ga_element_aligned(const ga_array *src, ga_array *out);

/* 1 when a GPU kernel could not take src as it is, i.e. ga_element_aligned would copy:
 * src lives on a GPU and is not element-aligned (only a foreign DLPack import at an odd
 * byte offset is). Callers test it first, so the common case costs no view. */
int ga_needs_element_staging(const ga_array *src);

/* A new C-contiguous array on `device` with src's values and dtype. Always a new
 * block, also when src is already there. Counted when it crosses devices. */
int ga_copy_to_device(const ga_array *src, ga_device device, ga_array *out);

/* x.to(cpu(), non_blocking=True): a new C-contiguous page-locked host array
 * (ga_array_empty_pinned) with src's values. From a GPU whose backend queues copies
 * to the host (ABI 11), the copy is queued after the work that writes src and the
 * call returns; the host waits for it before touching the array (ga_host_ready.h).
 * Counted as a transfer, not as a wait. Otherwise a copy that waits. */
int ga_copy_to_host_nonblocking(const ga_array *src, ga_array *out);
/* x.copyto(host_array, non_blocking=True): as ga_copy_to_host_nonblocking, into the
 * existing dst, when src is on a GPU and dst is a C-contiguous host array of src's
 * dtype and shape; any other pair is ga_copy_into (a copy that waits). */
int ga_copy_into_nonblocking(ga_array *dst, const ga_array *src);
/* A new C-contiguous host array in page-locked memory: the GPU backend's
 * (cudaHostAlloc; GA_PINNED_LOCKED) where it has some, else ordinary host memory
 * flagged GA_PINNED_FLAG (simulated GPUs, no GPU: nothing to lock). */
int ga_array_empty_pinned(ga_array *a, ga_dtype dtype, int ndim, const int64_t *shape);
/* Copy src into the existing dst (any devices; shapes broadcast from src to dst;
 * dtypes cast). Counted when it crosses devices. */
int ga_copy_into(ga_array *dst, const ga_array *src);

/* Copy src's elements in C order into host memory `dst` (nbytes must be
 * size * itemsize). A device-to-host transfer for GPU arrays (counted, waits). */
int ga_read_to_host(const ga_array *src, void *dst, size_t nbytes);

/* Wait for all work queued on `device` (counted as a sync for GPUs). */
int ga_synchronize(ga_device device);
/* Wait for every GPU. */
int ga_synchronize_all(void);

#ifdef __cplusplus
}
#endif

#endif
