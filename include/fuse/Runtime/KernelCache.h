//===- KernelCache.h - On-disk cubin cache ----------------------*- C++ -*-===//
//
// Cubins keyed by a hash of the source, the compile options, the architecture
// and the NVRTC version. Entries are written to a temporary file and renamed,
// and carry a header (magic, key, length, checksum): a corrupt, truncated or
// mismatching entry is reported as a miss (and rebuilt by the caller), never
// trusted. The directory is private to its owner (mode 0700 when created;
// one another user owns is not used).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_RUNTIME_KERNELCACHE_H
#define FUSE_RUNTIME_KERNELCACHE_H

#include <optional>
#include <string>
#include <vector>

namespace fuse::runtime {

class KernelCache {
public:
  /// `directory` is created (mode 0700) when missing; empty means
  /// $FUSE_CACHE_DIR, else $XDG_CACHE_HOME/fuse, else ~/.cache/fuse, else
  /// /tmp/fuse-cache-<uid>.
  explicit KernelCache(std::string directory = "");

  static std::string key(const std::string &source, const std::string &options,
                         const std::string &arch,
                         const std::string &nvrtcVersion);

  std::optional<std::vector<char>> lookup(const std::string &key) const;
  /// Best effort: a cache that cannot be written only costs a recompile.
  void store(const std::string &key, const std::vector<char> &cubin) const;
  /// Drops an entry that passed its checksum but that CUDA refused to load
  /// (written by a different driver, say): the caller recompiles it.
  void remove(const std::string &key) const;

  const std::string &directory() const { return directory_; }
  /// Why the directory is not used (cannot be created, not a directory,
  /// another user's), or empty when it is.
  const std::string &problem() const { return problem_; }

private:
  std::string directory_;
  std::string problem_;
};

} // namespace fuse::runtime

#endif // FUSE_RUNTIME_KERNELCACHE_H
