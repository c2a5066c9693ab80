/* ga_array.h: storage blocks and strided arrays (shape, strides, views).
 *
 * A storage is one block of memory on one device, reference counted (all reference
 * changes happen under the GIL, so a plain counter suffices). An array is a view:
 * (storage, byte offset, shape, strides in bytes, dtype). Views share the storage.
 * Storage may also wrap memory owned by someone else (a NumPy buffer, a DLPack
 * capsule): then `release` is called instead of the backend's free.
 */
#ifndef GA_ARRAY_H
#define GA_ARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "ga_config.h"
#include "ga_copy_queue.h" /* ga_array_note_write */
#include "ga_device.h"
#include "ga_dtype.h"

struct ga_faultset;

typedef struct ga_storage {
    int64_t refcount;
    ga_device device;
    void *data;
    size_t nbytes;
    /* external memory: called with `owner` on the last decref instead of freeing */
    void (*release)(void *owner);
    void *owner;
    int readonly;
    /* the registry of live storages (ga_live.h), when leak checks are on */
    int32_t live_listed, live_tag;
    struct ga_storage *live_prev, *live_next;
    /* Bumped by every write through an array of this storage (in-place operators,
     * out=, setitem, fill, copyto), so that autograd can tell that an array it saved
     * for the backward pass was modified since (PyTorch's version counter). Views
     * share it, as they share the memory. */
    uint64_t version;
    /* Queued operations that may have failed and whose results flowed into this
     * block, or NULL (ga_fault.h: a read of a failed result raises the failure). */
    struct ga_faultset *faults;
    /* Page-locked host memory (x.pin_memory(), empty(..., pin_memory=True),
     * x.to(cpu(), non_blocking=True)): GA_PINNED_LOCKED where the GPU backend made it
     * (cudaHostAlloc: copies from it stay asynchronous), GA_PINNED_FLAG where host
     * memory is the device's already (simulated GPUs, no GPU); views share it
     * (docs/DESIGN.md, "Non-blocking copies and pinned memory"). */
    int pinned;
    /* A queued copy still reads or writes this host block, or NULL (ga_host_ready.h:
     * the host waits for it before touching the block). */
    struct ga_host_pending *pending;
    /* A non-blocking copy to the host on the device's copy queue reads this device
     * block: its number there, or 0 (ga_copy_queue.h: the compute queue waits for it
     * before the block is written or freed). */
    uint64_t copy_ticket;
    /* The recording captured step that holds this storage already (its number), or
     * 0 (ops/ga_capture.c: each storage is held once per recording). */
    uint64_t capture_mark;
    /* Captured plans that hold this block (ga_storage_plan_hold): kept apart from
     * `refcount`, which counts arrays (autograd reads it to decide whether a gradient
     * may be stored without a copy; a plan's hold must not change that decision).
     * The block is freed when both are 0. */
    int64_t plan_holds;
} ga_storage;

enum { GA_PINNED_NO = 0, GA_PINNED_FLAG = 1, GA_PINNED_LOCKED = 2 };

typedef struct {
    ga_storage *storage; /* owned reference */
    int64_t offset;      /* bytes from storage->data to element [0,...,0] */
    int32_t ndim;
    int32_t dtype; /* ga_dtype */
    int64_t shape[GA_MAXDIMS];
    int64_t strides[GA_MAXDIMS]; /* bytes; may be 0 or negative */
    /* This view may not be written though its memory may (broadcast views, whose
     * stride-0 axes alias one element; x.flags.writeable = False). Views copy it, so
     * views of a read-only view are read-only. */
    int32_t readonly;
} ga_array;

#ifdef __cplusplus
extern "C" {
#endif

/* --- storage ------------------------------------------------------------------ */

/* A new block of nbytes on `device` (refcount 1). Checks the device exists. */
int ga_storage_new(ga_device device, size_t nbytes, ga_storage **out);
/* Wrap foreign host memory (refcount 1); release(owner) runs on the last decref. */
int ga_storage_wrap(ga_device device, void *data, size_t nbytes,
                    void (*release)(void *), void *owner, int readonly,
                    ga_storage **out);
static inline void
ga_storage_incref(ga_storage *s)
{
    s->refcount++;
}
void ga_storage_decref(ga_storage *s);
/* A captured plan keeps the block alive (not an array's reference), and lets it go. */
static inline void
ga_storage_plan_hold(ga_storage *s)
{
    s->plan_holds++;
}
void ga_storage_plan_release(ga_storage *s);

/* --- shapes ------------------------------------------------------------------- */

/* Product of a shape, checked: GA_ERR_VALUE for negative dims, GA_ERR_NOMEM /
 * GA_ERR_OVERFLOW when size * itemsize would overflow. */
int ga_shape_size(int ndim, const int64_t *shape, int itemsize, int64_t *size);
/* C-contiguous strides (bytes) for a shape. */
void ga_contiguous_strides(int ndim, const int64_t *shape, int itemsize,
                           int64_t *strides);
/* Broadcast two shapes into out (ndim = max). GA_ERR_SHAPE with both shapes named. */
int ga_broadcast_shapes(int nd1, const int64_t *s1, int nd2, const int64_t *s2,
                        int *nd_out, int64_t *out);
/* Axes as given (negative ones count from the end) into `out`, non-negative and in the
 * given order. GA_ERR_AXIS ("axis 3 is out of bounds for array of dimension 2", NumPy's
 * words) for one out of range, GA_ERR_VALUE for one given twice. The one place where
 * gpuarr reads an axis argument: reductions, views and rearrangements all come here. */
int ga_normalize_axes(int ndim, int naxes, const int64_t *in, int *out);
/* "(2, 3)" into buf. */
const char *ga_shape_str(int ndim, const int64_t *shape, char *buf, size_t n);

/* --- arrays ------------------------------------------------------------------- */

/* Fill `a` as a new C-contiguous array on `device` (owns a fresh storage). */
int ga_array_empty(ga_array *a, ga_device device, ga_dtype dtype, int ndim,
                   const int64_t *shape);
/* A view: same storage (incref'd), given geometry. */
void ga_array_view(ga_array *dst, const ga_array *src);
/* Release the storage reference held by `a` (a may be zeroed: no-op). */
void ga_array_release(ga_array *a);

static inline ga_device
ga_array_device(const ga_array *a)
{
    return a->storage->device;
}
/* A recording captured step (ops/ga_capture.c, above) watches every storage made
 * while it records and every storage whose memory an operation reaches (through
 * ga_array_data: the one place an element address is made), so that its plan keeps
 * them alive. Registered, not called by name; `ga_storage_watching` is non-zero while
 * any thread records, so the check costs one relaxed load otherwise. */
extern int ga_storage_watching;
void ga_storage_set_watch(void (*on_new)(ga_storage *s), void (*on_reach)(ga_storage *s));
void ga_storage_reached_slow(ga_storage *s);

static inline char *
ga_array_data(const ga_array *a)
{
    if (__builtin_expect(__atomic_load_n(&ga_storage_watching, __ATOMIC_RELAXED) != 0, 0)) {
        ga_storage_reached_slow(a->storage);
    }
    return (char *)a->storage->data + a->offset;
}
int64_t ga_array_size(const ga_array *a);
/* May the elements be written through this view? No for read-only views and for
 * read-only memory (read-only NumPy buffers and DLPack imports). */
static inline int
ga_array_writeable(const ga_array *a)
{
    return !a->readonly && !a->storage->readonly;
}
/* Record a write into a's memory (the storage's version counter), before the write is
 * queued: a queued copy to the host that still reads the block goes first
 * (ga_copy_queue.h). */
static inline void
ga_array_note_write(const ga_array *a)
{
    a->storage->version++;
    if (a->storage->copy_ticket != 0) {
        ga_copy_queue_fence_slow(a->storage, 0);
    }
}
int ga_array_is_c_contiguous(const ga_array *a);
int ga_array_is_f_contiguous(const ga_array *a);
/* Are the first element's address and every stride multiples of the element's
 * alignment (its size; half of it for complex types, whose parts are the unit)? Only a
 * foreign buffer (a DLPack or NumPy import with an odd offset) can fail this. */
int ga_array_element_aligned(const ga_array *a);
/* Byte range [lo, hi) the view touches relative to its first element (for bounds
 * checks of foreign buffers and for copies of whole views). */
void ga_array_extent(const ga_array *a, int64_t *lo, int64_t *hi);

/* Do two views touch a common byte? Decided by the byte ranges they span (a
 * conservative test: interleaved views that never share an element count too), so
 * separate storages wrapping overlapping memory count. The one rule every write path
 * uses to decide whether its source must be copied first. */
int ga_array_overlap(const ga_array *a, const ga_array *b);
/* `in` reads exactly the element `out` writes, at every position (same address,
 * dtype, shape and strides along axes longer than 1): a write of in into out needs
 * no temporary. */
int ga_array_same_view(const ga_array *out, const ga_array *in);

/* Both arrays on one device, else GA_ERR_MISMATCH naming both and the fix. `what`
 * names the operation ("add"). */
int ga_check_same_device(const char *what, const ga_array *a, const ga_array *b);

#ifdef __cplusplus
}
#endif

#endif
