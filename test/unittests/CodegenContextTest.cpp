//===- CodegenContextTest.cpp - Kernel parameters and launches ------------===//
//
// The parameter order a kernel's signature declares must be the order the
// runtime passes: the pointers of KernelLaunch::args, then its tensor maps.
// Kernels are shared by body; maps, like args, stay with each launch.
//
//===----------------------------------------------------------------------===//

#include "CodegenContext.h"

#include <gtest/gtest.h>

using namespace fuse;
using namespace fuse::codegen;
using fuse::runtime::BufferRef;
using fuse::runtime::TensorMapArg;

namespace {

TensorMapArg mapOf(BufferRef base, TensorMapArg::Swizzle swizzle) {
  TensorMapArg map;
  map.base = base;
  map.rank = 2;
  map.dims = {64, 128, 1, 1, 1};
  map.strides = {128, 0, 0, 0};
  map.box = {64, 64, 1, 1, 1};
  map.swizzle = swizzle;
  return map;
}

TEST(KernelParams, PointersThenTensorMaps) {
  KernelParams params;
  TensorMapArg q = mapOf(BufferRef::input(0), TensorMapArg::Swizzle::B128);
  TensorMapArg k = mapOf(BufferRef::input(1), TensorMapArg::Swizzle::None);
  EXPECT_EQ(params.add("in", DType::BF16, true, BufferRef::input(2)), "in0");
  EXPECT_EQ(params.addTensorMap("q_map", q), "q_map0");
  EXPECT_EQ(params.add("out", DType::F32, false, BufferRef::output(0)), "out1");
  EXPECT_EQ(params.addTensorMap("k_map", k), "k_map1");
  EXPECT_EQ(params.args.size(), 2u);
  ASSERT_EQ(params.tensorMaps.size(), 2u);
  EXPECT_EQ(params.tensorMaps[0], q);
  EXPECT_EQ(params.tensorMaps[1], k);
  // Pointer declarations stay index for index with args.
  params.markAliased(0, DType::BF16);
  EXPECT_EQ(kernelSignature(params, 128),
            "extern \"C\" __global__ void __launch_bounds__(128) @KERNEL@("
            "const fuse::bf16 *in0, float * out1, "
            "const __grid_constant__ fuse::TensorMap q_map0, "
            "const __grid_constant__ fuse::TensorMap k_map1) {\n");
}

TEST(KernelParams, LaunchBoundsWithMinimumBlocks) {
  KernelParams params;
  params.add("in", DType::F32, true, BufferRef::input(0));
  EXPECT_EQ(kernelSignature(params, 256, 2),
            "extern \"C\" __global__ void __launch_bounds__(256, 2) @KERNEL@("
            "const float * __restrict__ in0) {\n");
  EXPECT_EQ(kernelSignature(params, 256, 0),
            "extern \"C\" __global__ void __launch_bounds__(256) @KERNEL@("
            "const float * __restrict__ in0) {\n");
  // Only maps.
  KernelParams maps;
  maps.addTensorMap("m",
                    mapOf(BufferRef::arena(0), TensorMapArg::Swizzle::B64));
  EXPECT_EQ(kernelSignature(maps, 128),
            "extern \"C\" __global__ void __launch_bounds__(128) @KERNEL@("
            "const __grid_constant__ fuse::TensorMap m0) {\n");
}

TEST(CodegenContext, LaunchesShareAKernelButKeepTheirMaps) {
  CodegenContext context;
  auto specFor = [](BufferRef in, BufferRef out) {
    KernelParams params;
    params.add("out", DType::BF16, false, out);
    params.addTensorMap("tile", mapOf(in, TensorMapArg::Swizzle::B128));
    KernelSpec spec;
    spec.kind = "tma";
    spec.body = kernelSignature(params, 128) + "}\n";
    spec.helpers = {"common.cuh"};
    spec.args = params.args;
    spec.tensorMaps = params.tensorMaps;
    return spec;
  };
  KernelSpec first = specFor(BufferRef::input(0), BufferRef::output(0));
  KernelSpec second = specFor(BufferRef::input(1), BufferRef::output(1));
  ASSERT_EQ(first.body, second.body);
  context.addLaunch(first, "first", "tma copy", 0, 0);
  context.addLaunch(second, "second", "tma copy", 0, 0);
  const runtime::Executable &exe = context.executable();
  ASSERT_EQ(exe.kernels.size(), 1u);
  EXPECT_EQ(exe.kernels[0].helpers,
            (std::vector<std::string>{"common.cuh", "tensor_map.cuh"}));
  ASSERT_EQ(exe.launches.size(), 2u);
  EXPECT_EQ(exe.launches[0].kernel, 0);
  EXPECT_EQ(exe.launches[1].kernel, 0);
  ASSERT_EQ(exe.launches[0].tensorMaps.size(), 1u);
  ASSERT_EQ(exe.launches[1].tensorMaps.size(), 1u);
  EXPECT_EQ(exe.launches[0].tensorMaps[0].base, BufferRef::input(0));
  EXPECT_EQ(exe.launches[1].tensorMaps[0].base, BufferRef::input(1));
  EXPECT_EQ(exe.launches[1].args[0].ref, BufferRef::output(1));
  // A pointer declared non-const is written.
  EXPECT_TRUE(exe.launches[1].args[0].written);
  EXPECT_EQ(exe.launches[1].args[0].dtype, DType::BF16);

  // A kernel without maps gets no extra helper.
  KernelSpec plain;
  plain.kind = "loop";
  plain.body = "extern \"C\" __global__ void @KERNEL@() {}\n";
  plain.helpers = {"common.cuh"};
  context.addLaunch(plain, "plain", "loop", 0, 0);
  EXPECT_EQ(context.executable().kernels[1].helpers,
            std::vector<std::string>{"common.cuh"});
  EXPECT_TRUE(context.executable().launches[2].tensorMaps.empty());
}

} // namespace
