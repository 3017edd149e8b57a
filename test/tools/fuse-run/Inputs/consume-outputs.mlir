func.func @consume(%h: tensor<2x3x4xf32> {fuse.name = "out0"},
                   %loss: tensor<f32> {fuse.name = "out1"}) -> tensor<f32> {
  %s = fuse.reduce sum %h, dims = [0, 1, 2] : (tensor<2x3x4xf32>) -> tensor<f32>
  %t = fuse.add %s, %loss : tensor<f32>
  return %t : tensor<f32>
}
