//===- PrintHelpers.cpp - Labels and units of the printing passes ---------===//

#include "fuse/Dialect/Fuse/Transforms/PrintHelpers.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string mlir::fuse::labelOrResultName(Operation *op,
                                          const std::string &label,
                                          AsmState &asmState) {
  if (!label.empty())
    return label;
  if (op->getNumResults() == 0)
    return "-";
  std::string name;
  llvm::raw_string_ostream os(name);
  op->getResult(0).printAsOperand(os, asmState);
  return name;
}

std::string mlir::fuse::kernelName(Operation *op) {
  std::string name = op->getName().getStringRef().str();
  if (auto fusion = dyn_cast<FusionOp>(op))
    name += " " + stringifyFusionKind(fusion.getKind()).str();
  return name;
}

std::string mlir::fuse::humanReadable(int64_t value, StringRef unit,
                                      int decimals) {
  static const char *const prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  double scaled = static_cast<double>(value);
  size_t prefix = 0;
  while (scaled >= 1000.0 && prefix + 1 < std::size(prefixes)) {
    scaled /= 1000.0;
    ++prefix;
  }
  if (prefix == 0)
    return llvm::formatv("{0} {1}", value, unit).str();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.*f", decimals, scaled) << " " << prefixes[prefix]
     << unit;
  return text;
}
