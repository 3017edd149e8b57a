//===- DeviceConversionTest.cpp - kernels/common.cuh on the host ----------===//
//
// A bf16 or f16 value that a generated kernel stores must be the one the CPU
// reference interpreter stores (HostTensor's floatToBF16Bits/floatToF16Bits),
// or GPU-vs-CPU comparisons see rounding differences that are not bugs.
// common.cuh compiles as host C++ for exactly this check. (Its device-only
// cvt paths were checked against the same integer code on all 2^32 inputs on
// an H100; see the comment at fromFloat.)
//
//===----------------------------------------------------------------------===//

// philox.cuh first: the two files define FUSE_HOST_DEVICE identically, and
// the NVRTC test puts them in the other order.
#include "philox.cuh"
#include "common.cuh"

#include "fuse/Support/HostTensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace {

uint32_t bitsOf(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

float fromBits(uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

/// Every 2^16th pattern (each with a few low-bit endings around bf16's and
/// f16's rounding points), the midpoints between adjacent bf16 and f16
/// values and their f32 neighbours, and the special values.
std::vector<uint32_t> sweepPatterns() {
  std::vector<uint32_t> patterns;
  for (uint32_t high = 0; high < 0x10000u; ++high)
    for (uint32_t low : {0x0000u, 0x0001u, 0x0FFFu, 0x1000u, 0x1001u, 0x3000u,
                         0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu})
      patterns.push_back(high << 16 | low);
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    // bf16: the dropped 16 bits exactly half.
    uint32_t mid = b << 16 | 0x8000u;
    patterns.insert(patterns.end(), {mid - 1, mid, mid + 1});
    // f16: the f32 halfway between value b and the next one up (exact in
    // f32, which has more bits), for every finite non-negative f16.
    if (b < 0x7C00u) {
      float lo = fuse::f16BitsToFloat(static_cast<uint16_t>(b));
      float hi = fuse::f16BitsToFloat(static_cast<uint16_t>(b + 1));
      for (float m : {(lo + hi) / 2, -(lo + hi) / 2}) {
        uint32_t bits = bitsOf(m);
        patterns.insert(patterns.end(), {bits - 1, bits, bits + 1});
      }
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::max(),
                  -std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::denorm_min(),
                  -std::numeric_limits<float>::denorm_min(), 65504.0f,
                  65519.99f, 65520.0f, -65520.0f, 0x1p-24f, 0x1p-25f,
                  0x1.000002p-25f, 0x1p-26f, 0x1p-14f, 0x1.ffcp-15f})
    patterns.push_back(bitsOf(v));
  for (uint32_t nan : {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u,
                       0x7FBFFFFFu, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x7F80FFFFu,
                       0x7FA12345u})
    patterns.push_back(nan);
  for (uint32_t subnormal : {0x00000001u, 0x007FFFFFu, 0x00400000u,
                             0x80000001u, 0x807FFFFFu})
    patterns.push_back(subnormal);
  return patterns;
}

TEST(DeviceConversion, FromFloatMatchesHostTensorOnSweep) {
  std::vector<uint32_t> patterns = sweepPatterns();
  ASSERT_GT(patterns.size(), 1000000u);
  int bf16Mismatches = 0, f16Mismatches = 0;
  for (uint32_t bits : patterns) {
    float v = fromBits(bits);
    uint16_t bf16 = fuse::fromFloat<fuse::bf16>(v).bits;
    uint16_t f16 = fuse::fromFloat<fuse::f16>(v).bits;
    if (bf16 != fuse::floatToBF16Bits(v) && ++bf16Mismatches <= 5)
      ADD_FAILURE() << std::hex << "bf16 of 0x" << bits << ": 0x" << bf16
                    << ", HostTensor 0x" << fuse::floatToBF16Bits(v);
    if (f16 != fuse::floatToF16Bits(v) && ++f16Mismatches <= 5)
      ADD_FAILURE() << std::hex << "f16 of 0x" << bits << ": 0x" << f16
                    << ", HostTensor 0x" << fuse::floatToF16Bits(v);
    EXPECT_EQ(bitsOf(fuse::fromFloat<float>(v)), bits);
  }
  EXPECT_EQ(bf16Mismatches, 0);
  EXPECT_EQ(f16Mismatches, 0);
}

TEST(DeviceConversion, RoundingExamples) {
  using fuse::bf16;
  using fuse::f16;
  using fuse::fromFloat;
  EXPECT_EQ(fromFloat<bf16>(1.0f).bits, 0x3F80);
  EXPECT_EQ(fromFloat<bf16>(fromBits(0x3F808000u)).bits, 0x3F80); // tie, even
  EXPECT_EQ(fromFloat<bf16>(fromBits(0x3F818000u)).bits, 0x3F82); // tie, even
  EXPECT_EQ(fromFloat<bf16>(fromBits(0x7F7FFFFFu)).bits, 0x7F80); // to inf
  EXPECT_EQ(fromFloat<bf16>(fromBits(0xFFA12345u)).bits, 0xFFE1); // NaN quiet
  EXPECT_EQ(fromFloat<f16>(1.0f).bits, 0x3C00);
  EXPECT_EQ(fromFloat<f16>(65504.0f).bits, 0x7BFF);
  EXPECT_EQ(fromFloat<f16>(65520.0f).bits, 0x7C00);            // tie to inf
  EXPECT_EQ(fromFloat<f16>(0x1p-24f).bits, 0x0001);            // min subnormal
  EXPECT_EQ(fromFloat<f16>(0x1p-25f).bits, 0x0000);            // tie, even
  EXPECT_EQ(fromFloat<f16>(0x1.8p-24f).bits, 0x0002);          // tie, even
  EXPECT_EQ(fromFloat<f16>(-0x1.ff8p-15f).bits, 0x83FF);       // max subnormal
  EXPECT_EQ(fromFloat<f16>(0x1.ffcp-15f).bits, 0x0400);        // tie, even
  EXPECT_EQ(fromFloat<f16>(fromBits(0xFF800001u)).bits, 0xFE00);
}

TEST(DeviceConversion, ToFloatInvertsOnAllPatterns) {
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    auto bits = static_cast<uint16_t>(b);
    float bf16 = fuse::toFloat(fuse::bf16{bits});
    float f16 = fuse::toFloat(fuse::f16{bits});
    ASSERT_EQ(bitsOf(bf16), bitsOf(fuse::bf16BitsToFloat(bits))) << b;
    ASSERT_EQ(bitsOf(f16), bitsOf(fuse::f16BitsToFloat(bits))) << b;
    // Round trips are exact, except that NaN comes back quiet (bf16) or
    // canonical (f16), as HostTensor's conversions make it.
    bool bf16NaN = (b & 0x7FFFu) > 0x7F80u, f16NaN = (b & 0x7FFFu) > 0x7C00u;
    EXPECT_EQ(fuse::fromFloat<fuse::bf16>(bf16).bits,
              bf16NaN ? (b | 0x0040u) : b);
    EXPECT_EQ(fuse::fromFloat<fuse::f16>(f16).bits,
              f16NaN ? ((b & 0x8000u) | 0x7E00u) : b);
  }
  EXPECT_EQ(fuse::toFloat(2.5f), 2.5f);
}

TEST(DeviceConversion, MaximumAndMinimumPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(fuse::maximum(1.0f, 2.0f), 2.0f);
  EXPECT_EQ(fuse::maximum(-1.0f, -2.0f), -1.0f);
  EXPECT_EQ(fuse::minimum(1.0f, 2.0f), 1.0f);
  EXPECT_TRUE(std::isnan(fuse::maximum(nan, 1.0f)));
  EXPECT_TRUE(std::isnan(fuse::maximum(1.0f, nan)));
  EXPECT_TRUE(std::isnan(fuse::minimum(nan, 1.0f)));
  EXPECT_TRUE(std::isnan(fuse::minimum(1.0f, nan)));
  EXPECT_EQ(fuse::infinity(), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(fuse::isNaN(nan));
  EXPECT_FALSE(fuse::isNaN(fuse::infinity()));
}

} // namespace
