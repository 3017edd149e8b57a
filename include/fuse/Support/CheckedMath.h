//===- CheckedMath.h - Element counts and byte sizes without overflow -*- C++ -*-===//
//
// A tensor type's element count and byte size are products of its
// dimensions; computed in plain int64 they wrap silently (2^68 elements
// become 0, a GEMM's FLOPs go negative), and everything after that (memory
// plans, launch grids, .npz headers) is garbage. The graph type check
// (GraphVerification.h) rejects any tensor over kMaxTensorBytes with these
// helpers, so code after it may multiply a verified type's dimensions
// plainly; what it cannot rely on that for (executables read from files,
// FLOP counts that multiply several sizes, sums of many buffers) uses them
// too. Plain C++ (no MLIR): the dialect, the interpreter and the runtime
// share it.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_SUPPORT_CHECKEDMATH_H
#define FUSE_SUPPORT_CHECKEDMATH_H

#include <cstdint>
#include <limits>
#include <optional>

namespace fuse {

/// The most bytes one tensor may take: 2^48 (256 TiB), hundreds of times
/// any machine's memory. A limit this far below int64's keeps everything
/// computed from sizes inside int64 without a check at each step: a
/// buffer's size rounded up to the arena's alignment, byte offsets, and
/// sums over up to 2^15 buffers (arena sizes, bytes live at once, bytes
/// moved by a graph). The verifier rejects larger tensor types
/// (GraphVerification.h).
constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

/// a * b, or nullopt when it does not fit in int64.
constexpr std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product))
    return std::nullopt;
  return product;
}

/// a + b, or nullopt when it does not fit in int64.
constexpr std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum))
    return std::nullopt;
  return sum;
}

/// a * b (a + b) clamped to int64's range: for estimates (FLOPs, bytes
/// moved) that should read "huge" rather than wrap to a negative number.
constexpr int64_t saturatingMul(int64_t a, int64_t b) {
  if (std::optional<int64_t> product = checkedMul(a, b))
    return *product;
  return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max();
}
constexpr int64_t saturatingAdd(int64_t a, int64_t b) {
  if (std::optional<int64_t> sum = checkedAdd(a, b))
    return *sum;
  return a < 0 ? std::numeric_limits<int64_t>::min()
               : std::numeric_limits<int64_t>::max();
}

/// Bytes one element of `bitWidth` bits is stored in: whole bytes, so i1
/// takes one (Fuse stores booleans unpacked). The one rule for element
/// sizes: the verifiers, the cost model and the memory planner all use it.
constexpr int64_t elementBytes(int64_t bitWidth) { return (bitWidth + 7) / 8; }

/// Bytes of `elements` values of `bitWidth` bits, saturating at int64's
/// maximum (an estimate, as the cost model's counts are; checkedByteSize
/// is the check).
constexpr int64_t tensorBytes(int64_t elements, int64_t bitWidth) {
  return saturatingMul(elements, elementBytes(bitWidth));
}

namespace detail {
/// The product of `shape`'s non-zero dimensions, or nullopt when one is
/// negative (dynamic) or the product does not fit in int64; `empty` says
/// whether a dimension is 0.
template <typename Shape>
constexpr std::optional<int64_t> nonZeroProduct(const Shape &shape,
                                                bool &empty) {
  int64_t product = 1;
  empty = false;
  for (int64_t size : shape) {
    if (size < 0)
      return std::nullopt;
    if (size == 0) {
      empty = true;
      continue;
    }
    std::optional<int64_t> next = checkedMul(product, size);
    if (!next)
      return std::nullopt;
    product = *next;
  }
  return product;
}
} // namespace detail

/// The number of elements of a tensor of `shape` (any range of int64
/// dimensions; 1 for rank 0), or nullopt when a dimension is negative
/// (dynamic) or the product of the non-zero dimensions does not fit in
/// int64. Zero dimensions count as 1 in that check so that row-major
/// strides, which multiply trailing dimensions only, fit too: 0 x 2^40 x
/// 2^40 has no elements but a stride of 2^80.
template <typename Shape>
constexpr std::optional<int64_t> checkedElementCount(const Shape &shape) {
  bool empty = false;
  std::optional<int64_t> product = detail::nonZeroProduct(shape, empty);
  if (!product)
    return std::nullopt;
  return empty ? 0 : *product;
}

/// The bytes of a tensor of `shape` with `elementBytes` bytes per element,
/// or nullopt when they would exceed kMaxTensorBytes, zero dimensions
/// counted as 1 (as above), or the count is not representable.
template <typename Shape>
constexpr std::optional<int64_t> checkedByteSize(const Shape &shape,
                                                 int64_t elementBytes) {
  bool empty = false;
  std::optional<int64_t> product = detail::nonZeroProduct(shape, empty);
  if (!product)
    return std::nullopt;
  std::optional<int64_t> bytes = checkedMul(*product, elementBytes);
  if (!bytes || *bytes > kMaxTensorBytes)
    return std::nullopt;
  return empty ? 0 : *bytes;
}

} // namespace fuse

#endif // FUSE_SUPPORT_CHECKEDMATH_H
