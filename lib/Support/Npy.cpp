//===- Npy.cpp - NumPy .npy/.npz reader and writer ------------------------===//
//
// The .npy format: the magic "\x93NUMPY", a major and a minor version byte, a
// little-endian header length (2 bytes in version 1.0, 4 in 2.0 and 3.0), then
// the header, a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline, then the raw elements.
//
//===----------------------------------------------------------------------===//

#include "fuse/Support/Npy.h"

#include <zip.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string_view>

namespace fuse {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy aligns the data to 64 bytes so that files can be memory-mapped.
constexpr size_t kArrayAlign = 64;
// numpy pads the header so that the first dimension can grow in place to any
// 64-bit size without rewriting the file; matching it keeps files identical.
constexpr size_t kGrowthAxisMaxDigits = 21;
// Bounds the element count, ignoring zero dimensions, so that strides and
// byte counts cannot overflow even for an empty tensor.
constexpr int64_t kMaxElements = int64_t(1) << 56;

constexpr const char *kSupportedDTypes =
    "supported dtypes are '<f4' (f32), '<f2' (f16), '|V2' (bf16 bit "
    "patterns), '<i8' (i64), '<i4' (i32) and '|b1' (i1)";

/// Sets `error` and returns false, so that a failed check takes one line.
bool fail(std::string &error, std::string message) {
  error = std::move(message);
  return false;
}

std::string quoted(std::string_view text) {
  return "'" + std::string(text) + "'";
}

/// Python's repr of a shape tuple: "()", "(5,)", "(2, 3)".
std::string shapeString(const std::vector<int64_t> &shape) {
  if (shape.size() == 1)
    return "(" + std::to_string(shape[0]) + ",)";
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + ")";
}

//===----------------------------------------------------------------------===//
// Header dict parsing
//===----------------------------------------------------------------------===//

/// One value of the header dict. Only the forms an .npy header uses are
/// understood; a list or a tuple outside 'shape' (a structured dtype's descr)
/// is skipped and kept as Other.
struct HeaderValue {
  enum Kind { String, Bool, IntTuple, Other } kind = Other;
  std::string text;
  bool flag = false;
  std::vector<int64_t> ints;
};

using HeaderDict = std::map<std::string, HeaderValue>;

/// A recursive-descent parser for the Python literals numpy writes. It reads
/// through a string_view, so it cannot run past the header.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  bool parseDict(HeaderDict &dict, std::string &error) {
    skipSpace();
    if (!consume('{'))
      return malformed("header is not a dict literal", error);
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key, error))
        return false;
      skipSpace();
      if (!consume(':'))
        return malformed("expected ':' after key " + quoted(key), error);
      HeaderValue value;
      if (!parseValue(key, value, error))
        return false;
      if (!dict.emplace(key, std::move(value)).second)
        return malformed("duplicate key " + quoted(key), error);
      skipSpace();
      if (consume('}'))
        break;
      if (!consume(','))
        return malformed("expected ',' or '}' after " + quoted(key), error);
    }
    skipSpace();
    if (!atEnd())
      return malformed("unexpected text after the dict", error);
    return true;
  }

private:
  bool malformed(const std::string &what, std::string &error) {
    return fail(error, "malformed header: " + what);
  }

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }

  void skipSpace() {
    while (!atEnd() &&
           std::string_view(" \t\r\n").find(peek()) != std::string_view::npos)
      ++pos_;
  }

  bool consume(char c) {
    if (atEnd() || peek() != c)
      return false;
    ++pos_;
    return true;
  }

  bool consumeWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word)
      return false;
    pos_ += word.size();
    return true;
  }

  bool parseString(std::string &out, std::string &error) {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return malformed("expected a quoted string", error);
    ++pos_;
    while (!atEnd() && peek() != quote) {
      if (peek() == '\\' && pos_ + 1 < text_.size())
        ++pos_;
      out += text_[pos_++];
    }
    if (!consume(quote))
      return malformed("unterminated string", error);
    return true;
  }

  bool parseValue(const std::string &key, HeaderValue &value,
                  std::string &error) {
    skipSpace();
    char c = peek();
    bool isTrue = consumeWord("True");
    if (isTrue || consumeWord("False")) {
      value.kind = HeaderValue::Bool;
      value.flag = isTrue;
      return true;
    }
    if (c == '\'' || c == '"') {
      value.kind = HeaderValue::String;
      return parseString(value.text, error);
    }
    if (c == '(' && key == "shape") {
      value.kind = HeaderValue::IntTuple;
      return parseIntTuple(value.ints, error);
    }
    value.kind = HeaderValue::Other;
    if (c == '(' || c == '[')
      return skipBracketed(error);
    return malformed("cannot parse the value of " + quoted(key), error);
  }

  /// "(2, 3)", "(5,)", "()".
  bool parseIntTuple(std::vector<int64_t> &ints, std::string &error) {
    consume('(');
    skipSpace();
    while (!consume(')')) {
      int64_t value;
      if (!parseInt(value))
        return malformed("'shape' is not a tuple of 64-bit integers", error);
      ints.push_back(value);
      skipSpace();
      if (consume(')'))
        break;
      if (!consume(','))
        return malformed("expected ',' or ')' in 'shape'", error);
      skipSpace();
    }
    return true;
  }

  /// An int64, rejecting any out of range; Python 2 suffixed longs with L.
  bool parseInt(int64_t &value) {
    const char *begin = text_.data() + pos_;
    auto [next, status] =
        std::from_chars(begin, text_.data() + text_.size(), value);
    if (status != std::errc())
      return false;
    pos_ += next - begin;
    if (peek() == 'L' || peek() == 'l')
      ++pos_;
    return true;
  }

  /// Skips a list or tuple literal, quotes and nesting included.
  bool skipBracketed(std::string &error) {
    int depth = 0;
    while (!atEnd()) {
      char c = peek();
      if (c == '\'' || c == '"') {
        std::string ignored;
        if (!parseString(ignored, error))
          return false;
        continue;
      }
      ++pos_;
      if (c == '[' || c == '(')
        ++depth;
      else if ((c == ']' || c == ')') && --depth == 0)
        return true;
    }
    return malformed("unterminated list", error);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

//===----------------------------------------------------------------------===//
// Header interpretation
//===----------------------------------------------------------------------===//

std::string unsupportedDTypeError(const std::string &descr,
                                  std::string_view code) {
  std::string message =
      "unsupported dtype " + quoted(descr) + " (" + kSupportedDTypes + ")";
  if (code == "f8")
    return message + "; f64 must be cast to f32 first: a.astype(np.float32)";
  if (!code.empty() && (code[0] == 'i' || code[0] == 'u'))
    return message + "; cast integers to np.int32 or np.int64 first";
  return message;
}

bool parseDescr(const std::string &descr, DType &dtype, std::string &error) {
  static const std::map<std::string_view, DType> kCodes = {
      {"f4", DType::F32}, {"f2", DType::F16}, {"i8", DType::I64},
      {"i4", DType::I32}, {"b1", DType::I1},  {"V2", DType::BF16},
      {"u2", DType::BF16}};
  std::string_view code = descr;
  char order = '=';
  if (!code.empty() &&
      std::string_view("<>|=").find(code[0]) != std::string_view::npos) {
    order = code[0];
    code.remove_prefix(1);
  }
  auto it = kCodes.find(code);
  if (it == kCodes.end())
    return fail(error, unsupportedDTypeError(descr, code));
  // Byte order is moot for one byte. Void has none, hence '|V2', but '>V2'
  // or '>u2' would be big-endian bit patterns.
  bool oneByte = code == "b1";
  if (order == '>' && !oneByte)
    return fail(error, "big-endian data (dtype " + quoted(descr) +
                           ") is not supported; convert with "
                           "a.astype(a.dtype.newbyteorder('<'))");
  if (order == '|' && !oneByte && code != "V2")
    return fail(error, "dtype " + quoted(descr) + " has no byte order; " +
                           "expected " + quoted("<" + std::string(code)));
  dtype = it->second;
  return true;
}

bool checkShape(const std::vector<int64_t> &shape, std::string &error) {
  int64_t elements = 1;
  for (int64_t size : shape) {
    if (size < 0)
      return fail(error, "negative dimension in shape " + shapeString(shape));
    if (size > 1 && elements > kMaxElements / size)
      return fail(error, "shape " + shapeString(shape) + " is absurdly large");
    elements *= size > 0 ? size : 1;
  }
  return true;
}

/// Checks the dict's keys and the kinds of their values.
bool checkKeys(const HeaderDict &dict, std::string &error) {
  struct Key {
    const char *name;
    HeaderValue::Kind kind;
    const char *kindName;
  };
  static const Key kKeys[] = {
      {"descr", HeaderValue::String, "a string"},
      {"fortran_order", HeaderValue::Bool, "a bool"},
      {"shape", HeaderValue::IntTuple, "a tuple of integers"}};
  for (const auto &entry : dict)
    if (entry.first != "descr" && entry.first != "fortran_order" &&
        entry.first != "shape")
      return fail(error,
                  "malformed header: unexpected key " + quoted(entry.first));
  for (const Key &key : kKeys) {
    auto it = dict.find(key.name);
    if (it == dict.end())
      return fail(error,
                  std::string("malformed header: no '") + key.name + "' key");
    // A descr that is a list is a structured dtype: rejected later, clearly.
    bool structured = key.kind == HeaderValue::String &&
                      it->second.kind == HeaderValue::Other;
    if (it->second.kind != key.kind && !structured)
      return fail(error, std::string("malformed header: '") + key.name +
                             "' is not " + key.kindName);
  }
  return true;
}

bool interpretHeader(const HeaderDict &dict, DType &dtype,
                     std::vector<int64_t> &shape, std::string &error) {
  if (!checkKeys(dict, error))
    return false;
  const HeaderValue &descr = dict.at("descr");
  const std::vector<int64_t> &dims = dict.at("shape").ints;
  if (descr.kind != HeaderValue::String)
    return fail(error, "structured dtypes are not supported (" +
                           std::string(kSupportedDTypes) + ")");
  if (!parseDescr(descr.text, dtype, error) || !checkShape(dims, error))
    return false;
  // With at most one dimension both orders lay the data out the same way.
  if (dict.at("fortran_order").flag && dims.size() > 1)
    return fail(error, "fortran_order arrays are not supported; save with "
                       "np.ascontiguousarray(a)");
  shape = dims;
  return true;
}

/// Checks the magic and version (the first 8 bytes); `lengthBytes` is the
/// width of the header length after them.
bool parseMagicAndVersion(const uint8_t *data, size_t size,
                          size_t &lengthBytes, std::string &error) {
  if (size < kMagicSize || std::memcmp(data, kMagic, kMagicSize) != 0)
    return fail(error, "not an NPY file (bad magic: expected \\x93NUMPY)");
  if (size < kMagicSize + 2)
    return fail(error, "truncated NPY preamble");
  uint8_t major = data[6], minor = data[7];
  if (major < 1 || major > 3 || minor != 0)
    return fail(error, "unsupported NPY format version " +
                           std::to_string(major) + "." + std::to_string(minor) +
                           " (1.0, 2.0 and 3.0 are supported)");
  lengthBytes = major == 1 ? 2 : 4;
  return true;
}

/// Checks the magic and version; finds the header.
bool parsePreamble(const uint8_t *data, size_t size, size_t &headerStart,
                   size_t &headerSize, std::string &error) {
  size_t lengthBytes = 0;
  if (!parseMagicAndVersion(data, size, lengthBytes, error))
    return false;
  headerStart = kMagicSize + 2 + lengthBytes;
  if (size < headerStart)
    return fail(error, "truncated NPY preamble");
  headerSize = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerSize |= size_t(data[kMagicSize + 2 + i]) << (8 * i);
  if (headerSize > size - headerStart)
    return fail(error, "truncated header: expected " +
                           std::to_string(headerSize) + " bytes, got " +
                           std::to_string(size - headerStart));
  return true;
}

const char *descrOf(DType dtype) {
  switch (dtype) {
  case DType::F32: return "<f4";
  case DType::F16: return "<f2";
  case DType::BF16: return "|V2";
  case DType::I64: return "<i8";
  case DType::I32: return "<i4";
  case DType::I1: return "|b1";
  }
  return "?";
}

} // namespace

//===----------------------------------------------------------------------===//
// In-memory .npy
//===----------------------------------------------------------------------===//

bool parseNpy(const uint8_t *data, size_t size, HostTensor &out,
              std::string &error) {
  size_t headerStart = 0, headerSize = 0;
  if (!parsePreamble(data, size, headerStart, headerSize, error))
    return false;
  // Versions 1.0 and 2.0 use latin-1, 3.0 UTF-8: what matters is ASCII.
  std::string_view text(reinterpret_cast<const char *>(data) + headerStart,
                        headerSize);
  HeaderDict dict;
  DType dtype;
  std::vector<int64_t> shape;
  if (!HeaderParser(text).parseDict(dict, error) ||
      !interpretHeader(dict, dtype, shape, error))
    return false;

  // checkShape bounded the product, so none of this overflows.
  int64_t elements = 1;
  for (int64_t dim : shape)
    elements *= dim;
  size_t expected = static_cast<size_t>(elements) * dtypeSize(dtype);
  size_t available = size - headerStart - headerSize;
  if (available != expected)
    return fail(error,
                std::string(available < expected ? "truncated" : "trailing") +
                    " data: expected " + std::to_string(expected) +
                    " bytes for " + shapeString(shape) + " " +
                    dtypeName(dtype) + ", got " + std::to_string(available));
  out = HostTensor::fromBytes(dtype, std::move(shape),
                              data + headerStart + headerSize, expected);
  return true;
}

std::vector<uint8_t> serializeNpy(const HostTensor &t) {
  // The same text, key order and padding as numpy's _write_array_header.
  std::string dict =
      std::string("{'descr': '") + descrOf(t.dtype()) +
      "', 'fortran_order': False, 'shape': " + shapeString(t.shape()) + ", }";
  if (t.rank() > 0) {
    size_t digits = std::to_string(t.shape()[0]).size();
    if (digits < kGrowthAxisMaxDigits)
      dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  // The padded header length, newline included, as numpy computes it (an
  // already aligned header still gets kArrayAlign more spaces).
  auto paddedSize = [&](size_t lengthBytes) {
    size_t unpadded = kMagicSize + 2 + lengthBytes + dict.size() + 1;
    return dict.size() + 1 + kArrayAlign - unpadded % kArrayAlign;
  };
  // Version 1.0 unless its 16-bit length cannot hold the header, which takes
  // a rank in the thousands.
  size_t lengthBytes = 2;
  size_t padded = paddedSize(lengthBytes);
  if (padded > 0xFFFF)
    padded = paddedSize(lengthBytes = 4);
  dict.append(padded - 1 - dict.size(), ' ');
  dict += '\n';

  std::vector<uint8_t> bytes(kMagic, kMagic + kMagicSize);
  bytes.push_back(lengthBytes == 2 ? 1 : 2);
  bytes.push_back(0);
  for (size_t i = 0; i < lengthBytes; ++i)
    bytes.push_back(static_cast<uint8_t>(padded >> (8 * i)));
  bytes.insert(bytes.end(), dict.begin(), dict.end());
  std::vector<uint8_t> data = t.toBytes();
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

namespace {

using FilePtr = std::unique_ptr<FILE, int (*)(FILE *)>;

FilePtr openFile(const std::string &path, const char *mode) {
  return FilePtr(std::fopen(path.c_str(), mode), &std::fclose);
}

std::string systemError(const std::string &path, const char *what) {
  return path + ": " + what + ": " + std::strerror(errno);
}

bool readFile(const std::string &path, std::vector<uint8_t> &bytes,
              std::string &error) {
  FilePtr file = openFile(path, "rb");
  if (!file)
    return fail(error, systemError(path, "cannot open"));
  uint8_t chunk[1 << 16];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, file.get())) > 0)
    bytes.insert(bytes.end(), chunk, chunk + got);
  if (std::ferror(file.get()))
    return fail(error, systemError(path, "cannot read"));
  return true;
}

bool writeFile(const std::string &path, const std::vector<uint8_t> &bytes,
               std::string &error) {
  FilePtr file = openFile(path, "wb");
  if (!file)
    return fail(error, systemError(path, "cannot open for writing"));
  // fclose flushes, so a full disk may only show there.
  if (std::fwrite(bytes.data(), 1, bytes.size(), file.get()) != bytes.size() ||
      std::fclose(file.release()) != 0)
    return fail(error, systemError(path, "cannot write"));
  return true;
}

} // namespace

bool readNpy(const std::string &path, HostTensor &out, std::string &error) {
  std::vector<uint8_t> bytes;
  if (!readFile(path, bytes, error))
    return false;
  if (!parseNpy(bytes.data(), bytes.size(), out, error))
    return fail(error, path + ": " + error);
  return true;
}

bool writeNpy(const std::string &path, const HostTensor &t,
              std::string &error) {
  return writeFile(path, serializeNpy(t), error);
}

//===----------------------------------------------------------------------===//
// .npz archives
//===----------------------------------------------------------------------===//

namespace {

struct ArchiveCloser {
  void operator()(zip_t *archive) const { zip_discard(archive); }
};
struct MemberCloser {
  void operator()(zip_file_t *file) const { zip_fclose(file); }
};
using ArchivePtr = std::unique_ptr<zip_t, ArchiveCloser>;
using MemberPtr = std::unique_ptr<zip_file_t, MemberCloser>;

std::string zipErrorString(int code) {
  zip_error_t zipError;
  zip_error_init_with_code(&zipError, code);
  std::string text = zip_error_strerror(&zipError);
  zip_error_fini(&zipError);
  return text;
}

/// Reads up to `size` bytes of a member into `out`; returns how many were
/// read (fewer only at the member's end), or -1 with `error` set.
int64_t readSome(zip_file_t *file, uint8_t *out, size_t size,
                 std::string &error) {
  size_t done = 0;
  while (done < size) {
    zip_int64_t got = zip_fread(file, out + done, size - done);
    if (got < 0) {
      error = zip_file_strerror(file);
      return -1;
    }
    if (got == 0)
      break;
    done += static_cast<size_t>(got);
  }
  return static_cast<int64_t>(done);
}

/// Reads exactly `size` bytes of a member or fails, naming `what`.
bool readExactly(zip_file_t *file, uint8_t *out, size_t size, const char *what,
                 std::string &error) {
  int64_t got = readSome(file, out, size, error);
  if (got < 0)
    return false;
  if (static_cast<size_t>(got) < size)
    return fail(error, std::string("truncated ") + what + ": expected " +
                           std::to_string(size) + " bytes, got " +
                           std::to_string(got));
  return true;
}

/// The most bytes an .npy header may take: numpy's own reader stops at
/// 10,000 by default; this leaves room for ranks in the thousands.
constexpr size_t kMaxHeaderBytes = size_t(1) << 20;

/// An .npy member's preamble and header, read from the front of the
/// member's stream without reading any of its data.
struct MemberHeader {
  DType dtype;
  std::vector<int64_t> shape;
  /// Bytes of the preamble and header, and of the data they announce.
  size_t headerBytes = 0, dataBytes = 0;
};

bool readMemberHeader(zip_file_t *file, MemberHeader &header,
                      std::string &error) {
  // Magic, version, then a 2- or 4-byte header length.
  std::vector<uint8_t> prefix(kMagicSize + 2);
  int64_t got = readSome(file, prefix.data(), prefix.size(), error);
  if (got < 0)
    return false;
  size_t lengthBytes = 0;
  if (!parseMagicAndVersion(prefix.data(), static_cast<size_t>(got),
                            lengthBytes, error))
    return false;
  prefix.resize(kMagicSize + 2 + lengthBytes);
  if (!readExactly(file, prefix.data() + kMagicSize + 2, lengthBytes,
                   "NPY preamble", error))
    return false;
  size_t headerSize = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerSize |= size_t(prefix[kMagicSize + 2 + i]) << (8 * i);
  if (headerSize > kMaxHeaderBytes)
    return fail(error, "malformed header: " + std::to_string(headerSize) +
                           " bytes long (at most " +
                           std::to_string(kMaxHeaderBytes) + ")");
  std::string text(headerSize, '\0');
  if (!readExactly(file, reinterpret_cast<uint8_t *>(text.data()), headerSize,
                   "header", error))
    return false;
  HeaderDict dict;
  if (!HeaderParser(text).parseDict(dict, error) ||
      !interpretHeader(dict, header.dtype, header.shape, error))
    return false;
  // checkShape bounded the product, so none of this overflows.
  int64_t elements = 1;
  for (int64_t dim : header.shape)
    elements *= dim;
  header.headerBytes = prefix.size() + headerSize;
  header.dataBytes = static_cast<size_t>(elements) * dtypeSize(header.dtype);
  return true;
}

/// Reads the data `header` announces, in chunks, so that memory grows only
/// with data that is really there; then makes sure the member ends (which
/// is also when libzip checks its CRC).
bool readMemberData(zip_file_t *file, const MemberHeader &header,
                    HostTensor &out, std::string &error) {
  constexpr size_t kChunk = size_t(1) << 24;
  std::vector<uint8_t> data;
  while (data.size() < header.dataBytes) {
    size_t before = data.size();
    size_t want = std::min(kChunk, header.dataBytes - before);
    data.resize(before + want);
    int64_t got = readSome(file, data.data() + before, want, error);
    if (got < 0)
      return false;
    if (static_cast<size_t>(got) < want)
      return fail(error, "truncated data: expected " +
                             std::to_string(header.dataBytes) + " bytes for " +
                             shapeString(header.shape) + " " +
                             dtypeName(header.dtype) + ", got " +
                             std::to_string(before + got));
  }
  uint8_t extra;
  int64_t more = readSome(file, &extra, 1, error);
  if (more < 0)
    return false;
  if (more > 0)
    return fail(error, "trailing data: expected " +
                           std::to_string(header.dataBytes) + " bytes for " +
                           shapeString(header.shape) + " " +
                           dtypeName(header.dtype) + ", got more");
  out = HostTensor::fromBytes(header.dtype, header.shape, data.data(),
                              data.size());
  return true;
}

std::string arrayName(const std::string &member) {
  constexpr size_t kSuffixSize = 4;
  if (member.size() >= kSuffixSize &&
      member.compare(member.size() - kSuffixSize, kSuffixSize, ".npy") == 0)
    return member.substr(0, member.size() - kSuffixSize);
  return member;
}

/// libzip opens a zero-byte file as an empty archive, and words a missing
/// file less plainly than strerror: check both first.
bool checkArchiveFile(const std::string &path, std::string &error) {
  FilePtr file = openFile(path, "rb");
  if (!file)
    return fail(error, systemError(path, "cannot open"));
  if (std::fgetc(file.get()) != EOF)
    return true;
  if (std::ferror(file.get()))
    return fail(error, systemError(path, "cannot read"));
  return fail(error, path + ": empty file, not an .npz archive");
}

/// libzip writes no file at all for an archive without entries, while
/// np.savez() writes a bare end-of-central-directory record: do the same.
bool writeEmptyZip(const std::string &path, std::string &error) {
  std::vector<uint8_t> record(22, 0);
  std::memcpy(record.data(), "PK\x05\x06", 4);
  return writeFile(path, record, error);
}

} // namespace

bool readNpz(const std::string &path, NamedTensors &out, std::string &error,
             const NpzArrayCheck &check) {
  if (!checkArchiveFile(path, error))
    return false;
  int code = 0;
  ArchivePtr archive(zip_open(path.c_str(), ZIP_RDONLY, &code));
  if (!archive)
    return fail(error, path + ": not a readable .npz (zip) archive: " +
                           zipErrorString(code));
  // Every member's name first: two that name one array are refused before
  // anything is inflated (which one would count is anyone's guess).
  struct Member {
    zip_uint64_t index;
    std::string name;
    zip_stat_t stat;
  };
  std::vector<Member> members;
  std::map<std::string, std::string> memberOfArray;
  zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    Member member{static_cast<zip_uint64_t>(i), {}, {}};
    zip_stat_init(&member.stat);
    if (zip_stat_index(archive.get(), member.index, 0, &member.stat) != 0 ||
        !(member.stat.valid & ZIP_STAT_NAME))
      return fail(error, path + ": cannot read entry " + std::to_string(i) +
                             ": " + zip_strerror(archive.get()));
    member.name = member.stat.name;
    if (!member.name.empty() && member.name.back() == '/')
      continue; // a directory entry
    auto [at, fresh] =
        memberOfArray.emplace(arrayName(member.name), member.name);
    if (!fresh)
      return fail(error,
                  path + ": " +
                      (at->second == member.name
                           ? "two members are named " + quoted(member.name)
                           : "members " + quoted(at->second) + " and " +
                                 quoted(member.name) + " both hold array " +
                                 quoted(at->first)) +
                      " (an archive names each array once)");
    members.push_back(std::move(member));
  }

  NamedTensors arrays;
  for (const Member &member : members) {
    auto memberError = [&](const std::string &what) {
      return fail(error, path + ": member " + quoted(member.name) + ": " + what);
    };
    MemberPtr file(zip_fopen_index(archive.get(), member.index, 0));
    if (!file)
      return memberError(zip_strerror(archive.get()));
    MemberHeader header;
    std::string why;
    if (!readMemberHeader(file.get(), header, why))
      return memberError(why);
    // The member's declared size must be what its header announces: a
    // mismatch is refused before the data is inflated.
    if ((member.stat.valid & ZIP_STAT_SIZE) &&
        member.stat.size != header.headerBytes + header.dataBytes)
      return memberError(
          std::string(member.stat.size < header.headerBytes + header.dataBytes
                          ? "truncated"
                          : "trailing") +
          " data: expected " + std::to_string(header.dataBytes) +
          " bytes for " + shapeString(header.shape) + " " +
          dtypeName(header.dtype) + ", the member holds " +
          std::to_string(member.stat.size - std::min<zip_uint64_t>(
                                                member.stat.size,
                                                header.headerBytes)));
    NpzArrayHeader described{arrayName(member.name), member.name,
                             header.dtype, header.shape};
    NpzVerdict verdict = check ? check(described, error) : NpzVerdict::Read;
    if (verdict == NpzVerdict::Refuse)
      return false;
    if (verdict == NpzVerdict::Skip)
      continue;
    HostTensor tensor;
    if (!readMemberData(file.get(), header, tensor, why))
      return memberError(why);
    arrays.emplace_back(described.name, std::move(tensor));
  }
  out = std::move(arrays);
  return true;
}

bool writeNpz(const std::string &path, const NamedTensors &arrays,
              std::string &error) {
  std::set<std::string> names;
  for (const auto &array : arrays)
    if (!names.insert(array.first).second)
      return fail(error,
                  path + ": duplicate array name " + quoted(array.first));
  if (arrays.empty())
    return writeEmptyZip(path, error);

  int code = 0;
  ArchivePtr archive(zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
  if (!archive)
    return fail(error,
                path + ": cannot create archive: " + zipErrorString(code));
  // libzip reads the sources only in zip_close: keep them alive until then.
  std::vector<std::vector<uint8_t>> files;
  files.reserve(arrays.size());
  for (const auto &array : arrays) {
    files.push_back(serializeNpy(array.second));
    std::string member = array.first + ".npy";
    zip_source_t *source = zip_source_buffer(archive.get(), files.back().data(),
                                             files.back().size(), 0);
    zip_int64_t index =
        source ? zip_file_add(archive.get(), member.c_str(), source, 0) : -1;
    if (index < 0) {
      zip_source_free(source);
      return fail(error, path + ": cannot add " + quoted(member) + ": " +
                             zip_strerror(archive.get()));
    }
    // np.savez stores its members; so do we, which keeps writing cheap.
    zip_set_file_compression(archive.get(), index, ZIP_CM_STORE, 0);
    // A fixed time stamp (1980-01-01 12:00 UTC: the zip format starts at 1980
    // in local time, so noon stays inside it in every time zone): the same
    // arrays give the same bytes, whenever they are written.
    zip_file_set_mtime(archive.get(), index, 315576000, 0);
  }
  // On failure the archive stays open, for ArchivePtr to discard.
  if (zip_close(archive.get()) != 0)
    return fail(error, path + ": cannot write: " + zip_strerror(archive.get()));
  archive.release(); // zip_close freed it
  return true;
}

} // namespace fuse
