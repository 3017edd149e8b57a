//===- AutoMixedPrecision.cpp - fuse-auto-mixed-precision -----------------===//
//
// Checks the options when the pass is set up, before it touches the IR, and
// runs its parts on every function: the precision policy
// (PrecisionPolicy.cpp), linear layers' outputs rounded as autocast rounds
// them (LinearOutputs.cpp), then, for f16, dynamic loss scaling
// (LossScaling.cpp), and, when asked, the 16-bit weight copies a training
// step keeps as state (WeightCopies.cpp). Loss scaling comes second because it finds the
// gradients through the casts the policy adds, so the 16-bit matmuls of the
// backward read scaled values.
//
//===----------------------------------------------------------------------===//

#include "AutoMixedPrecision.h"

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

#define DEBUG_TYPE "fuse-auto-mixed-precision"

namespace mlir::fuse {
#define GEN_PASS_DEF_FUSEAUTOMIXEDPRECISION
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"
} // namespace mlir::fuse

using namespace mlir;
using namespace mlir::fuse;

namespace {

struct AutoMixedPrecisionPass
    : mlir::fuse::impl::FuseAutoMixedPrecisionBase<AutoMixedPrecisionPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    if (dtype == "bf16")
      lowType = BFloat16Type::get(context);
    else if (dtype == "f16")
      lowType = Float16Type::get(context);
    else
      return emitError(UnknownLoc::get(context))
             << "fuse-auto-mixed-precision: unknown dtype '" << dtype
             << "'; valid values: bf16, f16";
    if (growthInterval < 1)
      return emitError(UnknownLoc::get(context))
             << "fuse-auto-mixed-precision: growth-interval must be at least "
                "1, got "
             << static_cast<int64_t>(growthInterval);
    return success();
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      amp::applyPrecisionPolicy(func, lowType);
      if (roundLinearOutputs)
        amp::roundLinearOutputs(func, lowType);
      if (narrowResults)
        amp::narrowResults(func, lowType);
      // bf16 has f32's range: only f16 needs its gradients scaled.
      if (lowType.isF16() &&
          failed(amp::addDynamicLossScaling(func, growthInterval)))
        return signalPassFailure();
      // After loss scaling, whose skipped update the copies follow.
      if (weightCopies && failed(amp::keepWeightCopies(func, lowType)))
        return signalPassFailure();
    }
  }

private:
  FloatType lowType;
};

} // namespace
