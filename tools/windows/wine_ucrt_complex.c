/* The C99 complex functions of the Windows C runtime (UCRT), for Wine only.
 *
 * A test-harness part of tools/windows_wine.sh, never part of gpuarr: Wine 8 (Debian
 * 12's) implements none of the UCRT's complex functions except creal, and NumPy's
 * Windows wheel calls them (crealf, cexp, cpow...) from the moment it is imported.
 * This file compiles mingw-w64's own implementations of the double ones (C99 Annex G
 * special values; their sources ship in zig's lib/libc/mingw/complex, found with -I),
 * and, compiled again with -DGA_SHIM_FLOAT, float ones that round those (below).
 * tools/windows_wine.sh links both into a
 * DLL that exports them under the UCRT's names (the long double forms are the double
 * ones: long double is double on Windows) and forwards every other math function to
 * Wine's ucrtbase, and points NumPy's binaries at that DLL. A real Windows has all of
 * these in its UCRT; nothing here runs there.
 *
 * clang passes `double _Complex` as the Windows x64 ABI passes the UCRT's _Dcomplex
 * (a 16-byte struct, by reference, returned through a hidden pointer) and
 * `float _Complex` as _Fcomplex (8 bytes in a register), so the exports need no
 * wrappers.
 *
 * mingw-w64's functions leave Annex G, or glibc's choice where Annex G leaves a sign
 * open, at a few of the special values the tests compare (gpuarr follows glibc, the C
 * library of NumPy on Linux): the wrappers below (cacosh, ccosh, cexp, csin, csinh,
 * ctanh) give glibc's values there, checked against glibc on Linux over the tests'
 * grid of infinities, NaN, signed zeros, 0.5, 2.5 and 800 in both real and imaginary
 * parts. What Windows' own UCRT gives there was not compared (no Windows here). */
#ifdef GA_SHIM_FLOAT
/* The float functions are the double ones, rounded: mingw-w64's float code loses
 * digits near the singularities (catanhf(1 + 1e-30j)) and picks other signs than its
 * double code at a few infinities (casinf(-inf + nan j)). */
#include <complex.h>
double _Complex clog10(double _Complex z); /* the UCRT's, not in mingw-w64's header */
#define GA_F2(name)                                                                    \
    float _Complex name##f(float _Complex z)                                           \
    {                                                                                  \
        return (float _Complex)name((double _Complex)z);                               \
    }
#define GA_R2(name)                                                                    \
    float name##f(float _Complex z)                                                    \
    {                                                                                  \
        return (float)name((double _Complex)z);                                        \
    }
GA_R2(cabs)
GA_R2(carg)
GA_R2(cimag)
GA_R2(creal)
GA_F2(cacos)
GA_F2(cacosh)
GA_F2(casin)
GA_F2(casinh)
GA_F2(catan)
GA_F2(catanh)
GA_F2(ccos)
GA_F2(ccosh)
GA_F2(cexp)
GA_F2(clog)
GA_F2(clog10)
GA_F2(conj)
GA_F2(cproj)
GA_F2(csin)
GA_F2(csinh)
GA_F2(csqrt)
GA_F2(ctan)
GA_F2(ctanh)
float _Complex cpowf(float _Complex x, float _Complex y)
{
    return (float _Complex)cpow((double _Complex)x, (double _Complex)y);
}
#else
#define _NEW_COMPLEX_DOUBLE 1
#include "complex_internal.h"

#include "cabs.def.h"
#include "cacos.def.h"
/* glibc's cacosh(+-0 + i NaN) is NaN + i pi/2 (mingw-w64: NaN + i NaN), and on the
 * real axis between -1 and 1 it is +0 + i acos(x) signed as y (mingw-w64: the sign
 * flipped, and a real part of 4e-17) */
#define cacosh ga_mingw_cacosh
#define cacoshf ga_mingw_cacoshf
#include "cacosh.def.h"
#undef cacosh
#undef cacoshf
__FLT_TYPE __complex__ __cdecl __FLT_ABI(cacosh)(__FLT_TYPE __complex__ z)
{
    __FLT_TYPE x = __real__ z, y = __imag__ z;
    __complex__ __FLT_TYPE r;
    if (x == 0 && isnan(y)) {
        __real__ r = y;
        __imag__ r = __FLT_PI_2;
        return r;
    }
    if (y == 0 && __FLT_ABI(fabs)(x) < 1) {
        __real__ r = 0;
        __imag__ r = __FLT_ABI(copysign)(__FLT_ABI(acos)(x), y);
        return r;
    }
    return __FLT_ABI(ga_mingw_cacosh)(z);
}
#include "carg.def.h"
#include "casin.def.h"
#include "casinh.def.h"
#include "catan.def.h"
#include "catanh.def.h"
#include "ccos.def.h"
/* On the real axis ccosh, csinh and cexp are real with a signed zero imaginary part;
 * mingw-w64 multiplies an overflowed cosh by sin(0): inf * 0 = NaN at 800 + 0j */
#define ccosh ga_mingw_ccosh
#define ccoshf ga_mingw_ccoshf
#include "ccosh.def.h"
#undef ccosh
#undef ccoshf
__FLT_TYPE __complex__ __cdecl __FLT_ABI(ccosh)(__FLT_TYPE __complex__ z)
{
    __FLT_TYPE x = __real__ z, y = __imag__ z;
    __complex__ __FLT_TYPE r;
    if (isfinite(x) && y == 0) {
        __real__ r = __FLT_ABI(cosh)(x);
        __imag__ r = __FLT_ABI(copysign)(__FLT_CST(0.0), x) * y;
        return r;
    }
    return __FLT_ABI(ga_mingw_ccosh)(z);
}
#define cexp ga_mingw_cexp
#define cexpf ga_mingw_cexpf
#include "cexp.def.h"
#undef cexp
#undef cexpf
__FLT_TYPE __complex__ __cdecl __FLT_ABI(cexp)(__FLT_TYPE __complex__ z)
{
    __FLT_TYPE x = __real__ z, y = __imag__ z;
    __complex__ __FLT_TYPE r;
    if (isfinite(x) && y == 0) {
        __real__ r = __FLT_ABI(exp)(x);
        __imag__ r = y;
        return r;
    }
    return __FLT_ABI(ga_mingw_cexp)(z);
}
#include "cimag.def.h"
#include "clog.def.h"
#include "clog10.def.h"
#include "conj.def.h"
#include "cpow.def.h"
#include "cproj.def.h"
#include "creal.def.h"
#define csin ga_mingw_csin
#define csinf ga_mingw_csinf
#include "csin.def.h"
#undef csin
#undef csinf
__FLT_TYPE __complex__ __cdecl __FLT_ABI(csin)(__FLT_TYPE __complex__ z)
{
    __FLT_TYPE x = __real__ z, y = __imag__ z;
    __complex__ __FLT_TYPE r;
    if (!isfinite(x) && isinf(y)) { /* Annex G leaves the sign open: glibc's +inf */
        __real__ r = x - x;
        __imag__ r = HUGE_VAL;
        return r;
    }
    return __FLT_ABI(ga_mingw_csin)(z);
}
#define csinh ga_mingw_csinh
#define csinhf ga_mingw_csinhf
#include "csinh.def.h"
#undef csinh
#undef csinhf
__FLT_TYPE __complex__ __cdecl __FLT_ABI(csinh)(__FLT_TYPE __complex__ z)
{
    __FLT_TYPE x = __real__ z, y = __imag__ z;
    __complex__ __FLT_TYPE r;
    if (isfinite(x) && y == 0) {
        __real__ r = __FLT_ABI(sinh)(x);
        __imag__ r = y;
        return r;
    }
    return __FLT_ABI(ga_mingw_csinh)(z);
}
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
#define GA_TANH_LIMIT 22.0
__FLT_TYPE __complex__ __cdecl __FLT_ABI(ctanh)(__FLT_TYPE __complex__ z)
{
    __FLT_TYPE x = __real__ z, y = __imag__ z;
    if (x == 0 && !isfinite(y)) { /* Annex G (C11): +-0 + i NaN */
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
#endif
