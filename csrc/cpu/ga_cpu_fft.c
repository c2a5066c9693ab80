/* ga_cpu_fft.c: the CPU FFT behind the CPU, simulated-GPU and emulated-CUDA backends.
 *
 * A plan serves every line of a call (and, through the CPU backend's cache in
 * ga_cpu_fft_plans.c, later calls of the same length):
 *   - sizes whose prime factors are all <= GA_FFT_MAX_RADIX: a mixed-radix Stockham
 *     autosort transform, decimation in frequency (the passes pocketfft and
 *     Van Loan's book describe): one pass per radix, each reading and writing the
 *     whole line in order between the output and a work line, with the twiddles of
 *     each pass in a table of their own, in the order the pass reads them. Radices
 *     4, 2, 3 and 5 have their own butterflies; any other odd prime up to
 *     GA_FFT_MAX_RADIX uses a generic O(r^2) one (r <= 31 costs less than
 *     Bluestein's three transforms of length >= 2n);
 *   - any other size (a large prime factor): Bluestein's chirp-z, a convolution
 *     computed with an FFT of length M >= 2n - 1 whose factors are 2, 3 and 5 (the
 *     smallest such M: up to twice smaller than the next power of two, as
 *     pocketfft's good_size picks), so every n is O(n log n).
 * Everything is computed in double precision, complex64 lines included (loaded into
 * a double scratch line and rounded once at the end): twiddles exp(-2 pi i j / n)
 * come from one table of n entries in double, the chirp from k^2 mod 2n in exact
 * integer arithmetic (k^2 itself would lose bits beyond 2^53). The error then grows
 * like pocketfft's, about eps * log n relative to the norm of the result.
 *
 * Real lines of an even length n are complex lines of n/2 (the points in pairs) with
 * a pass that separates the transforms of the even and odd points; a batch of them
 * runs four lines side by side in SIMD lanes (real_lanes), with the same operations
 * in the same order as one line, so a line has the same bits either way. The passes
 * are one template for both (ga_cpu_fft_pass.h), compiled for AVX2 and baseline
 * x86-64 (GA_FFT_CLONES).
 *
 * No dependency on the thread pool or the host cache: the emulated CUDA plugin
 * (csrc/cuda/emu/ga_cuda_emu_cufft.cpp) links this file alone to back its cufftExec*
 * calls (ga_cpu_fft: a plan per call, one thread). The CPU backend keeps plans and
 * spreads the work over its pool (ga_cpu_fft_plans.c), passing that pool in as a
 * function.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ga_cpu.h"
#include "ga_cpu_fft_impl.h"

/* The smallest 2^a 3^b 5^c >= n (n >= 1): lengths the radix-4, 2, 3 and 5
 * butterflies take with no generic radix, for Bluestein's convolution. */
static int64_t
smooth_size(int64_t n)
{
    int64_t best = 1;
    while (best < n) {
        best *= 2; /* the power of two: an upper bound */
    }
    for (int64_t p5 = 1; p5 < best; p5 *= 5) {
        for (int64_t p35 = p5; p35 < best; p35 *= 3) {
            int64_t m = p35;
            while (m < n) {
                m *= 2;
            }
            if (m < best) {
                best = m;
            }
        }
    }
    return best;
}
#include "ga_error.h"

/* Largest prime factor served by the mixed-radix path (see above). */
#define GA_FFT_MAX_RADIX 31
/* A single line at least this long splits each pass between threads, when a pool is
 * given. */
#define GA_FFT_PARALLEL_MIN (1 << 14)

/* The hot loops (passes, the real transforms' pre- and post-processing, loads and
 * stores) are compiled for AVX2 and baseline x86-64, the loader picking one at run
 * time (GCC function multiversioning, as ga_cpu_elementwise.c). "avx2", not
 * "arch=x86-64-v3": that level has FMA, and GCC 12 forms vfmaddsub from a complex
 * multiply even under -ffp-contract=off, which would give results that depend on the
 * CPU (docs/DESIGN.md, "One arithmetic"). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) &&                 \
    defined(__linux__)
#define GA_FFT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GA_FFT_CLONES
#endif

typedef struct {
    double re, im;
} cplx;

typedef struct fft_plan {
    int64_t n;
    int nfact;
    int64_t fact[64]; /* radices, outermost first; product n (direct plans) */
    /* Twiddles by level (direct plans): level f (radix r, m = its sub-transforms'
     * length, s = the product of the radices outside it) reads
     * tw[off[f] + k (r - 1) + q - 1] = w_n^(q k s), q = 1..r-1, k < m, in the order
     * its butterflies use them, then, for a generic radix, the r roots w_r^j. One
     * table of w_n^j read at the stride q k s missed the cache on every butterfly of
     * the inner levels once n outgrew it (8 MiB of table for n = 2^19). About n
     * entries in all, as the single table had. */
    cplx *tw;
    int64_t tw_len;
    int64_t off[64];
    /* Bluestein (bluestein_m > 0) */
    int64_t bluestein_m;
    cplx *chirp;          /* chirp[k] = exp(-pi i k^2 / n), k < n */
    cplx *kernel_hat;     /* FFT_M of the wrapped conj(chirp), divided by M */
    struct fft_plan *sub; /* direct plan of length M */
    /* Real plans (R2C and C2R of an even n): the n real points as n/2 complex ones,
     * z[k] = x[2k] + i x[2k + 1], through the complex plan of n/2, and one pass that
     * separates the transforms of the even and odd points: half the work of a complex
     * transform of length n. */
    struct fft_plan *half; /* the complex plan of n/2 */
    cplx *rtw;             /* rtw[k] = exp(-2 pi i k / n), k <= n/2 */
} fft_plan;

/* Lanes: GA_FFT_LANES lines of a batch side by side, element j of each in one vcplx
 * (the real parts in one vector, the imaginary parts in another), so that a pass does
 * the lines' butterflies in SIMD with no shuffles: a complex multiply is 4 multiplies
 * and 2 adds for 4 lines, where one line, a complex double per vector, needs about as
 * many instructions with shuffles for that one line. A twiddle is the same for every
 * lane (a broadcast). */
#if defined(__GNUC__) || defined(__clang__)
#define GA_FFT_SIMD 1
#define GA_FFT_LANES 4
/* 16-byte aligned, not 32: GCC notes on every build that passing 32-byte aligned
 * arguments changed ABI in GCC 4.6 (these are never passed: always inlined), and
 * AVX's unaligned loads cost nothing on aligned data (real_lanes aligns the lanes). */
typedef double v4d __attribute__((vector_size(32), aligned(16)));
typedef struct {
    v4d re, im;
} vcplx;
#else
#define GA_FFT_SIMD 0
#endif
/* The longest half line that lanes take. Their scratch is three lines of lanes, 192
 * bytes per point of the half line: 12 MiB at 2^16, which glibc's malloc keeps for
 * the next call (an allocation over its 32 MiB mmap threshold is mapped and faulted
 * in afresh each time: rfft of 4 lines of 10^6 float64 in lanes took 2.4 times
 * pocketfft's time, one at a time 0.84). Batches of rfft in lanes, one core, 2 MiB of
 * input: 0.6-0.7 of pocketfft's time for float64 lines of 2^14 to 2^17 points, where
 * one at a time took 1.2-1.7. */
#define GA_FFT_LANES_MAX (1 << 16)

static inline cplx
cmul(cplx a, cplx b)
{
    return (cplx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

static inline cplx
cadd(cplx a, cplx b)
{
    return (cplx){a.re + b.re, a.im + b.im};
}

static inline cplx
csub(cplx a, cplx b)
{
    return (cplx){a.re - b.re, a.im - b.im};
}

static inline cplx
cscale(cplx a, double s)
{
    return (cplx){a.re * s, a.im * s};
}

/* -i * a (forward) or i * a (inverse) */
static inline cplx
rot(cplx a, int inv)
{
    return inv ? (cplx){-a.im, a.re} : (cplx){a.im, -a.re};
}

#if GA_FFT_SIMD
/* The same operations as above, lane by lane, always inlined (a call would pass
 * the vectors on the stack). */
#define GA_FFT_VOP static inline __attribute__((always_inline)) vcplx
GA_FFT_VOP
vadd(vcplx a, vcplx b)
{
    return (vcplx){a.re + b.re, a.im + b.im};
}

GA_FFT_VOP
vsub(vcplx a, vcplx b)
{
    return (vcplx){a.re - b.re, a.im - b.im};
}

GA_FFT_VOP
vscale(vcplx a, double s)
{
    return (vcplx){a.re * s, a.im * s};
}

GA_FFT_VOP
vrot(vcplx a, int inv)
{
    return inv ? (vcplx){-a.im, a.re} : (vcplx){a.im, -a.re};
}

/* as cmul(a, w) */
GA_FFT_VOP
vmulw(vcplx a, cplx w)
{
    return (vcplx){a.re * w.re - a.im * w.im, a.re * w.im + a.im * w.re};
}
#endif

/* w, conjugated for the inverse direction. */
static inline cplx
twiddle(const cplx *w, int64_t j, int inv)
{
    cplx t = w[j];
    if (inv) {
        t.im = -t.im;
    }
    return t;
}

static void exec_direct(const fft_plan *p, const cplx *in, cplx *out, int inv,
                        cplx *work, ga_fft_parallel_fn par);

/* Factor n into radices; returns the largest prime factor left over (1 if none). */
static int64_t
factor(int64_t n, fft_plan *p)
{
    p->nfact = 0;
    while (n % 4 == 0) {
        p->fact[p->nfact++] = 4;
        n /= 4;
    }
    for (int64_t r = 2; r <= GA_FFT_MAX_RADIX && n > 1; r++) {
        while (n % r == 0) {
            p->fact[p->nfact++] = r;
            n /= r;
        }
    }
    return n;
}

static int
is_generic(int64_t r)
{
    return r != 2 && r != 3 && r != 4 && r != 5;
}

/* The plan's twiddles by level (fft_plan.tw), gathered from a temporary table of
 * w_n^j, j < n. */
static int
level_twiddles(fft_plan *p)
{
    int64_t n = p->n, len = 0, s = 1;
    for (int f = 0; f < p->nfact; f++) {
        int64_t r = p->fact[f], m = n / (s * r);
        p->off[f] = len;
        len += m * (r - 1) + (is_generic(r) ? r : 0);
        s *= r;
    }
    cplx *w = malloc((size_t)n * sizeof *w);
    p->tw = malloc((size_t)(len > 0 ? len : 1) * sizeof *p->tw);
    if (w == NULL || p->tw == NULL) {
        free(w);
        return GA_ERR_NOMEM;
    }
    p->tw_len = len;
    /* When 4 divides n, a quarter of the table gives the rest exactly:
     * w^(j + n/4) = -i w^j, so three of every four sin/cos pairs (most of a plan's
     * cost for one line of a large n) become sign swaps. */
    int64_t q4 = n % 4 == 0 ? n / 4 : n;
    for (int64_t j = 0; j < q4; j++) {
        double a = -2.0 * M_PI * (double)j / (double)n;
        w[j] = (cplx){cos(a), sin(a)};
    }
    for (int64_t j = q4; j < n; j++) {
        cplx v = w[j - q4];
        w[j] = (cplx){v.im, -v.re};
    }
    s = 1;
    for (int f = 0; f < p->nfact; f++) {
        int64_t r = p->fact[f], m = n / (s * r);
        cplx *t = p->tw + p->off[f];
        for (int64_t k = 0; k < m; k++) {
            for (int64_t q = 1; q < r; q++) {
                t[k * (r - 1) + q - 1] = w[q * k * s]; /* q k s < r m s = n */
            }
        }
        if (is_generic(r)) {
            for (int64_t j = 0; j < r; j++) {
                t[m * (r - 1) + j] = w[j * (n / r)];
            }
        }
        s *= r;
    }
    free(w);
    return GA_OK;
}

static int
plan_new_complex(int64_t n, fft_plan **out)
{
    fft_plan *p = calloc(1, sizeof *p);
    if (p == NULL) {
        return ga_error(GA_ERR_NOMEM,
                        "fft: out of host memory for a plan of length %lld",
                        (long long)n);
    }
    p->n = n;
    if (factor(n, p) == 1) {
        if (level_twiddles(p) != GA_OK) {
            goto nomem;
        }
        *out = p;
        return GA_OK;
    }
    /* Bluestein: X[k] = chirp[k] * sum_j (x[j] chirp[j]) conj(chirp[k - j]), a
     * linear convolution of length 2n - 1, computed cyclically with M >= 2n - 1. */
    int64_t m = smooth_size(2 * n - 1);
    p->bluestein_m = m;
    p->chirp = malloc((size_t)n * sizeof *p->chirp);
    p->kernel_hat = calloc((size_t)m, sizeof *p->kernel_hat);
    cplx *b = calloc((size_t)(2 * m), sizeof *b); /* the kernel, then a work line */
    if (p->chirp == NULL || p->kernel_hat == NULL || b == NULL) {
        free(b);
        goto nomem;
    }
    uint64_t k2 = 0, two_n = 2 * (uint64_t)n; /* k^2 mod 2n, updated by 2k + 1 */
    for (int64_t k = 0; k < n; k++) {
        double a = -M_PI * (double)k2 / (double)n;
        p->chirp[k] = (cplx){cos(a), sin(a)};
        k2 = (k2 + 2 * (uint64_t)k + 1) % two_n;
    }
    for (int64_t k = 0; k < n; k++) {
        cplx c = {p->chirp[k].re, -p->chirp[k].im};
        b[k] = c;
        if (k > 0) {
            b[m - k] = c;
        }
    }
    int st = plan_new_complex(m, &p->sub);
    if (st != GA_OK) {
        free(b);
        ga_fft_plan_free(p);
        return st;
    }
    exec_direct(p->sub, b, p->kernel_hat, 0, b + m, NULL);
    free(b);
    for (int64_t k = 0; k < m; k++) {
        p->kernel_hat[k] = cscale(p->kernel_hat[k], 1.0 / (double)m);
    }
    *out = p;
    return GA_OK;
nomem:
    ga_fft_plan_free(p);
    return ga_error(GA_ERR_NOMEM, "fft: out of host memory for a plan of length %lld",
                    (long long)n);
}

void
ga_fft_plan_free(fft_plan *p)
{
    if (p == NULL) {
        return;
    }
    free(p->tw);
    free(p->chirp);
    free(p->kernel_hat);
    ga_fft_plan_free(p->sub);
    free(p->rtw);
    ga_fft_plan_free(p->half);
    free(p);
}

int
ga_fft_plan_new(int64_t n, int real, fft_plan **out)
{
    if (!real || n % 2 != 0) {
        return plan_new_complex(n, out);
    }
    fft_plan *p = calloc(1, sizeof *p);
    int64_t h = n / 2;
    if (p == NULL || (p->rtw = malloc((size_t)(h + 1) * sizeof *p->rtw)) == NULL) {
        free(p);
        return ga_error(GA_ERR_NOMEM,
                        "fft: out of host memory for a plan of length %lld",
                        (long long)n);
    }
    p->n = n;
    for (int64_t k = 0; k <= h; k++) {
        double a = -2.0 * M_PI * (double)k / (double)n;
        p->rtw[k] = (cplx){cos(a), sin(a)};
    }
    int st = plan_new_complex(h, &p->half);
    if (st != GA_OK) {
        ga_fft_plan_free(p);
        return st;
    }
    *out = p;
    return GA_OK;
}

int
ga_fft_plan_is_real(const fft_plan *p)
{
    return p->half != NULL;
}

size_t
ga_fft_plan_bytes(const fft_plan *p)
{
    if (p == NULL) {
        return 0;
    }
    int64_t tables = p->tw != NULL ? p->tw_len : 0;
    tables += p->chirp != NULL ? p->n : 0;
    tables += p->kernel_hat != NULL ? p->bluestein_m : 0;
    tables += p->rtw != NULL ? p->n / 2 + 1 : 0;
    return sizeof *p + (size_t)tables * sizeof(cplx) + ga_fft_plan_bytes(p->sub) +
           ga_fft_plan_bytes(p->half);
}

int64_t
ga_fft_plan_length(const fft_plan *p)
{
    return p->n;
}

#define PASS_NAME pass
#define T cplx
#define ADD cadd
#define SUB csub
#define SCALE cscale
#define ROT rot
#define MULW cmul
#include "ga_cpu_fft_pass.h"

#if GA_FFT_SIMD
#define PASS_NAME pass_lanes
#define T vcplx
#define ADD vadd
#define SUB vsub
#define SCALE vscale
#define ROT vrot
#define MULW vmulw
#include "ga_cpu_fft_pass.h"
#endif

/* One pass split between threads: chunks of its p range, or of its q range when
 * that is the longer (the last passes have few p, the first few q). */
typedef struct {
    const fft_plan *p;
    const cplx *x;
    cplx *y;
    int64_t s, m, per;
    int f, inv, by_p;
} pass_job;

static void
pass_chunk(void *ctx, int64_t c)
{
    const pass_job *j = ctx;
    int64_t len = j->by_p ? j->m : j->s, a = c * j->per;
    int64_t b = a + j->per < len ? a + j->per : len;
    if (j->by_p) {
        pass(j->p, j->f, j->x, j->y, j->s, j->inv, a, b, 0, j->s);
    } else {
        pass(j->p, j->f, j->x, j->y, j->s, j->inv, 0, j->m, a, b);
    }
}

/* An unscaled transform of a direct plan, out of place (in and out must differ;
 * in is only read). `work` holds n points: the passes alternate between it and out,
 * so that the last one writes out. `par`: a parallel-for to split each pass of a
 * long line with, or NULL. */
static void
exec_direct(const fft_plan *p, const cplx *in, cplx *out, int inv, cplx *work,
            ga_fft_parallel_fn par)
{
    if (p->nfact == 0) {
        out[0] = in[0];
        return;
    }
    const cplx *x = in;
    int64_t s = 1;
    for (int f = 0; f < p->nfact; f++) {
        cplx *y = (p->nfact - 1 - f) % 2 == 0 ? out : work;
        int64_t r = p->fact[f], m = p->n / (s * r);
        if (par == NULL || p->n < GA_FFT_PARALLEL_MIN) {
            pass(p, f, x, y, s, inv, 0, m, 0, s);
        } else {
            pass_job j = {p, x, y, s, m, 0, f, inv, m >= s};
            int64_t len = j.by_p ? m : s;
            j.per = (len + 63) / 64;
            par((len + j.per - 1) / j.per, pass_chunk, &j);
        }
        x = y;
        s *= r;
    }
}

/* Scratch a plan needs besides the line itself, in cplx elements. */
static int64_t
plan_scratch(const fft_plan *p)
{
    /* Bluestein: two lines of M and the work line of M's passes; direct: the work
     * line of its passes */
    return p->bluestein_m > 0 ? 3 * p->bluestein_m : p->n;
}

/* out = unscaled DFT of in (length n, out of place); `work` has plan_scratch(). */
static void
plan_exec(const fft_plan *p, const cplx *in, cplx *out, int inv, cplx *work,
          ga_fft_parallel_fn par)
{
    if (p->bluestein_m == 0) {
        exec_direct(p, in, out, inv, work, par);
        return;
    }
    /* The inverse uses conj(chirp); its kernel's transform is conj(K[-k]). */
    int64_t n = p->n, m = p->bluestein_m;
    cplx *a = work, *ah = work + m, *pw = work + 2 * m;
    for (int64_t k = 0; k < n; k++) {
        cplx c = p->chirp[k];
        if (inv) {
            c.im = -c.im;
        }
        a[k] = cmul(in[k], c);
    }
    memset(a + n, 0, (size_t)(m - n) * sizeof *a);
    exec_direct(p->sub, a, ah, 0, pw, par);
    for (int64_t k = 0; k < m; k++) {
        cplx kh = p->kernel_hat[k];
        if (inv) {
            kh = p->kernel_hat[(m - k) % m];
            kh.im = -kh.im;
        }
        ah[k] = cmul(ah[k], kh);
    }
    exec_direct(p->sub, ah, a, 1, pw, par);
    for (int64_t k = 0; k < n; k++) {
        cplx c = p->chirp[k];
        if (inv) {
            c.im = -c.im;
        }
        out[k] = cmul(a[k], c);
    }
}

/* `count` elements of a line into doubles (the dtype switch outside the loop: a switch
 * per element cost a fifth of a batch of 1024-point transforms). Real dtypes give
 * im = 0. */
GA_FFT_CLONES static void
load_line(const char *src, int dtype, cplx *line, int64_t count)
{
    switch (dtype) {
    case GA_COMPLEX128:
        memcpy(line, src, (size_t)count * sizeof *line);
        break;
    case GA_COMPLEX64:
        for (int64_t k = 0; k < count; k++) {
            line[k] =
                (cplx){((const float *)src)[2 * k], ((const float *)src)[2 * k + 1]};
        }
        break;
    case GA_FLOAT32:
        for (int64_t k = 0; k < count; k++) {
            line[k] = (cplx){((const float *)src)[k], 0.0};
        }
        break;
    default:
        for (int64_t k = 0; k < count; k++) {
            line[k] = (cplx){((const double *)src)[k], 0.0};
        }
        break;
    }
}

/* The reverse (real dtypes keep the real parts). */
GA_FFT_CLONES static void
store_line(char *dst, int dtype, const cplx *line, int64_t count)
{
    switch (dtype) {
    case GA_COMPLEX128:
        memcpy(dst, line, (size_t)count * sizeof *line);
        break;
    case GA_COMPLEX64:
        for (int64_t k = 0; k < count; k++) {
            ((float *)dst)[2 * k] = (float)line[k].re;
            ((float *)dst)[2 * k + 1] = (float)line[k].im;
        }
        break;
    case GA_FLOAT32:
        for (int64_t k = 0; k < count; k++) {
            ((float *)dst)[k] = (float)line[k].re;
        }
        break;
    default:
        for (int64_t k = 0; k < count; k++) {
            ((double *)dst)[k] = line[k].re;
        }
        break;
    }
}

/* A real line of 2 * count points read as count complex ones (z[k] = x[2k] + i
 * x[2k + 1]), and the reverse. */
static void
load_pairs(const char *src, int rdtype, cplx *z, int64_t count)
{
    load_line(src, rdtype == GA_FLOAT32 ? GA_COMPLEX64 : GA_COMPLEX128, z, count);
}

static void
store_pairs(char *dst, int rdtype, const cplx *z, int64_t count)
{
    store_line(dst, rdtype == GA_FLOAT32 ? GA_COMPLEX64 : GA_COMPLEX128, z, count);
}

int
ga_fft_desc_check(const ga_fft_desc *d)
{
    if (d->dtype != GA_COMPLEX64 && d->dtype != GA_COMPLEX128) {
        return ga_error(GA_ERR_TYPE,
                        "fft: the backend takes complex64 or complex128, "
                        "got dtype code %d",
                        (int)d->dtype);
    }
    int64_t in_len, out_len;
    if (ga_fft_line_lengths(d, &in_len, &out_len) != 0 || d->n < 1 || d->batch < 0) {
        return ga_error(GA_ERR_VALUE,
                        "fft: bad descriptor (kind %d, n %lld, batch %lld)",
                        (int)d->kind, (long long)d->n, (long long)d->batch);
    }
    return GA_OK;
}

#if GA_FFT_SIMD
/* exec_direct for lanes (one thread: lanes serve batches, which the pool splits by
 * lines). */
static void
exec_lanes(const fft_plan *p, const vcplx *in, vcplx *out, int inv, vcplx *work)
{
    if (p->nfact == 0) {
        out[0] = in[0];
        return;
    }
    const vcplx *x = in;
    int64_t s = 1;
    for (int f = 0; f < p->nfact; f++) {
        vcplx *y = (p->nfact - 1 - f) % 2 == 0 ? out : work;
        int64_t r = p->fact[f], m = p->n / (s * r);
        pass_lanes(p, f, x, y, s, inv, 0, m, 0, s);
        x = y;
        s *= r;
    }
}
#endif

/* The scratch (in cplx) that lanes of a real plan take: three lines of n/2 + 1 vcplx
 * and 64 bytes to align them; 0 where lanes do not serve the plan (a Bluestein half,
 * a long line, or no vector extension). */
static int64_t
lanes_scratch(const fft_plan *p)
{
#if GA_FFT_SIMD
    int64_t h = p->n / 2, per = (int64_t)(sizeof(vcplx) / sizeof(cplx));
    if (p->half != NULL && p->half->bluestein_m == 0 && h <= GA_FFT_LANES_MAX) {
        return 3 * (h + 1) * per + 4;
    }
#endif
    return 0;
}

int
ga_fft_plan_lanes(const fft_plan *p)
{
#if GA_FFT_SIMD
    return lanes_scratch(p) > 0 ? GA_FFT_LANES : 1;
#else
    return 1;
#endif
}

int64_t
ga_fft_line_scratch(const fft_plan *p)
{
    if (p->half != NULL) {
        int64_t one = p->n + 2 + plan_scratch(p->half); /* two lines of n/2 + 1 */
        int64_t lanes = lanes_scratch(p);
        return lanes > one ? lanes : one;
    }
    return 2 * p->n + plan_scratch(p);
}

/* Element k of a complex64 (single) or complex128 line. */
static inline void
put(char *dst, int single, int64_t k, cplx v)
{
    if (single) {
        ((float *)dst)[2 * k] = (float)v.re;
        ((float *)dst)[2 * k + 1] = (float)v.im;
    } else {
        ((cplx *)dst)[k] = v;
    }
}

/* R2C's last step. Z is the transform of the packed points z[k] = x[2k] + i x[2k+1]
 * and X[k] = E[k] + w^k O[k], with E and O the transforms of the even and odd points:
 * E[k] = (Z[k] + conj Z[h-k]) / 2, O[k] = -i (Z[k] - conj Z[h-k]) / 2. Since
 * E[h-k] = conj E[k], O[h-k] = conj O[k] and w^(h-k) = -conj w^k, the same terms give
 * X[h-k] = conj(E[k] - w^k O[k]): one multiply per pair of outputs. */
static inline void
r2c_pair(cplx a, cplx c, cplx w, cplx *xk, cplx *xhk)
{
    cplx bc = {c.re, -c.im};
    cplx e = cscale(cadd(a, bc), 0.5);
    cplx t = cmul(w, cscale(rot(csub(a, bc), 0), 0.5)); /* w^k (-i (a - conj c) / 2) */
    cplx d = csub(e, t);
    *xk = cadd(e, t);
    *xhk = (cplx){d.re, -d.im};
}

/* X[0..h] of one line into dst (complex64 or complex128), from Z[0..h-1]. */
GA_FFT_CLONES static void
r2c_post(const cplx *z, const cplx *rtw, int64_t h, char *dst, int single)
{
    put(dst, single, 0, (cplx){z[0].re + z[0].im, 0.0});
    put(dst, single, h, (cplx){z[0].re - z[0].im, 0.0});
    for (int64_t k = 1; 2 * k <= h; k++) {
        cplx xk, xhk;
        r2c_pair(z[k], z[h - k], rtw[k], &xk, &xhk);
        put(dst, single, h - k, xhk); /* first: at k = h/2 both are X[k], xk exact */
        put(dst, single, k, xk);
    }
}

/* C2R's first step, the reverse of R2C's last one: the transform of the packed points
 * from X[0..h] (X[0] and X[h] with their imaginary parts dropped, as pocketfft does:
 * they reach only the imaginary part of a full-length inverse),
 * Z[k] = (X[k] + conj X[h-k]) + i conj(w^k) (X[k] - conj X[h-k]). */
GA_FFT_CLONES static void
c2r_pre(cplx *x, const cplx *rtw, int64_t h, cplx *z)
{
    x[0].im = 0.0;
    x[h].im = 0.0;
    for (int64_t k = 0; k < h; k++) {
        cplx a = x[k], c = x[h - k];
        cplx bc = {c.re, -c.im};
        cplx wc = {rtw[k].re, -rtw[k].im};
        z[k] = cadd(cadd(a, bc), rot(cmul(wc, csub(a, bc)), 1));
    }
}

#if GA_FFT_SIMD
/* GA_FFT_LANES lines of a real plan side by side: each step as the one-line code
 * does it, element by element with the same operations, so a line's result has the
 * same bits in lanes or alone (tests/core/test_fft.py compares them). Why lanes: a
 * batch of short real lines (1000 x 1024 float32) ran at 1.3-1.5 times pocketfft's
 * time one line at a time, most of it in complex multiplies and shuffles of one
 * complex double per vector. */

/* Lines src[l] of h real pairs (float32 or float64) into lanes. */
GA_FFT_CLONES static void
r2c_load_lanes(const char *const *src, int single, vcplx *z, int64_t h)
{
    for (int64_t j = 0; j < h; j++) {
        for (int l = 0; l < GA_FFT_LANES; l++) {
            if (single) {
                z[j].re[l] = ((const float *)src[l])[2 * j];
                z[j].im[l] = ((const float *)src[l])[2 * j + 1];
            } else {
                z[j].re[l] = ((const double *)src[l])[2 * j];
                z[j].im[l] = ((const double *)src[l])[2 * j + 1];
            }
        }
    }
}

/* r2c_post for lanes, lane l into dst[l]. */
GA_FFT_CLONES static void
r2c_post_lanes(const vcplx *z, const cplx *rtw, int64_t h, char *const *dst, int single)
{
    for (int l = 0; l < GA_FFT_LANES; l++) {
        put(dst[l], single, 0, (cplx){z[0].re[l] + z[0].im[l], 0.0});
        put(dst[l], single, h, (cplx){z[0].re[l] - z[0].im[l], 0.0});
    }
    for (int64_t k = 1; 2 * k <= h; k++) {
        vcplx a = z[k], c = z[h - k];
        vcplx bc = {c.re, -c.im};
        vcplx e = vscale(vadd(a, bc), 0.5);
        vcplx t = vmulw(vscale(vrot(vsub(a, bc), 0), 0.5), rtw[k]);
        vcplx xk = vadd(e, t), d = vsub(e, t);
        for (int l = 0; l < GA_FFT_LANES; l++) {
            put(dst[l], single, h - k, (cplx){d.re[l], -d.im[l]});
            put(dst[l], single, k, (cplx){xk.re[l], xk.im[l]});
        }
    }
}

/* c2r_pre for lanes, reading lines src[l] of h + 1 complex points. */
GA_FFT_CLONES static void
c2r_pre_lanes(const char *const *src, int single, const cplx *rtw, int64_t h, vcplx *x,
              vcplx *z)
{
    for (int64_t j = 0; j <= h; j++) {
        for (int l = 0; l < GA_FFT_LANES; l++) {
            if (single) {
                x[j].re[l] = ((const float *)src[l])[2 * j];
                x[j].im[l] = ((const float *)src[l])[2 * j + 1];
            } else {
                x[j].re[l] = ((const double *)src[l])[2 * j];
                x[j].im[l] = ((const double *)src[l])[2 * j + 1];
            }
        }
    }
    for (int l = 0; l < GA_FFT_LANES; l++) {
        x[0].im[l] = 0.0;
        x[h].im[l] = 0.0;
    }
    for (int64_t k = 0; k < h; k++) {
        vcplx a = x[k], c = x[h - k];
        vcplx bc = {c.re, -c.im};
        cplx wc = {rtw[k].re, -rtw[k].im};
        z[k] = vadd(vadd(a, bc), vrot(vmulw(vsub(a, bc), wc), 1));
    }
}

/* Lanes of h complex points out as lines dst[l] of 2h reals. */
GA_FFT_CLONES static void
c2r_store_lanes(const vcplx *z, int64_t h, char *const *dst, int single)
{
    for (int l = 0; l < GA_FFT_LANES; l++) {
        for (int64_t j = 0; j < h; j++) {
            if (single) {
                ((float *)dst[l])[2 * j] = (float)z[j].re[l];
                ((float *)dst[l])[2 * j + 1] = (float)z[j].im[l];
            } else {
                ((double *)dst[l])[2 * j] = z[j].re[l];
                ((double *)dst[l])[2 * j + 1] = z[j].im[l];
            }
        }
    }
}

/* Lines [b, b + GA_FFT_LANES) of a real plan whose lanes_scratch() is not 0. */
static void
real_lanes(const fft_plan *p, const ga_fft_desc *d, int64_t b, void *scratch,
           int64_t in_len, int64_t out_len)
{
    int64_t h = p->n / 2;
    int single = d->dtype == GA_COMPLEX64;
    size_t ritem = single ? 4 : 8, citem = 2 * ritem;
    vcplx *x = (vcplx *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    vcplx *y = x + h + 1, *work = y + h + 1;
    const char *src[GA_FFT_LANES];
    char *dst[GA_FFT_LANES];
    size_t in_item = d->kind == GA_FFT_R2C ? ritem : citem;
    size_t out_item = d->kind == GA_FFT_R2C ? citem : ritem;
    for (int l = 0; l < GA_FFT_LANES; l++) {
        src[l] = d->in + (size_t)(b + l) * (size_t)in_len * in_item;
        dst[l] = d->out + (size_t)(b + l) * (size_t)out_len * out_item;
    }
    if (d->kind == GA_FFT_R2C) {
        r2c_load_lanes(src, single, x, h);
        exec_lanes(p->half, x, y, 0, work);
        r2c_post_lanes(y, p->rtw, h, dst, single);
    } else {
        c2r_pre_lanes(src, single, p->rtw, h, work, x);
        exec_lanes(p->half, x, y, 1, work);
        c2r_store_lanes(y, h, dst, single);
    }
}
#endif

/* Lines of a real plan: R2C packs the n real points into n/2 complex ones (a float64
 * line is already that in memory: no copy) and separates the transform after
 * (r2c_post); C2R does the reverse before an inverse transform of n/2 and unpacks.
 * Both unscaled, as the complex path. Four lines or more at a time go in lanes. */
static void
real_lines(const fft_plan *p, const ga_fft_desc *d, int64_t b0, int64_t b1,
           cplx *scratch, ga_fft_parallel_fn par, int64_t in_len, int64_t out_len)
{
    int64_t h = p->n / 2;
    int single = d->dtype == GA_COMPLEX64;
    int rdt = single ? GA_FLOAT32 : GA_FLOAT64, cdt = d->dtype;
    size_t ritem = (size_t)ga_dtype_infos[rdt].itemsize;
    size_t citem = (size_t)ga_dtype_infos[cdt].itemsize;
#if GA_FFT_SIMD
    if (lanes_scratch(p) > 0) {
        for (; b0 + GA_FFT_LANES <= b1; b0 += GA_FFT_LANES) {
            real_lanes(p, d, b0, scratch, in_len, out_len);
        }
    }
#endif
    /* two lines of h + 1 (ga_fft_line_scratch), then the half plan's scratch */
    cplx *z = scratch, *zh = scratch + h + 1, *work = scratch + 2 * h + 2;
    for (int64_t b = b0; b < b1; b++) {
        if (d->kind == GA_FFT_R2C) {
            const char *src = d->in + (size_t)b * (size_t)in_len * ritem;
            char *dst = d->out + (size_t)b * (size_t)out_len * citem;
            const cplx *in = (const cplx *)src;
            if (single) {
                load_pairs(src, rdt, z, h);
                in = z;
            }
            plan_exec(p->half, in, zh, 0, work, par);
            r2c_post(zh, p->rtw, h, dst, single);
        } else {
            const char *src = d->in + (size_t)b * (size_t)in_len * citem;
            char *dst = d->out + (size_t)b * (size_t)out_len * ritem;
            load_line(src, cdt, zh, h + 1);
            c2r_pre(zh, p->rtw, h, z);
            if (single) {
                plan_exec(p->half, z, zh, 1, work, par);
                store_pairs(dst, rdt, zh, h);
            } else {
                plan_exec(p->half, z, (cplx *)dst, 1, work, par);
            }
        }
    }
}

void
ga_fft_plan_lines(const fft_plan *p, const ga_fft_desc *d, int64_t b0, int64_t b1,
                  void *scratch, ga_fft_parallel_fn par)
{
    int64_t in_len = 0,
            out_len = 0; /* the descriptor was checked (ga_fft_desc_check) */
    (void)ga_fft_line_lengths(d, &in_len, &out_len);
    if (p->half != NULL) {
        real_lines(p, d, b0, b1, scratch, par, in_len, out_len);
        return;
    }
    int single = d->dtype == GA_COMPLEX64;
    int cdt = d->dtype, rdt = single ? GA_FLOAT32 : GA_FLOAT64;
    int in_dt = d->kind == GA_FFT_R2C ? rdt : cdt;
    int out_dt = d->kind == GA_FFT_C2R ? rdt : cdt;
    size_t in_item = (size_t)ga_dtype_infos[in_dt].itemsize;
    size_t out_item = (size_t)ga_dtype_infos[out_dt].itemsize;
    int inv = d->kind == GA_FFT_C2R || (d->kind == GA_FFT_C2C && d->inverse);
    int64_t n = d->n;
    cplx *line = scratch, *res = line + n, *work = line + 2 * n;
    for (int64_t b = b0; b < b1; b++) {
        const char *src = d->in + (size_t)b * (size_t)in_len * in_item;
        char *dst = d->out + (size_t)b * (size_t)out_len * out_item;
        if (d->kind == GA_FFT_C2R) {
            /* The full spectrum from its Hermitian half: X[n - k] = conj(X[k]). The
             * imaginary parts of X[0] and X[n/2] only reach the imaginary part of the
             * result, which is dropped, as pocketfft ignores them. */
            load_line(src, in_dt, line, in_len);
            for (int64_t k = in_len; k < n; k++) {
                cplx c = line[n - k];
                line[k] = (cplx){c.re, -c.im};
            }
        } else if (in_dt == GA_COMPLEX128 && out_dt == GA_COMPLEX128 &&
                   (dst + n * sizeof(cplx) <= src || src + n * sizeof(cplx) <= dst)) {
            /* complex128 lines are the plan's own type: no copies */
            plan_exec(p, (const cplx *)src, (cplx *)dst, inv, work, par);
            continue;
        } else {
            load_line(src, in_dt, line, n);
        }
        plan_exec(p, line, res, inv, work, par);
        store_line(dst, out_dt, res, out_len);
    }
}

int
ga_cpu_fft(int dev, const ga_fft_desc *d)
{
    (void)dev;
    GA_TRY(ga_fft_desc_check(d));
    fft_plan *p;
    GA_TRY(ga_fft_plan_new(d->n, d->kind != GA_FFT_C2C, &p));
    cplx *scratch = malloc((size_t)ga_fft_line_scratch(p) * sizeof *scratch);
    if (scratch == NULL) {
        ga_fft_plan_free(p);
        return ga_error(GA_ERR_NOMEM,
                        "fft: out of host memory for the scratch of "
                        "length %lld",
                        (long long)d->n);
    }
    ga_fft_plan_lines(p, d, 0, d->batch, scratch, NULL);
    free(scratch);
    ga_fft_plan_free(p);
    return GA_OK;
}
