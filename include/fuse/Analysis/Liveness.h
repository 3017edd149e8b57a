//===- Liveness.h - Buffers and their live ranges over a schedule -*- C++ -*-===//
//
// The buffers a block's top-level ops write, in the block's order (the
// schedule), and the span of that order over which each must hold its
// value: from the op that writes it to the last op that reads it. This is
// what fuse-schedule lowers, fuse-rematerialize budgets and fuse-plan-memory
// packs into one arena.
//
// - Positions are the indices of the block's top-level ops, terminator
//   excluded. A read by an op nested in a region (a fusion body) counts at
//   its top-level ancestor.
// - A reshape is a view: its result shares its operand's buffer, which then
//   lives until the view's last read. So does a scatter_add that
//   accumulates in place (ScatterAddOp::accumulatesInPlace) with its dest:
//   returned, it puts the dest's writer in the caller's memory.
// - Constants are baked into the code (no buffer); block arguments and
//   returned values are the caller's (external): they are listed, marked
//   external, and never part of the arena or its lower bound.
// - A buffer nobody reads lives at its writer's position only.
// - At position i the buffers written there and those last read there are
//   live together: an op's outputs may not overwrite its inputs unless the
//   planner proves it safe (in-place reuse).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_ANALYSIS_LIVENESS_H
#define FUSE_ANALYSIS_LIVENESS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir::fuse {

struct BufferLiveness {
  /// The value whose writer owns the buffer (a reshape's result maps to the
  /// value it views).
  Value value;
  int64_t bytes = 0;
  /// First and last position (inclusive) at which the buffer holds a value.
  int64_t start = 0, end = 0;
  /// A block argument or a value the block returns: the caller's memory.
  bool external = false;
};

struct BlockLiveness {
  /// One entry per buffer, in the order of their writers (arguments first).
  SmallVector<BufferLiveness> buffers;
  /// The buffer of every value that has one (views map to their root).
  llvm::DenseMap<Value, unsigned> bufferOf;
  /// Bytes of non-external buffers live at each position.
  SmallVector<int64_t> liveBytes;
  /// The largest of liveBytes (the arena's lower bound) and where it is.
  int64_t peakBytes = 0;
  int64_t peakPosition = 0;
  /// Every top-level op but the terminator, at its position.
  SmallVector<Operation *> ops;
};

/// The buffers of `block`'s top-level ops over its current order.
BlockLiveness computeLiveness(Block &block);

} // namespace mlir::fuse

#endif // FUSE_ANALYSIS_LIVENESS_H
