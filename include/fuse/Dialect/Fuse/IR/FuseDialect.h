//===- FuseDialect.h - The fuse dialect -------------------------*- C++ -*-===//

#ifndef FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H
#define FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H

#include "mlir/IR/Dialect.h"

#include "fuse/Dialect/Fuse/IR/FuseDialect.h.inc"

#endif // FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H
