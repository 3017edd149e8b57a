//===- FlashStrides.h - Operand layouts of the flash kernels ----*- C++ -*-===//
//
// The host's side of FlashStrides in kernels/flash_common.cuh: where row t
// of head h of batch b of a [batch, heads, rows, D] operand starts, in
// elements (D is contiguous). FlashParams ends with one per operand, in the
// order q, k, v, o, dout, dq, dk, dv; everything that writes a FlashParams
// literal (the code generator, the tests' hand-built executables) writes
// them with these helpers. Plain C++: the GPU tests include it without MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_CODEGEN_FLASHSTRIDES_H
#define FUSE_CODEGEN_FLASHSTRIDES_H

#include <array>
#include <cstdint>
#include <string>

namespace fuse::codegen {

struct FlashStrides {
  int64_t batch = 0, head = 0, row = 0;
};

/// The strides of FlashParams in their order: q, k, v, o, dout, dq, dk, dv.
using FlashOperandStrides = std::array<FlashStrides, 8>;

/// Every operand stored as it is (row-major): q, o, dout and dq
/// [batch, qHeads, tq, D], k, v, dk and dv [batch, kvHeads, tk, D].
inline FlashOperandStrides contiguousFlashOperandStrides(int64_t qHeads,
                                                         int64_t kvHeads,
                                                         int64_t tq, int64_t tk,
                                                         int64_t headDim) {
  FlashStrides query{qHeads * tq * headDim, tq * headDim, headDim};
  FlashStrides key{kvHeads * tk * headDim, tk * headDim, headDim};
  return {query, key, key, query, query, query, key, key};
}

/// The eight FlashStrides members of a FlashParams aggregate initializer:
/// `{b, h, t}, {b, h, t}, ...`.
inline std::string flashStridesLiteral(const FlashOperandStrides &strides) {
  std::string text;
  for (const FlashStrides &s : strides)
    text += std::string(text.empty() ? "" : ", ") + "{" +
            std::to_string(s.batch) + "LL, " + std::to_string(s.head) +
            "LL, " + std::to_string(s.row) + "LL}";
  return text;
}

} // namespace fuse::codegen

#endif // FUSE_CODEGEN_FLASHSTRIDES_H
