// 2^68 elements: in int64 the count wraps to 0.
func.func @f(%x: tensor<268435456x1099511627776xf32>) -> tensor<f32> {
  %s = fuse.reduce sum %x, dims = [0, 1] : (tensor<268435456x1099511627776xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
