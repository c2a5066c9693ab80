/* k_common.cuh: helpers shared by the kernel files of the CUDA backend.
 *
 * Everything here compiles three ways: nvcc device code, nvcc host code, and the host
 * C++ compiler of the emulated build (GA_CUDA_EMULATION, ga_cuda_emu.h). The emulator
 * runs what a GPU runs:
 *   - warp primitives (__shfl*_sync with width, __ballot_sync, __any_sync, __all_sync,
 *     __activemask, __syncwarp, __popc/__popcll/__ffs/__ffsll/__clz/__clzll) in lockstep: each
 *     *_sync call is a meeting point of the lanes its mask names, and a mask naming a
 *     lane that exited or waits at __syncthreads fails the launch (cudaErrorLaunchFailure,
 *     compute-sanitizer synccheck's barrier error). Emulation limit: a block whose
 *     thread 0 reaches no __syncthreads and no warp primitive runs as a plain loop, so
 *     a warp primitive that only some other warps reach fails the launch there; keep
 *     warp primitives in code thread 0 runs too (e.g. every warp reduces, then one does);
 *   - vector types (float2/float4, int2/int4, uint2/uint4, double2, longlong2 and their
 *     make_* functions) with CUDA's alignment; cudaMalloc blocks are 256-byte aligned;
 *   - vector (8- or 16-byte) loads and stores of device memory go through ga_ld_vec /
 *     ga_st_vec below (or __ldg): a plain access under nvcc, and under emulation an
 *     address not aligned to the type is a cudaErrorMisalignedAddress fault, as on a
 *     GPU (a plain `*(float4 *)p` cannot be checked by the host compiler);
 *   - NaN tests as `x != x`. The emulated build compiles with -fno-strict-aliasing, so
 *     typed access to device data is fine.
 */
#ifndef GA_K_COMMON_CUH
#define GA_K_COMMON_CUH

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "ga_cuda.h"

#include "ga_dtype.h"
#include "ga_half.h"
#include "ga_elementwise_math.h"

/* Threads per block of the kernels that cooperate through shared memory (block
 * reductions, nonzero): 256, 8 warps, enough to hide memory latency and small enough
 * for several resident blocks per multiprocessor. The emulated build uses the same
 * size, so it checks the geometry a GPU runs (a kernel that only works with one warp
 * a block fails there too). Must be a power of two (the tree reduction halves it). */
#define GA_RED_BLOCK 256

/* A kernel that calls __syncthreads (the emulator must run its threads concurrently).
 * ga_cuda.h names the marker; it is plain __global__ wherever nobody defined it. */
#ifndef GA_BARRIER_KERNEL
#define GA_BARRIER_KERNEL __global__
#endif

/* Register budget of a kernel: at most `threads` per block and at least `blocks` of
 * them resident per multiprocessor (the compiler caps registers to fit). The emulator
 * has no registers to budget. */
#ifdef GA_CUDA_EMULATION
#define GA_LAUNCH_BOUNDS(threads, blocks)
#define GA_GRID_CONSTANT
#else
#define GA_LAUNCH_BOUNDS(threads, blocks) __launch_bounds__(threads, blocks)
/* a by-value kernel parameter whose address is taken, read in place (no local copy) */
#define GA_GRID_CONSTANT __grid_constant__
#endif

/* ---- grid-stride loops, in 64-bit (arrays may hold more than 2^31 elements) ---- */

#ifdef GA_CUDA_EMULATION
#define GA_DEV
#else
#define GA_DEV __device__
#endif

static GA_DEV inline int64_t
ga_gtid(void)
{
    return (int64_t)blockIdx.x * (int64_t)blockDim.x + (int64_t)threadIdx.x;
}

static GA_DEV inline int64_t
ga_gstride(void)
{
    return (int64_t)gridDim.x * (int64_t)blockDim.x;
}

/* ---- checked vector access: see the contract at the top of this file ---- */

template <typename T>
static GA_DEV inline T
ga_ld_vec(const T *p)
{
#ifdef GA_CUDA_EMULATION
    if ((uintptr_t)p % alignof(T) != 0) {
        ga_emu_fault(cudaErrorMisalignedAddress, "vector load (ga_ld_vec)", p);
        return T{};
    }
#endif
    return *p;
}

template <typename T>
static GA_DEV inline void
ga_st_vec(T *p, T v)
{
#ifdef GA_CUDA_EMULATION
    if ((uintptr_t)p % alignof(T) != 0) {
        ga_emu_fault(cudaErrorMisalignedAddress, "vector store (ga_st_vec)", p);
        return;
    }
#endif
    *p = v;
}

/* Queue geometry for a grid-stride loop over n > 0 items on `dev`'s stream. */
static inline int
ga_k_setup(int dev, int64_t n, unsigned *grid, unsigned *block, cudaStream_t *stream)
{
    int st = ga_cuda_stream(dev, stream);
    if (st != GA_OK) {
        return st;
    }
    ga_cuda_launch_dims(dev, n, grid, block);
    return GA_OK;
}

/* Blocks for a kernel that gives one block to each of `n` items: the grid's x
 * dimension holds 2^31 - 1 blocks, and a grid-stride loop over blocks covers the rest. */
static inline unsigned
ga_k_blocks_for(int64_t n)
{
    const int64_t cap = 65535LL * 16; /* plenty to fill any GPU, far below the limit */
    return (unsigned)(n < cap ? n : cap);
}

/* ---- names and sizes for messages (host side; the plugin keeps its own tables
 * rather than reaching for the core's) ---- */

static inline const char *
ga_k_dtype_name(int dt)
{
    static const char *const names[] = {
#define GA_X_NAME(e, name, kind, size, ch, ctype) #name,
        GA_DTYPES(GA_X_NAME)
#undef GA_X_NAME
    };
    return dt >= 0 && dt < GA_NTYPES ? names[dt] : "an unknown dtype";
}

static inline int
ga_k_itemsize(int dt)
{
    static const int sizes[] = {
#define GA_X_SIZE(e, name, kind, size, ch, ctype) size,
        GA_DTYPES(GA_X_SIZE)
#undef GA_X_SIZE
    };
    return dt >= 0 && dt < GA_NTYPES ? sizes[dt] : 0;
}

static inline const char *
ga_k_op_name(int op)
{
    static const char *const names[] = {
#define GA_X_NAME(e, name, nin, out) #name,
        GA_ELEMENTWISE_OPS(GA_X_NAME)
#undef GA_X_NAME
    };
    return op >= 0 && op < GA_NOPS ? names[op] : "an unknown operation";
}

/* ---- element types by dtype ---- */

template <int DT> struct ga_storage;
#define GA_X_STORAGE(e, name, kind, size, ch, ctype)                                   \
    template <> struct ga_storage<e> {                                                 \
        typedef ctype type;                                                            \
    };
GA_DTYPES(GA_X_STORAGE)
#undef GA_X_STORAGE

/* Complex accumulators (the storage structs are plain data: fine in shared memory). */
typedef ga_complex64_storage ga_cf;
typedef ga_complex128_storage ga_cd;

/* Element loads and stores: one access of the element's width (its parts' for
 * complex), since every array operand a kernel gets is element-aligned (GA_K_ELEMENT
 * in ga_elementwise_math.h says why, and the emulator checks it). */
template <int DT>
static GA_HD inline typename ga_storage<DT>::type
ga_ld(const char *p)
{
    typedef typename ga_storage<DT>::type T;
    T v;
    memcpy(&v, GA_K_ELEMENT(p, alignof(T)), sizeof(v));
    return v;
}

template <class T>
static GA_HD inline void
ga_st(char *p, T v)
{
    memcpy(GA_K_ELEMENT(p, alignof(T)), &v, sizeof(v));
}

/* The real part of element p of dtype DT as a double (float16 decoded). */
template <int DT>
static GA_HD inline double
ga_ld_real(const char *p)
{
    if constexpr (DT == GA_FLOAT16) {
        return (double)ga_half_to_float(ga_ld<DT>(p));
    }
    else if constexpr (DT == GA_COMPLEX64 || DT == GA_COMPLEX128) {
        return (double)ga_ld<DT>(p).re;
    }
    else {
        return (double)ga_ld<DT>(p);
    }
}

template <int DT>
static GA_HD inline double
ga_ld_imag(const char *p)
{
    if constexpr (DT == GA_COMPLEX64 || DT == GA_COMPLEX128) {
        return (double)ga_ld<DT>(p).im;
    }
    else {
        (void)p;
        return 0.0;
    }
}

/* Conversions through ga_elementwise_math.h's casts, so a reduction's or scan's element
 * conversion is exactly the elementwise cast (NumPy's unsafe casting). */
template <int DT> struct ga_cast_from;
#define GA_X_CASTS(e, name, kind, size, ch, ctype)                                     \
    template <> struct ga_cast_from<e> {                                               \
        static GA_HD void                                                              \
        to(int64_t *o, const char *p)                                                  \
        {                                                                              \
            ga_k_cast_##name##_int64((char *)o, p);                                    \
        }                                                                              \
        static GA_HD void                                                              \
        to(uint64_t *o, const char *p)                                                 \
        {                                                                              \
            ga_k_cast_##name##_uint64((char *)o, p);                                   \
        }                                                                              \
        static GA_HD void                                                              \
        to(float *o, const char *p)                                                    \
        {                                                                              \
            ga_k_cast_##name##_float32((char *)o, p);                                  \
        }                                                                              \
        static GA_HD void                                                              \
        to(double *o, const char *p)                                                   \
        {                                                                              \
            ga_k_cast_##name##_float64((char *)o, p);                                  \
        }                                                                              \
        static GA_HD void                                                              \
        to(ga_complex64_storage *o, const char *p)                                     \
        {                                                                              \
            ga_k_cast_##name##_complex64((char *)o, p);                                \
        }                                                                              \
        static GA_HD void                                                              \
        to(ga_complex128_storage *o, const char *p)                                    \
        {                                                                              \
            ga_k_cast_##name##_complex128((char *)o, p);                               \
        }                                                                              \
    };
GA_DTYPES(GA_X_CASTS)
#undef GA_X_CASTS

/* Element p of dtype DT converted to accumulator type A (one of int64_t, uint64_t,
 * float, double, ga_cf, ga_cd). */
template <int DT, class A>
static GA_HD inline A
ga_ld_as(const char *p)
{
    A v;
    ga_cast_from<DT>::to(&v, p);
    return v;
}

/* Store a value held as A into element p of runtime dtype `dt`, through
 * ga_elementwise_math.h's writers: the elementwise cast's rules exactly (integers wrap,
 * float -> int as NumPy on x86, ga_f64_to_<dt>), the same as the CPU's reductions and scans.
 * Called once per output element, so the switch costs nothing that matters. */
template <class A>
static GA_HD inline void
ga_st_as(char *p, int dt, A v)
{
    switch (dt) {
#define GA_X_ST_AS(e, name, kind, size, ch, ctype)                                     \
    case e:                                                                            \
        if constexpr (std::is_same<A, int64_t>::value) {                               \
            ga_w_i_##name(p, v);                                                       \
        }                                                                              \
        else if constexpr (std::is_same<A, uint64_t>::value) {                         \
            ga_w_u_##name(p, v);                                                       \
        }                                                                              \
        else if constexpr (std::is_same<A, ga_cf>::value ||                            \
                           std::is_same<A, ga_cd>::value) {                            \
            ga_w_c_##name(p, (double)v.re, (double)v.im);                              \
        }                                                                              \
        else {                                                                         \
            ga_w_d_##name(p, (double)v); /* float: exact in double */                  \
        }                                                                              \
        return;
        GA_DTYPES(GA_X_ST_AS)
#undef GA_X_ST_AS
    default:
        return;
    }
}

/* ---- a device-side error record (ga_k_errrec, ga_cuda.h) ----
 * A kernel that finds bad input (an out-of-range index) claims the record with an
 * atomic and writes what the host needs for the message. */

static GA_DEV inline void
ga_k_report(ga_k_errrec *rec, unsigned which, int64_t value, int64_t size)
{
    if (atomicAdd(&rec->count, 1u) == 0u) {
        rec->which = which;
        rec->value = value;
        rec->size = size;
    }
}

#endif
