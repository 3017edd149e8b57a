// fuse.cumsum on the GPU: the warp scan along the last dimension (rows
// shorter than a warp, several chunks with a tail, every dtype) and the
// column scan along other dimensions. Checked in test/Codegen/cumsum.test
// and on the GPU by test/gpu/run-gpu-checks.sh.

// RoBERTa's position ids: cumsum(mask) * mask + padding_idx, mask = ids != 1.
func.func @roberta_positions(%ids: tensor<4x12xi64> {fuse.index_bound = 3 : i64}) -> tensor<4x12xi64> {
  %pad = fuse.constant dense<1> : tensor<4x12xi64>
  %ne = fuse.compare ne, %ids, %pad : tensor<4x12xi64>
  %m = fuse.cast %ne : tensor<4x12xi1> to tensor<4x12xi32>
  %c = fuse.cumsum %m, dim = 1 : tensor<4x12xi32>
  %p = fuse.mul %c, %m : tensor<4x12xi32>
  %p64 = fuse.cast %p : tensor<4x12xi32> to tensor<4x12xi64>
  %r = fuse.add %p64, %pad : tensor<4x12xi64>
  return %r : tensor<4x12xi64>
}

// Rows of 7, 100 (three chunks and a tail) and 1000 elements, 9 rows (more
// than a block's 8 warps).
func.func @rows(%a: tensor<9x7xf32>, %b: tensor<3x100xf32>, %c: tensor<2x1000xf32>)
    -> (tensor<9x7xf32>, tensor<3x100xf32>, tensor<2x1000xf32>) {
  %0 = fuse.cumsum %a, dim = 1 : tensor<9x7xf32>
  %1 = fuse.cumsum %b, dim = 1 : tensor<3x100xf32>
  %2 = fuse.cumsum %c, dim = 1 : tensor<2x1000xf32>
  return %0, %1, %2 : tensor<9x7xf32>, tensor<3x100xf32>, tensor<2x1000xf32>
}

// Every dtype the op takes, along the last dimension.
func.func @dtypes(%h: tensor<3x70xf16>, %g: tensor<3x70xbf16>, %i: tensor<5x40xi64>, %j: tensor<5x40xi32>)
    -> (tensor<3x70xf16>, tensor<3x70xbf16>, tensor<5x40xi64>, tensor<5x40xi32>) {
  %0 = fuse.cumsum %h, dim = 1 : tensor<3x70xf16>
  %1 = fuse.cumsum %g, dim = 1 : tensor<3x70xbf16>
  %2 = fuse.cumsum %i, dim = 1 : tensor<5x40xi64>
  %3 = fuse.cumsum %j, dim = 1 : tensor<5x40xi32>
  return %0, %1, %2, %3 : tensor<3x70xf16>, tensor<3x70xbf16>, tensor<5x40xi64>, tensor<5x40xi32>
}

// Along the first and a middle dimension: a thread per column.
func.func @columns(%x: tensor<6x5x40xf32>, %i: tensor<6x300xi64>)
    -> (tensor<6x5x40xf32>, tensor<6x5x40xf32>, tensor<6x300xi64>) {
  %0 = fuse.cumsum %x, dim = 0 : tensor<6x5x40xf32>
  %1 = fuse.cumsum %x, dim = 1 : tensor<6x5x40xf32>
  %2 = fuse.cumsum %i, dim = 0 : tensor<6x300xi64>
  return %0, %1, %2 : tensor<6x5x40xf32>, tensor<6x5x40xf32>, tensor<6x300xi64>
}

// A splat operand is inlined (arange + 1 as a cumsum of ones); the result
// feeds a loop kernel.
func.func @splat_operand(%x: tensor<4x50xf32>) -> tensor<4x50xf32> {
  %ones = fuse.constant dense<1.000000e+00> : tensor<4x50xf32>
  %0 = fuse.cumsum %ones, dim = 1 : tensor<4x50xf32>
  %1 = fuse.mul %0, %x : tensor<4x50xf32>
  return %1 : tensor<4x50xf32>
}

// The backward of a float cumsum as AOTAutograd writes it: flip, cumsum,
// flip, the flips being gathers of reversed iota indices.
func.func @reverse_cumsum(%g: tensor<4x33xf32>) -> tensor<4x33xf32> {
  %i = fuse.iota dim = 0 : tensor<33xi64>
  %last = fuse.constant dense<32> : tensor<33xi64>
  %r = fuse.sub %last, %i : tensor<33xi64>
  %f = fuse.gather %g[%r], dim = 1 : (tensor<4x33xf32>, tensor<33xi64>) -> tensor<4x33xf32>
  %c = fuse.cumsum %f, dim = 1 : tensor<4x33xf32>
  %b = fuse.gather %c[%r], dim = 1 : (tensor<4x33xf32>, tensor<33xi64>) -> tensor<4x33xf32>
  return %b : tensor<4x33xf32>
}
