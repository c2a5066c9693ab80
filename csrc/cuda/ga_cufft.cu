/* ga_cufft.cu: FFTs on a device through cuFFT (the `fft` entry of the backend table).
 *
 * cuFFT is not linked, for the reasons cuBLAS is not (ga_cublas.cu): it is large
 * (about 290 MB on disk), slow to load, and a missing libcufft must not stop the plugin
 * or gpuarr from loading. It is dlopen'ed at the first FFT from the folders of
 * ga_cublas_paths.h (the pip wheel beside gpuarr: nvidia-cufft for CUDA 13,
 * nvidia-cufft-cu12 for CUDA 12; $CUDA_HOME; the loader's search; the build's toolkit).
 * Its soname follows cuFFT's own major version, not CUDA's: CUDA 13 ships
 * libcufft.so.12, CUDA 12 libcufft.so.11 (CUFFT_VER_MAJOR of the header built with).
 * The emulated build takes ga_cuda_emu_cufft.cpp's cufft* (the CPU FFT on the stream).
 *
 * Plans: one per (device, n, batch, type), made with cufftPlanMany in the default
 * layout (contiguous lines, NULL embeddings: exactly ga_fft_desc), bound to the
 * device's stream and kept in a small per-device cache, because making a plan costs far
 * more than a small transform (it may allocate a work area and pick kernels). A
 * transform is then one exec call queued on the stream: no host wait. Evicting a plan
 * waits for the stream first (its work area may still be in use), which only happens
 * when more than GA_FFT_PLANS shapes are in use on a device.
 */
#include "ga_cuda.h"

#ifndef GA_CUDA_EMULATION
#include <cufft.h> /* types and prototypes only */
#endif
#include "ga_cublas_paths.h"
#include "ga_cuda_libs.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <mutex>

/* Plans cached per device (least recently used goes first). */
#define GA_FFT_PLANS 16

namespace {

struct cufft_api {
    decltype(&cufftPlanMany) plan_many;
    decltype(&cufftSetStream) set_stream;
    decltype(&cufftDestroy) destroy;
    decltype(&cufftExecC2C) c2c;
    decltype(&cufftExecZ2Z) z2z;
    decltype(&cufftExecR2C) r2c;
    decltype(&cufftExecD2Z) d2z;
    decltype(&cufftExecC2R) c2r;
    decltype(&cufftExecZ2D) z2d;
};

struct plan_entry {
    int64_t n;
    int batch;
    cufftType type;
    cufftHandle handle;
    cudaStream_t stream;
    uint64_t used; /* 0: empty slot */
};

std::mutex fft_lock; /* the API, the cache, and each exec (which only queues) */
cufft_api api;
int api_state; /* 0 not tried, 1 loaded, -1 failed (reason kept) */
char api_error[900];
plan_entry plans[GA_MAX_DEVICES][GA_FFT_PLANS];
uint64_t use_clock;

#ifndef GA_CUDA_EMULATION
constexpr int cuda_major = CUDART_VERSION / 1000;

void *
open_cufft(void)
{
    char tried[700] = "";
    void *h = ga_cuda_lib_open(ga_cufft_wheel_dir(cuda_major), "libcufft.so",
                               CUFFT_VER_MAJOR, NULL, tried, sizeof(tried));
    if (h == NULL) {
        snprintf(
            api_error, sizeof(api_error),
            "cuFFT (libcufft.so.%d) could not be loaded, so FFTs cannot run on a GPU. "
            "Install it with `pip install %s` or the CUDA %d toolkit, or transform on "
            "the CPU (x.to(gpuarr.cpu())). Tried: %s",
            CUFFT_VER_MAJOR, cuda_major >= 13 ? "nvidia-cufft" : "nvidia-cufft-cu12",
            cuda_major, tried);
    }
    return h;
}

template <typename F>
int
sym(void *h, const char *name, F *out)
{
    return ga_cuda_lib_fn(h, name, out, "cuFFT", CUFFT_VER_MAJOR, api_error,
                          sizeof(api_error));
}
#endif

/* Called with fft_lock held. */
int
load_api(void)
{
    if (api_state == 0) {
#ifdef GA_CUDA_EMULATION
        api = cufft_api{cufftPlanMany, cufftSetStream, cufftDestroy,
                        cufftExecC2C,  cufftExecZ2Z,   cufftExecR2C,
                        cufftExecD2Z,  cufftExecC2R,   cufftExecZ2D};
        api_state = 1;
#else
        void *h = open_cufft();
        api_state = -1;
        if (h != NULL && sym(h, "cufftPlanMany", &api.plan_many) == 0 &&
            sym(h, "cufftSetStream", &api.set_stream) == 0 &&
            sym(h, "cufftDestroy", &api.destroy) == 0 &&
            sym(h, "cufftExecC2C", &api.c2c) == 0 &&
            sym(h, "cufftExecZ2Z", &api.z2z) == 0 &&
            sym(h, "cufftExecR2C", &api.r2c) == 0 &&
            sym(h, "cufftExecD2Z", &api.d2z) == 0 &&
            sym(h, "cufftExecC2R", &api.c2r) == 0 &&
            sym(h, "cufftExecZ2D", &api.z2d) == 0) {
            api_state = 1;
        }
#endif
    }
    if (api_state != 1) {
        return ga_error(GA_ERR_CUDA, "%s", api_error);
    }
    return GA_OK;
}

const char *
result_name(cufftResult r)
{
    switch ((int)r) {
    case 0:
        return "CUFFT_SUCCESS";
    case 1:
        return "CUFFT_INVALID_PLAN";
    case 2:
        return "CUFFT_ALLOC_FAILED";
    case 3:
        return "CUFFT_INVALID_TYPE";
    case 4:
        return "CUFFT_INVALID_VALUE";
    case 5:
        return "CUFFT_INTERNAL_ERROR";
    case 6:
        return "CUFFT_EXEC_FAILED";
    case 7:
        return "CUFFT_SETUP_FAILED";
    case 8:
        return "CUFFT_INVALID_SIZE";
    case 16:
        return "CUFFT_NOT_SUPPORTED";
    }
    return "CUFFT_UNKNOWN";
}

int
cufft_error(cufftResult r, const char *what)
{
    const char *extra = "";
#ifdef GA_CUDA_EMULATION
    extra = ga_emu_take_error_detail();
#endif
    return ga_error(r == CUFFT_ALLOC_FAILED ? GA_ERR_OOM_DEVICE : GA_ERR_CUDA,
                    "cuFFT error %s in %s%s%s", result_name(r), what,
                    extra[0] ? "; " : "", extra);
}

/* The cached plan of (dev, n, batch, type), made and bound to `s` when missing. Called
 * with fft_lock held. */
int
plan_for(int dev, cudaStream_t s, int64_t n, int batch, cufftType type,
         cufftHandle *out)
{
    plan_entry *slots = plans[dev];
    plan_entry *victim = &slots[0];
    for (int i = 0; i < GA_FFT_PLANS; i++) {
        plan_entry *e = &slots[i];
        if (e->used != 0 && e->n == n && e->batch == batch && e->type == type &&
            e->stream == s) {
            e->used = ++use_clock;
            *out = e->handle;
            return GA_OK;
        }
        if (e->used < victim->used) {
            victim = e;
        }
    }
    if (victim->used != 0) {
        /* its work area may still be in use by queued transforms */
        ga_cuda_count_sync(victim->stream);
        GA_CUDA_TRY(cudaStreamSynchronize(victim->stream));
        api.destroy(victim->handle);
        victim->used = 0;
    }
    cufftHandle h = 0;
    int len = (int)n;
    cufftResult r = api.plan_many(&h, 1, &len, NULL, 1, 0, NULL, 1, 0, type, batch);
    if (r != CUFFT_SUCCESS) {
        return cufft_error(r, "cufftPlanMany");
    }
    r = api.set_stream(h, s);
    if (r != CUFFT_SUCCESS) {
        api.destroy(h);
        return cufft_error(r, "cufftSetStream");
    }
    *victim = plan_entry{n, batch, type, h, s, ++use_clock};
    *out = h;
    return GA_OK;
}

cufftType
type_of(const ga_fft_desc *d)
{
    bool single = d->dtype == GA_COMPLEX64;
    switch (d->kind) {
    case GA_FFT_R2C:
        return single ? CUFFT_R2C : CUFFT_D2Z;
    case GA_FFT_C2R:
        return single ? CUFFT_C2R : CUFFT_Z2D;
    default:
        return single ? CUFFT_C2C : CUFFT_Z2Z;
    }
}

cufftResult
exec(cufftHandle h, const ga_fft_desc *d, const char *in, char *out, const char **what)
{
    int dir = d->inverse ? CUFFT_INVERSE : CUFFT_FORWARD;
    /* cuFFT takes non-const inputs (C2R may overwrite them: the core passes a copy) */
    void *i = (void *)in;
    switch (type_of(d)) {
    case CUFFT_C2C:
        *what = "cufftExecC2C";
        return api.c2c(h, (cufftComplex *)i, (cufftComplex *)out, dir);
    case CUFFT_Z2Z:
        *what = "cufftExecZ2Z";
        return api.z2z(h, (cufftDoubleComplex *)i, (cufftDoubleComplex *)out, dir);
    case CUFFT_R2C:
        *what = "cufftExecR2C";
        return api.r2c(h, (cufftReal *)i, (cufftComplex *)out);
    case CUFFT_D2Z:
        *what = "cufftExecD2Z";
        return api.d2z(h, (cufftDoubleReal *)i, (cufftDoubleComplex *)out);
    case CUFFT_C2R:
        *what = "cufftExecC2R";
        return api.c2r(h, (cufftComplex *)i, (cufftReal *)out);
    default:
        *what = "cufftExecZ2D";
        return api.z2d(h, (cufftDoubleComplex *)i, (cufftDoubleReal *)out);
    }
}

}  // namespace

extern "C" int
ga_cuda_fft(int dev, const ga_fft_desc *d)
{
    if (d->dtype != GA_COMPLEX64 && d->dtype != GA_COMPLEX128) {
        return ga_error(GA_ERR_TYPE, "fft: cuFFT takes complex64 or complex128 lines");
    }
    int64_t in_len, out_len;
    if (ga_fft_line_lengths(d, &in_len, &out_len) != 0 || d->n < 1 || d->batch < 1) {
        return ga_error(GA_ERR_VALUE, "internal: fft of kind %d, n %lld, batch %lld",
                        (int)d->kind, (long long)d->n, (long long)d->batch);
    }
    int64_t longest = in_len > out_len ? in_len : out_len;
    if (d->n > INT_MAX) {
        return ga_error(
            GA_ERR_VALUE,
            "an FFT of %lld points exceeds cuFFT's 32-bit plans; transform on "
            "the CPU (x.to(gpuarr.cpu()))",
            (long long)d->n);
    }
    cudaStream_t s = NULL;
    GA_TRY(ga_cuda_stream(dev, &s));
    size_t csize = d->dtype == GA_COMPLEX64 ? 8 : 16, rsize = csize / 2;
    size_t in_item = d->kind == GA_FFT_R2C ? rsize : csize;
    size_t out_item = d->kind == GA_FFT_C2R ? rsize : csize;
    /* a 32-bit plan addresses at most INT_MAX elements: batches in chunks below that */
    int64_t per = INT_MAX / longest;
    std::lock_guard<std::mutex> g(fft_lock);
    GA_TRY(load_api());
    for (int64_t done = 0; done < d->batch;) {
        int nb = (int)(d->batch - done < per ? d->batch - done : per);
        cufftHandle h = 0;
        GA_TRY(plan_for(dev, s, d->n, nb, type_of(d), &h));
        const char *what;
        cufftResult r = exec(h, d, d->in + (size_t)done * (size_t)in_len * in_item,
                             d->out + (size_t)done * (size_t)out_len * out_item, &what);
        if (r != CUFFT_SUCCESS) {
            return cufft_error(r, what);
        }
        /* counted as one launch of an unknown grid (cuFFT picks its kernels) */
        ga_cuda_count_launch(s, 0);
        done += nb;
    }
    return GA_OK;
}
