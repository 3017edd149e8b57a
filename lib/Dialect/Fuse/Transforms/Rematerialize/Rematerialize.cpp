//===- Rematerialize.cpp - fuse-rematerialize -----------------------------===//
//
// For each training step (a function with a result named `loss`): chooses
// the forward values the backward recomputes (RematerializeCut.cpp) and
// recomputes them next to their readers (RematerializeRewrite.cpp).
// Without a budget only what is free is recomputed: pointwise kernels that
// their backward readers' kernels compute themselves. With one, every
// policy is tried on a copy of the function: the cut prices recomputed
// FLOPs against kept bytes, from dear to free, with random numbers last
// (recomputed bit for bit), and copies that cannot go into their readers'
// kernels are shared by the readers or made per reader, for cheap and for
// dear kernels apart. Of the attempts that meet the budget, the one that
// adds the least estimated time (FLOPs, bytes and launches, weighed as
// fusion weighs them) replaces the function. The peak is the largest sum
// of live intermediate bytes (unaligned, unlike the arena's lower bound)
// once fuse-schedule's scheduler has ordered the function, which it leaves
// so. A remark on the function reports what was done; a budget no policy
// meets is an error that gives the smallest peak reached.
//
//===----------------------------------------------------------------------===//

#include "Rematerialize.h"
#include "fuse/Dialect/Fuse/Transforms/PrintHelpers.h"
#include "Schedule.h"

#include "fuse/Analysis/CostModel.h"
#include "fuse/Analysis/Liveness.h"
#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"
#include "fuse/Support/HumanSize.h"

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

/// The policies tried under a budget: FLOPs priced from dear (a FLOP worth
/// a byte kept) to free, random numbers only at the end, each with copies
/// shared by their readers, cheap copies per reader, and all per reader.
SmallVector<RecomputePolicy> budgetPolicies() {
  SmallVector<RecomputePolicy> prices = {RecomputePolicy{}};
  for (double bytesPerFlop : {1.0, 0.1, 0.01, 1e-3, 1e-4, 1e-5, 0.0})
    prices.push_back({bytesPerFlop, /*allowRandom=*/false});
  prices.push_back({0.0, /*allowRandom=*/true});
  SmallVector<RecomputePolicy> policies;
  for (const RecomputePolicy &price : prices)
    for (auto [cheap, dear] : {std::pair{true, true}, std::pair{false, true},
                               std::pair{false, false}}) {
      RecomputePolicy policy = price;
      policy.shareCheapCopies = cheap;
      policy.shareDearCopies = dear;
      policies.push_back(policy);
    }
  return policies;
}

std::string describe(const RecomputePolicy &policy) {
  if (std::isinf(policy.bytesPerFlop))
    return "only what is free: pointwise kernels, inside their readers";
  std::string sharing =
      policy.shareCheapCopies && policy.shareDearCopies
          ? "copies shared by their readers"
      : policy.shareDearCopies ? "memory-bound copies made per reader"
                               : "copies made per reader";
  return llvm::formatv("FLOPs priced at {0:e} bytes each{1}; {2}",
                       policy.bytesPerFlop,
                       policy.allowRandom ? ", random numbers included" : "",
                       sharing)
      .str();
}

/// The estimated time a function takes, in bytes of memory traffic that
/// take as long (FLOPs and launches converted as fusion converts them).
double timeInBytes(func::FuncOp func) {
  FailureOr<FuncCost> cost = computeFuncCost(func);
  if (failed(cost))
    return 0;
  const ::fuse::OpCost &total = cost->total;
  return static_cast<double>(total.bytesRead + total.bytesWritten) +
         static_cast<double>(total.kernels) * ::fuse::cost::kLaunchEquivalentBytes +
         static_cast<double>(total.flops) * ::fuse::cost::kFlopEquivalentBytes;
}

/// One rewritten copy of the function and what it reached.
struct Attempt {
  func::FuncOp func;
  RecomputePolicy policy;
  RewriteStats stats;
  int64_t peak = 0;
  double addedTime = 0;
};

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
               << ::fuse::humanBytes(before) << "), over the budget of "
               << limit << " bytes (" << ::fuse::humanBytes(limit)
               << "), and it is no training step (no result named 'loss') "
                  "whose activations could be recomputed";
      return success();
    }

    int64_t best = before;
    double timeBefore = timeInBytes(func);
    std::optional<Attempt> chosen;
    SmallVector<RecomputePolicy> policies =
        limit == 0 ? SmallVector<RecomputePolicy>{RecomputePolicy{}}
                   : budgetPolicies();
    for (const RecomputePolicy &policy : policies) {
      Attempt attempt{func.clone(), policy};
      llvm::DenseSet<Operation *> attemptForward = findForward(attempt.func);
      attempt.stats = recompute(
          attempt.func, attemptForward,
          chooseRecomputed(attempt.func, attemptForward, policy), policy);
      attempt.peak = peakOf(attempt.func);
      attempt.addedTime = timeInBytes(attempt.func) - timeBefore;
      best = std::min(best, attempt.peak);
      bool better = !chosen ||
                    attempt.addedTime < chosen->addedTime ||
                    (attempt.addedTime == chosen->addedTime &&
                     attempt.peak < chosen->peak);
      if ((limit > 0 && attempt.peak > limit) || !better) {
        attempt.func.erase();
        continue;
      }
      if (chosen)
        chosen->func.erase();
      chosen = attempt;
    }
    if (chosen) {
      func.getBody().takeBody(chosen->func.getBody());
      chosen->func.erase();
      const RewriteStats &stats = chosen->stats;
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
          stats.kernelsMergedIntoReaders, describe(chosen->policy), before,
          chosen->peak, ::fuse::humanBytes(before),
          ::fuse::humanBytes(chosen->peak), before - chosen->peak,
          stats.flopsAdded);
      return success();
    }
    return emitError(func.getLoc()) << llvm::formatv(
               "fuse-rematerialize: cannot bring the peak of @{0} under the "
               "budget of {1} bytes ({2}): the smallest peak reached, "
               "recomputing any kernel, is {3} bytes ({4}; {5} without "
               "rematerialization)",
               func.getSymName(), limit, ::fuse::humanBytes(limit), best,
               ::fuse::humanBytes(best), ::fuse::humanBytes(before));
  }
};

} // namespace
