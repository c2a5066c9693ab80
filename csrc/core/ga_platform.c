/* ga_platform.c: the system calls behind ga_platform.h (POSIX and Windows). */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif

#include "ga_platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GA_OS_WINDOWS
#define WIN32_LEAN_AND_MEAN
#define NOMINMAX
#include <malloc.h>  /* _aligned_malloc */
#include <process.h> /* _beginthreadex: the CRT's thread start, so CRT state is set up */
#include <windows.h>
#else
#include <dlfcn.h>
#include <time.h> /* clock_gettime */
#include <sched.h>
#include <unistd.h>
#endif

#ifdef GA_OS_WINDOWS

/* ga_mutex and ga_cond are one pointer each, as SRWLOCK and CONDITION_VARIABLE are. */
_Static_assert(sizeof(ga_mutex) == sizeof(SRWLOCK), "ga_mutex is an SRWLOCK");
_Static_assert(sizeof(ga_cond) == sizeof(CONDITION_VARIABLE),
               "ga_cond is a CONDITION_VARIABLE");
#define SRW(m) ((PSRWLOCK)(void *)(m))
#define CV(c) ((PCONDITION_VARIABLE)(void *)(c))

void
ga_mutex_init(ga_mutex *m)
{
    InitializeSRWLock(SRW(m));
}

void
ga_mutex_reset(ga_mutex *m)
{
    InitializeSRWLock(SRW(m));
}

void
ga_mutex_lock(ga_mutex *m)
{
    AcquireSRWLockExclusive(SRW(m));
}

int
ga_mutex_trylock(ga_mutex *m)
{
    return TryAcquireSRWLockExclusive(SRW(m)) != 0;
}

void
ga_mutex_unlock(ga_mutex *m)
{
    ReleaseSRWLockExclusive(SRW(m));
}

void
ga_cond_init(ga_cond *c)
{
    InitializeConditionVariable(CV(c));
}

void
ga_cond_reset(ga_cond *c)
{
    InitializeConditionVariable(CV(c));
}

void
ga_cond_wait(ga_cond *c, ga_mutex *m)
{
    SleepConditionVariableSRW(CV(c), SRW(m), INFINITE, 0);
}

void
ga_cond_signal(ga_cond *c)
{
    WakeConditionVariable(CV(c));
}

void
ga_cond_broadcast(ga_cond *c)
{
    WakeAllConditionVariable(CV(c));
}

/* _beginthreadex wants an unsigned __stdcall function: a small trampoline carries the
 * POSIX-shaped function and its argument across. */
typedef struct {
    ga_thread_fn fn;
    void *arg;
} thread_start;

static unsigned __stdcall thread_main(void *p)
{
    thread_start s = *(thread_start *)p;
    free(p);
    s.fn(s.arg);
    return 0;
}

int
ga_thread_start_detached(ga_thread_fn fn, void *arg, size_t stack_bytes)
{
    thread_start *s = malloc(sizeof(*s));
    if (s == NULL) {
        return 0;
    }
    s->fn = fn;
    s->arg = arg;
    uintptr_t h = _beginthreadex(NULL, (unsigned)stack_bytes, thread_main, s,
                                 STACK_SIZE_PARAM_IS_A_RESERVATION, NULL);
    if (h == 0) {
        free(s);
        return 0;
    }
    CloseHandle((HANDLE)h); /* detached: nobody joins it */
    return 1;
}

int
ga_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    (void)prepare;
    (void)parent;
    (void)child;
    return 0; /* no fork on Windows: a child process starts a fresh interpreter */
}

void
ga_thread_yield(void)
{
    SwitchToThread();
}

int
ga_cpu_count(void)
{
    DWORD_PTR process_mask, system_mask;
    if (GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask) &&
        process_mask != 0) {
        int n = 0;
        for (; process_mask != 0; process_mask &= process_mask - 1) {
            n++;
        }
        return n;
    }
    DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
    return n > 0 ? (int)n : 1;
}

void *
ga_dl_open(const char *path, char *err, size_t errlen)
{
    /* UTF-8 to UTF-16: a user's folder name need not be in the ANSI code page */
    wchar_t wpath[4096];
    if (MultiByteToWideChar(CP_UTF8, 0, path, -1, wpath, 4096) == 0) {
        snprintf(err, errlen, "the path is not valid UTF-8 or is too long");
        return NULL;
    }
    /* The library's own folder first for its dependencies (an OpenBLAS beside its
     * runtime DLLs), then the system's and those added with os.add_dll_directory, as
     * CPython loads extension modules; never the current directory. */
    HMODULE h = LoadLibraryExW(wpath, NULL,
                               LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR |
                                   LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
    if (h == NULL) {
        DWORD code = GetLastError();
        char msg[512];
        DWORD len =
            FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                           NULL, code, 0, msg, sizeof(msg), NULL);
        while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == '\r' ||
                           msg[len - 1] == ' ' || msg[len - 1] == '.')) {
            msg[--len] = '\0';
        }
        snprintf(err, errlen, "%s (Windows error %lu)",
                 len > 0 ? msg : "LoadLibrary failed", (unsigned long)code);
        return NULL;
    }
    return (void *)h;
}

void *
ga_dl_sym(void *handle, const char *name)
{
    /* FARPROC to void *: through an integer, as C has no direct conversion */
    return (void *)(uintptr_t)GetProcAddress((HMODULE)handle, name);
}

int64_t
ga_monotonic_ns(void)
{
    static LARGE_INTEGER freq;
    LARGE_INTEGER now;
    if (freq.QuadPart == 0) {
        QueryPerformanceFrequency(&freq);
    }
    QueryPerformanceCounter(&now);
    /* split so that the product cannot overflow for days of uptime */
    int64_t q = now.QuadPart / freq.QuadPart, r = now.QuadPart % freq.QuadPart;
    return q * 1000000000LL + r * 1000000000LL / freq.QuadPart;
}

void *
ga_aligned_alloc(size_t align, size_t size)
{
    return _aligned_malloc(size, align);
}

void
ga_aligned_free(void *p)
{
    _aligned_free(p);
}

#else /* POSIX */

int
ga_thread_start_detached(ga_thread_fn fn, void *arg, size_t stack_bytes)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, stack_bytes);
    pthread_t th;
    int ok = pthread_create(&th, &attr, fn, arg) == 0;
    if (ok) {
        pthread_detach(th);
    }
    pthread_attr_destroy(&attr);
    return ok;
}

int
ga_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    return pthread_atfork(prepare, parent, child);
}

void
ga_thread_yield(void)
{
    sched_yield();
}

int
ga_cpu_count(void)
{
    int n = 1;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        n = CPU_COUNT(&set);
    }
#else /* macOS: no affinity masks */
    n = (int)sysconf(_SC_NPROCESSORS_ONLN);
#endif
    return n > 0 ? n : 1;
}

void *
ga_dl_open(const char *path, char *err, size_t errlen)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        snprintf(err, errlen, "%s", e ? e : "unknown error");
    }
    return h;
}

void *
ga_dl_sym(void *handle, const char *name)
{
    return dlsym(handle, name);
}

int64_t
ga_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void *
ga_aligned_alloc(size_t align, size_t size)
{
    return aligned_alloc(align, size);
}

void
ga_aligned_free(void *p)
{
    free(p);
}

#endif
