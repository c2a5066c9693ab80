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

/* mingw-w64's ctanh is sinh(2x) / (cosh(2x) + cos(2y)), inf / inf = NaN once cosh
 * overflows (|x| over 44 in float, 355 in double), where tanh's value is +-1 to the
 * last digit: NumPy's oracle then said tan(800j) = nan j, not 1j. Past the point where
 * e^(-2|x|) is below the type's epsilon, the limit form is exact: real part
 * copysign(1, x), imaginary part sin(2y) / cosh(2x) ~ 4 sin(y) cos(y) e^(-2|x|).
 * And at a zero real part and an infinite or NaN imaginary one, it gives NaN + i NaN
 * where C11's Annex G (and glibc) give a zero real part: tan(inf + 0j) is NaN + 0j. */
#define ctanh ga_mingw_ctanh
#define ctanhf ga_mingw_ctanhf
#include "ctanh.def.h"
#undef ctanh
#undef ctanhf
#ifdef GA_SHIM_FLOAT
#define GA_TANH_LIMIT 9.0F
#else
#define GA_TANH_LIMIT 22.0
#endif
__FLT_TYPE __complex__ __cdecl __FLT_ABI(ctanh)(__FLT_TYPE __complex__ z)
{
    __FLT_TYPE x = __real__ z, y = __imag__ z;
    if (x == 0 && !isfinite(y)) { /* Annex G (C11): ctanh(+-0 + i inf or NaN) = +-0 + i NaN */
        __complex__ __FLT_TYPE r;
        __real__ r = x;
        __imag__ r = y - y;
        return r;
    }
    if (isfinite(x) && isfinite(y) && __FLT_ABI(fabs)(x) >= GA_TANH_LIMIT) {
        __complex__ __FLT_TYPE r;
        __FLT_TYPE e = __FLT_ABI(exp)(-__FLT_ABI(fabs)(x));
        __real__ r = __FLT_ABI(copysign)(__FLT_CST(1.0), x);
        __imag__ r = __FLT_CST(4.0) * __FLT_ABI(sin)(y) * __FLT_ABI(cos)(y) * e * e;
        return r;
    }
    return __FLT_ABI(ga_mingw_ctanh)(z);
}
#include "ctan.def.h" /* -i ctanh(iz): the one above */
