// Results that do not depend on the inputs (constants, values computed from
// constants and iota), as AOTAutograd's forward graphs of Gemma and T5
// return them: splat constants have no memory, so the code generator writes
// them into the caller's output. Checked in test/Codegen/constant-results.test
// and on the GPU by test/gpu/run-gpu-checks.sh.

// A non-zero splat of every element type.
func.func @splat_every_dtype(%x: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<5x8xf32>, tensor<4x8xf16>, tensor<4x8xbf16>,
        tensor<4x5xi64>, tensor<3x5xi32>, tensor<2x2xi1>) {
  %0 = fuse.exp %x : tensor<4x8xf32>
  %1 = fuse.constant dense<3.000000e+00> : tensor<5x8xf32>
  %2 = fuse.constant dense<-1.250000e+00> : tensor<4x8xf16>
  %3 = fuse.constant dense<5.000000e-01> : tensor<4x8xbf16>
  %4 = fuse.constant dense<7> : tensor<4x5xi64>
  %5 = fuse.constant dense<-2> : tensor<3x5xi32>
  %6 = fuse.constant dense<true> : tensor<2x2xi1>
  return %0, %1, %2, %3, %4, %5, %6
      : tensor<4x8xf32>, tensor<5x8xf32>, tensor<4x8xf16>, tensor<4x8xbf16>,
        tensor<4x5xi64>, tensor<3x5xi32>, tensor<2x2xi1>
}

// One constant returned twice, through a reshape, and beside a value
// computed from it; zero splats (-0.0 is not all-zero bits).
func.func @splat_shared(%x: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<32xf32>, tensor<4x8xf32>,
        tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = fuse.constant dense<3.000000e+00> : tensor<4x8xf32>
  %r = fuse.reshape %c : (tensor<4x8xf32>) -> tensor<32xf32>
  %y = fuse.mul %x, %c : tensor<4x8xf32>
  %z = fuse.constant dense<0.000000e+00> : tensor<4x8xf32>
  %n = fuse.constant dense<-0.000000e+00> : tensor<4x8xf32>
  return %c, %c, %r, %y, %z, %n
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<32xf32>, tensor<4x8xf32>,
        tensor<4x8xf32>, tensor<4x8xf32>
}

// Values computed from constants and iota only (a position table), and a
// dense constant.
func.func @input_independent(%x: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xbf16>, tensor<16x6xi64>, tensor<3xi32>) {
  %0 = fuse.neg %x : tensor<4x8xf32>
  %i = fuse.iota dim = 1 : tensor<4x8xf32>
  %s = fuse.constant dense<2.500000e-01> : tensor<4x8xf32>
  %m = fuse.mul %i, %s : tensor<4x8xf32>
  %b = fuse.cast %m : tensor<4x8xf32> to tensor<4x8xbf16>
  %p = fuse.iota dim = 0 : tensor<16x6xi64>
  %two = fuse.constant dense<2> : tensor<16x6xi64>
  %q = fuse.add %p, %two : tensor<16x6xi64>
  %d = fuse.constant dense<[4, -1, 9]> : tensor<3xi32>
  return %0, %b, %q, %d : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<16x6xi64>, tensor<3xi32>
}

// Empty results: nothing to write.
func.func @zero_size(%x: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<0x4xf32>, tensor<0xi64>) {
  %0 = fuse.exp %x : tensor<4x8xf32>
  %1 = fuse.constant dense<1.000000e+00> : tensor<0x4xf32>
  %2 = fuse.constant dense<0> : tensor<0xi64>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<0x4xf32>, tensor<0xi64>
}

// scatter_add starting from a non-zero splat: the fill, then the atomics.
func.func @scatter_onto_splat(%ids: tensor<6xi64> {fuse.index_bound = 10 : i64},
                              %u: tensor<6x4xf32>) -> tensor<10x4xf32> {
  %ones = fuse.constant dense<1.000000e+00> : tensor<10x4xf32>
  %0 = fuse.scatter_add %ones[%ids], %u, dim = 0
      : (tensor<10x4xf32>, tensor<6xi64>, tensor<6x4xf32>) -> tensor<10x4xf32>
  return %0 : tensor<10x4xf32>
}
