//===- PrintCost.cpp - fuse-print-cost ------------------------------------===//
//
// Prints the cost model (fuse/Analysis/CostModel.h) of each function: a row
// per top-level op, then the totals. Numbers are exact integers so that lit
// tests can check hand-computed values; the totals repeat them in decimal
// units for people. The pass runs on the module, not on each function, so
// that functions print in order even when passes run multithreaded.
//
//===----------------------------------------------------------------------===//

#include "fuse/Dialect/Fuse/Transforms/PrintHelpers.h"

#include "fuse/Analysis/CostModel.h"
#include "fuse/Dialect/Fuse/IR/FuseOps.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"
#include "fuse/Support/HumanSize.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <string>

#define DEBUG_TYPE "fuse-print-cost"

namespace mlir::fuse {
#define GEN_PASS_DEF_FUSEPRINTCOST
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"
} // namespace mlir::fuse

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::OpCost;

namespace {

size_t digits(int64_t value) { return std::to_string(value).size(); }

void printTable(ArrayRef<OpCostEntry> entries, func::FuncOp func,
                raw_ostream &os) {
  AsmState asmState(func);
  SmallVector<std::string> names, labels;
  size_t nameWidth = 2, labelWidth = 2;
  size_t widths[4] = {5, 10, 13, 7}; // The headers' widths.
  for (const OpCostEntry &entry : entries) {
    // A fusion is named with its kind: the table is then the kernel plan.
    names.push_back(kernelName(entry.op));
    labels.push_back(labelOrResultName(
        entry.op, locationLabel(entry.op->getLoc()), asmState));
    nameWidth = std::max(nameWidth, names.back().size());
    labelWidth = std::max(labelWidth, labels.back().size());
    const OpCost &c = entry.cost;
    int64_t values[4] = {c.flops, c.bytesRead, c.bytesWritten, c.kernels};
    for (int i = 0; i < 4; ++i)
      widths[i] = std::max(widths[i], digits(values[i]));
  }

  os << "  " << llvm::left_justify("op", nameWidth) << "  "
     << llvm::left_justify("at", labelWidth) << "  "
     << llvm::right_justify("flops", widths[0]) << "  "
     << llvm::right_justify("bytes read", widths[1]) << "  "
     << llvm::right_justify("bytes written", widths[2]) << "  "
     << llvm::right_justify("kernels", widths[3]) << "\n";
  for (auto [entry, name, label] : llvm::zip_equal(entries, names, labels)) {
    const OpCost &c = entry.cost;
    os << "  " << llvm::left_justify(name, nameWidth) << "  "
       << llvm::left_justify(label, labelWidth) << "  "
       << llvm::right_justify(std::to_string(c.flops), widths[0]) << "  "
       << llvm::right_justify(std::to_string(c.bytesRead), widths[1]) << "  "
       << llvm::right_justify(std::to_string(c.bytesWritten), widths[2])
       << "  " << llvm::right_justify(std::to_string(c.kernels), widths[3])
       << "\n";
  }
}

void printTotals(const OpCost &total, raw_ostream &os) {
  // The cost model saturates at int64's maximum rather than wrap.
  bool saturated = total.flops == std::numeric_limits<int64_t>::max();
  os << "flops: " << total.flops << " ("
     << (saturated ? "over int64's range: at least "
                   : "")
     << humanReadable(total.flops, "FLOP") << ")\n";
  os << "bytes read: " << total.bytesRead << " ("
     << ::fuse::humanBytes(total.bytesRead) << ")\n";
  os << "bytes written: " << total.bytesWritten << " ("
     << ::fuse::humanBytes(total.bytesWritten) << ")\n";
  // FLOPs per byte moved: where the function sits on a roofline.
  if (int64_t bytes = total.bytesRead + total.bytesWritten)
    os << llvm::formatv("intensity: {0:F2} FLOP/B\n",
                        static_cast<double>(total.flops) / bytes);
  os << "kernels: " << total.kernels << "\n";
}

struct PrintCostPass : mlir::fuse::impl::FusePrintCostBase<PrintCostPass> {
  using Base::Base;

  void runOnOperation() override {
    raw_ostream &os = llvm::outs();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FailureOr<FuncCost> cost = computeFuncCost(func);
      if (failed(cost))
        return signalPassFailure();
      os << "cost of @" << func.getSymName() << "\n";
      if (perOp)
        printTable(cost->ops, func, os);
      printTotals(cost->total, os);
    }
    os.flush();
    markAllAnalysesPreserved();
  }
};

} // namespace
