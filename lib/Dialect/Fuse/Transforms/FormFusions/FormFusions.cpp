//===- FormFusions.cpp - fuse-form-fusions --------------------------------===//
//
// Greedy, cost-driven fusion in the manner of XLA's priority fusion: every
// op starts as a group of its own; every pair of groups joined by a value
// (producer and consumer) or by a shared input (siblings) whose merge is a
// legal kernel that saves bytes or launches by the cost model goes into a
// priority queue; the best is applied (if it makes no cycle), the merged
// group's pairs are evaluated again, and so on until none is left. Taking
// the globally best merge first matters: a residual add joins the GEMM
// epilogue before it (saving the GEMM output's store and load) rather than
// the layer norm after it (saving one load). Attention kernels take the
// views around them first (AttentionViews.cpp), cheap producers are copied
// into their consumers where that pays (FusionDuplication.cpp), and the
// groups become fuse.fusion ops at the end (FusionMaterialize.cpp).
//
//===----------------------------------------------------------------------===//

#include "FusionGroups.h"
#include "FusionLegality.h"

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"

#include <queue>

#define DEBUG_TYPE "fuse-form-fusions"

namespace mlir::fuse {
#define GEN_PASS_DEF_FUSEFORMFUSIONS
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"
} // namespace mlir::fuse

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::fusion;

namespace {

/// Scattered reductions over at most this many elements are unrolled.
constexpr int64_t kUnrolledReductionElements = 8;

/// A scattered f32 reduce over a few elements (grouped-query attention's
/// backward sums 2-8 repeated heads) as a chain of adds (or max/min) of
/// slices, one slice per reduced index, in index order: elementwise, so it
/// joins a loop kernel that reads each value once. As a row reduction it
/// gave each warp three strided values to sum: about 80 GB/s, 300 us a
/// layer on Llama's backward. Other element types keep the reduction (its
/// f32 accumulator); null where this does not apply.
Value unrollSmallReduction(ReduceOp reduce) {
  auto type = cast<RankedTensorType>(reduce.getOperand().getType());
  ReduceKind kind = reduce.getKind();
  if (!type.getElementType().isF32() || kind == ReduceKind::Mean)
    return {};
  ArrayRef<int64_t> dims = reduce.getDims();
  int64_t elements = 1;
  for (int64_t d : dims)
    elements *= type.getDimSize(d);
  if (elements < 1 || elements > kUnrolledReductionElements)
    return {};
  int64_t rank = type.getRank();
  SmallVector<int64_t> sliceShape(type.getShape());
  for (int64_t d : dims)
    sliceShape[d] = 1;
  auto sliceType = RankedTensorType::get(sliceShape, type.getElementType());
  ImplicitLocOpBuilder b(reduce.getLoc(), reduce);
  Value total;
  for (int64_t flat = 0; flat < elements; ++flat) {
    SmallVector<int64_t> start(rank, 0), limit(type.getShape()),
        stride(rank, 1);
    int64_t rest = flat; // the last reduced dimension varies fastest
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
      int64_t size = type.getDimSize(dims[i]);
      start[dims[i]] = rest % size;
      limit[dims[i]] = start[dims[i]] + 1;
      rest /= size;
    }
    Value slice = SliceOp::create(b, sliceType, reduce.getOperand(),
                                  b.getDenseI64ArrayAttr(start),
                                  b.getDenseI64ArrayAttr(limit),
                                  b.getDenseI64ArrayAttr(stride));
    if (!total)
      total = slice;
    else if (kind == ReduceKind::Sum)
      total = AddOp::create(b, total, slice);
    else if (kind == ReduceKind::Max)
      total = MaximumOp::create(b, total, slice);
    else
      total = MinimumOp::create(b, total, slice);
  }
  if (total.getType() != reduce.getType())
    total = ReshapeOp::create(b, reduce.getType(), total);
  return total;
}

/// A reduce over dimensions that are neither trailing nor leading (the
/// backward of grouped-query attention sums the repeated heads: dims = [2]
/// of five) fits no kernel template. Over a few f32 elements it is unrolled
/// (above); otherwise it becomes a reduce of a transposed view with those
/// dimensions last, which is a row reduction reading through the transpose
/// (nothing is materialised), and a reshape back to the original result
/// under `keepdim`.
void moveReducedDimensionsLast(Block &block) {
  SmallVector<ReduceOp> scattered;
  for (auto reduce : block.getOps<ReduceOp>())
    if (getOpRole(reduce) == OpRole::Opaque)
      scattered.push_back(reduce);
  for (ReduceOp reduce : scattered) {
    if (Value unrolled = unrollSmallReduction(reduce)) {
      reduce.getResult().replaceAllUsesWith(unrolled);
      reduce.erase();
      continue;
    }
    auto type = cast<RankedTensorType>(reduce.getOperand().getType());
    int64_t rank = type.getRank();
    ArrayRef<int64_t> dims = reduce.getDims();
    SmallVector<int64_t> permutation, shape, keptShape;
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(dims, d)) {
        permutation.push_back(d);
        keptShape.push_back(type.getDimSize(d));
      }
    permutation.append(dims.begin(), dims.end());
    for (int64_t d : permutation)
      shape.push_back(type.getDimSize(d));
    SmallVector<int64_t> trailing;
    for (int64_t d = rank - static_cast<int64_t>(dims.size()); d < rank; ++d)
      trailing.push_back(d);
    ImplicitLocOpBuilder b(reduce.getLoc(), reduce);
    Value transposed = TransposeOp::create(
        b, RankedTensorType::get(shape, type.getElementType()),
        reduce.getOperand(), b.getDenseI64ArrayAttr(permutation));
    Value reduced = ReduceOp::create(
        b, RankedTensorType::get(keptShape, type.getElementType()),
        reduce.getKindAttr(), transposed, b.getDenseI64ArrayAttr(trailing),
        /*keepdim=*/nullptr);
    if (reduced.getType() != reduce.getType())
      reduced = ReshapeOp::create(b, reduce.getType(), reduced);
    reduce.getResult().replaceAllUsesWith(reduced);
    reduce.erase();
  }
}

/// A max-heap of merges, each stamped with the versions its two groups had
/// when it was evaluated: a merge popped after either group changed is
/// stale and dropped (the changed group's merges were evaluated again).
class CandidateQueue {
public:
  explicit CandidateQueue(const GroupSet &groups)
      : groups(groups), versions(groups.groups().size(), 0) {}

  void consider(unsigned a, unsigned b) {
    if (a == b)
      return;
    if (std::optional<MergeCandidate> candidate = groups.evaluate(a, b))
      heap.push({*candidate, versions[a], versions[b], sequence++});
  }

  /// The best merge whose groups have not changed since it was evaluated.
  std::optional<MergeCandidate> pop() {
    while (!heap.empty()) {
      Entry entry = heap.top();
      heap.pop();
      const MergeCandidate &c = entry.candidate;
      if (groups.groups()[c.first].alive && groups.groups()[c.second].alive &&
          versions[c.first] == entry.firstVersion &&
          versions[c.second] == entry.secondVersion)
        return c;
    }
    return std::nullopt;
  }

  void changed(unsigned group) { ++versions[group]; }

private:
  struct Entry {
    MergeCandidate candidate;
    uint64_t firstVersion, secondVersion;
    /// When it was found: among equal benefits, the first found wins.
    uint64_t sequence;
  };
  struct WorseFirst {
    bool operator()(const Entry &x, const Entry &y) const {
      if (x.candidate.benefit != y.candidate.benefit)
        return x.candidate.benefit < y.candidate.benefit;
      return x.sequence > y.sequence;
    }
  };
  const GroupSet &groups;
  SmallVector<uint64_t> versions;
  uint64_t sequence = 0;
  std::priority_queue<Entry, std::vector<Entry>, WorseFirst> heap;
};

/// Siblings: groups that read one of the values `group` reads. A value read
/// by many groups (a learning rate) offers only its nearest readers.
void considerSiblings(unsigned group, const GroupSet &groups,
                      CandidateQueue &queue) {
  constexpr unsigned kMaxSiblingsPerValue = 4;
  llvm::SmallPtrSet<Value, 8> inputs;
  for (Operation *op : groups.groups()[group].ops)
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if ((producer && groups.groupOf(producer) == group) ||
          (producer && isa<ConstantOp>(producer)) ||
          !inputs.insert(operand).second)
        continue;
      unsigned offered = 0;
      for (Operation *user : operand.getUsers()) {
        std::optional<unsigned> reader = groups.groupOf(user);
        if (!reader || *reader == group)
          continue;
        queue.consider(group, *reader);
        if (++offered == kMaxSiblingsPerValue)
          break;
      }
    }
}

void considerNeighbours(unsigned group, const GroupSet &groups,
                        CandidateQueue &queue) {
  if (!groups.groups()[group].kind)
    return;
  for (unsigned consumer : groups.consumers(group))
    queue.consider(group, consumer);
  for (unsigned producer : groups.producers(group))
    queue.consider(producer, group);
  considerSiblings(group, groups, queue);
}

struct FormFusionsPass
    : mlir::fuse::impl::FuseFormFusionsBase<FormFusionsPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    if (maxInputs == 0 || maxOutputs == 0)
      return emitError(UnknownLoc::get(context))
             << "fuse-form-fusions: max-inputs and max-outputs must be at "
                "least 1 (a kernel reads and writes something), not "
             << static_cast<unsigned>(maxInputs) << " and "
             << static_cast<unsigned>(maxOutputs);
    return success();
  }

  void runOnOperation() override {
    // Fusion prices every op with the cost model, which knows fuse ops
    // only: anything else (a func.call, an op of another dialect) is an
    // error here, not a note that lets the pipeline run on and exit 0.
    bool foreign = false;
    getOperation().walk([&](Operation *op) {
      if (isa<func::FuncOp, func::ReturnOp, ModuleOp>(op) ||
          isa_and_nonnull<FuseDialect>(op->getDialect()))
        return;
      op->emitOpError("is not a fuse op: fuse-form-fusions (and so "
                      "fuse-pipeline) takes graphs of fuse ops only")
          << (isa<func::CallOp>(op) ? "; inline the callee first (--inline)"
                                    : "");
      foreign = true;
    });
    if (foreign)
      return signalPassFailure();
    getOperation().walk([&](func::FuncOp func) {
      if (func.getBody().hasOneBlock())
        formFusions(func.getBody().front());
    });
  }

  void formFusions(Block &block) {
    moveReducedDimensionsLast(block);
    formStridedAttentionFusions(block);
    duplicateCheapProducers(block);
    GroupSet groups(block, maxInputs, maxOutputs);
    CandidateQueue queue(groups);
    for (unsigned group = 0; group < groups.groups().size(); ++group)
      considerNeighbours(group, groups, queue);
    unsigned merges = 0, rejected = 0;
    while (std::optional<MergeCandidate> best = queue.pop()) {
      if (groups.createsCycle(best->first, best->second)) {
        ++rejected;
        continue;
      }
      groups.merge(best->first, best->second);
      queue.changed(best->first);
      queue.changed(best->second);
      considerNeighbours(best->first, groups, queue);
      ++merges;
    }
    LLVM_DEBUG(llvm::dbgs() << merges << " merges, " << rejected
                            << " rejected for cycles\n");
    materializeFusions(block, groups);
  }
};

} // namespace
