//===- ExecutableIOTest.cpp - The Executable file format ------------------===//
//
// Round trips, and every way a file can be bad: each must give a message
// that names the file and what is wrong, never a half-read executable.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/ExecutableIO.h"

#include "ExecutorTestExecutables.h"
#include "GemmExecutable.h"
#include "RuntimeTestUtil.h"
#include "Sha256.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

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

/// The file's last 32 bytes are the SHA-256 of the rest.
constexpr size_t kChecksumBytes = 32;

/// `body` (a file without its checksum) with the checksum the writer would
/// append: a test that edits fields re-signs the bytes, so that the reader
/// gets past the checksum to the field it is testing.
std::vector<uint8_t> signed_(std::vector<uint8_t> body) {
  detail::Sha256 sha;
  sha.update(body.data(), body.size());
  std::array<uint8_t, 32> digest = sha.digest();
  body.insert(body.end(), digest.begin(), digest.end());
  return body;
}

/// The file of `exe` without its checksum.
std::vector<uint8_t> bodyOf(const Executable &exe) {
  std::vector<uint8_t> bytes = serializeExecutable(exe);
  bytes.resize(bytes.size() - kChecksumBytes);
  return bytes;
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
  EXPECT_THAT(message, HasSubstr("reads version 6"));
}

// Version 1 had no tensor maps, version 2 no persistent launches, version 3
// no argument extents and no checksum, version 4 no arena offsets, version
// 5 no guard terms: such a file is refused as a whole, with the way out,
// rather than misread.
TEST(ExecutableIO, OlderVersionsAreRefusedWithTheWayOut) {
  for (uint8_t version : {1, 2, 3, 4, 5}) {
    std::vector<uint8_t> bytes = serializeExecutable(makeRichExecutable());
    bytes[8] = version;
    EXPECT_EQ(errorOf(bytes), "model.fexe: executable format version " +
                                  std::to_string(version) +
                                  ", but this build of Fuse reads version 6 (compile "
                                  "the graph again; a file of this build's own "
                                  "version that reads so is corrupt)");
  }
}

// The checksum covers every byte: a bit flipped anywhere is refused with a
// message that says the file is corrupt (in the magic and the version, which
// are checked first, as not an executable or of another version).
TEST(ExecutableIO, EveryBitFlipIsRefused) {
  const std::vector<uint8_t> bytes = serializeExecutable(makeRichExecutable());
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (int bit : {0, 3, 7}) {
      std::vector<uint8_t> flipped = bytes;
      flipped[at] ^= uint8_t(1u << bit);
      std::string message = errorOf(flipped);
      if (at < 8)
        ASSERT_THAT(message, HasSubstr("not a Fuse executable")) << at;
      else if (at < 12)
        ASSERT_THAT(message, HasSubstr("executable format version")) << at;
      else
        ASSERT_EQ(message,
                  "model.fexe: checksum mismatch: the file is corrupt (changed "
                  "or cut after it was written; its last 32 bytes are the "
                  "SHA-256 of the rest): compile the graph again")
            << at;
    }
  }
}

// A persistent launch runs at most its blocks a multiprocessor times the
// device's multiprocessors, never more than its grid; others as they are.
TEST(ExecutableIO, PersistentLaunchGrids) {
  KernelLaunch launch;
  launch.grid = {300, 1, 1};
  EXPECT_EQ(launchGrid(launch, 132), (std::array<uint32_t, 3>{300, 1, 1}));
  launch.persistentBlocksPerMultiprocessor = 2;
  EXPECT_EQ(launchGrid(launch, 132), (std::array<uint32_t, 3>{264, 1, 1}));
  EXPECT_EQ(launchGrid(launch, 114), (std::array<uint32_t, 3>{228, 1, 1}));
  launch.persistentBlocksPerMultiprocessor = 1;
  launch.grid = {100, 1, 1};
  EXPECT_EQ(launchGrid(launch, 132), (std::array<uint32_t, 3>{100, 1, 1}));
}

TEST(ExecutableIO, RoundTripKeepsTensorMaps) {
  Executable exe = makeRichExecutable();
  ASSERT_EQ(exe.launches[0].tensorMaps.size(), 5u);
  StatusOr<Executable> back =
      deserializeExecutable(serializeExecutable(exe), "memory");
  ASSERT_TRUE(back.ok()) << back.status().message();
  // Every entry, those past the rank included.
  EXPECT_EQ(back->launches[0].tensorMaps, exe.launches[0].tensorMaps);
  EXPECT_TRUE(back->launches[1].tensorMaps.empty());
  EXPECT_EQ(back->launches[0].tensorMaps[2].dims[3], 7u);
}

// A cut file fails its checksum; one shorter than the header and the
// checksum says so.
TEST(ExecutableIO, EveryTruncationIsRefused) {
  std::vector<uint8_t> bytes = serializeExecutable(makeRichExecutable());
  for (size_t size = 12; size < bytes.size(); ++size) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + size);
    std::string message = errorOf(prefix);
    if (size < 12 + kChecksumBytes)
      ASSERT_THAT(message, HasSubstr("model.fexe: truncated: " +
                                     std::to_string(size) + " bytes, too short"))
          << size;
    else
      ASSERT_THAT(message, HasSubstr("model.fexe: checksum mismatch")) << size;
  }
  EXPECT_THAT(errorOf(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 10)),
              HasSubstr("truncated: format version needs 4 bytes"));
}

// Past the checksum (a writer that cut its own output, say), the fields are
// read with bounds: every cut body is refused naming the field.
TEST(ExecutableIO, EveryTruncatedBodyIsRefused) {
  std::vector<uint8_t> body = bodyOf(makeRichExecutable());
  for (size_t size = 12; size < body.size(); ++size) {
    std::vector<uint8_t> prefix(body.begin(), body.begin() + size);
    std::string message = errorOf(signed_(prefix));
    ASSERT_THAT(message, HasSubstr("model.fexe: truncated")) << size;
    ASSERT_THAT(message, HasSubstr("(at byte ")) << size;
  }
}

TEST(ExecutableIO, TruncationNamesTheField) {
  std::vector<uint8_t> body = bodyOf(makeRichExecutable());
  // Cut inside the last field, the text of the last helper (14 bytes).
  size_t text = find(body, "// reductions\n");
  std::vector<uint8_t> prefix(body.begin(), body.begin() + text + 3);
  EXPECT_THAT(errorOf(signed_(prefix)),
              HasSubstr("model.fexe: truncated: helper text says 14 bytes but "
                        "only 3 bytes are left (at byte " +
                        std::to_string(text) + ")"));
  // Cut inside the steps: the count of steps cannot fit in what is left.
  size_t label = find(body, "loop: add, mul");
  prefix.assign(body.begin(), body.begin() + label + 3);
  EXPECT_THAT(errorOf(signed_(prefix)),
              HasSubstr("truncated: steps says 10 entries"));
}

TEST(ExecutableIO, HugeCountIsTruncationNotAllocation) {
  std::vector<uint8_t> body = bodyOf(makeRichExecutable());
  // The entry string's length prefix sits right after magic and version.
  putU64(body, 12, uint64_t(1) << 60);
  std::string message = errorOf(signed_(body));
  EXPECT_THAT(message, HasSubstr("truncated: entry says"));
  EXPECT_THAT(message, HasSubstr("(at byte 20)"));
}

TEST(ExecutableIO, TrailingBytesAreRefused) {
  std::vector<uint8_t> body = bodyOf(makeRichExecutable());
  body.push_back(0);
  EXPECT_THAT(errorOf(signed_(body)),
              HasSubstr("1 unexpected bytes after the last"));
  // Bytes after the checksum are a checksum mismatch.
  std::vector<uint8_t> bytes = serializeExecutable(makeRichExecutable());
  bytes.push_back(0);
  EXPECT_THAT(errorOf(bytes), HasSubstr("checksum mismatch"));
}

TEST(ExecutableIO, OutOfRangeEnumsAreRefused) {
  Executable exe = makeRichExecutable();
  std::vector<uint8_t> bytes = bodyOf(exe);

  // The dtype byte follows the first input's name "x".
  std::vector<uint8_t> badDType = bytes;
  size_t name = find(badDType, std::string("\x01\0\0\0\0\0\0\0x", 9));
  badDType[name + 9] = 17;
  EXPECT_THAT(errorOf(signed_(badDType)),
              HasSubstr("invalid dtype 17 (at most 5)"));

  // The step kind byte precedes the step index and label; the label's length
  // prefix is 8 bytes before its text.
  std::vector<uint8_t> badStep = bytes;
  size_t label = find(badStep, "zero: grad");
  badStep[label - 8 - 8 - 1] = 4;
  EXPECT_THAT(errorOf(signed_(badStep)),
              HasSubstr("invalid step kind 4 (at most 3)"));

  // A tensor map is 115 bytes and ends with its swizzle. The map count of
  // the first launch is the first byte where an executable with one map
  // there differs from one with none.
  Executable none = makeRichExecutable(), one = makeRichExecutable();
  none.launches[0].tensorMaps.clear();
  one.launches[0].tensorMaps.resize(1);
  std::vector<uint8_t> without = bodyOf(none);
  std::vector<uint8_t> badSwizzle = bodyOf(one);
  size_t count = std::mismatch(without.begin(), without.end(),
                               badSwizzle.begin())
                     .first -
                 without.begin();
  ASSERT_EQ(badSwizzle[count], 1);
  ASSERT_EQ(badSwizzle.size(), without.size() + 115);
  badSwizzle[count + 8 + 114] = 4;
  EXPECT_THAT(errorOf(signed_(badSwizzle)),
              HasSubstr("invalid tensor map swizzle 4 (at most 3)"));

  // A kernel argument is 27 bytes and ends with its direction, a flag.
  Executable oneArg = makeRichExecutable(), noArg = makeRichExecutable();
  noArg.launches[0].args.clear();
  std::vector<uint8_t> withArg = bodyOf(oneArg), withoutArg = bodyOf(noArg);
  size_t args = std::mismatch(withoutArg.begin(), withoutArg.end(),
                              withArg.begin())
                    .first -
                withoutArg.begin();
  ASSERT_EQ(withArg.size(), withoutArg.size() + 27);
  withArg[args + 8 + 26] = 2;
  EXPECT_THAT(errorOf(signed_(withArg)),
              HasSubstr("invalid argument written 2 (a flag is 0 or 1)"));
}

TEST(ExecutableIO, IndicesAreValidatedAfterReading) {
  Executable exe = makeRichExecutable();
  exe.launches[1].kernel = 7;
  EXPECT_THAT(errorOf(serializeExecutable(exe)),
              HasSubstr("model.fexe: launch 1 names kernel 7 but there are 2"));

  exe = makeRichExecutable();
  exe.launches[1].args[0].ref = BufferRef::input(3);
  EXPECT_THAT(errorOf(serializeExecutable(exe)),
              HasSubstr("launch 1 (fuse_k1) argument 0 refers to input 3 but "
                        "there are 3"));

  exe = makeRichExecutable();
  exe.launches[0].grid = {300, 2, 1};
  EXPECT_THAT(errorOf(serializeExecutable(exe)),
              HasSubstr("launch 0 (fuse_k0) is persistent but its grid is not "
                        "one-dimensional"));

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
  exe.launches[0].args[0].ref.offset = -4;
  EXPECT_THAT(invalid(exe), HasSubstr("launch 0 (fuse_k0) argument 0"));
  exe = makeRichExecutable();
  exe.launches[0].args[0].ref = BufferRef::constant(2);
  EXPECT_THAT(invalid(exe), HasSubstr("refers to constant 2 but there are 2"));
  exe = makeRichExecutable();
  exe.launches[1].args[1].bytes = 8192 - 4096 + 4;
  EXPECT_EQ(invalid(exe), "exe: launch 1 (fuse_k1) argument 1 covers bytes "
                          "[4096, 8196) of arena, which has 8192 bytes");
}

// The kernels have their shapes compiled in: a signature changed under them
// is refused, naming the launch, the argument and the tensor.
TEST(ValidateExecutable, SignatureMustMatchTheKernels) {
  // An input that shrank: the kernels still read its 64 bytes (launch 0
  // through a tensor map, launch 1 through a pointer).
  Executable exe = makeRichExecutable();
  exe.inputs[0].shape = {2, 8};
  EXPECT_EQ(invalid(exe), "exe: launch 0 (fuse_k0) tensor map 0 covers bytes "
                          "[0, 64) of input 0, which has 32 bytes");
  exe.launches[0].tensorMaps.erase(exe.launches[0].tensorMaps.begin());
  EXPECT_EQ(invalid(exe), "exe: launch 1 (fuse_k1) argument 0 covers bytes "
                          "[0, 64) of input 0, which has 32 bytes");
  // An input of another dtype under kernels that read bf16.
  exe = makeRichExecutable();
  exe.launches[0].tensorMaps.erase(exe.launches[0].tensorMaps.begin());
  exe.inputs[0].dtype = DType::F16;
  EXPECT_EQ(invalid(exe), "exe: launch 1 (fuse_k1) argument 0 accesses input "
                          "0 'x' as bf16, but it is 4x8xf16");
  // A GEMM reading an operand as another dtype than the tensor's.
  exe = makeRichExecutable();
  exe.gemms[0].a = BufferRef::input(2); // 4x4 i1: 16 bytes
  exe.gemms[0].m = 1;
  exe.gemms[0].k = 8;
  exe.gemms[0].lda = 8;
  exe.gemms[0].d = BufferRef::arena(0);
  EXPECT_THAT(invalid(exe), HasSubstr("gemm 0 A accesses input 2 'mask' as "
                                      "bf16, but it is 4x4xi1"));
  // An element read at an offset not a multiple of its size.
  exe = makeRichExecutable();
  exe.launches[1].args[1].ref.offset = 4098;
  EXPECT_EQ(invalid(exe), "exe: launch 1 (fuse_k1) argument 1 accesses f32 at "
                          "byte offset 4098, not a multiple of 4");
}

// Every byte of every output is written by a step that runs: an output
// moved onto another buffer leaves its own unwritten.
TEST(ValidateExecutable, EveryOutputIsWritten) {
  Executable exe = makeRichExecutable();
  exe.launches[1].args[2].ref = BufferRef::arena(4096 + 1024);
  EXPECT_EQ(invalid(exe), "exe: output 1 'loss' (f32): bytes [0, 4) are "
                          "written by no step");
  // Written only in part: the GEMM writes y; without it only bytes
  // [128, 256) are, by launch 0.
  exe = makeRichExecutable();
  exe.gemms[0].d = BufferRef::arena(0);
  EXPECT_EQ(invalid(exe), "exe: output 0 'y' (4x16xf32): bytes [0, 128) are "
                          "written by no step");
  // Read is not written.
  exe = makeRichExecutable();
  exe.launches[1].args[2].written = false;
  EXPECT_THAT(invalid(exe), HasSubstr("output 1 'loss' (f32): bytes [0, 4)"));
  // A launch that no step runs writes nothing.
  exe = makeRichExecutable();
  exe.steps.erase(exe.steps.begin() + 1);
  EXPECT_THAT(invalid(exe), HasSubstr("output 1 'loss' (f32): bytes [0, 4)"));
  // An empty output needs no writer.
  exe = makeRichExecutable();
  exe.outputs.push_back({"nothing", DType::F32, {0, 3}});
  Status status = validateExecutable(exe, "exe");
  EXPECT_TRUE(status.ok()) << status.message();
}

// A GEMM writes the n elements of each row of D, never the padding up to
// its leading dimension, nor what lies between batch entries: an output
// with such gaps is fully written only where other steps write them. (The
// check once took D from its first element to its last as written, which
// passed the padding inside D and refused the GPU test's padded case for
// the last row's.)
TEST(ValidateExecutable, GemmWritesItsRowsNotTheirPadding) {
  using fuse::runtime::testing::GemmCase;
  using fuse::runtime::testing::makeGemmExecutable;
  // m=24 n=40 k=32, every row padded by 8: D is 24 rows of 48 f32, of which
  // the GEMM writes the first 40 (160 bytes of each 192).
  GemmCase padded{"padded", DType::BF16, DType::F32};
  padded.m = 24, padded.n = 40, padded.k = 32, padded.pad = 8;
  padded.transA = true;
  Executable exe = makeGemmExecutable(padded);
  ASSERT_EQ(exe.outputs[0].numElements(), 24 * 48);
  ASSERT_EQ(exe.steps.size(), 2u); // the fill of d, then the GEMM
  Status status = validateExecutable(exe, "exe");
  EXPECT_TRUE(status.ok()) << status.message();
  // Without the fill, the first row's padding is written by no step.
  Executable unfilled = exe;
  unfilled.fills.clear();
  unfilled.steps.erase(unfilled.steps.begin());
  EXPECT_EQ(invalid(unfilled), "exe: output 0 'd' (1152xf32): bytes [160, "
                               "192) are written by no step");
  // Nor when d ends at D's last element (no padding after the last row).
  unfilled.outputs[0].shape = {23 * 48 + 40};
  EXPECT_EQ(invalid(unfilled), "exe: output 0 'd' (1144xf32): bytes [160, "
                               "192) are written by no step");
  // A padded D in the arena needs no fill; its inputs have padding too,
  // which is read, never written.
  unfilled.outputs.clear();
  unfilled.arenaBytes = 1152 * 4;
  unfilled.gemms[0].d = BufferRef::arena(0);
  status = validateExecutable(unfilled, "exe");
  EXPECT_TRUE(status.ok()) << status.message();

  // Two GEMMs writing the two column halves of one 8 x 32 output (D of
  // each: n = 16, ldd = 32) write every byte of it; one alone does not.
  GemmStep left;
  left.abType = DType::F32, left.cdType = DType::F32;
  left.m = 8, left.n = 16, left.k = 4;
  left.lda = 4, left.ldb = 16, left.ldd = 32;
  left.a = BufferRef::input(0);
  left.b = BufferRef::input(1);
  left.d = BufferRef::output(0);
  GemmStep right = left;
  right.d.offset = 16 * 4;
  Executable halves;
  halves.entry = "halves";
  halves.inputs = {{"a", DType::F32, {8, 4}}, {"b", DType::F32, {4, 16}}};
  halves.outputs = {{"d", DType::F32, {8, 32}}};
  halves.gemms = {left, right};
  halves.steps = {{Step::Kind::Gemm, 0, "left", 0, 0},
                  {Step::Kind::Gemm, 1, "right", 0, 0}};
  status = validateExecutable(halves, "exe");
  EXPECT_TRUE(status.ok()) << status.message();
  halves.steps.pop_back();
  EXPECT_EQ(invalid(halves), "exe: output 0 'd' (8x32xf32): bytes [64, 128) "
                             "are written by no step");

  // Batch entries with room between them (strideD past m * n): the rows of
  // an entry are one run, the gap after it is written by no step.
  GemmCase spaced{"spaced", DType::F32, DType::F32};
  spaced.m = 4, spaced.n = 8, spaced.k = 2, spaced.batch = 3;
  Executable apart = makeGemmExecutable(spaced);
  apart.gemms[0].strideD = 4 * 8 + 2;
  apart.outputs[0].shape = {2 * (4 * 8 + 2) + 4 * 8};
  EXPECT_EQ(invalid(apart), "exe: output 0 'd' (100xf32): bytes [128, 136) "
                            "are written by no step");
  // Entries that touch are one run.
  apart.gemms[0].strideD = 4 * 8;
  apart.outputs[0].shape = {3 * 4 * 8};
  status = validateExecutable(apart, "exe");
  EXPECT_TRUE(status.ok()) << status.message();
}

// Rows with gaps are followed one by one only where the output's other
// writers leave bytes to account for, and then at most 2^20 of them: a
// fill over the whole output makes any number of rows fine.
TEST(ValidateExecutable, GemmRowsFollowedAtMost2To20) {
  const int64_t rows = (int64_t(1) << 20) + 1;
  GemmStep g;
  g.abType = DType::F32, g.cdType = DType::F32;
  g.m = rows, g.n = 1, g.k = 1;
  g.lda = 1, g.ldb = 1, g.ldd = 2;
  g.a = BufferRef::input(0);
  g.b = BufferRef::input(1);
  g.d = BufferRef::output(0);
  Executable exe;
  exe.entry = "tall";
  exe.inputs = {{"a", DType::F32, {rows, 1}}, {"b", DType::F32, {1, 1}}};
  exe.outputs = {{"d", DType::F32, {rows, 2}}};
  exe.gemms = {g};
  exe.fills = {{BufferRef::output(0), rows * 2 * 4}};
  exe.steps = {{Step::Kind::Fill, 0, "zero", 0, 0},
               {Step::Kind::Gemm, 0, "gemm", 0, 0}};
  Status status = validateExecutable(exe, "exe");
  EXPECT_TRUE(status.ok()) << status.message();
  exe.fills[0].bytes = 4; // the first element only
  EXPECT_EQ(invalid(exe),
            "exe: output 0 'd' (1048577x2xf32): gemm 0 writes it in 1 x "
            "1048577 rows of 1 elements, 2 apart, more separate runs than the "
            "1048576 the validator follows: write the whole output in a step "
            "of its own first (a fill), or lay D out without gaps");
  // 2^20 rows are followed, and their padding found unwritten.
  exe.gemms[0].m = rows - 1;
  exe.inputs[0].shape = {rows - 1, 1};
  exe.outputs[0].shape = {rows - 1, 2};
  EXPECT_EQ(invalid(exe), "exe: output 0 'd' (1048576x2xf32): bytes [4, 8) "
                          "are written by no step");
}

// The GPU tests build executables by hand; the executor refuses any that
// validateExecutable does, before anything runs. Checked here, where there
// is no GPU (the flash and TMA ones in FuseDeviceLibraryTests).
TEST(ValidateExecutable, GpuTestExecutablesAreValid) {
  using namespace fuse::runtime::testing;
  std::vector<Executable> executables;
  for (const GemmCase &c : gemmCases())
    executables.push_back(makeGemmExecutable(c));
  executables.push_back(makeStepExecutable());
  executables.push_back(makeSignalExecutable("sm_90a"));
  executables.push_back(makeArenaValueExecutables().first);
  executables.push_back(makeArenaValueExecutables().second);
  executables.push_back(makeProfiledExecutable(132));
  for (const Executable &exe : executables) {
    Status status = validateExecutable(exe, "executable @" + exe.entry);
    EXPECT_TRUE(status.ok()) << status.message();
  }
}

// The writer runs the reader first: a file it writes, it reads back, and an
// invalid executable leaves no file behind.
TEST(ExecutableIO, WriterRefusesWhatTheReaderWouldRefuse) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("fuse-bad-exe-" + std::to_string(getpid()) + ".fexe"))
                         .string();
  Executable exe = makeRichExecutable();
  exe.inputs[0].shape = {2, 8};
  Status status = writeExecutableFile(exe, path);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "refusing to write an invalid executable: " + path +
                ": launch 0 (fuse_k0) tensor map 0 covers bytes [0, 64) of "
                "input 0, which has 32 bytes");
  EXPECT_FALSE(std::filesystem::exists(path));
  // No temporary file is left either.
  for (const auto &entry : std::filesystem::directory_iterator(
           std::filesystem::temp_directory_path()))
    EXPECT_EQ(entry.path().string().find(path + "."), std::string::npos)
        << entry.path();
}

// A shape whose bytes wrap in int64 (2^68 f32 elements: 0) would make every
// extent check compare against the wrapped size.
TEST(ValidateExecutable, TensorTooLarge) {
  Executable exe = makeRichExecutable();
  exe.inputs[0].shape = {int64_t(1) << 28, int64_t(1) << 40};
  EXPECT_THAT(invalid(exe), HasSubstr("input 0 '" + exe.inputs[0].name + "' (268435456x1099511627776x"));
  EXPECT_THAT(invalid(exe), HasSubstr(") takes more than 2^48 bytes"));
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

/// The first launch of the rich executable with one map `edit` changed.
std::string invalidMap(const std::function<void(TensorMapArg &)> &edit,
                       size_t index = 0) {
  Executable exe = makeRichExecutable();
  edit(exe.launches[0].tensorMaps[index]);
  return invalid(exe);
}

TEST(ValidateExecutable, TensorMapShape) {
  EXPECT_EQ(invalidMap([](TensorMapArg &m) { m.rank = 0; }),
            "exe: launch 0 (fuse_k0) tensor map 0 has rank 0 (1 to 5)");
  EXPECT_THAT(invalidMap([](TensorMapArg &m) { m.rank = 6; }),
              HasSubstr("tensor map 0 has rank 6 (1 to 5)"));
  EXPECT_EQ(invalidMap([](TensorMapArg &m) { m.dims[1] = 0; }, 1),
            "exe: launch 0 (fuse_k0) tensor map 1: dims[1] is 0 (each must "
            "be 1 to 2^32)");
  EXPECT_THAT(invalidMap([](TensorMapArg &m) { m.dims[0] = (1ull << 32) + 1; }),
              HasSubstr("tensor map 0: dims[0] is 4294967297"));
  EXPECT_THAT(invalidMap([](TensorMapArg &m) { m.box[2] = 0; }, 3),
              HasSubstr("tensor map 3: box[2] is 0 (each must be 1 to 256)"));
  EXPECT_THAT(invalidMap([](TensorMapArg &m) { m.box[1] = 257; }),
              HasSubstr("tensor map 0: box[1] is 257 (each must be 1 to 256)"));
  // Past the rank nothing is looked at.
  Executable exe = makeRichExecutable();
  exe.launches[0].tensorMaps[0].box[4] = 0;
  exe.launches[0].tensorMaps[0].dims[3] = 0;
  exe.launches[0].tensorMaps[0].strides[2] = 3;
  EXPECT_TRUE(validateExecutable(exe, "exe").ok());
}

TEST(ValidateExecutable, TensorMapStrides) {
  EXPECT_EQ(invalidMap([](TensorMapArg &m) { m.strides[0] = 72; }, 2),
            "exe: launch 0 (fuse_k0) tensor map 2: strides[0] is 72 bytes, "
            "not a multiple of 16");
  EXPECT_THAT(invalidMap([](TensorMapArg &m) { m.strides[1] = 1ull << 40; }, 2),
              HasSubstr("tensor map 2: strides[1] is 1099511627776 bytes "
                        "(must be below 2^40)"));
  // A row of 64 f16 is 128 bytes.
  EXPECT_EQ(invalidMap([](TensorMapArg &m) { m.strides[0] = 112; }, 2),
            "exe: launch 0 (fuse_k0) tensor map 2: strides[0] is 112 bytes, "
            "less than a row of dims[0] = 64 f16 elements (128 bytes)");
  // Outer strides may be in any order (a [T, H, D] tensor read as
  // {D, T, H}): the head stride below the row stride is fine.
  Executable exe = makeRichExecutable();
  TensorMapArg &tile = exe.launches[0].tensorMaps[2];
  tile.dims = {16, 4, 2, 1, 1};
  tile.strides = {64, 32, 0, 0};
  tile.box = {16, 4, 1, 1, 1};
  Status status = validateExecutable(exe, "exe");
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(ValidateExecutable, TensorMapBoxAndSwizzle) {
  // x is bf16: 4 elements are 8 bytes.
  EXPECT_EQ(invalidMap([](TensorMapArg &m) { m.box[0] = 4; }),
            "exe: launch 0 (fuse_k0) tensor map 0: box[0] is 4 bf16 elements "
            "(8 bytes), not a multiple of 16 bytes");
  // y is f32 with the 32-byte swizzle: 16 elements are 64 bytes.
  EXPECT_EQ(invalidMap([](TensorMapArg &m) { m.box[0] = 16; }, 1),
            "exe: launch 0 (fuse_k0) tensor map 1: box[0] is 16 f32 elements "
            "(64 bytes), more than the 32B swizzle's span of 32 bytes");
  EXPECT_THAT(invalidMap([](TensorMapArg &m) { m.box[0] = 64; }, 2),
              HasSubstr("box[0] is 64 f16 elements (128 bytes), more than the "
                        "64B swizzle's span of 64 bytes"));
  // The same row fits the 128-byte swizzle, and any row goes without one.
  Executable exe = makeRichExecutable();
  exe.launches[0].tensorMaps[2].box[0] = 64;
  exe.launches[0].tensorMaps[2].swizzle = TensorMapArg::Swizzle::B128;
  exe.launches[0].tensorMaps[1].box[0] = 16;
  exe.launches[0].tensorMaps[1].swizzle = TensorMapArg::Swizzle::None;
  Status status = validateExecutable(exe, "exe");
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_THAT(invalidMap([](TensorMapArg &m) {
                m.swizzle = static_cast<TensorMapArg::Swizzle>(9);
              }),
              HasSubstr("tensor map 0 has an unknown swizzle 9"));
}

TEST(ValidateExecutable, TensorMapBuffer) {
  EXPECT_EQ(invalidMap([](TensorMapArg &m) { m.base = BufferRef::arena(1032); },
                       2),
            "exe: launch 0 (fuse_k0) tensor map 2: base offset 1032 is not a "
            "multiple of 16 bytes");
  // The last element of every dimension must be in the buffer: x has 64
  // bytes, and a fifth row would end at 80.
  EXPECT_EQ(invalidMap([](TensorMapArg &m) { m.dims[1] = 5; }),
            "exe: launch 0 (fuse_k0) tensor map 0 covers bytes [0, 80) of "
            "input 0, which has 64 bytes");
  EXPECT_THAT(invalidMap(
                  [](TensorMapArg &m) { m.base = BufferRef::arena(7184); }, 2),
              HasSubstr("tensor map 2 covers bytes [7184, 8208) of arena, "
                        "which has 8192 bytes"));
  EXPECT_THAT(invalidMap([](TensorMapArg &m) { m.base = BufferRef::output(2); },
                         1),
              HasSubstr("launch 0 (fuse_k0) tensor map 1 refers to output 2 "
                        "but there are 2"));
  // Dims of 2^32 with strides near 2^40 span more than any buffer, without
  // wrapping around.
  EXPECT_THAT(invalidMap([](TensorMapArg &m) {
                for (int d = 0; d < 5; ++d)
                  m.dims[d] = 1ull << 32;
                m.strides = {(1ull << 40) - 16, (1ull << 40) - 16,
                             (1ull << 40) - 16, (1ull << 40) - 16};
              }, 3),
              HasSubstr("tensor map 3 spans more than 2^62 bytes"));
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
  // A tensor map's base counts like an argument: launch 0 (step 4) reads
  // the loss through a map.
  exe = makeRichExecutable();
  TensorMapArg loss;
  loss.base = BufferRef::output(1);
  loss.dtype = DType::F32;
  loss.box = {4, 1, 1, 1, 1};
  exe.launches[0].tensorMaps.push_back(loss);
  EXPECT_EQ(outputLastUse(exe), (std::vector<int64_t>{4, 4}));
  // An output no step names.
  exe.outputs.push_back({"unused", DType::F32, {2}});
  EXPECT_EQ(outputLastUse(exe).back(), -1);
}
