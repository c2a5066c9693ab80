/* ga_cuda_libs.h: loading the CUDA libraries (cuBLAS, cuSOLVER, cuFFT) at run time.
 *
 * None of them is linked (ga_cublas.cu says why): each is dlopen'ed at its first use,
 * from the folders of ga_cublas_paths.h in their order, and its functions are found
 * with dlsym. This is that loop, written once; the message a user sees when a library
 * is missing stays with the file that uses the library (it names what cannot run and
 * which wheel to install). The emulated plugin takes the emulator's functions directly
 * and calls none of this, but compiles it like every other .cu.
 */
#ifndef GA_CUDA_LIBS_H
#define GA_CUDA_LIBS_H

#include <stddef.h>

/* dlopen `soname`.`major` (e.g. "libcublas.so", 13) from each folder of
 * ga_cuda_lib_candidates(wheel_dir, ...) in turn, the plugin's own path, $CUDA_HOME,
 * $CUDA_PATH and the build's toolkit filling in the rest; the first that opens wins.
 * `preload` (NULL for none) is a library of the same major version dlopen'ed first from
 * the same folder (not from the loader's own search), whose failure is ignored: it
 * satisfies the main library's dependency on it when that folder is not on the
 * loader's path (cuBLAS on cuBLASLt). A folder whose file name would not fit a path
 * buffer is skipped rather than truncated into another file's name. Returns the
 * handle, or NULL with each folder's dlerror() appended to `tried` ("; " between them,
 * truncated to its `n` bytes; `tried` starts as a string). */
void *ga_cuda_lib_open(const char *wheel_dir, const char *soname, int major,
                       const char *preload, char *tried, size_t n);

/* The function `name` of the library `h` (from ga_cuda_lib_open), or NULL with "the
 * <lib> that was loaded has no <name>: it is not <lib> <major>" in `error` (of `n`
 * bytes). */
void *ga_cuda_lib_sym(void *h, const char *name, const char *lib, int major, char *error,
                      size_t n);

/* ga_cuda_lib_sym into a typed function pointer: 0, or -1 with the message set. */
template <typename F>
inline int
ga_cuda_lib_fn(void *h, const char *name, F *out, const char *lib, int major, char *error,
               size_t n)
{
    *out = (F)ga_cuda_lib_sym(h, name, lib, major, error, n);
    return *out != NULL ? 0 : -1;
}

#endif
