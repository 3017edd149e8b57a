//===- Liveness.cpp - Buffers and their live ranges over a schedule -------===//

#include "fuse/Analysis/Liveness.h"

#include "fuse/Analysis/CostModel.h"
#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::fuse;

BlockLiveness mlir::fuse::computeLiveness(Block &block) {
  BlockLiveness result;
  llvm::DenseMap<Operation *, int64_t> position;
  for (Operation &op : block.without_terminator()) {
    position[&op] = result.ops.size();
    result.ops.push_back(&op);
  }
  int64_t last = static_cast<int64_t>(result.ops.size()) - 1;

  auto addBuffer = [&](Value value, int64_t start, bool external) {
    result.bufferOf[value] = result.buffers.size();
    result.buffers.push_back(
        {value, storageBytes(value), start, start, external});
  };
  for (BlockArgument argument : block.getArguments())
    addBuffer(argument, 0, /*external=*/true);
  for (Operation *op : result.ops) {
    if (isa<ConstantOp>(op))
      continue;
    for (Value value : op->getResults()) {
      // A view shares the buffer of what it views, and an in-place
      // scatter_add that of what it accumulates into.
      auto scatter = dyn_cast<ScatterAddOp>(op);
      if (isa<ReshapeOp>(op) || (scatter && scatter.accumulatesInPlace())) {
        auto root = result.bufferOf.find(op->getOperand(0));
        if (root != result.bufferOf.end()) {
          result.bufferOf[value] = root->second;
          continue;
        }
      }
      addBuffer(value, position[op], /*external=*/false);
    }
  }

  // Every read extends the buffer to the reader's top-level position; a
  // value the terminator reads is the caller's.
  Operation *terminator = block.mightHaveTerminator() ? block.getTerminator()
                                                      : nullptr;
  for (auto &[value, index] : result.bufferOf) {
    BufferLiveness &buffer = result.buffers[index];
    for (Operation *user : value.getUsers()) {
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top)
        continue;
      if (top == terminator) {
        buffer.external = true;
        buffer.end = std::max(buffer.end, last);
        continue;
      }
      buffer.end = std::max(buffer.end, position.lookup(top));
    }
  }

  // Bytes live at each position: a difference array, then its prefix sum.
  result.liveBytes.assign(result.ops.size() + 1, 0);
  for (const BufferLiveness &buffer : result.buffers) {
    if (buffer.external)
      continue;
    result.liveBytes[buffer.start] += buffer.bytes;
    result.liveBytes[buffer.end + 1] -= buffer.bytes;
  }
  for (size_t at = 1; at < result.liveBytes.size(); ++at)
    result.liveBytes[at] += result.liveBytes[at - 1];
  result.liveBytes.pop_back();
  for (auto [at, bytes] : llvm::enumerate(result.liveBytes))
    if (bytes > result.peakBytes) {
      result.peakBytes = bytes;
      result.peakPosition = at;
    }
  return result;
}
