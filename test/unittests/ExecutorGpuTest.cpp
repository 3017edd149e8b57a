//===- ExecutorGpuTest.cpp - Launches, fills, copies, graphs on a GPU -----===//
//
// Hand-built executables (no compiler involved) run through Executor: NVRTC
// kernels with a helper, an arena temporary, a copy, a fill, a kernel with
// 64 KiB of dynamic shared memory; CUDA Graph on and off; new output pointers;
// the errors a caller can cause. Skipped, with the reason, without a GPU.
//
//===----------------------------------------------------------------------===//

#include "ExecutorTestExecutables.h"
#include "GpuTestUtil.h"

#include "fuse/Runtime/Executor.h"
#include "fuse/Runtime/KernelCache.h"
#include "fuse/Runtime/ScratchMemory.h"

#include "ModuleCompiler.h" // lib/Runtime, internal

#include <cuda_runtime_api.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace fuse;
using namespace fuse::runtime;
using namespace fuse::runtime::testing;
using ::testing::HasSubstr;

namespace {

constexpr int kN = kStepElements;
constexpr int64_t kBytes = kStepBytes;

/// Device memory for one binding of makeStepExecutable.
struct Binding {
  DeviceBuffer x;
  std::vector<DeviceBuffer> outputs;
  std::vector<float> host;

  explicit Binding(uint32_t seed) : host(randomValues(kN, DType::F32, seed)) {
    x = uploadValues(host, DType::F32);
    for (int i = 0; i < 4; ++i) {
      StatusOr<DeviceBuffer> out = DeviceBuffer::allocate(kBytes, "output");
      EXPECT_TRUE(out.ok()) << out.status().message();
      outputs.push_back(std::move(*out));
    }
  }
  std::vector<void *> inputPointers() const { return {x.data()}; }
  std::vector<void *> outputPointers() const {
    std::vector<void *> pointers;
    for (const DeviceBuffer &buffer : outputs)
      pointers.push_back(buffer.data());
    return pointers;
  }
  /// NaN in every output, so an element nobody wrote is caught.
  void poison() {
    for (DeviceBuffer &buffer : outputs)
      EXPECT_TRUE(buffer.fill(0xFF).ok());
  }
  void expectResults() const {
    std::vector<float> y = downloadValues(outputs[0], kN, DType::F32);
    std::vector<float> z = downloadValues(outputs[1], kN, DType::F32);
    std::vector<float> w = downloadValues(outputs[2], kN, DType::F32);
    std::vector<float> v = downloadValues(outputs[3], kN, DType::F32);
    for (int i = 0; i < kN; ++i) {
      ASSERT_EQ(y[i], 2.0f * host[i]) << "y[" << i << "]";
      ASSERT_EQ(z[i], host[i] + 1.0f) << "z[" << i << "]";
      ASSERT_EQ(w[i], 0.0f) << "w[" << i << "]";
      ASSERT_EQ(v[i], host[(i + 1) % kN] * 15.0f) << "v[" << i << "]";
    }
  }
  void expectPoisoned() const {
    for (const DeviceBuffer &buffer : outputs)
      for (float value : downloadValues(buffer, kN, DType::F32))
        ASSERT_TRUE(std::isnan(value)) << "an old output was written";
  }
};

std::unique_ptr<Executor> makeExecutor(const Executable &exe,
                                       const ExecutorOptions &options) {
  StatusOr<std::unique_ptr<Executor>> executor = Executor::create(exe, options);
  EXPECT_TRUE(executor.ok()) << executor.status().message();
  return executor.ok() ? std::move(*executor) : nullptr;
}

TEST(ExecutorGpu, QueryDevice) {
  FUSE_REQUIRE_GPU();
  StatusOr<DeviceInfo> device = queryDevice();
  ASSERT_TRUE(device.ok());
  EXPECT_FALSE(device->name.empty());
  EXPECT_GT(device->multiprocessors, 0);
  EXPECT_GT(device->totalBytes, 0);
  EXPECT_GE(device->totalBytes, device->freeBytes);
  std::cout << "device: " << device->name << " (" << device->arch() << ", "
            << device->multiprocessors << " SMs)\n";
}

// Graph mode: run 0 is eager, run 1 captures, run 2 replays; every one must
// produce the whole result.
TEST(ExecutorGpu, LaunchFillCopyWithAndWithoutGraphs) {
  FUSE_REQUIRE_GPU();
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Executable exe = makeStepExecutable();
  std::vector<std::vector<float>> results;
  for (bool graph : {true, false}) {
    SCOPED_TRACE(graph ? "CUDA graph" : "plain launches");
    std::unique_ptr<Executor> executor = makeExecutor(exe, testOptions(graph));
    ASSERT_TRUE(executor);
    Binding binding(seed);
    for (int run = 0; run < 3; ++run) {
      SCOPED_TRACE("run " + std::to_string(run));
      binding.poison();
      FUSE_ASSERT_OK(executor->run(binding.inputPointers(),
                                   binding.outputPointers(), nullptr));
      FUSE_ASSERT_OK(executor->synchronize(nullptr));
      binding.expectResults();
    }
    std::vector<float> all;
    for (const DeviceBuffer &buffer : binding.outputs) {
      std::vector<float> values = downloadValues(buffer, kN, DType::F32);
      all.insert(all.end(), values.begin(), values.end());
    }
    results.push_back(all);
  }
  EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(),
                        results[0].size() * 4),
            0)
      << "graph and plain launches differ";
}

TEST(ExecutorGpu, NewPointersAreWrittenOldOnesLeftAlone) {
  FUSE_REQUIRE_GPU();
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::unique_ptr<Executor> executor =
      makeExecutor(makeStepExecutable(), testOptions(true));
  ASSERT_TRUE(executor);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
            cudaSuccess);
  Binding first(seed), second(seed + 1);
  for (int run = 0; run < 2; ++run) // eager, then captured for `first`
    FUSE_ASSERT_OK(executor->run(first.inputPointers(), first.outputPointers(),
                                 stream));
  FUSE_ASSERT_OK(executor->synchronize(stream));
  first.expectResults();
  first.poison();
  for (int run = 0; run < 2; ++run) { // recapture for `second`, then replay
    second.poison();
    FUSE_ASSERT_OK(executor->run(second.inputPointers(),
                                 second.outputPointers(), stream));
    FUSE_ASSERT_OK(executor->synchronize(stream));
    second.expectResults();
    first.expectPoisoned();
  }
  // And back to the first pointers.
  FUSE_ASSERT_OK(
      executor->run(first.inputPointers(), first.outputPointers(), stream));
  FUSE_ASSERT_OK(executor->synchronize(stream));
  first.expectResults();
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// A graph run once per layer, with each layer's pointers, every step: a
// graph is captured per set once, then every call replays its own; past
// the cache's capacity the least recently used set is recaptured.
TEST(ExecutorGpu, EachSetOfPointersKeepsItsGraph) {
  FUSE_REQUIRE_GPU();
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::unique_ptr<Executor> executor =
      makeExecutor(makeStepExecutable(), testOptions(true));
  ASSERT_TRUE(executor);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
            cudaSuccess);
  std::vector<std::unique_ptr<Binding>> layers;
  for (uint32_t i = 0; i < 3; ++i)
    layers.push_back(std::make_unique<Binding>(seed + i));
  // The first run is plain launches (no capture), the rest go through graphs.
  FUSE_ASSERT_OK(executor->run(layers[0]->inputPointers(),
                               layers[0]->outputPointers(), stream));
  for (int step = 0; step < 4; ++step)
    for (auto &layer : layers) {
      layer->poison();
      FUSE_ASSERT_OK(executor->run(layer->inputPointers(),
                                   layer->outputPointers(), stream));
      FUSE_ASSERT_OK(executor->synchronize(stream));
      layer->expectResults();
    }
  EXPECT_EQ(executor->graphCaptures(), 3) << "a capture per layer, then replays";
  EXPECT_EQ(executor->cachedGraphs(), 3u);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// A signal after the step that last uses output y must fire while the step
// is still running: the step's second kernel spins until another stream,
// waiting for the signal, raises a flag (it gives up after about a second
// and then reports that it never saw the flag). Another stream also copies y
// after the signal; it must hold this run's y. Plain launches, capture and
// replay alike.
TEST(ExecutorGpu, SignalsFireMidStep) {
  FUSE_REQUIRE_GPU();
  Executable exe = makeSignalExecutable(queryDevice()->arch());
  std::vector<int64_t> lastUse = outputLastUse(exe);
  ASSERT_EQ(lastUse, (std::vector<int64_t>{0, 1}));

  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<float> host = randomValues(kN, DType::F32, seed);
  DeviceBuffer x = uploadValues(host, DType::F32);
  StatusOr<DeviceBuffer> flag = DeviceBuffer::allocate(4, "flag");
  StatusOr<DeviceBuffer> y = DeviceBuffer::allocate(kBytes, "y");
  StatusOr<DeviceBuffer> yCopy = DeviceBuffer::allocate(kBytes, "y copy");
  StatusOr<DeviceBuffer> saw = DeviceBuffer::allocate(4, "saw");
  ASSERT_TRUE(flag.ok() && y.ok() && yCopy.ok() && saw.ok());
  cudaStream_t main = nullptr, side = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&main, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), cudaSuccess);
  for (bool graph : {false, true}) {
    SCOPED_TRACE(graph ? "CUDA graph" : "plain launches");
    std::unique_ptr<Executor> executor = makeExecutor(exe, testOptions(graph));
    ASSERT_TRUE(executor);
    FUSE_ASSERT_OK(executor->setSignals({lastUse[0]}));
    EXPECT_EQ(executor->numSignals(), 1u);
    for (int run = 0; run < 3; ++run) {
      SCOPED_TRACE("run " + std::to_string(run));
      // New values every run: a wait that did not wait for this run's
      // signal would copy an older y.
      host = randomValues(kN, DType::F32, seed + 1 + run + (graph ? 10 : 0));
      FUSE_ASSERT_OK(x.upload(host.data(), kBytes));
      ASSERT_TRUE(yCopy->fill(0xFF).ok());
      ASSERT_EQ(cudaMemsetAsync(flag->data(), 0, 4, main), cudaSuccess);
      FUSE_ASSERT_OK(executor->run({x.data(), flag->data()},
                                   {y->data(), saw->data()}, main));
      FUSE_ASSERT_OK(executor->waitSignal(0, side));
      ASSERT_EQ(cudaMemcpyAsync(yCopy->data(), y->data(), kBytes,
                                cudaMemcpyDeviceToDevice, side),
                cudaSuccess);
      ASSERT_EQ(cudaMemsetAsync(flag->data(), 1, 4, side), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(side), cudaSuccess);
      FUSE_ASSERT_OK(executor->synchronize(main));
      EXPECT_EQ(downloadValues(*saw, 1, DType::F32)[0], 1.0f)
          << "the signal did not fire before the step's last kernel ended";
      std::vector<float> copied = downloadValues(*yCopy, kN, DType::F32);
      for (int i = 0; i < kN; ++i)
        ASSERT_EQ(copied[i], 2.0f * host[i]) << "y[" << i << "]";
    }
  }
  std::unique_ptr<Executor> executor = makeExecutor(exe, testOptions());
  ASSERT_TRUE(executor);
  EXPECT_THAT(executor->setSignals({2}).message(),
              HasSubstr("signal 0 of @signal_step is placed after step 2, but "
                        "the step has 2 steps (valid: -1 to 1)"));
  EXPECT_THAT(executor->waitSignal(0, side).message(),
              HasSubstr("@signal_step has 0 signals; there is no signal 0"));
  EXPECT_EQ(cudaStreamDestroy(main), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(side), cudaSuccess);
}

TEST(ExecutorGpu, CompileReportAndCacheHits) {
  FUSE_REQUIRE_GPU();
  Executable exe = makeStepExecutable();
  std::unique_ptr<Executor> first = makeExecutor(exe, testOptions());
  ASSERT_TRUE(first);
  const CompileReport &cold = first->compileReport();
  EXPECT_GE(cold.modules, 1);
  EXPECT_EQ(cold.cacheHits + cold.compiled, cold.modules);
  std::unique_ptr<Executor> second = makeExecutor(exe, testOptions());
  ASSERT_TRUE(second);
  EXPECT_EQ(second->compileReport().cacheHits, second->compileReport().modules);
  EXPECT_EQ(second->executable().entry, "gpu_step");
}

// An entry that passes its checksum but is no cubin (written by another
// driver, say) must be evicted and rebuilt, not trusted.
TEST(ExecutorGpu, CachedCubinThatFailsToLoadIsRebuilt) {
  FUSE_REQUIRE_GPU();
  Executable exe = makeStepExecutable();
  ExecutorOptions options = testOptions();
  options.cacheDir = (std::filesystem::temp_directory_path() /
                      ("fuse-gpu-evict-" + std::to_string(freshSeed())))
                         .string();
  CompileReport report;
  auto modules = detail::compileModules(exe, options, report);
  ASSERT_TRUE(modules.ok()) << modules.status().message();
  KernelCache cache(options.cacheDir);
  std::vector<char> junk = {'n', 'o', 't', ' ', 'a', ' ', 'c', 'u', 'b', 'i',
                            'n'};
  for (const detail::ModuleBinary &module : *modules)
    cache.store(module.cacheKey, junk);

  std::unique_ptr<Executor> executor = makeExecutor(exe, options);
  ASSERT_TRUE(executor);
  EXPECT_EQ(executor->compileReport().cacheHits, (int64_t)modules->size());
  Binding binding(freshSeed());
  binding.poison();
  FUSE_ASSERT_OK(executor->run(binding.inputPointers(),
                               binding.outputPointers(), nullptr));
  FUSE_ASSERT_OK(executor->synchronize(nullptr));
  binding.expectResults();
  for (const detail::ModuleBinary &module : *modules)
    EXPECT_EQ(cache.lookup(module.cacheKey), module.cubin)
        << "the junk entry was replaced by the real cubin";
  std::filesystem::remove_all(options.cacheDir);
}

TEST(ExecutorGpu, MedianStepTime) {
  FUSE_REQUIRE_GPU();
  std::unique_ptr<Executor> executor =
      makeExecutor(makeStepExecutable(), testOptions());
  ASSERT_TRUE(executor);
  Binding binding(freshSeed());
  StatusOr<double> ms = executor->medianStepMilliseconds(
      binding.inputPointers(), binding.outputPointers(), nullptr, 2, 5);
  ASSERT_TRUE(ms.ok()) << ms.status().message();
  EXPECT_GT(*ms, 0.0);
  EXPECT_LT(*ms, 1000.0);
  binding.expectResults();
}

TEST(ExecutorGpu, WrongArchIsRefused) {
  FUSE_REQUIRE_GPU();
  DeviceInfo device = *queryDevice();
  Executable exe = makeStepExecutable();
  exe.arch = device.arch() == "sm_80" ? "sm_90a" : "sm_80";
  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(exe, testOptions());
  ASSERT_FALSE(executor.ok());
  const std::string &message = executor.status().message();
  EXPECT_THAT(message, HasSubstr("executable @gpu_step was compiled for " +
                                 exe.arch + " (compute capability "));
  EXPECT_THAT(message, HasSubstr("but device " +
                                 std::to_string(device.ordinal) + " (" +
                                 device.name + ") is " + device.arch()));
}

TEST(ExecutorGpu, BindingErrorsNameTheTensor) {
  FUSE_REQUIRE_GPU();
  std::unique_ptr<Executor> executor =
      makeExecutor(makeStepExecutable(), testOptions());
  ASSERT_TRUE(executor);
  Binding binding(freshSeed());
  Status status = executor->run({}, binding.outputPointers(), nullptr);
  EXPECT_EQ(status.message(),
            "running @gpu_step: expected 1 inputs (x), got 0");
  std::vector<void *> outputs = binding.outputPointers();
  outputs[2] = nullptr;
  status = executor->run(binding.inputPointers(), outputs, nullptr);
  EXPECT_EQ(status.message(),
            "running @gpu_step: output 2 (w, 1000xf32) is a null pointer");
}

TEST(ExecutorGpu, BadExecutablesAreRefusedBeforeRunning) {
  FUSE_REQUIRE_GPU();
  Executable exe = makeStepExecutable();
  exe.kernels[1].body = "extern \"C\" __global__ void plus1(float *t) { ; ; x }";
  StatusOr<std::unique_ptr<Executor>> broken =
      Executor::create(exe, testOptions());
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.status().message(), HasSubstr("NVRTC failed to compile"));
  EXPECT_THAT(broken.status().message(), HasSubstr("plus1"));

  exe = makeStepExecutable();
  exe.copies[0].bytes = 1 << 20;
  StatusOr<std::unique_ptr<Executor>> invalid =
      Executor::create(exe, testOptions());
  ASSERT_FALSE(invalid.ok());
  EXPECT_THAT(invalid.status().message(),
              HasSubstr("executable @gpu_step: copy 0 source covers"));
}

/// makeStepExecutable with its arena temporary at `offset` (of an arena
/// just large enough).
Executable stepExecutableWithArenaAt(int64_t offset) {
  Executable exe = makeStepExecutable();
  exe.arenaBytes = offset + 8192;
  exe.launches[1].args[1].ref = BufferRef::arena(offset);
  exe.copies[0].src = BufferRef::arena(offset);
  return exe;
}

// Executors sharing scratch memory, run in turn: each one's arena temporary
// is right every run; a larger executor grows the memory (the smaller one
// then captures a graph for the new address); a run on another stream
// waits for the run before it; the executors report only memory of their
// own.
TEST(ExecutorGpu, SharedScratchServesExecutorsInTurn) {
  FUSE_REQUIRE_GPU();
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  StatusOr<std::shared_ptr<ScratchMemory>> scratch = ScratchMemory::create();
  ASSERT_TRUE(scratch.ok()) << scratch.status().message();
  ExecutorOptions options = testOptions(true);
  options.scratch = *scratch;
  std::unique_ptr<Executor> small =
      makeExecutor(stepExecutableWithArenaAt(256), options);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->deviceBytes(), 0) << "its arena is the shared one";
  Binding a(seed), b(seed + 1);
  for (int run = 0; run < 2; ++run) { // plain launches, then a capture
    a.poison();
    FUSE_ASSERT_OK(small->run(a.inputPointers(), a.outputPointers(), nullptr));
    FUSE_ASSERT_OK(small->synchronize(nullptr));
    a.expectResults();
  }
  void *before = (*scratch)->arena();
  std::unique_ptr<Executor> large =
      makeExecutor(stepExecutableWithArenaAt(int64_t(8) << 20), options);
  ASSERT_TRUE(large);
  EXPECT_GE((*scratch)->deviceBytes(), (int64_t(8) << 20) + kCublasWorkspaceBytes);
  int64_t captures = small->graphCaptures();
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    a.poison();
    b.poison();
    FUSE_ASSERT_OK(large->run(b.inputPointers(), b.outputPointers(), nullptr));
    FUSE_ASSERT_OK(small->run(a.inputPointers(), a.outputPointers(), nullptr));
    FUSE_ASSERT_OK(small->synchronize(nullptr));
    a.expectResults();
    b.expectResults();
  }
  if ((*scratch)->arena() != before) {
    EXPECT_EQ(small->graphCaptures(), captures + 1)
        << "one capture for the moved arena, then replays";
  }

  // Another stream: the small executor's run must wait for the large one's.
  cudaStream_t first = nullptr, second = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking), cudaSuccess);
  for (int round = 0; round < 3; ++round) {
    a.poison();
    b.poison();
    FUSE_ASSERT_OK(large->run(b.inputPointers(), b.outputPointers(), first));
    FUSE_ASSERT_OK(small->run(a.inputPointers(), a.outputPointers(), second));
    FUSE_ASSERT_OK(small->synchronize(second));
    FUSE_ASSERT_OK(large->synchronize(first));
    a.expectResults();
    b.expectResults();
  }
  EXPECT_EQ(cudaStreamDestroy(first), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(second), cudaSuccess);
}

// A forward leaves a value in the arena its caller gives it, and the
// backward finds it there (fuse.arena_offset): no memory of their own for
// the arena, a graph per arena address, and clear errors for a missing or
// small arena and for an executor that could not reach the values.
TEST(ExecutorGpu, ValuesLeftInTheArenaReachTheNextExecutor) {
  FUSE_REQUIRE_GPU();
  uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  auto [forwardExe, backwardExe] = makeArenaValueExecutables();

  StatusOr<std::unique_ptr<Executor>> refused =
      Executor::create(backwardExe, testOptions(true));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("finds inputs or leaves outputs in its arena"));

  StatusOr<std::shared_ptr<ScratchMemory>> scratch = ScratchMemory::create();
  ASSERT_TRUE(scratch.ok()) << scratch.status().message();
  ExecutorOptions options = testOptions(true);
  options.scratch = *scratch;
  options.arenaPerRun = true;
  std::unique_ptr<Executor> forward = makeExecutor(forwardExe, options);
  std::unique_ptr<Executor> backward = makeExecutor(backwardExe, options);
  ASSERT_TRUE(forward && backward);
  EXPECT_LT((*scratch)->deviceBytes(), forwardExe.arenaBytes + kCublasWorkspaceBytes)
      << "no arena is reserved for executors that take one per run";

  std::vector<float> host = randomValues(kN, DType::F32, seed);
  DeviceBuffer x = uploadValues(host, DType::F32);
  auto allocate = [](int64_t bytes) {
    StatusOr<DeviceBuffer> buffer = DeviceBuffer::allocate(bytes, "test");
    EXPECT_TRUE(buffer.ok()) << buffer.status().message();
    return std::move(*buffer);
  };
  DeviceBuffer y = allocate(kBytes), z = allocate(kBytes);
  DeviceBuffer arenas[2] = {allocate(forwardExe.arenaBytes),
                            allocate(forwardExe.arenaBytes)};

  Status missing = backward->run({nullptr}, {z.data()}, nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.message(), HasSubstr("no arena given"));
  Status small = backward->setArena(arenas[0].data(), forwardExe.arenaBytes - 256);
  ASSERT_FALSE(small.ok());
  EXPECT_THAT(small.message(), HasSubstr("but it needs 8192"));

  // Two rounds over two arenas: plain launches, then a graph per arena.
  for (int round = 0; round < 3; ++round)
    for (DeviceBuffer &arena : arenas) {
      SCOPED_TRACE("round " + std::to_string(round));
      ASSERT_TRUE(z.fill(0xFF).ok());
      FUSE_ASSERT_OK(forward->setArena(arena.data(), arena.bytes()));
      FUSE_ASSERT_OK(forward->run({x.data()}, {y.data(), nullptr}, nullptr));
      FUSE_ASSERT_OK(backward->setArena(arena.data(), arena.bytes()));
      FUSE_ASSERT_OK(backward->run({nullptr}, {z.data()}, nullptr));
      FUSE_ASSERT_OK(backward->synchronize(nullptr));
      std::vector<float> got = downloadValues(z, kN, DType::F32);
      for (int i = 0; i < kN; ++i)
        ASSERT_EQ(got[i], host[i] + 2.0f) << "z[" << i << "]";
    }
  EXPECT_EQ(backward->cachedGraphs(), 2u) << "one graph per arena address";
}

// 2^50 bytes, as fuse::humanBytes writes it in binary units.
TEST(ExecutorGpu, OutOfMemorySaysHowMuch) {
  FUSE_REQUIRE_GPU();
  StatusOr<DeviceBuffer> huge = DeviceBuffer::allocate(int64_t(1) << 50, "x");
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(huge.status().message(),
              HasSubstr("out of device memory: asked for 1.00 PiB (x), "));
  EXPECT_THAT(huge.status().message(), HasSubstr(" free of "));
  // The failure left the context usable.
  StatusOr<DeviceBuffer> small = DeviceBuffer::allocate(256, "y");
  EXPECT_TRUE(small.ok()) << small.status().message();

  Executable exe = makeStepExecutable();
  exe.arenaBytes = int64_t(1) << 50;
  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(exe, testOptions());
  ASSERT_FALSE(executor.ok());
  EXPECT_THAT(executor.status().message(),
              HasSubstr("out of device memory: asked for 1.00 PiB (arena "
                        "of @gpu_step)"));
}

} // namespace
