/* ga_cuda_selftest.h: error plumbing shared by the self-test files
 * (ga_cuda_selftest*.cu). Each exported entry returns 0 on success, or 1 with a
 * message in msg (n bytes), and jumps to its `done:` label to free what it holds. */
#ifndef GA_CUDA_SELFTEST_H
#define GA_CUDA_SELFTEST_H

#include <stdio.h>

#include "ga_cuda.h"

#include "ga_error.h"

/* Write `what` to msg; 1, a failed case's return value. */
static inline int
ga_st_say(char *msg, size_t n, const char *what)
{
    snprintf(msg, n, "%s", what);
    return 1;
}

/* A CUDA status as a GA status (recording the message as ga_cuda_error does). */
static inline int
ga_st_cu_status(cudaError_t e, const char *expr, const char *file, int line)
{
    return e == cudaSuccess ? GA_OK : ga_cuda_error(e, expr, file, line);
}
#define CU(expr) ga_st_cu_status((expr), #expr, __FILE__, __LINE__)

/* Evaluate a GA-status expression; on failure copy the message to msg, set rc = 1 and
 * go to `done`. Needs `msg`, `n`, `rc` and a `done:` label in the caller. */
#define CASE_TRY(expr)                                                                 \
    do {                                                                               \
        if ((expr) != GA_OK) {                                                         \
            snprintf(msg, n, "%s", ga_error_message());                                \
            rc = 1;                                                                    \
            goto done;                                                                 \
        }                                                                              \
    } while (0)

#endif
