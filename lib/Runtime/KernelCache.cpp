//===- KernelCache.cpp - On-disk cubin cache ------------------------------===//
//
// One file per entry, <directory>/<key>.cubin:
//
//   "FUSECUBN"  u32 entry format version
//   u64 key length, key   (the file name could be renamed or copied)
//   u64 payload length    u64 checksum (first 8 bytes of its SHA-256)
//   payload (the cubin)
//
// Anything that does not match (magic, version, key, length, checksum) is a
// miss and the file is removed, so a crash mid-write, a full disk or a
// hand-edited file costs one recompile, never a bad kernel. Writers use a
// unique temporary name in the same directory and rename(2) it into place,
// which is atomic there: concurrent processes see the old entry or the new
// one, never half of one.
//
// The directory is created with mode 0700 (PrivateDirectory.h): cubins are
// code that gets run, so no other user may write them. A directory that
// cannot be made so, or that another user owns, is not used at all: every
// lookup misses and nothing is stored (problem() says why).
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/KernelCache.h"

#include "Sha256.h"

#include "fuse/Support/PrivateDirectory.h"

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include <unistd.h>

namespace fuse::runtime {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'F', 'U', 'S', 'E', 'C', 'U', 'B', 'N'};
constexpr uint32_t kEntryVersion = 1;

std::string defaultDirectory() {
  if (const char *dir = std::getenv("FUSE_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/fuse";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/fuse";
  return (fs::temp_directory_path() /
          ("fuse-cache-" + std::to_string(getuid())))
      .string();
}

void appendU64(std::vector<char> &out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>(value >> (8 * i)));
}

uint64_t readU64(const std::vector<char> &in, size_t offset) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= uint64_t(static_cast<uint8_t>(in[offset + i])) << (8 * i);
  return value;
}

uint64_t checksum(const char *data, size_t size) {
  detail::Sha256 sha;
  sha.update(data, size);
  std::array<uint8_t, 32> digest = sha.digest();
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= uint64_t(digest[i]) << (8 * i);
  return value;
}

/// Keys become file names: only what key() produces is accepted.
bool isValidKey(const std::string &key) {
  if (key.empty() || key.size() > 128)
    return false;
  for (char c : key)
    if (!std::isxdigit(static_cast<unsigned char>(c)))
      return false;
  return true;
}

/// The payload of a well-formed entry for `key`, or nullopt.
std::optional<std::vector<char>> parseEntry(const std::vector<char> &file,
                                            const std::string &key) {
  size_t headerBytes = sizeof kMagic + 4 + 8 + key.size() + 8 + 8;
  if (file.size() < headerBytes ||
      std::memcmp(file.data(), kMagic, sizeof kMagic) != 0)
    return std::nullopt;
  size_t offset = sizeof kMagic;
  uint32_t version = 0;
  for (int i = 0; i < 4; ++i)
    version |= uint32_t(static_cast<uint8_t>(file[offset + i])) << (8 * i);
  offset += 4;
  if (version != kEntryVersion || readU64(file, offset) != key.size())
    return std::nullopt;
  offset += 8;
  if (std::memcmp(file.data() + offset, key.data(), key.size()) != 0)
    return std::nullopt;
  offset += key.size();
  uint64_t length = readU64(file, offset);
  uint64_t sum = readU64(file, offset + 8);
  offset += 16;
  if (length != file.size() - offset ||
      checksum(file.data() + offset, length) != sum)
    return std::nullopt;
  return std::vector<char>(file.begin() + offset, file.end());
}

} // namespace

KernelCache::KernelCache(std::string directory)
    : directory_(directory.empty() ? defaultDirectory()
                                   : std::move(directory)) {
  makePrivateDirectory(directory_, problem_);
}

std::string KernelCache::key(const std::string &source,
                             const std::string &options,
                             const std::string &arch,
                             const std::string &nvrtcVersion) {
  // Length-prefixed so that moving text between fields changes the key.
  detail::Sha256 sha;
  sha.update("fuse-cubin-cache-v1");
  for (const std::string *field : {&source, &options, &arch, &nvrtcVersion}) {
    uint64_t size = field->size();
    sha.update(&size, sizeof size);
    sha.update(*field);
  }
  return sha.hexDigest();
}

std::optional<std::vector<char>>
KernelCache::lookup(const std::string &key) const {
  if (!isValidKey(key) || !problem_.empty())
    return std::nullopt;
  fs::path path = fs::path(directory_) / (key + ".cubin");
  std::ifstream stream(path, std::ios::binary);
  if (!stream)
    return std::nullopt;
  std::vector<char> file{std::istreambuf_iterator<char>(stream), {}};
  if (stream.bad())
    return std::nullopt;
  stream.close();
  std::optional<std::vector<char>> payload = parseEntry(file, key);
  if (!payload) {
    std::error_code error;
    fs::remove(path, error); // a corrupt entry is rebuilt by the caller
  }
  return payload;
}

void KernelCache::store(const std::string &key,
                        const std::vector<char> &cubin) const {
  if (!isValidKey(key) || !problem_.empty())
    return;
  std::error_code error;

  std::vector<char> header(kMagic, kMagic + sizeof kMagic);
  for (int i = 0; i < 4; ++i)
    header.push_back(static_cast<char>(kEntryVersion >> (8 * i)));
  appendU64(header, key.size());
  header.insert(header.end(), key.begin(), key.end());
  appendU64(header, cubin.size());
  appendU64(header, checksum(cubin.data(), cubin.size()));

  // Unique per process and per call, so concurrent writers never share one.
  static std::atomic<uint64_t> counter{0};
  fs::path final = fs::path(directory_) / (key + ".cubin");
  fs::path temp = fs::path(directory_) /
                  ("." + key + "." + std::to_string(getpid()) + "." +
                   std::to_string(counter++) + ".tmp");
  {
    std::ofstream stream(temp, std::ios::binary | std::ios::trunc);
    if (!stream)
      return;
    stream.write(header.data(), header.size());
    stream.write(cubin.data(), cubin.size());
    stream.close();
    if (!stream) {
      fs::remove(temp, error);
      return;
    }
  }
  fs::rename(temp, final, error);
  if (error)
    fs::remove(temp, error);
}

void KernelCache::remove(const std::string &key) const {
  if (!isValidKey(key) || !problem_.empty())
    return;
  std::error_code error;
  fs::remove(fs::path(directory_) / (key + ".cubin"), error);
}

} // namespace fuse::runtime
