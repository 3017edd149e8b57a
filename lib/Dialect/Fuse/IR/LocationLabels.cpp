//===- LocationLabels.cpp - Where an op comes from, for people ------------===//

#include "fuse/Dialect/Fuse/IR/LocationLabels.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

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
