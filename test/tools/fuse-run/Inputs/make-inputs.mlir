// Writes the arrays the bad-input tests feed back: out0 4xf32 with a NaN at
// [2], out1 2xi64 holding an index (99) out of range for the 10-row table
// out3, and out2 4xbf16.
func.func @make() -> (tensor<4xf32>, tensor<2xi64>, tensor<4xbf16>, tensor<10x3xf32>) {
  %a = fuse.constant dense<[1.0, 2.0, 0x7FC00000, 4.0]> : tensor<4xf32>
  %b = fuse.constant dense<[1, 99]> : tensor<2xi64>
  %c = fuse.constant dense<1.5> : tensor<4xbf16>
  %d = fuse.constant dense<0.5> : tensor<10x3xf32>
  return %a, %b, %c, %d : tensor<4xf32>, tensor<2xi64>, tensor<4xbf16>, tensor<10x3xf32>
}
