//===- Driver.cpp - The compile driver: graph text to an Executable -------===//

#include "fuse/Driver/Driver.h"

#include "fuse/Codegen/Codegen.h"
#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/IR/GraphParsing.h"
#include "fuse/Dialect/Fuse/IR/GraphVerification.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"

#include "mlir/Transforms/Passes.h"

#include <chrono>
#include <mutex>

using namespace mlir;
namespace rt = ::fuse::runtime;

namespace fuse::driver {
namespace {

using Clock = std::chrono::steady_clock;

/// Appends the time since `start` to `phases` as `name`.
void addPhase(std::vector<mlir::fuse::PhaseTime> &phases, const char *name,
              Clock::time_point start) {
  phases.push_back(
      {name, std::chrono::duration<double>(Clock::now() - start).count()});
}

LogicalResult fail(DriverError &error, std::string message, bool diagnosed) {
  error.message = std::move(message);
  error.diagnosed = diagnosed;
  return failure();
}

} // namespace

void registerPipelinePasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerTransformsPasses();
    mlir::fuse::registerFusePasses();
    mlir::fuse::registerFusePipeline();
  });
}

void registerGraphDialects(DialectRegistry &registry) {
  registry.insert<mlir::fuse::FuseDialect, func::FuncDialect>();
}

LogicalResult parseGraph(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                         const CompileOptions &options,
                         Compilation &compilation, DriverError &error) {
  Clock::time_point start = Clock::now();
  std::string source =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBufferIdentifier().str();
  // Parsing (after the nesting check) verifies the module; the graph type
  // check then rejects what op verifiers cannot see (a dynamic or oversized
  // function argument) before anything plans memory for it. Both report
  // through the context's diagnostics.
  compilation.module = mlir::fuse::parseGraph(sourceMgr, &context);
  if (!compilation.module)
    return fail(error, "cannot parse " + source, /*diagnosed=*/true);
  if (failed(mlir::fuse::verifyGraphTypes(*compilation.module)))
    return fail(error, "unsupported types in " + source, /*diagnosed=*/true);
  addPhase(compilation.phases, "parse and verify", start);
  FailureOr<func::FuncOp> entry = mlir::fuse::findEntryFunction(
      *compilation.module, options.entry, options.graphName, options.entryHint,
      error.message);
  if (failed(entry))
    return fail(error, error.message, /*diagnosed=*/false);
  compilation.entry = *entry;
  return success();
}

LogicalResult planGraph(Compilation &compilation, const CompileOptions &options,
                        DriverError &error) {
  ModuleOp module = *compilation.module;
  if (options.keepParsed) {
    compilation.plannedCopy = module.clone();
    module = *compilation.plannedCopy;
  }
  std::string name = compilation.entry.getSymName().str();
  compilation.planned = module.lookupSymbol<func::FuncOp>(name);
  // A graph written after fuse-pipeline (fuse-opt's output) is planned
  // already; running the pipeline again would plan it twice.
  if (mlir::fuse::isPlanned(compilation.planned))
    return success();
  if (failed(mlir::fuse::runPipeline(module, options.pipeline,
                                     options.pipelineFlag, error.message,
                                     &compilation.phases)))
    return fail(error, error.message, /*diagnosed=*/false);
  compilation.planned = module.lookupSymbol<func::FuncOp>(name);
  if (!compilation.planned)
    return fail(error, "the pipeline '" + options.pipeline + "' removed @" + name,
                /*diagnosed=*/false);
  if (!options.keepParsed)
    compilation.entry = compilation.planned;
  return success();
}

LogicalResult generateExecutable(Compilation &compilation,
                                 const std::string &arch, DriverError &error) {
  Clock::time_point start = Clock::now();
  FailureOr<rt::Executable> executable =
      codegen::buildExecutable(compilation.planned, {arch});
  if (failed(executable))
    return fail(error,
                "code generation failed for @" +
                    compilation.planned.getSymName().str(),
                /*diagnosed=*/true);
  addPhase(compilation.phases, "code generation", start);
  compilation.executable = std::move(*executable);
  return success();
}

LogicalResult compileGraph(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                           const CompileOptions &options,
                           Compilation &compilation, DriverError &error) {
  if (failed(parseGraph(context, sourceMgr, options, compilation, error)) ||
      failed(planGraph(compilation, options, error)))
    return failure();
  std::string arch = options.arch;
  if (arch.empty()) {
    if (!options.defaultArch)
      return fail(error, "no target architecture named", /*diagnosed=*/false);
    FailureOr<std::string> chosen = options.defaultArch(error.message);
    if (failed(chosen))
      return fail(error, error.message, /*diagnosed=*/false);
    arch = *chosen;
  }
  return generateExecutable(compilation, arch, error);
}

} // namespace fuse::driver
