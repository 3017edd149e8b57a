//===- GemmGpuTest.cpp - GemmSteps on cuBLASLt against a host reference ---===//
//
// Each case is one GemmStep in row-major terms (the runtime maps it onto
// cuBLASLt's column-major API), checked against a double-precision host
// product of the same (dtype-rounded) inputs. Tolerances are the project's:
// 1e-4 relative for f32 (which TF32 would fail), 2e-2 for bf16. Outputs are
// poisoned with NaN first, and each case runs twice (eagerly, then as a
// captured CUDA graph). The executables are GemmExecutable.h's, which
// FuseRuntimeTests validates without a GPU; padded cases zero D first and
// must find its padding still zero (cuBLASLt writes n elements a row).
//
//===----------------------------------------------------------------------===//

#include "GemmExecutable.h"
#include "GpuTestUtil.h"

#include "fuse/Runtime/Executor.h"

#include "GemmRunner.h" // lib/Runtime, internal

#include <gtest/gtest.h>

#include <cmath>

using namespace fuse;
using namespace fuse::runtime;
using namespace fuse::runtime::testing;

namespace {

std::ostream &operator<<(std::ostream &os, const GemmCase &c) {
  return os << c.name;
}

double gelu(double x) { // the tanh approximation cuBLASLt implements
  const double c = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

class GemmGpu : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmGpu, MatchesHostReference) {
  FUSE_REQUIRE_GPU();
  const GemmCase &c = GetParam();
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));

  const Executable exe = makeGemmExecutable(c);
  const GemmStep &g = exe.gemms[0];
  int64_t aElems = exe.inputs[0].numElements();
  int64_t bElems = exe.inputs[1].numElements();
  int64_t dElems = exe.outputs[0].numElements();
  std::vector<float> a = randomValues(aElems, c.ab, seed);
  std::vector<float> b = randomValues(bElems, c.ab, seed + 1);
  std::vector<float> cm = randomValues(dElems, c.cd, seed + 2);
  std::vector<float> bias = randomValues(c.n, c.biasType, seed + 3);

  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(exe, testOptions());
  ASSERT_TRUE(executor.ok()) << executor.status().message();

  std::vector<DeviceBuffer> inputs;
  inputs.push_back(uploadValues(a, c.ab));
  inputs.push_back(uploadValues(b, c.ab));
  if (g.hasC())
    inputs.push_back(uploadValues(cm, c.cd));
  if (g.hasBias())
    inputs.push_back(uploadValues(bias, c.biasType));
  std::vector<void *> inputPointers;
  for (const DeviceBuffer &buffer : inputs)
    inputPointers.push_back(buffer.data());
  int64_t dBytes = dElems * (int64_t)dtypeSize(c.cd);
  StatusOr<DeviceBuffer> d = DeviceBuffer::allocate(dBytes + c.dOffset, "d");
  ASSERT_TRUE(d.ok()) << d.status().message();
  void *dPointer = static_cast<char *>(d->data()) + c.dOffset;

  // The reference, in double, from the rounded inputs.
  std::vector<double> want;
  std::vector<size_t> positions; // written elements of D (padding is not)
  for (int64_t e = 0; e < c.batch; ++e)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < c.k; ++p) {
          double av = c.transA ? a[e * g.strideA + p * g.lda + i]
                               : a[e * g.strideA + i * g.lda + p];
          double bv = c.transB ? b[e * g.strideB + j * g.ldb + p]
                               : b[e * g.strideB + p * g.ldb + j];
          sum += av * bv;
        }
        size_t at = e * g.strideD + i * g.ldd + j;
        double value = c.alpha * sum;
        if (g.hasC())
          value += c.beta * cm[at];
        if (g.hasBias())
          value += bias[j];
        if (c.epilogue == GemmStep::Epilogue::Relu ||
            c.epilogue == GemmStep::Epilogue::ReluBias)
          value = std::max(value, 0.0);
        if (c.epilogue == GemmStep::Epilogue::Gelu ||
            c.epilogue == GemmStep::Epilogue::GeluBias)
          value = gelu(value);
        want.push_back(value);
        positions.push_back(at);
      }

  std::vector<bool> isWritten(dElems, false);
  for (size_t at : positions)
    isWritten[at] = true;

  double tolerance = c.ab == DType::F32 && c.cd == DType::F32 ? 1e-4 : 2e-2;
  for (int run = 0; run < 2; ++run) { // eager, then a captured graph
    SCOPED_TRACE("run " + std::to_string(run));
    FUSE_ASSERT_OK(d->fill(0xFF));
    FUSE_ASSERT_OK((*executor)->run(inputPointers, {dPointer}, nullptr));
    FUSE_ASSERT_OK((*executor)->synchronize(nullptr));
    std::vector<uint8_t> bytes(dBytes + c.dOffset);
    FUSE_ASSERT_OK(d->download(bytes.data(), (int64_t)bytes.size()));
    std::vector<float> all = fromBytes(
        std::vector<uint8_t>(bytes.begin() + c.dOffset, bytes.end()), c.cd);
    std::vector<float> got;
    for (size_t at : positions)
      got.push_back(all[at]);
    double error = relativeError(got, want);
    EXPECT_LE(error, tolerance)
        << c.name << ": relative error " << error << " (first value got "
        << got[0] << ", want " << want[0] << ")";
    // The padding a fill zeroed before the GEMM: cuBLASLt writes the n
    // columns of each row of D, never up to its leading dimension.
    if (!exe.fills.empty()) {
      int64_t paddingWritten = 0;
      for (int64_t at = 0; at < dElems; ++at)
        if (!isWritten[at] && all[at] != 0.0f)
          ++paddingWritten;
      EXPECT_EQ(paddingWritten, 0) << "elements of d's padding not zero";
    }
  }
}

// Identical GEMMs (same types, shape, layout, epilogue and alignment) share
// one heuristic query; a different one, or a less aligned pointer, gets its
// own.
TEST(GemmRunnerGpu, IdenticalGemmsShareOneHeuristicQuery) {
  FUSE_REQUIRE_GPU();
  GemmStep g;
  g.abType = DType::BF16, g.cdType = DType::F32;
  g.m = 64, g.n = 64, g.k = 64, g.lda = 64, g.ldb = 64, g.ldd = 64;
  Executable exe;
  exe.gemms = {g, g, g};
  exe.gemms[2].transB = true;
  for (int64_t i = 0; i < 3; ++i)
    exe.steps.push_back({Step::Kind::Gemm, i, "g" + std::to_string(i), 0, 0});
  StatusOr<DeviceBuffer> workspace = DeviceBuffer::allocate(32 << 20, "ws");
  ASSERT_TRUE(workspace.ok());
  // The heuristic reads pointers' alignment only, never their data.
  char *aligned = reinterpret_cast<char *>(uintptr_t(1) << 40);
  detail::GemmPointers pointers;
  pointers.a = aligned, pointers.b = aligned, pointers.d = aligned;
  StatusOr<std::unique_ptr<detail::GemmRunner>> runner =
      detail::GemmRunner::create(exe, workspace->data(), 32 << 20,
                                 {pointers, pointers, pointers});
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  EXPECT_EQ((*runner)->heuristicQueries(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Cases, GemmGpu, ::testing::ValuesIn(gemmCases()),
                         [](const ::testing::TestParamInfo<GemmCase> &info) {
                           return info.param.name;
                         });

} // namespace
