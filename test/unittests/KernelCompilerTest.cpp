//===- KernelCompilerTest.cpp - NVRTC, ptxas's log, modules ---------------===//
//
// NVRTC needs no GPU: these run wherever the CUDA toolkit is installed.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/GraphGuard.h"
#include "fuse/Runtime/KernelCompiler.h"

#include "ModuleCompiler.h" // lib/Runtime, internal

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <regex>

#include <unistd.h>

using namespace fuse::runtime;
namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace {

fs::path freshDir(const std::string &what) {
  std::random_device random;
  return fs::temp_directory_path() /
         ("fuse-" + what + "-" + std::to_string(getpid()) + "-" +
          std::to_string(random()));
}

std::string fileText(const std::string &path) {
  std::ifstream stream(path);
  return {std::istreambuf_iterator<char>(stream), {}};
}

const char *kScale = R"(
extern "C" __global__ void scale(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
template <int N> __global__ void reverse(float *x) {
  __shared__ float s[N];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = s[N - 1 - threadIdx.x];
}
template __global__ void reverse<128>(float *);
)";

TEST(KernelCompiler, CompilesForSm90aAndReportsResources) {
  StatusOr<CompiledModule> module =
      compileWithNvrtc(kScale, "scale_test", NvrtcOptions{});
  ASSERT_TRUE(module.ok()) << module.status().message();
  ASSERT_GE(module->cubin.size(), 4u);
  EXPECT_EQ(std::string(module->cubin.data(), 4), "\x7f" "ELF");
  EXPECT_THAT(module->log, HasSubstr("sm_90a"));
  ASSERT_EQ(module->kernels.size(), 2u) << module->log;
  const KernelResources *scale = nullptr, *reverse = nullptr;
  for (const KernelResources &kernel : module->kernels)
    (kernel.name == "scale" ? scale : reverse) = &kernel;
  ASSERT_TRUE(scale && reverse) << module->log;
  EXPECT_EQ(scale->symbol, "scale");
  EXPECT_GT(scale->registers, 0);
  EXPECT_EQ(scale->spillStoreBytes, 0);
  EXPECT_EQ(scale->spillLoadBytes, 0);
  EXPECT_EQ(scale->staticSharedBytes, 0);
  // A C++ kernel: mangled symbol, readable name.
  EXPECT_EQ(reverse->name, "reverse<128>");
  EXPECT_EQ(reverse->symbol.rfind("_Z", 0), 0u) << reverse->symbol;
  EXPECT_EQ(reverse->staticSharedBytes, 512);
  EXPECT_GT(reverse->registers, 0);
}

// The conditional nodes' guard (GraphGuard.h) calls cudaGraphSetConditional,
// a device runtime builtin that NVRTC takes by its declaration: the kernel
// links into a cubin without relocatable code.
TEST(KernelCompiler, TheGraphGuardCompilesWithoutTheDeviceRuntimeLibrary) {
  Kernel guard = graphGuardKernel();
  StatusOr<CompiledModule> module = compileWithNvrtc(guard.body, "graph_guard", NvrtcOptions());
  ASSERT_TRUE(module.ok()) << module.status().message();
  ASSERT_EQ(module->kernels.size(), 1u) << module->log;
  EXPECT_EQ(module->kernels[0].symbol, kGraphGuardKernel);
  EXPECT_EQ(module->kernels[0].spillStoreBytes, 0);
  EXPECT_FALSE(module->cubin.empty());
}

TEST(KernelCompiler, SyntaxErrorSavesSourceAndLog) {
  fs::path dir = freshDir("nvrtc-failure");
  NvrtcOptions options;
  options.failureDir = dir.string();
  std::string source = "extern \"C\" __global__ void broken(float *x) {\n"
                       "  x[0] = undefined_name;\n}\n";
  StatusOr<CompiledModule> module =
      compileWithNvrtc(source, "broken_module", options);
  ASSERT_FALSE(module.ok());
  const std::string &message = module.status().message();
  EXPECT_EQ(message.rfind("NVRTC failed to compile broken_module: ", 0), 0u)
      << message;
  EXPECT_THAT(message, HasSubstr("error: identifier \"undefined_name\" is "
                                 "undefined"));
  std::string sourcePath = (dir / "broken_module.cu").string();
  std::string logPath = (dir / "broken_module.log").string();
  EXPECT_THAT(message, HasSubstr("\n  source: " + sourcePath + "\n  log: " +
                                 logPath));
  EXPECT_EQ(fileText(sourcePath), source);
  EXPECT_THAT(fileText(logPath), HasSubstr("undefined_name"));
  fs::remove_all(dir);
}

TEST(KernelCompiler, FailureWithoutDirectoryUsesAFreshTempDir) {
  StatusOr<CompiledModule> module =
      compileWithNvrtc("this is not C++", "nodir", NvrtcOptions{});
  ASSERT_FALSE(module.ok());
  std::smatch match;
  const std::string &message = module.status().message();
  ASSERT_TRUE(std::regex_search(message, match,
                                std::regex("source: (.*fuse-nvrtc-[^/]+)/"
                                           "nodir\\.cu")))
      << message;
  EXPECT_TRUE(fs::exists(match[1].str() + "/nodir.cu"));
  EXPECT_TRUE(fs::exists(match[1].str() + "/nodir.log"));
  fs::remove_all(match[1].str());
}

TEST(KernelCompiler, VersionAndOptions) {
  EXPECT_TRUE(std::regex_match(nvrtcVersion(), std::regex("[0-9]+\\.[0-9]+")))
      << nvrtcVersion();
  NvrtcOptions options;
  options.arch = "sm_80";
  std::vector<std::string> list = nvrtcCompileOptions(options);
  EXPECT_EQ(list.front(), "--gpu-architecture=sm_80");
  for (const char *option : {"-std=c++17", "--fmad=true", "-default-device",
                             "--ptxas-options=-v", "-lineinfo"})
    EXPECT_NE(std::find(list.begin(), list.end(), option), list.end())
        << option;
}

TEST(PtxasLog, ReadsNewAndOldFormats) {
  // NVRTC 13's layout, with a non-inlined device function in between, and an
  // older ptxas's "Used ..., N bytes smem, M bytes cmem[0]" line.
  std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Function properties for _Z6helperPf\n"
      "ptxas         .     48 bytes stack frame, 8 bytes spill stores, 8 "
      "bytes spill loads\n"
      "ptxas info    : Compiling entry function 'heavy' for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z6helperPf\n"
      "ptxas         .     48 bytes stack frame, 8 bytes spill stores, 8 "
      "bytes spill loads\n"
      "ptxas info    : Function properties for heavy\n"
      "ptxas         .     1232 bytes stack frame, 1420 bytes spill stores, "
      "3888 bytes spill loads\n"
      "ptxas info    : Used 64 registers, used 0 barriers, 1232 bytes "
      "cumulative stack size\n"
      "ptxas info    : Compile time = 190.934 ms\n"
      "ptxas info    : Compiling entry function '_Z3addPfS_' for 'sm_80'\n"
      "ptxas info    : Function properties for _Z3addPfS_\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes "
      "spill loads\n"
      "ptxas info    : Used 10 registers, 2048 bytes smem, 352 bytes cmem[0]\n";
  std::vector<KernelResources> kernels = parsePtxasResources(log);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name, "heavy");
  EXPECT_EQ(kernels[0].registers, 64);
  EXPECT_EQ(kernels[0].spillStoreBytes, 1420);
  EXPECT_EQ(kernels[0].spillLoadBytes, 3888);
  EXPECT_EQ(kernels[0].staticSharedBytes, 0);
  EXPECT_EQ(kernels[1].name, "add");
  EXPECT_EQ(kernels[1].symbol, "_Z3addPfS_");
  EXPECT_EQ(kernels[1].registers, 10);
  EXPECT_EQ(kernels[1].spillStoreBytes, 0);
  EXPECT_EQ(kernels[1].staticSharedBytes, 2048);
}

//===---------------------------- ModuleCompiler --------------------------===//

Executable kernelsExecutable(int count) {
  Executable exe;
  exe.entry = "modules";
  exe.helperSources = {{"twice.cuh",
                        "__device__ inline float twice(float v) { return 2 * v; }\n"}};
  for (int i = 0; i < count; ++i) {
    std::string name = "k" + std::to_string(i);
    exe.kernels.push_back(
        {name,
         "extern \"C\" __global__ void " + name +
             "(float *x) { x[threadIdx.x] = twice(x[threadIdx.x]) + " +
             std::to_string(i) + "; }\n",
         {"twice.cuh"}});
  }
  return exe;
}

TEST(ModuleCompiler, PartitionIsContiguousAndBounded) {
  using detail::partitionKernels;
  EXPECT_TRUE(partitionKernels(kernelsExecutable(0), 4).empty());
  for (int count : {1, 3, 8, 25}) {
    for (size_t maxModules : {size_t(1), size_t(2), size_t(4), size_t(30)}) {
      auto groups = partitionKernels(kernelsExecutable(count), maxModules);
      EXPECT_EQ(groups.size(), std::min<size_t>(count, maxModules));
      int64_t next = 0;
      for (const auto &group : groups) {
        ASSERT_FALSE(group.empty());
        for (int64_t index : group)
          EXPECT_EQ(index, next++);
      }
      EXPECT_EQ(next, count);
    }
  }
  // Equal kernels split evenly.
  auto groups = partitionKernels(kernelsExecutable(8), 4);
  for (const auto &group : groups)
    EXPECT_EQ(group.size(), 2u);
}

TEST(ModuleCompiler, CompilesInParallelThenHitsTheCache) {
  fs::path dir = freshDir("module-cache");
  Executable exe = kernelsExecutable(5);
  ExecutorOptions options;
  options.cacheDir = dir.string();
  options.compileThreads = 2; // at most 4 modules
  options.progress = false;

  CompileReport cold;
  auto first = detail::compileModules(exe, options, cold);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(cold.modules, 4);
  EXPECT_EQ(cold.compiled, 4);
  EXPECT_EQ(cold.cacheHits, 0);
  std::vector<int64_t> covered;
  for (const detail::ModuleBinary &module : *first) {
    EXPECT_FALSE(module.cubin.empty());
    EXPECT_EQ(module.source.find("#include"), std::string::npos);
    covered.insert(covered.end(), module.kernels.begin(), module.kernels.end());
  }
  EXPECT_EQ(covered, (std::vector<int64_t>{0, 1, 2, 3, 4}));

  CompileReport warm;
  auto second = detail::compileModules(exe, options, warm);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(warm.cacheHits, 4);
  EXPECT_EQ(warm.compiled, 0);
  for (size_t i = 0; i < first->size(); ++i)
    EXPECT_EQ((*second)[i].cubin, (*first)[i].cubin);

  options.useCache = false;
  CompileReport uncached;
  ASSERT_TRUE(detail::compileModules(exe, options, uncached).ok());
  EXPECT_EQ(uncached.compiled, 4);
  fs::remove_all(dir);
}

TEST(ModuleCompiler, ErrorNamesTheKernelsOfTheModule) {
  Executable exe = kernelsExecutable(2);
  exe.kernels[1].body = "extern \"C\" __global__ void k1(float *x) { oops; }";
  ExecutorOptions options;
  options.useCache = false;
  options.compileThreads = 1;
  options.progress = false;
  CompileReport report;
  auto modules = detail::compileModules(exe, options, report);
  ASSERT_FALSE(modules.ok());
  const std::string &message = modules.status().message();
  EXPECT_THAT(message, HasSubstr("NVRTC failed to compile modules_module1"));
  EXPECT_THAT(message, HasSubstr("\"oops\" is undefined"));
  EXPECT_THAT(message, HasSubstr("kernels in it: k1"));
  std::smatch match;
  if (std::regex_search(message, match, std::regex("source: (.*)/[^/]+\\.cu")))
    fs::remove_all(match[1].str());
}

} // namespace
