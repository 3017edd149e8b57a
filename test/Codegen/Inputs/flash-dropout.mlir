// Attention with an additive mask (broadcast over heads) and dropout at
// head dim 128, forward and backward. In bf16 the forward runs on the
// cp.async flash kernel (the TMA one would spill there) and the backward on
// the TMA one at 64 query rows a step; in f32 it runs on the GEMM + softmax path, whose mask and
// dropout passes test/gpu/run-gpu-checks.sh checks on this graph too.
func.func @flash_d128_dropout(%q: tensor<1x2x70x128xf32>, %k: tensor<1x2x70x128xf32>, %v: tensor<1x2x70x128xf32>, %mask: tensor<1x1x70x70xf32>, %dout: tensor<1x2x70x128xf32>, %seed: tensor<i64>, %offset: tensor<i64>) -> (tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>) {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v mask(%mask) rng(%seed, %offset) scale = 0.0883883461 dropout_p = 0.1 : (tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>, tensor<1x1x70x70xf32>, tensor<i64>, tensor<i64>) -> (tensor<1x2x70x128xf32>, tensor<1x2x70xf32>)
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %dout, %q, %k, %v, %o, %lse mask(%mask) rng(%seed, %offset) scale = 0.0883883461 dropout_p = 0.1 : (tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>, tensor<1x2x70xf32>, tensor<1x1x70x70xf32>, tensor<i64>, tensor<i64>) -> (tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>)
  return %o, %dq, %dk, %dv : tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>
}
