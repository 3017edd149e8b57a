//===- HostTensor.h - A dense tensor in host memory -------------*- C++ -*-===//
//
// Plain C++ (no MLIR, no CUDA): shared by the reference interpreter, the .npy
// reader/writer and, later, the runtime.
//
// Float tensors (f32, f16, bf16) keep their elements as f32 values that are
// already rounded to the dtype, so a bf16 tensor holds only bf16-representable
// values and arithmetic on them happens in f32, as on the GPU. Integer and i1
// tensors keep their elements as int64 (i32 values wrapped to 32 bits, i1 as
// 0 or 1).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_SUPPORT_HOSTTENSOR_H
#define FUSE_SUPPORT_HOSTTENSOR_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fuse {

enum class DType { F32, F16, BF16, I64, I32, I1 };

/// "f32", "f16", "bf16", "i64", "i32", "i1": the MLIR spelling.
const char *dtypeName(DType dtype);
/// Inverse of dtypeName; nullopt for anything else.
std::optional<DType> parseDType(std::string_view name);
/// "4x8xf32" (rank 0: "f32"): how a tensor of this dtype and shape is named
/// in messages.
std::string typeString(DType dtype, const std::vector<int64_t> &shape);
/// Bytes per element in the dtype's binary format (i1: one byte).
size_t dtypeSize(DType dtype);
bool isFloat(DType dtype);

/// Round-to-nearest-even conversions, NaN kept NaN, overflow to infinity.
uint16_t floatToBF16Bits(float value);
float bf16BitsToFloat(uint16_t bits);
uint16_t floatToF16Bits(float value);
float f16BitsToFloat(uint16_t bits);
/// `value` rounded to the nearest value representable in `dtype` (a float
/// dtype); f32 returns it unchanged.
float roundToDType(float value, DType dtype);

class HostTensor {
public:
  HostTensor() = default;
  /// A zero-filled tensor.
  HostTensor(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numElements() const { return numElements_; }
  bool isFloat() const { return fuse::isFloat(dtype_); }

  /// Element storage; floats() for float dtypes, ints() for the others.
  std::vector<float> &floats() { return floats_; }
  const std::vector<float> &floats() const { return floats_; }
  std::vector<int64_t> &ints() { return ints_; }
  const std::vector<int64_t> &ints() const { return ints_; }

  /// Element `index` (row-major) as a double, whatever the dtype.
  double get(int64_t index) const;
  /// Stores `value` rounded to a float dtype, or truncated toward zero and
  /// wrapped to an integer dtype (i1: non-zero is 1).
  void set(int64_t index, double value);
  /// Stores an integer exactly (wrapped to i32, or != 0 for i1).
  void setInt(int64_t index, int64_t value);

  /// Row-major strides in elements.
  std::vector<int64_t> strides() const;

  /// The dtype's binary format, little-endian: bf16 and f16 as their 16-bit
  /// patterns, i1 as one byte per element.
  std::vector<uint8_t> toBytes() const;
  /// Reads `numElements` elements in the dtype's binary format; `size` must
  /// be numElements * dtypeSize(dtype).
  static HostTensor fromBytes(DType dtype, std::vector<int64_t> shape,
                              const uint8_t *data, size_t size);

  /// "4x8xf32" (rank 0: "f32").
  std::string typeString() const;

private:
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  int64_t numElements_ = 0;
  std::vector<float> floats_;
  std::vector<int64_t> ints_;
};

} // namespace fuse

#endif // FUSE_SUPPORT_HOSTTENSOR_H
