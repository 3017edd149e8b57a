//===- Driver.h - The compile driver: graph text to an Executable -*- C++ -*-===//
//
// What the C API (fuseCompile), fuse-run --device=cuda and fuse-translate do
// with a graph, written once: parse it (behind GraphParsing.h's nesting
// check) and run the whole-graph type check, choose the entry function, run a
// pass pipeline unless the graph is planned already (has fuse.arena_size),
// and build the runtime::Executable for a target architecture.
//
// The caller owns the context and its diagnostic handler: the tools print
// diagnostics as they come, the C API gathers them into its error message.
// Every failure also comes back as a DriverError saying what failed and
// where. compileGraph does all the steps; fuse-run calls them one by one, as
// it does work of its own between them.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DRIVER_DRIVER_H
#define FUSE_DRIVER_DRIVER_H

#include "fuse/Dialect/Fuse/Transforms/GraphDriver.h"
#include "fuse/Runtime/Executable.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <functional>
#include <string>
#include <vector>

namespace fuse::driver {

/// Why a step failed.
struct DriverError {
  /// What failed and where, e.g. "no function @f in 'g.mlir' (it has: @a)".
  std::string message;
  /// The diagnostics given to the context's handler tell the whole error
  /// (parsing, the graph type check, code generation): `message` only heads
  /// them ("cannot parse g.mlir"), and a caller that prints diagnostics as
  /// they come has nothing to add.
  bool diagnosed = false;
};

struct CompileOptions {
  /// The function to compile; empty: the module's only function with a body.
  std::string entry;
  /// How messages name the graph: "'model.mlir'", "the graph".
  std::string graphName = "the graph";
  /// Ends the message for a graph of several functions and no entry named.
  std::string entryHint = "name the entry";
  /// The pass pipeline (MLIR's textual form), skipped for a planned graph.
  std::string pipeline = "fuse-pipeline";
  /// Names the pipeline's option in messages ("bad --pipeline '...'").
  std::string pipelineFlag = "pipeline";
  /// Runs the pipeline on a copy, leaving the parsed module as it was (for
  /// a caller that also interprets the graph as written).
  bool keepParsed = false;
  /// The target architecture ("sm_90a"). Where empty, compileGraph asks
  /// `defaultArch` after the pipeline (the C API: the current GPU's).
  std::string arch;
  std::function<mlir::FailureOr<std::string>(std::string &error)> defaultArch;
};

/// A graph on its way to an Executable; each step fills in its part.
struct Compilation {
  /// The parsed module; after the pipeline unless `keepParsed`.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// The entry function in `module`.
  mlir::func::FuncOp entry;
  /// With `keepParsed`: the copy the pipeline ran on.
  mlir::OwningOpRef<mlir::ModuleOp> plannedCopy;
  /// The entry function after the pipeline (in `plannedCopy` or `module`).
  mlir::func::FuncOp planned;
  runtime::Executable executable;
  /// Wall time of each step, in order: "parse and verify", each pass of the
  /// pipeline by its argument (GraphDriver.h), "code generation".
  std::vector<mlir::fuse::PhaseTime> phases;
};

/// Registers what a pipeline text may name (MLIR's transforms, Fuse's
/// passes, fuse-pipeline). Once per process; safe from any thread.
void registerPipelinePasses();

/// Adds the dialects of a graph (fuse, func) to `registry`.
void registerGraphDialects(mlir::DialectRegistry &registry);

/// Step 1: parses the main buffer of `sourceMgr`, runs the graph type check
/// and chooses the entry function.
mlir::LogicalResult parseGraph(mlir::MLIRContext &context,
                               llvm::SourceMgr &sourceMgr,
                               const CompileOptions &options,
                               Compilation &compilation, DriverError &error);

/// Step 2: runs the pipeline, unless the entry is planned already, and sets
/// `planned`.
mlir::LogicalResult planGraph(Compilation &compilation,
                              const CompileOptions &options,
                              DriverError &error);

/// Step 3: code generation of `planned` for `arch`.
mlir::LogicalResult generateExecutable(Compilation &compilation,
                                       const std::string &arch,
                                       DriverError &error);

/// The three steps, with the architecture from `options`.
mlir::LogicalResult compileGraph(mlir::MLIRContext &context,
                                 llvm::SourceMgr &sourceMgr,
                                 const CompileOptions &options,
                                 Compilation &compilation, DriverError &error);

} // namespace fuse::driver

#endif // FUSE_DRIVER_DRIVER_H
