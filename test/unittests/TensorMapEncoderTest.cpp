//===- TensorMapEncoderTest.cpp - TensorMapArg -> CUtensorMap -------------===//
//
// The encoder's own checks and errors. Misalignment is refused before the
// driver is asked; without a driver the error says which driver function
// could not be had. With a GPU, a valid map encodes.
//
//===----------------------------------------------------------------------===//

#include "TensorMapEncoder.h" // lib/Runtime, internal

#include "fuse/Runtime/Executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

using namespace fuse;
using namespace fuse::runtime;
using ::testing::HasSubstr;

namespace {

TensorMapArg tileMap() {
  TensorMapArg map;
  map.base = BufferRef::input(0);
  map.dtype = DType::BF16;
  map.rank = 2;
  map.dims = {64, 100, 1, 1, 1};
  map.strides = {128, 0, 0, 0};
  map.box = {64, 32, 1, 1, 1};
  map.swizzle = TensorMapArg::Swizzle::B128;
  return map;
}

TEST(TensorMapEncoder, MisalignedBaseIsRefusedFirst) {
  CUtensorMap out;
  void *base = reinterpret_cast<void *>(uintptr_t(1) << 40 | 8);
  Status status = detail::encodeTensorMap(tileMap(), base, &out);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("base address 0x10000000008 is not "
                                          "16-byte aligned"));
}

TEST(TensorMapEncoder, EncodesWithADriverAndSaysWhyWithout) {
  CUtensorMap out;
  StatusOr<DeviceInfo> device = queryDevice();
  if (!device.ok()) {
    void *base = reinterpret_cast<void *>(uintptr_t(1) << 40);
    Status status = detail::encodeTensorMap(tileMap(), base, &out);
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(status.message(), HasSubstr("cuTensorMapEncodeTiled"));
    std::cout << "without a driver: " << status.message() << "\n";
    return;
  }
  if (device->computeMajor < 9)
    GTEST_SKIP() << "tensor maps need compute capability 9.0; " << device->name
                 << " is " << device->arch();
  StatusOr<DeviceBuffer> buffer = DeviceBuffer::allocate(64 * 100 * 2, "x");
  ASSERT_TRUE(buffer.ok()) << buffer.status().message();
  Status status = detail::encodeTensorMap(tileMap(), buffer->data(), &out);
  EXPECT_TRUE(status.ok()) << status.message();
  // A box row of 256 bytes does not fit the 128-byte swizzle: the driver's
  // refusal is reported with the map.
  TensorMapArg wide = tileMap();
  wide.box[0] = 128;
  wide.dims[0] = 128;
  wide.strides[0] = 256;
  status = detail::encodeTensorMap(wide, buffer->data(), &out);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("cuTensorMapEncodeTiled failed with "));
  EXPECT_THAT(status.message(),
              HasSubstr("bf16 rank 2 dims=(128,100) strides=(256) "
                        "box=(128,32) swizzle=128B at 0x"));
}

} // namespace
