//===- GemmExecutable.h - The GEMM executables of the GPU test -*- C++ -*-===//
//
// Each case of GemmGpuTest is one GemmStep in an executable of its own:
// inputs a, b (and c, bias where the case has them), output d. Built here,
// in plain C++, so that FuseRuntimeTests checks on a machine without a GPU
// that validateExecutable accepts every one of them (the executor refuses
// what it refuses before anything runs).
//
// Padded cases (pad > 0) store every matrix with `pad` extra elements a
// row: cuBLASLt writes the n elements of each row of D and never the
// padding, so a fill zeroes all of d first; every byte of an output is then
// written by some step, as validateExecutable requires, and the GPU test
// checks that the padding is still zero after the GEMM.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_TEST_UNITTESTS_GEMMEXECUTABLE_H
#define FUSE_TEST_UNITTESTS_GEMMEXECUTABLE_H

#include "fuse/Runtime/Executable.h"

#include <string>
#include <vector>

namespace fuse::runtime::testing {

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

/// The case's executable: inputs a, b, [c], [bias] (in that order, each a
/// 1-D tensor of exactly the elements its operand spans), output d of
/// batch * strideD elements; exe.gemms[0] is the step, with its layout.
inline Executable makeGemmExecutable(const GemmCase &c) {
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
  if (c.pad > 0) {
    exe.fills = {{BufferRef::output(0), exe.outputs[0].bytes()}};
    exe.steps.push_back({Step::Kind::Fill, 0, "zero: d's padding", 0, 0});
  }
  exe.steps.push_back({Step::Kind::Gemm, 0, "gemm: " + c.name, 0, 0});
  return exe;
}

inline std::vector<GemmCase> gemmCases() {
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

} // namespace fuse::runtime::testing

#endif // FUSE_TEST_UNITTESTS_GEMMEXECUTABLE_H
