// 3*2^60 rows: its element count wraps in int64, and the plan came out as a
// 256-byte arena holding GEMMs of m = 3.46e18.
func.func @f(%a: tensor<3458764513820540928x8xf32>, %b: tensor<8x8xf32>) -> tensor<3458764513820540928x8xf32> {
  %c = fuse.matmul %a, %b : (tensor<3458764513820540928x8xf32>, tensor<8x8xf32>) -> tensor<3458764513820540928x8xf32>
  %d = fuse.matmul %c, %b : (tensor<3458764513820540928x8xf32>, tensor<8x8xf32>) -> tensor<3458764513820540928x8xf32>
  return %d : tensor<3458764513820540928x8xf32>
}
