//===- PrintHelpers.cpp - Labels and units of the printing passes ---------===//

#include "fuse/Dialect/Fuse/Transforms/PrintHelpers.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

/// Applies `label` to a location's parts the way both labels do: through
/// call sites to the callee, through fused locations to the first part
/// that has a label.
template <typename LabelFn>
std::string firstLabel(Location loc, LabelFn label) {
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return firstLabel(callSite.getCallee(), label);
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location part : fused.getLocations())
      if (std::string text = firstLabel(part, label); !text.empty())
        return text;
    return "";
  }
  return label(loc);
}

std::string fileName(FileLineColLoc file) {
  return llvm::sys::path::filename(file.getFilename().strref()).str();
}

} // namespace

std::string mlir::fuse::locationLabel(Location loc) {
  return firstLabel(loc, [](Location part) -> std::string {
    if (auto name = dyn_cast<NameLoc>(part))
      return name.getName().str();
    if (auto file = dyn_cast<FileLineColLoc>(part))
      return llvm::formatv("{0}:{1}:{2}", fileName(file), file.getLine(),
                           file.getColumn())
          .str();
    return "";
  });
}

std::string mlir::fuse::sourceLabel(Location loc) {
  return firstLabel(loc, [](Location part) -> std::string {
    std::string name;
    if (auto named = dyn_cast<NameLoc>(part)) {
      name = named.getName().str();
      part = named.getChildLoc();
    }
    std::string line;
    if (auto file = dyn_cast<FileLineColLoc>(part))
      line = llvm::formatv("{0}:{1}", fileName(file), file.getLine()).str();
    if (name.empty() || line.empty())
      return name + line;
    return name + " (" + line + ")";
  });
}

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
