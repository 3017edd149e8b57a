// A forward that saves exp(x) in its arena and a backward that reads it
// there (Codegen/arena-values.test).
func.func @forward(%x: tensor<16x16xf32> {fuse.name = "x"}) -> (tensor<16x16xf32> {fuse.name = "loss"}, tensor<16x16xf32> {fuse.name = "saved", fuse.in_arena}) {
  %a = fuse.exp %x : tensor<16x16xf32>
  %d = fuse.mul %a, %x : tensor<16x16xf32>
  return %d, %a : tensor<16x16xf32>, tensor<16x16xf32>
}

func.func @backward(%s: tensor<16x16xf32> {fuse.name = "saved", fuse.arena_offset = 1024 : i64}, %g: tensor<16x16xf32> {fuse.name = "g"}) -> (tensor<16x16xf32> {fuse.name = "grad"}) {
  %r = fuse.mul %s, %g : tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}
