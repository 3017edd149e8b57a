// Outputs named by fuse.name (probs, probs.bf16) and one unnamed (out2), in
// f32, bf16 and i64, for --expected. @heads is the reference; the others take
// the same argument and get the same random inputs for a seed:
//   @perturbed    probs 0.1% off (f32 fails, bf16 passes within 2e-2),
//   @argmin       the i64 output differs (integers must match exactly),
//   @probs_only   fewer outputs than the reference file has,
//   @wrong_shape, @wrong_dtype   a result's type differs from its array,
//   @collide      result #0 is named out1, which is unnamed result #1's name,
//   @collide_args argument #0 is named arg1, likewise.
func.func @heads(%x: tensor<2x3xf32> {fuse.name = "logits"})
    -> (tensor<2x3xf32> {fuse.name = "probs"}, tensor<2x3xbf16> {fuse.name = "probs.bf16"}, tensor<2xi64>) {
  %p = fuse.softmax %x, dim = 1 : tensor<2x3xf32>
  %b = fuse.cast %p : tensor<2x3xf32> to tensor<2x3xbf16>
  %a = fuse.argmax %x, dim = 1 : (tensor<2x3xf32>) -> tensor<2xi64>
  return %p, %b, %a : tensor<2x3xf32>, tensor<2x3xbf16>, tensor<2xi64>
}

func.func @perturbed(%x: tensor<2x3xf32> {fuse.name = "logits"})
    -> (tensor<2x3xf32> {fuse.name = "probs"}, tensor<2x3xbf16> {fuse.name = "probs.bf16"}, tensor<2xi64>) {
  %s = fuse.softmax %x, dim = 1 : tensor<2x3xf32>
  %k = fuse.constant dense<1.001> : tensor<2x3xf32>
  %p = fuse.mul %s, %k : tensor<2x3xf32>
  %b = fuse.cast %p : tensor<2x3xf32> to tensor<2x3xbf16>
  %a = fuse.argmax %x, dim = 1 : (tensor<2x3xf32>) -> tensor<2xi64>
  return %p, %b, %a : tensor<2x3xf32>, tensor<2x3xbf16>, tensor<2xi64>
}

func.func @argmin(%x: tensor<2x3xf32> {fuse.name = "logits"})
    -> (tensor<2x3xf32> {fuse.name = "probs"}, tensor<2x3xbf16> {fuse.name = "probs.bf16"}, tensor<2xi64>) {
  %p = fuse.softmax %x, dim = 1 : tensor<2x3xf32>
  %b = fuse.cast %p : tensor<2x3xf32> to tensor<2x3xbf16>
  %n = fuse.neg %x : tensor<2x3xf32>
  %a = fuse.argmax %n, dim = 1 : (tensor<2x3xf32>) -> tensor<2xi64>
  return %p, %b, %a : tensor<2x3xf32>, tensor<2x3xbf16>, tensor<2xi64>
}

func.func @probs_only(%x: tensor<2x3xf32> {fuse.name = "logits"})
    -> (tensor<2x3xf32> {fuse.name = "probs"}) {
  %p = fuse.softmax %x, dim = 1 : tensor<2x3xf32>
  return %p : tensor<2x3xf32>
}

func.func @wrong_shape(%x: tensor<3x2xf32> {fuse.name = "logits"})
    -> (tensor<3x2xf32> {fuse.name = "probs"}, tensor<2x3xbf16> {fuse.name = "probs.bf16"}, tensor<2xi64>) {
  %b = fuse.constant dense<0.5> : tensor<2x3xbf16>
  %a = fuse.constant dense<0> : tensor<2xi64>
  return %x, %b, %a : tensor<3x2xf32>, tensor<2x3xbf16>, tensor<2xi64>
}

func.func @wrong_dtype(%x: tensor<2x3xf32> {fuse.name = "logits"})
    -> (tensor<2x3xf32> {fuse.name = "probs"}, tensor<2x3xbf16> {fuse.name = "probs.bf16"}, tensor<2xi32>) {
  %b = fuse.constant dense<0.5> : tensor<2x3xbf16>
  %a = fuse.constant dense<0> : tensor<2xi32>
  return %x, %b, %a : tensor<2x3xf32>, tensor<2x3xbf16>, tensor<2xi32>
}

func.func @collide(%x: tensor<2x3xf32>) -> (tensor<2x3xf32> {fuse.name = "out1"}, tensor<2x3xf32>) {
  return %x, %x : tensor<2x3xf32>, tensor<2x3xf32>
}

func.func @collide_args(%x: tensor<2x3xf32> {fuse.name = "arg1"}, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}
