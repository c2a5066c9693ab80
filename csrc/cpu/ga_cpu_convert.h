/* ga_cpu_convert.h: strided runs of any dtype to and from a working buffer of one wide
 * type (double, int64, uint64, complex double, a nonzero flag), for the CPU loops that
 * compute in a working type: reductions and scans (ga_cpu_reduce.c) and the portable
 * GEMM (ga_cpu_gemm.c). A run is n elements `s` bytes apart, at any alignment; one
 * switch per run, outside the element loop. C only (the CPU backend).
 *
 * Every conversion goes through the shared casts of ga_elementwise_math.h
 * (GA_K_READ_<dtype> reads an element and hands it to the writer ga_w_<i|u|d|c>_<dtype>
 * of the target), the same rule the CUDA kernels and astype use: floats to integers as
 * NumPy on x86 (ga_f64_to_<dt>), integers wrap. One case per dtype, expanded from
 * GA_DTYPES. */
#ifndef GA_CPU_CONVERT_H
#define GA_CPU_CONVERT_H

#include <stdint.h>

#include "ga_elementwise_math.h"

/* Extra level so TO is expanded before GA_K_READ_<name> pastes it into a writer name. */
#define GA_CV_READ_AS(name, in, to, o) GA_CV_READ_AS_(name, in, to, o)
#define GA_CV_READ_AS_(name, in, to, o) GA_K_READ_##name(0, in, to, o)
#define GA_CV_READ_CASE(e, name, kind, size, ch, ctype)                                \
    case e:                                                                            \
        for (int64_t i = 0; i < n; i++) {                                              \
            GA_CV_READ_AS(name, p + i * s, TO, (char *)&out[i]);                       \
        }                                                                              \
        break;

static inline void
ga_cv_load_f64(int dt, const char *p, int64_t s, int64_t n, double *out)
{
#define TO float64
    switch (dt) {
        GA_DTYPES(GA_CV_READ_CASE)
    }
#undef TO
}

/* `is_unsigned`: the working type is uint64 (its bits kept in the int64 slots), so a
 * float takes uint64's side of the float -> int rule; integers have the same bits either way. */
static inline void
ga_cv_load_i64(int dt, const char *p, int64_t s, int64_t n, int64_t *out, int is_unsigned)
{
    if (is_unsigned) {
#define TO uint64
        switch (dt) {
            GA_DTYPES(GA_CV_READ_CASE)
        }
#undef TO
        return;
    }
#define TO int64
    switch (dt) {
        GA_DTYPES(GA_CV_READ_CASE)
    }
#undef TO
}

static inline void
ga_cv_load_c128(int dt, const char *p, int64_t s, int64_t n, ga_c128 *out)
{
#define TO complex128
    switch (dt) {
        GA_DTYPES(GA_CV_READ_CASE)
    }
#undef TO
}

/* truth: nonzero (NaN is true; complex: either part nonzero) */
static inline void
ga_cv_load_nz(int dt, const char *p, int64_t s, int64_t n, uint8_t *out)
{
#define TO bool
    switch (dt) {
        GA_DTYPES(GA_CV_READ_CASE)
    }
#undef TO
}
#undef GA_CV_READ_CASE

#define GA_CV_STORE_CASE(e, name, kind, size, ch, ctype)                               \
    case e:                                                                            \
        for (int64_t i = 0; i < n; i++) {                                              \
            WRITE(name, p + i * s, in[i]);                                             \
        }                                                                              \
        break;

static inline void
ga_cv_store_f64(int dt, char *p, int64_t s, int64_t n, const double *in)
{
#define WRITE(name, o, v) ga_w_d_##name(o, v)
    switch (dt) {
        GA_DTYPES(GA_CV_STORE_CASE)
    }
#undef WRITE
}

/* `is_unsigned`: the bits hold a uint64 (matters only for conversion to floats). */
static inline void
ga_cv_store_i64(int dt, char *p, int64_t s, int64_t n, const int64_t *in, int is_unsigned)
{
    if (is_unsigned) {
#define WRITE(name, o, v) ga_w_u_##name(o, (uint64_t)(v))
        switch (dt) {
            GA_DTYPES(GA_CV_STORE_CASE)
        }
#undef WRITE
        return;
    }
#define WRITE(name, o, v) ga_w_i_##name(o, v)
    switch (dt) {
        GA_DTYPES(GA_CV_STORE_CASE)
    }
#undef WRITE
}

static inline void
ga_cv_store_c128(int dt, char *p, int64_t s, int64_t n, const ga_c128 *in)
{
#define WRITE(name, o, v) ga_w_c_##name(o, (v).re, (v).im)
    switch (dt) {
        GA_DTYPES(GA_CV_STORE_CASE)
    }
#undef WRITE
}
#undef GA_CV_STORE_CASE

#endif
