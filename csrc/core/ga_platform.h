/* ga_platform.h: the one place in the core that knows the operating system.
 *
 * Threads, mutexes, condition variables, thread-local storage, loading a shared
 * library, aligned host memory, the number of CPUs and a pause for spin loops, for
 * POSIX (Linux, macOS) and Windows. Every other file includes this header instead of
 * <pthread.h>, <dlfcn.h>, <unistd.h>, <sched.h> or <windows.h> (tests/tooling/test_layers.py
 * checks it), so a port to another system is a port of ga_platform.c.
 *
 * On POSIX the calls are the pthread/dl calls themselves (inline, nothing added on
 * Linux's hot paths). On Windows, mutexes are SRW locks and condition variables are
 * Win32 CONDITION_VARIABLEs: both start as all-zero bits, so GA_MUTEX_INIT works as a
 * static initialiser as PTHREAD_MUTEX_INITIALIZER does, and <windows.h> stays inside
 * ga_platform.c (its macros, `min`, `max`, `near`, `ERROR`..., would reach every file).
 *
 * Compilers: GCC, Clang, Apple clang and zig cc (clang targeting the Windows UCRT).
 * MSVC is not one of them: the core uses C99 complex arithmetic and __int128, which
 * MSVC's C compiler lacks (docs/DESIGN.md, "Platforms").
 */
#ifndef GA_PLATFORM_H
#define GA_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define GA_OS_WINDOWS 1
#else
#include <pthread.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* --- thread-local storage ------------------------------------------------------- */

#if defined(_MSC_VER) && !defined(__clang__)
#define GA_THREAD_LOCAL __declspec(thread)
#else
#define GA_THREAD_LOCAL _Thread_local
#endif

/* --- mutexes and condition variables ---------------------------------------------
 * Not recursive. A static one starts as GA_MUTEX_INIT / GA_COND_INIT; one in memory of
 * unknown contents with ga_mutex_init / ga_cond_init. ga_mutex_reset makes a mutex
 * unlocked again without looking at it: for a forked child, where the parent's
 * lock holder does not exist (POSIX only: Windows has no fork). */

#ifdef GA_OS_WINDOWS
typedef struct {
    void *opaque; /* an SRWLOCK */
} ga_mutex;
typedef struct {
    void *opaque; /* a CONDITION_VARIABLE */
} ga_cond;
#define GA_MUTEX_INIT                                                                  \
    {                                                                                  \
        0                                                                              \
    }
#define GA_COND_INIT                                                                   \
    {                                                                                  \
        0                                                                              \
    }
void ga_mutex_init(ga_mutex *m);
void ga_mutex_reset(ga_mutex *m);
void ga_mutex_lock(ga_mutex *m);
int ga_mutex_trylock(ga_mutex *m); /* 1: locked it, 0: held elsewhere */
void ga_mutex_unlock(ga_mutex *m);
void ga_cond_init(ga_cond *c);
void ga_cond_reset(ga_cond *c);
void ga_cond_wait(ga_cond *c, ga_mutex *m);
void ga_cond_signal(ga_cond *c);
void ga_cond_broadcast(ga_cond *c);
#else
typedef pthread_mutex_t ga_mutex;
typedef pthread_cond_t ga_cond;
#define GA_MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#define GA_COND_INIT PTHREAD_COND_INITIALIZER

static inline void
ga_mutex_init(ga_mutex *m)
{
    pthread_mutex_init(m, NULL);
}

static inline void
ga_mutex_reset(ga_mutex *m)
{
    ga_mutex fresh = GA_MUTEX_INIT;
    *m = fresh;
}

static inline void
ga_mutex_lock(ga_mutex *m)
{
    pthread_mutex_lock(m);
}

static inline int
ga_mutex_trylock(ga_mutex *m)
{
    return pthread_mutex_trylock(m) == 0;
}

static inline void
ga_mutex_unlock(ga_mutex *m)
{
    pthread_mutex_unlock(m);
}

static inline void
ga_cond_init(ga_cond *c)
{
    pthread_cond_init(c, NULL);
}

static inline void
ga_cond_reset(ga_cond *c)
{
    ga_cond fresh = GA_COND_INIT;
    *c = fresh;
}

static inline void
ga_cond_wait(ga_cond *c, ga_mutex *m)
{
    pthread_cond_wait(c, m);
}

static inline void
ga_cond_signal(ga_cond *c)
{
    pthread_cond_signal(c);
}

static inline void
ga_cond_broadcast(ga_cond *c)
{
    pthread_cond_broadcast(c);
}
#endif

/* --- threads ------------------------------------------------------------------------
 */

typedef void *(*ga_thread_fn)(void *arg);

/* Start fn(arg) on a new detached thread with a stack of `stack_bytes`.
 * Returns 1 when the thread started, 0 when it could not (nothing was started). */
int ga_thread_start_detached(ga_thread_fn fn, void *arg, size_t stack_bytes);

/* pthread_atfork where there is fork; a no-op returning 0 on Windows. */
int ga_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));

/* A hint inside a spin loop (x86's pause; nothing elsewhere). */
static inline void
ga_cpu_relax(void)
{
#if (defined(__x86_64__) || defined(__i386__)) &&                                      \
    (defined(__GNUC__) || defined(__clang__))
    __builtin_ia32_pause();
#endif
}

/* A monotonic clock in nanoseconds (any origin): the timestamps of events. */
int64_t ga_monotonic_ns(void);

/* Give the rest of this thread's time slice to another thread. */
void ga_thread_yield(void);

/* The CPUs this process may run on (its affinity mask where the system has one). */
int ga_cpu_count(void);

/* --- shared libraries --------------------------------------------------------------
 * `path` is UTF-8 on every system. On failure ga_dl_open returns NULL and writes the
 * system's reason into err[0..errlen) (always terminated). The handle is never closed
 * by gpuarr (a library's threads may still run its code). */
void *ga_dl_open(const char *path, char *err, size_t errlen);
void *ga_dl_sym(void *handle, const char *name);

/* --- aligned host memory
 * -------------------------------------------------------------- `align` a power of
 * two, `size` a multiple of it. Blocks from ga_aligned_alloc go back through
 * ga_aligned_free only (Windows' _aligned_malloc blocks cannot go to free()). */
void *ga_aligned_alloc(size_t align, size_t size);
void ga_aligned_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* GA_PLATFORM_H */
