//===- fuse-opt.cpp - The Fuse optimizer driver ---------------------------===//
//
// mlir-opt for Fuse graphs: parses a module, runs the passes named on the
// command line (every Fuse pass and MLIR's generic ones are registered), and
// prints the result. Diagnostics carry file:line:col; any error exits with 1.
//
// Before any pass named on the command line (or none), every input goes
// through the graph type check (GraphVerification.h): op verifiers cannot
// see a function whose arguments are dynamic or too large, and such a graph
// would otherwise print back as if valid. Before MLIR's parser sees the
// text, it is checked for nesting the parser cannot survive
// (GraphParsing.h).
//
//===----------------------------------------------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/IR/GraphParsing.h"
#include "fuse/Dialect/Fuse/Transforms/GraphDriver.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"
#include "TestPasses.h"

#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::registerTransformsPasses();
  mlir::fuse::registerFusePasses();
  mlir::fuse::registerFusePipeline();
  mlir::fuse::test::registerTestPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::fuse::FuseDialect, mlir::func::FuncDialect>();
  // func.call and func.return inline (--inline) only with func's extension.
  mlir::func::registerInlinerExtension(registry);

  auto [inputPath, outputPath] = mlir::registerAndParseCLIOptions(
      argc, argv, "Fuse optimizer driver: runs Fuse passes on fuse graphs\n",
      registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  // --show-dialects and --list-passes: MLIR's driver as it is.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputPath, outputPath, registry));

  // The command line's pipeline, after the graph type check.
  mlir::MlirOptMainConfig commandLine = config;
  config.setPassPipelineSetupFn([commandLine](mlir::PassManager &pm) {
    pm.addPass(mlir::fuse::createVerifyGraphTypesPass());
    return commandLine.setupPassPipeline(pm);
  });
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = mlir::openInputFile(inputPath, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  {
    // The parser recurses per level of nesting: refuse what would overflow
    // its stack, at its line and column, before MlirOptMain parses.
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef(), false),
        llvm::SMLoc());
    if (mlir::failed(mlir::fuse::checkGraphText(
            sourceMgr, sourceMgr.getMainFileID(), llvm::errs())))
      return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output = mlir::openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
