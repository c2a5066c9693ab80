/* ga_device_types.h: devices as small values, and the per-device structs the backend
 * ABI (ga_backend.h) hands back; the registry that resolves them is runtime's
 * ga_device.h. Here, in the core, so that the ABI header and the CUDA plugins need
 * nothing from runtime/. */
#ifndef GA_DEVICE_TYPES_H
#define GA_DEVICE_TYPES_H

#include <stddef.h>
#include <stdint.h>

typedef enum { GA_DEV_CPU = 0, GA_DEV_GPU = 1 } ga_device_kind;

typedef struct {
    int32_t kind;  /* ga_device_kind */
    int32_t index; /* 0 for the CPU */
} ga_device;

/* What backs gpu(i) in this process. */
typedef enum {
    GA_GPU_NONE = 0,      /* no GPUs */
    GA_GPU_CUDA = 1,      /* real CUDA devices */
    GA_GPU_SIMULATED = 2, /* GPUARR_SIMULATE_GPUS */
    GA_GPU_EMULATED = 3   /* GPUARR_CUDA_EMULATE */
} ga_gpu_mode;

static inline ga_device
ga_cpu(void)
{
    ga_device d = {GA_DEV_CPU, 0};
    return d;
}

static inline int
ga_device_eq(ga_device a, ga_device b)
{
    return a.kind == b.kind && a.index == b.index;
}

/* Statistics and controls of one device, for the binding (which never reaches a
 * backend's table itself). */
typedef struct {
    size_t allocated_bytes; /* in live arrays */
    size_t reserved_bytes;  /* held from the system (live + cached) */
    size_t peak_allocated_bytes;
    size_t total_bytes;  /* device memory, 0 if unknown */
    int64_t alloc_calls; /* system allocations made (cudaMalloc / malloc) */
} ga_memory_stats;

/* What a device's backend did since it was loaded, counted in the backend's own host
 * code (the same on a GPU and in the emulation), for tests: kernels launched, host
 * waits (a stream, event or device synchronize, or a copy that blocks the host; one
 * per call however it is staged), host-to-device and device-to-host copies, and the
 * largest grid (blocks) launched since the last read that asked to reset it. A CUDA
 * graph's launch counts as one launch and one graph launch; the kernels it ran are
 * counted in graph_kernels, not in launches. */
typedef struct {
    int64_t launches;
    int64_t syncs;
    int64_t h2d;
    int64_t d2h;
    int64_t max_grid_blocks;
    int64_t graph_launches;
    int64_t graph_kernels;
} ga_kernel_counters;

#endif
