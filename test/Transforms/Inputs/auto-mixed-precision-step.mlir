// A training step small enough to follow by hand: a linear layer, its
// softmax cross entropy, the gradient, and an SGD update of the weight and
// bias returned under their own names. auto-mixed-precision-loss-scaling.test
// runs it at f16 with dynamic loss scaling.
func.func @step(%x: tensor<4x8xf32> {fuse.name = "x"},
                %w: tensor<8x3xf32> {fuse.name = "w"},
                %b: tensor<3xf32> {fuse.name = "b"},
                %labels: tensor<4xi64> {fuse.name = "labels", fuse.index_bound = 3 : i64},
                %lr: tensor<f32> {fuse.name = "lr"})
    -> (tensor<f32> {fuse.name = "loss"}, tensor<8x3xf32> {fuse.name = "w"},
        tensor<3xf32> {fuse.name = "b"}) {
  %xw = fuse.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %bias = fuse.broadcast_in_dim %b, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  %logits = fuse.add %xw, %bias : tensor<4x3xf32>
  %loss = fuse.cross_entropy %logits, %labels : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  %one = fuse.constant dense<1.0> : tensor<f32>
  %dlogits = fuse.cross_entropy_backward %one, %logits, %labels : (tensor<f32>, tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  %dw = fuse.matmul %x, %dlogits transpose_lhs : (tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %db = fuse.reduce sum %dlogits, dims = [0] : (tensor<4x3xf32>) -> tensor<3xf32>
  %lrw = fuse.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
  %stepw = fuse.mul %lrw, %dw : tensor<8x3xf32>
  %w1 = fuse.sub %w, %stepw : tensor<8x3xf32>
  %lrb = fuse.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %stepb = fuse.mul %lrb, %db : tensor<3xf32>
  %b1 = fuse.sub %b, %stepb : tensor<3xf32>
  return %loss, %w1, %b1 : tensor<f32>, tensor<8x3xf32>, tensor<3xf32>
}
