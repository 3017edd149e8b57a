//===- fuzz_npz.cpp - The .npy and .npz readers ---------------------------===//
//
// The input is read three ways: as an .npy file in memory (parseNpy), and as
// an .npz archive (readNpz, from a file: the reader takes paths) both with a
// check that admits only arrays of at most 1 MiB, as fuse-run's argument
// checks would, and with none. Every failure must be an error message; an
// array read must hold exactly what its header said.
//
//===----------------------------------------------------------------------===//

#include "fuse/Support/Npy.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

namespace {

/// Where this process writes each input for readNpz.
const std::string &scratchPath() {
  static const std::string path = [] {
    const char *dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/fuse-fuzz-npz-" +
           std::to_string(getpid()) + ".npz";
  }();
  return path;
}

void checkShape(const fuse::HostTensor &tensor) {
  int64_t elements = 1;
  for (int64_t dim : tensor.shape())
    elements *= dim;
  if (elements != tensor.numElements())
    std::abort(); // the reader returned a tensor its shape does not describe
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuse::HostTensor tensor;
  std::string error;
  if (fuse::parseNpy(data, size, tensor, error))
    checkShape(tensor);

  FILE *file = std::fopen(scratchPath().c_str(), "wb");
  if (!file)
    return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  auto small = [](const fuse::NpzArrayHeader &header, std::string &message) {
    int64_t bytes = int64_t(fuse::dtypeSize(header.dtype));
    for (int64_t dim : header.shape)
      bytes *= dim;
    if (bytes <= (int64_t(1) << 20))
      return fuse::NpzVerdict::Read;
    message = "too large";
    return fuse::NpzVerdict::Refuse;
  };
  for (bool checked : {true, false}) {
    fuse::NamedTensors arrays;
    if (fuse::readNpz(scratchPath(), arrays, error,
                      checked ? fuse::NpzArrayCheck(small) : nullptr))
      for (const auto &array : arrays)
        checkShape(array.second);
  }
  std::remove(scratchPath().c_str());
  return 0;
}
