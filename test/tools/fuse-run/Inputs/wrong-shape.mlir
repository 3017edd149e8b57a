func.func @wrong(%x: tensor<2x2xf32> {fuse.name = "out0"},
                 %ids: tensor<2xi64> {fuse.name = "out1"},
                 %y: tensor<4xbf16> {fuse.name = "out2"},
                 %t: tensor<10x3xf32> {fuse.name = "out3"}) -> tensor<2x2xf32> {
  return %x : tensor<2x2xf32>
}
