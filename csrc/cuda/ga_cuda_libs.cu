/* ga_cuda_libs.cu: the loop that dlopens a CUDA library from the folders of
 * ga_cublas_paths.h, and its dlsym (see ga_cuda_libs.h). Host code only. */
#include "ga_cuda_libs.h"

#include "ga_cublas_paths.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GA_CUDA_TOOLKIT_LIBDIR
#define GA_CUDA_TOOLKIT_LIBDIR "/usr/local/cuda/lib64"
#endif

void *
ga_cuda_lib_open(const char *wheel_dir, const char *soname, int major,
                 const char *preload, char *tried, size_t n)
{
    /* the plugin's own file: site-packages/gpuarr/libgpuarr_cuda.so when installed */
    Dl_info info;
    const char *self = NULL;
    if (dladdr((void *)&ga_cuda_lib_open, &info) != 0) {
        self = info.dli_fname;
    }
    ga_cublas_candidate dirs[GA_CUBLAS_MAX_CANDIDATES];
    int count = ga_cuda_lib_candidates(wheel_dir, self, getenv("CUDA_HOME"),
                                       getenv("CUDA_PATH"), GA_CUDA_TOOLKIT_LIBDIR, dirs);
    void *h = NULL;
    for (int i = 0; h == NULL && i < count; i++) {
        const char *dir = dirs[i].dir, *sep = dir[0] ? "/" : "";
        /* Folders come from ga_cublas_paths.h (at most PATH_MAX-ish); a longer one is
         * skipped rather than truncated into another file's name. */
        char pre[8192], path[8192];
        int np = snprintf(path, sizeof(path), "%s%s%s.%d", dir, sep, soname, major);
        int nl = preload != NULL
                     ? snprintf(pre, sizeof(pre), "%s%s%s.%d", dir, sep, preload, major)
                     : 0;
        if (np < 0 || nl < 0 || (size_t)np >= sizeof(path) || (size_t)nl >= sizeof(pre)) {
            continue;
        }
        if (preload != NULL && dir[0] != '\0') {
            dlopen(pre, RTLD_NOW | RTLD_LOCAL);
        }
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (h == NULL) {
            size_t used = strlen(tried);
            snprintf(tried + used, n - used, "%s%s", used ? "; " : "", dlerror());
        }
    }
    return h;
}

void *
ga_cuda_lib_sym(void *h, const char *name, const char *lib, int major, char *error,
                size_t n)
{
    void *f = dlsym(h, name);
    if (f == NULL) {
        snprintf(error, n, "the %s that was loaded has no %s: it is not %s %d", lib, name,
                 lib, major);
    }
    return f;
}
