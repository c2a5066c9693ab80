/* ga_half.h: IEEE binary16 <-> float conversion, bit-exact, round-to-nearest-even.
 * Written by hand (rather than _Float16) for the C core and the CPU kernels, where
 * compilers and CPUs differ in half support, and for the emulated CUDA build. In nvcc
 * device code each conversion is the hardware's (cuda_fp16.h: one F2F instruction
 * instead of ~20 integer ones); both round to nearest even, so finite values, zeros and
 * infinities convert bit-identically (a NaN stays a NaN; its payload may differ). */
#ifndef GA_HALF_H
#define GA_HALF_H

#include <stdint.h>
#include <string.h>

#include "ga_config.h"

#if defined(__CUDA_ARCH__)
#include <cuda_fp16.h>
#endif

static inline GA_HD float
ga_half_to_float(uint16_t h)
{
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(h));
#else
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        }
        else { /* subnormal: normalise */
            exp = 127 - 15 + 1;
            while ((mant & 0x400u) == 0) {
                mant <<= 1;
                exp--;
            }
            mant &= 0x3ffu;
            bits = sign | (exp << 23) | (mant << 13);
        }
    }
    else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13); /* inf / nan */
    }
    else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
#endif
}

static inline GA_HD uint16_t
ga_float_to_half(float f)
{
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__float2half_rn(f));
#else
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) { /* inf or nan (keep nan quiet and non-zero) */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0));
    }
    if (absx >= 0x477ff000u) { /* rounds to >= 65520: overflow to inf */
        return (uint16_t)(sign | 0x7c00u);
    }
    if (absx < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
        if (absx < 0x33000000u) { /* < 2^-25: rounds to zero */
            return (uint16_t)sign;
        }
        uint32_t e = absx >> 23;
        uint32_t m = (absx & 0x7fffffu) | 0x800000u;
        /* exact: value = m * 2^(e-150); in units of 2^-24: m * 2^(e-126) */
        uint32_t s = 126 - e; /* right shift amount, 1..24 */
        uint32_t q = m >> s;
        uint32_t rem = m & ((1u << s) - 1);
        uint32_t halfway = 1u << (s - 1);
        if (rem > halfway || (rem == halfway && (q & 1u))) {
            q++;
        }
        return (uint16_t)(sign | q);
    }
    /* normal: rebias exponent, round mantissa from 23 to 10 bits (nearest even) */
    uint32_t r = absx - 0x38000000u; /* exponent 127 -> 15 */
    uint32_t q = r >> 13;
    uint32_t rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) {
        q++;
    }
    return (uint16_t)(sign | q);
#endif
}

static inline GA_HD uint16_t
ga_double_to_half(double d)
{
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__double2half(d));
#else
    /* double -> float -> half would round twice. Rounding to float with
     * round-to-odd first makes the second rounding exact. */
    if (d != d) {
        return ga_float_to_half((float)d);
    }
    int neg = d < 0;
    double a = neg ? -d : d;
    float f = (float)a;
    if ((double)f != a) {
        uint32_t bits;
        memcpy(&bits, &f, sizeof(bits));
        if ((bits & 1u) == 0) {
            bits = (double)f < a ? bits + 1 : bits - 1;
            memcpy(&f, &bits, sizeof(f));
        }
    }
    return (uint16_t)(ga_float_to_half(f) | (neg ? 0x8000u : 0));
#endif
}

#endif
