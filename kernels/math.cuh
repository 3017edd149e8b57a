// fuse-depends: common.cuh
//===- math.cuh - f32 activation and arithmetic helpers -------------------===//
//
// The formulas of the CPU reference interpreter (lib/Interpreter/
// ElementwiseEval.cpp), written with CUDA's f32 math builtins. Those are not
// bit-identical to libm (expf, erff, tanhf, powf are within 1 to 4 ulp), which
// the 1e-4 relative tolerance of the f32 path absorbs; where a cheaper exact
// form exists (pow with exponent 2, 1, 0, ...) it is used.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_MATH_CUH
#define FUSE_KERNELS_MATH_CUH

namespace fuse {

/// 0.5 x (1 + erf(x / sqrt 2)): gelu(approximate="none").
FUSE_DEVICE float geluErf(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))): gelu(approximate="tanh").
FUSE_DEVICE float geluTanh(float x) {
  const float kAlpha = 0.79788456080286536f; // sqrt(2 / pi)
  return 0.5f * x * (1.0f + tanhf(kAlpha * (x + 0.044715f * x * x * x)));
}

/// 1 / (1 + e^-x): 0 for x below about -88 (e^-x overflows to infinity),
/// 1 for large x; never NaN for non-NaN x.
FUSE_DEVICE float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

FUSE_DEVICE float silu(float x) { return x * sigmoid(x); }

/// max(x, 0) keeping NaN (and -0.0) as the interpreter's
/// `isnan(x) ? x : std::max(x, 0.0f)` does; fmaxf would drop NaN.
FUSE_DEVICE float relu(float x) { return x < 0.0f ? 0.0f : x; }

/// rsqrtf: one MUFU.RSQ and a fix-up, within 2 ulp of 1 / sqrt(x) (the
/// interpreter's formula, two correctly rounded steps) and with the same
/// special values: +inf at +-0, 0 at +inf, NaN below zero.
FUSE_DEVICE float rsqrt(float x) { return rsqrtf(x); }

/// IEEE division (NVRTC's default --prec-div=true), as the interpreter.
FUSE_DEVICE float reciprocal(float x) { return 1.0f / x; }

/// std::pow's value. Exponents the code generator meets as constants get the
/// exact or cheaper form, with pow's special values kept:
///   0 -> 1 (also for NaN base), 1 -> x, 2 -> x * x (correctly rounded, as
///   glibc's powf), -1 -> 1 / x, 0.5 -> sqrt(x) except pow(-0, 0.5) = +0 and
///   pow(-inf, 0.5) = +inf.
/// Everything else goes to powf (IEEE special cases, at most 4 ulp off).
FUSE_DEVICE float power(float x, float y) {
  if (y == 2.0f)
    return x * x;
  if (y == 0.5f)
    return x == -infinity() ? infinity() : fabsf(sqrtf(x)); // fabs: -0 -> +0
  if (y == 1.0f)
    return x;
  if (y == 0.0f)
    return 1.0f;
  if (y == -1.0f)
    return 1.0f / x;
  return powf(x, y);
}

} // namespace fuse

#endif // FUSE_KERNELS_MATH_CUH
