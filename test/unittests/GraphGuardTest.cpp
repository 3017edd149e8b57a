//===- GraphGuardTest.cpp - Guarded launches and their conditional runs ---===//
//
// What the executor captures into CUDA graph conditional nodes: the runs of
// guarded launches (findGuardedRuns), the guard's parameter block, the guard
// terms in the file format, the validator and the plan text. The GPU side
// (the node really skipping the launches) is in the Python GPU tests of
// accumulation, which compare graph replay with plain launches.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/ExecutableIO.h"
#include "fuse/Runtime/GraphGuard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace fuse;
using namespace fuse::runtime;
using ::testing::HasSubstr;

namespace {

using Compare = LaunchGuardTerm::Compare;

LaunchGuardTerm flagAt(int64_t arenaOffset) {
  return {BufferRef::arena(arenaOffset), DType::I1, Compare::Ne, false, 0.0};
}

LaunchGuardTerm applyAbove(double constant) {
  return {BufferRef::input(0), DType::F32, Compare::Gt, false, constant};
}

/// An executable of launches of one kernel, each writing the weight (input
/// 1 in place) and the given arena offsets, with the given guard terms
/// (none: an unguarded launch); a GEMM where a launch is null.
class Builder {
public:
  Builder() {
    exe.entry = "step";
    exe.arch = "sm_90a";
    exe.inputs = {{"apply", DType::F32, {}}, {"weight", DType::F32, {1024}}};
    exe.outputs = {{"weight", DType::F32, {1024}}};
    exe.arenaBytes = 4096;
    exe.kernels = {{"fuse_loop_0", "extern \"C\" __global__ void fuse_loop_0() {}\n", {}},
                   graphGuardKernel()};
  }
  Builder &launch(std::vector<LaunchGuardTerm> terms, std::vector<int64_t> writes = {}) {
    KernelLaunch launch;
    launch.kernel = 0;
    launch.block = {256, 1, 1};
    launch.args = {KernelArg::read(BufferRef::input(0), DType::F32, 4),
                   KernelArg::write(BufferRef::input(1), DType::F32, 4096)};
    for (int64_t offset : writes)
      launch.args.push_back(KernelArg::write(BufferRef::arena(offset), DType::I1, 1));
    launch.changesOnlyWhen = std::move(terms);
    Step step;
    step.kind = Step::Kind::Launch;
    step.index = static_cast<int64_t>(exe.launches.size());
    exe.launches.push_back(std::move(launch));
    exe.steps.push_back(step);
    return *this;
  }
  Builder &gemm() {
    GemmStep gemm;
    gemm.m = gemm.n = gemm.k = 16;
    gemm.a = gemm.b = BufferRef::input(1);
    gemm.d = BufferRef::arena(2048);
    gemm.abType = gemm.cdType = DType::F32;
    gemm.lda = gemm.ldb = gemm.ldd = 16;
    Step step;
    step.kind = Step::Kind::Gemm;
    step.index = static_cast<int64_t>(exe.gemms.size());
    exe.gemms.push_back(gemm);
    exe.steps.push_back(step);
    return *this;
  }
  Executable exe;
};

std::vector<std::pair<size_t, size_t>> spans(const std::vector<GuardedRun> &runs) {
  std::vector<std::pair<size_t, size_t>> result;
  for (const GuardedRun &run : runs)
    result.emplace_back(run.first, run.last);
  return result;
}

TEST(GuardedRuns, ConsecutiveGuardedLaunchesMakeOneRunWithTheirTermsOnce) {
  Builder b;
  b.launch({}).launch({flagAt(0)}).launch({flagAt(0), applyAbove(0.5)})
      .launch({flagAt(256)}).launch({flagAt(0)}).launch({});
  std::vector<GuardedRun> runs = findGuardedRuns(b.exe);
  ASSERT_EQ(spans(runs), (std::vector<std::pair<size_t, size_t>>{{1, 4}}));
  EXPECT_EQ(runs[0].terms.size(), 3u);
}

TEST(GuardedRuns, UnguardedLaunchesGemmsAndShortRunsEndThem) {
  Builder b;
  b.launch({flagAt(0)}).launch({flagAt(0)}).launch({flagAt(0)})  // 0-2
      .gemm()                                                      // 3
      .launch({flagAt(0)}).launch({flagAt(0)})                     // 4-5: too short
      .launch({})                                                  // 6
      .launch({flagAt(0)}).launch({flagAt(0)}).launch({flagAt(0)}).launch({flagAt(0)});  // 7-10
  EXPECT_EQ(spans(findGuardedRuns(b.exe)),
            (std::vector<std::pair<size_t, size_t>>{{0, 2}, {7, 10}}));
  EXPECT_EQ(spans(findGuardedRuns(b.exe, 2)),
            (std::vector<std::pair<size_t, size_t>>{{0, 2}, {4, 5}, {7, 10}}));
}

TEST(GuardedRuns, ALaunchThatMayWriteAFlagOfTheRunEndsIt) {
  // The guard reads every flag before the run's first launch: a launch
  // writing the flag of an earlier or a later member cannot be in its run.
  Builder b;
  b.launch({flagAt(0)}).launch({flagAt(0)}).launch({flagAt(0)})
      .launch({flagAt(256)}, {0})  // writes the run's flag: starts a new run
      .launch({flagAt(256)}).launch({flagAt(256)})
      .launch({flagAt(512)}, {512});  // writes its own flag: in no run
  EXPECT_EQ(spans(findGuardedRuns(b.exe)),
            (std::vector<std::pair<size_t, size_t>>{{0, 2}, {3, 5}}));
  // A flag written by an earlier member of what would be the run.
  Builder c;
  c.launch({flagAt(0)}, {1024}).launch({flagAt(0)}).launch({flagAt(1024)})
      .launch({flagAt(1024)}).launch({flagAt(1024)});
  EXPECT_EQ(spans(findGuardedRuns(c.exe)),
            (std::vector<std::pair<size_t, size_t>>{{2, 4}}));
}

TEST(GuardedRuns, ARunHoldsAtMostTheTermsTheGuardTakes) {
  Builder b;
  for (int i = 0; i < kGraphGuardMaxTerms + 5; ++i)
    b.launch({flagAt(i)});
  std::vector<GuardedRun> runs = findGuardedRuns(b.exe);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].terms.size(), (size_t)kGraphGuardMaxTerms);
  EXPECT_EQ(spans(runs), (std::vector<std::pair<size_t, size_t>>{
                             {0, kGraphGuardMaxTerms - 1},
                             {kGraphGuardMaxTerms, kGraphGuardMaxTerms + 4}}));
}

TEST(GraphGuard, ParametersKeepEachTermOnceUpToTheLimit) {
  GraphGuardParams params{};
  int flags[kGraphGuardMaxTerms + 1];
  EXPECT_TRUE(addGraphGuardTerm(params, applyAbove(0.5), &flags[0]));
  EXPECT_TRUE(addGraphGuardTerm(params, applyAbove(0.5), &flags[0]));
  EXPECT_EQ(params.count, 1);
  EXPECT_EQ(params.dtype[0], 3); // f32
  EXPECT_EQ(params.compare[0], static_cast<uint8_t>(Compare::Gt));
  EXPECT_EQ(params.constant[0], 0.5);
  for (int i = 1; i < kGraphGuardMaxTerms; ++i)
    EXPECT_TRUE(addGraphGuardTerm(params, flagAt(0), &flags[i]));
  EXPECT_FALSE(addGraphGuardTerm(params, flagAt(0), &flags[kGraphGuardMaxTerms]));
  EXPECT_EQ(params.count, kGraphGuardMaxTerms);
}

TEST(GraphGuard, TermsSurviveTheFileAndShowInThePlan) {
  Builder b;
  b.launch({flagAt(0), {BufferRef::input(0), DType::F32, Compare::Le, true, 0.5}});
  // The weight updated in place goes out as the output (a copy the
  // executor skips when the caller binds both to one tensor).
  CopyStep copy;
  copy.src = BufferRef::input(1);
  copy.dst = BufferRef::output(0);
  copy.bytes = 4096;
  b.exe.copies.push_back(copy);
  Step step;
  step.kind = Step::Kind::Copy;
  b.exe.steps.push_back(step);
  ASSERT_TRUE(validateExecutable(b.exe, "guarded").ok())
      << validateExecutable(b.exe, "guarded").message();
  StatusOr<Executable> back = deserializeExecutable(serializeExecutable(b.exe), "memory");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->launches[0].changesOnlyWhen.size(), 2u);
  EXPECT_TRUE(back->launches[0].changesOnlyWhen[0] == b.exe.launches[0].changesOnlyWhen[0]);
  EXPECT_TRUE(back->launches[0].changesOnlyWhen[1] == b.exe.launches[0].changesOnlyWhen[1]);
  EXPECT_THAT(formatPlan(*back),
              HasSubstr("changes-when=[arena+0 != 0, !(input 0 (apply) <= 0.5)]"));
}

TEST(GraphGuard, TheValidatorNamesABadFlagAndAMissingGuardKernel) {
  Builder wide;
  wide.launch({{BufferRef::input(1), DType::BF16, Compare::Ne, false, 0.0}});
  Status status = validateExecutable(wide.exe, "guarded");
  EXPECT_THAT(status.message(),
              HasSubstr("launch 0 (fuse_loop_0) guard term 0 reads a bf16 flag (i1, i32, i64 or f32)"));
  Builder outside;
  outside.launch({flagAt(4096)});
  EXPECT_THAT(validateExecutable(outside.exe, "guarded").message(),
              HasSubstr("launch 0 (fuse_loop_0) guard term 0"));
  Builder noKernel;
  noKernel.launch({flagAt(0)});
  noKernel.exe.kernels.pop_back();
  EXPECT_THAT(validateExecutable(noKernel.exe, "guarded").message(),
              HasSubstr("guard term 0 needs the kernel fuse_graph_guard, which the executable lacks"));
}

} // namespace
