/* pyconfig.h for building gpuarr's extension for 64-bit Windows CPython (win_amd64)
 * with clang targeting the UCRT (zig cc -target x86_64-windows-gnu), on Linux.
 *
 * CPython's public headers are the same on every system except this file, which the
 * embeddable distribution does not ship. It says what the official MSVC build of
 * CPython is: a DLL (python3XY.dll), LLP64 (long is 32 bits), Windows threads. Only
 * what an extension module's compilation reads is here; tools/windows_wine.sh puts
 * it beside the headers of the matching CPython version. */
#ifndef Py_CONFIG_H
#define Py_CONFIG_H

#if !defined(_WIN64) || !defined(__x86_64__)
#error "this pyconfig.h is for 64-bit x86 Windows targets only"
#endif

#include <io.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#define MS_WIN32
#define MS_WIN64
#define MS_WINDOWS
#define NT_THREADS
#define WITH_THREAD
#define PLATFORM "win32"
#define COMPILER "[clang, UCRT]"
#define PYD_PLATFORM_TAG "win_amd64"

/* the interpreter is a DLL; its functions and data are __declspec(dllimport) */
#define Py_ENABLE_SHARED 1
#define MS_COREDLL
#define HAVE_DECLSPEC_DLL

/* LLP64 */
typedef long long Py_ssize_t;
#define PY_SSIZE_T_MAX LLONG_MAX
#define HAVE_PY_SSIZE_T 1
#define SIZEOF_SHORT 2
#define SIZEOF_INT 4
#define SIZEOF_LONG 4
#define ALIGNOF_LONG 4
#define SIZEOF_LONG_LONG 8
#define SIZEOF_FLOAT 4
#define SIZEOF_DOUBLE 8
#define SIZEOF_VOID_P 8
#define SIZEOF_SIZE_T 8
#define ALIGNOF_SIZE_T 8
#define ALIGNOF_MAX_ALIGN_T 8
#define SIZEOF_TIME_T 8
#define SIZEOF_OFF_T 4
#define SIZEOF_FPOS_T 8
#define SIZEOF_HKEY 8
#define SIZEOF_WCHAR_T 2
#define SIZEOF__BOOL 1
#define LONG_BIT 32
#define WORD_BIT 32
#define HAVE_LARGEFILE_SUPPORT
#define HAVE_UINTPTR_T 1
#define HAVE_INTPTR_T 1
#define PY_LONG_LONG long long
#define PY_LLONG_MIN LLONG_MIN
#define PY_LLONG_MAX LLONG_MAX
#define PY_ULLONG_MAX ULLONG_MAX
#define PY_UINT32_T uint32_t
#define PY_UINT64_T uint64_t
#define PY_INT32_T int32_t
#define PY_INT64_T int64_t

/* the C library (UCRT) */
#define STDC_HEADERS 1
#define HAVE_WCHAR_H 1
#define HAVE_IO_H 1
#define HAVE_CONIO_H 1
#define HAVE_DIRECT_H 1
#define HAVE_PROCESS_H 1
#define HAVE_SIGNAL_H 1
#define HAVE_ERRNO_H 1
#define HAVE_FCNTL_H 1
#define HAVE_STDDEF_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_CLOCK
#define HAVE_STRFTIME
#define HAVE_STRERROR
#define HAVE_TZNAME
#define HAVE_DECL_TZNAME 1
#define HAVE_PUTENV
#define HAVE_ZLIB_COPY 1
#define RETSIGTYPE void
#define DONT_HAVE_SIG_ALARM
#define DONT_HAVE_SIG_PAUSE

#endif /* Py_CONFIG_H */
