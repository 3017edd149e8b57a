//===- LinearBackward.cpp - What is linear in the loss gradient -----------===//
//
// A backward pass is linear in the loss's gradient: scale the seed by s and
// every gradient it produces is scaled by s, up to the point where the
// optimizer (or anything else) combines a gradient with itself or with a
// value that does not carry the scale. Loss scaling divides by s exactly
// there, so it needs that set of values.
//
// An op's results join the set when the op's semantics are linear in the
// operands that are in it and it reads no other member elsewhere: x·c and
// c·x (not x·x), x/c, -x, x±y, sums, means and prefix sums (a cumsum's
// backward), matmul with one member, data movement, gather and
// scatter_add, float casts, select on a condition outside the set,
// attention backward in grad_output, and cross entropy backward in
// grad_loss. A splat zero constant counts as a member where an
// op adds or joins members (x + 0, concat with zeros, scatter_add into
// zeros, select of x or 0): 0 is s·0. Anything else leaves the set; being
// conservative only moves the unscaling earlier.
//
//===----------------------------------------------------------------------===//

#include "AutoMixedPrecision.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fuse;

namespace {

/// Whether `op`'s results are linear in the members of `linear` among its
/// operands.
bool isLinearIn(Operation *op, const llvm::DenseSet<Value> &linear) {
  auto in = [&](Value value) { return value && linear.contains(value); };
  auto inOrZero = [&](Value value) {
    return in(value) || matchPattern(value, m_AnyZeroFloat());
  };
  // An op with several members (or zeros standing for them) among its
  // operands: all are, and one at least is a real member.
  auto allInOrZero = [&](ValueRange values) {
    return llvm::all_of(values, inOrZero) && llvm::any_of(values, in);
  };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<MulOp, MatmulOp>([&](auto product) {
        return in(product.getLhs()) != in(product.getRhs());
      })
      .Case<DivOp>([&](DivOp div) {
        return in(div.getLhs()) && !in(div.getRhs());
      })
      .Case<AddOp, SubOp>([&](auto sum) {
        return allInOrZero({sum.getLhs(), sum.getRhs()});
      })
      .Case<NegOp, ReshapeOp, TransposeOp, BroadcastInDimOp, SliceOp,
            CumsumOp>(
          [&](Operation *unary) { return in(unary->getOperand(0)); })
      .Case<ReduceOp>([&](ReduceOp reduce) {
        return (reduce.getKind() == ReduceKind::Sum ||
                reduce.getKind() == ReduceKind::Mean) &&
               in(reduce.getOperand());
      })
      .Case<ConcatOp>(
          [&](ConcatOp concat) { return allInOrZero(concat.getInputs()); })
      .Case<GatherOp>([&](GatherOp gather) { return in(gather.getOperand()); })
      .Case<ScatterAddOp>([&](ScatterAddOp scatter) {
        return allInOrZero({scatter.getDest(), scatter.getUpdates()}) &&
               in(scatter.getUpdates());
      })
      .Case<CastOp>([&](CastOp cast) {
        return in(cast.getOperand()) &&
               llvm::isa<FloatType>(cast.getType().getElementType());
      })
      .Case<SelectOp>([&](SelectOp select) {
        return !in(select.getCondition()) &&
               allInOrZero({select.getOnTrue(), select.getOnFalse()});
      })
      .Case<AttentionBackwardOp>([&](AttentionBackwardOp backward) {
        return in(backward.getGradOutput()) &&
               llvm::none_of(backward->getOperands().drop_front(), in);
      })
      .Case<CrossEntropyBackwardOp>([&](CrossEntropyBackwardOp backward) {
        return in(backward.getGradLoss()) && !in(backward.getLogits());
      })
      .Default([](Operation *) { return false; });
}

} // namespace

llvm::DenseSet<Value> amp::findLinearValues(Block &body,
                                            ArrayRef<Value> seeds) {
  llvm::DenseSet<Value> linear(seeds.begin(), seeds.end());
  // Operands come before their users in a block: one walk in order settles
  // every op.
  for (Operation &op : body)
    if (isLinearIn(&op, linear))
      linear.insert(op.result_begin(), op.result_end());
  return linear;
}
