/* ga_blas.c: loading a CPU BLAS with dlopen. */
#include "ga_blas.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "ga_error.h"

static ga_blas_table table;
static int loaded;

static void *
find(void *h, const char *prefix, const char *name)
{
    char sym[64];
    snprintf(sym, sizeof(sym), "%scblas_%s", prefix, name);
    return dlsym(h, sym);
}

int
ga_blas_load(const char *path)
{
    if (path == NULL) {
        loaded = 0;
        return GA_OK;
    }
    /* The handle is never closed: OpenBLAS keeps worker threads that must not lose
     * their code, and reloading the same path returns the same handle anyway. */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        return ga_error(GA_ERR_RUNTIME, "cannot load the BLAS library %s: %s", path,
                        e ? e : "unknown error");
    }
    static const char *const prefixes[] = {"scipy_", ""};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        ga_blas_table t;
        memset(&t, 0, sizeof(t));
        t.sgemm = (ga_sgemm_fn)find(h, prefixes[i], "sgemm");
        t.dgemm = (ga_dgemm_fn)find(h, prefixes[i], "dgemm");
        t.cgemm = (ga_cgemm_fn)find(h, prefixes[i], "cgemm");
        t.zgemm = (ga_cgemm_fn)find(h, prefixes[i], "zgemm");
        if (t.sgemm && t.dgemm && t.cgemm && t.zgemm) {
            snprintf(t.path, sizeof(t.path), "%s", path);
            snprintf(t.prefix, sizeof(t.prefix), "%s", prefixes[i]);
            table = t;
            loaded = 1;
            return GA_OK;
        }
    }
    return ga_error(GA_ERR_RUNTIME, "%s has no cblas_sgemm/dgemm/cgemm/zgemm (nor the "
                    "scipy_-prefixed names of scipy-openblas32)", path);
}

const ga_blas_table *
ga_blas_get(void)
{
    return loaded ? &table : NULL;
}
