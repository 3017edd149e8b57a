//===- Passes.h - Fuse pass entry points ------------------------*- C++ -*-===//

#ifndef FUSE_DIALECT_FUSE_TRANSFORMS_PASSES_H
#define FUSE_DIALECT_FUSE_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::fuse {

#define GEN_PASS_DECL
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"

} // namespace mlir::fuse

#endif // FUSE_DIALECT_FUSE_TRANSFORMS_PASSES_H
