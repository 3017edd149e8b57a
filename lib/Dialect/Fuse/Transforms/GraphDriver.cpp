//===- GraphDriver.cpp - Choosing a graph's function, running a pipeline --===//

#include "fuse/Dialect/Fuse/Transforms/GraphDriver.h"
#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/IR/GraphVerification.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

FailureOr<func::FuncOp> mlir::fuse::findEntryFunction(ModuleOp module,
                                                      StringRef entry,
                                                      StringRef where,
                                                      StringRef hint,
                                                      std::string &error) {
  SmallVector<func::FuncOp> functions;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      functions.push_back(func);
  std::string names;
  for (func::FuncOp func : functions) {
    if (!entry.empty() && func.getSymName() == entry)
      return func;
    names += (names.empty() ? "@" : ", @") + func.getSymName().str();
  }
  if (!entry.empty()) {
    error = "no function @" + entry.str() + " in " + where.str() +
            " (it has: " + (names.empty() ? "none" : names) + ")";
    return failure();
  }
  if (functions.size() != 1) {
    error = where.str() + " has " + std::to_string(functions.size()) +
            " functions" + (names.empty() ? "" : " (" + names + ")") + ": " +
            hint.str();
    return failure();
  }
  return functions.front();
}

LogicalResult mlir::fuse::runPipeline(ModuleOp module, StringRef pipeline,
                                      StringRef flag, std::string &error) {
  PassManager passManager(module.getContext());
  std::string parseErrors;
  llvm::raw_string_ostream errorStream(parseErrors);
  if (failed(parsePassPipeline(pipeline, passManager, errorStream))) {
    error = "bad " + flag.str() + " '" + pipeline.str() + "': " + parseErrors;
    return failure();
  }
  if (failed(passManager.run(module))) {
    error = "the pipeline '" + pipeline.str() + "' failed on the graph";
    return failure();
  }
  return success();
}

bool mlir::fuse::isPlanned(func::FuncOp func) {
  return func->hasAttr(FuseDialect::kArenaSizeAttr);
}

namespace {
struct VerifyGraphTypesPass
    : PassWrapper<VerifyGraphTypesPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyGraphTypesPass)
  StringRef getArgument() const override { return "fuse-verify-graph-types"; }
  StringRef getDescription() const override {
    return "Checks that every value of every function is a static, "
           "storable, int64-sized tensor";
  }
  void runOnOperation() override {
    if (failed(mlir::fuse::verifyGraphTypes(getOperation())))
      signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass> mlir::fuse::createVerifyGraphTypesPass() {
  return std::make_unique<VerifyGraphTypesPass>();
}
