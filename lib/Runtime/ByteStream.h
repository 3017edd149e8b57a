//===- ByteStream.h - Little-endian writer and checked reader ---*- C++ -*-===//
//
// The primitives of the Executable file format: fixed-width little-endian
// integers, floats by their bit pattern, and length-prefixed strings. The
// reader never reads past the end: the first short read records an error that
// names the field being read and the byte offset, and every later read
// returns zeros, so a deserializer can read straight through and check once.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_RUNTIME_BYTESTREAM_H
#define FUSE_LIB_RUNTIME_BYTESTREAM_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace fuse::runtime::detail {

class ByteWriter {
public:
  void u8(uint8_t value) { bytes_.push_back(value); }
  void u32(uint32_t value) { little(value, 4); }
  void u64(uint64_t value) { little(value, 8); }
  void i64(int64_t value) { u64(static_cast<uint64_t>(value)); }
  void f32(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    u32(bits);
  }
  void f64(double value) {
    uint64_t bits;
    std::memcpy(&bits, &value, 8);
    u64(bits);
  }
  void raw(const void *data, size_t size) {
    const auto *p = static_cast<const uint8_t *>(data);
    bytes_.insert(bytes_.end(), p, p + size);
  }
  void str(const std::string &value) {
    u64(value.size());
    raw(value.data(), value.size());
  }
  std::vector<uint8_t> take() { return std::move(bytes_); }

private:
  void little(uint64_t value, int width) {
    for (int i = 0; i < width; ++i)
      bytes_.push_back(static_cast<uint8_t>(value >> (8 * i)));
  }
  std::vector<uint8_t> bytes_;
};

class ByteReader {
public:
  /// Reads `bytes` from `offset` up to `end` (the whole vector by default);
  /// offsets in messages count from byte 0.
  ByteReader(const std::vector<uint8_t> &bytes, size_t offset = 0,
             size_t end = SIZE_MAX)
      : bytes_(bytes.data()), size_(std::min(end, bytes.size())),
        offset_(offset) {}

  bool ok() const { return error_.empty(); }
  const std::string &error() const { return error_; }
  size_t offset() const { return offset_; }
  size_t remaining() const { return size_ - offset_; }
  /// Records an error (the first one wins) at the current offset.
  void fail(const std::string &what) {
    if (error_.empty())
      error_ = what + " (at byte " + std::to_string(offset_) + ")";
  }

  uint8_t u8(const char *field) { return (uint8_t)little(1, field); }
  uint32_t u32(const char *field) { return (uint32_t)little(4, field); }
  uint64_t u64(const char *field) { return little(8, field); }
  int64_t i64(const char *field) { return (int64_t)little(8, field); }
  float f32(const char *field) {
    uint32_t bits = u32(field);
    float value;
    std::memcpy(&value, &bits, 4);
    return value;
  }
  double f64(const char *field) {
    uint64_t bits = u64(field);
    double value;
    std::memcpy(&value, &bits, 8);
    return value;
  }
  /// A count of items each at least `minItemBytes` long; a count that cannot
  /// fit in what is left is reported as truncation before anything is
  /// allocated for it.
  uint64_t count(const char *field, size_t minItemBytes) {
    uint64_t n = u64(field);
    if (ok() && minItemBytes && n > remaining() / minItemBytes) {
      fail(std::string("truncated: ") + field + " says " + std::to_string(n) +
           (minItemBytes == 1 ? " bytes" : " entries") + " but only " +
           std::to_string(remaining()) + " bytes are left");
      return 0;
    }
    return ok() ? n : 0;
  }
  std::string str(const char *field) {
    uint64_t n = count(field, 1);
    if (!ok())
      return {};
    std::string value(reinterpret_cast<const char *>(bytes_ + offset_), n);
    offset_ += n;
    return value;
  }
  std::vector<uint8_t> blob(const char *field) {
    uint64_t n = count(field, 1);
    if (!ok())
      return {};
    std::vector<uint8_t> value(bytes_ + offset_, bytes_ + offset_ + n);
    offset_ += n;
    return value;
  }

private:
  uint64_t little(int width, const char *field) {
    if (!ok())
      return 0;
    if (remaining() < (size_t)width) {
      fail(std::string("truncated: ") + field + " needs " +
           std::to_string(width) + " bytes, " + std::to_string(remaining()) +
           " left");
      return 0;
    }
    uint64_t value = 0;
    for (int i = 0; i < width; ++i)
      value |= uint64_t(bytes_[offset_ + i]) << (8 * i);
    offset_ += width;
    return value;
  }

  const uint8_t *bytes_;
  size_t size_;
  size_t offset_;
  std::string error_;
};

} // namespace fuse::runtime::detail

#endif // FUSE_LIB_RUNTIME_BYTESTREAM_H
