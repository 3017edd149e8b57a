// Takes the arrays make-inputs.mlir writes, under their names.
func.func @take(%x: tensor<4xf32> {fuse.name = "out0"},
                %ids: tensor<2xi64> {fuse.name = "out1"},
                %y: tensor<4xbf16> {fuse.name = "out2"},
                %table: tensor<10x3xf32> {fuse.name = "out3"}) -> tensor<2x3xf32> {
  %e = fuse.gather %table[%ids], dim = 0 : (tensor<10x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %e : tensor<2x3xf32>
}
