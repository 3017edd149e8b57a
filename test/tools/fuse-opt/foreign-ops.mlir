// fuse-pipeline takes graphs of fuse ops only: a func.call (or any op of
// another dialect) is an error naming the op and its line, and a non-zero
// exit, not a diagnostic after which the pipeline writes its module and exits
// 0. Inlining first (the fuse dialect allows it) makes the graph one
// function of fuse ops that compiles.
// RUN: not fuse-opt %s --fuse-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=REFUSED
// REFUSED: foreign-ops.mlir:[[@LINE+11]]:8: error: 'func.call' op is not a fuse op: fuse-form-fusions (and so fuse-pipeline) takes graphs of fuse ops only; inline the callee first (--inline)
// RUN: fuse-opt %s --inline --fuse-pipeline | FileCheck %s --check-prefix=INLINED
// INLINED: func.func @f
// INLINED-NOT: call
// INLINED: fuse.fusion loop

func.func private @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = fuse.neg %a : tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = func.call @g(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %c = fuse.exp %b : tensor<4xf32>
  return %c : tensor<4xf32>
}
