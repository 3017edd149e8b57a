//===- FusionLegality.cpp - Which ops can share a kernel, and as what -----===//
//
// Iteration spaces are compared by element count: a row reduction of a
// [B, T, C] tensor over C has the row space B·T·C and the statistics space
// B·T, whatever shapes reshapes give those values on the way. Reshapes keep
// row-major order, so a row stays a contiguous run of C elements through
// them; transposes do not, and are kept out of reduction kernels.
//
//===----------------------------------------------------------------------===//

#include "FusionLegality.h"

#include "fuse/Analysis/CostModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::fusion;

namespace {

int64_t numElements(Value value) {
  return cast<ShapedType>(value.getType()).getNumElements();
}

/// Where a reduce's dimensions sit: trailing (rows), leading (columns) or
/// scattered.
OpRole reductionRole(ReduceOp op) {
  ArrayRef<int64_t> dims = op.getDims();
  int64_t rank = cast<ShapedType>(op.getOperand().getType()).getRank();
  for (size_t i = 1; i < dims.size(); ++i)
    if (dims[i] != dims[i - 1] + 1)
      return OpRole::Opaque;
  if (dims.back() == rank - 1)
    return OpRole::RowReduction;
  if (dims.front() == 0)
    return OpRole::ColumnReduction;
  return OpRole::Opaque;
}

bool isOutput(Operation *op,
              const llvm::SmallPtrSetImpl<Operation *> &members) {
  for (Value result : op->getResults())
    for (Operation *user : result.getUsers())
      if (!members.contains(user))
        return true;
  return false;
}

/// A reduction kernel: every reduction of the same role over the same
/// (elements, reduced elements), and every other op either in the full space
/// or the reduced one, or a small value that is only broadcast (computed
/// again where it is read, and never stored).
std::optional<FusionKind>
classifyReduction(ArrayRef<Operation *> ops,
                  const llvm::SmallPtrSetImpl<Operation *> &members) {
  std::optional<OpRole> role;
  int64_t full = -1, reduced = -1;
  for (Operation *op : ops) {
    auto reduce = dyn_cast<ReduceOp>(op);
    if (!reduce)
      continue;
    int64_t in = numElements(reduce.getOperand());
    int64_t out = numElements(reduce.getResult());
    if (!role) {
      role = getOpRole(op);
      full = in;
      reduced = out;
    } else if (getOpRole(op) != *role || in != full || out != reduced) {
      return std::nullopt;
    }
  }
  // A column kernel finishes its reductions only when the whole grid has
  // run: nothing over the full space, and no other reduction, may read them.
  bool columns = *role == OpRole::ColumnReduction;
  llvm::SmallPtrSet<Operation *, 16> afterReduction;
  for (Operation *op : ops) {
    bool readsReduction = llvm::any_of(op->getOperands(), [&](Value v) {
      Operation *producer = v.getDefiningOp();
      return producer && members.contains(producer) &&
             (isa<ReduceOp>(producer) || afterReduction.contains(producer));
    });
    if (readsReduction) {
      if (columns && (isa<ReduceOp>(op) ||
                      numElements(op->getResult(0)) == full))
        return std::nullopt;
      afterReduction.insert(op);
    }
    if (isa<TransposeOp>(op))
      return std::nullopt;
  }
  // Values in neither space (a bias vector, a scalar of the optimizer) are
  // computed again wherever they are read, so they must reach the spaces
  // only through broadcasts, and are never stored.
  llvm::SmallPtrSet<Operation *, 8> onDemand;
  for (Operation *op : llvm::reverse(ops)) {
    int64_t count = numElements(op->getResult(0));
    if (isa<ReduceOp>(op) || count == full || count == reduced)
      continue;
    bool feedsSpacesByBroadcast =
        llvm::all_of(op->getUsers(), [&](Operation *user) {
          return members.contains(user) &&
                 (isa<BroadcastInDimOp>(user) || onDemand.contains(user));
        });
    if (!feedsSpacesByBroadcast)
      return std::nullopt;
    onDemand.insert(op);
  }
  return *role == OpRole::RowReduction ? FusionKind::RowReduction
                                       : FusionKind::ColumnReduction;
}

/// A loop kernel: one iteration space, so every stored value has the same
/// number of elements.
std::optional<FusionKind>
classifyLoop(ArrayRef<Operation *> ops,
             const llvm::SmallPtrSetImpl<Operation *> &members) {
  int64_t space = -1;
  for (Operation *op : ops) {
    if (!isOutput(op, members))
      continue;
    int64_t count = numElements(op->getResult(0));
    if (space != -1 && count != space)
      return std::nullopt;
    space = count;
  }
  return FusionKind::Loop;
}

/// A bias: a broadcast member of a rank-1 value (or a splat) along the
/// result's last dimension.
bool isBiasBroadcast(Value value,
                     const llvm::SmallPtrSetImpl<Operation *> &members) {
  auto broadcast = value.getDefiningOp<BroadcastInDimOp>();
  if (!broadcast || !members.contains(broadcast))
    return false;
  auto operandType = cast<ShapedType>(broadcast.getOperand().getType());
  int64_t resultRank = cast<ShapedType>(broadcast.getType()).getRank();
  Operation *source = broadcast.getOperand().getDefiningOp();
  bool external = !source || !members.contains(source);
  return external && operandType.getRank() == 1 &&
         broadcast.getDims() == ArrayRef<int64_t>{resultRank - 1} &&
         llvm::hasSingleElement(broadcast->getUsers());
}

/// A matmul with what cuBLASLt's epilogue applies to its result, in that
/// order: D = act(alpha·AB + C + bias), then a cast of D. The chain is
/// linear (each op reads the previous one's result); reshapes that keep the
/// last dimension are views; any value of the chain may also be stored
/// (GELU_AUX keeps the pre-activation for the backward).
std::optional<FusionKind>
classifyGemmEpilogue(MatmulOp matmul, ArrayRef<Operation *> ops,
                     const llvm::SmallPtrSetImpl<Operation *> &members) {
  enum class Stage { Scale, Add, Activation, Store };
  Stage stage = Stage::Scale;
  bool bias = false, residual = false;
  size_t consumed = 1; // the matmul
  Value current = matmul.getResult();
  while (true) {
    SmallVector<Operation *> next;
    for (Operation *user : current.getUsers())
      if (members.contains(user) && !llvm::is_contained(next, user))
        next.push_back(user);
    if (next.empty())
      break;
    if (next.size() > 1)
      return std::nullopt;
    Operation *op = next.front();
    auto lastDimKept = [&](Operation *reshape) {
      auto in = cast<ShapedType>(reshape->getOperand(0).getType());
      auto out = cast<ShapedType>(reshape->getResult(0).getType());
      return in.getShape().back() == out.getShape().back();
    };
    auto other = [&]() -> Value {
      return op->getOperand(0) == current ? op->getOperand(1)
                                          : op->getOperand(0);
    };
    bool ok = TypeSwitch<Operation *, bool>(op)
                  .Case<CastOp>([](CastOp) { return true; })
                  .Case<ReshapeOp>([&](ReshapeOp r) { return lastDimKept(r); })
                  .Case<MulOp>([&](MulOp) {
                    return stage == Stage::Scale && isImmediate(other());
                  })
                  .Case<AddOp>([&](AddOp) {
                    if (stage > Stage::Add)
                      return false;
                    stage = Stage::Add;
                    Value addend = other();
                    if (isBiasBroadcast(addend, members) && !bias) {
                      bias = true;
                      ++consumed; // the broadcast
                      return true;
                    }
                    Operation *source = addend.getDefiningOp();
                    if ((!source || !members.contains(source)) && !residual) {
                      residual = true;
                      return true;
                    }
                    return false;
                  })
                  .Case<ReluOp>([&](ReluOp) {
                    if (stage >= Stage::Activation)
                      return false;
                    stage = Stage::Activation;
                    return true;
                  })
                  .Case<GeluOp>([&](GeluOp gelu) {
                    if (stage >= Stage::Activation ||
                        gelu.getApproximate() != GeluApproximation::Tanh)
                      return false;
                    stage = Stage::Activation;
                    return true;
                  })
                  .Default([](Operation *) { return false; });
    if (!ok)
      return std::nullopt;
    ++consumed;
    current = op->getResult(0);
  }
  if (consumed != ops.size())
    return std::nullopt;
  return FusionKind::GemmEpilogue;
}

} // namespace

OpRole mlir::fuse::fusion::getOpRole(Operation *op) {
  if (isa<RandomOp>(op) || (op->hasTrait<OpTrait::Elementwise>() &&
                            isa_and_nonnull<FuseDialect>(op->getDialect())))
    return OpRole::Pointwise;
  return TypeSwitch<Operation *, OpRole>(op)
      .Case<BroadcastInDimOp, TransposeOp, SliceOp, ConcatOp, GatherOp,
            IotaOp>([](Operation *) { return OpRole::Pointwise; })
      .Case<ReshapeOp>([](ReshapeOp) { return OpRole::View; })
      .Case<ReduceOp>([](ReduceOp reduce) { return reductionRole(reduce); })
      .Case<MatmulOp>([](MatmulOp) { return OpRole::Gemm; })
      .Case<AttentionOp, AttentionBackwardOp>(
          [](Operation *) { return OpRole::Attention; })
      .Default([](Operation *) { return OpRole::Opaque; });
}

bool mlir::fuse::fusion::isDuplicable(Operation *op) {
  if (isa<BroadcastInDimOp, IotaOp, ReshapeOp>(op))
    return true;
  // A widening cast (bf16 logits to f32) read by several kernels: each
  // reads the narrow value and widens it itself, so the wide copy is never
  // stored.
  if (auto cast = dyn_cast<CastOp>(op))
    return cast.getOperand().getType().getElementTypeBitWidth() <
           cast.getType().getElementTypeBitWidth();
  // An elementwise op only on scalars (the optimizer's bias corrections,
  // a loss scale): a tensor computed again in each consumer costs compute,
  // twice over when two consumers end in one kernel, and would leave a
  // GEMM without its epilogue.
  return !isa<RandomOp>(op) && op->hasTrait<OpTrait::Elementwise>() &&
         getOpRole(op) == OpRole::Pointwise &&
         numElements(op->getResult(0)) == 1;
}

bool mlir::fuse::fusion::canAbsorbProducer(Operation *user) {
  switch (getOpRole(user)) {
  case OpRole::Pointwise:
  case OpRole::View:
  case OpRole::RowReduction:
  case OpRole::ColumnReduction:
    return true;
  default:
    return false;
  }
}

std::optional<FusionKind> mlir::fuse::fusion::classifyGroup(
    ArrayRef<Operation *> ops,
    const llvm::SmallPtrSetImpl<Operation *> &members) {
  MatmulOp matmul;
  bool reduction = false;
  for (Operation *op : ops) {
    switch (getOpRole(op)) {
    case OpRole::Opaque:
      return std::nullopt;
    case OpRole::Attention:
      if (ops.size() != 1)
        return std::nullopt;
      return FusionKind::Attention;
    case OpRole::Gemm:
      if (matmul)
        return std::nullopt;
      matmul = cast<MatmulOp>(op);
      break;
    case OpRole::RowReduction:
    case OpRole::ColumnReduction:
      reduction = true;
      break;
    case OpRole::Pointwise:
    case OpRole::View:
      break;
    }
  }
  if (matmul)
    return reduction ? std::nullopt
                     : classifyGemmEpilogue(matmul, ops, members);
  if (reduction)
    return classifyReduction(ops, members);
  return classifyLoop(ops, members);
}
