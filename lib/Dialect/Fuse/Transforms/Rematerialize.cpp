//===- Rematerialize.cpp - fuse-rematerialize -----------------------------===//
//
// For each training step (a function with a result named `loss`): chooses
// the forward values the backward recomputes (RematerializeCut.cpp) and
// recomputes them next to their readers (RematerializeRewrite.cpp).
// Without a budget only what is free is recomputed: pointwise kernels that
// their backward readers' kernels compute themselves. With one, the cut
// prices recomputed FLOPs against kept bytes, from dear to free, and random
// numbers come last (recomputed bit for bit); each attempt works on a copy
// of the function and the first that meets the budget replaces it. The
// peak is the largest sum of live intermediate bytes (unaligned, unlike the
// arena's lower bound) once fuse-schedule's scheduler has ordered the
// function, which it leaves so. A remark on the function reports what was
// done; a budget no policy meets is an error that gives the smallest peak
// reached.
//
//===----------------------------------------------------------------------===//

#include "Rematerialize.h"
#include "fuse/Dialect/Fuse/Transforms/PrintHelpers.h"
#include "Schedule.h"

#include "fuse/Analysis/Liveness.h"
#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

#define DEBUG_TYPE "fuse-rematerialize"

namespace mlir::fuse {
#define GEN_PASS_DEF_FUSEREMATERIALIZE
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"
} // namespace mlir::fuse

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::remat;

namespace {

/// The peak once fuse-schedule has ordered the function (which it does).
int64_t peakOf(func::FuncOp func) {
  return scheduleForPeak(func.getBody().front()).second.peakBytes;
}

/// The policies tried under a budget, least recomputation first: FLOPs
/// priced from dear (a FLOP worth a byte kept) to free, random numbers only
/// at the end.
SmallVector<RecomputePolicy> budgetPolicies() {
  SmallVector<RecomputePolicy> policies = {RecomputePolicy{}};
  for (double bytesPerFlop : {1.0, 0.1, 0.01, 1e-3, 1e-4, 1e-5, 0.0})
    policies.push_back({bytesPerFlop, /*allowRandom=*/false});
  policies.push_back({0.0, /*allowRandom=*/true});
  return policies;
}

std::string describe(const RecomputePolicy &policy) {
  if (std::isinf(policy.bytesPerFlop))
    return "only what is free: pointwise kernels, inside their readers";
  return llvm::formatv("FLOPs priced at {0:e} bytes each{1}",
                       policy.bytesPerFlop,
                       policy.allowRandom ? ", random numbers included" : "")
      .str();
}

} // namespace

namespace {

struct RematerializePass
    : mlir::fuse::impl::FuseRematerializeBase<RematerializePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    if (budget < 0 || fraction < 0 || fraction > 1 ||
        (budget > 0 && fraction > 0))
      return emitError(UnknownLoc::get(context))
             << "fuse-rematerialize: give either budget (bytes, > 0) or "
                "fraction (of the peak without rematerialization, in (0, 1]), "
                "not both; got budget="
             << static_cast<int64_t>(budget)
             << " fraction=" << static_cast<double>(fraction);
    return success();
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && func.getBody().hasOneBlock() &&
          failed(rematerialize(func)))
        return signalPassFailure();
  }

  LogicalResult rematerialize(func::FuncOp func) {
    int64_t before = peakOf(func);
    int64_t limit = budget > 0     ? static_cast<int64_t>(budget)
                    : fraction > 0 ? static_cast<int64_t>(fraction * before)
                                   : 0;
    llvm::DenseSet<Operation *> forward = findForward(func);
    if (forward.empty()) {
      if (limit > 0 && before > limit)
        return emitError(func.getLoc())
               << "fuse-rematerialize: the peak of @" << func.getSymName()
               << " is " << before << " bytes ("
               << humanReadable(before, "B", 1) << "), over the budget of "
               << limit << " bytes (" << humanReadable(limit, "B", 1)
               << "), and it is no training step (no result named 'loss') "
                  "whose activations could be recomputed";
      return success();
    }

    int64_t best = before;
    SmallVector<RecomputePolicy> policies =
        limit == 0 ? SmallVector<RecomputePolicy>{RecomputePolicy{}}
                   : budgetPolicies();
    for (const RecomputePolicy &policy : policies) {
      func::FuncOp attempt = func.clone();
      llvm::DenseSet<Operation *> attemptForward = findForward(attempt);
      llvm::DenseSet<Value> chosen =
          chooseRecomputed(attempt, attemptForward, policy);
      RewriteStats stats = recompute(attempt, attemptForward, chosen);
      int64_t after = peakOf(attempt);
      best = std::min(best, after);
      if (limit > 0 && after > limit) {
        attempt.erase();
        continue;
      }
      func.getBody().takeBody(attempt.getBody());
      attempt.erase();
      if (stats.valuesRecomputed == 0 && limit == 0)
        return success();
      // At the function's location, without the op: a remark that printed
      // the whole step would bury what it says.
      emitRemark(func.getLoc()) << llvm::formatv(
          "fuse-rematerialize: recomputed {0} forward values in the backward "
          "({1} as kernels of their own, {2} inside their readers' kernels; "
          "{3}); peak {4} -> {5} bytes ({6} -> {7}), {8} bytes saved, {9} "
          "FLOPs added",
          stats.valuesRecomputed, stats.kernelsAdded,
          stats.kernelsMergedIntoReaders, describe(policy), before, after,
          humanReadable(before, "B", 1), humanReadable(after, "B", 1),
          before - after, stats.flopsAdded);
      return success();
    }
    return emitError(func.getLoc()) << llvm::formatv(
               "fuse-rematerialize: cannot bring the peak of @{0} under the "
               "budget of {1} bytes ({2}): the smallest peak reached, "
               "recomputing any kernel, is {3} bytes ({4}; {5} without "
               "rematerialization)",
               func.getSymName(), limit, humanReadable(limit, "B", 1), best,
               humanReadable(best, "B", 1), humanReadable(before, "B", 1));
  }
};

} // namespace
