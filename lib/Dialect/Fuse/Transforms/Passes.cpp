//===- Passes.cpp - Registration of the Fuse passes and fuse-pipeline -----===//
//
// Pass implementations live in one file each beside this one; this file
// instantiates the generated registration code and builds `fuse-pipeline`.
//
//===----------------------------------------------------------------------===//

#include "fuse/Dialect/Fuse/Transforms/Passes.h"
#include "fuse/Dialect/Fuse/Transforms/GraphDriver.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::fuse;


void mlir::fuse::buildFusePipeline(OpPassManager &pm,
                                   const FusePipelineOptions &options) {
  // No pass is written for dynamic or oversized types: reject them first,
  // once, with the value and the type.
  pm.addPass(createVerifyGraphTypesPass());
  // Mixed precision runs before decomposition: dynamic loss scaling finds
  // the loss gradient at fuse.cross_entropy_backward, which decomposition
  // dissolves. The precision policy itself does not care about the order,
  // since it changes only matmul and attention, which are never decomposed.
  // A dtype other than bf16 or f16 is reported by the pass's own check.
  if (options.amp != "none") {
    FuseAutoMixedPrecisionOptions amp;
    amp.dtype = options.amp;
    amp.narrowResults = options.narrowResults;
    amp.weightCopies = options.weightCopies;
    pm.addPass(createFuseAutoMixedPrecision(amp));
  }
  FuseDecomposeOptions decompose;
  for (const std::string &name : options.keep)
    if (name != "none")
      decompose.keep.push_back(name);
  pm.addPass(createFuseDecompose(decompose));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  FuseFormFusionsOptions fusions;
  fusions.maxInputs = options.maxInputs;
  fusions.maxOutputs = options.maxOutputs;
  pm.addPass(createFuseFormFusions(fusions));
  FuseRematerializeOptions remat;
  remat.budget = options.rematBudget;
  remat.fraction = options.rematFraction;
  pm.addPass(createFuseRematerialize(remat));
  pm.addPass(createFuseSchedule());
  FusePlanMemoryOptions plan;
  plan.maxArenaBytes = options.maxArenaBytes;
  pm.addPass(createFusePlanMemory(plan));
}

void mlir::fuse::registerFusePipeline() {
  PassPipelineRegistration<FusePipelineOptions>(
      "fuse-pipeline",
      "The Fuse compiler's graph passes in order: "
      "fuse-auto-mixed-precision, fuse-decompose, canonicalize, cse, "
      "fuse-form-fusions, fuse-rematerialize, fuse-schedule, "
      "fuse-plan-memory",
      buildFusePipeline);
}
