//===- PrintHelpers.h - Labels and units of the printing passes -*- C++ -*-===//
//
// What fuse-print-cost and fuse-print-memory (and fuse-plan-memory's
// errors) share when they write about ops for people: where an op comes
// from (LocationLabels.h, in the IR library), what kernel it is, and
// counts in decimal units. Byte counts are written with fuse::humanBytes
// (fuse/Support/HumanSize.h, binary units), as the runtime writes them.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DIALECT_FUSE_TRANSFORMS_PRINTHELPERS_H
#define FUSE_DIALECT_FUSE_TRANSFORMS_PRINTHELPERS_H

#include "fuse/Dialect/Fuse/IR/LocationLabels.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include <cstdint>
#include <string>

namespace mlir::fuse {

/// `label`, else the op's first result as the printer names it, else "-".
std::string labelOrResultName(Operation *op, const std::string &label,
                              AsmState &asmState);

/// The op's name, with its kind for a fusion (`fuse.fusion row_reduction`).
std::string kernelName(Operation *op);

/// `value` with a decimal SI prefix and `decimals` digits after the point:
/// 1.23 GFLOP. For counts such as FLOPs; bytes go through fuse::humanBytes.
std::string humanReadable(int64_t value, StringRef unit, int decimals = 2);

} // namespace mlir::fuse

#endif // FUSE_DIALECT_FUSE_TRANSFORMS_PRINTHELPERS_H
