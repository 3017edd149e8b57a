//===- CompareOutputs.h - Comparing outputs with references -----*- C++ -*-===//
//
// The per-output comparison table that --check-pipeline and --expected print,
// and the loading of --expected's reference arrays.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_TOOLSUPPORT_COMPAREOUTPUTS_H
#define FUSE_TOOLSUPPORT_COMPAREOUTPUTS_H

#include "fuse/Support/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::fuse {

/// Compares each output of `func` with its reference within its relative
/// tolerance and prints a line per output
///   "  NAME  TYPE  max_abs_error E  rel_error R  PASS" (or "FAIL (why)"),
/// then "LABEL: PASS (M of N outputs match)" (or FAIL). Fails if any differs.
LogicalResult compareOutputs(llvm::raw_ostream &os, llvm::StringRef label,
                             func::FuncOp func,
                             const std::vector<::fuse::HostTensor> &outputs,
                             const std::vector<::fuse::HostTensor> &references,
                             const std::vector<double> &tolerances);

/// Reads the reference arrays of --expected from `path`: one per result of
/// `func`, named as outputName names it, of the result's shape and dtype, and
/// no other array. Every mismatch is an error naming the output and the file.
FailureOr<std::vector<::fuse::HostTensor>>
loadExpected(const std::string &path, func::FuncOp func);

/// Compares `outputs` with `expected` (from loadExpected): each within the
/// tolerance of its dtype, or within `tolerance` for float outputs when given
/// (integer and i1 outputs must match exactly). Prints the table.
LogicalResult checkExpected(llvm::raw_ostream &os, const std::string &path,
                            func::FuncOp func,
                            const std::vector<::fuse::HostTensor> &outputs,
                            const std::vector<::fuse::HostTensor> &expected,
                            std::optional<double> tolerance);

} // namespace mlir::fuse

#endif // FUSE_TOOLSUPPORT_COMPAREOUTPUTS_H
