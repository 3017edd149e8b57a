// Tensors with a zero dimension through every part of the compiler
// (test/Codegen/empty-tensors.test). Each op is valid; its result is either
// empty (nothing to compute) or follows from no data (an identity, zeros,
// the non-empty pieces, the destination).

// The issue's crashes: softmax over no rows (SIGFPE in the row-reduction
// template) and a column sum with no columns (SIGFPE in the column-reduction
// template).
func.func @softmax_no_rows(%x: tensor<0x128xf32>) -> tensor<0x128xf32> {
  %y = fuse.softmax %x, dim = 1 : tensor<0x128xf32>
  return %y : tensor<0x128xf32>
}

func.func @column_sum_no_columns(%x: tensor<64x0xf32>) -> tensor<0xf32> {
  %y = fuse.reduce sum %x, dims = [0] : (tensor<64x0xf32>) -> tensor<0xf32>
  return %y : tensor<0xf32>
}

func.func @every_kind(%e: tensor<0x128xf32>, %r: tensor<0x64xf32>, %x2: tensor<2x64xf32>,
                      %w: tensor<4x8xf32>, %ka: tensor<4x0xf32>, %kb: tensor<0x8xf32>, %ids: tensor<0xi64>,
                      %tab: tensor<16x4xf32>, %ie: tensor<8x0xi32>, %logits: tensor<0x16xf32>, %labels: tensor<0xi64>,
                      %q: tensor<0x2x8x16xf32>)
    -> (tensor<64xf32> {fuse.name = "sum"}, tensor<64xf32> {fuse.name = "max"}, tensor<64xf32> {fuse.name = "min"},
        tensor<8xi32> {fuse.name = "imax"}, tensor<4x8xf32> {fuse.name = "k0_plus_w"}, tensor<2x64xf32> {fuse.name = "concat"},
        tensor<0x4xf32> {fuse.name = "gather"}, tensor<16x4xf32> {fuse.name = "scatter"}, tensor<0x128xf32> {fuse.name = "cumsum"},
        tensor<0x128xf32> {fuse.name = "layer_norm"}, tensor<0xi64> {fuse.name = "argmax"}, tensor<f32> {fuse.name = "ce_sum"},
        tensor<0x2x8x16xf32> {fuse.name = "attention"}, tensor<0x128xf32> {fuse.name = "exp"}) {
  %sum = fuse.reduce sum %r, dims = [0] : (tensor<0x64xf32>) -> tensor<64xf32>
  %max = fuse.reduce max %r, dims = [0] : (tensor<0x64xf32>) -> tensor<64xf32>
  %min = fuse.reduce min %r, dims = [0] : (tensor<0x64xf32>) -> tensor<64xf32>
  %imax = fuse.reduce max %ie, dims = [1] : (tensor<8x0xi32>) -> tensor<8xi32>
  %mm = fuse.matmul %ka, %kb : (tensor<4x0xf32>, tensor<0x8xf32>) -> tensor<4x8xf32>
  %k0w = fuse.add %mm, %w : tensor<4x8xf32>
  %cat = fuse.concat dim(0) %r, %x2 : (tensor<0x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
  %g = fuse.gather %tab[%ids], dim = 0 : (tensor<16x4xf32>, tensor<0xi64>) -> tensor<0x4xf32>
  %s = fuse.scatter_add %tab[%ids], %g, dim = 0 : (tensor<16x4xf32>, tensor<0xi64>, tensor<0x4xf32>) -> tensor<16x4xf32>
  %c = fuse.cumsum %e, dim = 0 : tensor<0x128xf32>
  %ln, %mean, %rstd = fuse.layer_norm %e axis = 1 epsilon = 1.0e-5 : (tensor<0x128xf32>) -> (tensor<0x128xf32>, tensor<0x1xf32>, tensor<0x1xf32>)
  %am = fuse.argmax %e, dim = 1 : (tensor<0x128xf32>) -> tensor<0xi64>
  %ce = fuse.cross_entropy %logits, %labels reduction = sum : (tensor<0x16xf32>, tensor<0xi64>) -> tensor<f32>
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q scale = 0.25 : (tensor<0x2x8x16xf32>, tensor<0x2x8x16xf32>, tensor<0x2x8x16xf32>) -> (tensor<0x2x8x16xf32>, tensor<0x2x8xf32>)
  %ex = fuse.exp %e : tensor<0x128xf32>
  return %sum, %max, %min, %imax, %k0w, %cat, %g, %s, %c, %ln, %am, %ce, %o, %ex
      : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8xi32>, tensor<4x8xf32>, tensor<2x64xf32>,
        tensor<0x4xf32>, tensor<16x4xf32>, tensor<0x128xf32>, tensor<0x128xf32>, tensor<0xi64>, tensor<f32>,
        tensor<0x2x8x16xf32>, tensor<0x128xf32>
}

// 0 / 0: a mean of nothing, a mean cross entropy of no positions.
func.func @nan_results(%r: tensor<0x64xf32>, %logits: tensor<0x16xf32>, %labels: tensor<0xi64>) -> (tensor<64xf32>, tensor<f32>) {
  %m = fuse.reduce mean %r, dims = [0] : (tensor<0x64xf32>) -> tensor<64xf32>
  %ce = fuse.cross_entropy %logits, %labels : (tensor<0x16xf32>, tensor<0xi64>) -> tensor<f32>
  return %m, %ce : tensor<64xf32>, tensor<f32>
}
