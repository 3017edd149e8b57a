func.func @f(%x: tensor<4x8xf32>, %w: tensor<7x16xf32>) -> tensor<4x16xf32> {
  %y = fuse.matmul %x, %w : (tensor<4x8xf32>, tensor<7x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
