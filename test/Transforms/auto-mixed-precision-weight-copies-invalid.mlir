// RUN: fuse-opt %s -verify-diagnostics --fuse-auto-mixed-precision=weight-copies=true -o /dev/null

// A copy's name already taken is an error (the pass run twice, say).
// expected-error@below {{cannot keep a 'bf16' copy of 'w': the function already has an argument or result named 'amp_weight.w' (was fuse-auto-mixed-precision run twice?)}}
func.func @taken(%x: tensor<8x32xf32>, %w: tensor<16x32xf32> {fuse.donated, fuse.name = "w"},
                 %c: tensor<16x32xbf16> {fuse.name = "amp_weight.w"})
    -> (tensor<8x16xf32>, tensor<16x32xf32> {fuse.name = "w"}) {
  %mm = fuse.matmul %x, %w transpose_rhs : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  %two = fuse.constant dense<2.0> : tensor<16x32xf32>
  %new = fuse.mul %w, %two : tensor<16x32xf32>
  return %mm, %new : tensor<8x16xf32>, tensor<16x32xf32>
}
