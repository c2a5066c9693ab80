/* ga_backend.h: the table through which the core reaches a device.
 *
 * The core never touches device memory itself: it validates, broadcasts, promotes
 * and allocates, then hands the backend a fully resolved descriptor (below). Every
 * pointer in a descriptor is an address on the backend's device. Entries may be
 * NULL ("unsupported"); the core then raises a clear error, never crashes.
 *
 * Three tables exist: the CPU backend (ga_backend_cpu.c), the simulated-GPU
 * backend (the CPU kernels behind separate device identities and statistics), and the
 * CUDA plugin (csrc/cuda/, loaded with dlopen; the same header is its ABI, checked by
 * GA_BACKEND_ABI_VERSION). All entries return a ga_status and set the message with
 * ga_error() (the plugin has its own copy of ga_error.c; the core copies the plugin's
 * message through `last_error` when the status is not GA_OK).
 *
 * Ordering: a backend may queue work and return at once (CUDA: one stream per
 * device). copy_d2h returns only when the host buffer holds the data; synchronize
 * waits for everything queued on the device.
 */
#ifndef GA_BACKEND_H
#define GA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "ga_config.h"
#include "ga_device_types.h" /* ga_memory_stats, ga_kernel_counters */
#include "ga_dtype.h"
#include "ga_ops.h"

/* 3: sort and searchsorted entries; 4: kernel_counters; 5: the DLPack stream
 * hand-off; 6: linalg (LAPACK / cuSOLVER factorisations); 7: fft; 8: failure
 * records (index_checked, fault_poll); 9: timing events (event_*); 10: order_after (a
 * DLPack export ordered after the consumer's stream); 11: non-blocking copies to the
 * host and page-locked host memory (copy_d2h_async, host_alloc_pinned,
 * host_free_pinned); 12: a copy queue beside the compute queue (copies_event_record,
 * wait_copies); 13: fused elementwise programs (fused); 14: a fused program's result
 * reduced as it is made (fused_reduce); 15: what the core asks of the in-core host
 * backends (set_device_count, pending_work, hold_queue, stamp_tasks, num_threads,
 * host_cache_limit); 16: CUDA graphs (graph_begin, graph_end, graph_launch,
 * graph_destroy) and their kernel counters; 17: a random call's seed and counter base
 * read on the device (ga_random_desc.state), so that a graph draws anew at each launch.
 * Entries only ever added at the end of ga_backend. */
#define GA_BACKEND_ABI_VERSION 17

/* A scalar operand passed by value: the element's storage bytes in its dtype. */
typedef union {
    int64_t i;
    uint64_t u;
    double f;
    unsigned char bytes[16];
} ga_scalar_bytes;

/* One operand of an elementwise loop, already broadcast to the loop's shape. */
typedef struct {
    char *data;                  /* element [0, ..., 0]; unused when is_scalar */
    int64_t strides[GA_MAXDIMS]; /* bytes; 0 along broadcast axes */
    int32_t dtype;               /* ga_dtype */
    int32_t is_scalar; /* the operand is `value`, the same for every element */
    ga_scalar_bytes value;
} ga_operand;

/* An n-d loop after broadcasting and coalescing of contiguous axes. */
typedef struct {
    int32_t ndim;  /* 0 means a single element */
    int32_t nargs; /* outputs first (always exactly one), then the inputs */
    int64_t size;  /* product of shape; > 0 (the core never launches empty loops) */
    int64_t shape[GA_MAXDIMS];
    ga_operand args[GA_MAXARGS];
} ga_loop;

/* A fused elementwise program (gpuarr.fuse; docs/DESIGN.md, "Fused elementwise
 * chains"): a straight-line list of elementwise operations over registers, run for
 * every element of a ga_loop in one pass over memory.
 * Registers: [0, nin) are the loop's inputs (args[1 + k], any dtype, never written),
 * [nin, nin + nconst) constants (consts[k] in reg_dtype), the rest temporaries. Every
 * register has one dtype. Each instruction is an op of GA_ELEMENTWISE_OPS with the
 * kernel contract of ga_ops.h: its inputs have the loop dtype `dtype` (WHERE's
 * condition bool) and dst has the op's output dtype for it; GA_OP_COPY is a cast from
 * src[0]'s dtype to `dtype`. dst is never one of the instruction's own sources. The
 * register `result` (a temporary, of args[0]'s dtype) is the output: a backend may
 * keep it in the output's memory. The core checks all of this before a backend sees
 * the program (ga_fused.c). */
#define GA_FUSED_MAXREGS 16
#define GA_FUSED_MAXINSTR 32
#define GA_FUSED_MAXCONSTS 8
typedef struct {
    int16_t op;     /* ga_op */
    int16_t dtype;  /* loop dtype; GA_OP_COPY: the dtype cast to */
    int8_t dst;     /* register written */
    int8_t src[3];  /* registers read (ga_op_arity(op) of them) */
} ga_fused_instr;

typedef struct {
    int32_t nin, nconst, nregs, ninstr;
    int32_t result;
    int8_t reg_dtype[GA_FUSED_MAXREGS];
    ga_scalar_bytes consts[GA_FUSED_MAXCONSTS];
    ga_fused_instr instr[GA_FUSED_MAXINSTR];
} ga_fused_prog;

/* A reduction: out[o] = reduce over r of in[o, r].
 * The input is described by two stride sets: over the kept (output) axes and over the
 * reduced axes. For ARGMAX/ARGMIN the output is int64 and the flat index counts over
 * the reduced axes in C order. SUM/PROD accumulate in `out_dtype` (the core chose it,
 * e.g. int64 for small ints); floating sums must be pairwise-accurate. MAX/MIN
 * propagate NaN. ALL/ANY write bool. */
typedef struct {
    int32_t op;        /* ga_reduce_op */
    int32_t in_dtype;  /* ga_dtype */
    int32_t out_dtype; /* ga_dtype */
    int32_t out_ndim;
    int32_t red_ndim;
    int64_t out_size; /* product of out_shape, >= 1 */
    int64_t
        red_size; /* product of red_shape, >= 1 (the core handles empty reductions) */
    int64_t out_shape[GA_MAXDIMS];
    int64_t red_shape[GA_MAXDIMS];
    const char *in;
    int64_t in_out_strides[GA_MAXDIMS]; /* bytes, input strides over out axes */
    int64_t in_red_strides[GA_MAXDIMS]; /* bytes, input strides over reduced axes */
    char *out;
    int64_t out_strides[GA_MAXDIMS]; /* bytes */
} ga_reduce_desc;

/* A scan (cumulative sum/product) along one axis; `in` and `out` have the same shape
 * (the core gives the scan axis as the last one). in_dtype may differ from out_dtype
 * (the kernel converts each element to out_dtype first). */
typedef struct {
    int32_t op; /* ga_scan_op */
    int32_t in_dtype, out_dtype;
    int32_t ndim; /* >= 1; the scan runs along axis ndim-1 */
    int64_t shape[GA_MAXDIMS];
    const char *in;
    int64_t in_strides[GA_MAXDIMS];
    char *out;
    int64_t out_strides[GA_MAXDIMS];
} ga_scan_desc;

/* A batch of column-major GEMMs with BLAS's argument convention:
 *   C[i] = alpha * op(A[i]) * op(B[i]) + beta * C[i],  i < batch
 * op(X) is X, or X^T when trans == 1 (conjugate is never requested). m, n, k are the
 * column-major sizes; lda/ldb/ldc are leading dimensions in elements; stride_* are
 * element strides between batch members (0 = the same matrix for every i).
 * ga_gemm_plan() in ga_matmul.h computes this from row-major operands, for every
 * backend alike. alpha = 1 and beta = 0 unless stated. For dtypes no BLAS serves
 * (integers, bool), a backend runs its own kernel with the same convention. */
typedef struct {
    int32_t dtype;
    int32_t transa, transb;
    int64_t m, n, k;
    const char *a;
    int64_t lda, stride_a;
    const char *b;
    int64_t ldb, stride_b;
    char *c;
    int64_t ldc, stride_c;
    int64_t batch;
    double alpha, beta;
} ga_gemm_desc;

/* Random numbers from ga_philox.h: element i of the (contiguous) output uses the
 * Philox4x32-10 counter (counter + i) under key `seed`, so every backend produces the
 * same numbers for the same (seed, counter). */
typedef struct {
    int32_t dist;  /* ga_rand_dist */
    int32_t dtype; /* float types for UNIFORM/NORMAL, integer types for INTEGERS */
    uint64_t seed;
    uint64_t counter;
    int64_t n;
    char *out;      /* contiguous */
    double a, b;    /* UNIFORM: [low, high); NORMAL: mean, std */
    int64_t lo, hi; /* INTEGERS: [lo, hi) */
    /* NULL, or two words in the device's memory, {seed, counter base}, read when the
     * call runs rather than when it is made: the call then draws with key state[0] from
     * counter state[1] + `counter` (`seed` unused). A call captured into a CUDA graph
     * is made once and launched many times, each launch with the generator's state of
     * its own (ga_capture.c writes the words before each launch). Only the CUDA
     * backend is handed it today; the host backends read it too (their memory is the
     * host's). */
    const uint64_t *state;
} ga_random_desc;

/* Gather (x[idx...]) and scatter (x[idx...] = v) for integer-array indexing.
 * `loop` iterates over the result (gather) / value (scatter) shape: args[0] is the
 * result (gather) or the value (scatter, may be is_scalar), args[1] describes `base`
 * over the non-indexed axes (its data is the base address, strides 0 along index
 * axes), args[2..] are the int64 index arrays broadcast over the loop (strides 0 along
 * non-index axes). Element address in base = args[1] position +
 * sum_j wrap(idx_j) * index_strides[j]. Negative indices wrap once by index_dims[j];
 * anything still out of range returns GA_ERR_INDEX naming the index and the size.
 * nidx = nargs - 2 (at most GA_MAXARGS - 2; the core builds combined indices beyond
 * that). */
typedef struct {
    ga_loop loop;
    int64_t index_dims[GA_MAXARGS];
    int64_t index_strides[GA_MAXARGS]; /* bytes */
} ga_index_desc;

/* out[i] = start + i * step, for i < n, written contiguously in `dtype` (arange and
 * linspace). Integer dtypes use istart/istep (exact 64-bit arithmetic, wrapping like a
 * cast); floating and complex dtypes use start/step in double precision (the real
 * part; imaginary parts are 0). bool: out[i] = (start + i * step) != 0. */
typedef struct {
    int32_t dtype;
    int64_t n;
    char *out;
    double start, step;
    int64_t istart, istep;
} ga_arange_desc;

typedef struct {
    char name[128];
    size_t total_memory;
    int cc_major, cc_minor;
    int multiprocessors;
} ga_device_props;

/* A stable sort of `rows` contiguous rows of `n` elements each (C order, row r at
 * keys + r * n * itemsize). Ascending, or descending with `descending`; NaNs (a
 * complex number with a NaN part) go last either way, equal keys keep their order.
 * Writes the sorted keys to `values` and/or their positions within the row to
 * `indices`; either may be NULL. All three buffers are on the backend's device. */
typedef struct {
    int32_t dtype;
    int32_t descending;
    int64_t rows, n;
    const char *keys;
    char *values;     /* rows * n elements of dtype, or NULL */
    int64_t *indices; /* rows * n, or NULL */
} ga_sort_desc;

/* For each of `m` contiguous `values`, the insertion point into the `n` contiguous
 * ascending `sorted` keys (sort's order: NaNs last): the first position whose key is
 * not before the value (`right` 0), or the first whose key is after it (`right` 1).
 * Both arrays have `dtype`. */
typedef struct {
    int32_t dtype;
    int32_t right;
    int64_t n, m;
    const char *sorted;
    const char *values;
    int64_t *out;
} ga_search_desc;

/* The factorisations behind gpuarr.linalg (LAPACK's and cuSOLVER's routines). */
typedef enum {
    GA_LINALG_SOLVE = 0, /* a := LU(a) (partial pivoting), b := a^-1 b (gesv); mode 1:
                          * a holds each matrix transposed (the C-order block of A
                          * is A^T column-major), so a := LU(A^T) and b := A^-1 b by
                          * getrs with op T: the core's copy of A is then a plain
                          * one, not a transposing one */
    GA_LINALG_LU = 1,    /* a := LU(a), ipiv := its pivots; singular is not an error */
    GA_LINALG_CHOLESKY = 2, /* a := L (mode 0) or U (mode 1) of a = L L^H = U^H U;
                             * only that triangle of a is written */
    GA_LINALG_EIGH = 3,  /* w := eigenvalues ascending, a := eigenvectors as columns
                          * (mode 1) or destroyed (mode 0); reads a's lower triangle */
    GA_LINALG_SVD = 4,   /* w := singular values descending; mode 0: values only,
                          * 1: u (m x k), vh (k x n), 2: u (m x m), vh (n x n),
                          * k = min(m, n); a is destroyed */
    GA_LINALG_QR = 5     /* a := R in its upper triangle (Householder vectors below),
                          * b := Q with qcols columns (k = min(m, n) or m) */
} ga_linalg_op;

/* One batch of column-major matrices, all of one size and dtype (float32, float64,
 * complex64, complex128), contiguous: matrix i of a starts at a + i * m * n elements
 * and its leading dimension is m (the row count). LAPACK and cuSOLVER are
 * column-major, so the core hands a backend each matrix transposed in memory (a C
 * order (.., n, m) block is the column-major m x n matrix). SOLVE's mode 1 is the
 * one case where the backend works with a transpose (getrs with op T), so that the
 * core's copy of a C-order A need not transpose. Every pointer is on the backend's
 * device.
 *
 * A matrix that has no answer (singular for SOLVE, not positive definite for
 * CHOLESKY, no convergence for EIGH/SVD) makes the entry return GA_ERR_LINALG with
 * "Singular matrix", "Matrix is not positive definite", "Eigenvalues did not
 * converge" or "SVD did not converge" (ga_linalg_failure_text, ga_linalg_failure.h);
 * the outputs are then unspecified. LU reports an exactly singular matrix only through
 * a zero on U's diagonal. */
typedef struct {
    int32_t op;    /* ga_linalg_op */
    int32_t dtype; /* ga_dtype of a, b, u, vh; w has the real dtype */
    int32_t mode;  /* per op, above */
    int32_t pad_;
    int64_t batch; /* >= 1 */
    int64_t m, n;  /* a is m x n (square ops: m == n), each >= 1 */
    int64_t nrhs;  /* SOLVE: b is n x nrhs per matrix (ldb n) */
    int64_t qcols; /* QR: b is m x qcols (min(m, n) or m) */
    char *a;
    char *b;       /* SOLVE: right-hand sides, overwritten by the solution; QR: Q */
    char *u;       /* SVD (mode 1, 2) */
    char *vh;      /* SVD (mode 1, 2) */
    char *w;       /* EIGH: n values; SVD: min(m, n) values (real dtype) */
    int32_t *ipiv; /* LU: n pivots per matrix, 1-based as LAPACK's (row i was swapped
                    * with row ipiv[i] - 1) */
} ga_linalg_desc;

/* A batch of unscaled one-dimensional DFTs over contiguous lines, the layout cuFFT's
 * cufftPlanMany takes with its default (NULL) embedding: line b of the input starts
 * at element b * in_len of `in`, line b of the output at b * out_len of `out`, with
 * (in_len, out_len) = (n, n), (n, n/2 + 1), (n/2 + 1, n) for C2C, R2C, C2R
 * (ga_fft_line_lengths below). `dtype` is the complex side's dtype (complex64
 * or complex128); the real side of R2C/C2R has the matching real dtype. Forward
 * transforms (C2C with inverse 0, R2C) use exp(-2 pi i jk / n), backward ones (C2C
 * with inverse 1, C2R) exp(+2 pi i jk / n); neither scales (the core applies norm).
 * C2R reads only the Hermitian half and ignores the imaginary parts of the zero and
 * (n even) Nyquist terms; it may overwrite `in` (cuFFT does), so the core always
 * passes a scratch copy. n >= 1, batch >= 1, in and out do not overlap. */
typedef struct {
    int32_t kind;    /* ga_fft_kind (ga_ops.h) */
    int32_t dtype;   /* GA_COMPLEX64 or GA_COMPLEX128 */
    int32_t inverse; /* C2C only: 0 forward, 1 backward */
    int64_t n;       /* the transform length */
    int64_t batch;   /* number of lines */
    const char *in;
    char *out;
} ga_fft_desc;

/* The lengths of one input and one output line of `d`, in elements; -1 for an unknown
 * kind (0 otherwise). Inline: the core, the CPU FFT and the CUDA plugin all need it. */
static inline int
ga_fft_line_lengths(const ga_fft_desc *d, int64_t *in_len, int64_t *out_len)
{
    switch (d->kind) {
    case GA_FFT_C2C:
        *in_len = *out_len = d->n;
        return 0;
    case GA_FFT_R2C:
        *in_len = d->n;
        *out_len = d->n / 2 + 1;
        return 0;
    case GA_FFT_C2R:
        *in_len = d->n / 2 + 1;
        *out_len = d->n;
        return 0;
    }
    return -1;
}

/* The outcome of one queued operation that can fail on the device after it was queued
 * (a gather or scatter whose index array is on the device: only the kernel sees the
 * indices). The core owns the record and keeps it alive until `state` is no longer
 * PENDING; the backend fills it once the outcome has reached the host (at a host
 * wait that covers the work, or fault_poll), writing `state` last with a release
 * store, and never touches it again. docs/DESIGN.md, "Failed queued work". */
typedef enum { GA_FAULT_PENDING = 0, GA_FAULT_OK = 1, GA_FAULT_FAILED = 2 } ga_fault_state;

typedef struct ga_fault_record {
    int32_t state;  /* ga_fault_state; read with an acquire load */
    int32_t status; /* FAILED: the ga_status the operation would have returned */
    char message[256]; /* FAILED: its message, as the CPU would have raised it */
} ga_fault_record;

/* The profiler's device times of one operation (ga_profiler.c) on a backend that
 * stamps its own tasks (stamp_tasks below: simulated GPUs): its worker writes when it
 * began the first task queued for the operation and when it finished the last
 * (ga_monotonic_ns, with relaxed atomic stores); 0 while none has run. A wait for the
 * queue orders the writes before the reader. */
typedef struct {
    int64_t start_ns, end_ns;
} ga_op_stamp;

typedef struct ga_backend {
    int abi_version;
    const char *name;

    /* devices */
    int (*device_count)(int *count);
    int (*device_props)(int dev, ga_device_props *out);
    int (*synchronize)(int dev);

    /* memory: blocks are untyped; alloc of 0 bytes returns a valid unique pointer */
    int (*alloc)(int dev, size_t nbytes, void **ptr);
    void (*free)(int dev, void *ptr, size_t nbytes); /* never fails */
    int (*memory_stats)(int dev, ga_memory_stats *out);
    int (*empty_cache)(int dev);

    /* contiguous copies */
    int (*copy_h2d)(int dev, void *dst, const void *src, size_t nbytes);
    int (*copy_d2h)(int dev, void *dst, const void *src, size_t nbytes);
    int (*copy_d2d)(int dev, void *dst, const void *src, size_t nbytes);
    /* between two devices of this backend, ordered after the work of both */
    int (*copy_peer)(int dst_dev, void *dst, int src_dev, const void *src,
                     size_t nbytes);

    /* compute */
    int (*elementwise)(int dev, int op, const ga_loop *loop);
    int (*reduce)(int dev, const ga_reduce_desc *r);
    int (*scan)(int dev, const ga_scan_desc *s);
    int (*gemm)(int dev, const ga_gemm_desc *g);
    int (*random)(int dev, const ga_random_desc *r);
    int (*gather)(int dev, const ga_index_desc *d);
    int (*scatter)(int dev, const ga_index_desc *d);
    /* positions of the nonzero elements of a bool operand in C order, as an int64
     * (count, ndim) array written to `out` (contiguous). The caller knows `count` (from
     * a SUM reduction). */
    int (*nonzero)(int dev, const ga_loop *mask, int64_t count, int64_t *out);
    int (*arange)(int dev, const ga_arange_desc *d);

    /* the message behind the last failing status of this backend (plugin only; NULL
     * for in-core backends, which share the core's ga_error buffer) */
    const char *(*last_error)(void);
    /* why the backend has no devices (plugin only; may be NULL) */
    const char *(*unavailable_reason)(void);
    /* The core hands the backend two hooks once, after loading it: the backend calls
     * `begin()` before a blocking wait for its device and `end(token)` after it, so the
     * binding can let other Python threads run while the host waits. Between the two
     * the backend must touch no core state and hold none of its own locks that a
     * caller holding the GIL could be waiting for: call begin() before taking a lock
     * and end() after releasing it. May be NULL (a backend that never blocks). */
    void (*set_wait_hooks)(void *(*begin)(void), void (*end)(void *token));

    /* ABI 3. May be NULL (the core then says sorting is unsupported there). */
    int (*sort)(int dev, const ga_sort_desc *d);
    int (*searchsorted)(int dev, const ga_search_desc *d);

    /* ABI 4. */
    /* The counters of `dev` (above); with reset_max, max_grid_blocks starts again
     * from 0 after this read. NULL for backends that do not count (CPU, simulated). */
    int (*kernel_counters)(int dev, int reset_max, ga_kernel_counters *out);

    /* ABI 5: sharing device memory with other CUDA libraries of the process (DLPack).
     * NULL for backends whose devices are not CUDA devices (CPU, simulated). Streams
     * are named as DLPack names them: 1 is the legacy default stream, 2 the calling
     * thread's per-thread default stream, any value above 2 a cudaStream_t. */
    /* 1 when other libraries may use this backend's device memory in place as CUDA
     * memory: always on a GPU; in the emulation only in its test-only mode
     * GPUARR_CUDA_EMULATE_DLPACK=cuda (ga_cuda_emu.h). 0 otherwise. */
    int (*shares_memory)(void);
    /* The stream on which this backend queues the work of `dev`. */
    int (*stream_handle)(int dev, uintptr_t *out);
    /* Order `stream` (of device dev) after all work queued so far on dev's stream,
     * without a host wait (an event recorded on ours, waited for on theirs). Nothing
     * to do when `stream` is dev's own stream. */
    int (*order_stream)(int dev, uintptr_t stream);
    /* Wait on the host for the work of every stream on `dev`, other libraries'
     * streams included (cudaDeviceSynchronize). */
    int (*device_wait)(int dev);

    /* ABI 6: the factorisations of gpuarr.linalg (ga_linalg_desc above). NULL where
     * a backend has none (the core says so). A backend that must read a status back
     * from its device (cuSOLVER's devInfo) does so with one wait per call. */
    int (*linalg)(int dev, const ga_linalg_desc *d);
    /* ABI 7: a batch of one-dimensional FFTs (ga_fft_desc). May be NULL (the core
     * then says FFTs are unsupported there). */
    int (*fft)(int dev, const ga_fft_desc *d);

    /* ABI 8: failures that belong to their operation (ga_fault_record above). */
    /* gather (scatter 0) or scatter (1) as the entries above, except that an
     * out-of-range index is reported through `rec` (not by the device's next wait); a
     * scatter whose check fails writes nothing. On a status other than GA_OK the
     * backend has not kept `rec`. NULL where gather and scatter report at once (the
     * CPU). */
    int (*index_checked)(int dev, const ga_index_desc *d, int scatter, ga_fault_record *rec);
    /* Fill, without a host wait, every record whose outcome has reached the host
     * since (CUDA: failure slots copied back behind an event that has completed, e.g.
     * before a copy to another device whose destination the host has since waited
     * for). NULL where records are filled as the work runs (simulated GPUs). */
    int (*fault_poll)(int dev);

    /* ABI 9: timing events (ga_event.h). All five or none (NULL: the core takes the
     * host's clock at the record, right for a backend whose work is done when its
     * calls return). An event is the backend's, made by event_record at the end of
     * the work queued on `dev` so far; it completes when that work is done, and its
     * timestamp is taken then, on the device's side. */
    int (*event_record)(int dev, void **ev);
    /* *done = 1 once completed, else 0; never waits. */
    int (*event_query)(int dev, void *ev, int *done);
    /* Wait on the host until it completed (a host wait: counted in syncs). */
    int (*event_synchronize)(int dev, void *ev);
    /* Milliseconds from `start` to `end`, both completed (the core checks first).
     * With start NULL: `end`'s time on the host's monotonic clock (ga_monotonic_ns /
     * 1e6), where the backend stamps with that clock (simulated GPUs, the emulator),
     * else GA_ERR_UNSUPPORTED (a GPU's own clock: the profiler aligns it itself). */
    int (*event_elapsed)(int dev, void *start, void *end, double *ms);
    /* Release it, also while still pending (never fails). */
    void (*event_destroy)(int dev, void *ev);

    /* ABI 10: order dev's own stream after all work queued so far on `stream` (a
     * stream of another library on dev, named as in order_stream), without a host
     * wait: an event recorded on theirs, waited for on ours. A block a consumer read
     * on `stream` may then go back to the cache (DLPack export). NULL: not a CUDA
     * backend (the core falls back to device_wait). */
    int (*order_after)(int dev, uintptr_t stream);

    /* ABI 11: x.to(cpu(), non_blocking=True) (docs/DESIGN.md, "Non-blocking copies and
     * pinned memory"). Queue a copy of `nbytes` at `src` on `dev` into host memory
     * `dst`, after the work queued so far on `dev`, and return without waiting; an
     * event recorded after it (event_record) completes when `dst` holds the data. The
     * core keeps `dst` alive and untouched by the host until then. NULL: the core
     * copies with copy_d2h (a host wait). */
    int (*copy_d2h_async)(int dev, void *dst, const void *src, size_t nbytes);
    /* Page-locked host memory that the device can copy to and from without staging
     * (cudaHostAlloc), so that those copies stay asynchronous; freed with
     * host_free_pinned. NULL: the backend has no such memory (simulated GPUs: host
     * memory is the device's), and "pinned" is a flag of ordinary host memory. */
    int (*host_alloc_pinned)(size_t nbytes, void **ptr);
    void (*host_free_pinned)(void *ptr);

    /* ABI 12: a copy queue per device beside its compute queue (docs/DESIGN.md,
     * "Non-blocking copies and pinned memory"). Both or neither. With them,
     * copy_d2h_async queues its copy on dev's copy queue, after the work queued so far
     * on the compute queue, and the compute queue's later work runs beside it; the
     * copy queue runs its copies in order. */
    /* An event (as event_record's, and released by event_destroy) at the end of the
     * work queued so far on dev's copy queue. */
    int (*copies_event_record)(int dev, void **ev);
    /* Later work queued on dev's compute queue waits, on the device, for the copies
     * queued so far (the core calls it before a block a queued copy reads is written
     * or freed). No host wait. */
    int (*wait_copies)(int dev);

    /* ABI 13: run a fused elementwise program (ga_fused_prog, checked by the core)
     * over `loop` (args[0] the output, then prog->nin inputs), in one pass over
     * memory: no full-size temporaries, one kernel on a GPU. GA_ERR_UNSUPPORTED,
     * before anything is queued, for a program this backend cannot run (the caller
     * then runs the operations one by one). May be NULL: none can run. */
    int (*fused)(int dev, const ga_fused_prog *prog, const ga_loop *loop);

    /* ABI 14: a full reduction of a fused program's result, reduced as it is made
     * (no full-size temporary): r reduces a contiguous 1-d input (r->in is NULL, never
     * read) whose elements are the program's results over `loop` in C order; loop's
     * output operand is never read or written. The result must be bitwise r over the
     * materialised input. May be NULL (the core runs the program, then the
     * reduction). */
    int (*fused_reduce)(int dev, const ga_fused_prog *prog, const ga_loop *loop,
                        const ga_reduce_desc *r);

    /* ABI 15: what the core asks of the in-core host backends (the CPU, simulated
     * GPUs) through their tables rather than by name, so that runtime/ includes no
     * backend's header and a backend never calls up into the core. NULL elsewhere (the
     * CUDA plugin has none of them). */
    /* The number of devices the core gives this backend, told when the core chooses
     * it and before any of them is used (simulated GPUs, whose count is the core's:
     * GPUARR_SIMULATE_GPUS or simulate_gpus_if_none). */
    void (*set_device_count)(int count);
    /* Tests of asynchrony: operations queued on `dev` and not finished (0 for a device
     * that has queued nothing; non-zero right after queuing a large operation, 0 after
     * synchronize()). */
    int64_t (*pending_work)(int dev);
    /* Tests only: with hold = 1, queue a gate on `dev` that keeps its worker (with
     * `copies`, the worker of its copy queue) waiting: work queued after it stays
     * pending until a call with hold = 0 opens it. Synchronizing a held device waits
     * forever: open it first. */
    int (*hold_queue)(int dev, int copies, int hold);
    /* Every task the calling thread queues from now on, on any device of this
     * backend, carries `s` (NULL: none), so its worker stamps it (ga_op_stamp). `s`
     * must outlive those tasks. Costs two clock reads in the worker, where two timing
     * events per operation would cost two more tasks each (issue 25). */
    void (*stamp_tasks)(ga_op_stamp *s);
    /* The CPU: threads of its kernels, and bytes of freed host blocks it and the
     * simulated GPUs keep per device (0 when the cache is compiled out). */
    int (*num_threads)(void);
    size_t (*host_cache_limit)(void);

    /* ABI 16: CUDA graphs, for a captured step's replay (ops/ga_capture.c). All four
     * or none (NULL: the CPU and simulated GPUs, whose replay runs the calls). Between
     * graph_begin and graph_end the calling thread's calls on `dev` are captured, not
     * run; a host wait among them fails. graph_end with keep makes *graph (or says why
     * it cannot: the capture is then dropped and nothing ran); without keep it drops
     * the capture. graph_launch queues the graph on dev's stream, as one launch; the
     * checked operations captured in it (index_checked, whose `rec` is ignored while
     * capturing) report through `recs`, one per operation in capture order (NULL:
     * reported by the device's next wait), as index_checked's records do. */
    int (*graph_begin)(int dev);
    int (*graph_end)(int dev, int keep, void **graph);
    int (*graph_launch)(int dev, void *graph, ga_fault_record **recs, int nrecs);
    /* Release it, also while launches are pending (never fails). */
    void (*graph_destroy)(int dev, void *graph);
} ga_backend;

/* The plugin exports exactly this symbol:
 *   const ga_backend *gpuarr_cuda_backend(int emulate_devices);
 * emulate_devices is 0 for real CUDA, N for the emulation harness. */
typedef const ga_backend *(*ga_backend_entry_fn)(int emulate_devices);

#ifdef __cplusplus
extern "C" {
#endif
extern const ga_backend ga_backend_cpu;
extern const ga_backend ga_backend_simulated;
#ifdef __cplusplus
}
#endif

#endif
