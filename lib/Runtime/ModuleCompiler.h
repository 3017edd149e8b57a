//===- ModuleCompiler.h - Kernels to cubins, in parallel --------*- C++ -*-===//
//
// The executor's first stage: the kernels are grouped into a few translation
// units ("modules"), each looked up in the cubin cache and otherwise compiled
// with NVRTC on a pool of threads. Needs NVRTC but no GPU, so it is tested
// without one. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_RUNTIME_MODULECOMPILER_H
#define FUSE_LIB_RUNTIME_MODULECOMPILER_H

#include "fuse/Runtime/Executable.h"
#include "fuse/Runtime/ExecutorOptions.h"
#include "fuse/Runtime/Status.h"

#include <string>
#include <vector>

namespace fuse::runtime::detail {

/// One translation unit and its cubin.
struct ModuleBinary {
  /// Kernel indices, ascending.
  std::vector<int64_t> kernels;
  std::string name;
  std::string source;
  std::string cacheKey;
  std::vector<char> cubin;
  bool fromCache = false;
};

/// Contiguous runs of kernels, at most `maxModules` of them, balanced by the
/// size of their bodies (compile time grows with it). Empty for no kernels.
std::vector<std::vector<int64_t>> partitionKernels(const Executable &exe,
                                                   size_t maxModules);

/// compileThreads resolved: 0 means the hardware's thread count.
int compileThreadCount(const ExecutorOptions &options);

/// Every module's cubin, from the cache or NVRTC (at most ~2 modules per
/// compile thread). Fills `report` (seconds covers this stage only). Prints
/// "\r[fuse] compiling kernels: 3/8 modules" on stderr once the stage has
/// run a second, when options.progress.
StatusOr<std::vector<ModuleBinary>>
compileModules(const Executable &exe, const ExecutorOptions &options,
               CompileReport &report);

/// Compiles `module` again with NVRTC, ignoring and replacing its cache entry
/// (used when a cached cubin passes its checksum but fails to load).
Status recompileModule(const Executable &exe, const ExecutorOptions &options,
                       ModuleBinary &module);

/// ", "-joined kernel names of a module, for messages.
std::string moduleKernelNames(const Executable &exe,
                              const ModuleBinary &module);

} // namespace fuse::runtime::detail

#endif // FUSE_LIB_RUNTIME_MODULECOMPILER_H
