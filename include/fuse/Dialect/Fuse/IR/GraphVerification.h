//===- GraphVerification.h - Whole-graph type checks ------------*- C++ -*-===//
//
// Op verifiers see only their own operands and results; a function whose
// arguments or results are dynamic, of another element type, or too large
// for int64 sizes passes them all (`func.return` checks nothing), and then
// crashes the interpreter, the memory planner or code generation. This check
// covers every value of every function. fuse-opt runs it on every input,
// fuse-pipeline as its first step, and fuse-run, fuse-translate, the C API
// and code generation before they touch a graph.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DIALECT_FUSE_IR_GRAPHVERIFICATION_H
#define FUSE_DIALECT_FUSE_IR_GRAPHVERIFICATION_H

#include "mlir/IR/Operation.h"
#include <string>

namespace mlir::fuse {

/// Why `type` cannot be a value of a Fuse graph, or an empty string: it must
/// be a ranked tensor with a static shape, an element type Fuse stores (f32,
/// f16, bf16, i64, i32, i1) and at most ::fuse::kMaxTensorBytes (2^48)
/// bytes.
std::string checkGraphType(Type type);

/// Checks the signature and every value (op results, region arguments) of
/// each function under `root` (a module or a function) with checkGraphType.
/// Reports the first offending value, naming it, its type and why, at its
/// location, and fails; one diagnostic, not one per use of a bad argument.
LogicalResult verifyGraphTypes(Operation *root);

} // namespace mlir::fuse

#endif // FUSE_DIALECT_FUSE_IR_GRAPHVERIFICATION_H
