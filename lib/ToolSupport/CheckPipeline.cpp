//===- CheckPipeline.cpp - Does a pass pipeline keep a graph's meaning? ---===//

#include "fuse/ToolSupport/CompareOutputs.h"
#include "fuse/ToolSupport/RunSupport.h"

#include "fuse/Dialect/Fuse/Transforms/GraphDriver.h"
#include "fuse/Interpreter/Interpreter.h"
#include "fuse/Support/Comparison.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::DType;
using ::fuse::HostTensor;

/// Every float dtype that a value of `func` has: the least precise decides
/// how close two runs can be.
static void collectFloatDTypes(func::FuncOp func, std::vector<DType> &dtypes) {
  auto add = [&](Type type) {
    auto tensor = llvm::dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return;
    FailureOr<DType> dtype = getDType(tensor.getElementType());
    if (succeeded(dtype) && ::fuse::isFloat(*dtype))
      dtypes.push_back(*dtype);
  };
  for (Type type : func.getArgumentTypes())
    add(type);
  func.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      add(type);
  });
}

/// A copy of `module` after `pipeline` (named `flag` in errors, which are
/// reported).
static FailureOr<OwningOpRef<ModuleOp>>
applyPipeline(ModuleOp module, const std::string &pipeline,
              const std::string &flag) {
  OwningOpRef<ModuleOp> transformed = module.clone();
  std::string error;
  if (failed(runPipeline(*transformed, pipeline, flag, error))) {
    (void)reportError(error);
    return failure();
  }
  return transformed;
}

double mlir::fuse::toleranceOfGraphs(func::FuncOp before, func::FuncOp after) {
  std::vector<DType> dtypes;
  collectFloatDTypes(before, dtypes);
  collectFloatDTypes(after, dtypes);
  return ::fuse::toleranceFor(dtypes);
}

LogicalResult mlir::fuse::checkAgainstPipeline(
    MLIRContext &context, ModuleOp module, func::FuncOp func,
    const std::string &pipeline, const std::vector<HostTensor> &inputs,
    const std::vector<HostTensor> &reference) {
  FailureOr<OwningOpRef<ModuleOp>> transformed =
      applyPipeline(module, pipeline, "--check-pipeline");
  if (failed(transformed))
    return failure();
  auto after = (**transformed).lookupSymbol<func::FuncOp>(func.getSymName());
  if (!after)
    return reportError("the pipeline '" + pipeline + "' removed @" +
                       func.getSymName().str());
  if (after.getFunctionType() != func.getFunctionType())
    return reportError("the pipeline '" + pipeline + "' changed the signature of @" +
                       func.getSymName().str());
  FailureOr<std::vector<HostTensor>> outputs = interpret(after, inputs);
  if (failed(outputs))
    return failure();
  double tolerance = toleranceOfGraphs(func, after);
  llvm::outs() << "check-pipeline '" << pipeline << "': tolerance "
               << llvm::format("%.0e", tolerance)
               << " (relative, from the dtypes of both graphs)\n";
  return compareOutputs(llvm::outs(), "check-pipeline", func, *outputs,
                        reference,
                        std::vector<double>(reference.size(), tolerance));
}
