//===- fuzz_executable.cpp - The executable file reader -------------------===//
//
// The input is read as an executable file twice: as it is (so the magic,
// version and checksum checks see every mutation), and with its last 32
// bytes replaced by the SHA-256 of the rest, as a writer would have signed
// it, so that mutations reach the field reader and validateExecutable past
// the checksum. What is accepted must be safe to use: printed as a plan,
// turned into translation units, and written back to the same bytes.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/ExecutableIO.h"
#include "fuse/Runtime/TranslationUnit.h"

#include "Sha256.h" // lib/Runtime

#include <cstdlib>
#include <vector>

namespace {

void use(const std::vector<uint8_t> &bytes) {
  fuse::runtime::StatusOr<fuse::runtime::Executable> exe =
      fuse::runtime::deserializeExecutable(bytes, "fuzz.fuseexe");
  if (!exe)
    return;
  (void)fuse::runtime::formatPlan(*exe);
  (void)fuse::runtime::translationUnit(*exe);
  (void)fuse::runtime::outputLastUse(*exe);
  // A file this build reads, it writes back byte for byte.
  if (fuse::runtime::serializeExecutable(*exe) != bytes)
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  use(bytes);
  if (size >= 32) {
    bytes.resize(size - 32);
    fuse::runtime::detail::Sha256 sha;
    sha.update(bytes.data(), bytes.size());
    std::array<uint8_t, 32> digest = sha.digest();
    bytes.insert(bytes.end(), digest.begin(), digest.end());
    use(bytes);
  }
  return 0;
}
