// fuse-depends:
//===- common.cuh - Storage types and conversions for the device helpers --===//
//
// Every other helper builds on this file. It compiles as host C++ too, so the
// tests can check, bit for bit, that a value stored as bf16 or f16 on the GPU
// is the one the CPU reference interpreter stores (fuse::floatToBF16Bits and
// fuse::floatToF16Bits in HostTensor.cpp): round to nearest even, overflow to
// infinity, f16 subnormals rounded correctly, NaN kept NaN with
//   bf16: (f32 bits >> 16) | 0x0040       (payload kept, made quiet)
//   f16 : sign | 0x7E00                    (payload dropped)
//
// Storage types of generated code: f32 `float`, bf16 `fuse::bf16`, f16
// `fuse::f16`, i64 `long long`, i32 `int`, i1 `unsigned char` (0 or 1).
//
// Under NVRTC nothing may be #included (the translation unit is compiled with
// no include path), hence the typedefs and the plain bit manipulation.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_COMMON_CUH
#define FUSE_KERNELS_COMMON_CUH

#ifndef __CUDACC_RTC__
#include <cstdint>
#include <cstring>
#else
// Generated kernels compute index variables they do not always use; the
// warning would bury real messages in NVRTC's log.
#pragma nv_diag_suppress 177
#endif

// philox.cuh defines FUSE_HOST_DEVICE too, with these exact tokens: an
// identical redefinition is legal, so either file may come first.
#ifdef __CUDACC__
#ifndef FUSE_HOST_DEVICE
#define FUSE_HOST_DEVICE __host__ __device__ __forceinline__
#endif
#define FUSE_DEVICE __device__ __forceinline__
#else
#ifndef FUSE_HOST_DEVICE
#define FUSE_HOST_DEVICE inline
#endif
#define FUSE_DEVICE inline
#endif

namespace fuse {

#ifdef __CUDACC_RTC__
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef int int32_t;
typedef long long int64_t;
#else
using std::int32_t;
using std::int64_t;
using std::uint16_t;
using std::uint32_t;
using std::uint64_t;
#endif

/// 16-bit float storage: the bit pattern only, so that no CUDA header is
/// needed and host and device agree on layout. Arithmetic happens in f32.
struct alignas(2) bf16 {
  unsigned short bits;
};
struct alignas(2) f16 {
  unsigned short bits;
};

FUSE_HOST_DEVICE uint32_t floatAsBits(float v) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(v);
#else
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
#endif
}

FUSE_HOST_DEVICE float bitsAsFloat(uint32_t bits) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
#endif
}

FUSE_HOST_DEVICE float infinity() { return bitsAsFloat(0x7F800000u); }

FUSE_HOST_DEVICE bool isNaN(float v) {
  return (floatAsBits(v) & 0x7FFFFFFFu) > 0x7F800000u;
}

/// NaN-propagating max and min (torch.maximum / torch.amax semantics, as the
/// interpreter's): NaN if either operand is NaN, else std::max / std::min.
FUSE_HOST_DEVICE float maximum(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return isNaN(a) ? a : isNaN(b) ? b : (a < b ? b : a);
#endif
}

FUSE_HOST_DEVICE float minimum(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return isNaN(a) ? a : isNaN(b) ? b : (b < a ? b : a);
#endif
}

namespace detail {

// The portable conversions: integer operations only, so host and device run
// the same steps. The device uses PTX cvt instead where that gives the same
// bits (checked exhaustively on an H100, see fromFloat below).

FUSE_HOST_DEVICE uint16_t roundToBF16Bits(float v) {
  uint32_t bits = floatAsBits(v);
  if (isNaN(v))
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // Adding 0x7FFF plus the kept lsb rounds the dropped half to nearest even;
  // a carry out of the mantissa bumps the exponent, up to infinity.
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

FUSE_HOST_DEVICE uint16_t roundToF16Bits(float v) {
  uint32_t bits = floatAsBits(v);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) // NaN
    return static_cast<uint16_t>(sign | 0x7E00u);
  if (magnitude >= 0x47800000u) // >= 2^16: beyond f16's finite range
    return static_cast<uint16_t>(sign | 0x7C00u);
  if (magnitude < 0x38800000u) {
    // Below 2^-14: an f16 subnormal (or zero). Shift the significand, with
    // its implicit bit, to units of 2^-24 and round the dropped bits.
    if (magnitude < 0x33000000u) // < 2^-25: rounds to zero
      return static_cast<uint16_t>(sign);
    uint32_t exponent = magnitude >> 23;
    uint32_t full = (magnitude & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126u - exponent; // 14 .. 24
    uint32_t half = full >> shift;
    uint32_t remainder = full & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1u);
    if (remainder > halfway || (remainder == halfway && (half & 1u)))
      ++half; // may reach 0x0400, the smallest normal: still right
    return static_cast<uint16_t>(sign | half);
  }
  // Normal: rebias the exponent (127 -> 15) and round 13 dropped bits; a
  // carry may run into the exponent, up to infinity, which is right too.
  uint32_t half = (magnitude - 0x38000000u) >> 13;
  uint32_t remainder = magnitude & 0x1FFFu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u)))
    ++half;
  return static_cast<uint16_t>(sign | half);
}

FUSE_HOST_DEVICE float f16BitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1Fu) // inf, NaN with its payload
    return bitsAsFloat(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0u) {
    // Zero or subnormal: mantissa * 2^-24, exact in f32.
    float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return bitsAsFloat(sign | floatAsBits(magnitude));
  }
  return bitsAsFloat(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

} // namespace detail

FUSE_HOST_DEVICE float toFloat(float v) { return v; }

FUSE_HOST_DEVICE float toFloat(bf16 v) {
  return bitsAsFloat(static_cast<uint32_t>(v.bits) << 16);
}

FUSE_HOST_DEVICE float toFloat(f16 v) {
#ifdef __CUDA_ARCH__
  // One cvt; NaN gets its payload back, as the host conversion keeps it.
  float r;
  asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(v.bits));
  if ((v.bits & 0x7FFFu) > 0x7C00u)
    r = bitsAsFloat((static_cast<uint32_t>(v.bits & 0x8000u) << 16) |
                    0x7F800000u | (static_cast<uint32_t>(v.bits & 0x3FFu) << 13));
  return r;
#else
  return detail::f16BitsToFloat(v.bits);
#endif
}

/// f32 to a storage type, rounding to nearest even (see the file comment).
template <typename T> FUSE_HOST_DEVICE T fromFloat(float v);

template <> FUSE_HOST_DEVICE float fromFloat<float>(float v) { return v; }

// On sm_80+ one cvt.rn rounds exactly like the integer code for every
// non-NaN input (subnormals kept, overflow to infinity: no .satfinite, no
// .ftz); only NaN needs the host's pattern put back. Checked on all 2^32 f32
// patterns on an H100 (CUDA 13.0).
template <> FUSE_HOST_DEVICE bf16 fromFloat<bf16>(float v) {
  bf16 out;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned short bits;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(v));
  out.bits = isNaN(v) ? static_cast<unsigned short>((floatAsBits(v) >> 16) | 0x0040u)
                      : bits;
#else
  out.bits = detail::roundToBF16Bits(v);
#endif
  return out;
}

template <> FUSE_HOST_DEVICE f16 fromFloat<f16>(float v) {
  f16 out;
#ifdef __CUDA_ARCH__
  unsigned short bits;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(v));
  out.bits = isNaN(v) ? static_cast<unsigned short>(
                            ((floatAsBits(v) >> 16) & 0x8000u) | 0x7E00u)
                      : bits;
#else
  out.bits = detail::roundToF16Bits(v);
#endif
  return out;
}

} // namespace fuse

#endif // FUSE_KERNELS_COMMON_CUH
