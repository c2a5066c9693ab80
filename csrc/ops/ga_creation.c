/* ga_creation.c: filled, ranged, diagonal and random arrays made on their device. */
#include "ga_creation.h"

#include <math.h>
#include <string.h>

#include "ga_error.h"
#include "ga_host_ready.h"
#include "ga_loop.h"
#include "ga_philox.h"
#include "ga_profiler.h"
#include "ga_scalar.h"
#include "ga_transfer.h"

/* --- scalars ------------------------------------------------------------------------
 */

/* Integer bits (wrapped into the dtype) and float values as storage bytes. */
static void
store_int(ga_dtype t, uint64_t bits, ga_scalar_bytes *out)
{
    ga_scalar_value v;
    memset(&v, 0, sizeof(v));
    v.kind = GA_KIND_UINT;
    v.u = bits;
    ga_scalar_write(t, &v, out);
}

static void
store_inexact(ga_dtype t, double re, double im, ga_scalar_bytes *out)
{
    ga_scalar_value v;
    memset(&v, 0, sizeof(v));
    v.kind = GA_KIND_COMPLEX;
    v.re = re;
    v.im = im;
    ga_scalar_write(t, &v, out);
}

int
ga_scalar_from_double(ga_dtype dtype, double re, double im, ga_scalar_bytes *out)
{
    if (dtype == GA_BOOL) {
        store_int(dtype, (re != 0 || im != 0) ? 1 : 0, out);
        return GA_OK;
    }
    if (ga_dtype_is_inexact(dtype)) {
        store_inexact(dtype, re, im, out);
        return GA_OK;
    }
    if (!isfinite(re)) {
        return ga_error(GA_ERR_VALUE, "cannot convert %s to an integer (%s)",
                        isnan(re) ? "NaN" : "infinity", ga_dtype_infos[dtype].name);
    }
    double t = trunc(re);
    int64_t lo;
    uint64_t hi;
    ga_dtype_int_range(dtype, &lo, &hi);
    /* (double)hi may round up (2^63, 2^64): compare with < on the rounded bound */
    if (t < (double)lo || t >= (double)hi + 1.0) {
        return ga_error(GA_ERR_OVERFLOW, "%g is out of bounds for %s", re,
                        ga_dtype_infos[dtype].name);
    }
    uint64_t bits = t < 0 ? (uint64_t)(int64_t)t : (uint64_t)t;
    store_int(dtype, bits, out);
    return GA_OK;
}

int
ga_scalar_from_int(ga_dtype dtype, int64_t v, int is_unsigned, ga_scalar_bytes *out)
{
    if (dtype == GA_BOOL) {
        store_int(dtype, v != 0, out);
        return GA_OK;
    }
    if (ga_dtype_is_inexact(dtype)) {
        double d = is_unsigned ? (double)(uint64_t)v : (double)v;
        store_inexact(dtype, d, 0.0, out);
        return GA_OK;
    }
    int64_t lo;
    uint64_t hi;
    ga_dtype_int_range(dtype, &lo, &hi);
    int ok =
        is_unsigned ? (uint64_t)v <= hi : (v >= lo && (v < 0 || (uint64_t)v <= hi));
    if (!ok) {
        if (is_unsigned) {
            return ga_error(GA_ERR_OVERFLOW, "Python integer %llu out of bounds for %s",
                            (unsigned long long)v, ga_dtype_infos[dtype].name);
        }
        return ga_error(GA_ERR_OVERFLOW, "Python integer %lld out of bounds for %s",
                        (long long)v, ga_dtype_infos[dtype].name);
    }
    store_int(dtype, (uint64_t)v, out);
    return GA_OK;
}

/* --- filling ------------------------------------------------------------------------
 */

int
ga_fill(ga_array *a, const ga_scalar_bytes *value)
{
    ga_array_note_write(a);
    if (ga_array_size(a) == 0) {
        return GA_OK;
    }
    /* the block filled is the only one touched: wait for it alone (a non-blocking
     * copy may still write it), not for every pending host block (ga_host_ready.h) */
    GA_TRY(ga_host_ready_wait(a->storage, 1));
    const ga_backend *be;
    GA_TRY(ga_device_backend_nowait(ga_array_device(a), &be));
    if (be->elementwise == NULL) {
        return ga_error(GA_ERR_UNSUPPORTED,
                        "filling arrays is not supported by the %s "
                        "backend",
                        be->name);
    }
    ga_loop loop;
    ga_loop_init(&loop, a);
    ga_loop_add_scalar(&loop, (ga_dtype)a->dtype, value);
    ga_loop_coalesce(&loop);
    ga_device_count_work(ga_array_device(a), GA_WORK_ELEMENTWISE, 1);
    if (ga_describe_on()) {
        ga_prof_describe_loop("fill", &loop);
    }
    return ga_backend_status(
        be, be->elementwise(ga_device_local(ga_array_device(a)), GA_OP_COPY, &loop));
}

int
ga_full(ga_array *out, ga_device device, ga_dtype dtype, int ndim, const int64_t *shape,
        const ga_scalar_bytes *value)
{
    GA_TRY(ga_array_empty(out, device, dtype, ndim, shape));
    int st = ga_fill(out, value);
    if (st != GA_OK) {
        ga_array_release(out);
    }
    return st;
}

int
ga_arange_count(int integer, double start, double stop, double step, int64_t istart,
                int64_t istop, int64_t istep, int64_t *n)
{
    if (integer ? istep == 0 : step == 0.0) {
        return ga_error(GA_ERR_VALUE, "arange: step must not be zero");
    }
    if (integer) {
        /* in 128 bits: stop - start of two int64 values cannot overflow there */
        __int128 diff = (__int128)istop - (__int128)istart;
        __int128 q = diff / istep;
        if (diff % istep != 0 && ((diff > 0) == (istep > 0))) {
            q++;
        }
        if (q > INT64_MAX / 2) {
            return ga_error(GA_ERR_VALUE,
                            "arange: %s elements is more than an array can hold",
                            "that many");
        }
        *n = q > 0 ? (int64_t)q : 0;
        return GA_OK;
    }
    if (!isfinite(start) || !isfinite(stop) || !isfinite(step)) {
        return ga_error(GA_ERR_VALUE, "arange: start, stop and step must be finite");
    }
    double c = ceil((stop - start) / step);
    if (!(c < 4.6e18)) {
        return ga_error(GA_ERR_VALUE,
                        "arange: %s elements is more than an array can hold",
                        "that many");
    }
    *n = c > 0 ? (int64_t)c : 0;
    return GA_OK;
}

int
ga_arange(ga_array *out, ga_device device, ga_dtype dtype, int64_t n, double start,
          double step, int64_t istart, int64_t istep)
{
    if (n < 0) {
        n = 0;
    }
    GA_TRY(ga_array_empty(out, device, dtype, 1, &n));
    if (n == 0) {
        return GA_OK;
    }
    const ga_backend *be;
    int st = ga_device_backend_nowait(device, &be); /* a new block: nothing to wait for */
    if (st == GA_OK && be->arange == NULL) {
        st = ga_error(GA_ERR_UNSUPPORTED, "arange is not supported by the %s backend",
                      be->name);
    }
    if (st == GA_OK) {
        ga_arange_desc d;
        memset(&d, 0, sizeof(d));
        d.dtype = dtype;
        d.n = n;
        d.out = ga_array_data(out);
        d.start = start;
        d.step = step;
        d.istart = istart;
        d.istep = istep;
        ga_device_count_work(device, GA_WORK_INDEX, 1);
        st = ga_backend_status(be, be->arange(ga_device_local(device), &d));
    }
    if (st != GA_OK) {
        ga_array_release(out);
    }
    return st;
}

int
ga_linspace(ga_array *out, ga_device device, ga_dtype dtype, int64_t num, double start,
            double stop, int endpoint)
{
    if (num < 0) {
        return ga_error(GA_ERR_VALUE,
                        "linspace: the number of samples must be "
                        "non-negative (got %lld)",
                        (long long)num);
    }
    if (!ga_dtype_is_inexact(dtype)) {
        return ga_error(GA_ERR_TYPE,
                        "linspace makes floating-point values; ask for a "
                        "float or complex dtype (got %s)",
                        ga_dtype_infos[dtype].name);
    }
    int64_t div = endpoint ? num - 1 : num;
    double step = div > 0 ? (stop - start) / (double)div : 0.0;
    GA_TRY(ga_arange(out, device, dtype, num, start, step, 0, 0));
    if (!endpoint || num < 2) {
        return GA_OK;
    }
    /* start + (num-1) * step may miss stop by rounding; NumPy writes stop itself */
    ga_scalar_bytes last;
    GA_TRY(ga_scalar_from_double(dtype, stop, 0.0, &last));
    ga_array tail;
    ga_array_view(&tail, out);
    tail.offset += (num - 1) * out->strides[0];
    tail.shape[0] = 1;
    int st = ga_fill(&tail, &last);
    ga_array_release(&tail);
    if (st != GA_OK) {
        ga_array_release(out);
    }
    return st;
}

int
ga_eye(ga_array *out, ga_device device, ga_dtype dtype, int64_t n, int64_t m, int64_t k)
{
    int64_t shape[2] = {n, m};
    ga_scalar_bytes zero, one;
    memset(&zero, 0, sizeof(zero));
    GA_TRY(ga_scalar_from_int(dtype, 1, 0, &one));
    GA_TRY(ga_full(out, device, dtype, 2, shape, &zero));
    /* The diagonal is a 1-d view with stride (row stride + column stride). */
    int64_t row0 = k < 0 ? -k : 0, col0 = k > 0 ? k : 0;
    if (row0 >= n || col0 >= m) {
        return GA_OK;
    }
    int64_t len = n - row0 < m - col0 ? n - row0 : m - col0;
    ga_array diag;
    ga_array_view(&diag, out);
    diag.offset = out->offset + row0 * out->strides[0] + col0 * out->strides[1];
    diag.ndim = 1;
    diag.shape[0] = len;
    diag.strides[0] = out->strides[0] + out->strides[1];
    int st = ga_fill(&diag, &one);
    ga_array_release(&diag);
    if (st != GA_OK) {
        ga_array_release(out);
    }
    return st;
}

/* --- random numbers -----------------------------------------------------------------
 */

/* Changed with the GIL held only (every caller is a binding function). */
static uint64_t random_seed = 0;
static uint64_t random_counter = 0;

void
ga_random_get_state(uint64_t *seed, uint64_t *counter)
{
    *seed = random_seed;
    *counter = random_counter;
}

void
ga_random_set_state(uint64_t seed, uint64_t counter)
{
    random_seed = seed;
    random_counter = counter;
}

int
ga_random(ga_array *out, ga_device device, ga_dtype dtype, int dist, int ndim,
          const int64_t *shape, double a, double b, int64_t lo, int64_t hi)
{
    int ok;
    if (dist == GA_RAND_INTEGERS) {
        ok = ga_dtype_is_integer(dtype);
        if (ok && lo >= hi) {
            return ga_error(GA_ERR_VALUE,
                            "integers: low (%lld) must be less than high "
                            "(%lld)",
                            (long long)lo, (long long)hi);
        }
    } else {
        ok = dtype == GA_FLOAT16 || dtype == GA_FLOAT32 || dtype == GA_FLOAT64;
    }
    if (!ok) {
        return ga_error(GA_ERR_TYPE, "%s random numbers cannot be made as %s (use %s)",
                        dist == GA_RAND_INTEGERS ? "integer"
                        : dist == GA_RAND_NORMAL ? "normal"
                                                 : "uniform",
                        ga_dtype_infos[dtype].name,
                        dist == GA_RAND_INTEGERS ? "an integer dtype"
                                                 : "float16, float32 or float64");
    }
    GA_TRY(ga_array_empty(out, device, dtype, ndim, shape));
    int64_t n = ga_array_size(out);
    if (n == 0) {
        return GA_OK;
    }
    /* the state counts 32-bit words of the stream: an element takes q of them, from a
     * multiple of q on (ga_philox.h) */
    const uint64_t q = (uint64_t)ga_random_words(dist, dtype);
    const uint64_t counter = random_counter + (q - random_counter % q) % q;
    const ga_backend *be;
    int st = ga_device_backend_nowait(device, &be); /* a new block: nothing to wait for */
    if (st == GA_OK && be->random == NULL) {
        st = ga_error(GA_ERR_UNSUPPORTED,
                      "random numbers are not supported by the %s "
                      "backend",
                      be->name);
    }
    if (st == GA_OK) {
        ga_random_desc d;
        memset(&d, 0, sizeof(d));
        d.dist = dist;
        d.dtype = dtype;
        d.seed = random_seed;
        d.counter = counter;
        d.n = n;
        d.out = ga_array_data(out);
        d.a = a;
        d.b = b;
        d.lo = lo;
        d.hi = hi;
        ga_device_count_work(device, GA_WORK_RANDOM, 1);
        st = ga_backend_status(be, be->random(ga_device_local(device), &d));
    }
    if (st != GA_OK) {
        ga_array_release(out);
        return st;
    }
    random_counter = counter + (uint64_t)n * q;
    return GA_OK;
}

/* --- summaries ----------------------------------------------------------------------
 */

int
ga_summary_gather(const ga_array *src, int64_t edge, ga_array *out)
{
    int nd = src->ndim;
    int64_t shape[GA_MAXDIMS];
    int summarised[GA_MAXDIMS];
    int axes[GA_MAXDIMS];
    int nsum = 0;
    for (int d = 0; d < nd; d++) {
        summarised[d] = src->shape[d] > 2 * edge;
        shape[d] = summarised[d] ? 2 * edge : src->shape[d];
        if (summarised[d]) {
            axes[nsum++] = d;
        }
    }
    GA_TRY(ga_array_empty(out, ga_array_device(src), (ga_dtype)src->dtype, nd, shape));
    if (ga_array_size(out) == 0) {
        return GA_OK;
    }
    /* One copy per corner block: bit j of `block` picks the head (0) or the tail (1)
     * of summarised axis axes[j]. */
    int64_t nblocks = (int64_t)1 << nsum;
    for (int64_t block = 0; block < nblocks; block++) {
        ga_array s, o;
        ga_array_view(&s, src);
        ga_array_view(&o, out);
        for (int j = 0; j < nsum; j++) {
            int d = axes[j];
            if ((block >> j) & 1) {
                s.offset += (src->shape[d] - edge) * src->strides[d];
                o.offset += edge * out->strides[d];
            }
            s.shape[d] = edge;
            o.shape[d] = edge;
        }
        int st = ga_copy_same_device(&o, &s);
        ga_array_release(&s);
        ga_array_release(&o);
        if (st != GA_OK) {
            ga_array_release(out);
            return st;
        }
    }
    return GA_OK;
}
