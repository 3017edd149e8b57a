//===- ExecutableIOTest.cpp - The Executable file format ------------------===//
//
// Round trips, and every way a file can be bad: each must give a message
// that names the file and what is wrong, never a half-read executable.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/ExecutableIO.h"

#include "RuntimeTestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace fuse;
using namespace fuse::runtime;
using fuse::runtime::testing::expectExecutablesEqual;
using fuse::runtime::testing::makeRichExecutable;
using ::testing::HasSubstr;

namespace {

std::string errorOf(const std::vector<uint8_t> &bytes) {
  StatusOr<Executable> result = deserializeExecutable(bytes, "model.fexe");
  EXPECT_FALSE(result.ok());
  return result.ok() ? std::string() : result.status().message();
}

/// Offset of the first occurrence of `text` in `bytes` (the test edits the
/// byte stream at known fields without hard-coding the layout).
size_t find(const std::vector<uint8_t> &bytes, const std::string &text) {
  auto at = std::search(bytes.begin(), bytes.end(), text.begin(), text.end());
  EXPECT_NE(at, bytes.end()) << text;
  return at - bytes.begin();
}

void putU64(std::vector<uint8_t> &bytes, size_t offset, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    bytes[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

TEST(ExecutableIO, RoundTripKeepsEveryField) {
  Executable exe = makeRichExecutable();
  ASSERT_TRUE(validateExecutable(exe, "rich").ok())
      << validateExecutable(exe, "rich").message();
  std::vector<uint8_t> bytes = serializeExecutable(exe);
  StatusOr<Executable> back = deserializeExecutable(bytes, "memory");
  ASSERT_TRUE(back.ok()) << back.status().message();
  expectExecutablesEqual(exe, *back);
  // Deterministic: the same executable always gives the same bytes.
  EXPECT_EQ(serializeExecutable(*back), bytes);
}

TEST(ExecutableIO, RoundTripEmptyExecutable) {
  Executable exe;
  StatusOr<Executable> back =
      deserializeExecutable(serializeExecutable(exe), "memory");
  ASSERT_TRUE(back.ok()) << back.status().message();
  expectExecutablesEqual(exe, *back);
}

TEST(ExecutableIO, FileRoundTripAndMissingFile) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("fuse-exe-" + std::to_string(getpid()) + ".fexe"))
                         .string();
  Executable exe = makeRichExecutable();
  ASSERT_TRUE(writeExecutableFile(exe, path).ok());
  StatusOr<Executable> back = readExecutableFile(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  expectExecutablesEqual(exe, *back);
  std::filesystem::remove(path);

  StatusOr<Executable> missing = readExecutableFile(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("cannot open " + path));
}

TEST(ExecutableIO, BadMagic) {
  std::vector<uint8_t> bytes = serializeExecutable(makeRichExecutable());
  bytes[0] = 'X';
  EXPECT_EQ(errorOf(bytes), "model.fexe: not a Fuse executable (the file does "
                            "not start with \"FUSEEXE\")");
  EXPECT_THAT(errorOf({}), HasSubstr("not a Fuse executable"));
}

TEST(ExecutableIO, WrongVersion) {
  std::vector<uint8_t> bytes = serializeExecutable(makeRichExecutable());
  bytes[8] = 99; // the u32 after the 8-byte magic
  std::string message = errorOf(bytes);
  EXPECT_THAT(message, HasSubstr("model.fexe: executable format version 99"));
  EXPECT_THAT(message, HasSubstr("reads version 1"));
}

TEST(ExecutableIO, EveryTruncationIsRefused) {
  std::vector<uint8_t> bytes = serializeExecutable(makeRichExecutable());
  for (size_t size = 8; size < bytes.size(); ++size) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + size);
    std::string message = errorOf(prefix);
    ASSERT_THAT(message, HasSubstr("model.fexe: truncated")) << size;
    ASSERT_THAT(message, HasSubstr("(at byte ")) << size;
  }
}

TEST(ExecutableIO, TruncationNamesTheField) {
  std::vector<uint8_t> bytes = serializeExecutable(makeRichExecutable());
  // Cut inside the last field, the text of the last helper (14 bytes).
  size_t text = find(bytes, "// reductions\n");
  std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + text + 3);
  EXPECT_THAT(errorOf(prefix),
              HasSubstr("model.fexe: truncated: helper text says 14 bytes but "
                        "only 3 bytes are left (at byte " +
                        std::to_string(text) + ")"));
  // Cut inside the steps: the count of steps cannot fit in what is left.
  size_t label = find(bytes, "loop: add, mul");
  prefix.assign(bytes.begin(), bytes.begin() + label + 3);
  EXPECT_THAT(errorOf(prefix), HasSubstr("truncated: steps says 10 entries"));
}

TEST(ExecutableIO, HugeCountIsTruncationNotAllocation) {
  std::vector<uint8_t> bytes = serializeExecutable(makeRichExecutable());
  // The entry string's length prefix sits right after magic and version.
  putU64(bytes, 12, uint64_t(1) << 60);
  std::string message = errorOf(bytes);
  EXPECT_THAT(message, HasSubstr("truncated: entry says"));
  EXPECT_THAT(message, HasSubstr("(at byte 20)"));
}

TEST(ExecutableIO, TrailingBytesAreRefused) {
  std::vector<uint8_t> bytes = serializeExecutable(makeRichExecutable());
  bytes.push_back(0);
  EXPECT_THAT(errorOf(bytes), HasSubstr("1 unexpected bytes after the last"));
}

TEST(ExecutableIO, OutOfRangeEnumsAreRefused) {
  Executable exe = makeRichExecutable();
  std::vector<uint8_t> bytes = serializeExecutable(exe);

  // The dtype byte follows the first input's name "x".
  std::vector<uint8_t> badDType = bytes;
  size_t name = find(badDType, std::string("\x01\0\0\0\0\0\0\0x", 9));
  badDType[name + 9] = 17;
  EXPECT_THAT(errorOf(badDType), HasSubstr("invalid dtype 17 (at most 5)"));

  // The step kind byte precedes the step index and label; the label's length
  // prefix is 8 bytes before its text.
  std::vector<uint8_t> badStep = bytes;
  size_t label = find(badStep, "zero: grad");
  badStep[label - 8 - 8 - 1] = 4;
  EXPECT_THAT(errorOf(badStep), HasSubstr("invalid step kind 4 (at most 3)"));
}

TEST(ExecutableIO, IndicesAreValidatedAfterReading) {
  Executable exe = makeRichExecutable();
  exe.launches[1].kernel = 7;
  EXPECT_THAT(errorOf(serializeExecutable(exe)),
              HasSubstr("model.fexe: launch 1 names kernel 7 but there are 2"));

  exe = makeRichExecutable();
  exe.launches[1].args[0] = BufferRef::input(3);
  EXPECT_THAT(errorOf(serializeExecutable(exe)),
              HasSubstr("launch 1 (fuse_k1) argument 0 refers to input 3 but "
                        "there are 3"));

  exe = makeRichExecutable();
  exe.steps[2].index = 40;
  EXPECT_THAT(errorOf(serializeExecutable(exe)),
              HasSubstr("step 2 (gemm) refers to gemm 40 but there are 6"));
}

//===--------------------------- validateExecutable -----------------------===//

std::string invalid(const Executable &exe) {
  Status status = validateExecutable(exe, "exe");
  EXPECT_FALSE(status.ok());
  return status.message();
}

TEST(ValidateExecutable, BufferExtents) {
  Executable exe = makeRichExecutable();
  exe.fills[0].bytes = 9000;
  EXPECT_EQ(invalid(exe), "exe: fill 0 covers bytes [0, 9000) of arena, "
                          "which has 8192 bytes");
  exe = makeRichExecutable();
  exe.copies[0].bytes = 40;
  EXPECT_THAT(invalid(exe), HasSubstr("copy 0 source covers bytes [0, 40) of "
                                      "input 1, which has 32 bytes"));
  exe = makeRichExecutable();
  exe.launches[0].args[0].offset = -4;
  EXPECT_THAT(invalid(exe), HasSubstr("launch 0 (fuse_k0) argument 0"));
  exe = makeRichExecutable();
  exe.launches[0].args[0] = BufferRef::constant(2);
  EXPECT_THAT(invalid(exe), HasSubstr("refers to constant 2 but there are 2"));
}

TEST(ValidateExecutable, GemmShapes) {
  Executable exe = makeRichExecutable();
  exe.gemms[0].ldb = 4; // B is stored n x k = 16 x 8 under transB
  EXPECT_THAT(invalid(exe), HasSubstr("gemm 0 B: leading dimension 4 < 8 "
                                      "columns (row-major 16x8)"));
  exe = makeRichExecutable();
  exe.gemms[0].m = 5; // A (input 0, 64 bytes) is too small for 5 x 8 bf16
  EXPECT_THAT(invalid(exe), HasSubstr("gemm 0 A covers bytes [0, 80) of "
                                      "input 0, which has 64 bytes"));
  exe = makeRichExecutable();
  exe.gemms[0].abType = DType::F32;
  exe.gemms[0].cdType = DType::BF16;
  EXPECT_THAT(invalid(exe), HasSubstr("gemm 0 multiplies f32 into bf16"));
  exe = makeRichExecutable();
  exe.gemms[1].strideD = 0;
  EXPECT_THAT(invalid(exe), HasSubstr("gemm 1 D: batch 3 with stride 0"));
  exe = makeRichExecutable();
  exe.gemms[1].k = 0;
  EXPECT_THAT(invalid(exe), HasSubstr("gemm 1 has shape m=2 n=3 k=0"));
}

TEST(ValidateExecutable, KernelsAndConstants) {
  Executable exe = makeRichExecutable();
  exe.kernels[1].name = "fuse_k0";
  EXPECT_THAT(invalid(exe), HasSubstr("kernel 1 'fuse_k0': another kernel "
                                      "has the same name"));
  exe = makeRichExecutable();
  exe.kernels[0].helpers.push_back("missing.cuh");
  EXPECT_THAT(invalid(exe), HasSubstr("uses helper 'missing.cuh', which is "
                                      "not in helperSources"));
  exe = makeRichExecutable();
  exe.constants[0].bytes.pop_back();
  EXPECT_THAT(invalid(exe), HasSubstr("constant 0 'table' (3xf16) has 5 "
                                      "bytes of data, expected 6"));
  exe = makeRichExecutable();
  exe.launches[1].block = {32, 32, 2};
  EXPECT_THAT(invalid(exe), HasSubstr("2048 threads per block"));
}

TEST(TensorSpec, SizesFollowTheDType) {
  TensorSpec spec{"t", DType::BF16, {3, 5}};
  EXPECT_EQ(spec.numElements(), 15);
  EXPECT_EQ(spec.bytes(), 30);
  TensorSpec scalar{"s", DType::I64, {}};
  EXPECT_EQ(scalar.numElements(), 1);
  EXPECT_EQ(scalar.bytes(), 8);
  TensorSpec empty{"e", DType::F32, {0, 4}};
  EXPECT_EQ(empty.bytes(), 0);
}

} // namespace

// A gradient is handed to an all-reduce after its last use: every kind of
// step that names an output counts, reads as well as writes.
TEST(OutputLastUse, LastStepThatNamesTheOutput) {
  Executable exe = makeRichExecutable();
  // y: gemm 0 writes it (step 2), kernel fuse_k0 writes into it (step 4);
  // loss: written by fuse_k1 (step 1).
  EXPECT_EQ(outputLastUse(exe), (std::vector<int64_t>{4, 1}));
  // A later copy that reads the loss is its last use.
  exe.copies.push_back({BufferRef::output(1), BufferRef::arena(0), 4});
  exe.steps.push_back({Step::Kind::Copy, 1, "copy: loss", 0, 4});
  EXPECT_EQ(outputLastUse(exe),
            (std::vector<int64_t>{4, (int64_t)exe.steps.size() - 1}));
  // A GEMM's C operand is read only when beta is not zero.
  exe = makeRichExecutable();
  exe.gemms[0].d = BufferRef::arena(0);
  exe.gemms[0].c = BufferRef::output(1);
  exe.gemms[0].beta = 0.0f;
  EXPECT_EQ(outputLastUse(exe), (std::vector<int64_t>{4, 1}));
  exe.gemms[0].beta = 1.0f;
  EXPECT_EQ(outputLastUse(exe), (std::vector<int64_t>{4, 2}));
  // An output no step names.
  exe.outputs.push_back({"unused", DType::F32, {2}});
  EXPECT_EQ(outputLastUse(exe).back(), -1);
}
