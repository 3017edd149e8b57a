//===- PrintMemory.cpp - fuse-print-memory --------------------------------===//
//
// Prints the memory plan fuse-plan-memory recorded in each function: the
// arena against its lower bound, what is where, and the largest buffers
// with the op and model source line that made them. Numbers are exact bytes
// for lit tests, repeated in decimal units for people. The pass runs on the
// module so that functions print in order.
//
//===----------------------------------------------------------------------===//

#include "fuse/Dialect/Fuse/Transforms/PrintHelpers.h"

#include "fuse/Dialect/Fuse/IR/FuseAttrs.h"
#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/IR/FuseOps.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"
#include "fuse/Support/HumanSize.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

#define DEBUG_TYPE "fuse-print-memory"

namespace mlir::fuse {
#define GEN_PASS_DEF_FUSEPRINTMEMORY
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"
} // namespace mlir::fuse

using namespace mlir;
using namespace mlir::fuse;

namespace {

/// The placement of `value`'s buffer, if its writer has one.
BufferAttr placementOf(Value value) {
  auto result = dyn_cast<OpResult>(value);
  if (!result)
    return {};
  auto buffers =
      result.getOwner()->getAttrOfType<ArrayAttr>(FuseDialect::kBuffersAttr);
  if (!buffers)
    return {};
  return cast<BufferAttr>(buffers[result.getResultNumber()]);
}

/// A reshape of a value that has a buffer (an argument's or an op's)
/// repeats that buffer's placement: it is not a buffer of its own.
bool isView(Operation *op) {
  if (!isa<ReshapeOp>(op))
    return false;
  Value viewed = op->getOperand(0);
  return isa<BlockArgument>(viewed) || placementOf(viewed);
}

struct ArenaBuffer {
  BufferAttr placement;
  Operation *op;
};

struct MemorySummary {
  SmallVector<ArenaBuffer> arena;
  int64_t inPlace = 0, returned = 0, inArguments = 0;
};

/// The buffers of `func`'s plan, or failure (reported) where an op that
/// should have one has none.
FailureOr<MemorySummary> summarize(func::FuncOp func) {
  MemorySummary summary;
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (isa<ConstantOp>(op) || op.getNumResults() == 0)
      continue;
    auto buffers = op.getAttrOfType<ArrayAttr>(FuseDialect::kBuffersAttr);
    if (!buffers)
      return op.emitError()
             << "fuse-print-memory: no '" << FuseDialect::kBuffersAttr
             << "' on this op, though @" << func.getSymName()
             << " has a memory plan: the plan is stale (run "
                "fuse-plan-memory again)";
    if (isView(&op))
      continue;
    for (Attribute entry : buffers) {
      auto placement = cast<BufferAttr>(entry);
      if (placement.getArgument()) {
        ++summary.inArguments;
        continue;
      }
      if (placement.isExternal()) {
        ++summary.returned;
        continue;
      }
      summary.arena.push_back({placement, &op});
      // Written in place: an input's buffer at the same offset ends here.
      if (llvm::any_of(op.getOperands(), [&](Value input) {
            BufferAttr from = placementOf(input);
            return from && from.getOffset() == placement.getOffset() &&
                   from.getLiveEnd() == placement.getLiveStart();
          }))
        ++summary.inPlace;
    }
  }
  return summary;
}

void printTotals(int64_t arena, int64_t bound, const MemorySummary &summary,
                 raw_ostream &os) {
  os << "arena: " << arena << " (" << ::fuse::humanBytes(arena) << ")\n";
  os << "lower bound: " << bound << " (" << ::fuse::humanBytes(bound)
     << ")\n";
  // Both 0 when nothing is in the arena: the plan is then optimal too.
  double ratio = bound > 0 ? static_cast<double>(arena) / bound : 1.0;
  os << llvm::formatv("arena / lower bound: {0:F3}\n", ratio);
  os << "buffers: " << summary.arena.size() << " in the arena ("
     << summary.inPlace << " written in place), " << summary.returned
     << " returned, " << summary.inArguments << " in arguments\n";
}

void printLargest(ArrayRef<ArenaBuffer> buffers, func::FuncOp func,
                  raw_ostream &os) {
  if (buffers.empty())
    return;
  AsmState asmState(func);
  SmallVector<std::string> sizes, offsets, lives, names, labels;
  size_t widths[4] = {5, 6, 4, 2}; // The headers' widths.
  for (const ArenaBuffer &buffer : buffers) {
    BufferAttr placement = buffer.placement;
    sizes.push_back(std::to_string(placement.getSize()));
    offsets.push_back(std::to_string(*placement.getOffset()));
    lives.push_back(llvm::formatv("[{0}, {1}]", placement.getLiveStart(),
                                  placement.getLiveEnd())
                        .str());
    names.push_back(kernelName(buffer.op));
    labels.push_back(labelOrResultName(
        buffer.op, sourceLabel(buffer.op->getLoc()), asmState));
    const std::string *columns[4] = {&sizes.back(), &offsets.back(),
                                     &lives.back(), &names.back()};
    for (int i = 0; i < 4; ++i)
      widths[i] = std::max(widths[i], columns[i]->size());
  }
  os << "largest buffers:\n";
  os << "  " << llvm::right_justify("bytes", widths[0]) << "  "
     << llvm::right_justify("offset", widths[1]) << "  "
     << llvm::left_justify("live", widths[2]) << "  "
     << llvm::left_justify("op", widths[3]) << "  at\n";
  for (size_t row = 0; row < buffers.size(); ++row)
    os << "  " << llvm::right_justify(sizes[row], widths[0]) << "  "
       << llvm::right_justify(offsets[row], widths[1]) << "  "
       << llvm::left_justify(lives[row], widths[2]) << "  "
       << llvm::left_justify(names[row], widths[3]) << "  " << labels[row]
       << "\n";
}

struct PrintMemoryPass
    : mlir::fuse::impl::FusePrintMemoryBase<PrintMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    raw_ostream &os = llvm::outs();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      auto arena = func->getAttrOfType<IntegerAttr>(FuseDialect::kArenaSizeAttr);
      auto bound =
          func->getAttrOfType<IntegerAttr>(FuseDialect::kArenaLowerBoundAttr);
      if (!arena || !bound) {
        func.emitError() << "fuse-print-memory: @" << func.getSymName()
                         << " has no memory plan (no '"
                         << FuseDialect::kArenaSizeAttr
                         << "'): run fuse-plan-memory first";
        return signalPassFailure();
      }
      FailureOr<MemorySummary> summary = summarize(func);
      if (failed(summary))
        return signalPassFailure();
      // Largest first; on a tie, the one written first.
      llvm::stable_sort(summary->arena, [](const ArenaBuffer &a,
                                           const ArenaBuffer &b) {
        return a.placement.getSize() > b.placement.getSize();
      });
      os << "memory of @" << func.getSymName() << "\n";
      printTotals(arena.getInt(), bound.getInt(), *summary, os);
      printLargest(ArrayRef(summary->arena).take_front(top), func, os);
    }
    os.flush();
    markAllAnalysesPreserved();
  }
};

} // namespace
