/* ga_error.h: status codes of the core and the thread-local message behind them.
 *
 * Every core function that can fail returns an int status (GA_OK == 0). The message
 * goes into a thread-local buffer and the setter returns the code, so a failure is one
 * line:  return ga_error(GA_ERR_SHAPE, "cannot broadcast %s with %s", a, b);
 * The binding (py_error.c) maps each code to one Python exception type.
 */
#ifndef GA_ERROR_H
#define GA_ERROR_H

#include <stdarg.h>

#define GA_STATUSES(X)                                                                 \
    X(GA_OK, "ok")                                                                     \
    X(GA_ERR_VALUE, "ValueError")                                                      \
    X(GA_ERR_SHAPE, "ValueError (shape)")                                              \
    X(GA_ERR_TYPE, "TypeError")                                                        \
    X(GA_ERR_INDEX, "IndexError")                                                      \
    X(GA_ERR_NOMEM, "MemoryError")                                                     \
    X(GA_ERR_OOM_DEVICE, "OutOfMemoryError")                                           \
    X(GA_ERR_DEVICE, "device error (no such device)")                                  \
    X(GA_ERR_MISMATCH, "DeviceMismatchError")                                          \
    X(GA_ERR_UNSUPPORTED, "unsupported on this device")                                \
    X(GA_ERR_CUDA, "CudaError")                                                        \
    X(GA_ERR_OVERFLOW, "OverflowError")                                                \
    X(GA_ERR_ZERODIV, "ZeroDivisionError")                                             \
    X(GA_ERR_BUFFER, "BufferError")                                                    \
    X(GA_ERR_RUNTIME, "RuntimeError")                                                  \
    X(GA_ERR_AXIS, "AxisError")                                                        \
    X(GA_ERR_LINALG, "LinAlgError")

typedef enum {
#define GA_X_ENUM(code, name) code,
    GA_STATUSES(GA_X_ENUM)
#undef GA_X_ENUM
        GA_NSTATUS
} ga_status;

#ifdef __cplusplus
extern "C" {
#endif

/* Record a formatted message for this thread and return `code`. */
int ga_error(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The last message recorded on this thread ("" if none). */
const char *ga_error_message(void);

/* Prefix the current message with `context: ` and return `code` (for adding the
 * operation's name to an error raised deep inside). */
int ga_error_context(int code, const char *context);

#ifdef __cplusplus
}
#endif

/* Propagate a failing status. */
#define GA_TRY(expr)                                                                   \
    do {                                                                               \
        int ga_try_status_ = (expr);                                                   \
        if (ga_try_status_ != GA_OK) {                                                 \
            return ga_try_status_;                                                     \
        }                                                                              \
    } while (0)

#endif
