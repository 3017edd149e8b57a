// RUN: fuse-opt %s -split-input-file -verify-diagnostics

// Tensors with a zero dimension are valid, and so is nearly every op on
// them (test/Transforms/empty-tensors.mlir). These ops have no answer over
// an empty dimension and are rejected, naming the type. (argmax over one
// crashed the interpreter; a gather from one crashed fuse-run's random
// inputs, whose index bound was 0.)

func.func @argmax_over_nothing(%x: tensor<4x0xf32>) -> tensor<4xi64> {
  // expected-error @+2 {{'fuse.argmax' op dim 1 of 'tensor<4x0xf32>' is empty: an argmax over no elements has no answer}}
  // expected-error @+1 {{'fuse.argmax' op failed to infer returned types}}
  %y = fuse.argmax %x, dim = 1 : (tensor<4x0xf32>) -> tensor<4xi64>
  return %y : tensor<4xi64>
}

// -----

func.func @gather_from_nothing(%t: tensor<0x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error @+2 {{'fuse.gather' op dim 0 of 'tensor<0x4xf32>' is empty: every one of the 3 indices would be out of range}}
  // expected-error @+1 {{'fuse.gather' op failed to infer returned types}}
  %y = fuse.gather %t[%i], dim = 0 : (tensor<0x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

func.func @scatter_into_nothing(%d: tensor<4x0xf32>, %i: tensor<2xi64>, %u: tensor<4x2xf32>) -> tensor<4x0xf32> {
  // expected-error @+1 {{'fuse.scatter_add' op dim 1 of 'tensor<4x0xf32>' is empty: every one of the 2 indices would be out of range}}
  %y = fuse.scatter_add %d[%i], %u, dim = 1 : (tensor<4x0xf32>, tensor<2xi64>, tensor<4x2xf32>) -> tensor<4x0xf32>
  return %y : tensor<4x0xf32>
}

// -----

func.func @cross_entropy_without_classes(%logits: tensor<8x0xf32>, %labels: tensor<8xi64>) -> tensor<f32> {
  // expected-error @+2 {{'fuse.cross_entropy' op logits 'tensor<8x0xf32>' have no classes: every label would be out of range}}
  // expected-error @+1 {{'fuse.cross_entropy' op failed to infer returned types}}
  %loss = fuse.cross_entropy %logits, %labels : (tensor<8x0xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

func.func @attention_without_keys(%q: tensor<1x2x8x16xf32>, %kv: tensor<1x2x0x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op key and value have no positions ('tensor<1x2x0x16xf32>'): attention over no keys is 0 / 0}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %kv, %kv scale = 0.25 : (tensor<1x2x8x16xf32>, tensor<1x2x0x16xf32>, tensor<1x2x0x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8xf32>)
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @layer_norm_over_nothing(%x: tensor<4x0xf32>) -> tensor<4x0xf32> {
  // expected-error @+2 {{'fuse.layer_norm' op normalises 'tensor<4x0xf32>' from axis 1 over no elements: its mean and rstd would be 0 / 0}}
  // expected-error @+1 {{'fuse.layer_norm' op failed to infer returned types}}
  %y, %m, %r = fuse.layer_norm %x axis = 1 epsilon = 1.0e-5 : (tensor<4x0xf32>) -> (tensor<4x0xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %y : tensor<4x0xf32>
}

// -----

// Empty the other way round, each is fine: no rows to answer for.
func.func @nothing_to_answer(%x: tensor<0x8xf32>, %t: tensor<0x4xf32>, %i: tensor<0xi64>, %logits: tensor<0x0xf32>, %labels: tensor<0xi64>, %q: tensor<1x2x0x16xf32>) -> (tensor<0xi64>, tensor<0x4xf32>, tensor<0x8xf32>, tensor<0xf32>, tensor<1x2x0x16xf32>) {
  %a = fuse.argmax %x, dim = 1 : (tensor<0x8xf32>) -> tensor<0xi64>
  %g = fuse.gather %t[%i], dim = 0 : (tensor<0x4xf32>, tensor<0xi64>) -> tensor<0x4xf32>
  %y, %m, %r = fuse.layer_norm %x axis = 1 epsilon = 1.0e-5 : (tensor<0x8xf32>) -> (tensor<0x8xf32>, tensor<0x1xf32>, tensor<0x1xf32>)
  %l = fuse.cross_entropy %logits, %labels reduction = none : (tensor<0x0xf32>, tensor<0xi64>) -> tensor<0xf32>
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q scale = 0.25 : (tensor<1x2x0x16xf32>, tensor<1x2x0x16xf32>, tensor<1x2x0x16xf32>) -> (tensor<1x2x0x16xf32>, tensor<1x2x0xf32>)
  return %a, %g, %y, %l, %o : tensor<0xi64>, tensor<0x4xf32>, tensor<0x8xf32>, tensor<0xf32>, tensor<1x2x0x16xf32>
}
