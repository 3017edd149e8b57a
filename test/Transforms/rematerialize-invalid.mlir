// Options that name no budget are errors when the pass is set up.
// RUN: not fuse-opt %s --fuse-rematerialize='budget=1000 fraction=0.5' 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not fuse-opt %s --fuse-rematerialize=fraction=1.5 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: error: fuse-rematerialize: give either budget (bytes, > 0) or fraction (of the peak without rematerialization, in (0, 1]), not both

// A budget no recomputation can meet fails with the smallest peak reached.
// RUN: not fuse-opt %s -split-input-file --fuse-form-fusions --fuse-rematerialize=budget=1000 2>&1 | FileCheck %s --check-prefix=IMPOSSIBLE
// IMPOSSIBLE: error: fuse-rematerialize: cannot bring the peak of @step under the budget of 1000 bytes (1000 B): the smallest peak reached, recomputing any kernel, is 32768 bytes (32.0 KiB; 32.0 KiB without rematerialization)
// IMPOSSIBLE: error: fuse-rematerialize: the peak of @inference is 16384 bytes (16.0 KiB), over the budget of 1000 bytes (1000 B), and it is no training step (no result named 'loss') whose activations could be recomputed
func.func @step(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<f32> {fuse.name = "loss"}, tensor<64x64xf32> {fuse.name = "grad.w"}) {
  %y = fuse.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %loss = fuse.reduce sum %y, dims = [0, 1] : (tensor<64x64xf32>) -> tensor<f32>
  %seed = fuse.broadcast_in_dim %loss, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
  %gw = fuse.matmul %x, %seed transpose_lhs : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %loss, %gw : tensor<f32>, tensor<64x64xf32>
}

// -----

func.func @inference(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %y = fuse.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %z = fuse.matmul %y, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %z : tensor<64x64xf32>
}
