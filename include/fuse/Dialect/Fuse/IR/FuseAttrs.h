//===- FuseAttrs.h - Attributes of the fuse dialect -------------*- C++ -*-===//

#ifndef FUSE_DIALECT_FUSE_IR_FUSEATTRS_H
#define FUSE_DIALECT_FUSE_IR_FUSEATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "fuse/Dialect/Fuse/IR/FuseEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fuse/Dialect/Fuse/IR/FuseAttrs.h.inc"

#endif // FUSE_DIALECT_FUSE_IR_FUSEATTRS_H
