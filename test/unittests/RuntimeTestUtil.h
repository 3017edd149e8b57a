//===- RuntimeTestUtil.h - Executables for the runtime's tests --*- C++ -*-===//
//
// A hand-built executable that uses every field and every enum value, and a
// field-by-field comparison whose failures name the field.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_TEST_UNITTESTS_RUNTIMETESTUTIL_H
#define FUSE_TEST_UNITTESTS_RUNTIMETESTUTIL_H

#include "fuse/Runtime/Executable.h"

#include <gtest/gtest.h>

namespace fuse::runtime::testing {

/// Every field set to a value other than its default; every BufferRef kind,
/// step kind, epilogue, swizzle and dtype appears. Valid (validateExecutable
/// passes).
inline Executable makeRichExecutable() {
  Executable exe;
  exe.entry = "train_step";
  exe.arch = "sm_90a";
  exe.inputs = {{"x", DType::BF16, {4, 8}}, {"ids", DType::I64, {4}},
                {"mask", DType::I1, {4, 4}}};
  exe.outputs = {{"y", DType::F32, {4, 16}}, {"loss", DType::F32, {}}};
  // A value the caller leaves in the arena (a backward's saved input).
  exe.inputs[2].arenaOffset = 512;
  ConstantData table;
  table.spec = {"table", DType::F16, {3}};
  table.bytes = {1, 2, 3, 4, 5, 6};
  ConstantData scale;
  scale.spec = {"scale", DType::I32, {2}};
  scale.bytes = {7, 0, 0, 0, 255, 255, 255, 255};
  exe.constants = {table, scale};
  exe.arenaBytes = 8192;
  exe.workspaceBytes = 4096;
  exe.helperSources = {{"common.cuh", "// common\n"},
                       {"reductions.cuh", "// reductions\n"}};
  exe.kernels = {
      {"fuse_k0", "extern \"C\" __global__ void fuse_k0(float *a) {}\n",
       {"common.cuh"}},
      {"fuse_k1", "extern \"C\" __global__ void fuse_k1(float *a, float *b) {}",
       {"reductions.cuh", "common.cuh"}}};

  KernelLaunch launch;
  launch.kernel = 1;
  launch.grid = {96, 2, 1};
  launch.block = {256, 1, 1};
  launch.sharedBytes = 1024;
  launch.args = {KernelArg::read(BufferRef::input(0), DType::BF16, 64),
                 KernelArg::write(BufferRef::arena(4096), DType::F32, 1024),
                 KernelArg::write(BufferRef::output(1), DType::F32, 4),
                 KernelArg::read(BufferRef::workspace(128), DType::I32, 128),
                 KernelArg::read(BufferRef::constant(1), DType::I32, 8)};
  KernelLaunch launch0;
  launch0.kernel = 0;
  launch0.grid = {300, 1, 1};
  launch0.persistentBlocksPerMultiprocessor = 2;
  launch0.args = {KernelArg::write(BufferRef{BufferRef::Kind::Output, 0, 128},
                                  DType::F32, 128)};
  // Tensor maps of every rank class and swizzle, each just inside its buffer.
  TensorMapArg x; // input 0, 4x8 bf16: 64 bytes
  x.base = BufferRef::input(0);
  x.dtype = DType::BF16;
  x.rank = 2;
  x.dims = {8, 4, 1, 1, 1};
  x.strides = {16, 0, 0, 0};
  x.box = {8, 2, 1, 1, 1};
  TensorMapArg y; // output 0, 4x16 f32: 256 bytes
  y.base = BufferRef::output(0);
  y.dtype = DType::F32;
  y.rank = 2;
  y.dims = {16, 4, 1, 1, 1};
  y.strides = {64, 0, 0, 0};
  y.box = {8, 4, 1, 1, 1};
  y.swizzle = TensorMapArg::Swizzle::B32;
  TensorMapArg tile; // arena [1024, 2048); dims[3] is past the rank
  tile.base = BufferRef::arena(1024);
  tile.dtype = DType::F16;
  tile.rank = 3;
  tile.dims = {64, 4, 2, 7, 1};
  tile.strides = {128, 512, 0, 0};
  tile.box = {32, 4, 1, 1, 1};
  tile.swizzle = TensorMapArg::Swizzle::B64;
  TensorMapArg wide; // workspace [256, 2304)
  wide.base = BufferRef::workspace(256);
  wide.dtype = DType::I32;
  wide.rank = 5;
  wide.dims = {32, 2, 2, 2, 2};
  wide.strides = {128, 256, 512, 1024};
  wide.box = {32, 1, 2, 1, 2};
  wide.swizzle = TensorMapArg::Swizzle::B128;
  TensorMapArg narrow; // constant 0, 3xf16: a box wider than the tensor
  narrow.base = BufferRef::constant(0);
  narrow.dtype = DType::F16;
  narrow.rank = 1;
  narrow.dims = {3, 1, 1, 1, 1};
  narrow.box = {8, 1, 1, 1, 1};
  launch0.tensorMaps = {x, y, tile, wide, narrow};
  exe.launches = {launch0, launch};

  GemmStep gemm;
  gemm.abType = DType::BF16;
  gemm.cdType = DType::F32;
  gemm.transB = true;
  gemm.m = 4, gemm.n = 16, gemm.k = 8, gemm.batch = 1;
  gemm.lda = 8, gemm.ldb = 8, gemm.ldc = 16, gemm.ldd = 16;
  gemm.alpha = 0.5f, gemm.beta = 1.0f;
  gemm.epilogue = GemmStep::Epilogue::GeluBias;
  gemm.biasType = DType::BF16;
  gemm.a = BufferRef::input(0);
  gemm.b = BufferRef::arena(0);
  gemm.c = BufferRef::workspace(0);
  gemm.d = BufferRef::output(0);
  gemm.bias = BufferRef::arena(1024);
  GemmStep batched;
  batched.abType = DType::F16;
  batched.cdType = DType::F16;
  batched.transA = true;
  batched.m = 2, batched.n = 3, batched.k = 4, batched.batch = 3;
  batched.lda = 2, batched.ldb = 3, batched.ldd = 3;
  batched.strideA = 8, batched.strideB = 0, batched.strideD = 6;
  batched.epilogue = GemmStep::Epilogue::Relu;
  batched.a = BufferRef::arena(2048);
  batched.b = BufferRef::arena(3072);
  batched.d = BufferRef::arena(5120);
  exe.gemms = {gemm, batched};
  for (auto epilogue :
       {GemmStep::Epilogue::None, GemmStep::Epilogue::Bias,
        GemmStep::Epilogue::ReluBias, GemmStep::Epilogue::Gelu}) {
    GemmStep g = batched;
    g.epilogue = epilogue;
    g.bias = BufferRef::arena(7000);
    exe.gemms.push_back(g);
  }

  exe.fills = {{BufferRef::arena(0), 4096}};
  exe.copies = {{BufferRef::input(1), BufferRef{BufferRef::Kind::Workspace, 0,
                                                 64},
                 32}};
  exe.steps = {
      {Step::Kind::Fill, 0, "zero: grad", 0, 4096},
      {Step::Kind::Launch, 1, "loop: add, mul (model.py:34)", 1.5e6, 2.5e5},
      {Step::Kind::Gemm, 0, "gemm: linear (model.py:40)", 1024, 512},
      {Step::Kind::Copy, 0, "", 0, 64},
      {Step::Kind::Launch, 0, "loop: neg", 0.25, 0.125}};
  for (size_t i = 1; i < exe.gemms.size(); ++i)
    exe.steps.push_back({Step::Kind::Gemm, (int64_t)i, "batched", 1, 1});
  return exe;
}

inline void expectRefEq(const BufferRef &a, const BufferRef &b,
                        const std::string &where) {
  EXPECT_EQ((int)a.kind, (int)b.kind) << where;
  EXPECT_EQ(a.index, b.index) << where;
  EXPECT_EQ(a.offset, b.offset) << where;
}

inline void expectTensorMapEq(const TensorMapArg &a, const TensorMapArg &b,
                              const std::string &w) {
  expectRefEq(a.base, b.base, w + ".base");
  EXPECT_EQ(a.dtype, b.dtype) << w;
  EXPECT_EQ(a.rank, b.rank) << w;
  EXPECT_EQ(a.dims, b.dims) << w;
  EXPECT_EQ(a.strides, b.strides) << w;
  EXPECT_EQ(a.box, b.box) << w;
  EXPECT_EQ(a.swizzle, b.swizzle) << w;
}

inline void expectSpecEq(const TensorSpec &a, const TensorSpec &b,
                         const std::string &where) {
  EXPECT_EQ(a.name, b.name) << where;
  EXPECT_EQ(a.dtype, b.dtype) << where;
  EXPECT_EQ(a.shape, b.shape) << where;
  EXPECT_EQ(a.arenaOffset, b.arenaOffset) << where;
}

inline void expectGemmEq(const GemmStep &a, const GemmStep &b,
                         const std::string &w) {
  EXPECT_EQ(a.abType, b.abType) << w;
  EXPECT_EQ(a.cdType, b.cdType) << w;
  EXPECT_EQ(a.transA, b.transA) << w;
  EXPECT_EQ(a.transB, b.transB) << w;
  EXPECT_EQ(std::vector<int64_t>({a.m, a.n, a.k, a.batch, a.lda, a.ldb, a.ldc,
                                  a.ldd, a.strideA, a.strideB, a.strideC,
                                  a.strideD}),
            std::vector<int64_t>({b.m, b.n, b.k, b.batch, b.lda, b.ldb, b.ldc,
                                  b.ldd, b.strideA, b.strideB, b.strideC,
                                  b.strideD}))
      << w;
  EXPECT_EQ(a.alpha, b.alpha) << w;
  EXPECT_EQ(a.beta, b.beta) << w;
  EXPECT_EQ(a.epilogue, b.epilogue) << w;
  EXPECT_EQ(a.biasType, b.biasType) << w;
  expectRefEq(a.a, b.a, w + ".a");
  expectRefEq(a.b, b.b, w + ".b");
  expectRefEq(a.c, b.c, w + ".c");
  expectRefEq(a.d, b.d, w + ".d");
  expectRefEq(a.bias, b.bias, w + ".bias");
}

inline void expectExecutablesEqual(const Executable &a, const Executable &b) {
  EXPECT_EQ(a.entry, b.entry);
  EXPECT_EQ(a.arch, b.arch);
  ASSERT_EQ(a.inputs.size(), b.inputs.size());
  for (size_t i = 0; i < a.inputs.size(); ++i)
    expectSpecEq(a.inputs[i], b.inputs[i], "input " + std::to_string(i));
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (size_t i = 0; i < a.outputs.size(); ++i)
    expectSpecEq(a.outputs[i], b.outputs[i], "output " + std::to_string(i));
  ASSERT_EQ(a.constants.size(), b.constants.size());
  for (size_t i = 0; i < a.constants.size(); ++i) {
    expectSpecEq(a.constants[i].spec, b.constants[i].spec, "constant");
    EXPECT_EQ(a.constants[i].bytes, b.constants[i].bytes) << "constant " << i;
  }
  EXPECT_EQ(a.arenaBytes, b.arenaBytes);
  EXPECT_EQ(a.workspaceBytes, b.workspaceBytes);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    EXPECT_EQ(a.kernels[i].name, b.kernels[i].name);
    EXPECT_EQ(a.kernels[i].body, b.kernels[i].body);
    EXPECT_EQ(a.kernels[i].helpers, b.kernels[i].helpers);
  }
  ASSERT_EQ(a.launches.size(), b.launches.size());
  for (size_t i = 0; i < a.launches.size(); ++i) {
    const KernelLaunch &x = a.launches[i], &y = b.launches[i];
    std::string w = "launch " + std::to_string(i);
    EXPECT_EQ(x.kernel, y.kernel) << w;
    EXPECT_EQ(x.grid, y.grid) << w;
    EXPECT_EQ(x.block, y.block) << w;
    EXPECT_EQ(x.sharedBytes, y.sharedBytes) << w;
    EXPECT_EQ(x.persistentBlocksPerMultiprocessor, y.persistentBlocksPerMultiprocessor) << w;
    ASSERT_EQ(x.changesOnlyWhen.size(), y.changesOnlyWhen.size()) << w;
    for (size_t j = 0; j < x.changesOnlyWhen.size(); ++j)
      EXPECT_TRUE(x.changesOnlyWhen[j] == y.changesOnlyWhen[j]) << w << " guard term " << j;
    ASSERT_EQ(x.args.size(), y.args.size()) << w;
    for (size_t j = 0; j < x.args.size(); ++j) {
      std::string arg = w + " arg " + std::to_string(j);
      expectRefEq(x.args[j].ref, y.args[j].ref, arg);
      EXPECT_EQ(x.args[j].dtype, y.args[j].dtype) << arg;
      EXPECT_EQ(x.args[j].bytes, y.args[j].bytes) << arg;
      EXPECT_EQ(x.args[j].written, y.args[j].written) << arg;
    }
    ASSERT_EQ(x.tensorMaps.size(), y.tensorMaps.size()) << w;
    for (size_t j = 0; j < x.tensorMaps.size(); ++j)
      expectTensorMapEq(x.tensorMaps[j], y.tensorMaps[j],
                        w + " tensor map " + std::to_string(j));
  }
  ASSERT_EQ(a.gemms.size(), b.gemms.size());
  for (size_t i = 0; i < a.gemms.size(); ++i)
    expectGemmEq(a.gemms[i], b.gemms[i], "gemm " + std::to_string(i));
  ASSERT_EQ(a.fills.size(), b.fills.size());
  for (size_t i = 0; i < a.fills.size(); ++i) {
    expectRefEq(a.fills[i].dst, b.fills[i].dst, "fill");
    EXPECT_EQ(a.fills[i].bytes, b.fills[i].bytes);
  }
  ASSERT_EQ(a.copies.size(), b.copies.size());
  for (size_t i = 0; i < a.copies.size(); ++i) {
    expectRefEq(a.copies[i].src, b.copies[i].src, "copy src");
    expectRefEq(a.copies[i].dst, b.copies[i].dst, "copy dst");
    EXPECT_EQ(a.copies[i].bytes, b.copies[i].bytes);
  }
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    std::string w = "step " + std::to_string(i);
    EXPECT_EQ(a.steps[i].kind, b.steps[i].kind) << w;
    EXPECT_EQ(a.steps[i].index, b.steps[i].index) << w;
    EXPECT_EQ(a.steps[i].label, b.steps[i].label) << w;
    EXPECT_EQ(a.steps[i].flops, b.steps[i].flops) << w;
    EXPECT_EQ(a.steps[i].bytes, b.steps[i].bytes) << w;
  }
  EXPECT_EQ(a.helperSources, b.helperSources);
}

} // namespace fuse::runtime::testing

#endif // FUSE_TEST_UNITTESTS_RUNTIMETESTUTIL_H
