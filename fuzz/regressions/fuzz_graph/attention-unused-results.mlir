// Attention whose results are not all read, on the GEMM + softmax path (head
// dim 8: no flash kernels). The pipeline drops what nothing reads from the
// attention fusion, so its results are no longer attention's in order:
// @dq_only yields dQ alone, @lse_only the log-sum-exp alone. (Code
// generation took fusion result #1 and #2 for dK and dV, and result #0 for
// the output, and read past the fusion's results: found by fuzz_graph.)
func.func @dq_only(%do: tensor<2x4x16x8xf32>, %q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>, %o: tensor<2x4x16x8xf32>, %lse: tensor<2x4x16xf32>) -> tensor<2x4x16x8xf32> {
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %k, %v, %o, %lse causal scale = 0.35 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
  return %dq : tensor<2x4x16x8xf32>
}

func.func @dv_only(%do: tensor<2x4x16x8xf32>, %q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>, %o: tensor<2x4x16x8xf32>, %lse: tensor<2x4x16xf32>) -> tensor<2x4x16x8xf32> {
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %k, %v, %o, %lse scale = 0.35 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
  return %dv : tensor<2x4x16x8xf32>
}

func.func @lse_only(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>) -> tensor<2x4x16xf32> {
  %out, %lse = fuse.scaled_dot_product_attention %q, %k, %v scale = 0.35 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16xf32>)
  return %lse : tensor<2x4x16xf32>
}
