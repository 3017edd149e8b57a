//===- GemmGpuTest.cpp - GemmSteps on cuBLASLt against a host reference ---===//
//
// Each case is one GemmStep in row-major terms (the runtime maps it onto
// cuBLASLt's column-major API), checked against a double-precision host
// product of the same (dtype-rounded) inputs. Tolerances are the project's:
// 1e-4 relative for f32 (which TF32 would fail), 2e-2 for bf16. Outputs are
// poisoned with NaN first, and each case runs twice (eagerly, then as a
// captured CUDA graph).
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtil.h"

#include "fuse/Runtime/Executor.h"

#include "GemmRunner.h" // lib/Runtime, internal

#include <gtest/gtest.h>

#include <cmath>

using namespace fuse;
using namespace fuse::runtime;
using namespace fuse::runtime::testing;

namespace {

struct GemmCase {
  std::string name;
  DType ab = DType::F32, cd = DType::F32;
  int64_t m = 8, n = 8, k = 8, batch = 1;
  bool transA = false, transB = false;
  float alpha = 1.0f, beta = 0.0f;
  GemmStep::Epilogue epilogue = GemmStep::Epilogue::None;
  DType biasType = DType::F32;
  bool sharedB = false; // batch > 1 with strideB = 0
  int64_t pad = 0;      // extra elements per row of every matrix
  int64_t dOffset = 0;  // D starts this many bytes into its buffer
};

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

  GemmStep g;
  g.abType = c.ab, g.cdType = c.cd;
  g.transA = c.transA, g.transB = c.transB;
  g.m = c.m, g.n = c.n, g.k = c.k, g.batch = c.batch;
  g.lda = (c.transA ? c.m : c.k) + c.pad;
  g.ldb = (c.transB ? c.k : c.n) + c.pad;
  g.ldc = g.ldd = c.n + c.pad;
  int64_t aRows = c.transA ? c.k : c.m, bRows = c.transB ? c.n : c.k;
  g.strideA = aRows * g.lda;
  g.strideB = c.sharedB ? 0 : bRows * g.ldb;
  g.strideC = g.strideD = c.m * g.ldd;
  g.alpha = c.alpha, g.beta = c.beta;
  g.epilogue = c.epilogue;
  g.biasType = c.biasType;

  int64_t aElems = (c.batch - 1) * g.strideA + aRows * g.lda;
  int64_t bElems = (c.sharedB ? 0 : (c.batch - 1) * g.strideB) + bRows * g.ldb;
  int64_t dElems = c.batch * g.strideD;
  std::vector<float> a = randomValues(aElems, c.ab, seed);
  std::vector<float> b = randomValues(bElems, c.ab, seed + 1);
  std::vector<float> cm = randomValues(dElems, c.cd, seed + 2);
  std::vector<float> bias = randomValues(c.n, c.biasType, seed + 3);

  Executable exe;
  exe.entry = "gemm_" + c.name;
  exe.inputs = {{"a", c.ab, {aElems}}, {"b", c.ab, {bElems}}};
  exe.outputs = {{"d", c.cd, {dElems}}};
  g.a = BufferRef::input(0);
  g.b = BufferRef::input(1);
  g.d = BufferRef::output(0);
  if (g.hasC()) {
    g.c = BufferRef::input(2);
    exe.inputs.push_back({"c", c.cd, {dElems}});
  }
  if (g.hasBias()) {
    g.bias = BufferRef::input((int64_t)exe.inputs.size());
    exe.inputs.push_back({"bias", c.biasType, {c.n}});
  }
  exe.gemms = {g};
  exe.steps = {{Step::Kind::Gemm, 0, "gemm: " + c.name, 0, 0}};

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
  }
}

std::vector<GemmCase> gemmCases() {
  using E = GemmStep::Epilogue;
  std::vector<GemmCase> cases;
  for (int t = 0; t < 4; ++t) {
    bool ta = t & 1, tb = t & 2;
    std::string suffix = std::string(ta ? "T" : "N") + (tb ? "T" : "N");
    GemmCase f32{"f32_odd_" + suffix};
    f32.m = 37, f32.n = 53, f32.k = 29, f32.transA = ta, f32.transB = tb;
    cases.push_back(f32);
    GemmCase mixed{"bf16_f32_" + suffix, DType::BF16, DType::F32};
    mixed.m = 64, mixed.n = 48, mixed.k = 40, mixed.transA = ta;
    mixed.transB = tb;
    cases.push_back(mixed);
    GemmCase bf16{"bf16_bf16_" + suffix, DType::BF16, DType::BF16};
    bf16.m = 32, bf16.n = 72, bf16.k = 56, bf16.transA = ta, bf16.transB = tb;
    cases.push_back(bf16);
  }
  GemmCase shared{"bf16_batch3_shared_weight", DType::BF16, DType::F32};
  shared.m = 16, shared.n = 24, shared.k = 32, shared.batch = 3;
  shared.sharedB = true, shared.transB = true;
  cases.push_back(shared);
  GemmCase sharedF32{"f32_batch4_shared_weight"};
  sharedF32.m = 9, sharedF32.n = 17, sharedF32.k = 13, sharedF32.batch = 4;
  sharedF32.sharedB = true;
  cases.push_back(sharedF32);
  GemmCase batched{"bf16_batch2", DType::BF16, DType::BF16};
  batched.m = 24, batched.n = 40, batched.k = 16, batched.batch = 2;
  batched.transA = true;
  cases.push_back(batched);
  GemmCase alpha{"f32_alpha"};
  alpha.m = 21, alpha.n = 19, alpha.k = 11, alpha.alpha = 0.375f;
  cases.push_back(alpha);
  GemmCase beta{"f32_beta_c"};
  beta.m = 20, beta.n = 36, beta.k = 12, beta.beta = 1.0f, beta.alpha = 2.0f;
  cases.push_back(beta);
  GemmCase betaBf16{"bf16_bf16_beta_c", DType::BF16, DType::BF16};
  betaBf16.m = 32, betaBf16.n = 64, betaBf16.k = 64, betaBf16.beta = 1.0f;
  cases.push_back(betaBf16);
  GemmCase bias{"f32_bias"};
  bias.m = 33, bias.n = 40, bias.k = 24, bias.epilogue = E::Bias;
  cases.push_back(bias);
  GemmCase geluBias{"bf16_bf16_gelu_bias", DType::BF16, DType::BF16};
  geluBias.m = 64, geluBias.n = 96, geluBias.k = 64, geluBias.transB = true;
  geluBias.epilogue = E::GeluBias, geluBias.biasType = DType::BF16;
  cases.push_back(geluBias);
  GemmCase reluBias{"bf16_f32_relu_bias", DType::BF16, DType::F32};
  reluBias.m = 48, reluBias.n = 64, reluBias.k = 32, reluBias.transB = true;
  reluBias.epilogue = E::ReluBias;
  cases.push_back(reluBias);
  GemmCase relu{"f32_relu"};
  relu.m = 16, relu.n = 16, relu.k = 16, relu.epilogue = E::Relu;
  cases.push_back(relu);
  GemmCase geluF32{"bf16_f32_gelu", DType::BF16, DType::F32};
  geluF32.m = 32, geluF32.n = 32, geluF32.k = 64, geluF32.epilogue = E::Gelu;
  cases.push_back(geluF32);
  GemmCase padded{"bf16_f32_padded_ld", DType::BF16, DType::F32};
  padded.m = 24, padded.n = 40, padded.k = 32, padded.pad = 8;
  padded.transA = true;
  cases.push_back(padded);
  // D at a 4-byte (not 256-byte) aligned address: the runtime must query
  // cuBLASLt again for an algorithm that accepts it.
  GemmCase unaligned{"f32_unaligned_d"};
  unaligned.m = 12, unaligned.n = 20, unaligned.k = 8, unaligned.dOffset = 4;
  cases.push_back(unaligned);
  return cases;
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
