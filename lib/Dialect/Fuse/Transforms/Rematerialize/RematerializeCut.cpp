//===- RematerializeCut.cpp - Which forward values to recompute -----------===//
//
// The choice is AOTAutograd's min-cut partition, over the kernels of a
// fused step. Each forward value v is an edge in_v -> out_v whose capacity
// is what keeping v for the backward costs: its bytes. Recomputing v needs
// its producer's inputs: out_u -> in_v for each forward value u it reads
// (arguments and constants are free: the backward has them anyway). The
// backward's reads are out_v -> sink; a producer that may not be recomputed
// at this level is tied to the source (source -> in_v), so that only its
// own edge can be cut; one that may be recomputed at a price has an edge
// source -> in_v of that price (its kernel's FLOPs times the policy's bytes
// per FLOP), cut when v is recomputed. A minimum source/sink cut then keeps
// the cheapest set of values, FLOPs counted, from which the backward can
// recompute everything else it reads; the values on the sink side are the
// ones to recompute. Capacities are scaled by 1024 and get a small
// preference for later values, so that among cuts of equal bytes the one
// recomputing less wins.
//
//===----------------------------------------------------------------------===//

#include "Rematerialize.h"

#include "fuse/Analysis/CostModel.h"
#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Support/MaxFlow.h"

#include "llvm/ADT/DenseMap.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::remat;

Value mlir::fuse::remat::viewRoot(Value value) {
  while (auto view = value.getDefiningOp<ReshapeOp>())
    value = view.getOperand();
  return value;
}

llvm::DenseSet<Operation *> mlir::fuse::remat::findForward(func::FuncOp func) {
  llvm::DenseSet<Operation *> forward;
  Block &block = func.getBody().front();
  auto terminator = cast<func::ReturnOp>(block.getTerminator());
  SmallVector<Value> stack;
  for (unsigned index = 0; index < func.getNumResults(); ++index) {
    auto name =
        func.getResultAttrOfType<StringAttr>(index, FuseDialect::kNameAttr);
    if (name && name.getValue() == "loss")
      stack.push_back(terminator.getOperand(index));
  }
  while (!stack.empty()) {
    Operation *producer = stack.pop_back_val().getDefiningOp();
    if (!producer || !forward.insert(producer).second)
      continue;
    llvm::append_range(stack, producer->getOperands());
  }
  return forward;
}

namespace {

bool containsRandom(Operation *op) {
  bool found = false;
  op->walk([&](RandomOp) { found = true; });
  return found;
}

/// Pointwise kernels (and plain elementwise ops), which are memory-bound:
/// recomputing them costs bandwidth, not FLOPs worth counting.
bool isPointwise(Operation *op) {
  auto fusion = dyn_cast<FusionOp>(op);
  if (fusion)
    return fusion.getKind() == FusionKind::Loop;
  return op->hasTrait<OpTrait::Elementwise>() || isa<BroadcastInDimOp>(op);
}

/// What recomputing `op`'s results costs in the cut's units, or kInfinity
/// when they must be kept.
int64_t recomputeCost(Operation *op, const RecomputePolicy &policy,
                      bool readOutsideKernels) {
  using ::fuse::FlowNetwork;
  if (containsRandom(op) && !policy.allowRandom)
    return FlowNetwork::kInfinity;
  if (!isa<FusionOp, MatmulOp, ReduceOp>(op) && !isPointwise(op))
    return FlowNetwork::kInfinity;
  if (std::isinf(policy.bytesPerFlop))
    return isPointwise(op) && !readOutsideKernels ? 0 : FlowNetwork::kInfinity;
  if (isPointwise(op))
    return 0;
  FailureOr<::fuse::OpCost> cost = computeOpCost(op);
  if (failed(cost))
    return FlowNetwork::kInfinity;
  // Per result: recomputing a multi-output kernel pays once, spread.
  double price = policy.bytesPerFlop * static_cast<double>(cost->flops) *
                 1024 / std::max<unsigned>(1, op->getNumResults());
  return price >= static_cast<double>(FlowNetwork::kInfinity)
             ? FlowNetwork::kInfinity
             : static_cast<int64_t>(price);
}

/// Whether `reader` is a kernel that could compute a pointwise producer of
/// what it reads itself.
bool canComputeInside(Operation *reader) {
  auto fusion = dyn_cast<FusionOp>(reader);
  return fusion && (fusion.getKind() == FusionKind::Loop ||
                    fusion.getKind() == FusionKind::RowReduction ||
                    fusion.getKind() == FusionKind::ColumnReduction);
}


} // namespace

llvm::DenseSet<Value> mlir::fuse::remat::chooseRecomputed(
    func::FuncOp func, const llvm::DenseSet<Operation *> &forward,
    const RecomputePolicy &policy) {
  using ::fuse::FlowNetwork;
  Block &block = func.getBody().front();
  FlowNetwork network(2);
  const int source = 0, sink = 1;
  struct Nodes {
    int in, out;
  };
  llvm::DenseMap<Value, Nodes> nodes;
  int64_t count = std::distance(block.without_terminator().begin(),
                                block.without_terminator().end());
  int64_t position = 0;

  // Forward values read by a backward op that cannot recompute them inside.
  llvm::DenseSet<Value> readOutsideKernels;
  for (Operation &op : block.without_terminator()) {
    if (forward.contains(&op) || canComputeInside(&op))
      continue;
    for (Value operand : op.getOperands())
      readOutsideKernels.insert(viewRoot(operand));
  }

  // A node pair per forward value, in block order.
  for (Operation &op : block.without_terminator()) {
    ++position;
    if (!forward.contains(&op) || isa<ConstantOp, ReshapeOp>(op))
      continue;
    for (Value result : op.getResults()) {
      int64_t price =
          recomputeCost(&op, policy, readOutsideKernels.contains(result));
      Nodes pair{network.addNode(), network.addNode()};
      nodes[result] = pair;
      network.addEdge(pair.in, pair.out,
                      storageBytes(result) * 1024 + (count - position));
      if (price > 0)
        network.addEdge(source, pair.in, price);
    }
  }
  // Recomputing a value needs what its producer reads.
  for (Operation &op : block.without_terminator()) {
    if (!forward.contains(&op) || isa<ConstantOp, ReshapeOp>(op))
      continue;
    for (Value operand : op.getOperands()) {
      auto it = nodes.find(viewRoot(operand));
      if (it == nodes.end())
        continue;
      for (Value result : op.getResults())
        network.addEdge(it->second.out, nodes[result].in,
                        FlowNetwork::kInfinity);
    }
  }
  // What the backward reads.
  for (Operation &op : block.without_terminator()) {
    if (forward.contains(&op))
      continue;
    for (Value operand : op.getOperands()) {
      auto it = nodes.find(viewRoot(operand));
      if (it != nodes.end())
        network.addEdge(it->second.out, sink, FlowNetwork::kInfinity);
    }
  }

  network.maxFlow(source, sink);
  llvm::DenseSet<Value> recomputed;
  for (auto &[value, pair] : nodes)
    if (!network.onSourceSide(pair.in))
      recomputed.insert(value);
  return recomputed;
}
