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

// `fuse.*` attributes on function arguments: `fuse.name` and
// `fuse.index_bound`. Any other `fuse.` name is a typo that would otherwise be
// carried silently.
LogicalResult FuseDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attribute) {
  if (attribute.getName() == kArgNameAttr) {
    if (!llvm::isa<StringAttr>(attribute.getValue()))
      return op->emitError() << "'" << kArgNameAttr << "' on argument #"
                             << argIndex << " must be a string, got "
                             << attribute.getValue();
    return success();
  }
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
                         << argIndex << " (known: '" << kArgNameAttr << "', '"
                         << kIndexBoundAttr << "')";
}

// No `fuse.*` attribute belongs on an operation or a function result: one
// there is a typo or a misplaced argument attribute.
LogicalResult FuseDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attribute) {
  return op->emitError() << "unknown fuse attribute '"
                         << attribute.getName().getValue()
                         << "' on an operation ('" << kArgNameAttr << "' and '"
                         << kIndexBoundAttr
                         << "' belong on function arguments)";
}

LogicalResult FuseDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned resultIndex,
                                                       NamedAttribute attribute) {
  return op->emitError() << "unknown fuse attribute '"
                         << attribute.getName().getValue() << "' on result #"
                         << resultIndex
                         << " (fuse attributes belong on function arguments)";
}
