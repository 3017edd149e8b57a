//===- Sha256.h - SHA-256 for cache keys and checksums ----------*- C++ -*-===//
//
// The cubin cache names entries by a hash of what produced them; a collision
// would load the wrong kernels, so the hash is SHA-256 (FIPS 180-4), not a
// fast 64-bit one. Small and dependency-free: the runtime links no crypto
// library.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_RUNTIME_SHA256_H
#define FUSE_LIB_RUNTIME_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace fuse::runtime::detail {

class Sha256 {
public:
  Sha256();
  void update(const void *data, size_t size);
  void update(const std::string &text) { update(text.data(), text.size()); }
  /// Ends the message; the object must not be updated afterwards.
  std::array<uint8_t, 32> digest();
  /// digest() as 64 lowercase hex digits.
  std::string hexDigest();

private:
  void block(const uint8_t *data);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t totalBytes_ = 0;
};

} // namespace fuse::runtime::detail

#endif // FUSE_LIB_RUNTIME_SHA256_H
