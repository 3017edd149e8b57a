//===- TensorMapExecutable.h - An executable that loads by TMA -*- C++ -*-===//
//
// Two launches of a kernel that loads one 32 x 64 bf16 tile of a 100 x 64
// input into shared memory with a TMA bulk tensor copy (mbarrier completion),
// then writes the tile to its own rows of a 128 x 64 output: the last tile
// reaches past row 100, where TMA fills zeros. One launch's map has no
// swizzle, the other's the 128-byte swizzle, which the kernel undoes (16-byte
// chunk c of row r sits at chunk c ^ (r % 8) of each 1024-byte block).
//
// FuseRuntimeGpuTests runs it; FuseDeviceLibraryTests compiles it with NVRTC
// for sm_90a where there is no GPU.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_TEST_UNITTESTS_TENSORMAPEXECUTABLE_H
#define FUSE_TEST_UNITTESTS_TENSORMAPEXECUTABLE_H

#include "fuse/Codegen/DeviceLibrary.h"
#include "fuse/Runtime/Executable.h"

#include <string>

namespace fuse::runtime::testing {

constexpr int kTmaCols = 64;     // the contiguous dimension
constexpr int kTmaRows = 100;    // the input's rows
constexpr int kTmaBoxRows = 32;  // rows per tile
constexpr int kTmaTiles = 4;     // 128 rows: the last tile is 4 rows of input
constexpr int kTmaOutRows = kTmaTiles * kTmaBoxRows;

/// One kernel, `name`, un-swizzling the 128-byte swizzle when `swizzled`.
/// Self-contained (no device function shared between kernels): the executor
/// may compile the two kernels in different translation units.
inline std::string tmaTileCopyKernel(const std::string &name, bool swizzled) {
  return R"cu(extern "C" __global__ void __launch_bounds__(128) )cu" + name +
         R"cu((unsigned short *out, const __grid_constant__ fuse::TensorMap map) {
  constexpr bool kSwizzled = )cu" +
         (swizzled ? "true" : "false") + R"cu(;
  constexpr int kCols = 64, kRows = 32, kBytes = kCols * kRows * 2;
  // 1024-byte aligned: the 128-byte swizzle is a function of the address.
  __shared__ __align__(1024) unsigned char tile[kBytes];
  __shared__ __align__(8) unsigned long long barrier;
  const unsigned tileAddress = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  const unsigned barrierAddress =
      static_cast<unsigned>(__cvta_generic_to_shared(&barrier));
  const int row0 = blockIdx.x * kRows;
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(&map) : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(barrierAddress) : "memory");
    // The initialized barrier must be visible to the async proxy (TMA's
    // complete_tx) before the copy is issued.
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    // The box's full size counts, its zero-filled rows past the input too.
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 ::"r"(barrierAddress), "r"(kBytes) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];"
        ::"r"(tileAddress), "l"(&map), "r"(0), "r"(row0), "r"(barrierAddress)
        : "memory");
  }
  // Phase 0 completes once the arrival and all kBytes have landed.
  unsigned done = 0;
  do {
    asm volatile("{\n"
                 "  .reg .pred ready;\n"
                 "  mbarrier.try_wait.parity.shared::cta.b64 ready, [%1], %2;\n"
                 "  selp.u32 %0, 1, 0, ready;\n"
                 "}\n"
                 : "=r"(done) : "r"(barrierAddress), "r"(0) : "memory");
  } while (!done);
  const unsigned short *values = reinterpret_cast<const unsigned short *>(tile);
  for (int i = threadIdx.x; i < kRows * kCols; i += blockDim.x) {
    int r = i / kCols, c = i % kCols;
    // 16-byte chunks of 8 elements; a row is 128 bytes, 8 rows a 1024-byte
    // block.
    int chunk = kSwizzled ? (c / 8) ^ (r % 8) : c / 8;
    out[(row0 + r) * kCols + c] = values[r * kCols + chunk * 8 + c % 8];
  }
}
)cu";
}

/// A map of the whole input: dims {64, 100}, 128-byte rows, 64 x 32 boxes.
inline TensorMapArg tmaInputMap(TensorMapArg::Swizzle swizzle) {
  TensorMapArg map;
  map.base = BufferRef::input(0);
  map.dtype = DType::BF16;
  map.rank = 2;
  map.dims = {kTmaCols, kTmaRows, 1, 1, 1};
  map.strides = {kTmaCols * 2, 0, 0, 0};
  map.box = {kTmaCols, kTmaBoxRows, 1, 1, 1};
  map.swizzle = swizzle;
  return map;
}

/// x (100 x 64 bf16) -> plain, swizzled (128 x 64 bf16 each, rows past 100
/// zero). `arch` is the target ("sm_90a" on an H100).
inline Executable makeTensorMapExecutable(const std::string &arch) {
  Executable exe;
  exe.entry = "tma_tiles";
  exe.arch = arch;
  exe.inputs = {{"x", DType::BF16, {kTmaRows, kTmaCols}}};
  exe.outputs = {{"plain", DType::BF16, {kTmaOutRows, kTmaCols}},
                 {"swizzled", DType::BF16, {kTmaOutRows, kTmaCols}}};
  exe.helperSources = {
      {"tensor_map.cuh", codegen::deviceLibraryFile("tensor_map.cuh").text}};
  exe.kernels = {{"tma_copy_plain", tmaTileCopyKernel("tma_copy_plain", false),
                  {"tensor_map.cuh"}},
                 {"tma_copy_swizzled",
                  tmaTileCopyKernel("tma_copy_swizzled", true),
                  {"tensor_map.cuh"}}};
  KernelLaunch plain;
  plain.kernel = 0;
  plain.grid = {kTmaTiles, 1, 1};
  plain.block = {128, 1, 1};
  const int64_t outBytes = int64_t(kTmaOutRows) * kTmaCols * 2;
  plain.args = {KernelArg::write(BufferRef::output(0), DType::BF16, outBytes)};
  plain.tensorMaps = {tmaInputMap(TensorMapArg::Swizzle::None)};
  KernelLaunch swizzled = plain;
  swizzled.kernel = 1;
  swizzled.args = {KernelArg::write(BufferRef::output(1), DType::BF16, outBytes)};
  swizzled.tensorMaps = {tmaInputMap(TensorMapArg::Swizzle::B128)};
  exe.launches = {plain, swizzled};
  exe.steps = {{Step::Kind::Launch, 0, "tma: no swizzle", 0, 0},
               {Step::Kind::Launch, 1, "tma: 128B swizzle", 0, 0}};
  return exe;
}

} // namespace fuse::runtime::testing

#endif // FUSE_TEST_UNITTESTS_TENSORMAPEXECUTABLE_H
