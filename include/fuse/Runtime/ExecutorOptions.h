//===- ExecutorOptions.h - What the executor compiles with ----*- C++ -*-===//
//
// The options Executor::create takes and the report of its compile stage.
// Plain structs on their own so that the executor's internal stages
// (ModuleCompiler, KernelLoader) take them without including Executor.h,
// the layer built on top of them.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_RUNTIME_EXECUTOROPTIONS_H
#define FUSE_RUNTIME_EXECUTOROPTIONS_H

#include <cstdint>
#include <memory>
#include <string>

namespace fuse::runtime {

class ScratchMemory;

/// cuBLASLt's scratch space, per executor or per ScratchMemory shared by
/// several: enough for split-K on the largest GEMMs.
constexpr int64_t kCublasWorkspaceBytes = int64_t(32) << 20;

struct ExecutorOptions {
  /// Empty: KernelCache's default directory.
  std::string cacheDir;
  bool useCache = true;
  bool useCudaGraph = true;
  /// Parallel NVRTC compiles; 0 = hardware threads.
  int compileThreads = 0;
  /// A progress line on stderr while a compile runs longer than a second.
  bool progress = true;
  /// Where the arena, workspace and cuBLASLt workspace live: null, memory
  /// of the executor's own; else memory it shares with the other executors
  /// given the same ScratchMemory (ScratchMemory.h), whose runs must never
  /// overlap with its own.
  std::shared_ptr<ScratchMemory> scratch;
  /// The arena is the caller's, set before runs (Executor::setArena): none
  /// is allocated or reserved. Required by an executable that finds inputs
  /// or leaves outputs in its arena (TensorSpec::arenaOffset): a backward
  /// then runs in the memory its forward left its saved values in.
  bool arenaPerRun = false;
};

/// How Executor::create got its kernels.
struct CompileReport {
  /// Wall time of compiling (or reading the cache) and loading the modules.
  double seconds = 0;
  /// Translation units the kernels were grouped into (about two per compile
  /// thread); each is a cache hit or compiled.
  int64_t modules = 0;
  int64_t cacheHits = 0;
  int64_t compiled = 0;
};

} // namespace fuse::runtime

#endif // FUSE_RUNTIME_EXECUTOROPTIONS_H
