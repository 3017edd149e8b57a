//===- HostTensor.cpp - A dense tensor in host memory ---------------------===//

#include "fuse/Support/HostTensor.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace fuse {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I64: return "i64";
  case DType::I32: return "i32";
  case DType::I1: return "i1";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::I64,
                      DType::I32, DType::I1})
    if (name == dtypeName(dtype))
      return dtype;
  return std::nullopt;
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32: case DType::I32: return 4;
  case DType::F16: case DType::BF16: return 2;
  case DType::I64: return 8;
  case DType::I1: return 1;
  }
  return 0;
}

bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

static uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

static float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

uint16_t floatToBF16Bits(float value) {
  uint32_t bits = floatBits(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x0040); // quiet NaN
  // Round to nearest even on the 16 bits that are dropped.
  uint32_t roundingBias = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

float bf16BitsToFloat(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

uint16_t floatToF16Bits(float value) {
  uint32_t bits = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t exponent = (bits >> 23) & 0xFF;
  uint32_t mantissa = bits & 0x7FFFFF;
  if (exponent == 0xFF) // inf or NaN
    return sign | 0x7C00 | (mantissa ? 0x200 : 0);
  int32_t halfExponent = static_cast<int32_t>(exponent) - 127 + 15;
  if (halfExponent >= 0x1F)
    return sign | 0x7C00; // overflow to infinity
  if (halfExponent <= 0) {
    // Subnormal half (or zero): shift the mantissa with its implicit bit.
    if (halfExponent < -10)
      return sign;
    uint32_t full = mantissa | 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - halfExponent);
    uint32_t half = full >> shift;
    uint32_t remainder = full & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half & 1)))
      ++half;
    return sign | static_cast<uint16_t>(half);
  }
  uint32_t half = (static_cast<uint32_t>(halfExponent) << 10) | (mantissa >> 13);
  uint32_t remainder = mantissa & 0x1FFF;
  if (remainder > 0x1000 || (remainder == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, up to infinity: still correct
  return sign | static_cast<uint16_t>(half);
}

float f16BitsToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1F;
  uint32_t mantissa = bits & 0x3FF;
  if (exponent == 0x1F)
    return bitsToFloat(sign | 0x7F800000 | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0)
      return bitsToFloat(sign);
    // Subnormal: value = mantissa * 2^-24.
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return bitsToFloat(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

float roundToDType(float value, DType dtype) {
  switch (dtype) {
  case DType::BF16: return bf16BitsToFloat(floatToBF16Bits(value));
  case DType::F16: return f16BitsToFloat(floatToF16Bits(value));
  default: return value;
  }
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)), numElements_(1) {
  for (int64_t size : shape_)
    numElements_ *= size;
  if (fuse::isFloat(dtype_))
    floats_.assign(numElements_, 0.0f);
  else
    ints_.assign(numElements_, 0);
}

double HostTensor::get(int64_t index) const {
  return isFloat() ? static_cast<double>(floats_[index])
                   : static_cast<double>(ints_[index]);
}

static int64_t wrapInt(int64_t value, DType dtype) {
  switch (dtype) {
  case DType::I32: return static_cast<int32_t>(static_cast<uint32_t>(value));
  case DType::I1: return value != 0;
  default: return value;
  }
}

void HostTensor::set(int64_t index, double value) {
  if (isFloat()) {
    floats_[index] = roundToDType(static_cast<float>(value), dtype_);
    return;
  }
  if (dtype_ == DType::I1) {
    ints_[index] = value != 0.0;
    return;
  }
  // Truncate toward zero; NaN and out-of-range values become the smallest
  // int64, as a GPU's float-to-integer conversion saturates.
  double truncated = std::trunc(value);
  int64_t asInt = (std::isnan(truncated) || truncated >= 9.2233720368547758e18 ||
                   truncated < -9.2233720368547758e18)
                      ? INT64_MIN
                      : static_cast<int64_t>(truncated);
  ints_[index] = wrapInt(asInt, dtype_);
}

void HostTensor::setInt(int64_t index, int64_t value) {
  if (isFloat())
    floats_[index] = roundToDType(static_cast<float>(value), dtype_);
  else
    ints_[index] = wrapInt(value, dtype_);
}

std::vector<int64_t> HostTensor::strides() const {
  std::vector<int64_t> result(shape_.size(), 1);
  for (int64_t dim = rank() - 2; dim >= 0; --dim)
    result[dim] = result[dim + 1] * shape_[dim + 1];
  return result;
}

std::vector<uint8_t> HostTensor::toBytes() const {
  std::vector<uint8_t> bytes(numElements_ * dtypeSize(dtype_));
  uint8_t *out = bytes.data();
  for (int64_t i = 0; i < numElements_; ++i) {
    switch (dtype_) {
    case DType::F32: std::memcpy(out + 4 * i, &floats_[i], 4); break;
    case DType::BF16: {
      uint16_t bits = floatToBF16Bits(floats_[i]);
      std::memcpy(out + 2 * i, &bits, 2);
      break;
    }
    case DType::F16: {
      uint16_t bits = floatToF16Bits(floats_[i]);
      std::memcpy(out + 2 * i, &bits, 2);
      break;
    }
    case DType::I64: std::memcpy(out + 8 * i, &ints_[i], 8); break;
    case DType::I32: {
      int32_t value = static_cast<int32_t>(ints_[i]);
      std::memcpy(out + 4 * i, &value, 4);
      break;
    }
    case DType::I1: out[i] = ints_[i] != 0; break;
    }
  }
  return bytes;
}

HostTensor HostTensor::fromBytes(DType dtype, std::vector<int64_t> shape,
                                 const uint8_t *data, size_t size) {
  HostTensor tensor(dtype, std::move(shape));
  assert(size == tensor.numElements() * dtypeSize(dtype) && "size mismatch");
  (void)size;
  for (int64_t i = 0; i < tensor.numElements(); ++i) {
    switch (dtype) {
    case DType::F32: std::memcpy(&tensor.floats_[i], data + 4 * i, 4); break;
    case DType::BF16: {
      uint16_t bits;
      std::memcpy(&bits, data + 2 * i, 2);
      tensor.floats_[i] = bf16BitsToFloat(bits);
      break;
    }
    case DType::F16: {
      uint16_t bits;
      std::memcpy(&bits, data + 2 * i, 2);
      tensor.floats_[i] = f16BitsToFloat(bits);
      break;
    }
    case DType::I64: std::memcpy(&tensor.ints_[i], data + 8 * i, 8); break;
    case DType::I32: {
      int32_t value;
      std::memcpy(&value, data + 4 * i, 4);
      tensor.ints_[i] = value;
      break;
    }
    case DType::I1: tensor.ints_[i] = data[i] != 0; break;
    }
  }
  return tensor;
}

std::string typeString(DType dtype, const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t size : shape)
    text += std::to_string(size) + "x";
  return text + dtypeName(dtype);
}

std::string HostTensor::typeString() const {
  return ::fuse::typeString(dtype_, shape_);
}

} // namespace fuse
