func.func @needs_bias(%x: tensor<4xf32> {fuse.name = "out0"},
                      %ids: tensor<2xi64> {fuse.name = "out1"},
                      %y: tensor<4xbf16> {fuse.name = "out2"},
                      %table: tensor<10x3xf32> {fuse.name = "out3"},
                      %bias: tensor<4xf32> {fuse.name = "bias"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
