//===- FuseDialect.cpp - The fuse dialect ----------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"

#include "fuse/Dialect/Fuse/IR/FuseAttrs.h"
#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fuse;

#include "fuse/Dialect/Fuse/IR/FuseDialect.cpp.inc"
#include "fuse/Dialect/Fuse/IR/FuseEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fuse/Dialect/Fuse/IR/FuseAttrs.cpp.inc"

void FuseDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fuse/Dialect/Fuse/IR/FuseAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "fuse/Dialect/Fuse/IR/FuseOps.cpp.inc"
      >();
}

/// Checks a `fuse.name` on argument or result #`index` (`what` says which):
/// a string, and unique among the function's arguments (results). Uniqueness
/// is checked once, in one pass, at the first named argument (result).
static LogicalResult verifyName(Operation *op, StringRef what, unsigned index,
                                Attribute value) {
  if (!llvm::isa<StringAttr>(value))
    return op->emitError() << "'" << FuseDialect::kNameAttr << "' on " << what
                           << " #" << index << " must be a string, got "
                           << value;
  auto function = llvm::dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return success();
  bool isResult = what == "result";
  auto nameOf = [&](unsigned i) {
    return isResult ? function.getResultAttr(i, FuseDialect::kNameAttr)
                    : function.getArgAttr(i, FuseDialect::kNameAttr);
  };
  for (unsigned earlier = 0; earlier < index; ++earlier)
    if (nameOf(earlier))
      return success();
  unsigned count =
      isResult ? function.getNumResults() : function.getNumArguments();
  llvm::DenseMap<Attribute, unsigned> first;
  for (unsigned later = index; later < count; ++later) {
    Attribute name = nameOf(later);
    if (!name)
      continue;
    auto [found, inserted] = first.try_emplace(name, later);
    if (!inserted)
      return op->emitError() << what << "s #" << found->second << " and #"
                             << later << " are both named " << name << " ('"
                             << FuseDialect::kNameAttr << "' must be unique)";
  }
  return success();
}

// `fuse.*` attributes on function arguments: `fuse.name` and
// `fuse.index_bound`. Any other `fuse.` name is a typo that would otherwise be
// carried silently.
LogicalResult FuseDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attribute) {
  if (attribute.getName() == kNameAttr)
    return verifyName(op, "argument", argIndex, attribute.getValue());
  if (attribute.getName() == kIndexBoundAttr) {
    auto bound = llvm::dyn_cast<IntegerAttr>(attribute.getValue());
    if (!bound || bound.getValue().getSExtValue() <= 0)
      return op->emitError() << "'" << kIndexBoundAttr << "' on argument #"
                             << argIndex << " must be a positive integer, got "
                             << attribute.getValue();
    auto function = llvm::dyn_cast<FunctionOpInterface>(op);
    Type type = function ? function.getArgumentTypes()[argIndex] : Type();
    auto tensor = llvm::dyn_cast_or_null<ShapedType>(type);
    if (tensor && !llvm::isa<IntegerType>(tensor.getElementType()))
      return op->emitError() << "'" << kIndexBoundAttr << "' on argument #"
                             << argIndex << " needs an integer tensor, not "
                             << type;
    return success();
  }
  return op->emitError() << "unknown fuse argument attribute '"
                         << attribute.getName().getValue() << "' on argument #"
                         << argIndex << " (known: '" << kNameAttr << "', '"
                         << kIndexBoundAttr << "')";
}

// `fuse.name` on function results: the name of a graph output. Any other
// `fuse.` name there is a typo or a misplaced argument attribute.
LogicalResult FuseDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned resultIndex,
                                                       NamedAttribute attribute) {
  if (attribute.getName() == kNameAttr)
    return verifyName(op, "result", resultIndex, attribute.getValue());
  return op->emitError() << "unknown fuse result attribute '"
                         << attribute.getName().getValue() << "' on result #"
                         << resultIndex << " (known: '" << kNameAttr << "')";
}

// No `fuse.*` attribute belongs on an operation: one there is a typo or a
// misplaced argument or result attribute.
LogicalResult FuseDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attribute) {
  return op->emitError() << "unknown fuse attribute '"
                         << attribute.getName().getValue()
                         << "' on an operation ('" << kNameAttr << "' and '"
                         << kIndexBoundAttr
                         << "' belong on function arguments, '" << kNameAttr
                         << "' on results)";
}
