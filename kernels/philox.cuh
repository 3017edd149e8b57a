// fuse-depends:
//===- philox.cuh - Counter-based random numbers for host and device -------===//
//
// The one definition of Fuse's random numbers. The CPU reference interpreter
// includes this file as C++17 and the CUDA code generator hands it to NVRTC,
// so `fuse.random` produces the same bits on both sides. Keep it plain C++:
// no library calls whose last bit differs between libm and CUDA.
//
// CONTRACT (the GPU kernels must follow this layout exactly)
// ---------------------------------------------------------
// `fuse.random <dist>, %seed, %offset : tensor<...>`, seed and offset being
// 0-d i64 tensors read as uint64_t (two's complement bits, no conversion).
//
//   key       = { lo32(seed), hi32(seed) }
//   i         = the element's row-major (flattened) index in the result
//   counter   = { lo32(c), hi32(c), 0, 0 }           (c is uint64_t, wraps)
//   block     = philox4x32_10(counter, key)          (4 x uint32_t)
//
//   uniform   : c = offset + i / 4, value = uniform(block[i % 4])
//   bernoulli : c = offset + i / 4, value = bernoulli(block[i % 4], p)
//   normal    : c = offset + i / 2, j = 2 * (i % 2),
//               value = normal(block[j], block[j + 1])
//
// So one Philox call yields 4 uniform/bernoulli elements or 2 normal elements
// (Box-Muller's second, sine output is dropped: keeping it would tie element
// i's value to a sibling and save little). An op of N elements consumes
// countersUsed(dist, N) = ceil(N / 4) or ceil(N / 2) counter values starting
// at `offset`; a graph that needs independent streams from one seed gives the
// next random op offset + countersUsed(...) of the previous one.
//
// Value mapping (all exact or built only from correctly rounded operations):
//   uniform(x)      = (x >> 8) * 2^-24                      in [0, 1), exact
//   bernoulli(x, p) = uniform(x) < p, with p first rounded to f32; i1 results
//                     take the bool, float results 1.0 / 0.0
//   normal(a, b)    = sqrt(-2 ln u1) * cos(2 pi u2),
//                     u1 = ((a >> 8) + 1) * 2^-24 in (0, 1],
//                     u2 = (b >> 8) * 2^-24 in [0, 1)
//   uniform for a narrow result type keeps only the bits it can hold:
//   uniformBits(x, b) = (x >> (32 - b)) * 2^-b, with b = 24 (f32), 11 (f16),
//   8 (bf16), so the value is exact in that type and stays in [0, 1)
//   (rounding a 24-bit draw to bf16 would give 1.0 for the top 2^-9 of the
//   mass). normal results round the f32 value to nearest even.
//
// ln and cos are implemented here (portableLog, portableCos2Pi) because libm's
// logf/cosf and CUDA's differ in the last ulp. Every multiply-add is an
// explicit fma and no plain product ever feeds an add or subtract (the only
// exception is u * 4, which is exact, so contracting it changes nothing).
// That keeps g++ (-ffp-contract=fast is its GNU default; it contracts when
// FMA instructions are enabled) and NVRTC (--fmad=true) from fusing anything
// differently. Device sqrt uses __fsqrt_rn, which stays correctly rounded
// even under -use_fast_math; host sqrt is IEEE. Host code must not be built
// with -ffast-math (it would fold the (t + C) - C rounding trick).
//
// Accuracy against double-precision std::log / std::cos, measured exhaustively
// (ulp = the f32 ulp of the true value's binade):
//   portableLog     max 0.921 ulp over every positive normal float
//   portableCos2Pi  max 1.024 ulp over every float with |u| < 2^20
//   normal(a, b)    max 2.81 ulp versus a double Box-Muller, 2^28 random
//                   (a, b) pairs (sampled, not a proof)
// test/unittests/PhiloxTest.cpp asserts 1.0 / 1.05 / 3.0 ulp on every u1 and
// u2 the generator can produce plus strided sweeps of all floats.
// Bit identity was checked on an H200 (CUDA 13.0): NVRTC with default flags
// and with --use_fast_math, and nvcc -arch=sm_90a with and without
// -use_fast_math, all matched g++ -O3 on 3 x 2^24 elements of each
// distribution and on every generator input of portableLog/portableCos2Pi.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_PHILOX_CUH
#define FUSE_KERNELS_PHILOX_CUH

#ifndef __CUDACC_RTC__
#include <cmath>
#include <cstdint>
#include <cstring>
#endif

#ifdef __CUDACC__
#define FUSE_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FUSE_HOST_DEVICE inline
#endif

// __CUDA_ARCH__ is set only in the device pass (NVRTC always, nvcc's second
// pass), so __host__ __device__ functions pick the right primitive per side.
#ifdef __CUDA_ARCH__
#define FUSE_FMA(a, b, c) fmaf((a), (b), (c))
#define FUSE_SQRT(x) __fsqrt_rn(x)
#else
#define FUSE_FMA(a, b, c) std::fmaf((a), (b), (c))
#define FUSE_SQRT(x) std::sqrt(static_cast<float>(x))
#endif

namespace fuse {
namespace philox {

// NVRTC ships no <cstdint>; these are the widths Philox is defined on.
#ifdef __CUDACC_RTC__
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#else
using std::uint32_t;
using std::uint64_t;
#endif

//===----------------------------------------------------------------------===//
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw, SC'11; Random123's philox.h)
//===----------------------------------------------------------------------===//

constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u; // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85u; // sqrt(3) - 1

struct Block {
  uint32_t x[4];
};

FUSE_HOST_DEVICE uint32_t mulHiLo(uint32_t a, uint32_t b, uint32_t &lo) {
#ifdef __CUDA_ARCH__
  lo = a * b;
  return __umulhi(a, b);
#else
  uint64_t product = static_cast<uint64_t>(a) * b;
  lo = static_cast<uint32_t>(product);
  return static_cast<uint32_t>(product >> 32);
#endif
}

FUSE_HOST_DEVICE Block philox4x32_10(const uint32_t counter[4],
                                     const uint32_t key[2]) {
  uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; ++round) {
    // Random123 bumps the key between rounds: rounds 2..10 see k + r * W.
    if (round > 0) {
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
    uint32_t lo0, lo1;
    uint32_t hi0 = mulHiLo(kMul0, c0, lo0);
    uint32_t hi1 = mulHiLo(kMul1, c2, lo1);
    uint32_t n0 = hi1 ^ c1 ^ k0;
    uint32_t n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  Block out = {{c0, c1, c2, c3}};
  return out;
}

/// The Philox block for 64-bit counter value `c` under `seed` (see CONTRACT).
FUSE_HOST_DEVICE Block blockAt(uint64_t seed, uint64_t c) {
  uint32_t counter[4] = {static_cast<uint32_t>(c),
                         static_cast<uint32_t>(c >> 32), 0u, 0u};
  uint32_t key[2] = {static_cast<uint32_t>(seed),
                     static_cast<uint32_t>(seed >> 32)};
  return philox4x32_10(counter, key);
}

// Selects without a dynamic array index so device code keeps the block in
// registers instead of spilling it to local memory.
FUSE_HOST_DEVICE uint32_t lane(const Block &b, uint32_t k) {
  return k == 0 ? b.x[0] : k == 1 ? b.x[1] : k == 2 ? b.x[2] : b.x[3];
}

enum class Distribution : uint32_t { Uniform = 0, Normal = 1, Bernoulli = 2 };

/// Counter values consumed by an op producing `numElements` values.
FUSE_HOST_DEVICE uint64_t countersUsed(Distribution dist,
                                       uint64_t numElements) {
  uint64_t perCounter = dist == Distribution::Normal ? 2 : 4;
  return numElements / perCounter + (numElements % perCounter != 0 ? 1 : 0);
}

//===----------------------------------------------------------------------===//
// Bit-reproducible f32 math
//===----------------------------------------------------------------------===//

FUSE_HOST_DEVICE uint32_t floatToBits(float v) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(v);
#else
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
#endif
}

FUSE_HOST_DEVICE float bitsToFloat(uint32_t bits) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
#endif
}

/// Natural log for positive normal floats (subnormals, 0, inf and NaN are
/// out of its domain; the generator only passes values in [2^-24, 1]).
FUSE_HOST_DEVICE float portableLog(float x) {
  // x = 2^e * m with m in [sqrt(2)/2, sqrt(2)), so f = m - 1 lies on both
  // sides of 0 and ln(1 + f) needs the fewest terms. Subtracting the bits of
  // sqrt(2)/2 moves the binade boundary there; e is the sign-extended 9-bit
  // field above the mantissa (written without a signed shift).
  uint32_t shifted = floatToBits(x) - 0x3f3504f3u;
  int e = static_cast<int>((shifted >> 23) ^ 0x100u) - 0x100;
  float m = bitsToFloat((shifted & 0x007fffffu) + 0x3f3504f3u);
  float f = m - 1.0f; // exact (Sterbenz: m in [1/2, 2])

  // ln(1 + f) = f + f^2 * q(f); q is a degree-9 Chebyshev fit of
  // (ln(1 + f) - f) / f^2 on [sqrt(2)/2 - 1, sqrt(2) - 1], error 5e-9.
  float q = 0x1.15425cp-4f;
  q = FUSE_FMA(q, f, -0x1.d962f2p-4f);
  q = FUSE_FMA(q, f, 0x1.e3d33ap-4f);
  q = FUSE_FMA(q, f, -0x1.fcc1aep-4f);
  q = FUSE_FMA(q, f, 0x1.237a56p-3f);
  q = FUSE_FMA(q, f, -0x1.5559e6p-3f);
  q = FUSE_FMA(q, f, 0x1.99a130p-3f);
  q = FUSE_FMA(q, f, -0x1.000008p-2f);
  q = FUSE_FMA(q, f, 0x1.55554ep-2f);
  q = FUSE_FMA(q, f, -0x1.0p-1f);
  float fq = f * q;                     // feeds a multiplicand only
  float log1pF = FUSE_FMA(fq, f, f);    // f + f^2 q, the small part last

  // e * ln 2 with ln 2 split in two floats so the product's error stays
  // below the final rounding.
  float ef = static_cast<float>(e);
  return FUSE_FMA(ef, 0x1.62e430p-1f, FUSE_FMA(ef, -0x1.05c610p-29f, log1pF));
}

/// cos(2 pi u) for |u| < 2^20. Taking the angle in turns lets the range
/// reduction be exact, so the only errors are the polynomials'.
FUSE_HOST_DEVICE float portableCos2Pi(float u) {
  float t = u * 4.0f;                 // quarter turns; exact
  float rounded = t + 0x1.8p23f;      // nearest integer lands in the low bits
  uint32_t quadrant = floatToBits(rounded) & 3u;
  float r = t - (rounded - 0x1.8p23f); // in [-1/2, 1/2]; both steps exact
  float s = r * r;                     // feeds multiplicands only

  // sin(pi/2 r) = r (pi/2 + s h(s)), pi/2 split hi + lo; h is a cubic fit,
  // relative error 2e-11 over |r| <= 1/2.
  float h = 0x1.4cb762p-13f;
  h = FUSE_FMA(h, s, -0x1.32ce1ep-8f);
  h = FUSE_FMA(h, s, 0x1.466bc2p-4f);
  h = FUSE_FMA(h, s, -0x1.4abbcep-1f);
  float rsh = (r * s) * h; // products feeding an fma addend cannot contract
  float sinPart =
      FUSE_FMA(r, 0x1.921fb6p+0f, FUSE_FMA(r, -0x1.777a5cp-25f, rsh));

  // cos(pi/2 r) = 1 + s c(s); c is a cubic fit, relative error 3e-10.
  float c = 0x1.db6492p-11f;
  c = FUSE_FMA(c, s, -0x1.55cb98p-6f);
  c = FUSE_FMA(c, s, 0x1.03c1eap-2f);
  c = FUSE_FMA(c, s, -0x1.3bd3ccp+0f);
  float cosPart = FUSE_FMA(s, c, 1.0f);

  // cos(pi/2 (n + r)) by n mod 4.
  switch (quadrant) {
  case 0:
    return cosPart;
  case 1:
    return -sinPart;
  case 2:
    return -cosPart;
  default:
    return sinPart;
  }
}

//===----------------------------------------------------------------------===//
// Value mappings and per-element generators
//===----------------------------------------------------------------------===//

/// [0, 1) on a 2^-24 grid: the top 24 bits are exact in f32.
FUSE_HOST_DEVICE float uniform(uint32_t x) {
  return static_cast<float>(x >> 8) * 0x1p-24f;
}

/// [0, 1) on a 2^-bits grid (1 <= bits <= 24): exact in any float type
/// with `bits` significand bits (bf16: 8, f16: 11, f32: 24).
FUSE_HOST_DEVICE float uniformBits(uint32_t x, int bits) {
  return static_cast<float>(x >> (32 - bits)) *
         (1.0f / static_cast<float>(1u << bits));
}

/// True with probability p (rounded to f32, on a 2^-24 grid): p <= 0 never,
/// p >= 1 always.
FUSE_HOST_DEVICE bool bernoulli(uint32_t x, float p) { return uniform(x) < p; }

/// Box-Muller, cosine branch. u1 is in (0, 1] so the log is finite: the
/// result lies in [-5.7683, 5.7683] and is never NaN or inf.
FUSE_HOST_DEVICE float normal(uint32_t a, uint32_t b) {
  float u1 = static_cast<float>((a >> 8) + 1u) * 0x1p-24f;
  float u2 = static_cast<float>(b >> 8) * 0x1p-24f;
  float radius = FUSE_SQRT(-2.0f * portableLog(u1)); // -2 * x is exact
  return radius * portableCos2Pi(u2);
}

FUSE_HOST_DEVICE float uniformAt(uint64_t seed, uint64_t offset, uint64_t i) {
  Block b = blockAt(seed, offset + i / 4);
  return uniform(lane(b, static_cast<uint32_t>(i % 4)));
}

/// uniformAt for a result type with `bits` significand bits.
FUSE_HOST_DEVICE float uniformBitsAt(uint64_t seed, uint64_t offset,
                                     uint64_t i, int bits) {
  Block b = blockAt(seed, offset + i / 4);
  return uniformBits(lane(b, static_cast<uint32_t>(i % 4)), bits);
}

FUSE_HOST_DEVICE bool bernoulliAt(uint64_t seed, uint64_t offset, uint64_t i,
                                  float p) {
  Block b = blockAt(seed, offset + i / 4);
  return bernoulli(lane(b, static_cast<uint32_t>(i % 4)), p);
}

FUSE_HOST_DEVICE float normalAt(uint64_t seed, uint64_t offset, uint64_t i) {
  Block b = blockAt(seed, offset + i / 2);
  uint32_t first = 2u * static_cast<uint32_t>(i % 2);
  return normal(lane(b, first), lane(b, first + 1));
}

} // namespace philox
} // namespace fuse

#endif // FUSE_KERNELS_PHILOX_CUH
