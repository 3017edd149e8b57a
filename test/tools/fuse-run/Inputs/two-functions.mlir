func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fuse.exp %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func @second(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %y = fuse.add %x, %x : tensor<4xbf16>
  return %y : tensor<4xbf16>
}
