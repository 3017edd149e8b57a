//===- ExecutorTestExecutables.h - Executor tests' executables -*- C++ -*-===//
//
// The hand-built executables of ExecutorGpuTest and ProfilerGpuTest (no
// compiler involved), in plain C++ so that FuseRuntimeTests checks on a
// machine without a GPU that validateExecutable accepts each of them: the
// executor refuses what it refuses before anything runs.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_TEST_UNITTESTS_EXECUTORTESTEXECUTABLES_H
#define FUSE_TEST_UNITTESTS_EXECUTORTESTEXECUTABLES_H

#include "KernelArgs.h"

#include "fuse/Runtime/Executable.h"

#include <string>
#include <utility>
#include <vector>

namespace fuse::runtime::testing {

//===--------------------------- ExecutorGpuTest --------------------------===//

constexpr int kStepElements = 1000;
constexpr int64_t kStepBytes = kStepElements * 4;

/// x (1000 f32) -> y = 2x (a kernel with a helper), z = x + 1 (a kernel into
/// the arena, copied out), w = 0 (a fill), v (a kernel with 64 KiB of
/// dynamic shared memory).
inline Executable makeStepExecutable() {
  constexpr int kN = kStepElements;
  constexpr int64_t kBytes = kStepBytes;
  Executable exe;
  exe.entry = "gpu_step";
  exe.arch = "sm_90a";
  exe.inputs = {{"x", DType::F32, {kN}}};
  exe.outputs = {{"y", DType::F32, {kN}},
                 {"z", DType::F32, {kN}},
                 {"w", DType::F32, {kN}},
                 {"v", DType::F32, {kN}}};
  exe.arenaBytes = 8192;
  exe.helperSources = {
      {"twice_test.cuh",
       "__device__ inline float fuse_twice(float v) { return 2.0f * v; }\n"}};
  exe.kernels = {
      {"scale2",
       "extern \"C\" __global__ void scale2(const float *x, float *y) {\n"
       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  if (i < 1000) y[i] = fuse_twice(x[i]);\n}\n",
       {"twice_test.cuh"}},
      {"plus1",
       "extern \"C\" __global__ void plus1(const float *x, float *t) {\n"
       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  if (i < 1000) t[i] = x[i] + 1.0f;\n}\n",
       {}},
      // 16 floats per thread of 1024: 64 KiB, above the 48 KiB default; each
      // thread reads what its neighbour wrote.
      {"bigsmem",
       "extern \"C\" __global__ void bigsmem(const float *x, float *v) {\n"
       "  extern __shared__ float s[];\n"
       "  int t = threadIdx.x;\n"
       "  float value = t < 1000 ? x[t] : 0.0f;\n"
       "  for (int j = 0; j < 16; ++j) s[t + 1024 * j] = value * j;\n"
       "  __syncthreads();\n"
       "  if (t < 1000) v[t] = s[(t + 1) % 1000 + 1024 * 15];\n"
       "}\n",
       {}}};
  KernelLaunch scale{0, {(kN + 255) / 256, 1, 1}, {256, 1, 1}, 0,
                     argsOf(exe, {BufferRef::input(0), BufferRef::output(0)})};
  KernelLaunch plus{1, {(kN + 127) / 128, 1, 1}, {128, 1, 1}, 0,
                    argsOf(exe, {BufferRef::input(0), BufferRef::arena(256)})};
  plus.args[1].written = true;
  KernelLaunch big{2, {1, 1, 1}, {1024, 1, 1}, 65536,
                   argsOf(exe, {BufferRef::input(0), BufferRef::output(3)})};
  exe.launches = {scale, plus, big};
  exe.copies = {{BufferRef::arena(256), BufferRef::output(1), kBytes}};
  exe.fills = {{BufferRef::output(2), kBytes}};
  exe.steps = {{Step::Kind::Launch, 0, "loop: mul", 0, 0},
               {Step::Kind::Launch, 1, "loop: add", 0, 0},
               {Step::Kind::Copy, 0, "copy: t", 0, 0},
               {Step::Kind::Fill, 0, "zero: w", 0, 0},
               {Step::Kind::Launch, 2, "smem", 0, 0}};
  return exe;
}

/// Where the arena-value executables keep `saved` in their arena.
constexpr int64_t kSavedArenaOffset = 256;

/// A forward and its backward through the arena (fuse.arena_offset):
/// forward x -> y = 2x, and saved = x + 1 left in the arena; backward
/// (saved found in the arena) -> z = saved + 1 = x + 2.
inline std::pair<Executable, Executable> makeArenaValueExecutables() {
  constexpr int kN = kStepElements;
  auto kernels = [] {
    return std::vector<Kernel>{
        {"scale2",
         "extern \"C\" __global__ void scale2(const float *x, float *y) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < 1000) y[i] = 2.0f * x[i];\n}\n",
         {}},
        {"plus1",
         "extern \"C\" __global__ void plus1(const float *x, float *t) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < 1000) t[i] = x[i] + 1.0f;\n}\n",
         {}}};
  };
  Executable forward;
  forward.entry = "saves";
  forward.arch = "sm_90a";
  forward.inputs = {{"x", DType::F32, {kN}}};
  forward.outputs = {{"y", DType::F32, {kN}}, {"saved", DType::F32, {kN}}};
  forward.outputs[1].arenaOffset = kSavedArenaOffset;
  forward.arenaBytes = 8192;
  forward.kernels = kernels();
  KernelLaunch scale{0, {(kN + 255) / 256, 1, 1}, {256, 1, 1}, 0,
                     argsOf(forward, {BufferRef::input(0), BufferRef::output(0)})};
  KernelLaunch save{1, {(kN + 255) / 256, 1, 1}, {256, 1, 1}, 0,
                    argsOf(forward, {BufferRef::input(0),
                                     BufferRef::arena(kSavedArenaOffset)})};
  save.args[1].written = true;
  forward.launches = {scale, save};
  forward.steps = {{Step::Kind::Launch, 0, "loop: mul", 0, 0},
                   {Step::Kind::Launch, 1, "loop: add", 0, 0}};

  Executable backward;
  backward.entry = "reads_saved";
  backward.arch = "sm_90a";
  backward.inputs = {{"saved", DType::F32, {kN}}};
  backward.inputs[0].arenaOffset = kSavedArenaOffset;
  backward.outputs = {{"z", DType::F32, {kN}}};
  backward.arenaBytes = 8192;
  backward.kernels = kernels();
  KernelLaunch use{1, {(kN + 255) / 256, 1, 1}, {256, 1, 1}, 0,
                   argsOf(backward, {BufferRef::arena(kSavedArenaOffset),
                                     BufferRef::output(0)})};
  backward.launches = {use};
  backward.steps = {{Step::Kind::Launch, 0, "loop: add", 0, 0}};
  return {forward, backward};
}

/// x, flag (i32) -> y = 2x, saw_flag: the second kernel spins until `flag`
/// is raised (by another stream, after the signal that follows y's step)
/// and records whether it saw it. `arch` is the device's.
inline Executable makeSignalExecutable(const std::string &arch) {
  constexpr int kN = kStepElements;
  Executable exe;
  exe.entry = "signal_step";
  exe.arch = arch;
  exe.inputs = {{"x", DType::F32, {kN}}, {"flag", DType::I32, {1}}};
  exe.outputs = {{"y", DType::F32, {kN}}, {"saw_flag", DType::F32, {1}}};
  exe.kernels = {
      {"scale2",
       "extern \"C\" __global__ void scale2(const float *x, float *y) {\n"
       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  if (i < 1000) y[i] = 2.0f * x[i];\n}\n",
       {}},
      {"wait_flag",
       "extern \"C\" __global__ void wait_flag(const int *flag, float *saw) {\n"
       "  long long start = clock64();\n"
       "  volatile const int *f = flag;\n"
       "  while (*f == 0 && clock64() - start < 2000000000LL) {}\n"
       "  saw[0] = *f != 0 ? 1.0f : 0.0f;\n}\n",
       {}}};
  exe.launches = {
      {0, {(kN + 255) / 256, 1, 1}, {256, 1, 1}, 0,
       argsOf(exe, {BufferRef::input(0), BufferRef::output(0)})},
      {1, {1, 1, 1}, {1, 1, 1}, 0,
       argsOf(exe, {BufferRef::input(1), BufferRef::output(1)})}};
  exe.steps = {{Step::Kind::Launch, 0, "loop: mul", 0, 0},
               {Step::Kind::Launch, 1, "spin", 0, 0}};
  return exe;
}

//===--------------------------- ProfilerGpuTest --------------------------===//

constexpr int64_t kProfiledCopyBytes = int64_t(1) << 30;
// 16 MiB for the one-block kernel.
constexpr int64_t kProfiledSmallFloats = 4 << 20;
constexpr int64_t kProfiledGemm = 1024;

/// A full-grid float4 copy of 1 GiB, a kernel of one block, a GEMM and a
/// fill; `multiprocessors` sizes the copy's grid.
inline Executable makeProfiledExecutable(int multiprocessors) {
  constexpr int64_t kCopyBytes = kProfiledCopyBytes;
  constexpr int64_t kSmallFloats = kProfiledSmallFloats;
  constexpr int64_t kGemm = kProfiledGemm;
  Executable exe;
  exe.entry = "profiled";
  exe.arch = "sm_90a";
  exe.inputs = {{"x", DType::F32, {kCopyBytes / 4}},
                {"a", DType::BF16, {kGemm, kGemm}}};
  exe.outputs = {{"y", DType::F32, {kCopyBytes / 4}},
                 {"z", DType::F32, {kSmallFloats}},
                 {"d", DType::F32, {kGemm, kGemm}},
                 {"w", DType::F32, {1024}}};
  exe.kernels = {
      {"fuse_copy_0",
       "extern \"C\" __global__ void fuse_copy_0(const float4 *x, float4 *y) {\n"
       "  size_t n = " + std::to_string(kCopyBytes / 16) + "ull;\n"
       "  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;\n"
       "       i += (size_t)gridDim.x * blockDim.x) y[i] = x[i];\n}\n",
       {}},
      {"fuse_oneblock_1",
       "extern \"C\" __global__ void fuse_oneblock_1(const float *x, float *z) {\n"
       "  for (int i = threadIdx.x; i < " + std::to_string(kSmallFloats) +
           "; i += blockDim.x) z[i] = x[i] * 2.0f + 1.0f;\n}\n",
       {}}};
  // Eight 256-thread blocks per SM: a full grid that keeps every SM busy for
  // the whole copy, so its SM efficiency reads high (checked below).
  KernelLaunch copy{0, {uint32_t(8 * multiprocessors), 1, 1}, {256, 1, 1}, 0,
                    argsOf(exe, {BufferRef::input(0), BufferRef::output(0)})};
  KernelLaunch one{1, {1, 1, 1}, {1024, 1, 1}, 0,
                   argsOf(exe, {BufferRef::input(0), BufferRef::output(1)})};
  exe.launches = {copy, one};
  GemmStep gemm;
  gemm.abType = DType::BF16;
  gemm.cdType = DType::F32;
  gemm.m = gemm.n = gemm.k = kGemm;
  gemm.lda = gemm.ldb = gemm.ldc = gemm.ldd = kGemm;
  gemm.a = gemm.b = BufferRef::input(1);
  gemm.d = BufferRef::output(2);
  exe.gemms = {gemm};
  exe.fills = {{BufferRef::output(3), 4096}};
  exe.steps = {
      {Step::Kind::Launch, 0, "loop: copy (test:1)", 0, double(2 * kCopyBytes)},
      {Step::Kind::Launch, 1, "loop: one block (test:2)", 2.0 * kSmallFloats,
       8.0 * kSmallFloats},
      {Step::Kind::Gemm, 0, "gemm: matmul (test:3)", 2.0 * kGemm * kGemm * kGemm,
       kGemm * kGemm * 8.0},
      {Step::Kind::Fill, 0, "zero: w", 0, 4096}};
  return exe;
}

} // namespace fuse::runtime::testing

#endif // FUSE_TEST_UNITTESTS_EXECUTORTESTEXECUTABLES_H
