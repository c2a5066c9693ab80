/* ga_philox.h: counter-based random numbers shared by the CPU and CUDA backends.
 *
 * Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC11):
 * a keyed bijection of 128-bit counters. Element i of a request never depends on any
 * other element, so a CPU loop and a CUDA grid produce bit-identical numbers in any
 * order and any split between threads.
 *
 * The fixed mapping (every backend calls ga_random_draw, so it cannot drift):
 *   stream   the 32-bit words of the draws D = 0, 1, 2, ...: word W is word W % 4 of
 *            draw W / 4 (a counter of 64 bits; past 2^64 words, bit 62 of D marks the
 *            wrap), draw D being philox4x32_10({lo32(D), hi32(D), 0, 0}, k)
 *   key      k = {lo32(desc->seed), hi32(desc->seed)}
 *   element  element i of a request takes q = ga_random_words(dist, dtype) words,
 *            w0..w(q-1) = words desc->counter + i q ..; desc->counter is a multiple
 *            of q (the core rounds the state up), so an element never spans two
 *            draws, and a draw feeds 4 / q elements: four float32 uniforms, two
 *            float64 uniforms, two float32 normals, one float64 normal (issue 29:
 *            a draw per element used one or two of its four words)
 *   float32  u = (w0 >> 8) * 2^-24                               in [0, 1)
 *   float64  u = (((w0 << 32) | w1) >> 11) * 2^-53                in [0, 1)
 *   float16  the float32 value, converted (round to nearest even)
 *   uniform  low + (high - low) * u, a multiply and an add each rounded (never fused),
 *            in double for float64 and in float for float32 and float16 (a GPU's
 *            double units run at 1/2 to 1/64 of its float units), with low and
 *            high - low rounded to float first; a result that rounded up to `high`
 *            is replaced by the next value below it (the interval stays half open)
 *   normal   Box-Muller, cos branch. float64: in double, u1 = 1 - u53(w0, w1) in
 *            (0, 1], u2 = u53(w2, w3); float32 and float16: in float, u1 = 1 - u24(w0),
 *            u2 = u24(w1) (tails reach 5.8 sigma instead of 8.6, as curand's float
 *            normals); z = sqrt(-2 ln u1) cos(2 pi u2); mean + std * z, cast
 *   integers v = (w0 << 32) | w1, r = hi - lo (as uint64, hi > lo);
 *            lo + floor(v * r / 2^64) (Lemire's multiply-shift without rejection).
 *            Small documented bias: each value's probability differs from 1/r by
 *            less than 2^-64 (irrelevant for any r below 2^40).
 * Floating outputs of INTEGERS and bool are not produced: the core validates the
 * (dist, dtype) pair with ga_random_dtype_ok before calling a backend. The state is
 * the word counter: a request of n elements advances it from roundup(counter, q) by
 * n q, so two requests of one kind give the numbers of one request of both sizes.
 *
 * Everything here compiles as C11, as CUDA C++ (nvcc, device and host) and as host
 * C++: no designated initialisers, no compound literals, no C-only keywords.
 */
#ifndef GA_PHILOX_H
#define GA_PHILOX_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ga_backend.h"
#include "ga_config.h"
#include "ga_dtype.h"
#include "ga_half.h"
#include "ga_elementwise_math.h"

#define GA_PHILOX_M0 0xD2511F53u
#define GA_PHILOX_M1 0xCD9E8D57u
#define GA_PHILOX_W0 0x9E3779B9u
#define GA_PHILOX_W1 0xBB67AE85u

typedef struct {
    uint32_t v[4];
} ga_philox_ctr;

/* The four output words for counter `ctr` under key (k0, k1). */
static inline GA_HD ga_philox_ctr
ga_philox4x32_10(ga_philox_ctr ctr, uint32_t k0, uint32_t k1)
{
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)GA_PHILOX_M0 * ctr.v[0];
        uint64_t p1 = (uint64_t)GA_PHILOX_M1 * ctr.v[2];
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        ga_philox_ctr next;
        next.v[0] = hi1 ^ ctr.v[1] ^ k0;
        next.v[1] = lo1;
        next.v[2] = hi0 ^ ctr.v[3] ^ k1;
        next.v[3] = lo0;
        ctr = next;
        k0 += GA_PHILOX_W0;
        k1 += GA_PHILOX_W1;
    }
    return ctr;
}

/* Draw d of the stream of `seed`. */
static inline GA_HD ga_philox_ctr
ga_philox_draw(uint64_t seed, uint64_t d)
{
    ga_philox_ctr ctr;
    ctr.v[0] = (uint32_t)d;
    ctr.v[1] = (uint32_t)(d >> 32);
    ctr.v[2] = 0u;
    ctr.v[3] = 0u;
    return ga_philox4x32_10(ctr, (uint32_t)seed, (uint32_t)(seed >> 32));
}

/* 32-bit words an element of (dist, dtype) takes from the stream: 1, 2 or 4. */
static inline GA_HD int
ga_random_words(int dist, int dtype)
{
    if (dist == GA_RAND_NORMAL) {
        return dtype == GA_FLOAT64 ? 4 : 2;
    }
    if (dist == GA_RAND_INTEGERS) {
        return 2;
    }
    return dtype == GA_FLOAT64 ? 2 : 1;
}

/* Bytes of an element of `dtype` (the core's table is not device code). */
static inline GA_HD int
ga_random_size(int dtype)
{
    switch (dtype) {
#define GA_X_RAND_SIZE(e, name, kind, size, ch, ctype)                                 \
    case e:                                                                            \
        return size;
        GA_DTYPES(GA_X_RAND_SIZE)
#undef GA_X_RAND_SIZE
    default:
        return 1;
    }
}

/* The draw that holds word `counter + k` (k < 2^63): bit 62 set past the 64-bit wrap. */
static inline GA_HD uint64_t
ga_random_draw_of(uint64_t counter, uint64_t k)
{
    uint64_t w = counter + k;
    return (w >> 2) | (w < counter ? (uint64_t)1 << 62 : 0u);
}

static inline GA_HD float
ga_philox_u24(uint32_t w)
{
    return (float)(w >> 8) * (1.0f / 16777216.0f);
}

static inline GA_HD double
ga_philox_u53(uint32_t hi, uint32_t lo)
{
    uint64_t v = ((uint64_t)hi << 32) | lo;
    return (double)(v >> 11) * (1.0 / 9007199254740992.0);
}

/* High 64 bits of a * b without a 128-bit type (nvcc device code has none in C). */
static inline GA_HD uint64_t
ga_mulhi64(uint64_t a, uint64_t b)
{
    uint64_t a_lo = (uint32_t)a, a_hi = a >> 32;
    uint64_t b_lo = (uint32_t)b, b_hi = b >> 32;
    uint64_t lolo = a_lo * b_lo;
    uint64_t hilo = a_hi * b_lo;
    uint64_t lohi = a_lo * b_hi;
    uint64_t hihi = a_hi * b_hi;
    uint64_t mid = (lolo >> 32) + (uint32_t)hilo + (uint32_t)lohi;
    return hihi + (hilo >> 32) + (lohi >> 32) + (mid >> 32);
}

/* Can `dist` produce `dtype`? UNIFORM/NORMAL: float16/32/64. INTEGERS: integer types. */
static inline GA_HD int
ga_random_dtype_ok(int dist, int dtype)
{
    if (dist == GA_RAND_UNIFORM || dist == GA_RAND_NORMAL) {
        return dtype == GA_FLOAT16 || dtype == GA_FLOAT32 || dtype == GA_FLOAT64;
    }
    if (dist == GA_RAND_INTEGERS) {
        return dtype == GA_INT8 || dtype == GA_INT16 || dtype == GA_INT32 ||
               dtype == GA_INT64 || dtype == GA_UINT8 || dtype == GA_UINT16 ||
               dtype == GA_UINT32 || dtype == GA_UINT64;
    }
    return 0;
}

/* The half below h (h finite, not -inf); h's sign decides the direction of the bits. */
static inline GA_HD uint16_t
ga_half_step_down(uint16_t h)
{
    if ((h & 0x7fffu) == 0) {
        return 0x8001u; /* below +-0: the smallest negative subnormal */
    }
    return (h & 0x8000u) ? (uint16_t)(h + 1u) : (uint16_t)(h - 1u);
}

/* a * b + c rounded twice, never fused into one FMA: nvcc contracts a*b+c into an FMA
 * on the device by default, which would make GPU numbers differ from the CPU's in the
 * last bit. (The device's log and cos may still differ from the host's libm by an ulp
 * for normals; uniform numbers are bit-identical.) */
static inline GA_HD double
ga_philox_madd(double a, double b, double c)
{
#if defined(__CUDA_ARCH__)
    return __dadd_rn(__dmul_rn(a, b), c);
#else
    return a * b + c;
#endif
}

static inline GA_HD float
ga_philox_maddf(float a, float b, float c)
{
#if defined(__CUDA_ARCH__)
    return __fadd_rn(__fmul_rn(a, b), c);
#else
    return a * b + c;
#endif
}

/* Write the element of request `r` whose words are w[0..q) to `out` (the element's
 * address, dtype `dtype`): element-aligned on a GPU (a new array), any address on the
 * CPU. `dist` and `dtype` are r's, passed apart so that a kernel for one (dist, dtype)
 * passes constants and the branches below fold away. */
static inline GA_HD void
ga_random_value(const ga_random_desc *r, int dist, int dtype, const uint32_t *w,
                char *out)
{
    if (dist == GA_RAND_INTEGERS) {
        uint64_t range = (uint64_t)r->hi - (uint64_t)r->lo;
        uint64_t v = ((uint64_t)w[0] << 32) | w[1];
        uint64_t x = (uint64_t)r->lo + ga_mulhi64(v, range);
        /* the integer dtypes' writers wrap x into the dtype (one case per dtype) */
        switch (dtype) {
#define GA_X_RAND_INT(e, name, kind, size, ch, ctype)                                  \
    case e:                                                                            \
        if (kind == GA_KIND_INT || kind == GA_KIND_UINT) {                             \
            ga_w_u_##name(out, x);                                                     \
        }                                                                              \
        break;
            GA_DTYPES(GA_X_RAND_INT)
#undef GA_X_RAND_INT
        default:
            break;
        }
        return;
    }

    int clamp = dist == GA_RAND_UNIFORM && r->b > r->a;
    if (dtype == GA_FLOAT64) {
        double v;
        if (dist == GA_RAND_NORMAL) {
            const double two_pi = 6.283185307179586476925286766559;
            double u1 = 1.0 - ga_philox_u53(w[0], w[1]);
            double u2 = ga_philox_u53(w[2], w[3]);
            double z = sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
            v = ga_philox_madd(r->b, z, r->a);
        }
        else {
            v = ga_philox_madd(r->b - r->a, ga_philox_u53(w[0], w[1]), r->a);
        }
        if (clamp && v >= r->b) {
            v = nextafter(r->b, r->a);
        }
        memcpy(GA_K_ELEMENT(out, sizeof(v)), &v, sizeof(v));
        return;
    }
    float f;
    if (dist == GA_RAND_NORMAL) {
        const float two_pi = 6.283185307179586476925286766559f;
        float u1 = 1.0f - ga_philox_u24(w[0]);
        float u2 = ga_philox_u24(w[1]);
        float z = sqrtf(-2.0f * logf(u1)) * cosf(two_pi * u2);
        f = ga_philox_maddf((float)r->b, z, (float)r->a);
    }
    else {
        f = ga_philox_maddf((float)(r->b - r->a), ga_philox_u24(w[0]), (float)r->a);
    }
    if (dtype == GA_FLOAT32) {
        if (clamp && (double)f >= r->b) {
            f = nextafterf((float)r->b, (float)r->a);
            if ((double)f >= r->b) { /* high itself rounded up when cast */
                f = nextafterf(f, (float)r->a);
            }
        }
        memcpy(GA_K_ELEMENT(out, sizeof(f)), &f, sizeof(f));
    }
    else { /* GA_FLOAT16 */
        uint16_t h = ga_float_to_half(f);
        if (clamp) {
            while ((double)ga_half_to_float(h) >= r->b && (h & 0x7fffu) < 0x7c00u) {
                h = ga_half_step_down(h);
            }
        }
        memcpy(GA_K_ELEMENT(out, sizeof(h)), &h, sizeof(h));
    }
}

/* Elements per draw of request r (4 / its words per element), and the slot of its
 * element 0 in the first draw it uses. A request's draws are numbered g = 0, 1, ...
 * from there: draw g holds elements g P - h .. g P - h + P - 1 (those in [0, n)). */
static inline GA_HD int
ga_random_per_draw(const ga_random_desc *r)
{
    return 4 / ga_random_words(r->dist, r->dtype);
}

static inline GA_HD int64_t
ga_random_draws(const ga_random_desc *r)
{
    const int per = ga_random_per_draw(r);
    const int64_t h = (int64_t)(r->counter % 4u) / (4 / per);
    return (r->n + h + per - 1) / per;
}

/* Draw g of request r (see ga_random_per_draw): one Philox evaluation, its elements
 * written to buf (P of them, packed; those outside [0, n) too, never to be stored).
 * Returns the index of buf's first element in the request (negative in draw 0 when
 * the request starts mid-draw). `dist`/`dtype`: r's, as for ga_random_value. */
static inline GA_HD int64_t
ga_random_draw(const ga_random_desc *r, int dist, int dtype, int64_t g, char *buf)
{
    const int q = ga_random_words(dist, dtype), per = 4 / q;
    const int64_t h = (int64_t)(r->counter % 4u) / q;
    const int64_t e0 = g * per - h;
    /* the draw of e0's words (e0 may be negative: counter + e0 q is then counter's
     * own draw, word counter % 4 - ...) */
    const uint64_t d = ga_random_draw_of(r->counter - (uint64_t)(h * q), (uint64_t)(g * 4));
    const ga_philox_ctr w = ga_philox_draw(r->seed, d);
    const int size = ga_random_size(dtype);
    for (int k = 0; k < per; k++) {
        ga_random_value(r, dist, dtype, w.v + k * q, buf + k * size);
    }
    return e0;
}

/* Write element i of request `r` to `out` (one Philox evaluation for one element; the
 * backends' loops go a draw at a time with ga_random_draw). */
static inline GA_HD void
ga_random_element(const ga_random_desc *r, int64_t i, char *out)
{
    const int q = ga_random_words(r->dist, r->dtype);
    const uint64_t word = (uint64_t)i * (uint64_t)q;
    const ga_philox_ctr w = ga_philox_draw(r->seed, ga_random_draw_of(r->counter, word));
    ga_random_value(r, r->dist, r->dtype, w.v + (r->counter + word) % 4u, out);
}

#endif
