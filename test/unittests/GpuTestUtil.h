//===- GpuTestUtil.h - Helpers for the runtime's GPU tests ------*- C++ -*-===//
//
// Every GPU test starts with FUSE_REQUIRE_GPU(): without a device it skips
// and prints why ("no CUDA device: ..."). Host data goes through DeviceBuffer
// only, so the tests use the runtime's API as tools do.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_TEST_UNITTESTS_GPUTESTUTIL_H
#define FUSE_TEST_UNITTESTS_GPUTESTUTIL_H

#include "fuse/Runtime/Executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include <unistd.h>

#define FUSE_REQUIRE_GPU()                                                     \
  do {                                                                         \
    ::fuse::runtime::StatusOr<::fuse::runtime::DeviceInfo> fuseDevice_ =       \
        ::fuse::runtime::queryDevice();                                        \
    if (!fuseDevice_.ok())                                                     \
      GTEST_SKIP() << fuseDevice_.status().message();                          \
  } while (0)

#define FUSE_ASSERT_OK(expr)                                                   \
  do {                                                                         \
    ::fuse::runtime::Status fuseStatus_ = (expr);                              \
    ASSERT_TRUE(fuseStatus_.ok()) << fuseStatus_.message();                    \
  } while (0)

namespace fuse::runtime::testing {

/// A cache directory of the test binary's own (the user's cache is left
/// alone); shared between runs, so a second run exercises cache hits. One
/// per user: the kernel cache does not use a directory another user owns
/// (PrivateDirectory.h), and one name for all would leave every user but
/// the first without cache hits.
inline ExecutorOptions testOptions(bool useCudaGraph = true) {
  ExecutorOptions options;
  options.cacheDir = (std::filesystem::temp_directory_path() /
                      ("fuse-gpu-test-cache-" + std::to_string(geteuid())))
                         .string();
  options.useCudaGraph = useCudaGraph;
  options.progress = false;
  return options;
}

/// Fresh values in [-1, 1] each run, rounded to `dtype` so the host
/// reference sees exactly what the GPU reads. The seed is printed on failure.
inline std::vector<float> randomValues(size_t count, DType dtype,
                                       uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float &value : values)
    value = roundToDType(uniform(generator), dtype);
  return values;
}

inline uint32_t freshSeed() { return std::random_device()(); }

/// `values` in the dtype's binary format (f32, f16 or bf16).
inline std::vector<uint8_t> toBytes(const std::vector<float> &values,
                                    DType dtype) {
  std::vector<uint8_t> bytes(values.size() * dtypeSize(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::F32) {
      std::memcpy(&bytes[4 * i], &values[i], 4);
      continue;
    }
    uint16_t bits = dtype == DType::BF16 ? floatToBF16Bits(values[i])
                                         : floatToF16Bits(values[i]);
    std::memcpy(&bytes[2 * i], &bits, 2);
  }
  return bytes;
}

inline std::vector<float> fromBytes(const std::vector<uint8_t> &bytes,
                                    DType dtype) {
  size_t size = dtypeSize(dtype);
  std::vector<float> values(bytes.size() / size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::F32) {
      std::memcpy(&values[i], &bytes[4 * i], 4);
      continue;
    }
    uint16_t bits;
    std::memcpy(&bits, &bytes[2 * i], 2);
    values[i] = dtype == DType::BF16 ? bf16BitsToFloat(bits)
                                     : f16BitsToFloat(bits);
  }
  return values;
}

/// A device buffer holding `values` as `dtype`, with `padBytes` spare bytes
/// after them.
inline DeviceBuffer uploadValues(const std::vector<float> &values, DType dtype,
                                 int64_t padBytes = 0) {
  std::vector<uint8_t> bytes = toBytes(values, dtype);
  StatusOr<DeviceBuffer> buffer =
      DeviceBuffer::allocate((int64_t)bytes.size() + padBytes, "test input");
  EXPECT_TRUE(buffer.ok()) << buffer.status().message();
  if (!buffer.ok())
    return DeviceBuffer();
  Status status = buffer->upload(bytes.data(), (int64_t)bytes.size());
  EXPECT_TRUE(status.ok()) << status.message();
  return std::move(*buffer);
}

/// `count` values of `dtype` read from `pointer` (inside `buffer`).
inline std::vector<float> downloadValues(const DeviceBuffer &buffer,
                                         size_t count, DType dtype) {
  std::vector<uint8_t> bytes(count * dtypeSize(dtype));
  Status status = buffer.download(bytes.data(), (int64_t)bytes.size());
  EXPECT_TRUE(status.ok()) << status.message();
  return fromBytes(bytes, dtype);
}

/// max |got - want| / max |want|: the error relative to the output's scale
/// (an elementwise ratio is meaningless where want is near zero). NaN or a
/// size mismatch gives infinity: NaN never passes.
inline double relativeError(const std::vector<float> &got,
                            const std::vector<double> &want) {
  if (got.size() != want.size())
    return INFINITY;
  double maxDiff = 0, maxWant = 1e-30;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) || std::isnan(want[i]))
      return INFINITY;
    maxDiff = std::max(maxDiff, std::fabs(got[i] - want[i]));
    maxWant = std::max(maxWant, std::fabs(want[i]));
  }
  return maxDiff / maxWant;
}

} // namespace fuse::runtime::testing

#endif // FUSE_TEST_UNITTESTS_GPUTESTUTIL_H
