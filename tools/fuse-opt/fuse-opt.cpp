//===- fuse-opt.cpp - The Fuse optimizer driver ---------------------------===//
//
// mlir-opt for Fuse graphs: parses a module, runs the passes named on the
// command line (every Fuse pass and MLIR's generic ones are registered), and
// prints the result. Diagnostics carry file:line:col; any error exits with 1.
//
//===----------------------------------------------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"
#include "TestPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::fuse::registerFusePasses();
  mlir::fuse::registerFusePipeline();
  mlir::fuse::test::registerTestPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::fuse::FuseDialect, mlir::func::FuncDialect>();

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Fuse optimizer driver: runs Fuse passes on fuse graphs\n",
      registry));
}
