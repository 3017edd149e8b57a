//===- FusionDuplication.cpp - Copy cheap producers into their consumers --===//
//
// A value several kernels read is stored once and loaded by each. When its
// producer is cheap (a broadcast, an iota, a reshape, an elementwise op),
// each consumer can compute it again from the producer's own inputs instead.
// That pays when the producer's inputs are smaller than its result (a bias
// broadcast to [B, T, C]) or when the copies remove the producer's kernel
// altogether (a scalar of the optimizer read by every parameter's update).
// The cost model decides, before any grouping, with the bytes and launches
// either way; reductions, matmuls, attention and random ops are never
// copied.
//
//===----------------------------------------------------------------------===//

#include "FusionGroups.h"
#include "FusionLegality.h"

#include "fuse/Analysis/CostModel.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::fusion;

namespace {

/// What copying `op` into `absorbing` of its `users` saves, in bytes (a
/// launch counted as kLaunchEquivalentBytes); <= 0 when it does not pay.
int64_t duplicationBenefit(Operation *op, size_t absorbing, size_t users) {
  if (isa<ReshapeOp>(op))
    return 1; // a view: a copy is free and lets each consumer take it
  FailureOr<::fuse::OpCost> cost = computeOpCost(op);
  if (failed(cost))
    return 0;
  int64_t in = cost->bytesRead, out = cost->bytesWritten;
  int64_t copies = static_cast<int64_t>(absorbing);
  if (absorbing < users) // the producer stays for the others
    return copies * (out - in);
  return in + out * (1 + copies) - copies * in +
         cost->kernels * ::fuse::cost::kLaunchEquivalentBytes;
}

} // namespace

void mlir::fuse::fusion::duplicateCheapProducers(Block &block) {
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  // Copies feed copies (a scalar chain into each update): bound the growth.
  int64_t budget = 2 * static_cast<int64_t>(ops.size());
  // Consumers first, so that a producer sees the copies of its consumers.
  for (Operation *op : llvm::reverse(ops)) {
    if (!isDuplicable(op) || op->getNumResults() != 1)
      continue;
    llvm::SetVector<Operation *> users;
    for (Operation *user : op->getUsers())
      users.insert(user);
    if (users.size() < 2)
      continue;
    SmallVector<Operation *> absorbing;
    for (Operation *user : users)
      if (canAbsorbProducer(user))
        absorbing.push_back(user);
    if (absorbing.empty() ||
        duplicationBenefit(op, absorbing.size(), users.size()) <= 0)
      continue;
    budget -= static_cast<int64_t>(absorbing.size());
    if (budget < 0)
      break;
    Value result = op->getResult(0);
    for (Operation *user : absorbing) {
      OpBuilder builder(user);
      Operation *copy = builder.clone(*op);
      user->replaceUsesOfWith(result, copy->getResult(0));
    }
    if (op->use_empty())
      op->erase();
  }
}
