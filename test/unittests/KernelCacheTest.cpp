//===- KernelCacheTest.cpp - The on-disk cubin cache ----------------------===//
//
// A bad entry (flipped byte, truncated, someone else's key) must be a miss
// and disappear, so the executor recompiles instead of loading garbage.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/KernelCache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <sys/stat.h>
#include <unistd.h>

using namespace fuse::runtime;
namespace fs = std::filesystem;

namespace {

class KernelCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::random_device random;
    dir = fs::temp_directory_path() /
          ("fuse-cache-test-" + std::to_string(getpid()) + "-" +
           std::to_string(random()));
  }
  void TearDown() override { fs::remove_all(dir); }

  fs::path entryPath(const std::string &key) const {
    return dir / (key + ".cubin");
  }
  std::vector<char> readFile(const fs::path &path) const {
    std::ifstream stream(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(stream), {}};
  }
  void writeFile(const fs::path &path, const std::vector<char> &bytes) const {
    std::ofstream stream(path, std::ios::binary | std::ios::trunc);
    stream.write(bytes.data(), bytes.size());
  }

  fs::path dir;
  std::vector<char> cubin = {'\x7f', 'E', 'L', 'F', 1, 2, 3, 4, 5, 6, 7, 8};
};

TEST_F(KernelCacheTest, KeyIsStableHexAndCoversEveryInput) {
  std::string key = KernelCache::key("src", "-O3", "sm_90a", "13.0");
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(key, KernelCache::key("src", "-O3", "sm_90a", "13.0"));
  EXPECT_NE(key, KernelCache::key("src2", "-O3", "sm_90a", "13.0"));
  EXPECT_NE(key, KernelCache::key("src", "-O2", "sm_90a", "13.0"));
  EXPECT_NE(key, KernelCache::key("src", "-O3", "sm_80", "13.0"));
  EXPECT_NE(key, KernelCache::key("src", "-O3", "sm_90a", "12.9"));
  // Moving text between fields changes the key (fields are length-prefixed).
  EXPECT_NE(KernelCache::key("ab", "c", "sm_90a", "13.0"),
            KernelCache::key("a", "bc", "sm_90a", "13.0"));
}

TEST_F(KernelCacheTest, StoreThenLookup) {
  KernelCache cache(dir.string());
  EXPECT_TRUE(fs::is_directory(dir)) << "created on construction";
  std::string key = KernelCache::key("src", "", "sm_90a", "13.0");
  EXPECT_FALSE(cache.lookup(key).has_value());
  cache.store(key, cubin);
  std::optional<std::vector<char>> found = cache.lookup(key);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, cubin);
  // No temporary files are left behind.
  size_t files = 0;
  for (const auto &entry : fs::directory_iterator(dir)) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1u);
  // Another cache object on the same directory sees it too.
  EXPECT_TRUE(KernelCache(dir.string()).lookup(key).has_value());
}

TEST_F(KernelCacheTest, DifferentKeyMisses) {
  KernelCache cache(dir.string());
  std::string key = KernelCache::key("a", "", "sm_90a", "13.0");
  cache.store(key, cubin);
  EXPECT_FALSE(
      cache.lookup(KernelCache::key("b", "", "sm_90a", "13.0")).has_value());
  EXPECT_TRUE(cache.lookup(key).has_value());
}

TEST_F(KernelCacheTest, EntryRenamedToAnotherKeyMissesAndIsRemoved) {
  KernelCache cache(dir.string());
  std::string key = KernelCache::key("a", "", "sm_90a", "13.0");
  std::string other = KernelCache::key("b", "", "sm_90a", "13.0");
  cache.store(key, cubin);
  fs::rename(entryPath(key), entryPath(other));
  EXPECT_FALSE(cache.lookup(other).has_value());
  EXPECT_FALSE(fs::exists(entryPath(other)));
}

TEST_F(KernelCacheTest, EveryFlippedByteIsAMissAndRemoved) {
  KernelCache cache(dir.string());
  std::string key = KernelCache::key("flip", "", "sm_90a", "13.0");
  cache.store(key, cubin);
  std::vector<char> good = readFile(entryPath(key));
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<char> bad = good;
    bad[i] ^= 0x10;
    writeFile(entryPath(key), bad);
    ASSERT_FALSE(cache.lookup(key).has_value()) << "byte " << i;
    ASSERT_FALSE(fs::exists(entryPath(key))) << "byte " << i;
  }
  writeFile(entryPath(key), good);
  EXPECT_TRUE(cache.lookup(key).has_value());
}

TEST_F(KernelCacheTest, TruncatedOrExtendedEntryIsAMissAndRemoved) {
  KernelCache cache(dir.string());
  std::string key = KernelCache::key("cut", "", "sm_90a", "13.0");
  cache.store(key, cubin);
  std::vector<char> good = readFile(entryPath(key));
  for (size_t size : {size_t(0), size_t(5), good.size() / 2, good.size() - 1}) {
    writeFile(entryPath(key), std::vector<char>(good.begin(),
                                                good.begin() + size));
    EXPECT_FALSE(cache.lookup(key).has_value()) << size;
    EXPECT_FALSE(fs::exists(entryPath(key))) << size;
  }
  std::vector<char> longer = good;
  longer.push_back('x');
  writeFile(entryPath(key), longer);
  EXPECT_FALSE(cache.lookup(key).has_value());
}

TEST_F(KernelCacheTest, RemoveAndOverwrite) {
  KernelCache cache(dir.string());
  std::string key = KernelCache::key("r", "", "sm_90a", "13.0");
  cache.store(key, cubin);
  cache.remove(key);
  EXPECT_FALSE(cache.lookup(key).has_value());
  cache.store(key, cubin);
  std::vector<char> newer = {'n', 'e', 'w'};
  cache.store(key, newer);
  EXPECT_EQ(cache.lookup(key).value(), newer);
}

TEST_F(KernelCacheTest, KeysThatAreNotOursAreIgnored) {
  KernelCache cache(dir.string());
  cache.store("../escape", cubin);
  EXPECT_FALSE(fs::exists(dir.parent_path() / "escape.cubin"));
  EXPECT_FALSE(cache.lookup("../escape").has_value());
  EXPECT_FALSE(cache.lookup("").has_value());
}

TEST_F(KernelCacheTest, DefaultDirectoryFollowsTheEnvironment) {
  const char *old = std::getenv("FUSE_CACHE_DIR");
  std::string saved = old ? old : "";
  setenv("FUSE_CACHE_DIR", dir.string().c_str(), 1);
  EXPECT_EQ(KernelCache().directory(), dir.string());
  if (old)
    setenv("FUSE_CACHE_DIR", saved.c_str(), 1);
  else
    unsetenv("FUSE_CACHE_DIR");
}

// Cubins are code that gets run: the directory, and the parents the cache
// creates for it, are the owner's alone.
TEST_F(KernelCacheTest, CreatedDirectoriesAreOwnerOnly) {
  fs::path nested = dir / "a" / "cache";
  KernelCache cache(nested.string());
  EXPECT_TRUE(cache.problem().empty()) << cache.problem();
  for (const fs::path &path : {dir, dir / "a", nested}) {
    struct stat info;
    ASSERT_EQ(stat(path.c_str(), &info), 0) << path;
    EXPECT_EQ(info.st_mode & 0777, 0700u) << path;
  }
  std::string key = KernelCache::key("p", "", "sm_90a", "13.0");
  cache.store(key, cubin);
  EXPECT_TRUE(cache.lookup(key).has_value());
}

// A directory someone else made (say /tmp/fuse-cache-<uid>, created first by
// another user) is not used: lookups miss and nothing is stored there.
TEST_F(KernelCacheTest, AnotherUsersDirectoryIsNotUsed) {
  fs::create_directories(dir);
  if (chown(dir.c_str(), geteuid() + 1, getegid()) != 0)
    GTEST_SKIP() << "cannot give a directory to another user here (not root)";
  KernelCache cache(dir.string());
  EXPECT_NE(cache.problem().find("belongs to user " +
                                 std::to_string(geteuid() + 1) +
                                 ", not to this user"),
            std::string::npos)
      << cache.problem();
  std::string key = KernelCache::key("o", "", "sm_90a", "13.0");
  cache.store(key, cubin);
  EXPECT_FALSE(fs::exists(entryPath(key)));
  EXPECT_FALSE(cache.lookup(key).has_value());
}

TEST_F(KernelCacheTest, UnwritableDirectoryOnlyMisses) {
  // A path under a regular file cannot be created: store is a no-op.
  fs::create_directories(dir);
  writeFile(dir / "file", cubin);
  KernelCache cache((dir / "file" / "sub").string());
  EXPECT_NE(cache.problem().find("cannot create directory " +
                                 (dir / "file" / "sub").string()),
            std::string::npos)
      << cache.problem();
  std::string key = KernelCache::key("x", "", "sm_90a", "13.0");
  cache.store(key, cubin);
  EXPECT_FALSE(cache.lookup(key).has_value());
  // A file where the directory should be.
  EXPECT_EQ(KernelCache((dir / "file").string()).problem(),
            (dir / "file").string() + " is not a directory");
}

} // namespace
