//===- GraphDriver.cpp - Choosing a graph's function, running a pipeline --===//

#include "fuse/Dialect/Fuse/Transforms/GraphDriver.h"
#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/IR/GraphVerification.h"

#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <chrono>
#include <map>
#include <mutex>
#include <thread>

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

namespace {
/// Sums each named pass's wall time. Adaptors (the nesting of a pipeline
/// over functions) have no argument and are skipped, so no time is counted
/// twice. Passes nested over functions may run on several threads: each
/// thread keeps its own stack of start times.
class PassTimer : public PassInstrumentation {
public:
  explicit PassTimer(std::vector<mlir::fuse::PhaseTime> &times)
      : times(times) {}

  void runBeforePass(Pass *, Operation *) override {
    std::lock_guard<std::mutex> lock(mutex);
    starts[std::this_thread::get_id()].push_back(
        std::chrono::steady_clock::now());
  }
  void runAfterPass(Pass *pass, Operation *) override { stop(pass); }
  void runAfterPassFailed(Pass *pass, Operation *) override { stop(pass); }

private:
  void stop(Pass *pass) {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<std::chrono::steady_clock::time_point> &stack =
        starts[std::this_thread::get_id()];
    std::chrono::duration<double> spent =
        std::chrono::steady_clock::now() - stack.back();
    stack.pop_back();
    StringRef name = pass->getArgument();
    if (name.empty())
      return;
    auto known = llvm::find_if(times, [&](const mlir::fuse::PhaseTime &t) {
      return t.name == name;
    });
    if (known == times.end())
      times.push_back({name.str(), spent.count()});
    else
      known->seconds += spent.count();
  }

  std::vector<mlir::fuse::PhaseTime> &times;
  std::mutex mutex;
  std::map<std::thread::id, std::vector<std::chrono::steady_clock::time_point>>
      starts;
};
} // namespace

LogicalResult mlir::fuse::runPipeline(ModuleOp module, StringRef pipeline,
                                      StringRef flag, std::string &error,
                                      std::vector<PhaseTime> *passTimes) {
  PassManager passManager(module.getContext());
  if (passTimes)
    passManager.addInstrumentation(std::make_unique<PassTimer>(*passTimes));
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
