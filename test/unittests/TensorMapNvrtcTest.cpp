//===- TensorMapNvrtcTest.cpp - The TMA test kernels under NVRTC, no GPU --===//
//
// The executable FuseRuntimeGpuTests runs with TMA tensor maps is valid, and
// its translation unit (kernels/tensor_map.cuh and kernels that take maps as
// `const __grid_constant__` parameters, cp.async.bulk.tensor, mbarrier)
// compiles for sm_90a as the executor would compile it.
//
//===----------------------------------------------------------------------===//

#include "TensorMapExecutable.h"

#include "fuse/Runtime/KernelCompiler.h"
#include "fuse/Runtime/TranslationUnit.h"

#include <gtest/gtest.h>

using namespace fuse::runtime;
using namespace fuse::runtime::testing;

namespace {

TEST(TensorMapNvrtc, TmaTileCopyCompilesForSm90a) {
  Executable exe = makeTensorMapExecutable("sm_90a");
  Status valid = validateExecutable(exe, "tma executable");
  ASSERT_TRUE(valid.ok()) << valid.message();
  StatusOr<CompiledModule> module =
      compileWithNvrtc(translationUnit(exe), "tma_tiles", NvrtcOptions{});
  ASSERT_TRUE(module.ok()) << module.status().message();
  ASSERT_EQ(module->kernels.size(), 2u) << module->log;
  for (const KernelResources &kernel : module->kernels) {
    EXPECT_TRUE(kernel.name == "tma_copy_plain" ||
                kernel.name == "tma_copy_swizzled")
        << kernel.name;
    EXPECT_EQ(kernel.spillStoreBytes + kernel.spillLoadBytes, 0) << kernel.name;
    // The tile (4 KiB) and the barrier (8 bytes), at 1024-byte alignment.
    EXPECT_GE(kernel.staticSharedBytes, 4096 + 8) << kernel.name;
  }
}

} // namespace
