// A broadcast to 2^68 elements, then their sum: the count wrapped to 0, the
// interpreter summed nothing and printed sum = 0 with exit 0.
func.func @f(%x: tensor<f32>) -> tensor<f32> {
  %b = fuse.broadcast_in_dim %x, dims = [] : (tensor<f32>) -> tensor<268435456x1099511627776xf32>
  %s = fuse.reduce sum %b, dims = [0, 1] : (tensor<268435456x1099511627776xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
