//===- DeviceLibraryTest.cpp - The embedded kernels/ helper files ---------===//
//
// The code generator pastes helper files in front of its kernels in the
// order deviceLibrary() gives, so that order must put every file after the
// files its fuse-depends line names, and the embedded text must be the file.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/DeviceLibrary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

using namespace fuse::codegen;

namespace {

std::string readFile(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> libraryNames() {
  std::vector<std::string> names;
  for (const DeviceLibraryFile &file : deviceLibrary())
    names.push_back(file.name);
  return names;
}

size_t position(const std::string &name) {
  std::vector<std::string> names = libraryNames();
  return std::find(names.begin(), names.end(), name) - names.begin();
}

TEST(DeviceLibrary, HoldsEveryCuhFileVerbatim) {
  std::set<std::string> onDisk;
  for (const auto &entry : std::filesystem::directory_iterator(FUSE_KERNELS_DIR))
    if (entry.path().extension() == ".cuh")
      onDisk.insert(entry.path().filename().string());
  std::vector<std::string> names = libraryNames();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), onDisk);
  EXPECT_EQ(names.size(), onDisk.size()) << "a file is embedded twice";
  for (const char *expected : {"common.cuh", "math.cuh", "vector_io.cuh",
                               "reductions.cuh", "attention_softmax.cuh",
                               "philox.cuh"})
    EXPECT_EQ(onDisk.count(expected), 1u) << expected;
  for (const DeviceLibraryFile &file : deviceLibrary())
    EXPECT_EQ(file.text,
              readFile(std::filesystem::path(FUSE_KERNELS_DIR) / file.name))
        << file.name << " differs from its embedded copy";
}

TEST(DeviceLibrary, DependsLinesNameEarlierFiles) {
  for (const DeviceLibraryFile &file : deviceLibrary()) {
    std::string firstLine = file.text.substr(0, file.text.find('\n'));
    const std::string prefix = "// fuse-depends:";
    ASSERT_EQ(firstLine.compare(0, prefix.size(), prefix), 0)
        << file.name << " lacks its fuse-depends line";
    std::istringstream words(firstLine.substr(prefix.size()));
    std::vector<std::string> listed;
    for (std::string word; words >> word;)
      listed.push_back(word);
    EXPECT_EQ(file.dependsOn, listed) << file.name;
    for (const std::string &dep : file.dependsOn) {
      EXPECT_LT(position(dep), position(file.name))
          << file.name << " comes before its dependency " << dep;
    }
  }
}

TEST(DeviceLibrary, DocumentedDependencies) {
  using Names = std::vector<std::string>;
  EXPECT_EQ(deviceLibraryFile("common.cuh").dependsOn, Names{});
  EXPECT_EQ(deviceLibraryFile("philox.cuh").dependsOn, Names{});
  EXPECT_EQ(deviceLibraryFile("math.cuh").dependsOn, Names{"common.cuh"});
  EXPECT_EQ(deviceLibraryFile("vector_io.cuh").dependsOn, Names{"common.cuh"});
  EXPECT_EQ(deviceLibraryFile("reductions.cuh").dependsOn, Names{"common.cuh"});
  EXPECT_EQ(deviceLibraryFile("tensor_map.cuh").dependsOn, Names{});
  EXPECT_EQ(deviceLibraryFile("attention_softmax.cuh").dependsOn,
            (Names{"common.cuh", "philox.cuh", "reductions.cuh", "vector_io.cuh"}));
}

TEST(DeviceLibrary, ClosureAddsDependenciesInLibraryOrder) {
  using Names = std::vector<std::string>;
  EXPECT_EQ(helperClosure({}), Names{});
  EXPECT_EQ(helperClosure({"common.cuh"}), Names{"common.cuh"});
  EXPECT_EQ(helperClosure({"reductions.cuh"}),
            (Names{"common.cuh", "reductions.cuh"}));
  EXPECT_EQ(helperClosure({"attention_softmax.cuh"}),
            (Names{"common.cuh", "philox.cuh", "reductions.cuh", "vector_io.cuh",
                   "attention_softmax.cuh"}));
  // Request order and duplicates do not matter.
  Names closure = helperClosure(
      {"vector_io.cuh", "philox.cuh", "math.cuh", "vector_io.cuh"});
  EXPECT_EQ(closure, (Names{"common.cuh", "math.cuh", "philox.cuh",
                            "vector_io.cuh"}));
  for (size_t i = 1; i < closure.size(); ++i)
    EXPECT_LT(position(closure[i - 1]), position(closure[i]));
  EXPECT_EQ(helperClosure(libraryNames()), libraryNames());
}

TEST(DeviceLibraryDeathTest, UnknownNameAborts) {
  EXPECT_DEATH(helperClosure({"common.cuh", "nonexistent.cuh"}),
               "nonexistent.cuh");
  EXPECT_DEATH(deviceLibraryFile("Common.cuh"), "Common.cuh");
}

} // namespace
