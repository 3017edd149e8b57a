//===- RunSupport.h - The steps fuse-run and fuse-translate share -*- C++ -*-===//

#ifndef FUSE_TOOLSUPPORT_RUNSUPPORT_H
#define FUSE_TOOLSUPPORT_RUNSUPPORT_H

#include "fuse/Driver/Driver.h"
#include "fuse/Interpreter/Inputs.h"
#include "fuse/Support/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::fuse {

/// "a, b, c" for messages that list names; "nothing" for none.
std::string joinNames(ArrayRef<std::string> names);

/// The tool reportError() names (fuse-run unless set).
void setToolName(const char *name);

/// Prints "<tool>: error: MESSAGE" to stderr; always fails.
LogicalResult reportError(const std::string &message);

/// Reports a step of the compile driver that failed, unless the diagnostics
/// printed already said it all (DriverError::diagnosed); always fails.
LogicalResult reportError(const ::fuse::driver::DriverError &error);

/// The compile driver's options for the graph file `path` (named so in
/// messages), the function `entry` (--entry) and `pipeline` (--pipeline).
::fuse::driver::CompileOptions graphOptions(const std::string &path,
                                            const std::string &entry,
                                            const std::string &pipeline);

/// Reads the graph file `path` ("-": stdin) into `sourceMgr`; an error
/// names the file and is reported.
LogicalResult readGraphFile(llvm::SourceMgr &sourceMgr, const std::string &path);

/// readGraphFile, then the driver's first step (parse, graph type check,
/// entry function) into `compilation`; errors are reported.
LogicalResult loadGraph(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                        const std::string &path,
                        const ::fuse::driver::CompileOptions &options,
                        ::fuse::driver::Compilation &compilation);

/// Fails, naming both indices, if two arguments or two results of `func` go
/// by one name (an explicit fuse.name equal to another's default argN/outN:
/// the verifier rejects repeated fuse.name attributes).
LogicalResult checkUniqueNames(func::FuncOp func,
                               const std::vector<ArgumentInfo> &arguments);

/// Fails, before anything is allocated, when a run of `func` needs more host
/// memory than `limit` (default: this machine's memory): with `interprets`
/// the reference interpreter's working set (interpreterWorkingSet), else the
/// inputs and outputs alone; with `expected` the reference arrays besides.
/// The error is at the largest tensor's definition and names its type.
LogicalResult checkHostMemory(func::FuncOp func, bool interprets, bool expected,
                              std::optional<int64_t> limit);

/// Reads one array per argument from `path`, by argument name, checking
/// names, shapes and dtypes from each array's header before its data is
/// inflated.
FailureOr<std::vector<::fuse::HostTensor>>
loadInputs(const std::string &path, const std::vector<ArgumentInfo> &arguments);

/// Fails, naming the argument, the count and the first position, if an
/// input holds NaN (unless `allowNan`) or +Inf/-Inf (unless `allowInf`):
/// such an input is far more often a broken file than a meant value.
LogicalResult checkFinite(const std::vector<::fuse::HostTensor> &inputs,
                          const std::vector<ArgumentInfo> &arguments,
                          bool allowNan, bool allowInf);

/// Writes the outputs to an .npz, each named as outputName names it.
LogicalResult saveOutputs(const std::string &path, func::FuncOp func,
                          const std::vector<::fuse::HostTensor> &outputs);

/// The run's summary: inputs, outputs (type and a few statistics), time.
void printSummary(llvm::raw_ostream &os, func::FuncOp func,
                  const std::vector<ArgumentInfo> &arguments,
                  const std::vector<::fuse::HostTensor> &inputs,
                  bool randomInputs, uint64_t seed,
                  const std::vector<::fuse::HostTensor> &outputs,
                  double milliseconds);

/// The relative tolerance of comparing two versions of a graph: that of the
/// least precise float dtype either uses.
double toleranceOfGraphs(func::FuncOp before, func::FuncOp after);

/// Runs `func` again after `pipeline` on the same inputs and compares its
/// outputs with `reference`; prints a line per output and fails if any
/// differs beyond the tolerance of the dtypes both graphs use.
LogicalResult checkAgainstPipeline(MLIRContext &context, ModuleOp module,
                                   func::FuncOp func,
                                   const std::string &pipeline,
                                   const std::vector<::fuse::HostTensor> &inputs,
                                   const std::vector<::fuse::HostTensor> &reference);

} // namespace mlir::fuse

#endif // FUSE_TOOLSUPPORT_RUNSUPPORT_H
