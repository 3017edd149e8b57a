//===- FormFusions.cpp - fuse-form-fusions ---------------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"

#define DEBUG_TYPE "fuse-form-fusions"

namespace mlir::fuse {
#define GEN_PASS_DEF_FUSEFORMFUSIONS
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"
} // namespace mlir::fuse

namespace {
struct FormFusionsPass : mlir::fuse::impl::FuseFormFusionsBase<FormFusionsPass> {
  using Base::Base;
  void runOnOperation() override {}
};
} // namespace
