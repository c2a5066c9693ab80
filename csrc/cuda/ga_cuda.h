/* ga_cuda.h: what every file of the CUDA backend shares.
 *
 * The backend is built twice from the same sources:
 *   - by nvcc, for real GPUs (libgpuarr_cuda.so, static cudart);
 *   - by the host C++ compiler with GA_CUDA_EMULATION defined, against the shim in
 *     ga_cuda_emu.h, for the CPU (libgpuarr_cuda_emu.so, the test harness).
 * So: launch kernels only through GA_LAUNCH, use only the runtime calls the shim
 * provides, and give any warp-level trick an emulable fallback.
 *
 * Ownership inside csrc/cuda/:
 *   ga_cuda_backend.cu  the table, devices, streams, caching allocator, copies
 *   ga_cublas.cu        cuBLAS loaded at the first GEMM; integer GEMM kernel
 *   ga_cusolver.cu      cuSOLVER loaded at the first factorisation (gpuarr.linalg)
 *   ga_cufft.cu         cuFFT loaded at the first FFT
 *   ga_cuda_libs.cu     the loop that dlopens those three (ga_cublas_paths.h's folders)
 *   k_elementwise.cu    elementwise ops and casts (math from ga_elementwise_math.h)
 *   k_reduce.cu         reductions
 *   k_scan.cu           scans (cumsum, cumprod)
 *   k_random.cu         random numbers (ga_philox.h)
 *   k_index.cu          gather, scatter, nonzero, arange
 *   k_sort.cu           sort (merge), searchsorted
 *   k_radix.cu          sort of numeric keys (LSD radix, onesweep)
 *   ga_cuda_emu.h/.cpp  the emulation shim
 *   ga_cuda_emu_cusolver.cpp  its cuSOLVER reference (the host's LAPACK)
 */
#ifndef GA_CUDA_H
#define GA_CUDA_H

#include <stddef.h>
#include <stdint.h>

/* before ga_cuda_emu.h, whose qualifier macros the standard headers must not see */
#include <memory>
#include <vector>

#ifdef GA_CUDA_EMULATION
#include "ga_cuda_emu.h"
#else
#include <cuda_runtime.h>
#endif

#include "ga_backend.h"
#include "ga_error.h"

/* Check a CUDA runtime call; on failure record "<expr>: <cudaErrorName> (<text>)"
 * and return GA_ERR_CUDA (GA_ERR_OOM_DEVICE for cudaErrorMemoryAllocation). Never
 * exits. */
#define GA_CUDA_TRY(expr)                                                              \
    do {                                                                               \
        cudaError_t ga_cuda_err_ = (expr);                                             \
        if (ga_cuda_err_ != cudaSuccess) {                                             \
            return ga_cuda_error(ga_cuda_err_, #expr, __FILE__, __LINE__);             \
        }                                                                              \
    } while (0)

/* Launch `kernel` with the given geometry on `stream`. Under nvcc this is <<<>>>; in
 * the emulation it runs the kernel's blocks on the host (ga_cuda_emu.h). After a
 * launch, check it with GA_CUDA_TRY(cudaGetLastError()). */
#ifdef GA_CUDA_EMULATION
#define GA_LAUNCH(kernel, grid, block, shmem, stream, ...)                             \
    do {                                                                               \
        ga_cuda_count_launch(stream, ga_cuda_grid_blocks(dim3(grid)));                 \
        ga_emu_launch(kernel, dim3(grid), dim3(block), (size_t)(shmem), stream,        \
                      __VA_ARGS__);                                                    \
    } while (0)
#else
#define GA_LAUNCH(kernel, grid, block, shmem, stream, ...)                             \
    do {                                                                               \
        ga_cuda_count_launch(stream, ga_cuda_grid_blocks(dim3(grid)));                 \
        kernel<<<grid, block, shmem, stream>>>(__VA_ARGS__);                           \
    } while (0)
#endif

/* Blocks in a grid, for the counters. */
static inline unsigned long long
ga_cuda_grid_blocks(dim3 g)
{
    return (unsigned long long)g.x * g.y * g.z;
}

/* Kernels that use __syncthreads need no marking: the emulation finds out at run time
 * (thread 0 of each block runs on a fiber; if it reaches a barrier the whole block
 * runs on fibers, else thread by thread; see emu/ga_cuda_emu_internal.h).
 * GA_BARRIER_KERNEL is accepted as a synonym of __global__ for documentation. */
#define GA_BARRIER_KERNEL __global__

/* Dynamic shared memory of a launch (the `shmem` bytes of GA_LAUNCH) as a T *:
 *   GA_DYNAMIC_SHARED(float, buf);
 * One byte-typed extern array under nvcc, so templates over T do not clash. */
#ifdef GA_CUDA_EMULATION
#define GA_DYNAMIC_SHARED(T, name) GA_EMU_DYNAMIC_SHARED(T, name)
#else
#define GA_DYNAMIC_SHARED(T, name)                                                     \
    extern __shared__ __align__(16) unsigned char ga_dynamic_shared_[];                \
    T *name = reinterpret_cast<T *>(ga_dynamic_shared_)
#endif

extern "C" {

/* Record a CUDA failure (see GA_CUDA_TRY) and return the matching status. */
int ga_cuda_error(cudaError_t err, const char *expr, const char *file, int line);

/* Make `dev` current and return its stream (every operation on a device is queued on
 * this one stream, which is what makes the caching allocator's reuse safe). */
int ga_cuda_stream(int dev, cudaStream_t *stream);

/* Counters for tests (ga_kernel_counters in ga_backend.h), on the device whose
 * stream is `stream`: GA_LAUNCH counts each launch and its grid; a launcher that
 * waits for its stream on the host calls ga_cuda_count_sync first. */
void ga_cuda_count_launch(cudaStream_t stream, unsigned long long blocks);
void ga_cuda_count_sync(cudaStream_t stream);

/* Grid and block for a grid-stride loop over n elements on `dev` (from the device's
 * multiprocessor count, not constants). n > 0. */
void ga_cuda_launch_dims(int dev, int64_t n, unsigned *grid, unsigned *block);
/* The device's multiprocessor count (1 if unknown). */
int ga_cuda_sm_count(int dev);

/* Scratch memory from the device's caching allocator (stream-ordered: a block freed
 * here may be reused by later work on the same stream). */
int ga_cuda_alloc(int dev, size_t nbytes, void **ptr);
void ga_cuda_free(int dev, void *ptr, size_t nbytes);

/* Kernel entry points, one file each; contracts as in ga_backend.h. */
int ga_cuda_elementwise(int dev, int op, const ga_loop *loop);
int ga_cuda_fused(int dev, const ga_fused_prog *prog, const ga_loop *loop); /* k_fused.cu */
int ga_cuda_reduce(int dev, const ga_reduce_desc *r);
int ga_cuda_scan(int dev, const ga_scan_desc *s);
/* k_radix.cu: the radix sort when it applies (*done = 1), else nothing (*done = 0). */
int ga_cuda_radix_sort(int dev, const ga_sort_desc *d, int *done);
int ga_cuda_gemm(int dev, const ga_gemm_desc *g);
int ga_cuda_random(int dev, const ga_random_desc *r);
int ga_cuda_gather(int dev, const ga_index_desc *d);
int ga_cuda_scatter(int dev, const ga_index_desc *d);
int ga_cuda_nonzero(int dev, const ga_loop *mask, int64_t count, int64_t *out);
int ga_cuda_arange(int dev, const ga_arange_desc *d);
int ga_cuda_sort(int dev, const ga_sort_desc *d);
int ga_cuda_searchsorted(int dev, const ga_search_desc *d);
int ga_cuda_linalg(int dev, const ga_linalg_desc *d); /* ga_cusolver.cu */

/* A device-to-host copy that waits (the table's copy_d2h: counted as a d2h and a sync,
 * lets other Python threads run meanwhile, reports deferred index errors). */
int ga_cuda_copy_to_host(int dev, void *dst, const void *src, size_t nbytes);
int ga_cuda_fft(int dev, const ga_fft_desc *d); /* ga_cufft.cu */

/* Failure slots (ga_cuda_faults.cu): where a kernel reports the bad input of one
 * queued operation. ga_cuda_fault_slot gives the next operation on `dev` a zeroed
 * device record (ga_k_errrec, k_common.cuh) whose outcome fills `rec` later (NULL:
 * reported by the next wait on the device instead, once); ga_cuda_fault_unslot
 * gives it back when the operation could not be queued. Every host wait on a
 * device's stream calls ga_cuda_fault_snapshot before it waits and
 * ga_cuda_fault_harvest after (GA_OK, or the failure of an ownerless slot); a copy
 * to another device snapshots the source before its ordering event. */
/* A device-side error record (kernels cannot return a status): a kernel that finds
 * bad input claims it with an atomic (ga_k_report, k_common.cuh) and writes what the
 * host needs for the message; the host reads it back in stream order. */
typedef struct ga_k_errrec_ {
    unsigned int count; /* elements that failed; 0 = no error */
    unsigned int which; /* the failing index operand (0-based) */
    int64_t value;      /* the index as given */
    int64_t size;       /* the size it had to fit */
} ga_k_errrec;
int ga_cuda_fault_slot(int dev, cudaStream_t stream, ga_fault_record *rec,
                       struct ga_k_errrec_ **slot);
void ga_cuda_fault_unslot(int dev, struct ga_k_errrec_ *slot);
int ga_cuda_fault_snapshot(int dev, cudaStream_t stream);
int ga_cuda_fault_harvest(int dev, cudaStream_t stream);
int ga_cuda_index_checked(int dev, const ga_index_desc *d, int scatter,
                          ga_fault_record *rec);

/* CUDA graphs (ga_cuda_graphs.cu): the table's graph entries (ABI 16), and what the
 * rest of the plugin asks while this thread captures dev's work into a graph: the
 * capture's stream (NULL when not capturing dev), whether cuda_free must leave a
 * block to the graph (its kernels use it at each launch), whether a launch on
 * `stream` is a node of the capture (counted when the graph launches), and the
 * device being captured (-1: none). A checked operation's failure slot is one of the
 * graph's own (ga_cuda_graph_slot: a zeroed device block the graph keeps, copied to
 * its pinned mirror as the graph's last step, and never cleared: a failure stays, as
 * an uncaptured step's failure stays in the parameters it flows into). After each
 * launch, ga_cuda_fault_graph_launched records an event and the launch's owners; the
 * harvest fills them from the mirror once the event completed. */
int ga_cuda_graph_begin(int dev);
int ga_cuda_graph_end(int dev, int keep, void **graph);
int ga_cuda_graph_launch(int dev, void *graph, ga_fault_record **owners, int nowners);
void ga_cuda_graph_destroy(int dev, void *graph);
cudaStream_t ga_cuda_capture_stream(int dev);
int ga_cuda_capture_device(void);
int ga_cuda_graph_keeps(int dev, void *ptr, size_t nbytes);
int ga_cuda_graph_counts(cudaStream_t stream, unsigned long long blocks);
void ga_cuda_graph_counters(int dev, int64_t *launches, int64_t *kernels);
int ga_cuda_graph_slot(int dev, struct ga_k_errrec_ **slot);
}

int ga_cuda_fault_graph_launched(int dev, cudaStream_t stream,
                                 std::shared_ptr<const struct ga_k_errrec_> mirror,
                                 std::vector<ga_fault_record *> owners);

#endif
