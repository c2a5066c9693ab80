/* ga_capture.h: a captured step's plan, recorded once and replayed without Python.
 *
 * gpuarr.capture (python/gpuarr/_capture.py; docs/DESIGN.md, "Captured steps")
 * records one call of a step: while a thread records, every device it reaches gets a
 * table that copies each compute call's descriptor into the plan before forwarding it
 * (the backend table is the one door to a device's work, ga_backend.h). A replay
 * hands the same descriptors to the same tables in the same order: the same kernels
 * on the same memory, so its results are bitwise the recorded call's.
 *
 * Memory: the plan holds a reference to every storage made while it recorded (the
 * step's temporaries, kept for its replays as a CUDA graph's private pool is) and to
 * every older storage an operation reached (parameters, optimizer state, the step's
 * input buffers), so no block a replay touches is freed or reused under it.
 *
 * What a plan cannot hold is refused while recording (GA_ERR_RUNTIME naming it):
 * a read of a value back to the host (a copy to the host, nonzero), whose value a
 * replay could not see. Host data copied to a device inside the step (a constant
 * made from a Python list) is kept in the plan as it was. Random numbers advance per
 * replay: each random call takes the generator's counter at the replay's start plus
 * its offset in the recording, and the replay advances the generator by what the
 * recording drew.
 */
#ifndef GA_CAPTURE_H
#define GA_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "ga_array.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ga_plan ga_plan;

/* Start recording on this thread (GA_ERR_RUNTIME if it records already). */
int ga_capture_begin(const char *name);
/* Stop recording; the plan, or the reason it cannot be replayed (its message set,
 * GA_ERR_RUNTIME: an operation refused while recording). The caller must hold
 * every storage it wants checked (the step's results) at this point. */
int ga_capture_end(ga_plan **out);
/* Stop recording and drop what was recorded (the recorded call failed). */
void ga_capture_abort(void);
/* Pause this thread's recording (the work done meanwhile is not in the plan: an
 * optimizer's per-call values, written before each replay by Python of its own), and
 * resume it. A pause outside a recording is nothing. */
void ga_capture_pause(void);
void ga_capture_resume(void);
/* Non-zero while this thread records. */
int ga_capture_recording(void);

/* Run the plan once (the first replay on a GPU also captures its CUDA graph). */
int ga_plan_replay(ga_plan *p);
/* Numbers for repr() and tests: operations, storages held and their bytes, older
 * storages that only the plan holds now (a step that replaced an array it reads:
 * `p = p - g` rather than `p -= g`; such a plan would replay on a stale copy). */
typedef struct {
    int64_t ops;
    int64_t held, held_bytes;
    int64_t orphans;
    int64_t draws; /* random numbers per replay */
    /* 1: it replays as one CUDA graph; -1: as its loop of calls, graph_why says why;
     * 0: not replayed yet */
    int graph;
    const char *graph_why; /* the plan's, valid while it lives */
} ga_plan_info;
void ga_plan_get_info(const ga_plan *p, ga_plan_info *out);
/* Release the plan and its references (under the GIL, as every decref). */
void ga_plan_free(ga_plan *p);

#ifdef __cplusplus
}
#endif

#endif
