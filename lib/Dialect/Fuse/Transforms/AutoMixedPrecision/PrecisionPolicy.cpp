//===- PrecisionPolicy.cpp - Matmul and attention in bf16 or f16 ----------===//
//
// The precision policy of fuse-auto-mixed-precision: matmul and attention
// (forward and backward) read 16-bit operands, which tensor cores need, and
// accumulate in f32; every other op keeps computing in f32.
//
// Casts are placed so that they cost as little as the graph allows:
//   - a value is cast once, right after its definition (a block argument at
//     the start of its block), and every low-precision user shares that
//     cast: a weight's cast serves its forward and backward matmuls, an
//     activation's cast is the copy the backward reads;
//   - a low-precision result is cast back to f32 for its old users, and a
//     later cast of that f32 value back down is the low value itself
//     (16-bit to f32 is exact, so the pair cancels);
//   - the same holds through data movement: a cast down of
//     reshape(transpose(cast up of x)) becomes reshape(transpose(x)) on the
//     16-bit x, so an attention output reshaped into a projection never
//     leaves the low type;
//   - the widening casts and f32 data movement that this leaves without
//     users are erased. Nothing else is touched.
//
//===----------------------------------------------------------------------===//

#include "AutoMixedPrecision.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-auto-mixed-precision"

using namespace mlir;
using namespace mlir::fuse;

namespace {

/// Element type of a tensor value.
Type elementTypeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getElementType();
}

/// Attention's log-sum-exp is an f32 statistic in every precision: the
/// forward's result and the backward's operand stay f32.
bool isLogsumexp(Operation *op, Value value) {
  if (auto forward = llvm::dyn_cast<AttentionOp>(op))
    return value == forward.getLogsumexp();
  if (auto backward = llvm::dyn_cast<AttentionBackwardOp>(op))
    return value == backward.getLogsumexp();
  return false;
}

/// The ops the policy moves to the low type, when they compute in f32 now
/// (their float operands share one type, so the first one tells).
bool runsInF32(Operation *op) {
  if (!llvm::isa<MatmulOp, AttentionOp, AttentionBackwardOp>(op))
    return false;
  return elementTypeOf(op->getOperand(0)).isF32();
}

/// Data movement: ops that only move elements, so they commute with a cast.
bool movesData(Operation *op) {
  return llvm::isa<ReshapeOp, TransposeOp, BroadcastInDimOp, SliceOp>(op);
}

/// The low-precision copies of a function's f32 values, made on demand.
class LowPrecisionValues {
public:
  explicit LowPrecisionValues(FloatType lowType) : lowType(lowType) {}

  /// `value` (f32) in the low type: the 16-bit value it was widened from
  /// (through data movement), else one shared cast right after it.
  Value get(Value value) {
    if (Value low = lowOf.lookup(value))
      return low;
    Value low = widenedFrom(value);
    if (!low) {
      OpBuilder builder(value.getContext());
      setInsertionPointAfterDefinition(builder, value);
      auto type = llvm::cast<RankedTensorType>(value.getType());
      low = CastOp::create(builder, value.getLoc(), type.clone(lowType), value);
    }
    lowOf[value] = low;
    return low;
  }

  /// The low-type value that f32 `value` equals (a widening cast, through
  /// data movement), or null; unlike get(), never a new cast.
  Value lowIfWidened(Value value) {
    Value low = widenedFrom(value);
    if (low)
      lowOf[value] = low;
    return low;
  }

  /// Erases the casts and data movement that get() read through and that
  /// have no users left, and then what they alone used.
  void eraseDeadOnes() {
    SmallVector<Operation *> worklist(readThrough.begin(), readThrough.end());
    llvm::SmallPtrSet<Operation *, 16> erased;
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (erased.contains(op) || !op->use_empty())
        continue;
      Operation *producer = op->getOperand(0).getDefiningOp();
      LLVM_DEBUG(llvm::dbgs() << "erasing dead " << *op << "\n");
      erased.insert(op);
      op->erase();
      if (producer && readThrough.contains(producer))
        worklist.push_back(producer);
    }
  }

private:
  /// Right after `value`'s op, or for a block argument at the start of its
  /// block after the casts of the arguments before it, so that argument
  /// casts come in argument order.
  static void setInsertionPointAfterDefinition(OpBuilder &builder,
                                               Value value) {
    auto argument = llvm::dyn_cast<BlockArgument>(value);
    if (!argument) {
      builder.setInsertionPointAfterValue(value);
      return;
    }
    Block *block = argument.getOwner();
    Block::iterator it = block->begin();
    for (; it != block->end(); ++it) {
      auto cast = llvm::dyn_cast<CastOp>(*it);
      auto earlier = cast ? llvm::dyn_cast<BlockArgument>(cast.getOperand())
                          : BlockArgument();
      if (!earlier || earlier.getOwner() != block ||
          earlier.getArgNumber() > argument.getArgNumber())
        break;
    }
    builder.setInsertionPoint(block, it);
  }

  /// The low-type value that `value` equals, or null: x for a cast of x
  /// from the low type, and for data movement of such a value the same
  /// movement of x, built right after the original. Each answer is built
  /// once, so a chain shared by several users is moved once.
  Value widenedFrom(Value value) {
    auto known = widened.find(value);
    if (known != widened.end())
      return known->second;
    Value low;
    Operation *op = value.getDefiningOp();
    if (auto cast = llvm::dyn_cast_or_null<CastOp>(op)) {
      if (elementTypeOf(cast.getOperand()) == lowType)
        low = cast.getOperand();
    } else if (op && movesData(op)) {
      if (Value lowSource = widenedFrom(op->getOperand(0))) {
        OpBuilder builder(op->getContext());
        builder.setInsertionPointAfter(op);
        Operation *moved = builder.clone(*op);
        moved->setOperand(0, lowSource);
        auto type = llvm::cast<RankedTensorType>(value.getType());
        moved->getResult(0).setType(type.clone(lowType));
        low = moved->getResult(0);
      }
    }
    if (low)
      readThrough.insert(op);
    widened[value] = low;
    return low;
  }

  FloatType lowType;
  /// Each f32 value's low-precision copy, once made.
  DenseMap<Value, Value> lowOf;
  /// widenedFrom's answers, null ones included.
  DenseMap<Value, Value> widened;
  /// Ops that get() saw through: they may have lost their last user.
  llvm::SetVector<Operation *> readThrough;
};

/// Rebuilds `op` on low-precision operands (attention's log-sum-exp stays
/// f32) with low-precision results, cast back to f32 for the old users.
void runInLowPrecision(Operation *op, LowPrecisionValues &lowValues,
                       FloatType lowType) {
  OpBuilder builder(op);
  Operation *low = builder.clone(*op);
  for (OpOperand &operand : low->getOpOperands()) {
    Value value = operand.get();
    if (elementTypeOf(value).isF32() && !isLogsumexp(op, value))
      operand.set(lowValues.get(value));
  }
  builder.setInsertionPointAfter(low);
  for (auto [result, lowResult] :
       llvm::zip_equal(op->getResults(), low->getResults())) {
    if (isLogsumexp(op, result)) {
      result.replaceAllUsesWith(lowResult);
      continue;
    }
    auto type = llvm::cast<RankedTensorType>(result.getType());
    lowResult.setType(type.clone(lowType));
    // A result nobody reads needs no cast back.
    if (!result.use_empty())
      result.replaceAllUsesWith(
          CastOp::create(builder, op->getLoc(), type, lowResult));
  }
  op->erase();
}

} // namespace

void amp::applyPrecisionPolicy(func::FuncOp func, FloatType lowType) {
  SmallVector<Operation *> targets;
  func.walk([&](Operation *op) {
    if (runsInF32(op))
      targets.push_back(op);
  });
  LowPrecisionValues lowValues(lowType);
  for (Operation *op : targets)
    runInLowPrecision(op, lowValues, lowType);
  lowValues.eraseDeadOnes();
}

void amp::narrowResults(func::FuncOp func, FloatType lowType) {
  auto ret = llvm::cast<func::ReturnOp>(func.getBody().front().getTerminator());
  SmallVector<Type> resultTypes(func.getResultTypes());
  LowPrecisionValues lowValues(lowType);
  for (OpOperand &operand : ret->getOpOperands()) {
    if (!elementTypeOf(operand.get()).isF32())
      continue;
    if (Value low = lowValues.lowIfWidened(operand.get())) {
      operand.set(low);
      resultTypes[operand.getOperandNumber()] = low.getType();
    }
  }
  lowValues.eraseDeadOnes();
  func.setFunctionType(FunctionType::get(func.getContext(),
                                         func.getArgumentTypes(), resultTypes));
}
