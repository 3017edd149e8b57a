//===- NpyTest.cpp - Tests for the .npy/.npz reader and writer ------------===//
//
// Fixtures under Inputs/ were written by numpy 1.24 (Inputs/generate.py), so
// these tests check compatibility with numpy without needing Python.
//
//===----------------------------------------------------------------------===//

#include "fuse/Support/Npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

using namespace fuse;
namespace fs = std::filesystem;

namespace {

std::string inputPath(const std::string &name) {
  return std::string(FUSE_TEST_INPUTS) + "/" + name;
}

std::vector<uint8_t> fileBytes(const std::string &path) {
  std::ifstream stream(path, std::ios::binary);
  EXPECT_TRUE(stream) << "cannot open " << path;
  return {std::istreambuf_iterator<char>(stream), {}};
}

void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream stream(path, std::ios::binary);
  stream.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

/// A fresh directory under the system temp directory, removed afterwards.
class TempDir {
public:
  TempDir() {
    std::random_device random;
    do {
      path_ = fs::temp_directory_path() /
              ("fuse-npy-test-" + std::to_string(random()));
    } while (!fs::create_directory(path_));
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string file(const std::string &name) const {
    return (path_ / name).string();
  }

private:
  fs::path path_;
};

/// Varied values, negative and large ones included, rounded to the dtype.
HostTensor sampleTensor(DType dtype, std::vector<int64_t> shape) {
  HostTensor tensor(dtype, std::move(shape));
  for (int64_t i = 0; i < tensor.numElements(); ++i) {
    if (tensor.isFloat())
      tensor.set(i, (i % 2 ? -1.0 : 1.0) * std::pow(1.7, i % 40) / 3.0);
    else
      tensor.setInt(i, (i % 3 == 0 ? -1 : 1) * (i * int64_t(0x123456789)));
  }
  return tensor;
}

/// Same dtype, shape and bits.
void expectSameTensor(const HostTensor &expected, const HostTensor &actual) {
  EXPECT_EQ(expected.dtype(), actual.dtype());
  EXPECT_EQ(expected.shape(), actual.shape());
  EXPECT_EQ(expected.toBytes(), actual.toBytes());
}

/// An .npy file with the given header text (unpadded) and data.
std::vector<uint8_t> craftNpy(const std::string &header,
                              std::vector<uint8_t> data = {},
                              uint8_t major = 1) {
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  size_t lengthBytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < lengthBytes; ++i)
    bytes.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::string npyHeader(const std::string &descr, const std::string &shape,
                      const char *fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran +
         ", 'shape': " + shape + ", }\n";
}

/// The error parseNpy gives for `bytes`; fails the test if it succeeds.
std::string parseError(const std::vector<uint8_t> &bytes) {
  HostTensor tensor;
  std::string error;
  EXPECT_FALSE(parseNpy(bytes.data(), bytes.size(), tensor, error));
  EXPECT_FALSE(error.empty());
  return error;
}

HostTensor parseOk(const std::vector<uint8_t> &bytes) {
  HostTensor tensor;
  std::string error;
  EXPECT_TRUE(parseNpy(bytes.data(), bytes.size(), tensor, error)) << error;
  return tensor;
}

HostTensor readOk(const std::string &path) {
  HostTensor tensor;
  std::string error;
  EXPECT_TRUE(readNpy(path, tensor, error)) << error;
  return tensor;
}

std::string readError(const std::string &path) {
  HostTensor tensor;
  std::string error;
  EXPECT_FALSE(readNpy(path, tensor, error));
  EXPECT_NE(error.find(path), std::string::npos) << error;
  return error;
}

std::string readNpzError(const std::string &path) {
  NamedTensors arrays;
  std::string error;
  EXPECT_FALSE(readNpz(path, arrays, error));
  EXPECT_NE(error.find(path), std::string::npos) << error;
  return error;
}

const std::vector<std::vector<int64_t>> kShapes = {{2, 3}, {},  {0},
                                                   {0, 3}, {7}, {2, 1, 3, 2}};

//===----------------------------------------------------------------------===//
// Round trips, per dtype
//===----------------------------------------------------------------------===//

class NpyDTypeTest : public testing::TestWithParam<DType> {};

TEST_P(NpyDTypeTest, RoundTripsInMemory) {
  for (const auto &shape : kShapes) {
    SCOPED_TRACE(testing::PrintToString(shape));
    HostTensor tensor = sampleTensor(GetParam(), shape);
    std::vector<uint8_t> bytes = serializeNpy(tensor);
    EXPECT_EQ(bytes.size() % 64, tensor.toBytes().size() % 64)
        << "data must start 64-byte aligned";
    expectSameTensor(tensor, parseOk(bytes));
  }
}

TEST_P(NpyDTypeTest, RoundTripsThroughFile) {
  TempDir dir;
  for (const auto &shape : kShapes) {
    HostTensor tensor = sampleTensor(GetParam(), shape);
    std::string path = dir.file("t.npy");
    std::string error;
    ASSERT_TRUE(writeNpy(path, tensor, error)) << error;
    expectSameTensor(tensor, readOk(path));
  }
}

TEST_P(NpyDTypeTest, RoundTripsThroughNpz) {
  TempDir dir;
  NamedTensors arrays;
  for (size_t i = 0; i < kShapes.size(); ++i)
    arrays.emplace_back("a" + std::to_string(i),
                        sampleTensor(GetParam(), kShapes[i]));
  std::string path = dir.file("t.npz"), error;
  ASSERT_TRUE(writeNpz(path, arrays, error)) << error;
  NamedTensors read;
  ASSERT_TRUE(readNpz(path, read, error)) << error;
  ASSERT_EQ(read.size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    EXPECT_EQ(read[i].first, arrays[i].first);
    expectSameTensor(arrays[i].second, read[i].second);
  }
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, NpyDTypeTest,
                         testing::Values(DType::F32, DType::F16, DType::BF16,
                                         DType::I64, DType::I32, DType::I1),
                         [](const testing::TestParamInfo<DType> &info) {
                           return std::string(dtypeName(info.param));
                         });

/// Every 16-bit pattern the tensor can hold survives a round trip: all but
/// NaN payloads, which HostTensor canonicalises to `quietNaN`.
void expectBitExact(DType dtype, bool (*isNaN)(uint16_t), uint16_t quietNaN) {
  std::vector<uint8_t> bits;
  for (uint32_t pattern = 0; pattern <= 0xFFFF; ++pattern) {
    if (isNaN(pattern) && pattern != quietNaN)
      continue;
    bits.push_back(pattern & 0xFF);
    bits.push_back(pattern >> 8);
  }
  int64_t count = bits.size() / 2;
  HostTensor tensor =
      HostTensor::fromBytes(dtype, {count}, bits.data(), bits.size());
  std::vector<uint8_t> file = serializeNpy(tensor);
  ASSERT_GE(file.size(), bits.size());
  EXPECT_TRUE(std::equal(bits.begin(), bits.end(), file.end() - bits.size()));
  EXPECT_EQ(parseOk(file).toBytes(), bits);
}

TEST(NpyTest, BF16IsBitExact) {
  expectBitExact(
      DType::BF16,
      [](uint16_t bits) {
        return (bits & 0x7F80) == 0x7F80 && (bits & 0x7F) != 0;
      },
      0x7FC0);
}

TEST(NpyTest, F16IsBitExact) {
  expectBitExact(
      DType::F16,
      [](uint16_t bits) {
        return (bits & 0x7C00) == 0x7C00 && (bits & 0x3FF) != 0;
      },
      0x7E00);
}

TEST(NpyTest, UsesVersion2ForHugeHeaders) {
  // 22000 dimensions of size 1 make a header past version 1.0's 64 KiB.
  HostTensor tensor(DType::I32, std::vector<int64_t>(22000, 1));
  tensor.setInt(0, 42);
  std::vector<uint8_t> bytes = serializeNpy(tensor);
  EXPECT_EQ(bytes[6], 2);
  EXPECT_EQ((bytes.size() - 4) % 64, 0u);
  expectSameTensor(tensor, parseOk(bytes));
}

//===----------------------------------------------------------------------===//
// Files written by numpy
//===----------------------------------------------------------------------===//

TEST(NpyNumpyTest, ReadsF32) {
  HostTensor t = readOk(inputPath("f32_2x3.npy"));
  ASSERT_EQ(t.typeString(), "2x3xf32");
  EXPECT_EQ(t.floats(), (std::vector<float>{0.0f, -1.5f, 3.14159274f, 1e-3f,
                                            -2.5e38f, 7.0f}));
}

TEST(NpyNumpyTest, ReadsF16) {
  HostTensor t = readOk(inputPath("f16_5.npy"));
  ASSERT_EQ(t.typeString(), "5xf16");
  EXPECT_EQ(t.floats()[0], 65504.0f);
  EXPECT_EQ(t.floats()[1], std::ldexp(1.0f, -24));
  EXPECT_TRUE(t.floats()[2] == 0.0f && std::signbit(t.floats()[2]));
  EXPECT_EQ(t.floats()[3], INFINITY);
  EXPECT_EQ(t.floats()[4], roundToDType(1.0f / 3.0f, DType::F16));
}

TEST(NpyNumpyTest, ReadsBF16SavedAsVoid) {
  HostTensor t = readOk(inputPath("bf16_2x2.npy"));
  ASSERT_EQ(t.typeString(), "2x2xbf16");
  EXPECT_EQ(t.floats(), (std::vector<float>{1.0f, -3.140625f, INFINITY,
                                            bf16BitsToFloat(1)}));
}

TEST(NpyNumpyTest, ReadsIntegersAndBools) {
  HostTensor scalar = readOk(inputPath("i64_scalar.npy"));
  EXPECT_EQ(scalar.typeString(), "i64");
  EXPECT_EQ(scalar.ints(), std::vector<int64_t>{-7});
  HostTensor i32 = readOk(inputPath("i32_4.npy"));
  EXPECT_EQ(i32.typeString(), "4xi32");
  EXPECT_EQ(i32.ints(), (std::vector<int64_t>{1, -2, INT32_MAX, INT32_MIN}));
  HostTensor mask = readOk(inputPath("bool_2x2.npy"));
  EXPECT_EQ(mask.typeString(), "2x2xi1");
  EXPECT_EQ(mask.ints(), (std::vector<int64_t>{1, 0, 0, 1}));
  HostTensor empty = readOk(inputPath("f32_0x3.npy"));
  EXPECT_EQ(empty.typeString(), "0x3xf32");
  EXPECT_EQ(empty.numElements(), 0);
}

TEST(NpyNumpyTest, ReadsVersions2And3) {
  HostTensor v2 = readOk(inputPath("f32_v2.npy"));
  EXPECT_EQ(v2.typeString(), "2xf32");
  EXPECT_EQ(v2.floats(), (std::vector<float>{1.0f, 2.0f}));
  HostTensor v3 = readOk(inputPath("i32_v3.npy"));
  EXPECT_EQ(v3.typeString(), "1x2xi32");
  EXPECT_EQ(v3.ints(), (std::vector<int64_t>{5, 6}));
}

TEST(NpyNumpyTest, RewritesNumpyFilesByteForByte) {
  for (const char *name :
       {"f32_2x3.npy", "f16_5.npy", "bf16_2x2.npy", "i64_scalar.npy",
        "i32_4.npy", "bool_2x2.npy", "f32_0x3.npy"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(serializeNpy(readOk(inputPath(name))),
              fileBytes(inputPath(name)));
  }
}

TEST(NpyNumpyTest, ReadsSavez) {
  NamedTensors arrays;
  std::string error;
  ASSERT_TRUE(readNpz(inputPath("savez.npz"), arrays, error)) << error;
  ASSERT_EQ(arrays.size(), 3u);
  EXPECT_EQ(arrays[0].first, "weights");
  expectSameTensor(readOk(inputPath("f32_2x3.npy")), arrays[0].second);
  EXPECT_EQ(arrays[1].first, "ids");
  EXPECT_EQ(arrays[1].second.typeString(), "3xi64");
  EXPECT_EQ(arrays[1].second.ints(), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(arrays[2].first, "mask");
  EXPECT_EQ(arrays[2].second.ints(), (std::vector<int64_t>{1, 0}));
}

TEST(NpyNumpyTest, ReadsSavezCompressed) {
  NamedTensors arrays;
  std::string error;
  ASSERT_TRUE(readNpz(inputPath("savez_compressed.npz"), arrays, error))
      << error;
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].first, "x");
  ASSERT_EQ(arrays[0].second.typeString(), "100xf32");
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(arrays[0].second.floats()[i], float(i));
  EXPECT_EQ(arrays[1].first, "y");
  EXPECT_EQ(arrays[1].second.typeString(), "i32");
  EXPECT_EQ(arrays[1].second.ints(), std::vector<int64_t>{9});
}

//===----------------------------------------------------------------------===//
// .npz writing
//===----------------------------------------------------------------------===//

TEST(NpzTest, KeepsOrderAndStoresNamedMembers) {
  TempDir dir;
  NamedTensors arrays;
  arrays.emplace_back("zeta", sampleTensor(DType::F32, {2, 2}));
  arrays.emplace_back("alpha", sampleTensor(DType::BF16, {}));
  arrays.emplace_back("layer/0.w", sampleTensor(DType::I1, {0}));
  std::string path = dir.file("t.npz"), error;
  writeBytes(path, {'o', 'l', 'd'}); // replaced, not appended to
  ASSERT_TRUE(writeNpz(path, arrays, error)) << error;

  // The first local file header: stored (method 0), named zeta.npy.
  std::vector<uint8_t> bytes = fileBytes(path);
  ASSERT_GT(bytes.size(), 38u);
  EXPECT_EQ(std::memcmp(bytes.data(), "PK\x03\x04", 4), 0);
  EXPECT_EQ(bytes[8] | bytes[9] << 8, 0);
  EXPECT_EQ(std::string(bytes.begin() + 30, bytes.begin() + 38), "zeta.npy");

  NamedTensors read;
  ASSERT_TRUE(readNpz(path, read, error)) << error;
  ASSERT_EQ(read.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(read[i].first, arrays[i].first);
    expectSameTensor(arrays[i].second, read[i].second);
  }
}

TEST(NpzTest, EmptyArchiveRoundTrips) {
  TempDir dir;
  std::string path = dir.file("empty.npz"), error;
  ASSERT_TRUE(writeNpz(path, {}, error)) << error;
  NamedTensors read = {{"stale", HostTensor()}};
  ASSERT_TRUE(readNpz(path, read, error)) << error;
  EXPECT_TRUE(read.empty());
}

// A reader that knows what it wants sees each array's header before its
// data is inflated, and may skip or refuse it there.
TEST(NpzTest, CheckSeesHeadersBeforeData) {
  TempDir dir;
  NamedTensors arrays;
  arrays.emplace_back("a", sampleTensor(DType::F32, {2, 3}));
  arrays.emplace_back("b", sampleTensor(DType::I64, {4}));
  arrays.emplace_back("c", sampleTensor(DType::BF16, {}));
  std::string path = dir.file("t.npz"), error;
  ASSERT_TRUE(writeNpz(path, arrays, error)) << error;

  std::vector<NpzArrayHeader> seen;
  auto skipB = [&](const NpzArrayHeader &header, std::string &) {
    seen.push_back(header);
    return header.name == "b" ? NpzVerdict::Skip : NpzVerdict::Read;
  };
  NamedTensors read;
  ASSERT_TRUE(readNpz(path, read, error, skipB)) << error;
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].name, "a");
  EXPECT_EQ(seen[0].member, "a.npy");
  EXPECT_EQ(seen[0].dtype, DType::F32);
  EXPECT_EQ(seen[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(seen[1].dtype, DType::I64);
  EXPECT_EQ(seen[2].shape, std::vector<int64_t>{});
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].first, "a");
  expectSameTensor(arrays[0].second, read[0].second);
  EXPECT_EQ(read[1].first, "c");

  // A refusal is the check's own message, and leaves `out` as it was.
  auto refuseC = [](const NpzArrayHeader &header, std::string &message) {
    message = "no " + header.name + " here";
    return header.name == "c" ? NpzVerdict::Refuse : NpzVerdict::Read;
  };
  NamedTensors untouched = {{"stale", HostTensor()}};
  EXPECT_FALSE(readNpz(path, untouched, error, refuseC));
  EXPECT_EQ(error, "no c here");
  ASSERT_EQ(untouched.size(), 1u);
  EXPECT_EQ(untouched[0].first, "stale");
}

TEST(NpzTest, RejectsDuplicateNames) {
  TempDir dir;
  NamedTensors arrays;
  arrays.emplace_back("a", HostTensor(DType::F32, {1}));
  arrays.emplace_back("b", HostTensor(DType::F32, {1}));
  arrays.emplace_back("a", HostTensor(DType::I32, {1}));
  std::string path = dir.file("dup.npz"), error;
  EXPECT_FALSE(writeNpz(path, arrays, error));
  EXPECT_NE(error.find("duplicate array name 'a'"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(path));
}

//===----------------------------------------------------------------------===//
// Accepted variants
//===----------------------------------------------------------------------===//

TEST(NpyVariantTest, AcceptsOtherSpellings) {
  std::vector<uint8_t> four = {0, 0, 0x80, 0x3F}; // 1.0f
  EXPECT_EQ(parseOk(craftNpy(npyHeader("=f4", "(1,)"), four)).floats()[0],
            1.0f);
  EXPECT_EQ(parseOk(craftNpy(npyHeader("f4", "(1,)"), four)).floats()[0], 1.0f);
  // No trailing comma, double quotes, Python 2 longs, no padding.
  HostTensor t = parseOk(craftNpy(
      "{\"shape\": (1L, 1L), \"fortran_order\": False, \"descr\": \"<f4\"}",
      four));
  EXPECT_EQ(t.typeString(), "1x1xf32");
  // bf16 bit patterns as '<V2' and '<u2'; 0x3F80 is 1.0.
  for (const char *descr : {"<V2", "<u2", "=V2"}) {
    HostTensor bf16 = parseOk(craftNpy(npyHeader(descr, "()"), {0x80, 0x3F}));
    EXPECT_EQ(bf16.typeString(), "bf16") << descr;
    EXPECT_EQ(bf16.floats()[0], 1.0f) << descr;
  }
  // One byte has no byte order.
  for (const char *descr : {"<b1", ">b1", "=b1"})
    EXPECT_EQ(parseOk(craftNpy(npyHeader(descr, "(2,)"), {0, 7})).ints(),
              (std::vector<int64_t>{0, 1}))
        << descr;
}

TEST(NpyVariantTest, AcceptsFortranOrderUpToOneDimension) {
  HostTensor t = parseOk(
      craftNpy(npyHeader("<i4", "(2,)", "True"), {1, 0, 0, 0, 2, 0, 0, 0}));
  EXPECT_EQ(t.ints(), (std::vector<int64_t>{1, 2}));
}

//===----------------------------------------------------------------------===//
// Rejections
//===----------------------------------------------------------------------===//

#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos)                   \
      << "'" << (text) << "' lacks '" << (part) << "'"

TEST(NpyRejectTest, BigEndian) {
  std::string error = readError(inputPath("big_endian.npy"));
  EXPECT_CONTAINS(error, "big-endian");
  EXPECT_CONTAINS(error, "'>f4'");
  EXPECT_CONTAINS(parseError(craftNpy(npyHeader(">V2", "()"), {0, 0})),
                  "big-endian");
}

TEST(NpyRejectTest, FortranOrder) {
  std::string error = readError(inputPath("fortran.npy"));
  EXPECT_CONTAINS(error, "fortran_order");
  EXPECT_CONTAINS(error, "np.ascontiguousarray");
}

TEST(NpyRejectTest, UnsupportedDTypes) {
  std::string f64 = readError(inputPath("f64.npy"));
  EXPECT_CONTAINS(f64, "unsupported dtype '<f8'");
  EXPECT_CONTAINS(f64, "f64 must be cast to f32");
  EXPECT_CONTAINS(f64, "supported dtypes are '<f4' (f32)");
  EXPECT_CONTAINS(readError(inputPath("u8.npy")), "unsupported dtype '|u1'");
  EXPECT_CONTAINS(readError(inputPath("object.npy")), "unsupported dtype '|O'");
  EXPECT_CONTAINS(parseError(craftNpy(npyHeader("|f4", "()"), {0, 0, 0, 0})),
                  "'|f4' has no byte order");
  EXPECT_CONTAINS(
      parseError(craftNpy("{'descr': [('a', '<f4'), ('b', '<i4')], "
                          "'fortran_order': False, 'shape': (1,), }",
                          std::vector<uint8_t>(8))),
      "structured dtypes are not supported");
}

TEST(NpyRejectTest, TruncatedOrTrailingData) {
  std::vector<uint8_t> bytes = fileBytes(inputPath("f32_2x3.npy"));
  bytes.resize(bytes.size() - 4);
  std::string error = parseError(bytes);
  EXPECT_CONTAINS(error, "truncated data: expected 24 bytes");
  EXPECT_CONTAINS(error, "got 20");
  bytes.resize(bytes.size() + 5);
  EXPECT_CONTAINS(parseError(bytes), "trailing data");
  bytes.resize(50);
  EXPECT_CONTAINS(parseError(bytes), "truncated header: expected 118 bytes");
}

TEST(NpyRejectTest, BadMagicAndVersion) {
  EXPECT_CONTAINS(parseError({}), "not an NPY file (bad magic");
  EXPECT_CONTAINS(parseError({'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0}),
                  "bad magic");
  EXPECT_CONTAINS(parseError({0x93, 'N', 'U', 'M', 'P', 'Y', 1}),
                  "truncated NPY preamble");
  EXPECT_CONTAINS(parseError({0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 9, 0}),
                  "truncated NPY preamble");
  EXPECT_CONTAINS(parseError(craftNpy(npyHeader("<f4", "()"), {}, 4)),
                  "unsupported NPY format version 4.0");
}

TEST(NpyRejectTest, MalformedHeaders) {
  const std::pair<const char *, const char *> cases[] = {
      {"['descr', '<f4']", "header is not a dict literal"},
      {"{'descr': '<f4', 'shape': ()}", "no 'fortran_order' key"},
      {"{'fortran_order': False, 'shape': ()}", "no 'descr' key"},
      {"{'descr': '<f4', 'fortran_order': False}", "no 'shape' key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}",
       "cannot parse the value of 'x'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 'y'}",
       "unexpected key 'x'"},
      {"{'descr': '<f4', 'fortran_order': 'no', 'shape': ()}",
       "'fortran_order' is not a bool"},
      {"{'descr': 4, 'fortran_order': False, 'shape': ()}",
       "cannot parse the value of 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 'x'}",
       "'shape' is not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}",
       "not a tuple of 64-bit integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}",
       "expected ',' or ')'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,",
       "not a tuple of 64-bit integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(99999999999999999999,)}",
       "not a tuple of 64-bit integers"},
      {"{'descr: '<f4'}", "expected ':'"},
      {"{'descr': '<f4", "unterminated string"},
      {"{'descr': '<f4' 'fortran_order': False}", "expected ',' or '}'"},
      {"{'descr': '<f4', 'descr': '<f4'}", "duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ()} x",
       "unexpected text after the dict"},
      {"{descr: '<f4'}", "expected a quoted string"},
      {"{'descr': [('a', '<f4'), 'fortran_order': False}", "unterminated list"},
      {"", "header is not a dict literal"},
  };
  for (const auto &[header, message] : cases) {
    std::string error = parseError(craftNpy(header, {0, 0, 0, 0}));
    EXPECT_CONTAINS(error, "malformed header");
    EXPECT_CONTAINS(error, message);
  }
}

TEST(NpyRejectTest, BadShapes) {
  EXPECT_CONTAINS(parseError(craftNpy(npyHeader("<f4", "(-1, 3)"))),
                  "negative dimension in shape (-1, 3)");
  EXPECT_CONTAINS(
      parseError(craftNpy(npyHeader("<f4", "(1000000000000, 1000000000000)"))),
      "is absurdly large");
  // Zero elements, yet strides would still overflow.
  EXPECT_CONTAINS(
      parseError(craftNpy(npyHeader("<i8", "(0, 4611686018427387904, 4)"))),
      "is absurdly large");
  // Big but plausible: caught as truncated, before any allocation.
  EXPECT_CONTAINS(parseError(craftNpy(npyHeader("<f4", "(1000000000,)"))),
                  "truncated data: expected 4000000000 bytes");
}

TEST(NpyRejectTest, UnreadableFiles) {
  TempDir dir;
  std::string missing = dir.file("missing.npy");
  std::string error = readError(missing);
  EXPECT_CONTAINS(error, "cannot open: No such file or directory");
  EXPECT_CONTAINS(readError(dir.file("")), "Is a directory");
  EXPECT_CONTAINS(readNpzError(dir.file("missing.npz")),
                  "No such file or directory");

  HostTensor tensor(DType::F32, {1});
  std::string nowhere = dir.file("no/such/dir/t.npy");
  EXPECT_FALSE(writeNpy(nowhere, tensor, error));
  EXPECT_CONTAINS(error, nowhere + ": cannot open for writing: No such file");
  nowhere = dir.file("no/such/dir/t.npz");
  EXPECT_FALSE(writeNpz(nowhere, {{"t", tensor}}, error));
  EXPECT_CONTAINS(error, nowhere);
}

TEST(NpzRejectTest, NotAnArchive) {
  TempDir dir;
  EXPECT_CONTAINS(readNpzError(inputPath("f32_2x3.npy")),
                  "not a readable .npz (zip) archive");
  std::string empty = dir.file("empty.npz");
  writeBytes(empty, {});
  EXPECT_CONTAINS(readNpzError(empty), "empty file, not an .npz archive");
  std::vector<uint8_t> cut = fileBytes(inputPath("savez.npz"));
  cut.resize(cut.size() / 2);
  std::string truncated = dir.file("cut.npz");
  writeBytes(truncated, cut);
  readNpzError(truncated);
}

TEST(NpzRejectTest, InvalidMember) {
  std::string error = readNpzError(inputPath("bad_member.npz"));
  EXPECT_CONTAINS(error, "member 'broken.npy'");
  EXPECT_CONTAINS(error, "not an NPY file");
}

TEST(NpzRejectTest, CorruptMemberData) {
  // Flip a data byte of the stored archive: libzip's CRC check catches it.
  TempDir dir;
  std::vector<uint8_t> bytes = fileBytes(inputPath("savez.npz"));
  size_t nameSize = bytes[26] | bytes[27] << 8;
  size_t extraSize = bytes[28] | bytes[29] << 8;
  bytes[30 + nameSize + extraSize + 140] ^= 0xFF; // in weights.npy's data
  std::string path = dir.file("crc.npz");
  writeBytes(path, bytes);
  EXPECT_CONTAINS(readNpzError(path), "member 'weights.npy'");
}

//===----------------------------------------------------------------------===//
// Robustness: malformed input never crashes or reads out of bounds.
//===----------------------------------------------------------------------===//

TEST(NpyFuzzTest, EveryTruncationFails) {
  for (const char *name : {"f32_2x3.npy", "i32_v3.npy", "f32_0x3.npy"}) {
    std::vector<uint8_t> bytes = fileBytes(inputPath(name));
    for (size_t size = 0; size < bytes.size(); ++size) {
      // A copy of exactly `size` bytes, so that a sanitizer sees overreads.
      std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + size);
      HostTensor tensor;
      std::string error;
      bool ok = parseNpy(prefix.data(), prefix.size(), tensor, error);
      // f32_0x3 has no data, so only the full file parses.
      EXPECT_FALSE(ok) << name << " cut to " << size;
    }
  }
}

TEST(NpyFuzzTest, CorruptHeadersNeverCrash) {
  std::mt19937 random(1234);
  const char alphabet[] = "{}()[]':,- 0123456789TrueFalsL<>|=f4V2\\\"\n";
  for (const char *name : {"f32_2x3.npy", "bf16_2x2.npy", "i64_scalar.npy"}) {
    std::vector<uint8_t> original = fileBytes(inputPath(name));
    for (int trial = 0; trial < 3000; ++trial) {
      std::vector<uint8_t> bytes = original;
      int edits = 1 + random() % 4;
      for (int i = 0; i < edits; ++i) {
        size_t at = random() % bytes.size();
        bytes[at] = trial % 2 ? alphabet[random() % (sizeof alphabet - 1)]
                              : static_cast<uint8_t>(random());
      }
      HostTensor tensor;
      std::string error;
      if (!parseNpy(bytes.data(), bytes.size(), tensor, error))
        EXPECT_FALSE(error.empty());
      else
        EXPECT_EQ(static_cast<size_t>(tensor.numElements()) *
                      dtypeSize(tensor.dtype()),
                  tensor.toBytes().size());
    }
  }
}

} // namespace
