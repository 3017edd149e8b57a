//===- PrintMemory.cpp - fuse-print-memory ---------------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"

#define DEBUG_TYPE "fuse-print-memory"

namespace mlir::fuse {
#define GEN_PASS_DEF_FUSEPRINTMEMORY
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"
} // namespace mlir::fuse

namespace {
struct PrintMemoryPass : mlir::fuse::impl::FusePrintMemoryBase<PrintMemoryPass> {
  using Base::Base;
  void runOnOperation() override {}
};
} // namespace
