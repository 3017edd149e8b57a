//===- LinearOutputs.cpp - A linear layer's output in the low type --------===//
//
// Under torch.autocast a linear layer (`addmm`, `linear`) returns its output
// in bf16 or f16: cuBLAS adds the bias to the f32 accumulator and rounds. The
// precision policy keeps that sum in f32 instead (the matmul's 16-bit result
// cast back up, then `+ bias` in f32), which is more precise than autocast
// and costs twice the memory wherever the value is kept: an MLP's
// pre-activation, which the activation's backward reads, is the largest
// value a transformer's forward saves (GPT-2 124M: 100 MB a layer in f32).
//
// So the sum of a 16-bit matmul's result and a broadcast bias is rounded to
// the low type, as autocast does, and read back as f32 by its users:
//   add(cast_f32(mm), broadcast(b))  ->  cast_f32(cast_low(add(...)))
// Every later pass sees a 16-bit value behind the f32 one; the memory plan
// keeps the 16-bit one and its readers widen it (fusion and
// rematerialization treat the widening as free). Matmul results without a
// bias are 16-bit already.
//
//===----------------------------------------------------------------------===//

#include "AutoMixedPrecision.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::fuse;

namespace {

int64_t rankOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getRank();
}

/// Whether `value` is a bias as a linear layer adds it: a lower-rank value
/// broadcast to the output's shape.
bool isBroadcastBias(Value value) {
  auto broadcast = value.getDefiningOp<BroadcastInDimOp>();
  return broadcast && rankOf(broadcast.getOperand()) < rankOf(value);
}

/// The adds of a bias to the f32 widening of `result` (a 16-bit matmul's),
/// through reshapes of the widened value.
void collectBiasAdds(Value result, FloatType lowType,
                     llvm::SetVector<AddOp> &adds) {
  for (Operation *user : result.getUsers()) {
    auto widen = llvm::dyn_cast<CastOp>(user);
    if (!widen ||
        !llvm::cast<RankedTensorType>(widen.getType()).getElementType().isF32())
      continue;
    SmallVector<Value> worklist{widen.getResult()};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (Operation *reader : value.getUsers()) {
        if (auto reshape = llvm::dyn_cast<ReshapeOp>(reader)) {
          worklist.push_back(reshape.getResult());
          continue;
        }
        auto add = llvm::dyn_cast<AddOp>(reader);
        if (!add)
          continue;
        Value other = add.getLhs() == value ? add.getRhs() : add.getLhs();
        if (isBroadcastBias(other))
          adds.insert(add);
      }
    }
  }
}

} // namespace

void amp::roundLinearOutputs(func::FuncOp func, FloatType lowType) {
  llvm::SetVector<AddOp> adds;
  func.walk([&](MatmulOp matmul) {
    auto type = llvm::cast<RankedTensorType>(matmul.getType());
    if (type.getElementType() == lowType)
      collectBiasAdds(matmul.getResult(), lowType, adds);
  });
  for (AddOp add : adds) {
    OpBuilder builder(add->getContext());
    builder.setInsertionPointAfter(add);
    auto type = llvm::cast<RankedTensorType>(add.getType());
    Value low = CastOp::create(builder, add.getLoc(), type.clone(lowType),
                               add.getResult());
    Value widened = CastOp::create(builder, add.getLoc(), type, low);
    add.getResult().replaceAllUsesExcept(widened, low.getDefiningOp());
  }
}
