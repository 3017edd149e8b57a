// GEMMs whose stored rows are not 16-byte aligned (a vocabulary of 1001 in
// place of GPT-2's 50257), large enough that they run on staged, padded
// copies (lib/Codegen/GemmAlignment.cpp). test/Codegen/unaligned-gemms.test
// checks the plans; test/gpu/run-gpu-checks.sh runs every entry against the
// reference interpreter.

// A language model's head: N (the vocabulary) unaligned in the result and
// in the weight's rows, with a bias and a residual folded into cuBLASLt's
// epilogue.
func.func @head_forward(%x: tensor<2x512x768xf32>, %w: tensor<1001x768xf32>, %b: tensor<1001xf32>, %r: tensor<2x512x1001xf32>) -> tensor<2x512x1001xf32> {
  %0 = fuse.matmul %x, %w transpose_rhs : (tensor<2x512x768xf32>, tensor<1001x768xf32>) -> tensor<2x512x1001xf32>
  %1 = fuse.broadcast_in_dim %b, dims = [2] : (tensor<1001xf32>) -> tensor<2x512x1001xf32>
  %2 = fuse.add %0, %1 : tensor<2x512x1001xf32>
  %3 = fuse.add %2, %r : tensor<2x512x1001xf32>
  return %3 : tensor<2x512x1001xf32>
}

// Its gradients: the input's contracts over the vocabulary (K unaligned),
// the weight's is a transposed GEMM whose M is the vocabulary.
func.func @head_backward(%dy: tensor<1024x1001xf32>, %x: tensor<1024x768xf32>, %w: tensor<1001x768xf32>) -> (tensor<1024x768xf32>, tensor<1001x768xf32>) {
  %dx = fuse.matmul %dy, %w : (tensor<1024x1001xf32>, tensor<1001x768xf32>) -> tensor<1024x768xf32>
  %dw = fuse.matmul %dy, %x transpose_lhs : (tensor<1024x1001xf32>, tensor<1024x768xf32>) -> tensor<1001x768xf32>
  return %dx, %dw : tensor<1024x768xf32>, tensor<1001x768xf32>
}

// A batched GEMM contracting over an unaligned K.
func.func @batched_k(%a: tensor<2x512x1001xf32>, %b: tensor<2x1001x256xf32>) -> tensor<2x512x256xf32> {
  %0 = fuse.matmul %a, %b : (tensor<2x512x1001xf32>, tensor<2x1001x256xf32>) -> tensor<2x512x256xf32>
  return %0 : tensor<2x512x256xf32>
}

// Two results (the pre-activation is kept): the GEMM leaves its padded
// result in the workspace and the epilogue kernel reads it with the padded
// row length. A full-size addend (a residual), not a bias: a bias would go
// into cuBLASLt's own epilogue, the sum rounded to bf16 as autocast does.
func.func @head_two_results(%x: tensor<1024x768xf32>, %w: tensor<1001x768xf32>, %r: tensor<1024x1001xf32>) -> (tensor<1024x1001xf32>, tensor<1024x1001xf32>) {
  %0 = fuse.matmul %x, %w transpose_rhs : (tensor<1024x768xf32>, tensor<1001x768xf32>) -> tensor<1024x1001xf32>
  %2 = fuse.add %0, %r : tensor<1024x1001xf32>
  %3 = fuse.gelu %2, approximate = tanh : tensor<1024x1001xf32>
  return %2, %3 : tensor<1024x1001xf32>, tensor<1024x1001xf32>
}

// Two gradients of one dY, then a GEMM of another unaligned value that
// needs the second (so runs after it): its copy reuses the workspace that
// dY's copy held until then.
func.func @kept_then_released(%dy: tensor<1024x1001xf32>, %x: tensor<1024x768xf32>, %w: tensor<1001x768xf32>, %dy2: tensor<1024x1001xf32>) -> (tensor<1024x768xf32>, tensor<1024x768xf32>) {
  %dx = fuse.matmul %dy, %w : (tensor<1024x1001xf32>, tensor<1001x768xf32>) -> tensor<1024x768xf32>
  %dw = fuse.matmul %dy, %x transpose_lhs : (tensor<1024x1001xf32>, tensor<1024x768xf32>) -> tensor<1001x768xf32>
  %y = fuse.matmul %dy2, %dw : (tensor<1024x1001xf32>, tensor<1001x768xf32>) -> tensor<1024x768xf32>
  return %dx, %y : tensor<1024x768xf32>, tensor<1024x768xf32>
}

// A GEMM of another unaligned value between dY's two (forced there by the
// data): its copy goes above dY's kept one in the workspace.
func.func @kept_across_a_step(%dy: tensor<1024x1001xf32>, %x: tensor<1024x768xf32>, %w: tensor<1001x768xf32>, %dy2: tensor<1024x1001xf32>) -> (tensor<1024x768xf32>, tensor<1001x768xf32>) {
  %dx = fuse.matmul %dy, %w : (tensor<1024x1001xf32>, tensor<1001x768xf32>) -> tensor<1024x768xf32>
  %top = fuse.slice %dx, start = [0, 0], limit = [1001, 768], stride = [1, 1] : (tensor<1024x768xf32>) -> tensor<1001x768xf32>
  %w2 = fuse.add %w, %top : tensor<1001x768xf32>
  %dx2 = fuse.matmul %dy2, %w2 : (tensor<1024x1001xf32>, tensor<1001x768xf32>) -> tensor<1024x768xf32>
  %x2 = fuse.add %x, %dx2 : tensor<1024x768xf32>
  %dw = fuse.matmul %dy, %x2 transpose_lhs : (tensor<1024x1001xf32>, tensor<1024x768xf32>) -> tensor<1001x768xf32>
  return %dx, %dw : tensor<1024x768xf32>, tensor<1001x768xf32>
}

// Small: the copies would cost more than the unaligned GEMM loses.
func.func @small_odd(%x: tensor<37x29xf32>, %w: tensor<53x29xf32>) -> tensor<37x53xf32> {
  %0 = fuse.matmul %x, %w transpose_rhs : (tensor<37x29xf32>, tensor<53x29xf32>) -> tensor<37x53xf32>
  return %0 : tensor<37x53xf32>
}

// A padded result larger than the graph's staging bound (1 MiB here; 256
// MiB by default) is made a block of rows at a time: the head with a
// residual (C's blocks), and X^T dY (a transposed A's blocks are columns).
func.func @head_in_blocks(%x: tensor<1000x768xf32>, %w: tensor<1001x768xf32>, %r: tensor<1000x1001xf32>) -> tensor<1000x1001xf32> attributes {fuse.gemm_staging_bytes = 1048576 : i64} {
  %0 = fuse.matmul %x, %w transpose_rhs : (tensor<1000x768xf32>, tensor<1001x768xf32>) -> tensor<1000x1001xf32>
  %1 = fuse.add %0, %r : tensor<1000x1001xf32>
  return %1 : tensor<1000x1001xf32>
}

func.func @transposed_in_blocks(%x: tensor<1024x768xf32>, %dy: tensor<1024x1001xf32>) -> tensor<768x1001xf32> attributes {fuse.gemm_staging_bytes = 1048576 : i64} {
  %0 = fuse.matmul %x, %dy transpose_lhs : (tensor<1024x768xf32>, tensor<1024x1001xf32>) -> tensor<768x1001xf32>
  return %0 : tensor<768x1001xf32>
}

// Rows too wide for 128 of them under the bound (2056 f32 a row, 1 MiB):
// blocks in units of 8 rows, as many as fit (120), the last shorter.
func.func @wide_rows_in_blocks(%x: tensor<300x512xf32>, %w: tensor<2049x512xf32>) -> tensor<300x2049xf32> attributes {fuse.gemm_staging_bytes = 1048576 : i64} {
  %0 = fuse.matmul %x, %w transpose_rhs : (tensor<300x512xf32>, tensor<2049x512xf32>) -> tensor<300x2049xf32>
  return %0 : tensor<300x2049xf32>
}
