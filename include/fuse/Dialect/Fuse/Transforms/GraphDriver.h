//===- GraphDriver.h - Choosing a graph's function, running a pipeline -*- C++ -*-===//
//
// What every front end (fuse-run, fuse-translate, the C API) does before
// code generation: pick the function to compile and run a textual pass
// pipeline on the module unless the function is planned already. Errors
// come back as messages for the caller to report its own way (stderr for
// the tools, the last error for the C API).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DIALECT_FUSE_TRANSFORMS_GRAPHDRIVER_H
#define FUSE_DIALECT_FUSE_TRANSFORMS_GRAPHDRIVER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::fuse {

/// The function named `entry`, or, with no entry, the module's only function
/// with a body. Otherwise `error` names `where` (the graph's file) and the
/// functions it has, ending with `hint` when there are several.
FailureOr<func::FuncOp> findEntryFunction(ModuleOp module, StringRef entry,
                                          StringRef where, StringRef hint,
                                          std::string &error);

/// Wall time of one phase of a compile (a pass, parsing, code generation).
struct PhaseTime {
  std::string name;
  double seconds = 0;
};

/// Parses `pipeline` (MLIR's textual form; `flag` names it in messages, e.g.
/// "--pipeline") and runs it on `module` in place. The pipeline's own
/// diagnostics go to the context's handler; `error` says which step failed.
/// With `passTimes`, each pass's wall time is appended to it, by the pass's
/// argument (summed over its runs, in the order passes first ran).
LogicalResult runPipeline(ModuleOp module, StringRef pipeline, StringRef flag,
                          std::string &error,
                          std::vector<PhaseTime> *passTimes = nullptr);

/// Whether fuse-plan-memory has run on `func` (it has `fuse.arena_size`):
/// such a graph goes to code generation as it is.
bool isPlanned(func::FuncOp func);

/// A pass that runs verifyGraphTypes (GraphVerification.h) on the op it is
/// given: the first step of fuse-pipeline and of every fuse-opt run, so that
/// no pass sees a dynamic or oversized type. Not registered by name (it is
/// always there).
std::unique_ptr<Pass> createVerifyGraphTypesPass();

} // namespace mlir::fuse

#endif // FUSE_DIALECT_FUSE_TRANSFORMS_GRAPHDRIVER_H
