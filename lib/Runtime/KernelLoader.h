//===- KernelLoader.h - Cubins into the CUDA context ------------*- C++ -*-===//
//
// Loads each module's cubin with cudaLibraryLoadData and takes every kernel
// with cudaLibraryGetKernel, so launches need no driver API. A cached cubin
// that fails to load is evicted, recompiled and loaded once more. Internal to
// lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_RUNTIME_KERNELLOADER_H
#define FUSE_LIB_RUNTIME_KERNELLOADER_H

#include "ModuleCompiler.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

namespace fuse::runtime::detail {

class LoadedKernels {
public:
  /// `device` is the ordinal whose shared-memory limits are set for kernels
  /// launched with more than 48 KiB of dynamic shared memory.
  static StatusOr<std::unique_ptr<LoadedKernels>>
  load(const Executable &exe, const ExecutorOptions &options,
       std::vector<ModuleBinary> &modules, int device);
  ~LoadedKernels();
  LoadedKernels(const LoadedKernels &) = delete;
  LoadedKernels &operator=(const LoadedKernels &) = delete;

  /// The kernel of Executable::kernels[index].
  cudaKernel_t kernel(int64_t index) const { return kernels_[index]; }

private:
  LoadedKernels() = default;
  std::vector<cudaLibrary_t> libraries_;
  /// The cubins, kept for the libraries' lifetime: with lazy module loading
  /// (CUDA's default) code is loaded on first use, after load() returned.
  std::vector<std::vector<char>> images_;
  std::vector<cudaKernel_t> kernels_;
};

} // namespace fuse::runtime::detail

#endif // FUSE_LIB_RUNTIME_KERNELLOADER_H
