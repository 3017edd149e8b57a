// Attention the flash kernels do not take, with a mask and dropout, which
// the GEMM + softmax lowering then runs (mask and dropout as passes of
// their own): head dim 80 with a float mask broadcast over heads, and head
// dim 64 with a boolean padding mask ([B, 1, 1, Tk], as BERT's) and
// grouped-query heads. Forward and backward, lengths off every tile.
func.func @head_dim_80(%q: tensor<1x2x70x80xf32>, %k: tensor<1x2x70x80xf32>, %v: tensor<1x2x70x80xf32>, %mask: tensor<1x1x70x70xf32>, %dout: tensor<1x2x70x80xf32>, %seed: tensor<i64>, %offset: tensor<i64>) -> (tensor<1x2x70x80xf32>, tensor<1x2x70x80xf32>, tensor<1x2x70x80xf32>, tensor<1x2x70x80xf32>) {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v mask(%mask) rng(%seed, %offset) scale = 0.1118034 dropout_p = 0.1 : (tensor<1x2x70x80xf32>, tensor<1x2x70x80xf32>, tensor<1x2x70x80xf32>, tensor<1x1x70x70xf32>, tensor<i64>, tensor<i64>) -> (tensor<1x2x70x80xf32>, tensor<1x2x70xf32>)
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %dout, %q, %k, %v, %o, %lse mask(%mask) rng(%seed, %offset) scale = 0.1118034 dropout_p = 0.1 : (tensor<1x2x70x80xf32>, tensor<1x2x70x80xf32>, tensor<1x2x70x80xf32>, tensor<1x2x70x80xf32>, tensor<1x2x70x80xf32>, tensor<1x2x70xf32>, tensor<1x1x70x70xf32>, tensor<i64>, tensor<i64>) -> (tensor<1x2x70x80xf32>, tensor<1x2x70x80xf32>, tensor<1x2x70x80xf32>)
  return %o, %dq, %dk, %dv : tensor<1x2x70x80xf32>, tensor<1x2x70x80xf32>, tensor<1x2x70x80xf32>, tensor<1x2x70x80xf32>
}

func.func @boolean_padding_mask(%q: tensor<2x4x45x64xf32>, %k: tensor<2x2x45x64xf32>, %v: tensor<2x2x45x64xf32>, %mask: tensor<2x1x1x45xi1>, %dout: tensor<2x4x45x64xf32>) -> (tensor<2x4x45x64xf32>, tensor<2x4x45x64xf32>, tensor<2x2x45x64xf32>, tensor<2x2x45x64xf32>) {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v mask(%mask) scale = 0.125 : (tensor<2x4x45x64xf32>, tensor<2x2x45x64xf32>, tensor<2x2x45x64xf32>, tensor<2x1x1x45xi1>) -> (tensor<2x4x45x64xf32>, tensor<2x4x45xf32>)
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %dout, %q, %k, %v, %o, %lse mask(%mask) scale = 0.125 : (tensor<2x4x45x64xf32>, tensor<2x4x45x64xf32>, tensor<2x2x45x64xf32>, tensor<2x2x45x64xf32>, tensor<2x4x45x64xf32>, tensor<2x4x45xf32>, tensor<2x1x1x45xi1>) -> (tensor<2x4x45x64xf32>, tensor<2x2x45x64xf32>, tensor<2x2x45x64xf32>)
  return %o, %dq, %dk, %dv : tensor<2x4x45x64xf32>, tensor<2x4x45x64xf32>, tensor<2x2x45x64xf32>, tensor<2x2x45x64xf32>
}
