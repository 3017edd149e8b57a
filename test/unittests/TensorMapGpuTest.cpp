//===- TensorMapGpuTest.cpp - TMA tensor maps through the executor --------===//
//
// The executable of TensorMapExecutable.h on a GPU: the executor encodes the
// launches' tensor maps from the bound pointers, the kernels TMA-load tiles
// (no swizzle and 128-byte swizzle) and write them out, rows past the input
// read as zeros. With CUDA graphs, a new pointer set must get maps of its
// own pointers. A misaligned input is refused naming the step. Skipped,
// with the reason, without a GPU or on one older than Hopper.
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtil.h"
#include "TensorMapExecutable.h"

#include "fuse/Runtime/Executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace fuse;
using namespace fuse::runtime;
using namespace fuse::runtime::testing;
using ::testing::HasSubstr;

namespace {

constexpr int64_t kInputBytes = int64_t(kTmaRows) * kTmaCols * 2;
constexpr int64_t kOutputBytes = int64_t(kTmaOutRows) * kTmaCols * 2;

#define FUSE_REQUIRE_TMA()                                                     \
  FUSE_REQUIRE_GPU();                                                          \
  do {                                                                         \
    if (queryDevice()->computeMajor < 9)                                       \
      GTEST_SKIP() << "TMA needs compute capability 9.0 or newer; "            \
                   << queryDevice()->name << " is " << queryDevice()->arch();  \
  } while (0)

/// Device memory for one binding: a random input (`offsetBytes` into its
/// allocation) and two outputs.
struct Binding {
  std::vector<float> host;
  DeviceBuffer x;
  int64_t offsetBytes = 0;
  DeviceBuffer plain, swizzled;

  explicit Binding(uint32_t seed, int64_t offsetBytes = 0)
      : host(randomValues(size_t(kTmaRows) * kTmaCols, DType::BF16, seed)),
        offsetBytes(offsetBytes) {
    std::vector<uint8_t> bytes(offsetBytes, 0);
    std::vector<uint8_t> values = toBytes(host, DType::BF16);
    bytes.insert(bytes.end(), values.begin(), values.end());
    StatusOr<DeviceBuffer> input =
        DeviceBuffer::allocate((int64_t)bytes.size(), "x");
    EXPECT_TRUE(input.ok()) << input.status().message();
    x = std::move(*input);
    EXPECT_TRUE(x.upload(bytes.data(), (int64_t)bytes.size()).ok());
    for (DeviceBuffer *out : {&plain, &swizzled}) {
      StatusOr<DeviceBuffer> buffer =
          DeviceBuffer::allocate(kOutputBytes, "out");
      EXPECT_TRUE(buffer.ok()) << buffer.status().message();
      *out = std::move(*buffer);
    }
  }
  std::vector<void *> inputs() const {
    return {static_cast<char *>(x.data()) + offsetBytes};
  }
  std::vector<void *> outputs() const {
    return {plain.data(), swizzled.data()};
  }
  /// NaN everywhere (0xFFFF is a bf16 NaN), so an unwritten element shows.
  void poison() {
    EXPECT_TRUE(plain.fill(0xFF).ok());
    EXPECT_TRUE(swizzled.fill(0xFF).ok());
  }
  /// Both outputs: the input's rows, then zeros where the last tile reached
  /// past row kTmaRows.
  void expectTiles() const {
    for (const DeviceBuffer *out : {&plain, &swizzled}) {
      SCOPED_TRACE(out == &plain ? "no swizzle" : "128B swizzle");
      std::vector<float> got =
          downloadValues(*out, size_t(kTmaOutRows) * kTmaCols, DType::BF16);
      for (int r = 0; r < kTmaOutRows; ++r)
        for (int c = 0; c < kTmaCols; ++c) {
          float want = r < kTmaRows ? host[r * kTmaCols + c] : 0.0f;
          ASSERT_EQ(got[r * kTmaCols + c], want)
              << "row " << r << " column " << c;
        }
    }
  }
  void expectPoisoned() const {
    for (const DeviceBuffer *out : {&plain, &swizzled})
      for (float value :
           downloadValues(*out, size_t(kTmaOutRows) * kTmaCols, DType::BF16))
        ASSERT_TRUE(std::isnan(value)) << "an old output was written";
  }
};

std::unique_ptr<Executor> makeExecutor(bool useCudaGraph) {
  Executable exe = makeTensorMapExecutable(queryDevice()->arch());
  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(exe, testOptions(useCudaGraph));
  EXPECT_TRUE(executor.ok()) << executor.status().message();
  return executor.ok() ? std::move(*executor) : nullptr;
}

// Run 0 is eager; with graphs, run 1 captures and run 2 replays.
TEST(TensorMapGpu, TmaLoadsTilesAndZeroFillsPastTheEnd) {
  FUSE_REQUIRE_TMA();
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (bool graph : {false, true}) {
    SCOPED_TRACE(graph ? "CUDA graph" : "plain launches");
    std::unique_ptr<Executor> executor = makeExecutor(graph);
    ASSERT_TRUE(executor);
    Binding binding(seed);
    for (int run = 0; run < 3; ++run) {
      SCOPED_TRACE("run " + std::to_string(run));
      binding.poison();
      FUSE_ASSERT_OK(
          executor->run(binding.inputs(), binding.outputs(), nullptr));
      FUSE_ASSERT_OK(executor->synchronize(nullptr));
      binding.expectTiles();
    }
  }
}

// The maps are baked into a captured graph: a second pointer set must be
// captured with maps of its own input, and the first set's graph must not
// write the second's outputs (nor the reverse).
TEST(TensorMapGpu, NewPointersGetTheirOwnMaps) {
  FUSE_REQUIRE_TMA();
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::unique_ptr<Executor> executor = makeExecutor(true);
  ASSERT_TRUE(executor);
  Binding first(seed), second(seed + 1);
  for (int run = 0; run < 2; ++run) // eager, then captured for `first`
    FUSE_ASSERT_OK(executor->run(first.inputs(), first.outputs(), nullptr));
  FUSE_ASSERT_OK(executor->synchronize(nullptr));
  first.expectTiles();
  first.poison();
  for (int run = 0; run < 2; ++run) { // recaptured for `second`, replayed
    second.poison();
    FUSE_ASSERT_OK(executor->run(second.inputs(), second.outputs(), nullptr));
    FUSE_ASSERT_OK(executor->synchronize(nullptr));
    second.expectTiles();
    first.expectPoisoned();
  }
  FUSE_ASSERT_OK(executor->run(first.inputs(), first.outputs(), nullptr));
  FUSE_ASSERT_OK(executor->synchronize(nullptr));
  first.expectTiles();
}

// TMA needs a 16-byte aligned global address; an input bound 2 bytes into
// its allocation is refused before anything is launched.
TEST(TensorMapGpu, MisalignedBaseNamesTheStep) {
  FUSE_REQUIRE_TMA();
  for (bool graph : {false, true}) {
    SCOPED_TRACE(graph ? "CUDA graph" : "plain launches");
    std::unique_ptr<Executor> executor = makeExecutor(graph);
    ASSERT_TRUE(executor);
    Binding binding(freshSeed(), /*offsetBytes=*/2);
    Status status = executor->run(binding.inputs(), binding.outputs(), nullptr);
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(status.message(),
                HasSubstr("launching step 0 (launch tma_copy_plain: tma: no "
                          "swizzle) of @tma_tiles: tensor map 0 over input 0 "
                          "(x): base address "));
    EXPECT_THAT(status.message(), HasSubstr("is not 16-byte aligned"));
  }
}

} // namespace
