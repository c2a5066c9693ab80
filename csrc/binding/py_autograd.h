/* py_autograd.h: autograd's recording layer, as the binding's operation files use it.
 *
 * Autograd is one layer over the operations, in two halves:
 *   - here (py_autograd.c), in C: each array's state (requires_grad, grad, grad_fn),
 *     the thread's grad mode, and the recording of a node when an operation ran on
 *     arrays that require grad. Recording happens on every forward operation, so it
 *     is C: one flag test per array operand when nothing requires grad, a node
 *     allocation when something does.
 *   - python/gpuarr/autograd.py: the table of backward formulas (one entry per
 *     primitive named below) and the engine that runs them, in gpuarr operations on
 *     the arrays' devices.
 * A primitive the Python table does not register gives no graph (its output does not
 * require grad): comparisons, floor, argmax... An operation that the table could not
 * differentiate but whose output would silently drop the gradient (a factorisation,
 * an FFT) calls pyga_ag_refuse instead.
 *
 * The recording rule (PyTorch's and MXNet's in one): an operation is recorded when
 * the thread's grad mode is on (the default; no_grad()/pause() turn it off,
 * enable_grad()/record() on) and at least one of its array operands requires grad.
 */
#ifndef PY_AUTOGRAD_H
#define PY_AUTOGRAD_H

#include "py_common.h"

#include "ga_ops.h"
#include "ga_platform.h"

/* The recorded primitives that are not elementwise operations; elementwise ones keep
 * their GA_OP_* code, these follow them. X(ENUM, name): `name` is the key of the
 * formula table (python/gpuarr/autograd.py) and of _core.autograd_ops. */
#define PYGA_AG_PRIMS(X)                                                               \
    X(PYGA_AG_SUM, sum)                                                                \
    X(PYGA_AG_PROD, prod)                                                              \
    X(PYGA_AG_MAX, max)                                                                \
    X(PYGA_AG_MIN, min)                                                                \
    X(PYGA_AG_MEAN, mean)                                                              \
    X(PYGA_AG_VAR, var)                                                                \
    X(PYGA_AG_STD, std)                                                                \
    X(PYGA_AG_CUMSUM, cumsum)                                                          \
    X(PYGA_AG_MATMUL, matmul)                                                          \
    X(PYGA_AG_TENSORDOT, tensordot)                                                    \
    X(PYGA_AG_VECDOT, vecdot)                                                          \
    X(PYGA_AG_VECTOR_NORM, vector_norm)                                                \
    X(PYGA_AG_RESHAPE, reshape)                                                        \
    X(PYGA_AG_PERMUTE_DIMS, permute_dims)                                              \
    X(PYGA_AG_SQUEEZE, squeeze)                                                        \
    X(PYGA_AG_EXPAND_DIMS, expand_dims)                                                \
    X(PYGA_AG_FLIP, flip)                                                              \
    X(PYGA_AG_BROADCAST_TO, broadcast_to)                                              \
    X(PYGA_AG_CONCAT, concat)                                                          \
    X(PYGA_AG_GETITEM, getitem)                                                        \
    X(PYGA_AG_TAKE, take)                                                              \
    X(PYGA_AG_ASTYPE, astype)                                                          \
    X(PYGA_AG_TO, to)                                                                  \
    X(PYGA_AG_LOGSUMEXP, logsumexp)                                                    \
    X(PYGA_AG_RELU, relu)                                                              \
    X(PYGA_AG_LOG_SOFTMAX, log_softmax)                                                \
    X(PYGA_AG_NLL_LOSS, nll_loss)

#define PYGA_X_ENUM(e, name) e,
enum { PYGA_AG_FIRST_PRIM = GA_NOPS - 1, PYGA_AG_PRIMS(PYGA_X_ENUM) PYGA_AG_NOPS };
#undef PYGA_X_ENUM

/* The thread's grad mode, 0 when on (a new thread starts with grad mode on). Read
 * it through pyga_grad_enabled(). */
extern GA_THREAD_LOCAL int pyga_grad_off;

/* How many autograd.record() blocks this thread is in (MXNet's "recording"): an
 * array made a parameter by attach_grad() may be updated in place outside them. */
extern GA_THREAD_LOCAL int pyga_record_depth;

static inline int
pyga_grad_enabled(void)
{
    return !pyga_grad_off;
}

/* Does o (any object) require grad? Array is final, so an exact type test. */
static inline int
pyga_ag_requires(PyObject *o)
{
    return Py_IS_TYPE(o, pyga_state.Array) && ((PyGaArray *)o)->requires_grad;
}

/* The recording rule: does an operation on these n operands need a node? The
 * common answer (nothing requires grad) costs one flag test per operand; grad mode
 * (thread-local storage) is read only when an operand requires grad. */
static inline int
pyga_ag_wanted(PyObject *const *objs, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        if (pyga_ag_requires(objs[i])) {
            return pyga_grad_enabled();
        }
    }
    return 0;
}

/* Give `result` (a new Array) a node of primitive `op` over `inputs` (a tuple of the
 * operands as given: arrays and scalars) with the other arguments `ctx` (any
 * object, usually the call's argument tuple). Steals all three references, any of
 * which may be NULL (an error already set: everything is released and NULL
 * returned). Returns result; it requires grad when op is differentiable and result
 * has a real floating dtype, else it is returned without a graph. A complex result
 * is an error (gpuarr's autograd is real). Call it only when pyga_ag_wanted. */
PyObject *pyga_ag_record(int op, PyObject *result, PyObject *inputs, PyObject *ctx);

/* The same for one array operand: pyga_ag_record(op, result, (x,), ctx). ctx is
 * borrowed here (NULL for None). */
PyObject *pyga_ag_record1(int op, PyObject *result, PyObject *x, PyObject *ctx);

/* A write into `target` (in-place operator, out=, setitem, fill, copyto into an
 * array) with these value operands (NULL entries are skipped): RuntimeError (-1) when
 * grad mode is on and the target or an operand requires grad (an in-place write is
 * not recorded), else 0. `what` names the operation in the message. */
int pyga_ag_write_error(const char *what, PyObject *target, PyObject *const *operands,
                        Py_ssize_t n);
/* A door out of x's memory (the buffer protocol, __array__, __dlpack__, _data_ptr):
 * RuntimeError (-1) when an in-place write to x would be refused (grad mode on, x
 * requires grad), else 0. A write through such a view is not seen by the in-place
 * check nor by the version counter, so it would give a silent wrong gradient: the
 * door refuses, as PyTorch's numpy() and __dlpack__ do. `door` names it. */
int pyga_ag_door_error(const char *door, PyObject *x);
/* Whether that door is closed (the test without the message). */
int pyga_ag_door_closed(PyObject *x);
/* Whether the target or an operand requires grad: when not, the write is allowed and
 * its message need not be made (callers that format `what` ask this first) */
static inline int
pyga_ag_write_touches_grad(PyObject *target, PyObject *const *operands, Py_ssize_t n)
{
    int any = pyga_ag_requires(target);
    for (Py_ssize_t i = 0; i < n && !any; i++) {
        any = operands[i] != NULL && pyga_ag_requires(operands[i]);
    }
    return any;
}
static inline int
pyga_ag_check_write(const char *what, PyObject *target, PyObject *const *operands,
                    Py_ssize_t n)
{
    return pyga_ag_write_touches_grad(target, operands, n)
               ? pyga_ag_write_error(what, target, operands, n)
               : 0;
}

/* An operation autograd cannot differentiate, on operands of which one requires grad
 * while grad mode is on: NotImplementedError naming it (-1), else 0. */
int pyga_ag_refuse(const char *what, PyObject *const *operands, Py_ssize_t n);

/* requires_grad = flag on a new array (the creation functions' requires_grad=):
 * RuntimeError (-1) for a dtype that cannot require grad. */
int pyga_set_requires_grad(PyObject *self, int flag);

#endif
