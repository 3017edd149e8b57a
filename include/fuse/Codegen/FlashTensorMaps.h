//===- FlashTensorMaps.h - TMA maps of the flash kernels' operands -*- C++ -*-===//
//
// The warp-specialised flash kernels (kernels/flash_forward_tma.cuh,
// flash_backward_tma.cuh) load q, k, v and dout by bulk tensor copies, each
// through a tensor map of its [batch, heads, rows, D] view: dims {D, rows,
// heads, batch} (innermost first), the view's element strides as byte
// strides, boxes of 64 columns (one 128-byte swizzled panel of the kernels'
// SwizzledTile) by the kernel's tile rows. Rows past the end of a head
// arrive as zeros, which is how the kernels handle any length.
//
// The copy engine needs a 16-byte aligned start and byte strides that are
// multiples of 16; an operand that breaks either (a view at an odd offset)
// is left to the cp.async kernels. Everything that builds these maps (the
// code generator, the tests' hand-built executables) builds them here.
// Plain C++: the GPU tests include it without MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_CODEGEN_FLASHTENSORMAPS_H
#define FUSE_CODEGEN_FLASHTENSORMAPS_H

#include "fuse/Codegen/FlashStrides.h"
#include "fuse/Runtime/Executable.h"

namespace fuse::codegen {

/// The shape of one operand as the kernels see it.
struct FlashOperandShape {
  int64_t batch = 1, heads = 1, rows = 1, headDim = 64;
};

/// Whether the copy engine can read an operand of 16-bit elements that
/// starts `byteOffset` bytes into its buffer (buffers are at least 256-byte
/// aligned) with these element strides.
inline bool flashTmaAddressable(const FlashStrides &strides, int64_t byteOffset) {
  constexpr int64_t kElementBytes = 2, kAlign = 16;
  auto aligned = [](int64_t bytes) { return bytes % kAlign == 0; };
  return aligned(byteOffset) && aligned(strides.row * kElementBytes) &&
         aligned(strides.head * kElementBytes) &&
         aligned(strides.batch * kElementBytes);
}

/// The map of an operand at `base` (its element (0, 0, 0, 0)), copied in
/// boxes of 64 columns by `boxRows` rows into 128-byte-swizzled panels.
inline runtime::TensorMapArg flashTensorMap(const runtime::BufferRef &base, DType dtype,
                                            const FlashOperandShape &shape,
                                            const FlashStrides &strides, int boxRows) {
  constexpr uint64_t kElementBytes = 2;
  runtime::TensorMapArg map;
  map.base = base;
  map.dtype = dtype;
  map.rank = 4;
  map.dims = {static_cast<uint64_t>(shape.headDim), static_cast<uint64_t>(shape.rows),
              static_cast<uint64_t>(shape.heads), static_cast<uint64_t>(shape.batch), 1};
  map.strides = {static_cast<uint64_t>(strides.row) * kElementBytes,
                 static_cast<uint64_t>(strides.head) * kElementBytes,
                 static_cast<uint64_t>(strides.batch) * kElementBytes, 0};
  map.box = {64, static_cast<uint32_t>(boxRows), 1, 1, 1};
  map.swizzle = runtime::TensorMapArg::Swizzle::B128;
  return map;
}

/// The TMA backward's f32 dQ accumulator (its own contiguous [batch,
/// qHeads, tq, D]) at `base`, added to in boxes of 32 columns (one 128-byte
/// swizzled row) by `boxRows` from shared tiles; dims {D, tq, batch x
/// qHeads}, so rows past a head's end are dropped.
inline runtime::TensorMapArg flashDqAccumulatorMap(const runtime::BufferRef &base,
                                                   int64_t batch, int64_t qHeads,
                                                   int64_t tq, int64_t headDim,
                                                   int boxRows) {
  constexpr uint64_t kFloatBytes = 4;
  runtime::TensorMapArg map;
  map.base = base;
  map.dtype = DType::F32;
  map.rank = 3;
  map.dims = {static_cast<uint64_t>(headDim), static_cast<uint64_t>(tq),
              static_cast<uint64_t>(batch * qHeads), 1, 1};
  map.strides = {static_cast<uint64_t>(headDim) * kFloatBytes,
                 static_cast<uint64_t>(tq * headDim) * kFloatBytes, 0, 0};
  map.box = {32, static_cast<uint32_t>(boxRows), 1, 1, 1};
  map.swizzle = runtime::TensorMapArg::Swizzle::B128;
  return map;
}

} // namespace fuse::codegen

#endif // FUSE_CODEGEN_FLASHTENSORMAPS_H
