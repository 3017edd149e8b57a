// RUN: fuse-opt %s -split-input-file -allow-unregistered-dialect -fuse-print-cost -verify-diagnostics -o /dev/null

// An op the cost model does not know fails the pass rather than counting as
// free, so that a new op cannot slip past the FLOP and byte totals.
func.func @unknown_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'test.opaque' op has no cost model}}
  %y = "test.opaque"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Inside a fusion too.
func.func @unknown_op_in_fusion(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fuse.fusion loop (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'test.opaque' op has no cost model}}
    %b = "test.opaque"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    fuse.yield %b : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
