//===- FuseDialect.cpp - The fuse dialect ----------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"

#include "fuse/Dialect/Fuse/IR/FuseAttrs.h"
#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
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

// `fuse.*` attributes on function arguments. Only `fuse.name` exists; any
// other `fuse.` name is a typo that would otherwise be carried silently.
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
  return op->emitError() << "unknown fuse argument attribute '"
                         << attribute.getName() << "' on argument #"
                         << argIndex << " (known: '" << kArgNameAttr << "')";
}
