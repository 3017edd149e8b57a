// Sizes that are not multiples of the vector width, the warp or the block,
// for the GPU tests (test/gpu/run-gpu-checks.sh): every template's tails.

func.func @loop_tail(%x: tensor<7x143xf32>, %y: tensor<7x143xf32>) -> tensor<7x143xbf16> {
  %0 = fuse.mul %x, %y : tensor<7x143xf32>
  %1 = fuse.tanh %0 : tensor<7x143xf32>
  %2 = fuse.cast %1 : tensor<7x143xf32> to tensor<7x143xbf16>
  return %2 : tensor<7x143xbf16>
}

func.func @loop_shapes(%x: tensor<6x10x12xf32>, %y: tensor<12x10xf32>) -> (tensor<10x6x12xf32>, tensor<6x10x20xf32>) {
  %0 = fuse.transpose %x, permutation = [1, 0, 2] : (tensor<6x10x12xf32>) -> tensor<10x6x12xf32>
  %1 = fuse.transpose %y, permutation = [1, 0] : (tensor<12x10xf32>) -> tensor<10x12xf32>
  %2 = fuse.broadcast_in_dim %1, dims = [0, 2] : (tensor<10x12xf32>) -> tensor<10x6x12xf32>
  %3 = fuse.sub %0, %2 : tensor<10x6x12xf32>
  %4 = fuse.slice %x, start = [0, 0, 2], limit = [6, 10, 10], stride = [1, 1, 1] : (tensor<6x10x12xf32>) -> tensor<6x10x8xf32>
  %5 = fuse.concat dim(2) %x, %4 : (tensor<6x10x12xf32>, tensor<6x10x8xf32>) -> tensor<6x10x20xf32>
  %6 = fuse.neg %5 : tensor<6x10x20xf32>
  return %3, %6 : tensor<10x6x12xf32>, tensor<6x10x20xf32>
}

func.func @softmax_rows(%a: tensor<3x33xf32>, %b: tensor<5x257xf32>, %c: tensor<2x9000xf32>) -> (tensor<3x33xf32>, tensor<5x257xf32>, tensor<2x9000xf32>) {
  %0 = fuse.softmax %a, dim = 1 : tensor<3x33xf32>
  %1 = fuse.softmax %b, dim = 1 : tensor<5x257xf32>
  %2 = fuse.log_softmax %c, dim = 1 : tensor<2x9000xf32>
  return %0, %1, %2 : tensor<3x33xf32>, tensor<5x257xf32>, tensor<2x9000xf32>
}

// Long rows copied to shared memory: 16-byte copies (12000 bf16 or f32),
// element by element where the row's bytes are no multiple of 16 (9001).
func.func @long_rows(%a: tensor<2x9001xf32>, %b: tensor<3x12000xf32>) -> (tensor<2x9001xf32>, tensor<3x12000xf32>) {
  %0 = fuse.log_softmax %a, dim = 1 : tensor<2x9001xf32>
  %1 = fuse.softmax %b, dim = 1 : tensor<3x12000xf32>
  return %0, %1 : tensor<2x9001xf32>, tensor<3x12000xf32>
}

func.func @layer_norm_rows(%x: tensor<7x770xf32>, %w: tensor<770xf32>, %b: tensor<770xf32>) -> tensor<7x770xf32> {
  %y, %mean, %rstd = fuse.layer_norm %x weight(%w) bias(%b) axis = 1 epsilon = 1.0e-05 : (tensor<7x770xf32>, tensor<770xf32>, tensor<770xf32>) -> (tensor<7x770xf32>, tensor<7x1xf32>, tensor<7x1xf32>)
  return %y : tensor<7x770xf32>
}

func.func @column_sums(%x: tensor<1000x33xf32>, %y: tensor<100x65xf32>) -> (tensor<33xf32>, tensor<65xf32>) {
  %0 = fuse.reduce sum %x, dims = [0] : (tensor<1000x33xf32>) -> tensor<33xf32>
  %1 = fuse.reduce mean %y, dims = [0] : (tensor<100x65xf32>) -> tensor<65xf32>
  return %0, %1 : tensor<33xf32>, tensor<65xf32>
}

// A per-element output beside the column sums (a bias-gradient fusion):
// 520 columns leave a partial last block of vector lanes.
func.func @column_with_elements(%x: tensor<300x520xf32>, %b: tensor<520xf32>) -> (tensor<300x520xf32>, tensor<520xf32>) {
  %0 = fuse.broadcast_in_dim %b, dims = [1] : (tensor<520xf32>) -> tensor<300x520xf32>
  %1 = fuse.add %x, %0 : tensor<300x520xf32>
  %2 = fuse.exp %1 : tensor<300x520xf32>
  %3 = fuse.reduce sum %2, dims = [0] : (tensor<300x520xf32>) -> tensor<520xf32>
  return %2, %3 : tensor<300x520xf32>, tensor<520xf32>
}

// An optimizer's update fused into its gradient's column reduction and
// planned over the donated state it reads: the moment %m and the bias %b
// per column (the epilogue reads them, then writes them), and %x per
// element (read and written by the thread of that element).
func.func @column_update_in_place(%g: tensor<300x520xf32> {fuse.name = "g"}, %b: tensor<520xf32> {fuse.name = "b", fuse.donated}, %m: tensor<520xf32> {fuse.name = "m", fuse.donated}, %x: tensor<300x520xf32> {fuse.name = "x", fuse.donated}) -> (tensor<520xf32> {fuse.name = "m"}, tensor<520xf32> {fuse.name = "b"}, tensor<300x520xf32> {fuse.name = "x"}) {
  %e = fuse.exp %g : tensor<300x520xf32>
  %s = fuse.reduce sum %e, dims = [0] : (tensor<300x520xf32>) -> tensor<520xf32>
  %half = fuse.constant dense<5.000000e-01> : tensor<520xf32>
  %mh = fuse.mul %m, %half : tensor<520xf32>
  %m2 = fuse.add %mh, %s : tensor<520xf32>
  %step = fuse.mul %m2, %b : tensor<520xf32>
  %b2 = fuse.sub %b, %step : tensor<520xf32>
  %x2 = fuse.add %x, %e : tensor<300x520xf32>
  return %m2, %b2, %x2 : tensor<520xf32>, tensor<520xf32>, tensor<300x520xf32>
}

// A row reduction whose result "x" is planned over the donated %x (it dies
// there and is read at its own elements only): %x is read by the other
// output alone, in the last pass, so that pass must load it before it
// stores "x". Rows of 100 stay in registers; rows of 20000 go through
// shared memory.
func.func @row_update_in_place(%t: tensor<8x100xf32> {fuse.name = "t"}, %x: tensor<8x100xf32> {fuse.name = "x", fuse.donated}) -> (tensor<8x100xf32> {fuse.name = "x"}, tensor<8x100xf32> {fuse.name = "z"}) {
  %0 = fuse.softmax %t, dim = 1 : tensor<8x100xf32>
  %1 = fuse.add %0, %t : tensor<8x100xf32>
  %2 = fuse.mul %x, %t : tensor<8x100xf32>
  return %1, %2 : tensor<8x100xf32>, tensor<8x100xf32>
}
func.func @row_update_in_place_long(%t: tensor<4x20000xf32> {fuse.name = "t"}, %x: tensor<4x20000xf32> {fuse.name = "x", fuse.donated}) -> (tensor<4x20000xf32> {fuse.name = "x"}, tensor<4x20000xf32> {fuse.name = "z"}) {
  %0 = fuse.softmax %t, dim = 1 : tensor<4x20000xf32>
  %1 = fuse.add %0, %t : tensor<4x20000xf32>
  %2 = fuse.mul %x, %t : tensor<4x20000xf32>
  return %1, %2 : tensor<4x20000xf32>, tensor<4x20000xf32>
}

// Few rows, long ones (a gradient accumulated and its squared norm taken:
// the global-norm clipping of an accumulating step): split over many blocks,
// partial results finished by a second kernel. 300000 elements are not a
// multiple of the chunk; the accumulation is planned in place.
func.func @full_reduction_in_place(%g: tensor<1000x300xf32> {fuse.name = "g"}, %acc: tensor<1000x300xf32> {fuse.name = "acc", fuse.donated}) -> (tensor<1000x300xf32> {fuse.name = "acc"}, tensor<f32> {fuse.name = "norm"}) {
  %0 = fuse.add %acc, %g : tensor<1000x300xf32>
  %1 = fuse.mul %0, %0 : tensor<1000x300xf32>
  %2 = fuse.reduce sum %1, dims = [0, 1] : (tensor<1000x300xf32>) -> tensor<f32>
  %3 = fuse.sqrt %2 : tensor<f32>
  return %0, %3 : tensor<1000x300xf32>, tensor<f32>
}
// Clipping by the global norm, then the update, in one fusion: the
// per-element outputs read the reduction, so the second kernel writes them
// all, after the partials (w is updated in place).
func.func @clip_and_update(%g: tensor<1000x300xf32> {fuse.name = "g"}, %w: tensor<1000x300xf32> {fuse.name = "w", fuse.donated}) -> (tensor<1000x300xf32> {fuse.name = "w"}, tensor<f32> {fuse.name = "norm"}) {
  %0 = fuse.mul %g, %g : tensor<1000x300xf32>
  %1 = fuse.reduce sum %0, dims = [0, 1] : (tensor<1000x300xf32>) -> tensor<f32>
  %2 = fuse.sqrt %1 : tensor<f32>
  %eps = fuse.constant dense<1.0e-06> : tensor<f32>
  %one = fuse.constant dense<1.0> : tensor<f32>
  %3 = fuse.add %2, %eps : tensor<f32>
  %4 = fuse.div %one, %3 : tensor<f32>
  %5 = fuse.minimum %4, %one : tensor<f32>
  %6 = fuse.broadcast_in_dim %5, dims = [] : (tensor<f32>) -> tensor<1000x300xf32>
  %7 = fuse.mul %g, %6 : tensor<1000x300xf32>
  %8 = fuse.sub %w, %7 : tensor<1000x300xf32>
  return %8, %2 : tensor<1000x300xf32>, tensor<f32>
}
// Three long rows: a maximum and a mean of each, and a per-row result of both.
func.func @few_long_rows(%x: tensor<3x70001xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = fuse.reduce max %x, dims = [1] : (tensor<3x70001xf32>) -> tensor<3xf32>
  %1 = fuse.reduce mean %x, dims = [1] : (tensor<3x70001xf32>) -> tensor<3xf32>
  %2 = fuse.sub %0, %1 : tensor<3xf32>
  return %0, %2 : tensor<3xf32>, tensor<3xf32>
}

// An update applied only when a scalar input says so (an optimizer under
// gradient accumulation): both outputs are select(apply > 0, new, old) over
// donated inputs planned in place, so the kernel returns early otherwise.
// The second applies it when apply <= 0: with the same input values, one of
// the two runs the update and the other keeps the old values.
func.func @update_unless_kept(%g: tensor<300x520xf32> {fuse.name = "g"}, %w: tensor<300x520xf32> {fuse.name = "w", fuse.donated}, %m: tensor<300x520xf32> {fuse.name = "m", fuse.donated}, %apply: tensor<f32> {fuse.name = "apply"}, %lr: tensor<f32> {fuse.name = "lr"}) -> (tensor<300x520xf32> {fuse.name = "w"}, tensor<300x520xf32> {fuse.name = "m"}) {
  %zero = fuse.constant dense<0.0> : tensor<f32>
  %on = fuse.compare gt, %apply, %zero : tensor<f32>
  %onb = fuse.broadcast_in_dim %on, dims = [] : (tensor<i1>) -> tensor<300x520xi1>
  %beta = fuse.constant dense<0.9> : tensor<300x520xf32>
  %decayed = fuse.mul %m, %beta : tensor<300x520xf32>
  %m1 = fuse.add %decayed, %g : tensor<300x520xf32>
  %lrb = fuse.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<300x520xf32>
  %step = fuse.mul %lrb, %m1 : tensor<300x520xf32>
  %w1 = fuse.sub %w, %step : tensor<300x520xf32>
  %w2 = fuse.select %onb, %w1, %w : tensor<300x520xi1>, tensor<300x520xf32>
  %m2 = fuse.select %onb, %m1, %m : tensor<300x520xi1>, tensor<300x520xf32>
  return %w2, %m2 : tensor<300x520xf32>, tensor<300x520xf32>
}
func.func @update_unless_kept_le(%g: tensor<300x520xf32> {fuse.name = "g"}, %w: tensor<300x520xf32> {fuse.name = "w", fuse.donated}, %m: tensor<300x520xf32> {fuse.name = "m", fuse.donated}, %apply: tensor<f32> {fuse.name = "apply"}, %lr: tensor<f32> {fuse.name = "lr"}) -> (tensor<300x520xf32> {fuse.name = "w"}, tensor<300x520xf32> {fuse.name = "m"}) {
  %zero = fuse.constant dense<0.0> : tensor<f32>
  %on = fuse.compare le, %apply, %zero : tensor<f32>
  %onb = fuse.broadcast_in_dim %on, dims = [] : (tensor<i1>) -> tensor<300x520xi1>
  %beta = fuse.constant dense<0.9> : tensor<300x520xf32>
  %decayed = fuse.mul %m, %beta : tensor<300x520xf32>
  %m1 = fuse.add %decayed, %g : tensor<300x520xf32>
  %lrb = fuse.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<300x520xf32>
  %step = fuse.mul %lrb, %m1 : tensor<300x520xf32>
  %w1 = fuse.sub %w, %step : tensor<300x520xf32>
  %w2 = fuse.select %onb, %w1, %w : tensor<300x520xi1>, tensor<300x520xf32>
  %m2 = fuse.select %onb, %m1, %m : tensor<300x520xi1>, tensor<300x520xf32>
  return %w2, %m2 : tensor<300x520xf32>, tensor<300x520xf32>
}

func.func @gemm_odd(%x: tensor<37x29xf32>, %w: tensor<53x29xf32>, %b: tensor<53xf32>, %r: tensor<37x53xf32>) -> tensor<37x53xf32> {
  %0 = fuse.matmul %x, %w transpose_rhs : (tensor<37x29xf32>, tensor<53x29xf32>) -> tensor<37x53xf32>
  %1 = fuse.broadcast_in_dim %b, dims = [1] : (tensor<53xf32>) -> tensor<37x53xf32>
  %2 = fuse.add %0, %1 : tensor<37x53xf32>
  %3 = fuse.add %2, %r : tensor<37x53xf32>
  return %3 : tensor<37x53xf32>
}

func.func @attention_odd(%q: tensor<2x3x33x16xf32>, %k: tensor<2x3x33x16xf32>, %v: tensor<2x3x33x16xf32>) -> tensor<2x3x33x16xf32> {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 2.500000e-01 : (tensor<2x3x33x16xf32>, tensor<2x3x33x16xf32>, tensor<2x3x33x16xf32>) -> (tensor<2x3x33x16xf32>, tensor<2x3x33xf32>)
  return %o : tensor<2x3x33x16xf32>
}

func.func @embedding(%table: tensor<50x24xf32>, %ids: tensor<3x7xi64> {fuse.index_bound = 50 : i64}, %grad: tensor<3x7x24xf32>) -> (tensor<3x7x24xf32>, tensor<50x24xf32>) {
  %0 = fuse.gather %table[%ids], dim = 0 : (tensor<50x24xf32>, tensor<3x7xi64>) -> tensor<3x7x24xf32>
  %zero = fuse.constant dense<0.000000e+00> : tensor<50x24xf32>
  %1 = fuse.scatter_add %zero[%ids], %grad, dim = 0 : (tensor<50x24xf32>, tensor<3x7xi64>, tensor<3x7x24xf32>) -> tensor<50x24xf32>
  return %0, %1 : tensor<3x7x24xf32>, tensor<50x24xf32>
}

// Head dims 64 and 128 in bf16 (the default pipeline) take the flash kernels;
// in f32 the GEMM + softmax path. Lengths that are not multiples of the tiles,
// grouped-query heads, forward and backward.
func.func @flash_d64(%q: tensor<2x3x100x64xf32>, %k: tensor<2x3x100x64xf32>, %v: tensor<2x3x100x64xf32>, %dout: tensor<2x3x100x64xf32>) -> (tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>) {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 1.250000e-01 : (tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>) -> (tensor<2x3x100x64xf32>, tensor<2x3x100xf32>)
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %dout, %q, %k, %v, %o, %lse causal scale = 1.250000e-01 : (tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100xf32>) -> (tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>)
  return %o, %dq, %dk, %dv : tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>
}

func.func @flash_d128_gqa(%q: tensor<1x4x77x128xf32>, %k: tensor<1x2x77x128xf32>, %v: tensor<1x2x77x128xf32>, %dout: tensor<1x4x77x128xf32>) -> (tensor<1x4x77x128xf32>, tensor<1x4x77x128xf32>, tensor<1x2x77x128xf32>, tensor<1x2x77x128xf32>) {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v scale = 0.0883883461 : (tensor<1x4x77x128xf32>, tensor<1x2x77x128xf32>, tensor<1x2x77x128xf32>) -> (tensor<1x4x77x128xf32>, tensor<1x4x77xf32>)
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %dout, %q, %k, %v, %o, %lse scale = 0.0883883461 : (tensor<1x4x77x128xf32>, tensor<1x4x77x128xf32>, tensor<1x2x77x128xf32>, tensor<1x2x77x128xf32>, tensor<1x4x77x128xf32>, tensor<1x4x77xf32>) -> (tensor<1x4x77x128xf32>, tensor<1x2x77x128xf32>, tensor<1x2x77x128xf32>)
  return %o, %dq, %dk, %dv : tensor<1x4x77x128xf32>, tensor<1x4x77x128xf32>, tensor<1x2x77x128xf32>, tensor<1x2x77x128xf32>
}

func.func @flash_f16(%q: tensor<1x2x50x64xf16>, %k: tensor<1x2x50x64xf16>, %v: tensor<1x2x50x64xf16>) -> tensor<1x2x50x64xf16> {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 1.250000e-01 : (tensor<1x2x50x64xf16>, tensor<1x2x50x64xf16>, tensor<1x2x50x64xf16>) -> (tensor<1x2x50x64xf16>, tensor<1x2x50xf32>)
  return %o : tensor<1x2x50x64xf16>
}

// q, k and v read straight out of one [B, T, 3 H D] projection (GPT-2's
// layout); the output written as [B, T, H D], the gradients into one
// [B, T, 3 H D]: in bf16 the flash kernels address all of them by strides,
// with no copy kernel around them. Causal, lengths off the tiles.
func.func @flash_packed_qkv(%qkv: tensor<2x100x576xf32>, %dout: tensor<2x100x192xf32>) -> (tensor<2x100x192xf32>, tensor<2x100x576xf32>) {
  %q = fuse.slice %qkv, start = [0, 0, 0], limit = [2, 100, 192], stride = [1, 1, 1] : (tensor<2x100x576xf32>) -> tensor<2x100x192xf32>
  %k = fuse.slice %qkv, start = [0, 0, 192], limit = [2, 100, 384], stride = [1, 1, 1] : (tensor<2x100x576xf32>) -> tensor<2x100x192xf32>
  %v = fuse.slice %qkv, start = [0, 0, 384], limit = [2, 100, 576], stride = [1, 1, 1] : (tensor<2x100x576xf32>) -> tensor<2x100x192xf32>
  %q4 = fuse.reshape %q : (tensor<2x100x192xf32>) -> tensor<2x100x3x64xf32>
  %k4 = fuse.reshape %k : (tensor<2x100x192xf32>) -> tensor<2x100x3x64xf32>
  %v4 = fuse.reshape %v : (tensor<2x100x192xf32>) -> tensor<2x100x3x64xf32>
  %qt = fuse.transpose %q4, permutation = [0, 2, 1, 3] : (tensor<2x100x3x64xf32>) -> tensor<2x3x100x64xf32>
  %kt = fuse.transpose %k4, permutation = [0, 2, 1, 3] : (tensor<2x100x3x64xf32>) -> tensor<2x3x100x64xf32>
  %vt = fuse.transpose %v4, permutation = [0, 2, 1, 3] : (tensor<2x100x3x64xf32>) -> tensor<2x3x100x64xf32>
  %o, %lse = fuse.scaled_dot_product_attention %qt, %kt, %vt causal scale = 1.250000e-01 : (tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>) -> (tensor<2x3x100x64xf32>, tensor<2x3x100xf32>)
  %ot = fuse.transpose %o, permutation = [0, 2, 1, 3] : (tensor<2x3x100x64xf32>) -> tensor<2x100x3x64xf32>
  %o3 = fuse.reshape %ot : (tensor<2x100x3x64xf32>) -> tensor<2x100x192xf32>
  %d4 = fuse.reshape %dout : (tensor<2x100x192xf32>) -> tensor<2x100x3x64xf32>
  %dt = fuse.transpose %d4, permutation = [0, 2, 1, 3] : (tensor<2x100x3x64xf32>) -> tensor<2x3x100x64xf32>
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %dt, %qt, %kt, %vt, %o, %lse causal scale = 1.250000e-01 : (tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100xf32>) -> (tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>, tensor<2x3x100x64xf32>)
  %dqt = fuse.transpose %dq, permutation = [0, 2, 1, 3] : (tensor<2x3x100x64xf32>) -> tensor<2x100x3x64xf32>
  %dq3 = fuse.reshape %dqt : (tensor<2x100x3x64xf32>) -> tensor<2x100x192xf32>
  %dkt = fuse.transpose %dk, permutation = [0, 2, 1, 3] : (tensor<2x3x100x64xf32>) -> tensor<2x100x3x64xf32>
  %dk3 = fuse.reshape %dkt : (tensor<2x100x3x64xf32>) -> tensor<2x100x192xf32>
  %dvt = fuse.transpose %dv, permutation = [0, 2, 1, 3] : (tensor<2x3x100x64xf32>) -> tensor<2x100x3x64xf32>
  %dv3 = fuse.reshape %dvt : (tensor<2x100x3x64xf32>) -> tensor<2x100x192xf32>
  %g = fuse.concat dim(2) %dq3, %dk3, %dv3 : (tensor<2x100x192xf32>, tensor<2x100x192xf32>, tensor<2x100x192xf32>) -> tensor<2x100x576xf32>
  return %o3, %g : tensor<2x100x192xf32>, tensor<2x100x576xf32>
}

// Separate projections of grouped-query heads at head dim 128 (Llama's
// layout: q [B, T, Hq D], k and v [B, T, Hkv D]), read and written
// [B, T, H, D] by strides; not causal.
func.func @flash_projections_gqa(%q: tensor<1x77x512xf32>, %k: tensor<1x77x256xf32>, %v: tensor<1x77x256xf32>, %dout: tensor<1x77x512xf32>) -> (tensor<1x77x512xf32>, tensor<1x77x512xf32>, tensor<1x77x256xf32>, tensor<1x77x256xf32>) {
  %q4 = fuse.reshape %q : (tensor<1x77x512xf32>) -> tensor<1x77x4x128xf32>
  %qt = fuse.transpose %q4, permutation = [0, 2, 1, 3] : (tensor<1x77x4x128xf32>) -> tensor<1x4x77x128xf32>
  %k4 = fuse.reshape %k : (tensor<1x77x256xf32>) -> tensor<1x77x2x128xf32>
  %kt = fuse.transpose %k4, permutation = [0, 2, 1, 3] : (tensor<1x77x2x128xf32>) -> tensor<1x2x77x128xf32>
  %v4 = fuse.reshape %v : (tensor<1x77x256xf32>) -> tensor<1x77x2x128xf32>
  %vt = fuse.transpose %v4, permutation = [0, 2, 1, 3] : (tensor<1x77x2x128xf32>) -> tensor<1x2x77x128xf32>
  %dout4 = fuse.reshape %dout : (tensor<1x77x512xf32>) -> tensor<1x77x4x128xf32>
  %doutt = fuse.transpose %dout4, permutation = [0, 2, 1, 3] : (tensor<1x77x4x128xf32>) -> tensor<1x4x77x128xf32>
  %o, %lse = fuse.scaled_dot_product_attention %qt, %kt, %vt scale = 0.0883883461 : (tensor<1x4x77x128xf32>, tensor<1x2x77x128xf32>, tensor<1x2x77x128xf32>) -> (tensor<1x4x77x128xf32>, tensor<1x4x77xf32>)
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %doutt, %qt, %kt, %vt, %o, %lse scale = 0.0883883461 : (tensor<1x4x77x128xf32>, tensor<1x4x77x128xf32>, tensor<1x2x77x128xf32>, tensor<1x2x77x128xf32>, tensor<1x4x77x128xf32>, tensor<1x4x77xf32>) -> (tensor<1x4x77x128xf32>, tensor<1x2x77x128xf32>, tensor<1x2x77x128xf32>)
  %ot = fuse.transpose %o, permutation = [0, 2, 1, 3] : (tensor<1x4x77x128xf32>) -> tensor<1x77x4x128xf32>
  %o3 = fuse.reshape %ot : (tensor<1x77x4x128xf32>) -> tensor<1x77x512xf32>
  %dqt = fuse.transpose %dq, permutation = [0, 2, 1, 3] : (tensor<1x4x77x128xf32>) -> tensor<1x77x4x128xf32>
  %dq3 = fuse.reshape %dqt : (tensor<1x77x4x128xf32>) -> tensor<1x77x512xf32>
  %dkt = fuse.transpose %dk, permutation = [0, 2, 1, 3] : (tensor<1x2x77x128xf32>) -> tensor<1x77x2x128xf32>
  %dk3 = fuse.reshape %dkt : (tensor<1x77x2x128xf32>) -> tensor<1x77x256xf32>
  %dvt = fuse.transpose %dv, permutation = [0, 2, 1, 3] : (tensor<1x2x77x128xf32>) -> tensor<1x77x2x128xf32>
  %dv3 = fuse.reshape %dvt : (tensor<1x77x2x128xf32>) -> tensor<1x77x256xf32>
  return %o3, %dq3, %dk3, %dv3 : tensor<1x77x512xf32>, tensor<1x77x512xf32>, tensor<1x77x256xf32>, tensor<1x77x256xf32>
}

// A GEMM's result returned through a reshape (a view) and also read by a
// later op: the fusion writes the view's output memory directly.
func.func @returned_view(%x: tensor<4x32xf32>, %w: tensor<64x32xf32>) -> (tensor<2x2x64xf32>, tensor<2x2x64xf32>) {
  %h = fuse.matmul %x, %w transpose_rhs : (tensor<4x32xf32>, tensor<64x32xf32>) -> tensor<4x64xf32>
  %r = fuse.reshape %h : (tensor<4x64xf32>) -> tensor<2x2x64xf32>
  %g = fuse.gelu %r, approximate = tanh : tensor<2x2x64xf32>
  return %r, %g : tensor<2x2x64xf32>, tensor<2x2x64xf32>
}

// Reductions over a middle dimension (grouped-query attention's backward).
func.func @middle_reduction(%x: tensor<2x2x2x32x16xf32>) -> (tensor<2x2x32x16xf32>, tensor<2x2x1x32x16xf32>) {
  %s = fuse.reduce sum %x, dims = [2] : (tensor<2x2x2x32x16xf32>) -> tensor<2x2x32x16xf32>
  %m = fuse.reduce max %x, dims = [2] keepdim : (tensor<2x2x2x32x16xf32>) -> tensor<2x2x1x32x16xf32>
  return %s, %m : tensor<2x2x32x16xf32>, tensor<2x2x1x32x16xf32>
}
