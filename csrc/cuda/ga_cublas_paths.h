/* ga_cublas_paths.h: where the CUDA plugin looks for cuBLAS, cuSOLVER and cuFFT, in
 * order (plain C, no CUDA: tests/cuda/test_cublas_paths.py compiles it on its own to check
 * the order). cuSOLVER (ga_cusolver.cu) and cuFFT (ga_cufft.cu) use the same folders
 * with their own wheel folders (ga_cusolver_wheel_dir, ga_cufft_wheel_dir); one loop
 * walks them for all three (ga_cuda_lib_open, ga_cuda_libs.cu).
 *
 * cuBLAS must be of the plugin's CUDA major version (libcublas.so.12 for a plugin
 * built with CUDA 12, .so.13 for CUDA 13). The folders, first match wins:
 *   1. the pip wheel installed beside gpuarr in site-packages: nvidia-cublas-cu12 puts
 *      it in nvidia/cublas/lib, nvidia-cublas (13.x) in nvidia/cu13/lib (the extras
 *      gpuarr[cuda12] and gpuarr[cuda13]);
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

/* The wheel's folder, relative to site-packages, for a CUDA major version. */
static inline const char *
ga_cublas_wheel_dir(int cuda_major)
{
    return cuda_major >= 13 ? "nvidia/cu13/lib" : "nvidia/cublas/lib";
}

/* nvidia-cusolver (13.x) shares the cu13 folder; nvidia-cusolver-cu12 has its own. */
static inline const char *
ga_cusolver_wheel_dir(int cuda_major)
{
    return cuda_major >= 13 ? "nvidia/cu13/lib" : "nvidia/cusolver/lib";
}

/* nvidia-cufft (12.x, the cuFFT of CUDA 13) shares the cu13 folder; nvidia-cufft-cu12
 * (11.x) has its own. cuFFT's soname is cuFFT's major, not CUDA's: libcufft.so.12 in
 * CUDA 13, .so.11 in CUDA 12 (ga_cufft.cu takes CUFFT_VER_MAJOR from cufft.h). */
static inline const char *
ga_cufft_wheel_dir(int cuda_major)
{
    return cuda_major >= 13 ? "nvidia/cu13/lib" : "nvidia/cufft/lib";
}

/* The candidate folders of ga_cublas_candidates for a library whose pip wheel puts it
 * in site-packages/`wheel_dir`. */
static inline int
ga_cuda_lib_candidates(const char *wheel_dir, const char *plugin_file,
                       const char *cuda_home, const char *cuda_path,
                       const char *toolkit_libdir,
                       ga_cublas_candidate out[GA_CUBLAS_MAX_CANDIDATES]);

/* Fill `out` with the folders to try, in order; returns how many. `plugin_file` is the
 * plugin's own path (from dladdr; NULL if unknown), installed as
 * site-packages/gpuarr/libgpuarr_cuda.so; cuda_home and cuda_path are the values of
 * those environment variables (NULL or "" when unset); toolkit_libdir is where the
 * build's toolkit keeps its libraries. */
static inline int
ga_cublas_candidates(int cuda_major, const char *plugin_file, const char *cuda_home,
                     const char *cuda_path, const char *toolkit_libdir,
                     ga_cublas_candidate out[GA_CUBLAS_MAX_CANDIDATES])
{
    return ga_cuda_lib_candidates(ga_cublas_wheel_dir(cuda_major), plugin_file, cuda_home,
                                  cuda_path, toolkit_libdir, out);
}

static inline int
ga_cuda_lib_candidates(const char *wheel_dir, const char *plugin_file,
                       const char *cuda_home, const char *cuda_path,
                       const char *toolkit_libdir,
                       ga_cublas_candidate out[GA_CUBLAS_MAX_CANDIDATES])
{
    int n = 0;
    const char *slash = plugin_file != NULL ? strrchr(plugin_file, '/') : NULL;
    if (slash != NULL) {
        snprintf(out[n++].dir, sizeof(out[0].dir), "%.*s/../%s",
                 (int)(slash - plugin_file), plugin_file, wheel_dir);
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

#endif
