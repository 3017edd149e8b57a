// Graphs the CUDA code generator refuses, with the error it gives.
func.func @masked_attention(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %m: tensor<1x1x8x8xf32>) -> tensor<1x2x8x16xf32> {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v mask(%m) scale = 2.500000e-01 : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x1x8x8xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8xf32>)
  return %o : tensor<1x2x8x16xf32>
}
