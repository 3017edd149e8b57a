func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
  %y = fuse.exp %x : tensor<4xf64>
  return %y : tensor<4xf64>
}
