//===- FusionMaterialize.cpp - Turn groups of ops into fuse.fusion ops ----===//
//
// Each group becomes a fuse.fusion placed after its last member: its inputs
// are the values the members read and none defines (splat constants are
// copied into the body instead, as immediates), its results the members'
// values read outside. Placing a fusion after its last member can put it
// after a user of one of its results (a multi-output fusion whose first
// result is read early), so the block is re-sorted topologically at the
// end; the merges kept the group graph acyclic, so an order exists.
//
//===----------------------------------------------------------------------===//

#include "FusionGroups.h"

#include "fuse/Analysis/CostModel.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::fusion;

namespace {

/// A lone matmul is a plain GEMM call and a lone reshape a view: neither
/// needs a kernel of its own.
bool staysPlain(const Group &group) {
  return group.ops.size() == 1 && isa<MatmulOp, ReshapeOp>(group.ops.front());
}

} // namespace

void mlir::fuse::fusion::materializeGroup(const Group &group) {
  auto [inputs, outputs] = boundaryOf(group.ops, group.members);
  SmallVector<Location> locations;
  for (Operation *op : group.ops)
    locations.push_back(op->getLoc());

  Operation *last = group.ops.back();
  MLIRContext *context = last->getContext();
  OpBuilder builder(context);
  builder.setInsertionPointAfter(last);
  auto fusion = FusionOp::create(builder, FusedLoc::get(context, locations),
                                 ValueRange(outputs).getTypes(), *group.kind,
                                 inputs.getArrayRef());

  SmallVector<Location> argumentLocations;
  for (Value input : inputs)
    argumentLocations.push_back(input.getLoc());
  Block *body = builder.createBlock(&fusion.getBody(), {},
                                    ValueRange(inputs.getArrayRef()).getTypes(),
                                    argumentLocations);
  IRMapping mapping;
  mapping.map(inputs.getArrayRef(), body->getArguments());
  for (Operation *op : group.ops) {
    for (Value operand : op->getOperands())
      if (isImmediate(operand) && !mapping.contains(operand))
        builder.clone(*operand.getDefiningOp(), mapping);
    builder.clone(*op, mapping);
  }
  SmallVector<Value> yielded;
  for (Value output : outputs)
    yielded.push_back(mapping.lookup(output));
  YieldOp::create(builder, last->getLoc(), yielded);

  for (auto [output, result] : llvm::zip(outputs, fusion.getResults()))
    output.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !group.members.contains(use.getOwner()) &&
             use.getOwner() != fusion;
    });
  for (Operation *op : llvm::reverse(group.ops))
    op->erase();
}

void mlir::fuse::fusion::materializeFusions(Block &block,
                                            const GroupSet &groups) {
  for (const Group &group : groups.groups())
    if (group.alive && group.kind && !staysPlain(group))
      materializeGroup(group);
  // Constants now read only inside fusions are dead at the top level.
  for (Operation &op : llvm::make_early_inc_range(block))
    if (isa<ConstantOp>(op) && op.use_empty())
      op.erase();
  sortTopologically(&block);
}
