//===- ProfilerGpuTest.cpp - Executor::profile on a GPU -------------------===//
//
// A hand-built executable whose counters are known in advance: a full-grid
// float4 copy of 1 GiB (every SM busy; 2 GiB of DRAM traffic), a kernel of
// one block (one SM of ~132 busy), a GEMM (a range too), and a fill. The
// measured SM efficiency, DRAM bytes and the report's shape are checked;
// then the same profile with counters off, whose figures must be labelled
// estimated. Skipped, with the reason, without a GPU; the counter checks
// skip with the profiler's warning where counters cannot be read.
//
//===----------------------------------------------------------------------===//

#include "ExecutorTestExecutables.h"
#include "GpuTestUtil.h"

#include "fuse/Runtime/Executor.h"
#include "fuse/Runtime/Profiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

using namespace fuse;
using namespace fuse::runtime;
using namespace fuse::runtime::testing;

namespace {

constexpr int64_t kCopyBytes = kProfiledCopyBytes;

class ProfilerGpu : public ::testing::Test {
protected:
  void SetUp() override {
    StatusOr<DeviceInfo> device = queryDevice();
    if (!device.ok())
      GTEST_SKIP() << device.status().message();
    if (device->arch() != "sm_90a")
      GTEST_SKIP() << "the test kernels are built for sm_90a, device is "
                   << device->arch();
    multiprocessors = device->multiprocessors;
    StatusOr<std::unique_ptr<Executor>> created =
        Executor::create(makeProfiledExecutable(multiprocessors), testOptions());
    ASSERT_TRUE(created.ok()) << created.status().message();
    executor = std::move(*created);
    const Executable &exe = executor->executable();
    for (const TensorSpec &spec : exe.inputs) {
      StatusOr<DeviceBuffer> buffer = DeviceBuffer::allocate(spec.bytes(), spec.name);
      ASSERT_TRUE(buffer.ok()) << buffer.status().message();
      FUSE_ASSERT_OK(buffer->fill(0x3C)); // finite, non-zero floats and bf16s
      inputs.push_back(std::move(*buffer));
    }
    for (const TensorSpec &spec : exe.outputs) {
      StatusOr<DeviceBuffer> buffer = DeviceBuffer::allocate(spec.bytes(), spec.name);
      ASSERT_TRUE(buffer.ok()) << buffer.status().message();
      outputs.push_back(std::move(*buffer));
    }
    for (DeviceBuffer &buffer : inputs)
      in.push_back(buffer.data());
    for (DeviceBuffer &buffer : outputs)
      out.push_back(buffer.data());
  }

  int multiprocessors = 0;
  std::unique_ptr<Executor> executor;
  std::vector<DeviceBuffer> inputs, outputs;
  std::vector<void *> in, out;
};

TEST_F(ProfilerGpu, MeasuredCountersMatchWhatTheKernelsDo) {
  ProfileOptions options;
  options.iterations = 5;
  StatusOr<ProfileReport> report = executor->profile(in, out, nullptr, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  std::printf("%s", formatProfile(*report).c_str());
  ASSERT_EQ(report->steps.size(), 4u);
  EXPECT_GT(report->stepMs, 0);
  for (const StepProfile &step : report->steps)
    EXPECT_GT(step.timeMs, 0) << step.name;
  // Peak memory: the executor's allocations (at least the arena) plus the
  // bound inputs and outputs, all within what the device has in use.
  EXPECT_GE(report->executorBytes, report->arenaBytes);
  EXPECT_EQ(report->peakBytes, report->executorBytes + report->ioBytes);
  EXPECT_GE(report->deviceUsedBytes, report->peakBytes);
  if (report->counters != CounterSource::Measured)
    GTEST_SKIP() << report->countersWarning;

  const StepProfile &copy = report->steps[0];
  const StepProfile &one = report->steps[1];
  const StepProfile &gemm = report->steps[2];
  EXPECT_EQ(copy.counters, CounterSource::Measured);
  EXPECT_GT(copy.smEfficiency, 0.5);
  EXPECT_LT(one.smEfficiency, 0.05);
  double expected = 2.0 * kCopyBytes;
  EXPECT_NEAR(copy.dramBytes, expected, 0.05 * expected);
  EXPECT_GT(copy.occupancy, 0.1);
  // The GEMM is a range too, with counters of its own.
  EXPECT_EQ(gemm.counters, CounterSource::Measured);
  EXPECT_GT(gemm.smEfficiency, 0);
  EXPECT_GT(gemm.gpuTimeMs, 0);
  // 2 GiB moved at several TB/s: memory-bound; one SM: latency-bound.
  EXPECT_EQ(copy.verdict, Verdict::MemoryBound) << copy.verdictReason;
  EXPECT_EQ(one.verdict, Verdict::LatencyBound) << one.verdictReason;
  EXPECT_TRUE(report->countersWarning.empty());
}

TEST_F(ProfilerGpu, WithoutCountersEverythingIsLabelledEstimated) {
  ProfileOptions options;
  options.iterations = 3;
  options.counters = false;
  StatusOr<ProfileReport> report = executor->profile(in, out, nullptr, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->counters, CounterSource::Estimated);
  EXPECT_THAT(report->countersWarning, ::testing::HasSubstr("ESTIMATED"));
  const StepProfile &copy = report->steps[0];
  const StepProfile &one = report->steps[1];
  EXPECT_EQ(copy.counters, CounterSource::Estimated);
  EXPECT_DOUBLE_EQ(copy.smEfficiency, 1.0);
  EXPECT_NEAR(one.smEfficiency, 1.0 / multiprocessors, 1e-12);
  EXPECT_FALSE(isKnown(copy.dramBytes));
  // cuBLASLt picks its own launch shape: no estimate, none claimed.
  EXPECT_EQ(report->steps[2].counters, CounterSource::None);
  EXPECT_FALSE(isKnown(report->steps[2].smEfficiency));
}

} // namespace
