//===- FusionGroups.cpp - Groups of ops that become one kernel each -------===//

#include "FusionGroups.h"
#include "FusionLegality.h"

#include "fuse/Analysis/CostModel.h"

#include "llvm/ADT/STLExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::fusion;

namespace {

/// Whether `view` is a lone reshape that only `consumer` reads.
bool isViewOf(const Group &view, const Group &consumer) {
  if (view.ops.size() != 1 || !isa<ReshapeOp>(view.ops.front()))
    return false;
  return llvm::all_of(view.ops.front()->getUsers(), [&](Operation *user) {
    return consumer.members.contains(user);
  });
}

constexpr int64_t kViewIntoConsumer = std::numeric_limits<int64_t>::max() / 2;

} // namespace

FusionBoundary mlir::fuse::fusion::boundaryOf(
    ArrayRef<Operation *> ops,
    const llvm::SmallPtrSetImpl<Operation *> &members) {
  FusionBoundary boundary;
  for (Operation *op : ops) {
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if ((!producer || !members.contains(producer)) && !isImmediate(operand))
        boundary.inputs.insert(operand);
    }
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !members.contains(user);
          }))
        boundary.outputs.push_back(result);
  }
  return boundary;
}

GroupSet::GroupSet(Block &block, unsigned maxInputs, unsigned maxOutputs)
    : maxInputs(maxInputs), maxOutputs(maxOutputs) {
  int64_t index = 0;
  for (Operation &op : block.without_terminator()) {
    position[&op] = index++;
    if (isa<ConstantOp>(op))
      continue;
    groupIndex[&op] = groupList.size();
    rank.push_back(order.size());
    order.push_back(groupList.size());
    groupList.push_back(makeGroup({&op}));
  }
  consumerLists.resize(groupList.size());
  consumersValid.resize(groupList.size());
}

Group GroupSet::makeGroup(SmallVector<Operation *> ops) const {
  Group group;
  group.ops = std::move(ops);
  group.members.insert(group.ops.begin(), group.ops.end());
  group.kind = classifyGroup(group.ops, group.members);
  bool loneView = group.ops.size() == 1 && isa<ReshapeOp>(group.ops.front());
  if (!loneView) {
    FailureOr<::fuse::OpCost> cost =
        group.kind ? computeFusedCost(group.ops, group.members)
                   : computeOpCost(group.ops.front());
    if (succeeded(cost))
      group.cost = *cost;
  }
  return group;
}

std::optional<unsigned> GroupSet::groupOf(Operation *op) const {
  auto it = groupIndex.find(op);
  if (it == groupIndex.end())
    return std::nullopt;
  return it->second;
}

std::optional<MergeCandidate> GroupSet::evaluate(unsigned a,
                                                 unsigned b) const {
  const Group &first = groupList[a], &second = groupList[b];
  if (!first.kind || !second.kind)
    return std::nullopt;
  SmallVector<Operation *> ops;
  std::merge(first.ops.begin(), first.ops.end(), second.ops.begin(),
             second.ops.end(), std::back_inserter(ops),
             [&](Operation *x, Operation *y) {
               return position.lookup(x) < position.lookup(y);
             });
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  if (!classifyGroup(ops, members))
    return std::nullopt;
  FusionBoundary boundary = boundaryOf(ops, members);
  if (boundary.inputs.size() > maxInputs ||
      boundary.outputs.size() > maxOutputs)
    return std::nullopt;
  FailureOr<::fuse::OpCost> merged = computeFusedCost(ops, members);
  if (failed(merged))
    return std::nullopt;
  auto traffic = [](const ::fuse::OpCost &cost) {
    return cost.bytesRead + cost.bytesWritten;
  };
  int64_t bytesSaved = traffic(first.cost) + traffic(second.cost) -
                       traffic(*merged);
  int64_t kernelsSaved =
      first.cost.kernels + second.cost.kernels - merged->kernels;
  int64_t benefit =
      bytesSaved + kernelsSaved * ::fuse::cost::kLaunchEquivalentBytes;
  // A view saves nothing by itself, but joining its consumer, before
  // anything else, is what lets the ops on both sides of it meet as if it
  // were not there (a GEMM's residual add past the reshape of its output).
  if (isViewOf(first, second) || isViewOf(second, first))
    return MergeCandidate{a, b, kViewIntoConsumer};
  bool absorbsView = first.cost.kernels == 0 || second.cost.kernels == 0;
  if (benefit < 0 || (benefit == 0 && !absorbsView))
    return std::nullopt;
  return MergeCandidate{a, b, benefit + (absorbsView ? 1 : 0)};
}

ArrayRef<unsigned> GroupSet::consumers(unsigned group) const {
  SmallVector<unsigned> &result = consumerLists[group];
  if (consumersValid[group])
    return result;
  result.clear();
  llvm::SmallDenseSet<unsigned, 16> seen;
  for (Operation *op : groupList[group].ops)
    for (Operation *user : op->getUsers()) {
      std::optional<unsigned> index = groupOf(user);
      if (index && *index != group && seen.insert(*index).second)
        result.push_back(*index);
    }
  consumersValid.set(group);
  return result;
}

SmallVector<unsigned> GroupSet::producers(unsigned group) const {
  SmallVector<unsigned> result;
  for (Operation *op : groupList[group].ops)
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      std::optional<unsigned> index =
          producer ? groupOf(producer) : std::nullopt;
      if (index && *index != group && !llvm::is_contained(result, *index))
        result.push_back(*index);
    }
  return result;
}

/// A path from the earlier group to the later one through a third group
/// runs only through groups ranked between them: search just those.
bool GroupSet::createsCycle(unsigned a, unsigned b) const {
  unsigned first = rank[a] < rank[b] ? a : b;
  unsigned last = first == a ? b : a;
  SmallVector<unsigned> stack;
  for (unsigned next : consumers(first))
    if (next != last)
      stack.push_back(next);
  llvm::DenseSet<unsigned> visited;
  while (!stack.empty()) {
    unsigned current = stack.pop_back_val();
    if (rank[current] > rank[last] || !visited.insert(current).second)
      continue;
    for (unsigned next : consumers(current)) {
      if (next == last)
        return true;
      stack.push_back(next);
    }
  }
  return false;
}

/// Keeps `order` topological after merging `first` and `last` (ranked in
/// that order) into `merged`: the groups ranked between them that lead to
/// `last` move before the merged group, the others stay after it. None of
/// them both follows `first` and leads to `last`, or the merge would have
/// made a cycle.
void GroupSet::reorderForMerge(unsigned first, unsigned last,
                               unsigned merged, unsigned dead) {
  unsigned low = rank[first], high = rank[last];
  llvm::DenseSet<unsigned> leadsToLast;
  SmallVector<unsigned> stack = producers(last);
  while (!stack.empty()) {
    unsigned current = stack.pop_back_val();
    if (rank[current] <= low || rank[current] >= high ||
        !leadsToLast.insert(current).second)
      continue;
    llvm::append_range(stack, producers(current));
  }
  SmallVector<unsigned> before, after;
  for (unsigned position = low + 1; position < high; ++position) {
    unsigned group = order[position];
    (leadsToLast.contains(group) ? before : after).push_back(group);
  }
  SmallVector<unsigned> sequence(before);
  sequence.push_back(merged);
  llvm::append_range(sequence, after);
  sequence.push_back(dead);
  for (auto [offset, group] : llvm::enumerate(sequence)) {
    order[low + offset] = group;
    rank[group] = low + offset;
  }
}

void GroupSet::merge(unsigned a, unsigned b) {
  // The consumer lists that name `a` or `b` (their producers') and theirs
  // change; every other list stays as it is.
  for (unsigned group : {a, b}) {
    consumersValid.reset(group);
    for (unsigned producer : producers(group))
      consumersValid.reset(producer);
  }
  SmallVector<Operation *> ops;
  std::merge(groupList[a].ops.begin(), groupList[a].ops.end(),
             groupList[b].ops.begin(), groupList[b].ops.end(),
             std::back_inserter(ops), [&](Operation *x, Operation *y) {
               return position.lookup(x) < position.lookup(y);
             });
  unsigned first = rank[a] < rank[b] ? a : b;
  unsigned last = first == a ? b : a;
  reorderForMerge(first, last, /*merged=*/a, /*dead=*/b);
  for (Operation *op : groupList[b].ops)
    groupIndex[op] = a;
  groupList[a] = makeGroup(std::move(ops));
  groupList[b].alive = false;
  groupList[b].ops.clear();
  groupList[b].members.clear();
}
