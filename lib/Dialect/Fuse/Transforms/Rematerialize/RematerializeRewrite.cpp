//===- RematerializeRewrite.cpp - Recompute forward values in the backward ===//
//
// For each backward op, in order, the forward kernels that compute the
// recomputed values it reads (and the recomputed values those read, and
// the views between) are cloned just before it. A clone that the reader
// alone reads is then merged into the reader's kernel when the merged body
// is still a kernel the code generator has a template for (a pointwise
// recomputation inside a backward loop or reduction: no extra launch, and
// the value never goes to memory). A clone that cannot be merged stays a
// kernel of its own; later readers that cannot merge theirs either share
// it, or compute their own copy where the policy says so (a shared copy
// lives from its first reader to its last, across much of the backward).
//
//===----------------------------------------------------------------------===//

#include "FormFusions/FusionLegality.h"
#include "Rematerialize.h"

#include "fuse/Analysis/CostModel.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::remat;

namespace {

/// The ops `producer` runs and the values they read from outside: a fusion's
/// body and inputs, or the op itself and its operands.
SmallVector<Value> producerInputs(Operation *producer) {
  if (auto fusion = dyn_cast<FusionOp>(producer))
    return llvm::to_vector(fusion.getInputs());
  return llvm::to_vector(producer->getOperands());
}

/// Erases the ops of a fusion body that nothing reads, users before their
/// producers so that whole dead chains go.
void eraseDeadOps(Block &body) {
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty())
      op->erase();
}

/// Merges `producer` (a fusion or a plain op whose results only `consumer`
/// reads) into the fusion `consumer`. Returns the new fusion, or nullptr
/// (and changes nothing) when the merged body is not a kernel.
FusionOp mergeIntoConsumer(Operation *producer, FusionOp consumer) {
  for (Value result : producer->getResults())
    for (Operation *user : result.getUsers())
      if (user != consumer)
        return nullptr;

  // Inputs: the producer's, then the consumer's other than the producer's
  // results.
  llvm::SetVector<Value> inputs;
  for (Value input : producerInputs(producer))
    inputs.insert(input);
  for (Value input : consumer.getInputs())
    if (input.getDefiningOp() != producer)
      inputs.insert(input);

  OpBuilder builder(consumer);
  auto merged = FusionOp::create(builder, consumer.getLoc(),
                                 consumer.getResultTypes(), consumer.getKind(),
                                 inputs.getArrayRef());
  SmallVector<Location> locations;
  for (Value input : inputs)
    locations.push_back(input.getLoc());
  Block *body = builder.createBlock(&merged.getBody(), {},
                                    ValueRange(inputs.getArrayRef()).getTypes(),
                                    locations);
  IRMapping outer; // values outside -> the merged body's arguments
  outer.map(inputs.getArrayRef(), body->getArguments());

  // The producer's computation, in the body.
  IRMapping produced; // the producer's results -> their values in the body
  if (auto fusion = dyn_cast<FusionOp>(producer)) {
    IRMapping inner;
    for (auto [argument, input] :
         llvm::zip(fusion.getBody().getArguments(), fusion.getInputs()))
      inner.map(argument, outer.lookup(input));
    for (Operation &op : fusion.getBody().front().without_terminator())
      builder.clone(op, inner);
    auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
    for (auto [result, value] :
         llvm::zip(fusion.getResults(), yield.getValues()))
      produced.map(result, inner.lookupOrDefault(value));
  } else {
    Operation *copy = builder.clone(*producer, outer);
    produced.map(producer->getResults(), copy->getResults());
  }
  // The consumer's body, its arguments now the merged ones.
  IRMapping inner;
  for (auto [argument, input] :
       llvm::zip(consumer.getBody().getArguments(), consumer.getInputs()))
    inner.map(argument, input.getDefiningOp() == producer
                            ? produced.lookup(input)
                            : outer.lookup(input));
  for (Operation &op : consumer.getBody().front())
    builder.clone(op, inner);

  // Splat constants in a body are immediates, as at the top level.
  SmallVector<Operation *> ops;
  for (Operation &op : body->without_terminator())
    if (!isa<ConstantOp>(op))
      ops.push_back(&op);
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  std::optional<FusionKind> kind = fusion::classifyGroup(ops, members);
  if (!kind) {
    merged.erase();
    return nullptr;
  }
  merged.setKind(*kind);
  // The producer's results the consumer does not read are dead here.
  eraseDeadOps(*body);
  consumer.replaceAllUsesWith(merged.getResults());
  consumer.erase();
  producer->erase();
  return merged;
}

/// Drops the results of `fusion` that nothing reads any more (a forward
/// value now recomputed in the backward is no longer stored), and the ops
/// of its body that only they needed; erases a fusion left with none.
void dropUnusedResults(FusionOp fusion) {
  SmallVector<unsigned> kept;
  for (OpResult result : fusion.getResults())
    if (!result.use_empty())
      kept.push_back(result.getResultNumber());
  if (kept.size() == fusion.getNumResults())
    return;
  if (kept.empty()) {
    fusion.erase();
    return;
  }
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  SmallVector<Value> values;
  SmallVector<Type> types;
  for (unsigned index : kept) {
    values.push_back(yield.getValues()[index]);
    types.push_back(fusion.getResult(index).getType());
  }
  OpBuilder builder(fusion);
  auto slim = FusionOp::create(builder, fusion.getLoc(), types,
                               fusion.getKind(), fusion.getInputs());
  slim.getBody().takeBody(fusion.getBody());
  Block &body = slim.getBody().front();
  builder.setInsertionPoint(body.getTerminator());
  YieldOp::create(builder, yield.getLoc(), values);
  yield.erase();
  for (auto [position, index] : llvm::enumerate(kept))
    fusion.getResult(index).replaceAllUsesWith(slim.getResult(position));
  fusion.erase();
  eraseDeadOps(body);
}

struct Rewriter {
  Rewriter(const llvm::DenseSet<Operation *> &forward,
           const llvm::DenseSet<Value> &recomputed,
           const RecomputePolicy &policy)
      : forward(forward), recomputed(recomputed), policy(policy) {}

  const llvm::DenseSet<Operation *> &forward;
  const llvm::DenseSet<Value> &recomputed;
  const RecomputePolicy &policy;
  RewriteStats stats;
  /// Clones that stayed kernels of their own, by the value they recompute.
  llvm::DenseMap<Value, Value> shared;

  /// The forward ops to clone for `reader`, in block order: producers of
  /// recomputed values it reads, transitively, and the views between.
  SmallVector<Operation *> cloneSet(Operation *reader) {
    llvm::SetVector<Operation *> set;
    SmallVector<Value> stack(reader->getOperands());
    while (!stack.empty()) {
      Value value = stack.pop_back_val();
      Operation *producer = value.getDefiningOp();
      if (!producer || !forward.contains(producer))
        continue;
      bool view = isa<ReshapeOp>(producer) &&
                  recomputed.contains(viewRoot(value));
      if (!view && !recomputed.contains(value))
        continue;
      if (set.insert(producer))
        llvm::append_range(stack, producer->getOperands());
    }
    SmallVector<Operation *> ordered(set.begin(), set.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    return ordered;
  }

  /// Whether a clone of `op` may go into one reader's kernel instead of
  /// being shared: a view or a pointwise kernel, which is cheap to compute
  /// again in every reader.
  static bool mergeable(Operation *op) {
    auto fusion = dyn_cast<FusionOp>(op);
    return isa<ReshapeOp>(op) ||
           (fusion && fusion.getKind() == FusionKind::Loop);
  }

  /// Whether readers share one copy of `op`: GEMMs and attention (dear to
  /// run again) and memory-bound kernels each as the policy says.
  bool sharesCopies(Operation *op) const {
    auto fusion = dyn_cast<FusionOp>(op);
    bool dear = isa<MatmulOp>(op) ||
                (fusion && (fusion.getKind() == FusionKind::GemmEpilogue ||
                            fusion.getKind() == FusionKind::Attention));
    return dear ? policy.shareDearCopies : policy.shareCheapCopies;
  }

  void recomputeFor(Operation *reader) {
    SmallVector<Operation *> originals = cloneSet(reader);
    if (originals.empty())
      return;
    auto fusion = dyn_cast<FusionOp>(reader);
    OpBuilder builder(reader);
    IRMapping mapping;
    SmallVector<Operation *> clones, clonedFrom;
    for (Operation *original : originals) {
      // A copy an earlier reader left as a kernel is reused, unless this
      // reader could compute the value itself or the policy wants a copy
      // per reader.
      bool haveShared = llvm::all_of(original->getResults(), [&](Value r) {
        return shared.count(r);
      });
      if (haveShared && sharesCopies(original) &&
          !(fusion && mergeable(original))) {
        for (Value result : original->getResults())
          mapping.map(result, shared.lookup(result));
        continue;
      }
      clones.push_back(builder.clone(*original, mapping));
      clonedFrom.push_back(original);
      if (isa<ReshapeOp>(original))
        continue;
      ++stats.kernelsAdded;
      stats.valuesRecomputed += original->getNumResults();
      if (FailureOr<::fuse::OpCost> cost = computeOpCost(original);
          succeeded(cost))
        stats.flopsAdded += cost->flops;
    }
    for (OpOperand &use : reader->getOpOperands())
      if (Value copy = mapping.lookupOrNull(use.get()))
        use.set(copy);

    // Merge the cheap clones into the reader, nearest first, while they
    // merge; the rest stay kernels that later readers share.
    size_t unmerged = clones.size();
    for (Operation *clone : llvm::reverse(clones)) {
      if (!fusion || !mergeable(clone))
        break;
      // Asked before the merge, which erases the clone.
      bool reshape = isa<ReshapeOp>(clone);
      FusionOp merged = mergeIntoConsumer(clone, fusion);
      if (!merged)
        break;
      --unmerged;
      if (!reshape) {
        ++stats.kernelsMergedIntoReaders;
        --stats.kernelsAdded;
      }
      fusion = merged;
    }
    for (size_t index = 0; index < unmerged; ++index)
      for (auto [original, copy] : llvm::zip(clonedFrom[index]->getResults(),
                                             clones[index]->getResults()))
        shared.try_emplace(original, copy);
  }
};

} // namespace

RewriteStats mlir::fuse::remat::recompute(
    func::FuncOp func, const llvm::DenseSet<Operation *> &forward,
    const llvm::DenseSet<Value> &recomputed, const RecomputePolicy &policy) {
  Block &block = func.getBody().front();
  Rewriter rewriter(forward, recomputed, policy);
  SmallVector<Operation *> backward;
  for (Operation &op : block.without_terminator())
    if (!forward.contains(&op) && !isa<ConstantOp>(op))
      backward.push_back(&op);
  for (Operation *reader : backward)
    rewriter.recomputeFor(reader);
  // Forward kernels stop storing what the backward now recomputes.
  SmallVector<FusionOp> fusions;
  for (Operation &op : block.without_terminator())
    if (auto fusion = dyn_cast<FusionOp>(op); fusion && forward.contains(&op))
      fusions.push_back(fusion);
  for (FusionOp fusion : fusions)
    dropUnusedResults(fusion);
  return rewriter.stats;
}
