// Cross entropy where every label is ignore_index: the mean is 0/0 = NaN (as
// the op and PyTorch define it), the sum 0 and the gradient 0. decompose.mlir
// runs it before and after fuse-decompose (--check-pipeline cannot: NaN
// never passes a comparison).
func.func @nothing_counted(%logits: tensor<4x10xf32>, %dloss: tensor<f32>)
    -> (tensor<f32> {fuse.name = "mean"}, tensor<f32> {fuse.name = "sum"},
        tensor<4x10xf32> {fuse.name = "grad"}) {
  %labels = fuse.constant dense<-100> : tensor<4xi64>
  %mean = fuse.cross_entropy %logits, %labels : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %sum = fuse.cross_entropy %logits, %labels reduction = sum : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %grad = fuse.cross_entropy_backward %dloss, %logits, %labels : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>) -> tensor<4x10xf32>
  return %mean, %sum, %grad : tensor<f32>, tensor<f32>, tensor<4x10xf32>
}
