// Small graphs, one per kernel template, for the code generator's tests.
func.func @loop_vector(%x: tensor<64x256xf32>, %y: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %0 = fuse.add %x, %y : tensor<64x256xf32>
  %1 = fuse.mul %0, %x : tensor<64x256xf32>
  return %1 : tensor<64x256xf32>
}
func.func @loop_odd(%x: tensor<5x7xf32>, %b: tensor<7xf32>) -> tensor<5x7xf32> {
  %0 = fuse.broadcast_in_dim %b, dims = [1] : (tensor<7xf32>) -> tensor<5x7xf32>
  %1 = fuse.add %x, %0 : tensor<5x7xf32>
  %2 = fuse.exp %1 : tensor<5x7xf32>
  return %2 : tensor<5x7xf32>
}
func.func @loop_rows(%x: tensor<6x40xbf16>, %m: tensor<6xbf16>) -> tensor<6x40xbf16> {
  %0 = fuse.broadcast_in_dim %m, dims = [0] : (tensor<6xbf16>) -> tensor<6x40xbf16>
  %1 = fuse.sub %x, %0 : tensor<6x40xbf16>
  %2 = fuse.exp %1 : tensor<6x40xbf16>
  return %2 : tensor<6x40xbf16>
}
func.func @loop_blocks(%x: tensor<3x5x4x2xf32>, %m: tensor<3x5xf32>) -> tensor<3x5x4x2xf32> {
  %0 = fuse.broadcast_in_dim %m, dims = [0, 1] : (tensor<3x5xf32>) -> tensor<3x5x4x2xf32>
  %1 = fuse.mul %x, %0 : tensor<3x5x4x2xf32>
  return %1 : tensor<3x5x4x2xf32>
}
func.func @rotary_table(%angles: tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<64x32xbf16>) {
  %0 = fuse.cos %angles : tensor<64x32xf32>
  %1 = fuse.sin %angles : tensor<64x32xf32>
  %2 = fuse.cast %1 : tensor<64x32xf32> to tensor<64x32xbf16>
  return %0, %2 : tensor<64x32xf32>, tensor<64x32xbf16>
}
func.func @softmax_small(%x: tensor<8x100xf32>) -> tensor<8x100xf32> {
  %0 = fuse.softmax %x, dim = 1 : tensor<8x100xf32>
  return %0 : tensor<8x100xf32>
}
func.func @softmax_wide(%x: tensor<16x5000xf32>) -> tensor<16x5000xf32> {
  %0 = fuse.softmax %x, dim = 1 : tensor<16x5000xf32>
  return %0 : tensor<16x5000xf32>
}
func.func @softmax_long(%x: tensor<4x20000xf32>) -> tensor<4x20000xf32> {
  %0 = fuse.softmax %x, dim = 1 : tensor<4x20000xf32>
  return %0 : tensor<4x20000xf32>
}
func.func @column_sum(%x: tensor<8192x64xf32>) -> tensor<64xf32> {
  %0 = fuse.reduce sum %x, dims = [0] : (tensor<8192x64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}
func.func @column_mean(%x: tensor<16x64xf32>) -> tensor<64xf32> {
  %0 = fuse.reduce mean %x, dims = [0] : (tensor<16x64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}
func.func @gemm_bias_gelu(%x: tensor<32x64xf32>, %w: tensor<128x64xf32>, %b: tensor<128xf32>) -> tensor<32x128xf32> {
  %0 = fuse.matmul %x, %w transpose_rhs : (tensor<32x64xf32>, tensor<128x64xf32>) -> tensor<32x128xf32>
  %1 = fuse.broadcast_in_dim %b, dims = [1] : (tensor<128xf32>) -> tensor<32x128xf32>
  %2 = fuse.add %0, %1 : tensor<32x128xf32>
  %3 = fuse.gelu %2, approximate = tanh : tensor<32x128xf32>
  return %3 : tensor<32x128xf32>
}
// An epilogue cuBLASLt cannot compute: the GEMM into the workspace, then a
// kernel. (tanh, not exp: exp would turn a bf16 rounding of a sum of 64
// products into a relative error above bf16's tolerance on the GPU check.)
func.func @gemm_generic(%x: tensor<32x64xf32>, %w: tensor<64x128xf32>) -> tensor<32x128xf32> {
  %0 = fuse.matmul %x, %w : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
  %1 = fuse.tanh %0 : tensor<32x128xf32>
  return %1 : tensor<32x128xf32>
}
func.func @attention(%q: tensor<2x4x32x16xf32>, %k: tensor<2x4x32x16xf32>, %v: tensor<2x4x32x16xf32>) -> tensor<2x4x32x16xf32> {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 2.500000e-01 : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>)
  return %o : tensor<2x4x32x16xf32>
}
func.func @gemm_aux(%x: tensor<32x64xf32>, %w: tensor<128x64xf32>, %b: tensor<128xf32>) -> (tensor<32x128xf32>, tensor<32x128xf32>) {
  %0 = fuse.matmul %x, %w transpose_rhs : (tensor<32x64xf32>, tensor<128x64xf32>) -> tensor<32x128xf32>
  %1 = fuse.broadcast_in_dim %b, dims = [1] : (tensor<128xf32>) -> tensor<32x128xf32>
  %2 = fuse.add %0, %1 : tensor<32x128xf32>
  %3 = fuse.gelu %2, approximate = tanh : tensor<32x128xf32>
  return %2, %3 : tensor<32x128xf32>, tensor<32x128xf32>
}

// A tied embedding's gradient: the lm-head weight gradient plus the
// lookup's scatter. The scatter accumulates into the GEMM's result, which
// the GEMM writes straight into the caller's output.
func.func @tied_embedding_grad(%h: tensor<64x32xf32>, %dlogits: tensor<64x128xf32>, %ids: tensor<64xi64>, %demb: tensor<64x32xf32>) -> tensor<128x32xf32> {
  %zeros = fuse.constant dense<0.0> : tensor<128x32xf32>
  %lookup = fuse.scatter_add %zeros[%ids], %demb, dim = 0 : (tensor<128x32xf32>, tensor<64xi64>, tensor<64x32xf32>) -> tensor<128x32xf32>
  %head = fuse.matmul %dlogits, %h transpose_lhs : (tensor<64x128xf32>, tensor<64x32xf32>) -> tensor<128x32xf32>
  %sum = fuse.add %head, %lookup : tensor<128x32xf32>
  return %sum : tensor<128x32xf32>
}

// Three linear layers in bf16 with f32 biases, the first bias read by two,
// then a matmul: the epilogues read bf16 copies that one kernel makes at
// the start.
func.func @linear_biases(%x: tensor<32x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>,
                         %b1: tensor<64xf32>, %b2: tensor<64xf32>) -> tensor<32x64xf32> {
  %m1 = fuse.matmul %x, %w1 transpose_rhs : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
  %bb1 = fuse.broadcast_in_dim %b1, dims = [1] : (tensor<64xf32>) -> tensor<32x64xf32>
  %h = fuse.add %m1, %bb1 : tensor<32x64xf32>
  %m2 = fuse.matmul %h, %w1 transpose_rhs : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
  %h2 = fuse.add %m2, %bb1 : tensor<32x64xf32>
  %m3 = fuse.matmul %h2, %w2 transpose_rhs : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
  %bb2 = fuse.broadcast_in_dim %b2, dims = [1] : (tensor<64xf32>) -> tensor<32x64xf32>
  %y = fuse.add %m3, %bb2 : tensor<32x64xf32>
  %z = fuse.matmul %y, %w2 : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
  return %z : tensor<32x64xf32>
}

// An f32 residual added to a GEMM's result, the sum then feeding another
// GEMM in bf16: cuBLASLt's C and D share a type, so the sum is not folded
// into the first GEMM (its C would be read as bf16); a kernel adds it.
func.func @gemm_f32_residual(%a: tensor<64x64xf32>, %w: tensor<64x32xf32>, %x: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %y = fuse.matmul %a, %w : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  %x2 = fuse.add %x, %y : tensor<64x32xf32>
  %z = fuse.matmul %a, %x2 : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  return %z : tensor<64x32xf32>
}
