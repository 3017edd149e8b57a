//===- FuseOps.h - Operations of the fuse dialect ---------------*- C++ -*-===//

#ifndef FUSE_DIALECT_FUSE_IR_FUSEOPS_H
#define FUSE_DIALECT_FUSE_IR_FUSEOPS_H

// MLIR 22's generated op classes use the builder API without including it.
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "fuse/Dialect/Fuse/IR/FuseAttrs.h"
#include "fuse/Dialect/Fuse/IR/FuseDialect.h"

#define GET_OP_CLASSES
#include "fuse/Dialect/Fuse/IR/FuseOps.h.inc"

#endif // FUSE_DIALECT_FUSE_IR_FUSEOPS_H
