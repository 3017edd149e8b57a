// A token embedding, a residual add and a loss: integer inputs get their
// ranges from fuse.index_bound and from their uses.
func.func @embed(%wte: tensor<10x4xf32> {fuse.name = "wte"},
                 %ids: tensor<2x3xi64> {fuse.name = "input_ids"},
                 %labels: tensor<2x3xi64> {fuse.name = "labels", fuse.index_bound = 10 : i64},
                 %head: tensor<10x4xf32> {fuse.name = "lm_head"}) -> (tensor<2x3x4xf32>, tensor<f32>) {
  %e = fuse.gather %wte[%ids], dim = 0 : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %h = fuse.add %e, %e : tensor<2x3x4xf32>
  %logits = fuse.matmul %h, %head transpose_rhs : (tensor<2x3x4xf32>, tensor<10x4xf32>) -> tensor<2x3x10xf32>
  %loss = fuse.cross_entropy %logits, %labels : (tensor<2x3x10xf32>, tensor<2x3xi64>) -> tensor<f32>
  return %h, %loss : tensor<2x3x4xf32>, tensor<f32>
}
