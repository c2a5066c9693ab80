/* The C99 complex functions of the Windows C runtime (UCRT), for Wine only.
 *
 * A test-harness part of tools/windows_wine.sh, never part of gpuarr: Wine 8 (Debian
 * 12's) implements none of the UCRT's complex functions except creal, and NumPy's
 * Windows wheel calls them (crealf, cexp, cpow...) from the moment it is imported.
 * This file compiles mingw-w64's own implementations of them (C99 Annex G special
 * values; their sources ship in zig's lib/libc/mingw/complex, found with -I), once for
 * float and once for double (-DGA_SHIM_FLOAT). tools/windows_wine.sh links both into a
 * DLL that exports them under the UCRT's names (the long double forms are the double
 * ones: long double is double on Windows) and forwards every other math function to
 * Wine's ucrtbase, and points NumPy's binaries at that DLL. A real Windows has all of
 * these in its UCRT; nothing here runs there.
 *
 * clang passes `double _Complex` as the Windows x64 ABI passes the UCRT's _Dcomplex
 * (a 16-byte struct, by reference, returned through a hidden pointer) and
 * `float _Complex` as _Fcomplex (8 bytes in a register), so the exports need no
 * wrappers. */
#ifdef GA_SHIM_FLOAT
#define _NEW_COMPLEX_FLOAT 1
#else
#define _NEW_COMPLEX_DOUBLE 1
#endif
#include "complex_internal.h"

#include "cabs.def.h"
#include "cacos.def.h"
#include "cacosh.def.h"
#include "carg.def.h"
#include "casin.def.h"
#include "casinh.def.h"
#include "catan.def.h"
#include "catanh.def.h"
#include "ccos.def.h"
#include "ccosh.def.h"
#include "cexp.def.h"
#include "cimag.def.h"
#include "clog.def.h"
#include "clog10.def.h"
#include "conj.def.h"
#include "cpow.def.h"
#include "cproj.def.h"
#include "creal.def.h"
#include "csin.def.h"
#include "csinh.def.h"
#include "csqrt.def.h"
#include "ctan.def.h"
#include "ctanh.def.h"
