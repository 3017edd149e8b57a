// One argument, x: 2x3xf32, for the hostile archives of hostile_npz.py.
func.func @f(%x: tensor<2x3xf32> {fuse.name = "x"}) -> tensor<3xf32> {
  %s = fuse.reduce sum %x, dims = [0] : (tensor<2x3xf32>) -> tensor<3xf32>
  return %s : tensor<3xf32>
}
