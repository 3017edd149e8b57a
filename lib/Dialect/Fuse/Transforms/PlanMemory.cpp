//===- PlanMemory.cpp - fuse-plan-memory ---------------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"

#define DEBUG_TYPE "fuse-plan-memory"

namespace mlir::fuse {
#define GEN_PASS_DEF_FUSEPLANMEMORY
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"
} // namespace mlir::fuse

namespace {
struct PlanMemoryPass : mlir::fuse::impl::FusePlanMemoryBase<PlanMemoryPass> {
  using Base::Base;
  void runOnOperation() override {}
};
} // namespace
