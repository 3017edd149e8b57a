//===- CostModel.cpp - FLOPs, bytes and kernels of fuse ops ---------------===//
//
// Maps each fuse op to the formulas of CostFormulas.h; the conventions and
// their reasons are documented there and in CostModel.h.
//
//===----------------------------------------------------------------------===//

#include "fuse/Analysis/CostModel.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::OpCost;
namespace cost = ::fuse::cost;

namespace {

int64_t numElements(Value value) {
  return cast<ShapedType>(value.getType()).getNumElements();
}

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<ShapedType>(value.getType()).getShape();
}

/// Bytes of `value` in global memory: none for an immediate.
int64_t bytesOf(Value value) {
  return isImmediate(value) ? 0 : storageBytes(value);
}

int64_t bytesOf(ValueRange values) {
  int64_t bytes = 0;
  for (Value value : values)
    bytes += bytesOf(value);
  return bytes;
}

/// One kernel that reads every operand and writes every result.
OpCost kernel(Operation *op, int64_t flops) {
  return {flops, bytesOf(op->getOperands()), bytesOf(op->getResults()), 1};
}

/// A kernel that writes its result and reads nothing from memory (iota and
/// random read a seed and offset, but as launch arguments).
OpCost generator(Operation *op) {
  return {0, 0, bytesOf(op->getResults()), 1};
}

OpCost matmulCost(MatmulOp op) {
  ArrayRef<int64_t> lhs = shapeOf(op.getLhs());
  ArrayRef<int64_t> result = shapeOf(op.getResult());
  int64_t rank = static_cast<int64_t>(result.size());
  int64_t batch = 1;
  for (int64_t size : result.drop_back(2))
    batch *= size;
  int64_t k = lhs[lhs.size() - (op.getTransposeLhs() ? 2 : 1)];
  return kernel(op, cost::matmulFlops(batch, result[rank - 2],
                                      result[rank - 1], k));
}

/// Forward FLOPs of the attention whose query, key and value these are:
/// [B, Hq, Tq, D], [B, Hkv, Tk, D], [B, Hkv, Tk, Dv].
int64_t attentionForward(Value query, Value key, Value value) {
  ArrayRef<int64_t> q = shapeOf(query);
  return cost::attentionForwardFlops(q[0], q[1], q[2], shapeOf(key)[2], q[3],
                                     shapeOf(value)[3]);
}

/// Bytes a kernel reads for `input` (a value defined outside it) when
/// `readers`, ops inside the kernel, are its users there: none for an
/// immediate; what slices and gathers take when only they read it (at most
/// the whole value); else the whole value.
template <typename Readers>
int64_t kernelInputBytes(Value input, Readers &&readers) {
  int64_t whole = bytesOf(input);
  int64_t taken = 0;
  for (Operation *reader : readers) {
    if (auto slice = dyn_cast<SliceOp>(reader)) {
      taken += cost::tensorBytes(numElements(slice.getResult()),
                                 cast<ShapedType>(input.getType())
                                     .getElementTypeBitWidth());
      continue;
    }
    auto gather = dyn_cast<GatherOp>(reader);
    if (gather && gather.getOperand() == input &&
        gather.getIndices() != input) {
      taken += bytesOf(gather.getResult());
      continue;
    }
    return whole;
  }
  return std::min(whole, taken);
}

/// A fusion is one kernel over its boundary; the ops inside add FLOPs only.
FailureOr<OpCost> fusionCost(FusionOp op) {
  OpCost total{0, 0, bytesOf(op.getResults()), 1};
  for (auto [input, argument] :
       llvm::zip(op.getInputs(), op.getBody().getArguments()))
    total.bytesRead += kernelInputBytes(input, argument.getUsers());
  for (Operation &inner : op.getBody().front()) {
    FailureOr<OpCost> innerCost = computeOpCost(&inner);
    if (failed(innerCost))
      return failure();
    total.flops = ::fuse::saturatingAdd(total.flops, innerCost->flops);
  }
  return total;
}

} // namespace

bool mlir::fuse::isImmediate(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  return constant && constant.getValue().isSplat();
}

int64_t mlir::fuse::storageBytes(Value value) {
  auto type = cast<ShapedType>(value.getType());
  return cost::tensorBytes(type.getNumElements(),
                           type.getElementTypeBitWidth());
}

FailureOr<OpCost> mlir::fuse::computeOpCost(Operation *op) {
  if (isa<func::ReturnOp, YieldOp>(op))
    return OpCost{};
  if (op->getDialect() && isa<FuseDialect>(op->getDialect()) &&
      op->hasTrait<OpTrait::Elementwise>())
    return kernel(op, numElements(op->getResult(0)));

  return TypeSwitch<Operation *, FailureOr<OpCost>>(op)
      .Case<FusionOp>(fusionCost)
      .Case<MatmulOp>(matmulCost)
      .Case<AttentionOp>([](AttentionOp op) {
        return kernel(op, attentionForward(op.getQuery(), op.getKey(),
                                           op.getValue()));
      })
      .Case<AttentionBackwardOp>([](AttentionBackwardOp op) {
        return kernel(op, 2 * attentionForward(op.getQuery(), op.getKey(),
                                               op.getValue()));
      })
      .Case<ReduceOp, ArgmaxOp, CumsumOp>([](Operation *op) {
        return kernel(op, numElements(op->getOperand(0)));
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([](Operation *op) {
        return kernel(op, cost::kSoftmaxFlopsPerElement *
                              numElements(op->getOperand(0)));
      })
      .Case<LayerNormOp>([](LayerNormOp op) {
        return kernel(op, cost::layerNormFlops(numElements(op.getInput()),
                                               op.getWeight() != nullptr,
                                               op.getBias() != nullptr));
      })
      .Case<RmsNormOp>([](RmsNormOp op) {
        return kernel(op, cost::rmsNormFlops(numElements(op.getInput()),
                                             op.getWeight() != nullptr));
      })
      .Case<CrossEntropyOp>([](CrossEntropyOp op) {
        return kernel(op, cost::kCrossEntropyFlopsPerElement *
                              numElements(op.getLogits()));
      })
      .Case<CrossEntropyBackwardOp>([](CrossEntropyBackwardOp op) {
        return kernel(op, cost::kCrossEntropyBackwardFlopsPerElement *
                              numElements(op.getLogits()));
      })
      .Case<ReshapeOp>([](ReshapeOp) { return OpCost{}; })
      .Case<TransposeOp, BroadcastInDimOp, ConcatOp, ScatterAddOp>(
          [](Operation *op) { return kernel(op, 0); })
      // Slice and gather read only what they take.
      .Case<SliceOp>([](SliceOp op) {
        int64_t bytes = bytesOf(op.getResult());
        return OpCost{0, isImmediate(op.getOperand()) ? 0 : bytes, bytes, 1};
      })
      .Case<GatherOp>([](GatherOp op) {
        int64_t bytes = bytesOf(op.getResult());
        int64_t taken = isImmediate(op.getOperand()) ? 0 : bytes;
        return OpCost{0, bytesOf(op.getIndices()) + taken, bytes, 1};
      })
      // Baked in at compile time, so no kernel; its bytes still count as
      // written once (none for a splat: see isImmediate).
      .Case<ConstantOp>([](ConstantOp op) {
        return OpCost{0, 0, bytesOf(op->getResults()), 0};
      })
      .Case<IotaOp, RandomOp>(generator)
      .Default([](Operation *op) -> FailureOr<OpCost> {
        op->emitOpError("has no cost model");
        return failure();
      });
}

FailureOr<FuncCost> mlir::fuse::computeFuncCost(func::FuncOp func) {
  FuncCost result;
  for (Block &block : func.getBody()) {
    for (Operation &op : block.without_terminator()) {
      FailureOr<OpCost> cost = computeOpCost(&op);
      if (failed(cost))
        return failure();
      result.ops.push_back({&op, *cost});
      result.total += *cost;
    }
  }
  return result;
}

FailureOr<OpCost> mlir::fuse::computeFusedCost(
    ArrayRef<Operation *> ops,
    const llvm::SmallPtrSetImpl<Operation *> &members) {
  OpCost total{0, 0, 0, 1};
  // Each input's readers among the members, one entry a use as
  // Value::getUsers lists them, gathered from the members' side: an
  // optimizer's learning rate has a reader in every parameter's update, and
  // scanning all its users for every merge the search weighs made the
  // search quadratic in the parameter count.
  llvm::MapVector<Value, SmallVector<Operation *, 4>> readers;
  for (Operation *op : ops)
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || !members.contains(producer))
        readers[operand].push_back(op);
    }
  for (auto &[input, inputReaders] : readers)
    total.bytesRead += kernelInputBytes(input, inputReaders);
  for (Operation *op : ops) {
    FailureOr<OpCost> cost = computeOpCost(op);
    if (failed(cost))
      return failure();
    total.flops = ::fuse::saturatingAdd(total.flops, cost->flops);
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !members.contains(user);
          }))
        total.bytesWritten += bytesOf(result);
  }
  return total;
}
