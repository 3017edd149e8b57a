func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = fuse.neg %x : tensor<4x8xf32>
  %z = fuse.add %y, %x : tensor<8x4xf32>
  return %z : tensor<4x8xf32>
}
