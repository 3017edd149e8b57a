//===- Schedule.cpp - fuse-schedule ---------------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"

#define DEBUG_TYPE "fuse-schedule"

namespace mlir::fuse {
#define GEN_PASS_DEF_FUSESCHEDULE
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"
} // namespace mlir::fuse

namespace {
struct SchedulePass : mlir::fuse::impl::FuseScheduleBase<SchedulePass> {
  using Base::Base;
  void runOnOperation() override {}
};
} // namespace
