/* ga_cuda_emu_cufft.cpp: the emulation's cuFFT (the CPU FFT), for ga_cufft.cu. */
#include "ga_cuda_emu_internal.h"

#include "ga_cpu.h"
#include "ga_error.h"

using namespace ga_emu;

/* --- cuFFT on the CPU FFT --------------------------------------------------------------
 *
 * The emulated cufftExec* run gpuarr's own CPU FFT (csrc/cpu/ga_cpu_fft.c, linked into
 * this plugin alone, see csrc/cuda/CMakeLists.txt) on the plan's stream, in order with
 * the kernels around them. Why not an FFT kernel of our own run through the emulated
 * launch path: the emulator tests how gpuarr drives cuFFT (plan geometry, which
 * buffers, their lengths, stream order, the C2R input that cuFFT may overwrite), not
 * cuFFT's numerics, which no CPU code can reproduce bit for bit anyway. A second FFT
 * written for the emulator would be code that real builds never run; the CPU FFT is
 * tested against NumPy already (tests/core/test_fft.py) and so gives the right answers to
 * compare with. What it checks like the real library: a plan exists, its type matches
 * the exec call, the buffers lie in device blocks of the plan's sizes; and it scribbles
 * over the input of a C2R transform afterwards, as cuFFT is allowed to. */

namespace {

struct emu_fft_plan {
    int64_t n, batch;
    cufftType type;
    cudaStream_t stream;
};

std::mutex fft_lock;
std::map<cufftHandle, emu_fft_plan> fft_plans;
cufftHandle fft_next = 1;

bool
fft_single(cufftType t)
{
    return t == CUFFT_C2C || t == CUFFT_R2C || t == CUFFT_C2R;
}

cufftResult
fft_exec(cufftHandle h, cufftType want, const void *in, void *out, int inverse)
{
    if (ga_emu_inject("cufft")) {
        last_error = cudaSuccess; /* a cuFFT failure is no CUDA runtime error */
        return CUFFT_EXEC_FAILED;
    }
    emu_fft_plan p;
    {
        std::lock_guard<std::mutex> g(fft_lock);
        auto it = fft_plans.find(h);
        if (it == fft_plans.end()) {
            return CUFFT_INVALID_PLAN;
        }
        p = it->second;
    }
    if (p.type != want) {
        snprintf(error_detail, sizeof(error_detail),
                 "cuFFT exec of type 0x%x on a plan of type 0x%x", (unsigned)want,
                 (unsigned)p.type);
        return CUFFT_INVALID_TYPE;
    }
    ga_fft_desc d = {};
    d.kind = want == CUFFT_R2C || want == CUFFT_D2Z   ? GA_FFT_R2C
             : want == CUFFT_C2R || want == CUFFT_Z2D ? GA_FFT_C2R
                                                      : GA_FFT_C2C;
    d.dtype = fft_single(want) ? GA_COMPLEX64 : GA_COMPLEX128;
    d.inverse = inverse;
    d.n = p.n;
    d.batch = p.batch;
    d.in = (const char *)in;
    d.out = (char *)out;
    int64_t in_len = 0, out_len = 0;
    ga_fft_line_lengths(&d, &in_len, &out_len);
    size_t csize = fft_single(want) ? 8 : 16, rsize = csize / 2;
    size_t in_bytes = (size_t)(in_len * p.batch) * (d.kind == GA_FFT_R2C ? rsize : csize);
    size_t out_bytes = (size_t)(out_len * p.batch) * (d.kind == GA_FFT_C2R ? rsize : csize);
    if (where(in, in_bytes) < 0 || where(out, out_bytes) < 0) {
        snprintf(error_detail, sizeof(error_detail),
                 "cuFFT buffers of %zu and %zu bytes (n %lld, batch %lld) do not lie in "
                 "device blocks (emulation check)",
                 in_bytes, out_bytes, (long long)p.n, (long long)p.batch);
        return CUFFT_EXEC_FAILED;
    }
    bool scribble = d.kind == GA_FFT_C2R;
    void *in_w = const_cast<void *>(in);
    enqueue(resolve(p.stream), [=] {
        in_window w;
        ga_fft_desc dd = d;
        if (ga_cpu_fft(0, &dd) != GA_OK) {
            snprintf(error_detail, sizeof(error_detail), "emulated cuFFT: %s",
                     ga_error_message());
            fail_launch(cudaErrorLaunchFailure);
            return;
        }
        if (scribble) {
            memset(in_w, 0xff, in_bytes); /* NaNs: a caller that reads it again sees */
        }
    });
    return CUFFT_SUCCESS;
}

}  // namespace

extern "C" {

cufftResult
cufftPlanMany(cufftHandle *plan, int rank, int *n, int *inembed, int istride, int idist,
              int *onembed, int ostride, int odist, cufftType type, int batch)
{
    if (ga_emu_inject("cufftPlanMany")) {
        last_error = cudaSuccess;
        return CUFFT_SETUP_FAILED;
    }
    if (rank != 1 || n == nullptr || n[0] < 1 || batch < 1) {
        return CUFFT_INVALID_SIZE;
    }
    if (inembed != nullptr || onembed != nullptr) {
        (void)istride, (void)idist, (void)ostride, (void)odist;
        return CUFFT_NOT_SUPPORTED; /* the emulation serves the default layout only */
    }
    if (type != CUFFT_C2C && type != CUFFT_Z2Z && type != CUFFT_R2C && type != CUFFT_D2Z &&
        type != CUFFT_C2R && type != CUFFT_Z2D) {
        return CUFFT_INVALID_TYPE;
    }
    std::lock_guard<std::mutex> g(fft_lock);
    cufftHandle h = fft_next++;
    fft_plans[h] = emu_fft_plan{n[0], batch, type, nullptr};
    *plan = h;
    return CUFFT_SUCCESS;
}

cufftResult
cufftSetStream(cufftHandle plan, cudaStream_t stream)
{
    std::lock_guard<std::mutex> g(fft_lock);
    auto it = fft_plans.find(plan);
    if (it == fft_plans.end()) {
        return CUFFT_INVALID_PLAN;
    }
    it->second.stream = stream;
    return CUFFT_SUCCESS;
}

cufftResult
cufftDestroy(cufftHandle plan)
{
    std::lock_guard<std::mutex> g(fft_lock);
    /* queued executions captured the plan's numbers, not the plan */
    return fft_plans.erase(plan) ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
}

cufftResult
cufftExecC2C(cufftHandle plan, cufftComplex *idata, cufftComplex *odata, int direction)
{
    return fft_exec(plan, CUFFT_C2C, idata, odata, direction == CUFFT_INVERSE);
}

cufftResult
cufftExecZ2Z(cufftHandle plan, cufftDoubleComplex *idata, cufftDoubleComplex *odata,
             int direction)
{
    return fft_exec(plan, CUFFT_Z2Z, idata, odata, direction == CUFFT_INVERSE);
}

cufftResult
cufftExecR2C(cufftHandle plan, cufftReal *idata, cufftComplex *odata)
{
    return fft_exec(plan, CUFFT_R2C, idata, odata, 0);
}

cufftResult
cufftExecD2Z(cufftHandle plan, cufftDoubleReal *idata, cufftDoubleComplex *odata)
{
    return fft_exec(plan, CUFFT_D2Z, idata, odata, 0);
}

cufftResult
cufftExecC2R(cufftHandle plan, cufftComplex *idata, cufftReal *odata)
{
    return fft_exec(plan, CUFFT_C2R, idata, odata, 1);
}

cufftResult
cufftExecZ2D(cufftHandle plan, cufftDoubleComplex *idata, cufftDoubleReal *odata)
{
    return fft_exec(plan, CUFFT_Z2D, idata, odata, 1);
}

}  // extern "C"
