// 2^46 f32 elements: 2^48 bytes, the most a Fuse tensor may take, and more
// than any machine has. Random inputs for it were allocated and aborted.
func.func @argument(%x: tensor<70368744177664xf32>) -> tensor<f32> {
  %s = fuse.reduce sum %x, dims = [0] : (tensor<70368744177664xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// The same size as an intermediate.
func.func @intermediate(%x: tensor<f32>) -> tensor<f32> {
  %b = fuse.broadcast_in_dim %x, dims = [] : (tensor<f32>) -> tensor<70368744177664xf32>
  %s = fuse.reduce sum %b, dims = [0] : (tensor<70368744177664xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
