/* ga_cuda_emu_devices.cpp: the emulated devices and the runtime's errors. */
#include <errno.h>
#include <stdlib.h>

#include <random>

#include "ga_cuda_emu_internal.h"
#include "ga_visible_devices.h"

using namespace ga_emu;

/* --- devices -------------------------------------------------------------------- */

extern "C" {

int
ga_emu_inject(const char *what)
{
    const char *v = getenv("GPUARR_CUDA_EMULATE_FAIL");
    if (v == NULL || *v == '\0') {
        return 0;
    }
    size_t n = strlen(what);
    for (const char *p = v; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, what, n) == 0) {
            detail("%s failed: injected by GPUARR_CUDA_EMULATE_FAIL (test only)", what);
            last_error = cudaErrorIllegalAddress;
            return 1;
        }
        p += len + (end ? 1 : 0);
    }
    return 0;
}

double
ga_emu_env_number(const char *name, double lo, double hi, int integer, double dflt)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') {
        return dflt;
    }
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno != 0 || end == v || *end != '\0' || !(x >= lo && x <= hi) ||
        (integer && x != (double)(long long)x)) {
        fprintf(stderr, "gpuarr: %s=%s is not %s from %.17g to %.17g; ignored\n", name,
                v, integer ? "an integer" : "a number", lo, hi);
        return dflt;
    }
    return x;
}

const char *
ga_emu_take_error_detail(void)
{
    static thread_local char taken[sizeof(error_detail)];
    memcpy(taken, error_detail, sizeof(taken));
    error_detail[0] = '\0';
    return taken;
}

/* CUDA_VISIBLE_DEVICES as the registry read it at import (NULL: unset). The real
 * runtime applies the variable below the application, so the emulated one does too:
 * the plugin then sees only the visible devices, numbered from 0. */
static char visible_value[256];
static bool visible_set;

void
gpuarr_cuda_emu_set_visible(const char *value)
{
    std::lock_guard<std::mutex> g(state_lock);
    visible_set = value != NULL;
    snprintf(visible_value, sizeof(visible_value), "%s", value ? value : "");
}

void
ga_emu_init(int n)
{
    std::lock_guard<std::mutex> g(state_lock);
    n = n < 0 ? 0 : n > 64 ? 64 : n;
    ndevices = ga_visible_devices(visible_set ? visible_value : NULL, n, physical_device, 64);
    memory_limit = (size_t)1 << 30;
    watchdog_seconds =
        ga_emu_env_number("GPUARR_CUDA_EMULATE_WATCHDOG", 0.0, 1e9, 0, 0.0);
    /* bytes: up to 2^53, where a double still holds every integer */
    memory_limit = (size_t)ga_emu_env_number(
        "GPUARR_CUDA_EMULATE_MEMORY", 1.0, 9007199254740992.0, 1, (double)memory_limit);
    spin_limit =
        (long)ga_emu_env_number("GPUARR_CUDA_EMULATE_SPINS", 1.0, 1e15, 1, 10000.0);
    const char *v;
    ga_emu_env_number("GPUARR_CUDA_EMULATE_DRIVER", 1000.0, 99999.0, 1, 13000.0);
    v = getenv("GPUARR_CUDA_EMULATE_DLPACK");
    if (v != NULL && *v != '\0' && strcmp(v, "cuda") != 0) {
        fprintf(stderr,
                "gpuarr: GPUARR_CUDA_EMULATE_DLPACK=%s is not 'cuda' (the only "
                "mode it names); ignored\n",
                v);
    }
    multiprocessors = 132;
    v = getenv("GPUARR_CUDA_EMULATE_SMS");
    if (v != NULL && *v != '\0') {
        char *end;
        errno = 0;
        long sms = strtol(v, &end, 10);
        if (errno == 0 && *end == '\0' && sms >= 1 && sms <= 4096) {
            multiprocessors = (int)sms;
        } else {
            fprintf(stderr,
                    "gpuarr: GPUARR_CUDA_EMULATE_SMS=%s is not a count from 1 to 4096; "
                    "using 132\n",
                    v);
        }
    }
    schedule_is_random = false;
    schedule_seed = default_schedule_seed;
    v = getenv("GPUARR_CUDA_EMULATE_SCHEDULE");
    if (v != NULL && strcmp(v, "random") == 0) {
        /* once per process (the backend may be asked for its table again); 12 digits
         * are plenty of schedules and short enough to type back */
        while (random_schedule_seed == 0) {
            random_schedule_seed = ((unsigned long long)std::random_device{}() << 32 |
                                    std::random_device{}()) % 1000000000000ull;
        }
        schedule_seed = random_schedule_seed;
        schedule_is_random = true;
    }
    else if (v != NULL && *v != '\0') {
        char *end;
        errno = 0;
        unsigned long long seed = strtoull(v, &end, 10);
        if (errno == 0 && *end == '\0' && *v >= '0' && *v <= '9') {
            schedule_seed = seed;
        } else {
            fprintf(stderr,
                    "gpuarr: GPUARR_CUDA_EMULATE_SCHEDULE=%s is neither a seed (a decimal "
                    "integer from 0 to 2^64-1) nor 'random'; using the seed %llu\n",
                    v, default_schedule_seed);
        }
    }
}

/* The driver's CUDA version: 13000, or GPUARR_CUDA_EMULATE_DRIVER (test only, e.g.
 * 12040) to play a machine whose driver is older than the runtime, where the real
 * runtime answers cudaErrorInsufficientDriver to everything. */
static int
emulated_driver(void)
{
    /* validated with a warning once, in ga_emu_init; junk reads as the default here */
    const char *v = getenv("GPUARR_CUDA_EMULATE_DRIVER");
    char *end;
    long d = v != NULL && *v != '\0' ? strtol(v, &end, 10) : 13000;
    int bad = v != NULL && *v != '\0' && (*end != '\0' || d < 1000 || d > 99999);
    return bad ? 13000 : (int)d;
}

cudaError_t
cudaGetDeviceCount(int *count)
{
    if (emulated_driver() < 13000) {
        return fail(cudaErrorInsufficientDriver); /* *count is not written */
    }
    if (ndevices == 0) {
        return fail(cudaErrorNoDevice); /* like the runtime: *count is not written */
    }
    *count = ndevices;
    return cudaSuccess;
}

cudaError_t
cudaDriverGetVersion(int *version)
{
    *version = emulated_driver();
    return cudaSuccess;
}

cudaError_t
cudaRuntimeGetVersion(int *version)
{
    *version = 13000;
    return cudaSuccess;
}

cudaError_t
cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!valid_device(device)) {
        return fail(cudaErrorInvalidDevice);
    }
    memset(prop, 0, sizeof(*prop));
    snprintf(prop->name, sizeof(prop->name), "emulated CUDA device %d (CPU)",
             physical_device[device]);
    prop->totalGlobalMem = memory_limit;
    prop->sharedMemPerBlock = 48 * 1024;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 0x7fffffff;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    /* an H100's geometry, so grids are sized as on one */
    prop->major = 8;
    prop->minor = 0;
    prop->multiProcessorCount = multiprocessors;
    prop->maxThreadsPerMultiProcessor = 2048;
    prop->regsPerBlock = 65536;
    prop->regsPerMultiprocessor = 65536;
    prop->sharedMemPerMultiprocessor = 228 * 1024;
    prop->maxBlocksPerMultiProcessor = 32;
    prop->canMapHostMemory = 1;
    prop->unifiedAddressing = 1;
    return cudaSuccess;
}

cudaError_t
cudaSetDevice(int device)
{
    if (!valid_device(device)) {
        return fail(cudaErrorInvalidDevice);
    }
    set_device_calls++;
    current_device = device;
    return cudaSuccess;
}

/* How many times cudaSetDevice was called (a driver call on a GPU: the plugin makes
 * it only when the thread's current device differs; tests/cuda/test_cuda_copies.py). */
/* Test only: how often the occupancy calculator was asked (k_elementwise.cu keeps its
 * answer per kernel and device). */
extern "C" __attribute__((visibility("default"))) long long
gpuarr_cuda_selftest_occupancy_calls(void)
{
    return occupancy_calls.load();
}

extern "C" __attribute__((visibility("default"))) long long
gpuarr_cuda_selftest_set_device_calls(void)
{
    return set_device_calls.load();
}

cudaError_t
cudaGetDevice(int *device)
{
    *device = current_device;
    return cudaSuccess;
}

cudaError_t
cudaDeviceSynchronize(void)
{
    GA_EMU_FAIL_POINT("cudaDeviceSynchronize");
    cudaError_t refused = capture_forbids(nullptr, current_device, "cudaDeviceSynchronize");
    return refused != cudaSuccess ? refused : device_wait(current_device);
}

cudaError_t
cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    std::lock_guard<std::mutex> g(state_lock);
    *total_bytes = memory_limit;
    *free_bytes = memory_limit - devices[current_device].used;
    return cudaSuccess;
}
/* --- errors ------------------------------------------------------------------------ */

cudaError_t
cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

cudaError_t
cudaPeekAtLastError(void)
{
    return last_error;
}

#define GA_EMU_ERRORS(X)                                                               \
    X(cudaSuccess, "no error")                                                         \
    X(cudaErrorInvalidValue, "invalid argument")                                       \
    X(cudaErrorMemoryAllocation, "out of memory")                                      \
    X(cudaErrorInitializationError, "initialization error")                            \
    X(cudaErrorInvalidConfiguration, "invalid configuration argument")                 \
    X(cudaErrorInvalidDevicePointer, "invalid device pointer")                         \
    X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")            \
    X(cudaErrorStubLibrary, "CUDA driver is a stub library")                           \
    X(cudaErrorInsufficientDriver,                                                     \
      "CUDA driver version is insufficient for CUDA runtime version")                  \
    X(cudaErrorNoDevice, "no CUDA-capable device is detected")                         \
    X(cudaErrorInvalidDevice, "invalid device ordinal")                                \
    X(cudaErrorInvalidResourceHandle, "invalid resource handle")                       \
    X(cudaErrorIllegalState, "the operation cannot be performed in the present state") \
    X(cudaErrorNotReady, "device not ready")                                           \
    X(cudaErrorIllegalAddress, "an illegal memory access was encountered")             \
    X(cudaErrorLaunchOutOfResources, "too many resources requested for launch")        \
    X(cudaErrorLaunchTimeout, "the launch timed out and was terminated")               \
    X(cudaErrorMisalignedAddress, "misaligned address")                                \
    X(cudaErrorPeerAccessAlreadyEnabled,                                               \
      "peer access is already enabled")                                                \
    X(cudaErrorPeerAccessNotEnabled, "peer access has not been enabled")               \
    X(cudaErrorLaunchFailure, "unspecified launch failure")                            \
    X(cudaErrorStreamCaptureUnsupported,                                               \
      "operation not permitted when stream is capturing")                              \
    X(cudaErrorStreamCaptureInvalidated,                                               \
      "operation failed due to a previous error during capture")                       \
    X(cudaErrorStreamCaptureIsolation,                                                 \
      "dependency created on uncaptured work in another stream")                       \
    X(cudaErrorCapturedEvent,                                                          \
      "operation not permitted on an event last recorded in a capturing stream")       \
    X(cudaErrorStreamCaptureWrongThread,                                               \
      "attempt to terminate a thread-local capture sequence from another thread")      \
    X(cudaErrorUnknown, "unknown error")

const char *
cudaGetErrorName(cudaError_t err)
{
    switch (err) {
#define GA_X_NAME(e, text)                                                             \
    case e:                                                                            \
        return #e;
        GA_EMU_ERRORS(GA_X_NAME)
#undef GA_X_NAME
    }
    return "cudaErrorUnknown";
}

const char *
cudaGetErrorString(cudaError_t err)
{
    switch (err) {
#define GA_X_TEXT(e, text)                                                             \
    case e:                                                                            \
        return text;
        GA_EMU_ERRORS(GA_X_TEXT)
#undef GA_X_TEXT
    }
    return "unrecognized error code";
}

}  // extern "C"
