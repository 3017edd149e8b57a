//===- Schedule.h - The memory-aware scheduler of fuse-schedule -*- C++ -*-===//
//
// fuse-schedule's reordering as a function, so that fuse-rematerialize can
// measure the peak each of its attempts would have once scheduled.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DIALECT_FUSE_TRANSFORMS_SCHEDULE_H
#define FUSE_DIALECT_FUSE_TRANSFORMS_SCHEDULE_H

#include "fuse/Analysis/Liveness.h"

#include <utility>

namespace mlir::fuse {

/// Reorders `block`'s top-level ops to lower the peak of live intermediate
/// bytes, never raising it; returns the liveness before and after.
std::pair<BlockLiveness, BlockLiveness> scheduleForPeak(Block &block);

} // namespace mlir::fuse

#endif // FUSE_DIALECT_FUSE_TRANSFORMS_SCHEDULE_H
