//===- LocationLabels.h - Where an op comes from, for people ----*- C++ -*-===//
//
// Short labels for an op's location: the exporter's node name and the model
// source line. Here, in the IR library, because both the printing passes
// (Transforms) and the code generator's step labels (Codegen) use them, and
// Codegen must not depend on Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DIALECT_FUSE_IR_LOCATIONLABELS_H
#define FUSE_DIALECT_FUSE_IR_LOCATIONLABELS_H

#include "mlir/IR/Location.h"

#include <string>

namespace mlir::fuse {

/// A short name for where an op comes from: the exporter's node name
/// (`loc("addmm"(...))`), else `file:line:col`; empty if neither is there.
std::string locationLabel(Location loc);

/// The exporter's node name with the model source line it came from:
/// `addmm (pytorch_utils.py:119)`; either alone when the other is missing
/// (`file:line`, the file without its directories); empty if neither.
std::string sourceLabel(Location loc);

} // namespace mlir::fuse

#endif // FUSE_DIALECT_FUSE_IR_LOCATIONLABELS_H
