//===- PrintHelpers.h - Labels and units of the printing passes -*- C++ -*-===//
//
// What fuse-print-cost and fuse-print-memory (and fuse-plan-memory's
// errors) share when they write about ops for people: where an op comes
// from, what kernel it is, and byte counts in decimal units.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DIALECT_FUSE_TRANSFORMS_PRINTHELPERS_H
#define FUSE_DIALECT_FUSE_TRANSFORMS_PRINTHELPERS_H

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include <cstdint>
#include <string>

namespace mlir::fuse {

/// A short name for where an op comes from: the exporter's node name
/// (`loc("addmm"(...))`), else `file:line:col`; empty if neither is there.
std::string locationLabel(Location loc);

/// The exporter's node name with the model source line it came from:
/// `addmm (pytorch_utils.py:119)`; either alone when the other is missing
/// (`file:line`, the file without its directories); empty if neither.
std::string sourceLabel(Location loc);

/// `label`, else the op's first result as the printer names it, else "-".
std::string labelOrResultName(Operation *op, const std::string &label,
                              AsmState &asmState);

/// The op's name, with its kind for a fusion (`fuse.fusion row_reduction`).
std::string kernelName(Operation *op);

/// `value` with a decimal SI prefix and `decimals` digits after the point:
/// 1.23 GFLOP, 4.56 MB.
std::string humanReadable(int64_t value, StringRef unit, int decimals = 2);

} // namespace mlir::fuse

#endif // FUSE_DIALECT_FUSE_TRANSFORMS_PRINTHELPERS_H
