//===- FlashTensorMapsTest.cpp - TMA maps of the flash operands -----------===//
//
// What the code generator and the tests' executables hand the executor for
// the warp-specialised flash kernels: a map of a [b, h, t, D] view (dims
// innermost first, byte strides, 64-column boxes, 128-byte swizzle), and
// the rule that keeps operands the copy engine cannot address on the
// cp.async kernels.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/FlashTensorMaps.h"

#include <gtest/gtest.h>

using namespace fuse;
using namespace fuse::codegen;
using fuse::runtime::BufferRef;
using fuse::runtime::TensorMapArg;

namespace {

TEST(FlashTensorMaps, ContiguousOperand) {
  // q [2, 3, 100, 64] row-major.
  const FlashOperandStrides strides = contiguousFlashOperandStrides(3, 1, 100, 7, 64);
  TensorMapArg map = flashTensorMap(BufferRef::arena(512), DType::BF16, {2, 3, 100, 64},
                                    strides[0], 128);
  EXPECT_EQ(map.base, BufferRef::arena(512));
  EXPECT_EQ(map.dtype, DType::BF16);
  EXPECT_EQ(map.rank, 4u);
  EXPECT_EQ(map.dims, (std::array<uint64_t, 5>{64, 100, 3, 2, 1}));
  EXPECT_EQ(map.strides, (std::array<uint64_t, 4>{128, 100 * 128, 3 * 100 * 128, 0}));
  EXPECT_EQ(map.box, (std::array<uint32_t, 5>{64, 128, 1, 1, 1}));
  EXPECT_EQ(map.swizzle, TensorMapArg::Swizzle::B128);
}

TEST(FlashTensorMaps, PackedProjectionView) {
  // k of a packed [2, 100, 3 * 3 * 64] projection viewed as [2, 3, 100, 64]:
  // rows 576 elements apart, heads 64, batches 57600; 64 rows a box.
  FlashStrides k{57600, 64, 576};
  TensorMapArg map = flashTensorMap(BufferRef::input(0), DType::F16, {2, 3, 100, 64}, k, 64);
  EXPECT_EQ(map.strides, (std::array<uint64_t, 4>{1152, 128, 115200, 0}));
  EXPECT_EQ(map.box[1], 64u);
  EXPECT_TRUE(flashTmaAddressable(k, 384));
}

TEST(FlashTensorMaps, UnalignedOperandsStayOnCpAsync) {
  const FlashStrides aligned{57600, 64, 576};
  EXPECT_TRUE(flashTmaAddressable(aligned, 0));
  EXPECT_FALSE(flashTmaAddressable(aligned, 8)) << "start off 16 bytes";
  EXPECT_FALSE(flashTmaAddressable({57600, 64, 580}, 0)) << "rows 1160 bytes apart";
  EXPECT_FALSE(flashTmaAddressable({57600, 4, 576}, 0)) << "heads 8 bytes apart";
  EXPECT_FALSE(flashTmaAddressable({57604, 64, 576}, 0)) << "batches off 16 bytes";
}

TEST(FlashTensorMaps, DqAccumulator) {
  // f32 [2, 3, 100, 128]: heads and batches as one dimension, so boxes stop
  // at a head's last row; 32-column boxes are one 128-byte swizzle row.
  TensorMapArg map = flashDqAccumulatorMap(BufferRef::workspace(1280), 2, 3, 100, 128, 64);
  EXPECT_EQ(map.base, BufferRef::workspace(1280));
  EXPECT_EQ(map.dtype, DType::F32);
  EXPECT_EQ(map.rank, 3u);
  EXPECT_EQ(map.dims, (std::array<uint64_t, 5>{128, 100, 6, 1, 1}));
  EXPECT_EQ(map.strides, (std::array<uint64_t, 4>{512, 100 * 512, 0, 0}));
  EXPECT_EQ(map.box, (std::array<uint32_t, 5>{32, 64, 1, 1, 1}));
  EXPECT_EQ(map.swizzle, TensorMapArg::Swizzle::B128);
}

} // namespace
