//===- KernelCompiler.h - CUDA C++ to cubin with NVRTC ----------*- C++ -*-===//
//
// NVRTC works without a GPU, so this piece runs in CI: every kernel the code
// generator emits is compiled for sm_90a there and its register and spill
// counts (from ptxas's verbose log) are checked.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_RUNTIME_KERNELCOMPILER_H
#define FUSE_RUNTIME_KERNELCOMPILER_H

#include "fuse/Runtime/Executable.h"
#include "fuse/Runtime/Status.h"

#include <string>
#include <vector>

namespace fuse::runtime {

struct NvrtcOptions {
  std::string arch = "sm_90a";
  /// Where a failed compile's source and log are saved (a temp dir if empty).
  std::string failureDir;
};

/// What ptxas reported for one kernel.
struct KernelResources {
  /// The kernel's name: the symbol itself for an extern "C" kernel; for a C++
  /// kernel the demangled name without return type and parameters
  /// ("scale<4>").
  std::string name;
  /// The symbol as ptxas printed it (mangled for C++ kernels): what
  /// cudaLibraryGetKernel takes.
  std::string symbol;
  int registers = 0;
  int spillStoreBytes = 0;
  int spillLoadBytes = 0;
  int staticSharedBytes = 0;
};

struct CompiledModule {
  std::vector<char> cubin;
  std::string log;
  std::vector<KernelResources> kernels;
};

/// Compiles `source` (named `name` in messages and file names) for
/// `options.arch` with nvrtcCompileOptions(options). On an NVRTC error the
/// source and log are written to `<failureDir>/<name>.cu` and `.log` and the
/// message reads
///   NVRTC failed to compile <name>: <name>.cu(2): error: ...
///     <the source line and caret, up to two more errors>
///     source: <path>
///     log: <path>
/// Thread-safe: the executor compiles modules on several threads at once.
StatusOr<CompiledModule> compileWithNvrtc(const std::string &source,
                                          const std::string &name,
                                          const NvrtcOptions &options);

/// "12.9": the NVRTC version, part of every cache key.
std::string nvrtcVersion();

/// The option list compileWithNvrtc passes to NVRTC (the cache key hashes
/// it, so a changed option never loads a stale cubin).
std::vector<std::string> nvrtcCompileOptions(const NvrtcOptions &options);

/// Parses ptxas's verbose output (--ptxas-options=-v) from an NVRTC log: one
/// entry per "Compiling entry function" in log order. Exposed for tests.
std::vector<KernelResources> parsePtxasResources(const std::string &log);

} // namespace fuse::runtime

#endif // FUSE_RUNTIME_KERNELCOMPILER_H
