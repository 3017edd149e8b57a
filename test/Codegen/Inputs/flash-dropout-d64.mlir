// Attention with a padding mask (one row of keys, broadcast over heads and
// queries, as an encoder's) and dropout at head dim 64, forward and
// backward, keys a multiple of four: in bf16 the flash kernels' dropout
// shares each Philox block between the lanes that hold its four keys
// (kernels/flash_common.cuh), checked against the interpreter's draws by
// test/gpu/run-gpu-checks.sh.
func.func @flash_d64_dropout(%q: tensor<2x2x72x64xf32>, %k: tensor<2x2x72x64xf32>, %v: tensor<2x2x72x64xf32>, %mask: tensor<2x1x1x72xf32>, %dout: tensor<2x2x72x64xf32>, %seed: tensor<i64>, %offset: tensor<i64>) -> (tensor<2x2x72x64xf32>, tensor<2x2x72x64xf32>, tensor<2x2x72x64xf32>, tensor<2x2x72x64xf32>) {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v mask(%mask) rng(%seed, %offset) scale = 0.125 dropout_p = 0.1 : (tensor<2x2x72x64xf32>, tensor<2x2x72x64xf32>, tensor<2x2x72x64xf32>, tensor<2x1x1x72xf32>, tensor<i64>, tensor<i64>) -> (tensor<2x2x72x64xf32>, tensor<2x2x72xf32>)
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %dout, %q, %k, %v, %o, %lse mask(%mask) rng(%seed, %offset) scale = 0.125 dropout_p = 0.1 : (tensor<2x2x72x64xf32>, tensor<2x2x72x64xf32>, tensor<2x2x72x64xf32>, tensor<2x2x72x64xf32>, tensor<2x2x72x64xf32>, tensor<2x2x72xf32>, tensor<2x1x1x72xf32>, tensor<i64>, tensor<i64>) -> (tensor<2x2x72x64xf32>, tensor<2x2x72x64xf32>, tensor<2x2x72x64xf32>)
  return %o, %dq, %dk, %dv : tensor<2x2x72x64xf32>, tensor<2x2x72x64xf32>, tensor<2x2x72x64xf32>, tensor<2x2x72x64xf32>
}
