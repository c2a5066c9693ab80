/* k_random.cu: random numbers on a CUDA device.
 *
 * A thread per Philox draw (grid-stride), a kernel per (distribution, dtype) chosen at
 * launch: one Philox4x32-10 evaluation gives the 4 / q elements of its four words
 * (ga_random_draw in ga_philox.h: four float32 uniforms, two float64 ones, ...),
 * stored with one vector store when the draw's elements are all in the request and
 * aligned. Each element depends on its position in the request alone, so the numbers
 * are the CPU backend's for the same (seed, counter), whatever the grid: bit-identical,
 * except that normal draws go through the device's log and cos (within their
 * documented ulp errors of the host's). The output is contiguous. Before issue 29: a
 * Philox evaluation per element using one or two of its words, and a switch on the
 * distribution and dtype per element.
 */
#include "k_common.cuh"

#include "ga_philox.h"

/* The store of a whole draw's P elements, B = P x itemsize bytes (2 to 16). */
template <int B> struct ga_draw_word;
template <> struct ga_draw_word<16> {
    typedef uint4 type;
    static GA_DEV type
    of(const uint32_t *u)
    {
        type w;
        w.x = u[0];
        w.y = u[1];
        w.z = u[2];
        w.w = u[3];
        return w;
    }
};
template <> struct ga_draw_word<8> {
    typedef uint2 type;
    static GA_DEV type
    of(const uint32_t *u)
    {
        type w;
        w.x = u[0];
        w.y = u[1];
        return w;
    }
};
template <> struct ga_draw_word<4> {
    typedef unsigned type;
    static GA_DEV type
    of(const uint32_t *u)
    {
        return u[0];
    }
};
template <> struct ga_draw_word<2> {
    typedef unsigned short type;
    static GA_DEV type
    of(const uint32_t *u)
    {
        return (unsigned short)u[0];
    }
};

/* Unsigned integers of 1, 2, 4 and 8 bytes: an element's bits. */
template <int S> struct ga_draw_bits;
template <> struct ga_draw_bits<1> {
    typedef uint8_t type;
};
template <> struct ga_draw_bits<2> {
    typedef uint16_t type;
};
template <> struct ga_draw_bits<4> {
    typedef uint32_t type;
};
template <> struct ga_draw_bits<8> {
    typedef uint64_t type;
};

/* The descriptor travels by value (no host pointer is dereferenced on the device). */
template <int DIST, int DT>
__global__ void
k_random(const GA_GRID_CONSTANT ga_random_desc call)
{
    /* a call captured into a graph reads the generator's state of its launch
     * (ga_backend.h); the copy's fields live in registers, as the parameter's do */
    ga_random_desc r = call;
    if (call.state != nullptr) {
        r.seed = call.state[0];
        r.counter = call.counter + call.state[1];
    }
    constexpr int Q = DIST == GA_RAND_NORMAL     ? (DT == GA_FLOAT64 ? 4 : 2)
                      : DIST == GA_RAND_INTEGERS ? 2
                      : DT == GA_FLOAT64         ? 2
                                                 : 1;
    constexpr int P = 4 / Q;
    constexpr int SIZE = (int)sizeof(typename ga_storage<DT>::type);
    typedef typename ga_storage<DT>::type T;
    typedef typename ga_draw_bits<SIZE>::type U;
    typedef ga_draw_word<P * SIZE> W;
    const int64_t draws = ga_random_draws(&r);
    for (int64_t g = ga_gtid(); g < draws; g += ga_gstride()) {
        /* the draw's elements, each in a variable of its own type, packed into 32-bit
         * words by shifts: written as bytes into one vector-typed buffer (8-byte
         * pieces, read back as 16), they went through local memory */
        T buf[P];
        const int64_t e0 = ga_random_draw(&r, DIST, DT, g, (char *)buf);
        char *at = r.out + e0 * SIZE;
        if (e0 >= 0 && e0 + P <= r.n && (uintptr_t)at % sizeof(typename W::type) == 0) {
            uint32_t u[(P * SIZE + 3) / 4] = {};
#pragma unroll
            for (int k = 0; k < P; k++) {
                U b;
                memcpy(&b, &buf[k], SIZE);
                if constexpr (SIZE == 8) {
                    u[2 * k] = (uint32_t)b;
                    u[2 * k + 1] = (uint32_t)((uint64_t)b >> 32);
                }
                else {
                    u[k * SIZE / 4] |= (uint32_t)b << (8 * (k * SIZE % 4));
                }
            }
            ga_st_vec((typename W::type *)at, W::of(u));
            continue;
        }
#pragma unroll
        for (int k = 0; k < P; k++) {
            if (e0 + k >= 0 && e0 + k < r.n) {
                memcpy(GA_K_ELEMENT(r.out + (e0 + k) * SIZE, SIZE), &buf[k], SIZE);
            }
        }
    }
}

typedef void (*ga_random_kernel)(ga_random_desc);

static ga_random_kernel
ga_random_kernel_for(int dist, int dtype)
{
    switch (dist * 64 + dtype) {
#define GA_X_RAND_FLOAT(DIST)                                                          \
    case DIST * 64 + GA_FLOAT16:                                                       \
        return k_random<DIST, GA_FLOAT16>;                                             \
    case DIST * 64 + GA_FLOAT32:                                                       \
        return k_random<DIST, GA_FLOAT32>;                                             \
    case DIST * 64 + GA_FLOAT64:                                                       \
        return k_random<DIST, GA_FLOAT64>;
        GA_X_RAND_FLOAT(GA_RAND_UNIFORM)
        GA_X_RAND_FLOAT(GA_RAND_NORMAL)
#undef GA_X_RAND_FLOAT
#define GA_X_RAND_INT(e)                                                               \
    case GA_RAND_INTEGERS * 64 + e:                                                    \
        return k_random<GA_RAND_INTEGERS, e>;
        GA_X_RAND_INT(GA_INT8)
        GA_X_RAND_INT(GA_INT16)
        GA_X_RAND_INT(GA_INT32)
        GA_X_RAND_INT(GA_INT64)
        GA_X_RAND_INT(GA_UINT8)
        GA_X_RAND_INT(GA_UINT16)
        GA_X_RAND_INT(GA_UINT32)
        GA_X_RAND_INT(GA_UINT64)
#undef GA_X_RAND_INT
    default:
        return nullptr;
    }
}

extern "C" int
ga_cuda_random(int dev, const ga_random_desc *r)
{
    ga_random_kernel kernel = ga_random_dtype_ok(r->dist, r->dtype)
                                  ? ga_random_kernel_for(r->dist, r->dtype)
                                  : nullptr;
    if (kernel == nullptr) {
        return ga_error(GA_ERR_TYPE, "random: distribution %d cannot produce %s",
                        (int)r->dist, ga_k_dtype_name(r->dtype));
    }
    if (r->n <= 0) {
        return GA_OK;
    }
    /* with r->state the counter's base is known only on the device, and the call may
     * take one draw more than the grid is sized for: the grid-stride loop covers it */
    unsigned grid, block;
    cudaStream_t stream;
    int st = ga_k_setup(dev, ga_random_draws(r), &grid, &block, &stream);
    if (st != GA_OK) {
        return st;
    }
    GA_LAUNCH(kernel, grid, block, 0, stream, *r);
    GA_CUDA_TRY(cudaGetLastError());
    return GA_OK;
}
