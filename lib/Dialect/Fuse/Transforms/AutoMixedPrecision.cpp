//===- AutoMixedPrecision.cpp - fuse-auto-mixed-precision ---------------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"

#define DEBUG_TYPE "fuse-auto-mixed-precision"

namespace mlir::fuse {
#define GEN_PASS_DEF_FUSEAUTOMIXEDPRECISION
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"
} // namespace mlir::fuse

namespace {
struct AutoMixedPrecisionPass : mlir::fuse::impl::FuseAutoMixedPrecisionBase<AutoMixedPrecisionPass> {
  using Base::Base;
  void runOnOperation() override {}
};
} // namespace
