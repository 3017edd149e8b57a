//===- KernelLoader.cpp - Cubins into the CUDA context --------------------===//

#include "KernelLoader.h"

#include "CudaError.h"

#include <algorithm>
#include <cstring>

namespace fuse::runtime::detail {

namespace {

constexpr uint32_t kDefaultSharedLimit = 48 * 1024;

StatusOr<cudaLibrary_t> loadLibrary(const Executable &exe,
                                    const ModuleBinary &module) {
  // Anything but an ELF image would be parsed as PTX text, which is read up
  // to a NUL byte, past the end of the buffer: refuse it here.
  if (module.cubin.size() < 4 ||
      std::memcmp(module.cubin.data(), "\x7f" "ELF", 4) != 0)
    return Status::failure("cannot load " + module.name + " of @" + exe.entry +
                           ": not a cubin (no ELF header)" +
                           (module.fromCache ? " in the kernel cache" : ""));
  cudaLibrary_t library = nullptr;
  cudaError_t error = cudaLibraryLoadData(&library, module.cubin.data(),
                                          nullptr, nullptr, 0, nullptr,
                                          nullptr, 0);
  if (error != cudaSuccess)
    return cudaCheck(error, "cannot load " + module.name + " of @" +
                                exe.entry + " (kernels " +
                                moduleKernelNames(exe, module) + ")" +
                                (module.fromCache ? " from the kernel cache"
                                                  : ""));
  return library;
}

} // namespace

StatusOr<std::unique_ptr<LoadedKernels>>
LoadedKernels::load(const Executable &exe, const ExecutorOptions &options,
                    std::vector<ModuleBinary> &modules, int device) {
  std::unique_ptr<LoadedKernels> loaded(new LoadedKernels());
  loaded->kernels_.assign(exe.kernels.size(), nullptr);

  // The largest dynamic shared memory each kernel is launched with.
  std::vector<uint32_t> sharedBytes(exe.kernels.size(), 0);
  for (const KernelLaunch &launch : exe.launches)
    sharedBytes[launch.kernel] =
        std::max(sharedBytes[launch.kernel], launch.sharedBytes);
  int sharedOptIn = 0;
  FUSE_RETURN_IF_ERROR(cudaCheck(
      cudaDeviceGetAttribute(&sharedOptIn,
                             cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
      "querying the device's shared memory per block"));

  for (ModuleBinary &module : modules) {
    StatusOr<cudaLibrary_t> library = loadLibrary(exe, module);
    if (!library.ok() && module.fromCache) {
      // The entry passed its checksum, yet CUDA refuses it (a cubin from an
      // older driver, say): never trust it, rebuild it.
      FUSE_RETURN_IF_ERROR(recompileModule(exe, options, module));
      library = loadLibrary(exe, module);
    }
    if (!library.ok())
      return library.status();
    loaded->libraries_.push_back(*library);
    loaded->images_.push_back(module.cubin);

    for (int64_t index : module.kernels) {
      const std::string &name = exe.kernels[index].name;
      cudaKernel_t kernel = nullptr;
      FUSE_RETURN_IF_ERROR(cudaCheck(
          cudaLibraryGetKernel(&kernel, *library, name.c_str()),
          "kernel " + name + " is not in its compiled module " + module.name +
              " (is it declared extern \"C\" __global__?)"));
      loaded->kernels_[index] = kernel;
      if (sharedBytes[index] <= kDefaultSharedLimit)
        continue;
      if ((int64_t)sharedBytes[index] > sharedOptIn)
        return Status::failure(
            "kernel " + name + " is launched with " +
            std::to_string(sharedBytes[index]) +
            " bytes of dynamic shared memory; the device allows at most " +
            std::to_string(sharedOptIn) + " per block");
      // Above 48 KiB a kernel must opt in, per device.
      FUSE_RETURN_IF_ERROR(cudaCheck(
          cudaKernelSetAttributeForDevice(
              kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
              (int)sharedBytes[index], device),
          "allowing kernel " + name + " " +
              std::to_string(sharedBytes[index]) +
              " bytes of dynamic shared memory"));
    }
  }
  return loaded;
}

LoadedKernels::~LoadedKernels() {
  for (cudaLibrary_t library : libraries_)
    cudaLibraryUnload(library);
}

} // namespace fuse::runtime::detail
