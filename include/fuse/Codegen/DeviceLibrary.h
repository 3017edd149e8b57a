//===- DeviceLibrary.h - The kernels/ helpers as text -----------*- C++ -*-===//
//
// The device helper files of kernels/ (*.cuh), embedded into the library by
// the build (cmake/EmbedDeviceLibrary.cmake), so that the code generator can
// paste the ones a kernel uses in front of it and NVRTC compiles the result
// with no include path. Plain C++: no MLIR, no CUDA.
//
// Each file's first line, `// fuse-depends: a.cuh b.cuh`, names the files it
// uses; the build orders the files by it and fails on an unknown name or a
// cycle.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_CODEGEN_DEVICELIBRARY_H
#define FUSE_CODEGEN_DEVICELIBRARY_H

#include <string>
#include <vector>

namespace fuse::codegen {

struct DeviceLibraryFile {
  /// The file name in kernels/, such as "reductions.cuh".
  std::string name;
  /// Its text, byte for byte.
  std::string text;
  /// The files named on its fuse-depends line.
  std::vector<std::string> dependsOn;
};

/// Every kernels/*.cuh file, in dependency order (each after the files it
/// depends on; among files free to go next, alphabetical).
const std::vector<DeviceLibraryFile> &deviceLibrary();

/// `names` and everything they depend on, in deviceLibrary() order; an
/// unknown name aborts with a message (programming error).
std::vector<std::string> helperClosure(const std::vector<std::string> &names);

/// The file called `name`; an unknown name aborts with a message.
const DeviceLibraryFile &deviceLibraryFile(const std::string &name);

} // namespace fuse::codegen

#endif // FUSE_CODEGEN_DEVICELIBRARY_H
