/* ga_cuda_selftest_warp.cu: known-answer kernels for the warp primitives, vector
 * types and the faults a GPU reports, run by name through the exported
 * gpuarr_cuda_selftest_case (tests/cuda/test_cuda_emulation.py calls it through ctypes).
 *
 * Cases: "warp" (every warp primitive against the values CUDA documents), "vector"
 * (aligned float4/double2/int4 access, make_*, 256-byte aligned blocks), and two that
 * must FAIL, returning 1 with the CUDA error in the message: "warp_missing_lane" (a
 * mask names a lane that exited: a launch failure, as synccheck reports it) and
 * "misaligned_vector" (a 16-byte load from an address 4 bytes off: a misaligned
 * address fault), and "misaligned_element" (a float32 element load one byte off: the
 * same fault; every kernel's element loads assume element alignment, GA_K_ELEMENT). "device_props" reports the geometry (and occupancy estimates) for
 * the test to compare; "launch_limits" checks the error of each launch past a limit.
 */
#include "ga_cuda_selftest.h"
#include "k_common.cuh"

#include <stdio.h>
#include <string.h>

namespace {

const int WARP_OUT = 22; /* values each thread writes in k_warp */
const unsigned FULL = 0xffffffffu;

__global__ void
k_warp(long long *out)
{
    unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    long long *o = out + (size_t)tid * WARP_OUT;
    int v = (int)(lane * 10 + warp);
    o[0] = __shfl_sync(FULL, v, 5);
    o[1] = __shfl_sync(FULL, (int)lane, 3, 8);
    o[2] = __shfl_up_sync(FULL, (int)lane, 1);
    o[3] = __shfl_up_sync(FULL, (int)lane, 2, 8);
    o[4] = __shfl_down_sync(FULL, (int)lane, 4);
    o[5] = __shfl_xor_sync(FULL, (int)lane, 1);
    o[6] = __shfl_xor_sync(FULL, (int)lane, 16, 16);
    double d = __shfl_down_sync(FULL, (double)lane + 0.5, 1);
    o[7] = (long long)(d * 2);
    long long big = __shfl_sync(FULL, (long long)lane << 40, 31);
    o[8] = big >> 40;
    /* a butterfly sum: every lane ends with the warp's total */
    int sum = (int)lane;
    for (int m = 16; m > 0; m /= 2) {
        sum += __shfl_xor_sync(FULL, sum, m);
    }
    o[9] = sum;
    o[10] = __ballot_sync(FULL, lane & 1);
    o[11] = __any_sync(FULL, lane == 7) * 2 + __any_sync(FULL, 0);
    o[12] = __all_sync(FULL, lane < 32) * 2 + __all_sync(FULL, lane != 3);
    o[13] = __activemask();
    __syncwarp();
    o[14] = -1;
    if (lane < 16) {
        o[14] = __ballot_sync(0xffffu, lane < 4);
    }
    __syncwarp();
    o[15] = __popc(0xf0f0u) * 1000 + __popcll(0xffull << 40);
    o[16] = __ffs(0x50) * 1000 + __ffs(0);
    o[17] = __clz(1) * 1000 + __clz(0);
    o[18] = __clzll(1) * 1000 + __clzll(-1LL);
    o[19] = __shfl_sync(FULL, 1.5f + (float)lane, 31, 16) * 2;
    o[20] = __match_any_sync(FULL, (int)(lane % 3 + warp * 10));
    o[21] = __ffsll(1ll << 40) * 1000 + __ffsll(0);
}

long long
warp_expected(unsigned tid, int j)
{
    unsigned lane = tid % 32, warp = tid / 32;
    switch (j) {
    case 0:
        return 50 + warp;
    case 1:
        return (lane & ~7u) + 3;
    case 2:
        return lane >= 1 ? lane - 1 : lane;
    case 3:
        return lane % 8 >= 2 ? lane - 2 : lane;
    case 4:
        return lane + 4 < 32 ? lane + 4 : lane;
    case 5:
        return lane ^ 1;
    case 6: /* width 16: lanes 16..31 read the earlier segment, 0..15 keep their own */
        return lane >= 16 ? lane - 16 : lane;
    case 7:
        return lane < 31 ? 2 * lane + 3 : 2 * lane + 1;
    case 8:
        return 31;
    case 9:
        return 496;
    case 10:
        return 0xAAAAAAAAll;
    case 11:
        return 2;
    case 12:
        return 2;
    case 13:
        return 0xffffffffll;
    case 14:
        return lane < 16 ? 0xf : -1;
    case 15:
        return 8 * 1000 + 8;
    case 16:
        return 5 * 1000 + 0;
    case 17:
        return 31 * 1000 + 32;
    case 18:
        return 63 * 1000 + 0;
    case 19: /* width 16, source lane 31 is 15 of each segment */
        return (long long)((1.5f + (float)((lane & ~15u) + 15)) * 2);
    case 20: { /* the lanes with the same residue mod 3 */
        long long m = 0;
        for (unsigned k = lane % 3; k < 32; k += 3) {
            m |= 1ll << k;
        }
        return m;
    }
    case 21:
        return 41 * 1000 + 0;
    }
    return 0;
}

/* lane 5 leaves before the others shuffle with a full mask */
__global__ void
k_warp_missing_lane(int *out)
{
    unsigned lane = threadIdx.x % 32;
    if (lane == 5) {
        return;
    }
    out[threadIdx.x] = __shfl_sync(FULL, (int)lane, 0);
}

/* float4 loads and stores, aligned; the sum of each float4 as a check */
__global__ void
k_vector(const float4 *in, float4 *out, double2 *dout, int4 *iout)
{
    unsigned t = threadIdx.x;
    float4 a = ga_ld_vec(in + t);
    ga_st_vec(out + t, make_float4(a.w, a.z, a.y, a.x));
    ga_st_vec(dout + t, make_double2((double)a.x + a.y, (double)a.z + a.w));
    ga_st_vec(iout + t, make_int4((int)a.x, (int)a.y, (int)a.z, (int)a.w));
}

__global__ void
k_misaligned(const float *in, float *out)
{
    /* 4 bytes past a 256-byte aligned block: not a float4 address */
    float4 a = ga_ld_vec(reinterpret_cast<const float4 *>(in + 1));
    out[threadIdx.x] = a.x;
}

__global__ void
k_misaligned_element(const char *in, float *out)
{
    /* one byte past a 256-byte aligned block: not a float address */
    out[threadIdx.x] = ga_ld<GA_FLOAT32>(in + 1);
}

int
case_warp(int dev, char *msg, size_t n)
{
    const unsigned threads = 64;
    const size_t bytes = threads * WARP_OUT * sizeof(long long);
    long long *d = NULL;
    static long long h[threads * WARP_OUT];
    cudaStream_t s;
    int rc = 0;
    CASE_TRY(ga_cuda_stream(dev, &s));
    CASE_TRY(ga_cuda_alloc(dev, bytes, (void **)&d));
    GA_LAUNCH(k_warp, 1, threads, 0, s, d);
    CASE_TRY(CU(cudaGetLastError()));
    CASE_TRY(CU(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s)));
    CASE_TRY(CU(cudaStreamSynchronize(s)));
    for (unsigned t = 0; t < threads; t++) {
        for (int j = 0; j < WARP_OUT; j++) {
            long long want = warp_expected(t, j);
            if (h[t * WARP_OUT + j] != want) {
                snprintf(msg, n, "warp check %d, thread %u: got %lld, want %lld", j, t,
                         h[t * WARP_OUT + j], want);
                rc = 1;
                goto done;
            }
        }
    }
done:
    ga_cuda_free(dev, d, bytes);
    return rc;
}

int
case_warp_missing_lane(int dev, char *msg, size_t n)
{
    int *d = NULL;
    cudaStream_t s;
    int rc = 0;
    CASE_TRY(ga_cuda_stream(dev, &s));
    CASE_TRY(ga_cuda_alloc(dev, 32 * sizeof(int), (void **)&d));
    GA_LAUNCH(k_warp_missing_lane, 1, 32, 0, s, d);
    CASE_TRY(CU(cudaGetLastError()));
    CASE_TRY(CU(cudaStreamSynchronize(s)));
    ga_st_say(msg, n, "a shuffle whose mask names an exited lane was not reported");
    rc = 0;
done:
    ga_cuda_free(dev, d, 32 * sizeof(int));
    return rc;
}

int
case_vector(int dev, char *msg, size_t n)
{
    const unsigned threads = 64;
    float4 *in = NULL, *out = NULL;
    double2 *dout = NULL;
    int4 *iout = NULL;
    static float4 hin[threads], hout[threads];
    static double2 hd[threads];
    static int4 hi[threads];
    cudaStream_t s;
    int rc = 0;
    for (unsigned t = 0; t < threads; t++) {
        hin[t] = make_float4((float)t, (float)(t + 1), (float)(2 * t), (float)(3 * t));
    }
    CASE_TRY(ga_cuda_stream(dev, &s));
    CASE_TRY(ga_cuda_alloc(dev, sizeof(hin), (void **)&in));
    CASE_TRY(ga_cuda_alloc(dev, sizeof(hout), (void **)&out));
    CASE_TRY(ga_cuda_alloc(dev, sizeof(hd), (void **)&dout));
    CASE_TRY(ga_cuda_alloc(dev, sizeof(hi), (void **)&iout));
    if (((uintptr_t)in | (uintptr_t)out | (uintptr_t)dout | (uintptr_t)iout) % 256 != 0) {
        rc = ga_st_say(msg, n, "a device block is not 256-byte aligned");
        goto done;
    }
    CASE_TRY(CU(cudaMemcpyAsync(in, hin, sizeof(hin), cudaMemcpyHostToDevice, s)));
    GA_LAUNCH(k_vector, 1, threads, 0, s, (const float4 *)in, out, dout, iout);
    CASE_TRY(CU(cudaGetLastError()));
    CASE_TRY(CU(cudaMemcpyAsync(hout, out, sizeof(hout), cudaMemcpyDeviceToHost, s)));
    CASE_TRY(CU(cudaMemcpyAsync(hd, dout, sizeof(hd), cudaMemcpyDeviceToHost, s)));
    CASE_TRY(CU(cudaMemcpyAsync(hi, iout, sizeof(hi), cudaMemcpyDeviceToHost, s)));
    CASE_TRY(CU(cudaStreamSynchronize(s)));
    for (unsigned t = 0; t < threads; t++) {
        const float4 &a = hin[t];
        if (hout[t].x != a.w || hout[t].y != a.z || hout[t].z != a.y || hout[t].w != a.x ||
            hd[t].x != (double)a.x + a.y || hd[t].y != (double)a.z + a.w ||
            hi[t].x != (int)a.x || hi[t].w != (int)a.w) {
            rc = ga_st_say(msg, n, "vector load/store: wrong value");
            goto done;
        }
    }
done:
    ga_cuda_free(dev, in, sizeof(hin));
    ga_cuda_free(dev, out, sizeof(hout));
    ga_cuda_free(dev, dout, sizeof(hd));
    ga_cuda_free(dev, iout, sizeof(hi));
    return rc;
}

int
case_misaligned_vector(int dev, char *msg, size_t n)
{
    float *in = NULL, *out = NULL;
    cudaStream_t s;
    int rc = 0;
    CASE_TRY(ga_cuda_stream(dev, &s));
    CASE_TRY(ga_cuda_alloc(dev, 64 * sizeof(float), (void **)&in));
    CASE_TRY(ga_cuda_alloc(dev, 32 * sizeof(float), (void **)&out));
    CASE_TRY(CU(cudaMemsetAsync(in, 0, 64 * sizeof(float), s)));
    GA_LAUNCH(k_misaligned, 1, 32, 0, s, (const float *)in, out);
    CASE_TRY(CU(cudaGetLastError()));
    CASE_TRY(CU(cudaStreamSynchronize(s)));
    ga_st_say(msg, n, "a misaligned float4 load was not reported");
done:
    ga_cuda_free(dev, in, 64 * sizeof(float));
    ga_cuda_free(dev, out, 32 * sizeof(float));
    return rc;
}

int
case_misaligned_element(int dev, char *msg, size_t n)
{
    char *in = NULL;
    float *out = NULL;
    cudaStream_t s;
    int rc = 0;
    CASE_TRY(ga_cuda_stream(dev, &s));
    CASE_TRY(ga_cuda_alloc(dev, 64, (void **)&in));
    CASE_TRY(ga_cuda_alloc(dev, 32 * sizeof(float), (void **)&out));
    CASE_TRY(CU(cudaMemsetAsync(in, 0, 64, s)));
    GA_LAUNCH(k_misaligned_element, 1, 32, 0, s, (const char *)in, out);
    CASE_TRY(CU(cudaGetLastError()));
    CASE_TRY(CU(cudaStreamSynchronize(s)));
    ga_st_say(msg, n, "a misaligned float32 element load was not reported");
done:
    ga_cuda_free(dev, in, 64);
    ga_cuda_free(dev, out, 32 * sizeof(float));
    return rc;
}

__global__ void
k_nothing(int *out)
{
    if (out != NULL && threadIdx.x == 0 && blockIdx.x == 0) {
        out[0] = 1;
    }
}

/* The device's geometry as "key=value" words in msg, for the test to compare. */
int
case_device_props(int dev, char *msg, size_t n)
{
    cudaDeviceProp p;
    int occ256 = 0, occ1024 = 0, occ_shared = 0;
    if (cudaGetDeviceProperties(&p, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ256, k_nothing, 256, 0) !=
            cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ1024, k_nothing, 1024, 0) !=
            cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_shared, k_nothing, 64,
                                                      40 * 1024) != cudaSuccess) {
        return ga_st_say(msg, n, "cudaGetDeviceProperties or the occupancy query failed");
    }
    snprintf(msg, n,
             "sms=%d threads=%d shared=%zu grid=%d,%d,%d warp=%d regs=%d occ256=%d "
             "occ1024=%d occ64_40k=%d",
             p.multiProcessorCount, p.maxThreadsPerBlock, p.sharedMemPerBlock,
             p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2], p.warpSize,
             p.regsPerBlock, occ256, occ1024, occ_shared);
    return 0;
}

/* Launches past each limit fail with the error a GPU gives; the limits themselves
 * launch. */
int
case_launch_limits(int dev, char *msg, size_t n)
{
    cudaStream_t s;
    if (ga_cuda_stream(dev, &s) != GA_OK) {
        return ga_st_say(msg, n, ga_error_message());
    }
    struct {
        dim3 grid, block;
        size_t shmem;
        cudaError_t want;
        const char *what;
    } cases[] = {
        {dim3(1), dim3(1025), 0, cudaErrorInvalidConfiguration, "1025 threads"},
        {dim3(1), dim3(1, 1, 65), 0, cudaErrorInvalidConfiguration, "block z 65"},
        {dim3(1, 65536), dim3(32), 0, cudaErrorInvalidConfiguration, "grid y 65536"},
        {dim3(1, 1, 65536), dim3(32), 0, cudaErrorInvalidConfiguration, "grid z 65536"},
        {dim3(0x80000000u), dim3(1), 0, cudaErrorInvalidConfiguration, "grid x 2^31"},
        {dim3(1), dim3(32), 48 * 1024 + 1, cudaErrorInvalidValue, "48 KiB + 1 shared"},
        {dim3(1), dim3(1024), 48 * 1024, cudaSuccess, "1024 threads, 48 KiB shared"},
        {dim3(1, 65535, 1), dim3(1), 0, cudaSuccess, "grid y 65535"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        GA_LAUNCH(k_nothing, cases[i].grid, cases[i].block, cases[i].shmem, s, (int *)NULL);
        cudaError_t got = cudaGetLastError();
        if (got == cudaSuccess) {
            got = cudaStreamSynchronize(s);
        }
        if (got != cases[i].want) {
            snprintf(msg, n, "launch with %s: got %s, want %s", cases[i].what,
                     cudaGetErrorName(got), cudaGetErrorName(cases[i].want));
            return 1;
        }
    }
    return 0;
}

}  // namespace

/* Run the self-test case `name` on `dev`: 0 when it passes; otherwise 1 and a message
 * in msg (for the failing cases, the CUDA error they must produce). 2 for an unknown
 * name. */
extern "C" __attribute__((visibility("default"))) int
gpuarr_cuda_selftest_case(int dev, const char *name, char *msg, size_t n)
{
    static const struct {
        const char *name;
        int (*fn)(int, char *, size_t);
    } cases[] = {
        {"warp", case_warp},
        {"warp_missing_lane", case_warp_missing_lane},
        {"vector", case_vector},
        {"misaligned_vector", case_misaligned_vector},
        {"misaligned_element", case_misaligned_element},
        {"device_props", case_device_props},
        {"launch_limits", case_launch_limits},
    };
    msg[0] = '\0';
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (strcmp(cases[i].name, name) == 0) {
            return cases[i].fn(dev, msg, n);
        }
    }
    snprintf(msg, n, "no self-test case named '%s'", name);
    return 2;
}
