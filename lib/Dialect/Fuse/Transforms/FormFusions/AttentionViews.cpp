//===- AttentionViews.cpp - Attention kernels that read and write views ---===//
//
// Models compute q, k and v as [B, T, H*D] projections (GPT-2 as one
// [B, T, 3C] projection split in three) and view them as [B, H, T, D] heads
// with a reshape and a transpose; the attention's output goes back the same
// way, and the backward's dq, dk, dv into the projections' layout (GPT-2's
// concatenated). Left to the greedy search, each of those views is a copy
// kernel of its own next to every attention kernel. The flash kernels
// address these operands and results by element strides
// (fuse/Analysis/FlashAttention.h), so before the search every attention op
// they take becomes a fusion that holds, besides the op:
//
// - for each of q, k, v (and the backward's dout and out), a private copy
//   of the views between it and the value they view (the forward and the
//   backward read the same q), as many of them as strides can express;
// - for each of its results (o; dq, dk, dv), the reshapes and transposes
//   that are its only reader, each read only by the next, as many as strides
//   can express, and a concat whose parts are exactly those chains of all
//   of its results (GPT-2's [B, T, 3C] gradient of the projection).
//
// Chains of reshapes alone are left out: a reshape is free as it is. The
// forward's output is also read by the backward (as `out`): when the
// forward writes it through views, the backward reads it back through their
// inverse, which its own fusion then takes in. An attention op with no
// view to take in is left to the search, which makes it a fusion of its own.
//
//===----------------------------------------------------------------------===//

#include "FusionGroups.h"

#include "fuse/Analysis/CostModel.h"
#include "fuse/Analysis/FlashAttention.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::fusion;

namespace {

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<ShapedType>(value.getType()).getShape();
}

bool movesData(ArrayRef<Operation *> views) {
  return llvm::any_of(views, [](Operation *op) { return !isa<ReshapeOp>(op); });
}

/// The views between `operand` and the stored value they view, nearest
/// first, cut to the longest chain the flash kernels can read through; none
/// when that chain only reshapes. A splat constant is no stored value (it
/// would be copied into the fusion as an immediate): views of one stay out.
SmallVector<Operation *> operandViews(Value operand) {
  SmallVector<Operation *> chain;
  for (Operation *view = operand.getDefiningOp();
       view && flashReadsThrough(view);
       view = view->getOperand(0).getDefiningOp())
    chain.push_back(view);
  for (size_t length = chain.size(); length > 0; --length) {
    Value stored = chain[length - 1]->getOperand(0);
    if (isImmediate(stored))
      continue;
    std::optional<StridedLayout> layout = rowMajorLayout(shapeOf(stored));
    for (size_t i = length; i > 0 && layout; --i)
      layout = layoutOfViewResult(chain[i - 1], *layout);
    if (layout && flashAddressable(shapeOf(operand), *layout)) {
      chain.resize(length);
      return movesData(chain) ? chain : SmallVector<Operation *>();
    }
  }
  return {};
}

/// Whether the flash kernels can address where `result` lands when written
/// through `views` (nearest first, each reading the one before; a concat
/// among them reads it as the operand it is).
bool writableThrough(Value result, ArrayRef<Operation *> views) {
  SmallVector<unsigned> operands;
  Value current = result;
  for (Operation *view : views) {
    operands.push_back(llvm::find(view->getOperands(), current) -
                       view->getOperands().begin());
    current = view->getResult(0);
  }
  std::optional<StridedLayout> layout = rowMajorLayout(shapeOf(current));
  for (size_t i = views.size(); i > 0 && layout; --i)
    layout = layoutOfViewOperand(views[i - 1], operands[i - 1], *layout);
  return layout && flashAddressable(shapeOf(result), *layout);
}

/// Whether `user` is a backward attention op the flash kernels take that
/// reads `output` as its `out` and as nothing else.
bool readsAsOutput(Operation *user, Value output) {
  auto backward = dyn_cast<AttentionBackwardOp>(user);
  return backward && backward.getOutput() == output &&
         llvm::count(user->getOperands(), output) == 1 &&
         !flashIneligibility(backward);
}

/// The reshapes and transposes that carry `result` to where it is stored,
/// nearest first, each the only reader of the value before it (readers of
/// `result` as a backward's `out` aside: they go to `outputReaders`).
SmallVector<Operation *> resultChain(Value result,
                                    SmallVectorImpl<Operation *> &outputReaders) {
  Operation *first = nullptr;
  for (Operation *user : result.getUsers()) {
    if (readsAsOutput(user, result)) {
      if (!llvm::is_contained(outputReaders, user))
        outputReaders.push_back(user);
      continue;
    }
    if (first || !isa<ReshapeOp, TransposeOp>(user))
      return {};
    first = user;
  }
  if (!first)
    return {};
  SmallVector<Operation *> chain = {first};
  while (chain.back()->getResult(0).hasOneUse()) {
    Operation *next = *chain.back()->getResult(0).user_begin();
    if (!isa<ReshapeOp, TransposeOp>(next))
      break;
    chain.push_back(next);
  }
  return chain;
}

/// The longest prefix of `chain` that `result` can be written through.
SmallVector<Operation *> writablePrefix(Value result,
                                        ArrayRef<Operation *> chain) {
  for (size_t length = chain.size(); length > 0; --length)
    if (writableThrough(result, chain.take_front(length)))
      return SmallVector<Operation *>(chain.take_front(length));
  return {};
}

/// The concat whose parts are exactly the ends of `chains` (one per result,
/// each complete), if every result can be written through it.
ConcatOp joiningConcat(ArrayRef<Value> results,
                       ArrayRef<SmallVector<Operation *>> chains) {
  ConcatOp concat;
  for (const SmallVector<Operation *> &chain : chains) {
    if (chain.empty() || !chain.back()->getResult(0).hasOneUse())
      return nullptr;
    auto next = dyn_cast<ConcatOp>(*chain.back()->getResult(0).user_begin());
    if (!next || (concat && next != concat))
      return nullptr;
    concat = next;
  }
  if (!concat || concat->getNumOperands() != chains.size())
    return nullptr;
  for (auto [result, chain] : llvm::zip(results, chains)) {
    SmallVector<Operation *> through(chain);
    through.push_back(concat);
    if (!writableThrough(result, through))
      return nullptr;
  }
  return concat;
}

/// The views that undo `chain` (reshapes and transposes from `result`),
/// applied to its end and inserted after it: `result` again.
Value undo(ArrayRef<Operation *> chain) {
  OpBuilder builder(chain.back());
  builder.setInsertionPointAfter(chain.back());
  Value current = chain.back()->getResult(0);
  for (Operation *view : llvm::reverse(chain)) {
    Type type = view->getOperand(0).getType();
    if (auto transpose = dyn_cast<TransposeOp>(view)) {
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      SmallVector<int64_t> inverse(permutation.size());
      for (auto [dim, from] : llvm::enumerate(permutation))
        inverse[from] = static_cast<int64_t>(dim);
      current = TransposeOp::create(builder, view->getLoc(), type, current,
                                    builder.getDenseI64ArrayAttr(inverse));
    } else {
      current = ReshapeOp::create(builder, view->getLoc(), type, current);
    }
  }
  return current;
}

/// Gives `attention` its views and makes it a fusion; false when there are
/// none to give.
bool formStridedAttention(Operation *attention) {
  // Results first: they decide what the backward reads its `out` through.
  SmallVector<Value> results = flashStridedResults(attention);
  SmallVector<SmallVector<Operation *>> chains;
  SmallVector<SmallVector<Operation *>> outputReaders(results.size());
  bool complete = true;
  for (auto [result, readers] : llvm::zip(results, outputReaders)) {
    SmallVector<Operation *> chain = resultChain(result, readers);
    SmallVector<Operation *> prefix = writablePrefix(result, chain);
    complete &= !prefix.empty() && prefix.size() == chain.size();
    chains.push_back(std::move(prefix));
  }
  bool readBack = llvm::any_of(
      outputReaders, [](const auto &readers) { return !readers.empty(); });
  ConcatOp concat = complete && !readBack ? joiningConcat(results, chains)
                                          : nullptr;
  for (SmallVector<Operation *> &chain : chains)
    if (!concat && !movesData(chain))
      chain.clear();

  SmallVector<OpOperand *> operands = flashStridedOperands(attention);
  SmallVector<SmallVector<Operation *>> operandChains;
  for (OpOperand *operand : operands)
    operandChains.push_back(operandViews(operand->get()));
  bool any = concat != nullptr ||
             llvm::any_of(chains, [](auto &c) { return !c.empty(); }) ||
             llvm::any_of(operandChains, [](auto &c) { return !c.empty(); });
  if (!any)
    return false;

  // A backward reading the output writes it through these views reads it
  // back through their inverse.
  for (auto [result, chain, readers] :
       llvm::zip(results, chains, outputReaders))
    if (!chain.empty() && !readers.empty()) {
      Value restored = undo(chain);
      for (Operation *reader : readers)
        reader->replaceUsesOfWith(result, restored);
    }

  // Members in an order where each comes after what it reads: the operands'
  // private views (from the viewed value on), the op, the results' views.
  SmallVector<Operation *> members, originals;
  OpBuilder builder(attention);
  for (auto [operand, chain] : llvm::zip(operands, operandChains)) {
    if (chain.empty())
      continue;
    Value current = chain.back()->getOperand(0);
    for (Operation *view : llvm::reverse(chain)) {
      Operation *copy = builder.clone(*view);
      copy->setOperand(0, current);
      members.push_back(copy);
      current = copy->getResult(0);
    }
    operand->set(current);
    originals.append(chain.begin(), chain.end());
  }
  members.push_back(attention);
  for (const SmallVector<Operation *> &chain : chains)
    members.append(chain.begin(), chain.end());
  if (concat)
    members.push_back(concat);

  // Views nobody reads any more (the search would make them kernels); one
  // may be in several chains.
  llvm::SmallPtrSet<Operation *, 8> erased;
  for (bool again = true; again;) {
    again = false;
    for (Operation *view : originals)
      if (!erased.contains(view) && view->use_empty()) {
        erased.insert(view);
        view->erase();
        again = true;
      }
  }

  Group group;
  group.ops = std::move(members);
  group.members.insert(group.ops.begin(), group.ops.end());
  group.kind = FusionKind::Attention;
  materializeGroup(group);
  return true;
}

} // namespace

void mlir::fuse::fusion::formStridedAttentionFusions(Block &block) {
  SmallVector<Operation *> attentions;
  for (Operation &op : block)
    if (isa<AttentionOp, AttentionBackwardOp>(op) && !flashIneligibility(&op))
      attentions.push_back(&op);
  bool formed = false;
  for (Operation *attention : attentions)
    formed |= formStridedAttention(attention);
  // Each fusion sits after its last member, so a result may be read
  // before it: one sort after all of them (a sort a fusion cost 48 passes
  // over a BERT-large step's block).
  if (formed)
    sortTopologically(&block);
}
