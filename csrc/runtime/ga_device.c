/* ga_device.c: which backend serves each device, resolved once per process.
 *
 * Resolution happens at the first use of a GPU (never at import): the environment
 * picks emulated CUDA or simulated GPUs, otherwise the CUDA plugin is dlopen'ed and
 * asked for its device count. Every failure is kept as a reason for gpuarr.info() and
 * means "0 GPUs"; nothing here raises for a missing GPU until data is placed on it.
 */
#include "ga_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_backend.h"
#include "ga_blas.h"
#include "ga_error.h"
#include "ga_perf_model.h"
#include "ga_platform.h"
#include "ga_visible_devices.h"

static struct {
    int resolved;
    ga_gpu_mode mode;
    int count;
    const ga_backend *gpu_backend;
    char reason[512];
    char plugin_dir[4096];
    int forked_child; /* set in a child forked after CUDA started */
    int env_error;    /* GPUARR_SIMULATE_GPUS or GPUARR_CUDA_EMULATE is misspelt:
                       * `reason` says how */
    void *(*wait_begin)(void);
    void (*wait_end)(void *);
    /* CUDA_VISIBLE_DEVICES as read at import (ga_devices_read_visible_env); simulated
     * and emulated GPUs follow it, a real driver applies it itself */
    int visible_set;
    char visible_value[256];
    int physical[GA_MAX_DEVICES]; /* simulated: the GPU behind each visible number */
    size_t sim_memory;            /* bytes of one simulated GPU */
} devs;

static void resolve(void);

#define GIB 1073741824.0

/* 16 GiB: a T4's, the GPU a free notebook service lends */
#define GA_SIM_MEMORY_DEFAULT ((size_t)16 << 30)

/* A simulated GPU's memory: GPUARR_SIMULATE_GPU_MEMORY (bytes, or a number with KiB,
 * MiB, GiB or KB, MB, GB), else the model's, else 16 GiB. A misspelt value is the
 * default and says so in the reason, so info() shows it. */
static size_t
sim_memory_from_env(const ga_gpu_model *model)
{
    const char *v = getenv("GPUARR_SIMULATE_GPU_MEMORY");
    if (v == NULL || *v == '\0') {
        return model ? (size_t)model->memory_bytes : GA_SIM_MEMORY_DEFAULT;
    }
    static const struct {
        const char *suffix;
        double scale;
    } units[] = {{"", 1},      {"B", 1},     {"KiB", 1024.0}, {"MiB", 1048576.0},
                 {"GiB", GIB}, {"KB", 1e3},  {"MB", 1e6},     {"GB", 1e9},
                 {"K", 1024.0}, {"M", 1048576.0}, {"G", GIB}};
    char *end;
    double x = strtod(v, &end);
    while (*end == ' ') {
        end++;
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].suffix) == 0 && end != v && x * units[i].scale >= 1 &&
            x * units[i].scale < 1e18) {
            return (size_t)(x * units[i].scale);
        }
    }
    size_t used = strlen(devs.reason);
    snprintf(devs.reason + used, sizeof(devs.reason) - used,
             "; GPUARR_SIMULATE_GPU_MEMORY=%.40s is not a size (write e.g. 8GiB or "
             "8589934592): 16 GiB each",
             v);
    return GA_SIM_MEMORY_DEFAULT;
}

size_t
ga_device_simulated_memory(void)
{
    resolve();
    return devs.sim_memory;
}

void
ga_devices_read_visible_env(void)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    devs.visible_set = v != NULL;
    snprintf(devs.visible_value, sizeof(devs.visible_value), "%s", v ? v : "");
}

/* How many of `physical` GPUs of this process's own making (`what`: "simulated",
 * "emulated") CUDA_VISIBLE_DEVICES shows; fills devs.physical and appends to
 * devs.reason which ones it shows and hides, so that info() says so. */
static int
apply_visible(int physical, const char *what)
{
    int n = ga_visible_devices(devs.visible_set ? devs.visible_value : NULL, physical,
                               devs.physical, GA_MAX_DEVICES);
    if (!devs.visible_set) {
        return n;
    }
    char shown[160] = "", as[160] = "", hidden[160] = "";
    for (int i = 0; i < n; i++) {
        size_t used = strlen(shown);
        snprintf(shown + used, sizeof(shown) - used, "%s%d", i ? ", " : "", devs.physical[i]);
        used = strlen(as);
        snprintf(as + used, sizeof(as) - used, "%sgpu(%d)", i ? ", " : "", i);
    }
    for (int p = 0, k = 0; p < physical; p++) {
        int seen = 0;
        for (int i = 0; i < n; i++) {
            seen |= devs.physical[i] == p;
        }
        if (!seen) {
            size_t used = strlen(hidden);
            snprintf(hidden + used, sizeof(hidden) - used, "%s%d", k++ ? ", " : "", p);
        }
    }
    size_t used = strlen(devs.reason);
    if (n == 0) {
        snprintf(devs.reason + used, sizeof(devs.reason) - used,
                 "; CUDA_VISIBLE_DEVICES='%.60s' hides %s GPUs %s: no GPU", devs.visible_value,
                 what, hidden);
    } else {
        snprintf(devs.reason + used, sizeof(devs.reason) - used,
                 "; CUDA_VISIBLE_DEVICES='%.60s' shows %s GPU%s %s as %s and hides %s",
                 devs.visible_value, what, n == 1 ? "" : "s", shown, as,
                 hidden[0] ? hidden : "none");
    }
    return n;
}

void
ga_devices_set_wait_hooks(void *(*begin)(void), void (*end)(void *))
{
    devs.wait_begin = begin;
    devs.wait_end = end;
    /* the host backends get the hooks now (they never call up into the registry);
     * a plugin gets them when it is loaded (load_plugin) */
    ga_backend_cpu.set_wait_hooks(begin, end);
    ga_backend_simulated.set_wait_hooks(begin, end);
}

void
ga_devices_set_plugin_dir(const char *dir)
{
    snprintf(devs.plugin_dir, sizeof(devs.plugin_dir), "%s", dir ? dir : "");
}

const char *
ga_device_str(ga_device d, char *buf, size_t n)
{
    snprintf(buf, n, "%s(%d)", d.kind == GA_DEV_CPU ? "cpu" : "gpu", (int)d.index);
    return buf;
}

/* GPUARR_CUDA_EMULATE: N emulated CUDA devices. 0 when unset or empty, 1 with *out
 * set, -1 when it is not a count from 0 to GA_MAX_DEVICES (devs.reason says how to
 * spell it): a misspelt setting is an error, as GPUARR_SIMULATE_GPUS's is, not a
 * silent "no GPU". */
static int
env_emulate(int *out)
{
    const char *v = getenv("GPUARR_CUDA_EMULATE");
    if (v == NULL || *v == '\0') {
        return 0;
    }
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0' || n < 0 || n > GA_MAX_DEVICES) {
        snprintf(devs.reason, sizeof(devs.reason),
                 "GPUARR_CUDA_EMULATE=%.40s is not a number of emulated CUDA devices "
                 "between 0 and %d: for example GPUARR_CUDA_EMULATE=2",
                 v, GA_MAX_DEVICES);
        return -1;
    }
    *out = (int)n;
    return 1;
}

/* GPUARR_SIMULATE_GPUS: N, or N:MODEL (a GPU model of ga_perf_model.h). 0 when unset, 1
 * with *n and *m set (*m NULL without a model), -1 when misspelt (devs.reason says
 * how to spell it). */
static int
env_simulate(int *n, const ga_gpu_model **m)
{
    const char *v = getenv("GPUARR_SIMULATE_GPUS");
    *m = NULL;
    if (v == NULL || *v == '\0') {
        return 0;
    }
    char *end;
    long cnt = strtol(v, &end, 10);
    int bad_count =
        end == v || (*end != '\0' && *end != ':') || cnt < 0 || cnt > GA_MAX_DEVICES;
    if (!bad_count && *end == ':' && ga_perf_model_lookup(end + 1, m) != GA_OK) {
        snprintf(devs.reason, sizeof(devs.reason), "GPUARR_SIMULATE_GPUS=%.40s: %s", v,
                 ga_error_message());
        return -1;
    }
    if (bad_count) {
        char known[64] = "";
        for (int i = 0; i < ga_perf_model_count(); i++) {
            size_t used = strlen(known);
            snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "",
                     ga_perf_model_at(i)->name);
        }
        snprintf(
            devs.reason, sizeof(devs.reason),
            "GPUARR_SIMULATE_GPUS=%.40s is not a number of simulated GPUs between "
            "0 and %d, optionally followed by ':' and a GPU model (%s): for example "
            "GPUARR_SIMULATE_GPUS=2 or GPUARR_SIMULATE_GPUS=2:T4",
            v, GA_MAX_DEVICES, known);
        return -1;
    }
    *n = (int)cnt;
    return 1;
}

/* The model of a real GPU named `name` (the exact products of ga_perf_model.c only), so
 * that a profile on it shows the model beside the measurement. */
static const ga_gpu_model *
model_for_name(const char *name)
{
    static const struct {
        const char *part, *model;
    } names[] = {
        {"Tesla T4", "T4"}, {"A100-SXM4-40GB", "A100"}, {"H100 80GB HBM3", "H100"}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const ga_gpu_model *m;
        if (strstr(name, names[i].part) != NULL &&
            ga_perf_model_lookup(names[i].model, &m) == GA_OK) {
            return m;
        }
    }
    return NULL;
}

static void
mark_forked_child(void)
{
    devs.forked_child = 1;
}

static const ga_backend *
load_plugin(const char *file, int emulate)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s%s%s", devs.plugin_dir,
             devs.plugin_dir[0] ? "/" : "", file);
    char why[1024];
    void *h = ga_dl_open(path, why, sizeof(why));
    if (h == NULL) {
        snprintf(devs.reason, sizeof(devs.reason),
                 "the CUDA backend (%s) could not be loaded: %.400s", file, why);
        return NULL;
    }
    /* the emulated runtime hides devices as the driver would, before it makes them */
    typedef void (*set_visible_fn)(const char *);
    set_visible_fn set_visible =
        emulate ? (set_visible_fn)ga_dl_sym(h, "gpuarr_cuda_emu_set_visible") : NULL;
    if (set_visible != NULL) {
        set_visible(devs.visible_set ? devs.visible_value : NULL);
    }
    ga_backend_entry_fn entry = (ga_backend_entry_fn)ga_dl_sym(h, "gpuarr_cuda_backend");
    if (entry == NULL) {
        snprintf(devs.reason, sizeof(devs.reason),
                 "%s has no entry point gpuarr_cuda_backend", file);
        return NULL;
    }
    const ga_backend *be = entry(emulate);
    if (be == NULL || be->abi_version != GA_BACKEND_ABI_VERSION) {
        snprintf(devs.reason, sizeof(devs.reason),
                 "%s was built for another gpuarr version (backend ABI mismatch); "
                 "reinstall gpuarr",
                 file);
        return NULL;
    }
    if (be->set_wait_hooks != NULL && devs.wait_begin != NULL) {
        be->set_wait_hooks(devs.wait_begin, devs.wait_end);
    }
    /* the emulation's cuSOLVER computes with the CPU's LAPACK (ga_cuda_emu_cusolver.cpp
     * says why the core hands it over) */
    typedef void (*set_lapack_fn)(void *(*)(const char *, int *));
    set_lapack_fn set_lapack =
        emulate ? (set_lapack_fn)ga_dl_sym(h, "gpuarr_cuda_emu_set_lapack") : NULL;
    if (set_lapack != NULL) {
        set_lapack(ga_blas_lapack_lookup);
    }
    return be;
}

static void
resolve(void)
{
    if (devs.resolved) {
        return;
    }
    devs.resolved = 1;
    devs.mode = GA_GPU_NONE;
    devs.count = 0;
    int n = 0;
    int emu = env_emulate(&n);
    if (emu < 0) {
        devs.env_error = 1;
        return;
    }
    if (emu > 0 && n > 0) {
        const ga_backend *be = load_plugin("libgpuarr_cuda_emu.so", n);
        int cnt = 0;
        if (be != NULL && be->device_count(&cnt) == GA_OK && cnt > 0) {
            devs.mode = GA_GPU_EMULATED;
            devs.gpu_backend = be;
            devs.count = cnt;
            /* the harness follows CUDA's rule for forked children too */
            ga_atfork(NULL, NULL, mark_forked_child);
            snprintf(
                devs.reason, sizeof(devs.reason),
                "GPUARR_CUDA_EMULATE=%d: the CUDA backend's sources run on the CPU "
                "(a test harness, slow)",
                n);
            apply_visible(n, "emulated"); /* the plugin hid them: this only says so */
        } else if (be != NULL && devs.visible_set &&
                   ga_visible_devices(devs.visible_value, n, devs.physical,
                                      GA_MAX_DEVICES) == 0) {
            snprintf(devs.reason, sizeof(devs.reason), "GPUARR_CUDA_EMULATE=%d", n);
            apply_visible(n, "emulated");
        } else if (be != NULL && be->unavailable_reason != NULL) {
            /* e.g. the old driver that GPUARR_CUDA_EMULATE_DRIVER plays */
            snprintf(devs.reason, sizeof(devs.reason), "%s", be->unavailable_reason());
        }
        return;
    }
    const ga_gpu_model *model;
    int sim = env_simulate(&n, &model);
    if (sim < 0) {
        devs.env_error = 1;
        return;
    }
    if (sim > 0) {
        if (n == 0) {
            snprintf(devs.reason, sizeof(devs.reason), "GPUARR_SIMULATE_GPUS=0");
            return;
        }
        snprintf(devs.reason, sizeof(devs.reason),
                 "GPUARR_SIMULATE_GPUS=%s: simulated GPUs (host memory, CPU kernels, "
                 "every device rule of a real GPU)%s%s",
                 getenv("GPUARR_SIMULATE_GPUS"),
                 model ? ", with the modeled time of an " : "",
                 model ? model->full_name : "");
        n = apply_visible(n, "simulated");
        if (n > 0) {
            devs.mode = GA_GPU_SIMULATED;
            devs.gpu_backend = &ga_backend_simulated;
            devs.count = n;
            devs.sim_memory = sim_memory_from_env(model);
            ga_backend_simulated.set_device_count(n);
            ga_perf_model_select(model);
        }
        return;
    }
    const ga_backend *be = load_plugin("libgpuarr_cuda.so", 0);
    if (be == NULL) {
        return; /* reason already recorded */
    }
    int cnt = 0;
    if (be->device_count(&cnt) != GA_OK || cnt == 0) {
        const char *why = be->unavailable_reason ? be->unavailable_reason() : NULL;
        snprintf(devs.reason, sizeof(devs.reason), "%s",
                 why && *why ? why : "the CUDA runtime found no GPU");
        return;
    }
    devs.mode = GA_GPU_CUDA;
    devs.gpu_backend = be;
    devs.count = cnt;
    devs.reason[0] = '\0';
    ga_device_props p;
    memset(&p, 0, sizeof(p));
    if (be->device_props != NULL && be->device_props(0, &p) == GA_OK) {
        ga_perf_model_select(model_for_name(p.name));
    }
    ga_atfork(NULL, NULL, mark_forked_child);
}

ga_gpu_mode
ga_gpu_mode_get(void)
{
    resolve();
    return devs.mode;
}

int
ga_simulate_gpus_if_none(int n, const char *model_name, int *switched)
{
    const ga_gpu_model *m = NULL;
    *switched = 0;
    if (model_name != NULL) {
        GA_TRY(ga_perf_model_lookup(model_name, &m));
    }
    resolve();
    if (devs.env_error) {
        return ga_error(GA_ERR_VALUE, "%s", devs.reason);
    }
    if (devs.mode != GA_GPU_NONE || n <= 0 || n > GA_MAX_DEVICES ||
        getenv("GPUARR_SIMULATE_GPUS") != NULL) {
        return GA_OK; /* a GPU exists, or the environment chose (0 included) */
    }
    /* Safe at any time: with no GPU, no array, default device or stream can refer to
     * one, so nothing made before the switch becomes stale. */
    char before[sizeof(devs.reason)];
    memcpy(before, devs.reason, sizeof(before));
    snprintf(
        devs.reason, sizeof(devs.reason),
        "no GPU found, so gpuarr simulates %d (host memory, CPU kernels, every device "
        "rule of a real GPU)%s%s",
        n, m ? ", with the modeled time of an " : "", m ? m->full_name : "");
    n = apply_visible(n, "simulated"); /* as GPUARR_SIMULATE_GPUS=n would */
    if (n == 0) {
        memcpy(devs.reason, before, sizeof(before));
        return GA_OK; /* the variable hides them all: still no GPU */
    }
    devs.mode = GA_GPU_SIMULATED;
    devs.gpu_backend = &ga_backend_simulated;
    devs.count = n;
    devs.sim_memory = sim_memory_from_env(m);
    ga_backend_simulated.set_device_count(n);
    ga_perf_model_select(m);
    *switched = 1;
    return GA_OK;
}

int
ga_devices_env_error(void)
{
    resolve();
    return devs.env_error ? ga_error(GA_ERR_VALUE, "%s", devs.reason) : GA_OK;
}

int
ga_num_gpus(void)
{
    resolve();
    return devs.count;
}

const char *
ga_gpu_reason(void)
{
    resolve();
    return devs.reason;
}

static int
no_such_device(ga_device d)
{
    char list[512];
    size_t used = (size_t)snprintf(list, sizeof(list), "cpu(0)");
    for (int i = 0; i < devs.count && used < sizeof(list); i++) {
        used += (size_t)snprintf(list + used, sizeof(list) - used, ", gpu(%d)", i);
    }
    char name[32];
    ga_device_str(d, name, sizeof(name));
    if (devs.count == 0) {
        return ga_error(
            GA_ERR_DEVICE,
            "%s does not exist: this machine has no GPU (%s). The devices "
            "that exist are: %s. Use try_gpu() to fall back to the CPU, or call "
            "gpuarr.simulate_gpus_if_none(2) to simulate two GPUs (setting "
            "GPUARR_SIMULATE_GPUS=2 works only before the process's first "
            "device query: num_gpus(), gpu(i), try_gpu(), info(), ...)",
            name, devs.reason[0] ? devs.reason : "no CUDA device", list);
    }
    return ga_error(GA_ERR_DEVICE,
                    "%s does not exist. The devices that exist are: %s. Use try_gpu(i) "
                    "to fall back to the CPU when a GPU is missing",
                    name, list);
}

/* Host readiness's fence (ga_devices_set_cpu_fence): set, not called by name, as host
 * readiness sits above the registry (it waits with events). */
static int (*cpu_fence)(void);

void
ga_devices_set_cpu_fence(int (*fence)(void))
{
    __atomic_store_n(&cpu_fence, fence, __ATOMIC_RELEASE);
}

int
ga_device_backend(ga_device d, const ga_backend **out)
{
    if (d.kind == GA_DEV_CPU) {
        int (*fence)(void) = __atomic_load_n(&cpu_fence, __ATOMIC_ACQUIRE);
        if (fence != NULL) {
            GA_TRY(fence());
        }
    }
    return ga_device_backend_nowait(d, out);
}

const ga_backend *
ga_device_gpu_backend(void)
{
    resolve();
    return devs.env_error || devs.count == 0 ? NULL : devs.gpu_backend;
}

/* ga_devices_set_backend_filter: a captured step's recorder (ops/, above). */
static const ga_backend *(*backend_filter)(ga_device d, const ga_backend *be);

void
ga_devices_set_backend_filter(const ga_backend *(*filter)(ga_device d, const ga_backend *be))
{
    __atomic_store_n(&backend_filter, filter, __ATOMIC_RELEASE);
}

static int backend_for(ga_device d, const ga_backend **out);

int
ga_device_backend_nowait(ga_device d, const ga_backend **out)
{
    GA_TRY(backend_for(d, out));
    const ga_backend *(*filter)(ga_device, const ga_backend *) =
        __atomic_load_n(&backend_filter, __ATOMIC_ACQUIRE);
    if (filter != NULL) {
        *out = filter(d, *out);
    }
    return GA_OK;
}

static int
backend_for(ga_device d, const ga_backend **out)
{
    if (d.kind == GA_DEV_CPU) {
        if (d.index != 0) {
            return ga_error(GA_ERR_DEVICE, "cpu(%d) does not exist: the CPU is cpu(0)",
                            (int)d.index);
        }
        *out = &ga_backend_cpu;
        return GA_OK;
    }
    resolve();
    if (devs.env_error) {
        return ga_error(GA_ERR_VALUE, "%s", devs.reason);
    }
    if (d.index < 0 || d.index >= devs.count) {
        return no_such_device(d);
    }
    if (devs.forked_child &&
        (devs.mode == GA_GPU_CUDA || devs.mode == GA_GPU_EMULATED)) {
        return ga_error(
            GA_ERR_CUDA,
            "this process was forked after CUDA was initialised in its parent; "
            "CUDA cannot be used in a forked child. Use the 'spawn' start "
            "method (multiprocessing.set_start_method('spawn'))");
    }
    *out = devs.gpu_backend;
    return GA_OK;
}

int
ga_device_check(ga_device d)
{
    const ga_backend *be;
    return ga_device_backend_nowait(d, &be);
}

/* The status observers (ga_device_observe_status): a fixed list, appended to under
 * obs_mu and read without a lock (the count is published after its slot). */
static ga_device_status_fn observers[GA_DEVICE_MAX_OBSERVERS];
static int nobservers; /* atomic */
static ga_mutex obs_mu = GA_MUTEX_INIT;

int
ga_device_observe_status(ga_device_status_fn fn)
{
    ga_mutex_lock(&obs_mu);
    int n = __atomic_load_n(&nobservers, __ATOMIC_RELAXED);
    int st = GA_OK;
    if (n == GA_DEVICE_MAX_OBSERVERS) {
        st = ga_error(GA_ERR_RUNTIME, "too many device status observers");
    } else {
        observers[n] = fn;
        __atomic_store_n(&nobservers, n + 1, __ATOMIC_RELEASE);
    }
    ga_mutex_unlock(&obs_mu);
    return st;
}

int
ga_backend_status(const ga_backend *be, int st)
{
    /* the profiler (closing the record that waited for this call) and the fault
     * registry (a sticky CUDA error) watch every status; registered, not called by
     * name, so the registry stays below them */
    int n = __atomic_load_n(&nobservers, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        observers[i](st);
    }
    if (st != GA_OK && be->last_error != NULL) {
        return ga_error(st, "%s", be->last_error());
    }
    return st;
}

int
ga_device_describe(ga_device d, ga_device_desc *out)
{
    const ga_backend *be;
    memset(out, 0, sizeof(*out));
    GA_TRY(ga_device_backend_nowait(d, &be));
    ga_device_props p;
    memset(&p, 0, sizeof(p));
    if (be->device_props != NULL) {
        /* a simulated GPU is named by its number before CUDA_VISIBLE_DEVICES renumbered
         * it (the simulated table names whatever number it is asked for) */
        int local = ga_device_local(d);
        GA_TRY(be->device_props(d.kind != GA_DEV_CPU && devs.mode == GA_GPU_SIMULATED
                                    ? devs.physical[local]
                                    : local,
                                &p));
    }
    snprintf(out->name, sizeof(out->name), "%s", p.name);
    out->total_memory = d.kind != GA_DEV_CPU && devs.mode == GA_GPU_SIMULATED
                            ? devs.sim_memory
                            : p.total_memory;
    out->cc_major = p.cc_major;
    out->cc_minor = p.cc_minor;
    if (d.kind == GA_DEV_CPU) {
        out->kind_word = "CPU";
    } else if (devs.mode == GA_GPU_SIMULATED) {
        out->kind_word = "simulated";
    } else if (devs.mode == GA_GPU_EMULATED) {
        out->kind_word = "emulated CUDA";
    } else {
        out->kind_word = "CUDA";
    }
    return GA_OK;
}
