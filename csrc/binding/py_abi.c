/* py_abi.c: the layout of the backend ABI's structs (ga_backend.h), for tests.
 *
 * Tests drive the CUDA plugin below the core through ctypes mirrors of these structs
 * (tests/test_cuda_kernels.py, tests/test_cuda_emulation.py). A mirror that drifts
 * from the header (a field added, a type changed) would pass garbage to the plugin and
 * fail in confusing ways, or not at all. `_core._abi_layout()` gives each struct's
 * size and each field's offset as the C compiler laid them out, so
 * tests/test_abi_mirror.py can compare every mirror with the real thing. */
#include <stddef.h>

#include "py_common.h"

#include "ga_backend.h"

/* (struct, field) for every field a test mirrors or may mirror, in declaration order. */
#define GA_ABI_FIELDS(X)                                                               \
    X(ga_operand, data)                                                                \
    X(ga_operand, strides)                                                             \
    X(ga_operand, dtype)                                                               \
    X(ga_operand, is_scalar)                                                           \
    X(ga_operand, value)                                                               \
    X(ga_loop, ndim)                                                                   \
    X(ga_loop, nargs)                                                                  \
    X(ga_loop, size)                                                                   \
    X(ga_loop, shape)                                                                  \
    X(ga_loop, args)                                                                   \
    X(ga_reduce_desc, op)                                                              \
    X(ga_reduce_desc, in_dtype)                                                        \
    X(ga_reduce_desc, out_dtype)                                                       \
    X(ga_reduce_desc, out_ndim)                                                        \
    X(ga_reduce_desc, red_ndim)                                                        \
    X(ga_reduce_desc, out_size)                                                        \
    X(ga_reduce_desc, red_size)                                                        \
    X(ga_reduce_desc, out_shape)                                                       \
    X(ga_reduce_desc, red_shape)                                                       \
    X(ga_reduce_desc, in)                                                              \
    X(ga_reduce_desc, in_out_strides)                                                  \
    X(ga_reduce_desc, in_red_strides)                                                  \
    X(ga_reduce_desc, out)                                                             \
    X(ga_reduce_desc, out_strides)                                                     \
    X(ga_index_desc, loop)                                                             \
    X(ga_index_desc, index_dims)                                                       \
    X(ga_index_desc, index_strides)                                                    \
    X(ga_gemm_desc, dtype)                                                             \
    X(ga_gemm_desc, transa)                                                            \
    X(ga_gemm_desc, transb)                                                            \
    X(ga_gemm_desc, m)                                                                 \
    X(ga_gemm_desc, n)                                                                 \
    X(ga_gemm_desc, k)                                                                 \
    X(ga_gemm_desc, a)                                                                 \
    X(ga_gemm_desc, lda)                                                               \
    X(ga_gemm_desc, stride_a)                                                          \
    X(ga_gemm_desc, b)                                                                 \
    X(ga_gemm_desc, ldb)                                                               \
    X(ga_gemm_desc, stride_b)                                                          \
    X(ga_gemm_desc, c)                                                                 \
    X(ga_gemm_desc, ldc)                                                               \
    X(ga_gemm_desc, stride_c)                                                          \
    X(ga_gemm_desc, batch)                                                             \
    X(ga_gemm_desc, alpha)                                                             \
    X(ga_gemm_desc, beta)                                                              \
    X(ga_fft_desc, kind)                                                               \
    X(ga_fft_desc, dtype)                                                              \
    X(ga_fft_desc, inverse)                                                            \
    X(ga_fft_desc, n)                                                                  \
    X(ga_fft_desc, batch)                                                              \
    X(ga_fft_desc, in)                                                                 \
    X(ga_fft_desc, out)                                                                \
    X(ga_kernel_counters, launches)                                                    \
    X(ga_kernel_counters, syncs)                                                       \
    X(ga_kernel_counters, h2d)                                                         \
    X(ga_kernel_counters, d2h)                                                         \
    X(ga_kernel_counters, max_grid_blocks)                                             \
    X(ga_kernel_counters, graph_launches)                                              \
    X(ga_kernel_counters, graph_kernels)                                               \
    GA_ABI_BACKEND_FIELDS(X)

/* The backend table, every entry in order: a mirror must list them all. */
#define GA_ABI_BACKEND_FIELDS(X)                                                       \
    X(ga_backend, abi_version)                                                         \
    X(ga_backend, name)                                                                \
    X(ga_backend, device_count)                                                        \
    X(ga_backend, device_props)                                                        \
    X(ga_backend, synchronize)                                                         \
    X(ga_backend, alloc)                                                               \
    X(ga_backend, free)                                                                \
    X(ga_backend, memory_stats)                                                        \
    X(ga_backend, empty_cache)                                                         \
    X(ga_backend, copy_h2d)                                                            \
    X(ga_backend, copy_d2h)                                                            \
    X(ga_backend, copy_d2d)                                                            \
    X(ga_backend, copy_peer)                                                           \
    X(ga_backend, elementwise)                                                         \
    X(ga_backend, reduce)                                                              \
    X(ga_backend, scan)                                                                \
    X(ga_backend, gemm)                                                                \
    X(ga_backend, random)                                                              \
    X(ga_backend, gather)                                                              \
    X(ga_backend, scatter)                                                             \
    X(ga_backend, nonzero)                                                             \
    X(ga_backend, arange)                                                              \
    X(ga_backend, last_error)                                                          \
    X(ga_backend, unavailable_reason)                                                  \
    X(ga_backend, set_wait_hooks)                                                      \
    X(ga_backend, sort)                                                                \
    X(ga_backend, searchsorted)                                                        \
    X(ga_backend, kernel_counters)                                                     \
    X(ga_backend, shares_memory)                                                       \
    X(ga_backend, stream_handle)                                                       \
    X(ga_backend, order_stream)                                                        \
    X(ga_backend, device_wait)                                                         \
    X(ga_backend, linalg)                                                              \
    X(ga_backend, fft)                                                                 \
    X(ga_backend, index_checked)                                                       \
    X(ga_backend, fault_poll)                                                          \
    X(ga_backend, event_record)                                                        \
    X(ga_backend, event_query)                                                         \
    X(ga_backend, event_synchronize)                                                   \
    X(ga_backend, event_elapsed)                                                       \
    X(ga_backend, event_destroy)                                                       \
    X(ga_backend, order_after)                                                         \
    X(ga_backend, copy_d2h_async)                                                      \
    X(ga_backend, host_alloc_pinned)                                                   \
    X(ga_backend, host_free_pinned)                                                    \
    X(ga_backend, copies_event_record)                                                 \
    X(ga_backend, wait_copies)                                                         \
    X(ga_backend, fused)                                                               \
    X(ga_backend, fused_reduce)                                                        \
    X(ga_backend, set_device_count)                                                    \
    X(ga_backend, pending_work)                                                        \
    X(ga_backend, hold_queue)                                                          \
    X(ga_backend, stamp_tasks)                                                         \
    X(ga_backend, num_threads)                                                         \
    X(ga_backend, host_cache_limit)                                                    \
    X(ga_backend, graph_begin)                                                         \
    X(ga_backend, graph_end)                                                           \
    X(ga_backend, graph_launch)                                                        \
    X(ga_backend, graph_destroy)

#define GA_ABI_STRUCTS(X)                                                              \
    X(ga_operand)                                                                      \
    X(ga_loop)                                                                         \
    X(ga_reduce_desc)                                                                  \
    X(ga_index_desc)                                                                   \
    X(ga_gemm_desc)                                                                    \
    X(ga_fft_desc)                                                                     \
    X(ga_kernel_counters)                                                              \
    X(ga_backend)

typedef struct {
    const char *type, *field;
    size_t offset, size;
} abi_field;

static const abi_field abi_fields[] = {
#define GA_X_FIELD(T, F) {#T, #F, offsetof(T, F), sizeof(((T *)0)->F)},
    GA_ABI_FIELDS(GA_X_FIELD)
#undef GA_X_FIELD
};

static const struct {
    const char *type;
    size_t size;
} abi_structs[] = {
#define GA_X_STRUCT(T) {#T, sizeof(T)},
    GA_ABI_STRUCTS(GA_X_STRUCT)
#undef GA_X_STRUCT
};

/* _abi_layout() -> {struct: (sizeof, [(field, offset, size), ...])} */
static PyObject *
fn_abi_layout(PyObject *m, PyObject *noargs)
{
    (void)m;
    (void)noargs;
    PyObject *result = PyDict_New(), *item = NULL, *fields = NULL, *f = NULL;
    if (result == NULL) {
        return NULL;
    }
    for (size_t s = 0; s < sizeof abi_structs / sizeof abi_structs[0]; s++) {
        fields = PyList_New(0);
        if (fields == NULL) {
            goto error;
        }
        for (size_t i = 0; i < sizeof abi_fields / sizeof abi_fields[0]; i++) {
            if (strcmp(abi_fields[i].type, abi_structs[s].type) != 0) {
                continue;
            }
            f = Py_BuildValue("(snn)", abi_fields[i].field,
                              (Py_ssize_t)abi_fields[i].offset,
                              (Py_ssize_t)abi_fields[i].size);
            if (f == NULL || PyList_Append(fields, f) < 0) {
                goto error;
            }
            Py_CLEAR(f);
        }
        item = Py_BuildValue("(nO)", (Py_ssize_t)abi_structs[s].size, fields);
        if (item == NULL || PyDict_SetItemString(result, abi_structs[s].type, item) < 0) {
            goto error;
        }
        Py_CLEAR(item);
        Py_CLEAR(fields);
    }
    return result;
error:
    Py_XDECREF(f);
    Py_XDECREF(item);
    Py_XDECREF(fields);
    Py_DECREF(result);
    return NULL;
}

PyMethodDef pyga_abi_functions[] = {
    {"_abi_layout", fn_abi_layout, METH_NOARGS,
     "_abi_layout()\n--\n\nFor tests: {struct: (sizeof, [(field, offset, size), ...])} "
     "of the backend ABI's structs, as the C compiler laid them out."},
    {NULL},
};
