//===- Decompose.cpp - fuse-decompose -------------------------------------===//
//
// Runs the decomposition patterns (Decompose<Family>.cpp) with MLIR's greedy
// rewriter. `keep` disables patterns by their label, the op's name; a name
// no pattern carries is an error when the pass is initialised, before it
// touches the IR. Attention has no pattern: it is always kept, and naming it
// in `keep` is allowed. The rewriter neither folds nor moves constants, so
// the pass changes nothing but the composites it decomposes.
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"

#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#define DEBUG_TYPE "fuse-decompose"

namespace mlir::fuse {
#define GEN_PASS_DEF_FUSEDECOMPOSE
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"
} // namespace mlir::fuse

using namespace mlir;
using namespace mlir::fuse;

namespace {

struct DecomposePass : mlir::fuse::impl::FuseDecomposeBase<DecomposePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet patterns(context);
    populateDecomposeActivationPatterns(patterns);
    populateDecomposeNormalizationPatterns(patterns);
    populateDecomposeCrossEntropyPatterns(patterns);
    populateDecomposeArgmaxPatterns(patterns);

    // The names `keep` accepts: every pattern's label, and attention's.
    SmallVector<std::string> decomposable;
    for (const std::unique_ptr<RewritePattern> &pattern :
         patterns.getNativePatterns())
      for (StringRef label : pattern->getDebugLabels())
        decomposable.push_back(label.str());
    llvm::sort(decomposable);
    const SmallVector<std::string> alwaysKept = {
        decompose::opLabel<AttentionOp>().str(),
        decompose::opLabel<AttentionBackwardOp>().str()};
    for (const std::string &name : keep) {
      if (llvm::is_contained(decomposable, name) ||
          llvm::is_contained(alwaysKept, name))
        continue;
      return emitError(UnknownLoc::get(context))
             << "fuse-decompose: unknown op '" << name
             << "' in keep; valid names: " << llvm::join(decomposable, ", ")
             << " (" << llvm::join(alwaysKept, " and ")
             << " are always kept)";
    }
    frozenPatterns = FrozenRewritePatternSet(std::move(patterns),
                                             /*disabledPatternLabels=*/*keep);
    return success();
  }

  void runOnOperation() override {
    GreedyRewriteConfig config;
    config.enableFolding(false)
        .enableConstantCSE(false)
        .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), frozenPatterns, config))) {
      getOperation()->emitError("fuse-decompose did not converge");
      signalPassFailure();
    }
  }

private:
  FrozenRewritePatternSet frozenPatterns;
};

} // namespace
