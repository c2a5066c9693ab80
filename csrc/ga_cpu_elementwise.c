/* ga_cpu_elementwise.c: elementwise kernels on the CPU (placeholder: COPY only). */
#include <string.h>

#include "ga_cpu.h"
#include "ga_cpu_loop.h"
#include "ga_error.h"

static void
copy_bytes(char **p, const int64_t *s, int64_t n, void *ctx)
{
    size_t size = (size_t)(intptr_t)ctx;
    for (int64_t i = 0; i < n; i++) {
        memcpy(p[0] + i * s[0], p[1] + i * s[1], size);
    }
}

int
ga_cpu_elementwise(int dev, int op, const ga_loop *loop)
{
    (void)dev;
    if (op == GA_OP_COPY && loop->args[0].dtype == loop->args[1].dtype) {
        ga_cpu_run_loop(loop, copy_bytes,
                        (void *)(intptr_t)ga_dtype_itemsize((ga_dtype)loop->args[0].dtype));
        return GA_OK;
    }
    return ga_error(GA_ERR_UNSUPPORTED, "%s is not implemented on the CPU yet",
                    ga_op_names[op]);
}
