/* ga_cublas_paths.h: where the CUDA plugin looks for cuBLAS and cuFFT, in order (plain
 * C, no CUDA: tests/test_cublas_paths.py compiles it on its own to check the order).
 *
 * cuBLAS must be of the plugin's CUDA major version (libcublas.so.12 for a plugin
 * built with CUDA 12, .so.13 for CUDA 13); cuFFT has its own numbering (CUDA 12 ships
 * libcufft.so.11, CUDA 13 libcufft.so.12: CUFFT_VER_MAJOR of the cufft.h the plugin
 * was built with). The folders, first match wins:
 *   1. the pip wheel installed beside gpuarr in site-packages: the CUDA 12 wheels put
 *      a library in nvidia/<name>/lib (nvidia-cublas-cu12: nvidia/cublas/lib,
 *      nvidia-cufft-cu12: nvidia/cufft/lib), the CUDA 13 ones all in nvidia/cu13/lib
 *      (nvidia-cublas, nvidia-cufft; the extras gpuarr[cuda12] and gpuarr[cuda13]);
 *   2. $CUDA_HOME/lib64, then $CUDA_PATH/lib64 (a toolkit the user points at);
 *   3. the loader's own search: LD_LIBRARY_PATH, the ldconfig cache (system packages);
 *   4. the lib folder of the toolkit the plugin was built with;
 *   5. /usr/local/cuda/lib64.
 */
#ifndef GA_CUBLAS_PATHS_H
#define GA_CUBLAS_PATHS_H

#include <stdio.h>
#include <string.h>

#define GA_CUBLAS_MAX_CANDIDATES 6

typedef struct {
    char dir[1024]; /* "" = the loader's own search */
} ga_cublas_candidate;

/* The wheel's folder of library `lib` ("cublas", "cufft"), relative to
 * site-packages, for a CUDA major version, in `buf`. */
static inline const char *
ga_cuda_lib_wheel_dir(const char *lib, int cuda_major, char *buf, size_t n)
{
    if (cuda_major >= 13) {
        snprintf(buf, n, "nvidia/cu13/lib");
    } else {
        snprintf(buf, n, "nvidia/%s/lib", lib);
    }
    return buf;
}

/* Fill `out` with the folders to try for library `lib`, in order; returns how many.
 * `plugin_file` is the plugin's own path (from dladdr; NULL if unknown), installed as
 * site-packages/gpuarr/libgpuarr_cuda.so; cuda_home and cuda_path are the values of
 * those environment variables (NULL or "" when unset); toolkit_libdir is where the
 * build's toolkit keeps its libraries. */
static inline int
ga_cuda_lib_candidates(const char *lib, int cuda_major, const char *plugin_file,
                       const char *cuda_home, const char *cuda_path,
                       const char *toolkit_libdir,
                       ga_cublas_candidate out[GA_CUBLAS_MAX_CANDIDATES])
{
    int n = 0;
    const char *slash = plugin_file != NULL ? strrchr(plugin_file, '/') : NULL;
    if (slash != NULL) {
        char wheel[64];
        snprintf(out[n++].dir, sizeof(out[0].dir), "%.*s/../%s",
                 (int)(slash - plugin_file), plugin_file,
                 ga_cuda_lib_wheel_dir(lib, cuda_major, wheel, sizeof wheel));
    }
    const char *homes[2] = {cuda_home, cuda_path};
    for (int i = 0; i < 2; i++) {
        if (homes[i] != NULL && homes[i][0] != '\0') {
            snprintf(out[n++].dir, sizeof(out[0].dir), "%s/lib64", homes[i]);
        }
    }
    out[n++].dir[0] = '\0';
    if (toolkit_libdir != NULL && toolkit_libdir[0] != '\0') {
        snprintf(out[n++].dir, sizeof(out[0].dir), "%s", toolkit_libdir);
    }
    snprintf(out[n++].dir, sizeof(out[0].dir), "/usr/local/cuda/lib64");
    return n;
}

/* cuBLAS's folders (ga_cuda_lib_candidates for "cublas"). */
static inline int
ga_cublas_candidates(int cuda_major, const char *plugin_file, const char *cuda_home,
                     const char *cuda_path, const char *toolkit_libdir,
                     ga_cublas_candidate out[GA_CUBLAS_MAX_CANDIDATES])
{
    return ga_cuda_lib_candidates("cublas", cuda_major, plugin_file, cuda_home, cuda_path,
                                  toolkit_libdir, out);
}

#endif
