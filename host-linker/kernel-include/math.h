/* SPDX-License-Identifier: MIT */
/* <math.h> for a host kernel (docs/kernels.md): rig's own, for a kernel
 * compiled for no operating system, where the compiler brings the
 * freestanding headers (<stdint.h>, <stddef.h>, <float.h>, ...) but no C
 * library's. It declares the functions of C99's <math.h> that the C math
 * library defines, which rig's linker finds in the process or in libm
 * (docs/linker.md, SYM-1), and defines the macros that are the compiler's.
 * Nothing here is rig's API: only what the C standard says of each name.
 *
 *   clang -c -O2 -fPIC -ffreestanding --target=x86_64-none-unknown-elf \
 *     -isystem "$(pkg-config --variable=kernel_includedir rig-link)" k.c
 */
#ifndef RIG_KERNEL_MATH_H
#define RIG_KERNEL_MATH_H

#ifdef __cplusplus
extern "C" {
#endif

typedef float float_t;
typedef double double_t;

#define HUGE_VAL __builtin_huge_val()
#define HUGE_VALF __builtin_huge_valf()
#define HUGE_VALL __builtin_huge_vall()
#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")

#define FP_NAN 0
#define FP_INFINITE 1
#define FP_ZERO 2
#define FP_SUBNORMAL 3
#define FP_NORMAL 4
#define FP_ILOGB0 (-2147483647 - 1)
#define FP_ILOGBNAN (-2147483647 - 1)
#define MATH_ERRNO 1
#define MATH_ERREXCEPT 2
#define math_errhandling (MATH_ERRNO | MATH_ERREXCEPT)

#define fpclassify(x)                                                                    \
  __builtin_fpclassify(FP_NAN, FP_INFINITE, FP_NORMAL, FP_SUBNORMAL, FP_ZERO, x)
#define isfinite(x) __builtin_isfinite(x)
#define isinf(x) __builtin_isinf_sign(x)
#define isnan(x) __builtin_isnan(x)
#define isnormal(x) __builtin_isnormal(x)
#define signbit(x) __builtin_signbit(x)
#define isgreater(x, y) __builtin_isgreater(x, y)
#define isgreaterequal(x, y) __builtin_isgreaterequal(x, y)
#define isless(x, y) __builtin_isless(x, y)
#define islessequal(x, y) __builtin_islessequal(x, y)
#define islessgreater(x, y) __builtin_islessgreater(x, y)
#define isunordered(x, y) __builtin_isunordered(x, y)

/* POSIX's constants, which kernels written for Linux use (M_PI above all). */
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440

/* f(x), in double, float and long double. */
#define RIG__M1(n) double n(double); float n##f(float); long double n##l(long double);
/* f(x, y). */
#define RIG__M2(n)                                                                       \
  double n(double, double); float n##f(float, float); long double n##l(long double, long double);

RIG__M1(acos) RIG__M1(asin) RIG__M1(atan) RIG__M1(cos) RIG__M1(sin) RIG__M1(tan)
RIG__M1(acosh) RIG__M1(asinh) RIG__M1(atanh) RIG__M1(cosh) RIG__M1(sinh) RIG__M1(tanh)
RIG__M1(exp) RIG__M1(exp2) RIG__M1(expm1) RIG__M1(log) RIG__M1(log10) RIG__M1(log1p)
RIG__M1(log2) RIG__M1(logb) RIG__M1(cbrt) RIG__M1(fabs) RIG__M1(sqrt) RIG__M1(erf)
RIG__M1(erfc) RIG__M1(lgamma) RIG__M1(tgamma) RIG__M1(ceil) RIG__M1(floor)
RIG__M1(nearbyint) RIG__M1(rint) RIG__M1(round) RIG__M1(trunc)
RIG__M2(atan2) RIG__M2(hypot) RIG__M2(pow) RIG__M2(fmod) RIG__M2(remainder)
RIG__M2(copysign) RIG__M2(nextafter) RIG__M2(fdim) RIG__M2(fmax) RIG__M2(fmin)

#undef RIG__M1
#undef RIG__M2

double frexp(double, int *); float frexpf(float, int *); long double frexpl(long double, int *);
double ldexp(double, int); float ldexpf(float, int); long double ldexpl(long double, int);
double scalbn(double, int); float scalbnf(float, int); long double scalbnl(long double, int);
double scalbln(double, long); float scalblnf(float, long);
long double scalblnl(long double, long);
double modf(double, double *); float modff(float, float *);
long double modfl(long double, long double *);
int ilogb(double); int ilogbf(float); int ilogbl(long double);
long lrint(double); long lrintf(float); long lrintl(long double);
long long llrint(double); long long llrintf(float); long long llrintl(long double);
long lround(double); long lroundf(float); long lroundl(long double);
long long llround(double); long long llroundf(float); long long llroundl(long double);
double remquo(double, double, int *); float remquof(float, float, int *);
long double remquol(long double, long double, int *);
double fma(double, double, double); float fmaf(float, float, float);
long double fmal(long double, long double, long double);
double nan(const char *); float nanf(const char *); long double nanl(const char *);
double nexttoward(double, long double); float nexttowardf(float, long double);
long double nexttowardl(long double, long double);

#ifdef __cplusplus
}
#endif

#endif
