// RUN: fuse-opt %s -split-input-file -verify-diagnostics

// Every verifier rule of the fuse dialect, one split per rule. Type inference
// failures are reported twice: the rule itself, then MLIR's generic
// "failed to infer returned types".

//===----------------------------------------------------------------------===//
// Element types and shapes (ODS constraints)
//===----------------------------------------------------------------------===//

func.func @add_f64(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  // expected-error @+1 {{'fuse.add' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer values, but got 'tensor<4x8xf64>'}}
  %y = fuse.add %x, %x : tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

// -----

func.func @add_i1(%x: tensor<4x8xi1>) -> tensor<4x8xi1> {
  // expected-error @+1 {{'fuse.add' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer values, but got 'tensor<4x8xi1>'}}
  %y = fuse.add %x, %x : tensor<4x8xi1>
  return %y : tensor<4x8xi1>
}

// -----

func.func @exp_i32(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{'fuse.exp' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xi32>'}}
  %y = fuse.exp %x : tensor<4x8xi32>
  return %y : tensor<4x8xi32>
}

// -----

func.func @pow_i64(%x: tensor<4x8xi64>) -> tensor<4x8xi64> {
  // expected-error @+1 {{'fuse.pow' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xi64>'}}
  %y = fuse.pow %x, %x : tensor<4x8xi64>
  return %y : tensor<4x8xi64>
}

// -----

func.func @and_f32(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fuse.and' op operand #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4x8xf32>'}}
  %y = fuse.and %x, %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @not_i32(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{'fuse.not' op operand #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4x8xi32>'}}
  %y = fuse.not %x : tensor<4x8xi32>
  return %y : tensor<4x8xi32>
}

// -----

func.func @gelu_i64(%x: tensor<4x8xi64>) -> tensor<4x8xi64> {
  // expected-error @+1 {{'fuse.gelu' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xi64>'}}
  %y = fuse.gelu %x, approximate = erf : tensor<4x8xi64>
  return %y : tensor<4x8xi64>
}

// -----

func.func @gelu_bad_approximation(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{expected ::mlir::fuse::GeluApproximation to be one of: erf, tanh}}
  // expected-error @+1 {{failed to parse Fuse_GeluApproximationAttr parameter 'value'}}
  %y = fuse.gelu %x, approximate = sigmoid : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dynamic_shape(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'fuse.neg' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer values, but got 'tensor<?x4xf32>'}}
  %y = fuse.neg %x : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// The custom form only parses ranked tensor types.
func.func @unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{custom op 'fuse.relu' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %y = fuse.relu %x : tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

func.func @unranked_generic(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'fuse.relu' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer values, but got 'tensor<*xf32>'}}
  %y = "fuse.relu"(%x) : (tensor<*xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

func.func @not_a_tensor(%x: f32) -> f32 {
  // expected-error @+1 {{custom op 'fuse.sqrt' invalid kind of type specified: expected builtin.tensor, but found 'f32'}}
  %y = fuse.sqrt %x : f32
  return %y : f32
}

// -----

func.func @not_a_tensor_generic(%x: f32) -> f32 {
  // expected-error @+1 {{'fuse.sqrt' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'f32'}}
  %y = "fuse.sqrt"(%x) : (f32) -> f32
  return %y : f32
}

// -----

func.func @elementwise_operand_types_differ(%x: tensor<4x8xf32>, %y: tensor<4x8xf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fuse.mul' op requires the same type for all operands and results}}
  %z = "fuse.mul"(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf16>) -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

func.func @elementwise_operand_shapes_differ(%x: tensor<4x8xf32>, %y: tensor<1x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fuse.sub' op all non-scalar operands/results must have the same shape and base type}}
  %z = "fuse.sub"(%x, %y) : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

func.func @elementwise_result_type_differs(%x: tensor<4x8xbf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fuse.tanh' op requires the same type for all operands and results}}
  %y = "fuse.tanh"(%x) : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// fuse.compare, fuse.select, fuse.cast, fuse.constant
//===----------------------------------------------------------------------===//

func.func @compare_operand_types_differ(%x: tensor<4x8xf32>, %y: tensor<4x8xbf16>) -> tensor<4x8xi1> {
  // expected-error @+1 {{'fuse.compare' op failed to verify that all of {lhs, rhs} have same type}}
  %z = "fuse.compare"(%x, %y) <{direction = #fuse<compare_direction eq>}> : (tensor<4x8xf32>, tensor<4x8xbf16>) -> tensor<4x8xi1>
  return %z : tensor<4x8xi1>
}

// -----

func.func @compare_result_not_i1(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fuse.compare' op result #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4x8xf32>'}}
  %z = "fuse.compare"(%x, %x) <{direction = #fuse<compare_direction lt>}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

func.func @compare_result_shape(%x: tensor<4x8xf32>) -> tensor<8x4xi1> {
  // expected-error @+1 {{'fuse.compare' op all non-scalar operands/results must have the same shape and base type}}
  %z = "fuse.compare"(%x, %x) <{direction = #fuse<compare_direction ge>}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x4xi1>
  return %z : tensor<8x4xi1>
}

// -----

func.func @compare_bad_direction(%x: tensor<4x8xf32>) -> tensor<4x8xi1> {
  // expected-error @+2 {{expected ::mlir::fuse::CompareDirection to be one of: eq, ne, lt, le, gt, ge}}
  // expected-error @+1 {{failed to parse Fuse_CompareDirectionAttr parameter 'value'}}
  %z = fuse.compare neq, %x, %x : tensor<4x8xf32>
  return %z : tensor<4x8xi1>
}

// -----

func.func @select_condition_not_i1(%c: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fuse.select' op operand #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4x8xf32>'}}
  %y = fuse.select %c, %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @select_condition_shape(%c: tensor<4x1xi1>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fuse.select' op failed to verify that all of {condition, on_true} have same shape}}
  %y = fuse.select %c, %x, %x : tensor<4x1xi1>, tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @select_choices_differ(%c: tensor<4x8xi1>, %x: tensor<4x8xf32>, %y: tensor<4x8xbf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fuse.select' op failed to verify that all of {on_true, on_false, result} have same type}}
  %z = "fuse.select"(%c, %x, %y) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xbf16>) -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

func.func @cast_shape(%x: tensor<4x8xf32>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{'fuse.cast' op failed to verify that all of {operand, result} have same shape}}
  %y = fuse.cast %x : tensor<4x8xf32> to tensor<8x4xbf16>
  return %y : tensor<8x4xbf16>
}

// -----

func.func @cast_to_f64(%x: tensor<4x8xf32>) -> tensor<4x8xf64> {
  // expected-error @+1 {{'fuse.cast' op result #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer or 1-bit signless integer values, but got 'tensor<4x8xf64>'}}
  %y = fuse.cast %x : tensor<4x8xf32> to tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

// -----

func.func @constant_f64() -> tensor<4xf64> {
  // expected-error @+1 {{'fuse.constant' op result #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer or 1-bit signless integer values, but got 'tensor<4xf64>'}}
  %c = fuse.constant dense<1.0> : tensor<4xf64>
  return %c : tensor<4xf64>
}

// -----

func.func @constant_type_differs() -> tensor<8xf32> {
  // expected-error @+1 {{'fuse.constant' op failed to verify that all of {value, result} have same type}}
  %c = "fuse.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<8xf32>
  return %c : tensor<8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// fuse.iota, fuse.random
//===----------------------------------------------------------------------===//

func.func @iota_dim_out_of_range() -> tensor<2x16xi64> {
  // expected-error @+1 {{'fuse.iota' op dim 2 is out of range for result rank 2}}
  %p = fuse.iota dim = 2 : tensor<2x16xi64>
  return %p : tensor<2x16xi64>
}

// -----

func.func @iota_scalar() -> tensor<i64> {
  // expected-error @+1 {{'fuse.iota' op dim 0 is out of range for result rank 0}}
  %p = fuse.iota dim = 0 : tensor<i64>
  return %p : tensor<i64>
}

// -----

func.func @iota_negative_dim() -> tensor<16xi64> {
  // expected-error @+1 {{'fuse.iota' op attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %p = fuse.iota dim = -1 : tensor<16xi64>
  return %p : tensor<16xi64>
}

// -----

func.func @iota_i1() -> tensor<16xi1> {
  // expected-error @+1 {{'fuse.iota' op result #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer values, but got 'tensor<16xi1>'}}
  %p = fuse.iota dim = 0 : tensor<16xi1>
  return %p : tensor<16xi1>
}

// -----

func.func @bernoulli_without_p(%seed: tensor<i64>, %offset: tensor<i64>) -> tensor<16xi1> {
  // expected-error @+1 {{'fuse.random' op bernoulli needs a probability 'p'}}
  %r = fuse.random bernoulli, %seed, %offset : tensor<16xi1>
  return %r : tensor<16xi1>
}

// -----

func.func @bernoulli_p_above_one(%seed: tensor<i64>, %offset: tensor<i64>) -> tensor<16xi1> {
  // expected-error @+1 {{'fuse.random' op probability p = 1.500000e+00 is outside [0, 1]}}
  %r = fuse.random bernoulli, %seed, %offset, p = 1.5 : tensor<16xi1>
  return %r : tensor<16xi1>
}

// -----

func.func @bernoulli_p_negative(%seed: tensor<i64>, %offset: tensor<i64>) -> tensor<16xf32> {
  // expected-error @+1 {{'fuse.random' op probability p = -2.500000e-01 is outside [0, 1]}}
  %r = fuse.random bernoulli, %seed, %offset, p = -0.25 : tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

func.func @bernoulli_p_nan(%seed: tensor<i64>, %offset: tensor<i64>) -> tensor<16xf32> {
  // expected-error @+1 {{'fuse.random' op probability p = nan is outside [0, 1]}}
  %r = fuse.random bernoulli, %seed, %offset, p = 0x7FF8000000000000 : tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

func.func @bernoulli_i32(%seed: tensor<i64>, %offset: tensor<i64>) -> tensor<16xi32> {
  // expected-error @+1 {{'fuse.random' op bernoulli produces a float or i1 tensor, not 'i32'}}
  %r = fuse.random bernoulli, %seed, %offset, p = 0.5 : tensor<16xi32>
  return %r : tensor<16xi32>
}

// -----

func.func @normal_with_p(%seed: tensor<i64>, %offset: tensor<i64>) -> tensor<16xf32> {
  // expected-error @+1 {{'fuse.random' op 'p' is only meaningful for bernoulli, not normal}}
  %r = fuse.random normal, %seed, %offset, p = 0.5 : tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

func.func @uniform_with_p(%seed: tensor<i64>, %offset: tensor<i64>) -> tensor<16xf32> {
  // expected-error @+1 {{'fuse.random' op 'p' is only meaningful for bernoulli, not uniform}}
  %r = fuse.random uniform, %seed, %offset, p = 0.5 : tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

func.func @normal_i32(%seed: tensor<i64>, %offset: tensor<i64>) -> tensor<16xi32> {
  // expected-error @+1 {{'fuse.random' op normal produces a float tensor, not 'i32'}}
  %r = fuse.random normal, %seed, %offset : tensor<16xi32>
  return %r : tensor<16xi32>
}

// -----

func.func @uniform_i1(%seed: tensor<i64>, %offset: tensor<i64>) -> tensor<16xi1> {
  // expected-error @+1 {{'fuse.random' op uniform produces a float tensor, not 'i1'}}
  %r = fuse.random uniform, %seed, %offset : tensor<16xi1>
  return %r : tensor<16xi1>
}

// -----

func.func @random_seed_not_scalar(%seed: tensor<1xi64>, %offset: tensor<i64>) -> tensor<16xf32> {
  // expected-error @+1 {{'fuse.random' op operand #0 must be 0D tensor of 64-bit signless integer values, but got 'tensor<1xi64>'}}
  %r = "fuse.random"(%seed, %offset) <{distribution = #fuse<random_distribution uniform>}> : (tensor<1xi64>, tensor<i64>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

func.func @random_offset_i32(%seed: tensor<i64>, %offset: tensor<i32>) -> tensor<16xf32> {
  // expected-error @+1 {{'fuse.random' op operand #1 must be 0D tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  %r = "fuse.random"(%seed, %offset) <{distribution = #fuse<random_distribution uniform>}> : (tensor<i64>, tensor<i32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// fuse.broadcast_in_dim, fuse.reshape, fuse.transpose
//===----------------------------------------------------------------------===//

func.func @broadcast_dims_count(%b: tensor<64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+1 {{'fuse.broadcast_in_dim' op dims [1, 2] has 2 entries but the operand has rank 1}}
  %y = fuse.broadcast_in_dim %b, dims = [1, 2] : (tensor<64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @broadcast_dims_not_increasing(%x: tensor<16x64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+1 {{'fuse.broadcast_in_dim' op dims: dimensions [2, 1] must be strictly increasing}}
  %y = fuse.broadcast_in_dim %x, dims = [2, 1] : (tensor<16x64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @broadcast_dims_repeated(%x: tensor<64x64xf32>) -> tensor<2x64x64xf32> {
  // expected-error @+1 {{'fuse.broadcast_in_dim' op dims: dimensions [1, 1] must be strictly increasing}}
  %y = fuse.broadcast_in_dim %x, dims = [1, 1] : (tensor<64x64xf32>) -> tensor<2x64x64xf32>
  return %y : tensor<2x64x64xf32>
}

// -----

func.func @broadcast_dim_out_of_range(%b: tensor<64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+1 {{'fuse.broadcast_in_dim' op dims: dimension 3 is out of range for rank 3}}
  %y = fuse.broadcast_in_dim %b, dims = [3] : (tensor<64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @broadcast_dim_negative(%b: tensor<64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+1 {{'fuse.broadcast_in_dim' op dims: dimension -1 is out of range for rank 3}}
  %y = fuse.broadcast_in_dim %b, dims = [-1] : (tensor<64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @broadcast_bad_size(%b: tensor<32xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+1 {{'fuse.broadcast_in_dim' op operand dimension 0 (size 32) cannot broadcast to result dimension 2 (size 64)}}
  %y = fuse.broadcast_in_dim %b, dims = [2] : (tensor<32xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @broadcast_to_lower_rank(%x: tensor<2x16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'fuse.broadcast_in_dim' op dims: dimension 2 is out of range for rank 2}}
  %y = fuse.broadcast_in_dim %x, dims = [0, 1, 2] : (tensor<2x16x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// -----

func.func @broadcast_element_type(%b: tensor<64xf32>) -> tensor<2x16x64xbf16> {
  // expected-error @+1 {{'fuse.broadcast_in_dim' op failed to verify that all of {operand, result} have same element type}}
  %y = fuse.broadcast_in_dim %b, dims = [2] : (tensor<64xf32>) -> tensor<2x16x64xbf16>
  return %y : tensor<2x16x64xbf16>
}

// -----

func.func @reshape_element_count(%x: tensor<2x16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'fuse.reshape' op cannot reshape 2x16x64 (2048 elements) to 16x64 (1024 elements)}}
  %y = fuse.reshape %x : (tensor<2x16x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// -----

func.func @reshape_from_scalar(%x: tensor<f32>) -> tensor<2xf32> {
  // expected-error @+1 {{'fuse.reshape' op cannot reshape scalar (1 elements) to 2 (2 elements)}}
  %y = fuse.reshape %x : (tensor<f32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func @reshape_element_type(%x: tensor<2x16xi64>) -> tensor<32xi32> {
  // expected-error @+1 {{'fuse.reshape' op failed to verify that all of {operand, result} have same element type}}
  %y = fuse.reshape %x : (tensor<2x16xi64>) -> tensor<32xi32>
  return %y : tensor<32xi32>
}

// -----

func.func @transpose_wrong_length(%x: tensor<2x16x4x16xbf16>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.transpose' op permutation [0, 2, 1] has 3 entries but the operand has rank 4}}
  // expected-error @+1 {{'fuse.transpose' op failed to infer returned types}}
  %y = fuse.transpose %x, permutation = [0, 2, 1] : (tensor<2x16x4x16xbf16>) -> tensor<2x4x16x16xbf16>
  return %y : tensor<2x4x16x16xbf16>
}

// -----

func.func @transpose_repeated(%x: tensor<2x16x4x16xbf16>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.transpose' op permutation [0, 2, 2, 3] is not a permutation of [0, 4)}}
  // expected-error @+1 {{'fuse.transpose' op failed to infer returned types}}
  %y = fuse.transpose %x, permutation = [0, 2, 2, 3] : (tensor<2x16x4x16xbf16>) -> tensor<2x4x16x16xbf16>
  return %y : tensor<2x4x16x16xbf16>
}

// -----

func.func @transpose_out_of_range(%x: tensor<64x256xf32>) -> tensor<256x64xf32> {
  // expected-error @+2 {{'fuse.transpose' op permutation [2, 0] is not a permutation of [0, 2)}}
  // expected-error @+1 {{'fuse.transpose' op failed to infer returned types}}
  %y = fuse.transpose %x, permutation = [2, 0] : (tensor<64x256xf32>) -> tensor<256x64xf32>
  return %y : tensor<256x64xf32>
}

// -----

func.func @transpose_negative(%x: tensor<64x256xf32>) -> tensor<256x64xf32> {
  // expected-error @+2 {{'fuse.transpose' op permutation [-1, 0] is not a permutation of [0, 2)}}
  // expected-error @+1 {{'fuse.transpose' op failed to infer returned types}}
  %y = fuse.transpose %x, permutation = [-1, 0] : (tensor<64x256xf32>) -> tensor<256x64xf32>
  return %y : tensor<256x64xf32>
}

// -----

func.func @transpose_result_type(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error @+2 {{'fuse.transpose' op inferred type(s) 'tensor<256x64xf32>' are incompatible with return type(s) of operation 'tensor<64x256xf32>'}}
  // expected-error @+1 {{'fuse.transpose' op failed to infer returned types}}
  %y = fuse.transpose %x, permutation = [1, 0] : (tensor<64x256xf32>) -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}

// -----

//===----------------------------------------------------------------------===//
// fuse.slice, fuse.concat
//===----------------------------------------------------------------------===//

func.func @slice_wrong_lengths(%x: tensor<2x16x192xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'fuse.slice' op start, limit and stride need 3 entries each (the operand's rank), got 3, 2 and 3}}
  // expected-error @+1 {{'fuse.slice' op failed to infer returned types}}
  %y = fuse.slice %x, start = [0, 0, 0], limit = [2, 16], stride = [1, 1, 1] : (tensor<2x16x192xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @slice_stride_length(%x: tensor<2x16x192xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'fuse.slice' op start, limit and stride need 3 entries each (the operand's rank), got 3, 3 and 4}}
  // expected-error @+1 {{'fuse.slice' op failed to infer returned types}}
  %y = fuse.slice %x, start = [0, 0, 0], limit = [2, 16, 64], stride = [1, 1, 1, 1] : (tensor<2x16x192xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @slice_start_after_limit(%x: tensor<2x16x192xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'fuse.slice' op dimension 2: need 0 <= start <= limit <= 192, got start = 128, limit = 64}}
  // expected-error @+1 {{'fuse.slice' op failed to infer returned types}}
  %y = fuse.slice %x, start = [0, 0, 128], limit = [2, 16, 64], stride = [1, 1, 1] : (tensor<2x16x192xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @slice_limit_past_end(%x: tensor<2x16x192xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'fuse.slice' op dimension 1: need 0 <= start <= limit <= 16, got start = 1, limit = 17}}
  // expected-error @+1 {{'fuse.slice' op failed to infer returned types}}
  %y = fuse.slice %x, start = [0, 1, 0], limit = [2, 17, 64], stride = [1, 1, 1] : (tensor<2x16x192xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @slice_negative_start(%x: tensor<2x16xi64>) -> tensor<2x16xi64> {
  // expected-error @+2 {{'fuse.slice' op dimension 0: need 0 <= start <= limit <= 2, got start = -1, limit = 1}}
  // expected-error @+1 {{'fuse.slice' op failed to infer returned types}}
  %y = fuse.slice %x, start = [-1, 0], limit = [1, 16], stride = [1, 1] : (tensor<2x16xi64>) -> tensor<2x16xi64>
  return %y : tensor<2x16xi64>
}

// -----

func.func @slice_zero_stride(%x: tensor<2x16x64xbf16>) -> tensor<2x8x64xbf16> {
  // expected-error @+2 {{'fuse.slice' op dimension 1: stride must be at least 1, got 0}}
  // expected-error @+1 {{'fuse.slice' op failed to infer returned types}}
  %y = fuse.slice %x, start = [0, 0, 0], limit = [2, 16, 64], stride = [1, 0, 1] : (tensor<2x16x64xbf16>) -> tensor<2x8x64xbf16>
  return %y : tensor<2x8x64xbf16>
}

// -----

func.func @slice_result_type(%x: tensor<2x16x64xbf16>) -> tensor<2x16x64xbf16> {
  // expected-error @+2 {{'fuse.slice' op inferred type(s) 'tensor<2x8x64xbf16>' are incompatible with return type(s) of operation 'tensor<2x16x64xbf16>'}}
  // expected-error @+1 {{'fuse.slice' op failed to infer returned types}}
  %y = fuse.slice %x, start = [0, 0, 0], limit = [2, 16, 64], stride = [1, 2, 1] : (tensor<2x16x64xbf16>) -> tensor<2x16x64xbf16>
  return %y : tensor<2x16x64xbf16>
}

// -----

func.func @concat_element_types(%a: tensor<2x16x64xf32>, %b: tensor<2x16x64xbf16>) -> tensor<2x16x128xf32> {
  // expected-error @+2 {{'fuse.concat' op input #1 has element type 'bf16' but input #0 has 'f32'}}
  // expected-error @+1 {{'fuse.concat' op failed to infer returned types}}
  %y = fuse.concat dim(2) %a, %b : (tensor<2x16x64xf32>, tensor<2x16x64xbf16>) -> tensor<2x16x128xf32>
  return %y : tensor<2x16x128xf32>
}

// -----

func.func @concat_ranks(%a: tensor<2x16xi64>, %b: tensor<2x16x1xi64>) -> tensor<2x17xi64> {
  // expected-error @+2 {{'fuse.concat' op input #1 has rank 3 but input #0 has rank 2}}
  // expected-error @+1 {{'fuse.concat' op failed to infer returned types}}
  %y = fuse.concat dim(1) %a, %b : (tensor<2x16xi64>, tensor<2x16x1xi64>) -> tensor<2x17xi64>
  return %y : tensor<2x17xi64>
}

// -----

func.func @concat_other_dim_differs(%a: tensor<2x16x64xf32>, %b: tensor<2x16x64xf32>, %c: tensor<2x8x64xf32>) -> tensor<2x16x192xf32> {
  // expected-error @+2 {{'fuse.concat' op input #2 (2x8x64) differs from input #0 (2x16x64) in dimension 1, which is not the concatenated one}}
  // expected-error @+1 {{'fuse.concat' op failed to infer returned types}}
  %y = fuse.concat dim(2) %a, %b, %c : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x8x64xf32>) -> tensor<2x16x192xf32>
  return %y : tensor<2x16x192xf32>
}

// -----

func.func @concat_dim_out_of_range(%a: tensor<2x16xi1>, %b: tensor<2x16xi1>) -> tensor<2x16xi1> {
  // expected-error @+2 {{'fuse.concat' op dim 2 is out of range for rank 2}}
  // expected-error @+1 {{'fuse.concat' op failed to infer returned types}}
  %y = fuse.concat dim(2) %a, %b : (tensor<2x16xi1>, tensor<2x16xi1>) -> tensor<2x16xi1>
  return %y : tensor<2x16xi1>
}

// -----

func.func @concat_negative_dim(%a: tensor<2x16xi1>) -> tensor<2x16xi1> {
  // expected-error @+1 {{'fuse.concat' op attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %y = fuse.concat dim(-1) %a : (tensor<2x16xi1>) -> tensor<2x16xi1>
  return %y : tensor<2x16xi1>
}

// -----

func.func @concat_no_inputs() -> tensor<0xf32> {
  // expected-error @+2 {{'fuse.concat' op needs at least one input}}
  // expected-error @+1 {{'fuse.concat' op failed to infer returned types}}
  %y = fuse.concat dim(0) : () -> tensor<0xf32>
  return %y : tensor<0xf32>
}

// -----

func.func @concat_result_type(%a: tensor<2x16x64xf32>, %b: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'fuse.concat' op inferred type(s) 'tensor<2x16x128xf32>' are incompatible with return type(s) of operation 'tensor<2x16x64xf32>'}}
  // expected-error @+1 {{'fuse.concat' op failed to infer returned types}}
  %y = fuse.concat dim(2) %a, %b : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// fuse.gather, fuse.scatter_add
//===----------------------------------------------------------------------===//

func.func @gather_dim_out_of_range(%wte: tensor<128x64xf32>, %tokens: tensor<2x16xi64>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'fuse.gather' op dim 2 is out of range for operand rank 2}}
  // expected-error @+1 {{'fuse.gather' op failed to infer returned types}}
  %y = fuse.gather %wte[%tokens], dim = 2 : (tensor<128x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @gather_float_indices(%wte: tensor<128x64xf32>, %tokens: tensor<2x16xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+1 {{'fuse.gather' op operand #1 must be statically shaped tensor of 64-bit signless integer or 32-bit signless integer values, but got 'tensor<2x16xf32>'}}
  %y = fuse.gather %wte[%tokens], dim = 0 : (tensor<128x64xf32>, tensor<2x16xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @gather_result_type(%wte: tensor<128x64xf32>, %tokens: tensor<2x16xi64>) -> tensor<32x64xf32> {
  // expected-error @+2 {{'fuse.gather' op inferred type(s) 'tensor<2x16x64xf32>' are incompatible with return type(s) of operation 'tensor<32x64xf32>'}}
  // expected-error @+1 {{'fuse.gather' op failed to infer returned types}}
  %y = fuse.gather %wte[%tokens], dim = 0 : (tensor<128x64xf32>, tensor<2x16xi64>) -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// -----

func.func @scatter_add_dim_out_of_range(%dest: tensor<128x64xf32>, %tokens: tensor<2x16xi64>, %upd: tensor<2x16x64xf32>) -> tensor<128x64xf32> {
  // expected-error @+1 {{'fuse.scatter_add' op dim 2 is out of range for dest rank 2}}
  %y = fuse.scatter_add %dest[%tokens], %upd, dim = 2 : (tensor<128x64xf32>, tensor<2x16xi64>, tensor<2x16x64xf32>) -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// -----

func.func @scatter_add_updates_shape(%dest: tensor<128x64xf32>, %tokens: tensor<2x16xi64>, %upd: tensor<32x64xf32>) -> tensor<128x64xf32> {
  // expected-error @+1 {{'fuse.scatter_add' op updates have shape 32x64 but dest and indices need 2x16x64}}
  %y = fuse.scatter_add %dest[%tokens], %upd, dim = 0 : (tensor<128x64xf32>, tensor<2x16xi64>, tensor<32x64xf32>) -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// -----

func.func @scatter_add_updates_element_type(%dest: tensor<128x64xf32>, %tokens: tensor<2x16xi64>, %upd: tensor<2x16x64xbf16>) -> tensor<128x64xf32> {
  // expected-error @+1 {{'fuse.scatter_add' op updates have element type 'bf16' but dest has 'f32'}}
  %y = fuse.scatter_add %dest[%tokens], %upd, dim = 0 : (tensor<128x64xf32>, tensor<2x16xi64>, tensor<2x16x64xbf16>) -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// -----

func.func @scatter_add_result_type(%dest: tensor<128x64xf32>, %tokens: tensor<2x16xi64>, %upd: tensor<2x16x64xf32>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{'fuse.scatter_add' op failed to verify that all of {dest, result} have same type}}
  %y = fuse.scatter_add %dest[%tokens], %upd, dim = 0 : (tensor<128x64xf32>, tensor<2x16xi64>, tensor<2x16x64xf32>) -> tensor<128x64xbf16>
  return %y : tensor<128x64xbf16>
}

// -----

func.func @scatter_add_i1(%dest: tensor<128xi1>, %tokens: tensor<2x16xi64>, %upd: tensor<2x16xi1>) -> tensor<128xi1> {
  // expected-error @+1 {{'fuse.scatter_add' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer values, but got 'tensor<128xi1>'}}
  %y = fuse.scatter_add %dest[%tokens], %upd, dim = 0 : (tensor<128xi1>, tensor<2x16xi64>, tensor<2x16xi1>) -> tensor<128xi1>
  return %y : tensor<128xi1>
}

// -----

//===----------------------------------------------------------------------===//
// fuse.reduce, fuse.argmax
//===----------------------------------------------------------------------===//

func.func @reduce_no_dims(%x: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'fuse.reduce' op dims: needs at least one dimension}}
  // expected-error @+1 {{'fuse.reduce' op failed to infer returned types}}
  %y = fuse.reduce sum %x, dims = [] : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @reduce_dims_unsorted(%x: tensor<2x16x64xf32>) -> tensor<64xf32> {
  // expected-error @+2 {{'fuse.reduce' op dims: dimensions [1, 0] must be strictly increasing}}
  // expected-error @+1 {{'fuse.reduce' op failed to infer returned types}}
  %y = fuse.reduce sum %x, dims = [1, 0] : (tensor<2x16x64xf32>) -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @reduce_dims_repeated(%x: tensor<2x16x64xf32>) -> tensor<2x16xf32> {
  // expected-error @+2 {{'fuse.reduce' op dims: dimensions [2, 2] must be strictly increasing}}
  // expected-error @+1 {{'fuse.reduce' op failed to infer returned types}}
  %y = fuse.reduce max %x, dims = [2, 2] : (tensor<2x16x64xf32>) -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

func.func @reduce_dim_out_of_range(%x: tensor<2x16x64xf32>) -> tensor<2x16xf32> {
  // expected-error @+2 {{'fuse.reduce' op dims: dimension 3 is out of range for rank 3}}
  // expected-error @+1 {{'fuse.reduce' op failed to infer returned types}}
  %y = fuse.reduce min %x, dims = [3] : (tensor<2x16x64xf32>) -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

func.func @reduce_dim_negative(%x: tensor<2x16x64xf32>) -> tensor<2x16xf32> {
  // expected-error @+2 {{'fuse.reduce' op dims: dimension -1 is out of range for rank 3}}
  // expected-error @+1 {{'fuse.reduce' op failed to infer returned types}}
  %y = fuse.reduce sum %x, dims = [-1] : (tensor<2x16x64xf32>) -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

func.func @reduce_mean_int(%x: tensor<2x16xi64>) -> tensor<2xi64> {
  // expected-error @+2 {{'fuse.reduce' op mean needs a float operand, not 'i64'}}
  // expected-error @+1 {{'fuse.reduce' op failed to infer returned types}}
  %y = fuse.reduce mean %x, dims = [1] : (tensor<2x16xi64>) -> tensor<2xi64>
  return %y : tensor<2xi64>
}

// -----

func.func @reduce_result_type(%x: tensor<2x16x64xf32>) -> tensor<2x16xf32> {
  // expected-error @+2 {{'fuse.reduce' op inferred type(s) 'tensor<2x16x1xf32>' are incompatible with return type(s) of operation 'tensor<2x16xf32>'}}
  // expected-error @+1 {{'fuse.reduce' op failed to infer returned types}}
  %y = fuse.reduce sum %x, dims = [2] keepdim : (tensor<2x16x64xf32>) -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

func.func @reduce_result_element_type(%x: tensor<2x16x64xbf16>) -> tensor<2x16xf32> {
  // expected-error @+2 {{'fuse.reduce' op inferred type(s) 'tensor<2x16xbf16>' are incompatible with return type(s) of operation 'tensor<2x16xf32>'}}
  // expected-error @+1 {{'fuse.reduce' op failed to infer returned types}}
  %y = fuse.reduce sum %x, dims = [2] : (tensor<2x16x64xbf16>) -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

func.func @reduce_i1(%x: tensor<2x16xi1>) -> tensor<2xi1> {
  // expected-error @+1 {{'fuse.reduce' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer values, but got 'tensor<2x16xi1>'}}
  %y = fuse.reduce max %x, dims = [1] : (tensor<2x16xi1>) -> tensor<2xi1>
  return %y : tensor<2xi1>
}

// -----

func.func @reduce_bad_kind(%x: tensor<2x16xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{expected ::mlir::fuse::ReduceKind to be one of: sum, max, min, mean}}
  // expected-error @+1 {{failed to parse Fuse_ReduceKindAttr parameter 'value'}}
  %y = fuse.reduce prod %x, dims = [1] : (tensor<2x16xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func @argmax_dim_out_of_range(%logits: tensor<2x16x128xf32>) -> tensor<2x16xi64> {
  // expected-error @+2 {{'fuse.argmax' op dim 3 is out of range for operand rank 3}}
  // expected-error @+1 {{'fuse.argmax' op failed to infer returned types}}
  %y = fuse.argmax %logits, dim = 3 : (tensor<2x16x128xf32>) -> tensor<2x16xi64>
  return %y : tensor<2x16xi64>
}

// -----

func.func @argmax_result_i32(%logits: tensor<2x16x128xf32>) -> tensor<2x16xi32> {
  // expected-error @+1 {{'fuse.argmax' op result #0 must be statically shaped tensor of 64-bit signless integer values, but got 'tensor<2x16xi32>'}}
  %y = fuse.argmax %logits, dim = 2 : (tensor<2x16x128xf32>) -> tensor<2x16xi32>
  return %y : tensor<2x16xi32>
}

// -----

func.func @argmax_keepdim_result(%logits: tensor<2x16x128xf32>) -> tensor<2x16xi64> {
  // expected-error @+2 {{'fuse.argmax' op inferred type(s) 'tensor<2x16x1xi64>' are incompatible with return type(s) of operation 'tensor<2x16xi64>'}}
  // expected-error @+1 {{'fuse.argmax' op failed to infer returned types}}
  %y = fuse.argmax %logits, dim = 2 keepdim : (tensor<2x16x128xf32>) -> tensor<2x16xi64>
  return %y : tensor<2x16xi64>
}

// -----

//===----------------------------------------------------------------------===//
// fuse.cumsum
//===----------------------------------------------------------------------===//

func.func @cumsum_dim_out_of_range(%x: tensor<2x16xi64>) -> tensor<2x16xi64> {
  // expected-error @+1 {{'fuse.cumsum' op dim 2 is out of range for operand rank 2}}
  %y = fuse.cumsum %x, dim = 2 : tensor<2x16xi64>
  return %y : tensor<2x16xi64>
}

// -----

func.func @cumsum_negative_dim(%x: tensor<2x16xi64>) -> tensor<2x16xi64> {
  // expected-error @+1 {{'fuse.cumsum' op attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %y = fuse.cumsum %x, dim = -1 : tensor<2x16xi64>
  return %y : tensor<2x16xi64>
}

// -----

func.func @cumsum_scalar(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'fuse.cumsum' op dim 0 is out of range for operand rank 0 (a 0-d tensor is its own cumsum)}}
  %y = fuse.cumsum %x, dim = 0 : tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func @cumsum_bool(%x: tensor<2x16xi1>) -> tensor<2x16xi1> {
  // expected-error @+1 {{'fuse.cumsum' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer values, but got 'tensor<2x16xi1>'}}
  %y = fuse.cumsum %x, dim = 1 : tensor<2x16xi1>
  return %y : tensor<2x16xi1>
}

// -----

func.func @cumsum_result_type(%x: tensor<2x16xi32>) -> tensor<2x16xi64> {
  // expected-error @+1 {{'fuse.cumsum' op requires the same type for all operands and results}}
  %y = "fuse.cumsum"(%x) {dim = 1 : i64} : (tensor<2x16xi32>) -> tensor<2x16xi64>
  return %y : tensor<2x16xi64>
}

// -----

//===----------------------------------------------------------------------===//
// fuse.matmul
//===----------------------------------------------------------------------===//

func.func @matmul_i64(%a: tensor<4x8xi64>, %b: tensor<8x4xi64>) -> tensor<4x4xi64> {
  // expected-error @+1 {{'fuse.matmul' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xi64>'}}
  %y = fuse.matmul %a, %b : (tensor<4x8xi64>, tensor<8x4xi64>) -> tensor<4x4xi64>
  return %y : tensor<4x4xi64>
}

// -----

func.func @matmul_rank_1(%a: tensor<64xf32>, %b: tensor<64x256xf32>) -> tensor<256xf32> {
  // expected-error @+2 {{'fuse.matmul' op operands need rank 2 or more, got 1 and 2}}
  // expected-error @+1 {{'fuse.matmul' op failed to infer returned types}}
  %y = fuse.matmul %a, %b : (tensor<64xf32>, tensor<64x256xf32>) -> tensor<256xf32>
  return %y : tensor<256xf32>
}

// -----

func.func @matmul_rhs_rank(%q: tensor<2x4x16x16xbf16>, %k: tensor<4x16x16xbf16>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.matmul' op rhs must have the rank of lhs (4) or be a matrix shared by every batch, got rank 3}}
  // expected-error @+1 {{'fuse.matmul' op failed to infer returned types}}
  %y = fuse.matmul %q, %k transpose_rhs : (tensor<2x4x16x16xbf16>, tensor<4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  return %y : tensor<2x4x16x16xbf16>
}

// -----

func.func @matmul_rhs_rank_above_lhs(%x: tensor<32x64xf32>, %w: tensor<2x64x256xf32>) -> tensor<2x32x256xf32> {
  // expected-error @+2 {{'fuse.matmul' op rhs must have the rank of lhs (2) or be a matrix shared by every batch, got rank 3}}
  // expected-error @+1 {{'fuse.matmul' op failed to infer returned types}}
  %y = fuse.matmul %x, %w : (tensor<32x64xf32>, tensor<2x64x256xf32>) -> tensor<2x32x256xf32>
  return %y : tensor<2x32x256xf32>
}

// -----

func.func @matmul_batch_mismatch(%q: tensor<2x4x16x16xbf16>, %k: tensor<2x8x16x16xbf16>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.matmul' op batch dimensions differ: lhs 2x4x16x16, rhs 2x8x16x16}}
  // expected-error @+1 {{'fuse.matmul' op failed to infer returned types}}
  %y = fuse.matmul %q, %k transpose_rhs : (tensor<2x4x16x16xbf16>, tensor<2x8x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  return %y : tensor<2x4x16x16xbf16>
}

// -----

func.func @matmul_contraction(%x: tensor<32x64xf32>, %w: tensor<256x64xf32>) -> tensor<32x64xf32> {
  // expected-error @+2 {{'fuse.matmul' op contraction sizes differ: lhs 32x64 has K = 64, rhs 256x64 has K = 256}}
  // expected-error @+1 {{'fuse.matmul' op failed to infer returned types}}
  %y = fuse.matmul %x, %w : (tensor<32x64xf32>, tensor<256x64xf32>) -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// -----

func.func @matmul_contraction_transposed(%x: tensor<32x64xf32>, %w: tensor<64x256xf32>) -> tensor<64x64xf32> {
  // expected-error @+2 {{'fuse.matmul' op contraction sizes differ: lhs 32x64 (transposed) has K = 32, rhs 64x256 (transposed) has K = 256}}
  // expected-error @+1 {{'fuse.matmul' op failed to infer returned types}}
  %y = fuse.matmul %x, %w transpose_lhs transpose_rhs : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}

// -----

func.func @matmul_element_types(%x: tensor<32x64xbf16>, %w: tensor<64x256xf32>) -> tensor<32x256xbf16> {
  // expected-error @+2 {{'fuse.matmul' op operands have different element types ('bf16' and 'f32'): cast one explicitly}}
  // expected-error @+1 {{'fuse.matmul' op failed to infer returned types}}
  %y = fuse.matmul %x, %w : (tensor<32x64xbf16>, tensor<64x256xf32>) -> tensor<32x256xbf16>
  return %y : tensor<32x256xbf16>
}

// -----

func.func @matmul_result_type(%x: tensor<32x64xbf16>, %w: tensor<64x256xbf16>) -> tensor<32x256xf32> {
  // expected-error @+2 {{'fuse.matmul' op inferred type(s) 'tensor<32x256xbf16>' are incompatible with return type(s) of operation 'tensor<32x256xf32>'}}
  // expected-error @+1 {{'fuse.matmul' op failed to infer returned types}}
  %y = fuse.matmul %x, %w : (tensor<32x64xbf16>, tensor<64x256xbf16>) -> tensor<32x256xf32>
  return %y : tensor<32x256xf32>
}

// -----

//===----------------------------------------------------------------------===//
// fuse.softmax, fuse.log_softmax, fuse.layer_norm, fuse.rms_norm
//===----------------------------------------------------------------------===//

func.func @softmax_dim_out_of_range(%x: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  // expected-error @+1 {{'fuse.softmax' op dim 4 is out of range for rank 4}}
  %y = fuse.softmax %x, dim = 4 : tensor<2x4x16x16xf32>
  return %y : tensor<2x4x16x16xf32>
}

// -----

func.func @log_softmax_dim_out_of_range(%x: tensor<32x128xbf16>) -> tensor<32x128xbf16> {
  // expected-error @+1 {{'fuse.log_softmax' op dim 2 is out of range for rank 2}}
  %y = fuse.log_softmax %x, dim = 2 : tensor<32x128xbf16>
  return %y : tensor<32x128xbf16>
}

// -----

func.func @softmax_negative_dim(%x: tensor<32x128xf32>) -> tensor<32x128xf32> {
  // expected-error @+1 {{'fuse.softmax' op attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %y = fuse.softmax %x, dim = -1 : tensor<32x128xf32>
  return %y : tensor<32x128xf32>
}

// -----

func.func @softmax_i32(%x: tensor<32x128xi32>) -> tensor<32x128xi32> {
  // expected-error @+1 {{'fuse.softmax' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<32x128xi32>'}}
  %y = fuse.softmax %x, dim = 1 : tensor<32x128xi32>
  return %y : tensor<32x128xi32>
}

// -----

func.func @softmax_result_type(%x: tensor<32x128xbf16>) -> tensor<32x128xf32> {
  // expected-error @+1 {{'fuse.softmax' op requires the same type for all operands and results}}
  %y = "fuse.softmax"(%x) <{dim = 1 : i64}> : (tensor<32x128xbf16>) -> tensor<32x128xf32>
  return %y : tensor<32x128xf32>
}

// -----

func.func @layer_norm_axis_out_of_range(%x: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'fuse.layer_norm' op axis 3 is out of range for input rank 3}}
  // expected-error @+1 {{'fuse.layer_norm' op failed to infer returned types}}
  %y, %mean, %rstd = fuse.layer_norm %x axis = 3 epsilon = 1.0e-5 : (tensor<2x16x64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @layer_norm_negative_epsilon(%x: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'fuse.layer_norm' op epsilon must be finite and >= 0, got -1.000000e-05}}
  // expected-error @+1 {{'fuse.layer_norm' op failed to infer returned types}}
  %y, %mean, %rstd = fuse.layer_norm %x axis = 2 epsilon = -1.0e-5 : (tensor<2x16x64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @layer_norm_weight_shape(%x: tensor<2x16x64xf32>, %w: tensor<16x64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'fuse.layer_norm' op weight has type 'tensor<16x64xf32>' but the input 2x16x64 normalised from axis 2 needs 'tensor<64xf32>'}}
  // expected-error @+1 {{'fuse.layer_norm' op failed to infer returned types}}
  %y, %mean, %rstd = fuse.layer_norm %x weight(%w) axis = 2 epsilon = 1.0e-5 : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @layer_norm_weight_type(%x: tensor<2x16x64xbf16>, %w: tensor<64xf32>) -> tensor<2x16x64xbf16> {
  // expected-error @+2 {{'fuse.layer_norm' op weight has type 'tensor<64xf32>' but the input 2x16x64 normalised from axis 2 needs 'tensor<64xbf16>'}}
  // expected-error @+1 {{'fuse.layer_norm' op failed to infer returned types}}
  %y, %mean, %rstd = fuse.layer_norm %x weight(%w) axis = 2 epsilon = 1.0e-5 : (tensor<2x16x64xbf16>, tensor<64xf32>) -> (tensor<2x16x64xbf16>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
  return %y : tensor<2x16x64xbf16>
}

// -----

func.func @layer_norm_bias_shape(%x: tensor<2x16x64xf32>, %w: tensor<16x64xf32>, %b: tensor<64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'fuse.layer_norm' op bias has type 'tensor<64xf32>' but the input 2x16x64 normalised from axis 1 needs 'tensor<16x64xf32>'}}
  // expected-error @+1 {{'fuse.layer_norm' op failed to infer returned types}}
  %y, %mean, %rstd = fuse.layer_norm %x weight(%w) bias(%b) axis = 1 epsilon = 1.0e-5 : (tensor<2x16x64xf32>, tensor<16x64xf32>, tensor<64xf32>) -> (tensor<2x16x64xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @layer_norm_stats_type(%x: tensor<2x16x64xbf16>) -> tensor<2x16x64xbf16> {
  // expected-error @+1 {{'fuse.layer_norm' op result #1 must be statically shaped tensor of 32-bit float values, but got 'tensor<2x16x1xbf16>'}}
  %y, %mean, %rstd = fuse.layer_norm %x axis = 2 epsilon = 1.0e-5 : (tensor<2x16x64xbf16>) -> (tensor<2x16x64xbf16>, tensor<2x16x1xbf16>, tensor<2x16x1xbf16>)
  return %y : tensor<2x16x64xbf16>
}

// -----

func.func @layer_norm_stats_shape(%x: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'fuse.layer_norm' op inferred type(s) 'tensor<2x16x64xf32>', 'tensor<2x16x1xf32>', 'tensor<2x16x1xf32>' are incompatible with return type(s) of operation 'tensor<2x16x64xf32>', 'tensor<2x16xf32>', 'tensor<2x16xf32>'}}
  // expected-error @+1 {{'fuse.layer_norm' op failed to infer returned types}}
  %y, %mean, %rstd = fuse.layer_norm %x axis = 2 epsilon = 1.0e-5 : (tensor<2x16x64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return %y : tensor<2x16x64xf32>
}

// -----

func.func @rms_norm_axis_out_of_range(%x: tensor<2x16x64xbf16>) -> tensor<2x16x64xbf16> {
  // expected-error @+2 {{'fuse.rms_norm' op axis 3 is out of range for input rank 3}}
  // expected-error @+1 {{'fuse.rms_norm' op failed to infer returned types}}
  %y = fuse.rms_norm %x axis = 3 epsilon = 1.0e-6 : (tensor<2x16x64xbf16>) -> tensor<2x16x64xbf16>
  return %y : tensor<2x16x64xbf16>
}

// -----

func.func @rms_norm_negative_epsilon(%x: tensor<2x16x64xbf16>) -> tensor<2x16x64xbf16> {
  // expected-error @+2 {{'fuse.rms_norm' op epsilon must be finite and >= 0, got -1.000000e+00}}
  // expected-error @+1 {{'fuse.rms_norm' op failed to infer returned types}}
  %y = fuse.rms_norm %x axis = 2 epsilon = -1.0 : (tensor<2x16x64xbf16>) -> tensor<2x16x64xbf16>
  return %y : tensor<2x16x64xbf16>
}

// -----

func.func @rms_norm_nan_epsilon(%x: tensor<2x16x64xbf16>) -> tensor<2x16x64xbf16> {
  // expected-error @+2 {{'fuse.rms_norm' op epsilon must be finite and >= 0, got nan}}
  // expected-error @+1 {{'fuse.rms_norm' op failed to infer returned types}}
  %y = fuse.rms_norm %x axis = 2 epsilon = 0x7FF8000000000000 : (tensor<2x16x64xbf16>) -> tensor<2x16x64xbf16>
  return %y : tensor<2x16x64xbf16>
}

// -----

func.func @rms_norm_weight_shape(%x: tensor<2x16x64xbf16>, %w: tensor<1x64xbf16>) -> tensor<2x16x64xbf16> {
  // expected-error @+2 {{'fuse.rms_norm' op weight has type 'tensor<1x64xbf16>' but the input 2x16x64 normalised from axis 2 needs 'tensor<64xbf16>'}}
  // expected-error @+1 {{'fuse.rms_norm' op failed to infer returned types}}
  %y = fuse.rms_norm %x weight(%w) axis = 2 epsilon = 1.0e-6 : (tensor<2x16x64xbf16>, tensor<1x64xbf16>) -> tensor<2x16x64xbf16>
  return %y : tensor<2x16x64xbf16>
}

// -----

func.func @rms_norm_weight_type(%x: tensor<2x16x64xbf16>, %w: tensor<64xf16>) -> tensor<2x16x64xbf16> {
  // expected-error @+2 {{'fuse.rms_norm' op weight has type 'tensor<64xf16>' but the input 2x16x64 normalised from axis 2 needs 'tensor<64xbf16>'}}
  // expected-error @+1 {{'fuse.rms_norm' op failed to infer returned types}}
  %y = fuse.rms_norm %x weight(%w) axis = 2 epsilon = 1.0e-6 : (tensor<2x16x64xbf16>, tensor<64xf16>) -> tensor<2x16x64xbf16>
  return %y : tensor<2x16x64xbf16>
}

// -----

func.func @rms_norm_result_type(%x: tensor<2x16x64xbf16>) -> tensor<2x16x64xf32> {
  // expected-error @+2 {{'fuse.rms_norm' op inferred type(s) 'tensor<2x16x64xbf16>' are incompatible with return type(s) of operation 'tensor<2x16x64xf32>'}}
  // expected-error @+1 {{'fuse.rms_norm' op failed to infer returned types}}
  %y = fuse.rms_norm %x axis = 2 epsilon = 1.0e-6 : (tensor<2x16x64xbf16>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// fuse.scaled_dot_product_attention
//===----------------------------------------------------------------------===//

func.func @attention_rank_3(%q: tensor<8x16x16xbf16>) -> tensor<8x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op query, key and value must be [B, H, T, D] (rank 4), got 8x16x16, 8x16x16, 8x16x16}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q causal scale = 0.25 : (tensor<8x16x16xbf16>, tensor<8x16x16xbf16>, tensor<8x16x16xbf16>) -> (tensor<8x16x16xbf16>, tensor<8x16xf32>)
  return %o : tensor<8x16x16xbf16>
}

// -----

func.func @attention_element_types(%q: tensor<2x4x16x16xbf16>, %k: tensor<2x4x16x16xbf16>, %v: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op query, key and value need one element type, got 'bf16', 'bf16', 'f32'}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xf32>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_batch(%q: tensor<2x4x16x16xbf16>, %k: tensor<1x4x16x16xbf16>, %v: tensor<1x4x16x16xbf16>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op batch sizes differ: query 2, key 1, value 1}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<1x4x16x16xbf16>, tensor<1x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_head_dim(%q: tensor<2x4x16x16xbf16>, %k: tensor<2x4x16x32xbf16>, %v: tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op key head dim 32 differs from query head dim 16}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x32xbf16>, tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_value_length(%q: tensor<2x4x16x16xbf16>, %k: tensor<2x4x16x16xbf16>, %v: tensor<2x4x8x16xbf16>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op value 2x4x8x16 must match key 2x4x16x16 in heads and sequence length}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x8x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_value_heads(%q: tensor<2x8x16x16xf16>, %k: tensor<2x2x16x16xf16>, %v: tensor<2x8x16x16xf16>) -> tensor<2x8x16x16xf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op value 2x8x16x16 must match key 2x2x16x16 in heads and sequence length}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.25 : (tensor<2x8x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x8x16x16xf16>) -> (tensor<2x8x16x16xf16>, tensor<2x8x16xf32>)
  return %o : tensor<2x8x16x16xf16>
}

// -----

func.func @attention_heads_not_multiple(%q: tensor<2x8x16x16xf16>, %k: tensor<2x3x16x16xf16>, %v: tensor<2x3x16x16xf16>) -> tensor<2x8x16x16xf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op query heads (8) must be a multiple of key/value heads (3)}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.25 : (tensor<2x8x16x16xf16>, tensor<2x3x16x16xf16>, tensor<2x3x16x16xf16>) -> (tensor<2x8x16x16xf16>, tensor<2x8x16xf32>)
  return %o : tensor<2x8x16x16xf16>
}

// -----

func.func @attention_zero_kv_heads(%q: tensor<2x8x16x16xf16>, %k: tensor<2x0x16x16xf16>, %v: tensor<2x0x16x16xf16>) -> tensor<2x8x16x16xf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op query heads (8) must be a multiple of key/value heads (0)}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.25 : (tensor<2x8x16x16xf16>, tensor<2x0x16x16xf16>, tensor<2x0x16x16xf16>) -> (tensor<2x8x16x16xf16>, tensor<2x8x16xf32>)
  return %o : tensor<2x8x16x16xf16>
}

// -----

func.func @attention_mask_and_causal(%q: tensor<2x4x16x16xbf16>, %m: tensor<1x1x16x16xi1>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op takes either a mask or causal, not both}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q mask(%m) causal scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<1x1x16x16xi1>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_mask_key_length(%q: tensor<2x4x16x16xbf16>, %m: tensor<1x1x16x1xbf16>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op mask 1x1x16x1 must be [B|1, H|1, Tq|1, Tk] = [2|1, 4|1, 16|1, 16]}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q mask(%m) scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<1x1x16x1xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_mask_heads(%q: tensor<2x4x16x16xbf16>, %m: tensor<2x2x16x16xi1>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op mask 2x2x16x16 must be [B|1, H|1, Tq|1, Tk] = [2|1, 4|1, 16|1, 16]}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q mask(%m) scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x2x16x16xi1>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_mask_rank(%q: tensor<2x4x16x16xbf16>, %m: tensor<16x16xi1>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op mask 16x16 must be [B|1, H|1, Tq|1, Tk] = [2|1, 4|1, 16|1, 16]}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q mask(%m) scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<16x16xi1>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_mask_float_type(%q: tensor<2x4x16x16xbf16>, %m: tensor<2x1x1x16xf32>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op mask must be i1 or 'bf16', got 'f32'}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q mask(%m) scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x1x1x16xf32>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_mask_int_type(%q: tensor<2x4x16x16xf32>, %m: tensor<2x1x1x16xi64>) -> tensor<2x4x16x16xf32> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op mask must be i1 or 'f32', got 'i64'}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q mask(%m) scale = 0.25 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x1x1x16xi64>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xf32>
}

// -----

func.func @attention_scale_zero(%q: tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op scale must be finite and > 0, got 0.000000e+00}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q causal scale = 0.0 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_scale_negative(%q: tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op scale must be finite and > 0, got -2.500000e-01}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q causal scale = -0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_dropout_one(%q: tensor<2x4x16x16xbf16>, %seed: tensor<i64>, %offset: tensor<i64>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op dropout_p must be in [0, 1), got 1.000000e+00}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q rng(%seed, %offset) causal scale = 0.25 dropout_p = 1.0 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<i64>, tensor<i64>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_dropout_negative(%q: tensor<2x4x16x16xbf16>, %seed: tensor<i64>, %offset: tensor<i64>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op dropout_p must be in [0, 1), got -1.000000e-01}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q rng(%seed, %offset) causal scale = 0.25 dropout_p = -0.1 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<i64>, tensor<i64>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_dropout_without_rng(%q: tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op dropout_p = 1.000000e-01 needs rng(%seed, %offset)}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q causal scale = 0.25 dropout_p = 0.1 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_rng_without_dropout(%q: tensor<2x4x16x16xbf16>, %seed: tensor<i64>, %offset: tensor<i64>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op rng given but dropout_p is 0: drop it}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q rng(%seed, %offset) causal scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<i64>, tensor<i64>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_rng_not_i64(%q: tensor<2x4x16x16xbf16>, %seed: tensor<i32>, %offset: tensor<i32>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op operand #3 must be 0D tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q rng(%seed, %offset) causal scale = 0.25 dropout_p = 0.1 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<i32>, tensor<i32>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_output_type(%q: tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xf32> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op inferred type(s) 'tensor<2x4x16x16xbf16>', 'tensor<2x4x16xf32>' are incompatible with return type(s) of operation 'tensor<2x4x16x16xf32>', 'tensor<2x4x16xf32>'}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q causal scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16xf32>)
  return %o : tensor<2x4x16x16xf32>
}

// -----

func.func @attention_logsumexp_bf16(%q: tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op result #1 must be statically shaped tensor of 32-bit float values, but got 'tensor<2x4x16xbf16>'}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q causal scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xbf16>)
  return %o : tensor<2x4x16x16xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// fuse.scaled_dot_product_attention_backward
//===----------------------------------------------------------------------===//

func.func @attention_backward_grad_output(%do: tensor<2x4x16x16xf32>, %q: tensor<2x4x16x16xbf16>, %o: tensor<2x4x16x16xbf16>, %lse: tensor<2x4x16xf32>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention_backward' op grad_output has type 'tensor<2x4x16x16xf32>' but the forward produces 'tensor<2x4x16x16xbf16>'}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention_backward' op failed to infer returned types}}
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %q, %q, %o, %lse causal scale = 0.25 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>)
  return %dq : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_backward_output(%do: tensor<2x4x16x16xbf16>, %q: tensor<2x4x16x16xbf16>, %o: tensor<2x4x8x16xbf16>, %lse: tensor<2x4x16xf32>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention_backward' op output has type 'tensor<2x4x8x16xbf16>' but the forward produces 'tensor<2x4x16x16xbf16>'}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention_backward' op failed to infer returned types}}
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %q, %q, %o, %lse causal scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x16xf32>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>)
  return %dq : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_backward_logsumexp(%do: tensor<2x4x16x16xbf16>, %q: tensor<2x4x16x16xbf16>, %lse: tensor<2x4x16x1xf32>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention_backward' op logsumexp has type 'tensor<2x4x16x1xf32>' but the forward produces 'tensor<2x4x16xf32>'}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention_backward' op failed to infer returned types}}
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %q, %q, %do, %lse causal scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x1xf32>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>)
  return %dq : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_backward_logsumexp_bf16(%do: tensor<2x4x16x16xbf16>, %q: tensor<2x4x16x16xbf16>, %lse: tensor<2x4x16xbf16>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+1 {{'fuse.scaled_dot_product_attention_backward' op operand #5 must be statically shaped tensor of 32-bit float values, but got 'tensor<2x4x16xbf16>'}}
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %q, %q, %do, %lse causal scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>)
  return %dq : tensor<2x4x16x16xbf16>
}

// -----

// The checks shared with the forward apply to the backward too.
func.func @attention_backward_heads(%do: tensor<2x8x16x16xf16>, %q: tensor<2x8x16x16xf16>, %k: tensor<2x3x16x16xf16>, %lse: tensor<2x8x16xf32>) -> tensor<2x8x16x16xf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention_backward' op query heads (8) must be a multiple of key/value heads (3)}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention_backward' op failed to infer returned types}}
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %k, %k, %do, %lse causal scale = 0.25 : (tensor<2x8x16x16xf16>, tensor<2x8x16x16xf16>, tensor<2x3x16x16xf16>, tensor<2x3x16x16xf16>, tensor<2x8x16x16xf16>, tensor<2x8x16xf32>) -> (tensor<2x8x16x16xf16>, tensor<2x3x16x16xf16>, tensor<2x3x16x16xf16>)
  return %dq : tensor<2x8x16x16xf16>
}

// -----

func.func @attention_backward_dropout_without_rng(%do: tensor<2x4x16x16xbf16>, %lse: tensor<2x4x16xf32>) -> tensor<2x4x16x16xbf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention_backward' op dropout_p = 1.000000e-01 needs rng(%seed, %offset)}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention_backward' op failed to infer returned types}}
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %do, %do, %do, %do, %lse causal scale = 0.25 dropout_p = 0.1 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>)
  return %dq : tensor<2x4x16x16xbf16>
}

// -----

func.func @attention_backward_grad_type(%do: tensor<2x8x16x16xf16>, %k: tensor<2x2x16x16xf16>, %lse: tensor<2x8x16xf32>) -> tensor<2x8x16x16xf16> {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention_backward' op inferred type(s) 'tensor<2x8x16x16xf16>', 'tensor<2x2x16x16xf16>', 'tensor<2x2x16x16xf16>' are incompatible with return type(s) of operation 'tensor<2x8x16x16xf16>', 'tensor<2x8x16x16xf16>', 'tensor<2x8x16x16xf16>'}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention_backward' op failed to infer returned types}}
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %do, %k, %k, %do, %lse causal scale = 0.25 : (tensor<2x8x16x16xf16>, tensor<2x8x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x8x16x16xf16>, tensor<2x8x16xf32>) -> (tensor<2x8x16x16xf16>, tensor<2x8x16x16xf16>, tensor<2x8x16x16xf16>)
  return %dq : tensor<2x8x16x16xf16>
}

// -----

//===----------------------------------------------------------------------===//
// fuse.cross_entropy, fuse.cross_entropy_backward
//===----------------------------------------------------------------------===//

func.func @cross_entropy_labels_shape(%logits: tensor<2x16x128xf32>, %labels: tensor<32xi64>) -> tensor<f32> {
  // expected-error @+2 {{'fuse.cross_entropy' op labels have shape 32 but logits 2x16x128 (classes last) need 2x16}}
  // expected-error @+1 {{'fuse.cross_entropy' op failed to infer returned types}}
  %loss = fuse.cross_entropy %logits, %labels : (tensor<2x16x128xf32>, tensor<32xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

func.func @cross_entropy_classes_first(%logits: tensor<128x32xf32>, %labels: tensor<32xi64>) -> tensor<f32> {
  // expected-error @+2 {{'fuse.cross_entropy' op labels have shape 32 but logits 128x32 (classes last) need 128}}
  // expected-error @+1 {{'fuse.cross_entropy' op failed to infer returned types}}
  %loss = fuse.cross_entropy %logits, %labels : (tensor<128x32xf32>, tensor<32xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

func.func @cross_entropy_scalar_logits(%logits: tensor<f32>, %labels: tensor<i64>) -> tensor<f32> {
  // expected-error @+2 {{'fuse.cross_entropy' op logits need a class dimension (rank >= 1)}}
  // expected-error @+1 {{'fuse.cross_entropy' op failed to infer returned types}}
  %loss = fuse.cross_entropy %logits, %labels : (tensor<f32>, tensor<i64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

func.func @cross_entropy_float_labels(%logits: tensor<32x128xf32>, %labels: tensor<32xf32>) -> tensor<f32> {
  // expected-error @+1 {{'fuse.cross_entropy' op operand #1 must be statically shaped tensor of 64-bit signless integer or 32-bit signless integer values, but got 'tensor<32xf32>'}}
  %loss = fuse.cross_entropy %logits, %labels : (tensor<32x128xf32>, tensor<32xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

func.func @cross_entropy_none_result(%logits: tensor<32x128xf32>, %labels: tensor<32xi64>) -> tensor<f32> {
  // expected-error @+2 {{'fuse.cross_entropy' op inferred type(s) 'tensor<32xf32>' are incompatible with return type(s) of operation 'tensor<f32>'}}
  // expected-error @+1 {{'fuse.cross_entropy' op failed to infer returned types}}
  %loss = fuse.cross_entropy %logits, %labels reduction = none : (tensor<32x128xf32>, tensor<32xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

func.func @cross_entropy_result_element_type(%logits: tensor<32x128xbf16>, %labels: tensor<32xi64>) -> tensor<f32> {
  // expected-error @+2 {{'fuse.cross_entropy' op inferred type(s) 'tensor<bf16>' are incompatible with return type(s) of operation 'tensor<f32>'}}
  // expected-error @+1 {{'fuse.cross_entropy' op failed to infer returned types}}
  %loss = fuse.cross_entropy %logits, %labels : (tensor<32x128xbf16>, tensor<32xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

func.func @cross_entropy_bad_reduction(%logits: tensor<32x128xf32>, %labels: tensor<32xi64>) -> tensor<f32> {
  // expected-error @+2 {{expected ::mlir::fuse::LossReduction to be one of: none, mean, sum}}
  // expected-error @+1 {{failed to parse Fuse_LossReductionAttr parameter 'value'}}
  %loss = fuse.cross_entropy %logits, %labels reduction = max : (tensor<32x128xf32>, tensor<32xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

func.func @cross_entropy_backward_grad_loss(%dloss: tensor<32xf32>, %logits: tensor<32x128xf32>, %labels: tensor<32xi64>) -> tensor<32x128xf32> {
  // expected-error @+2 {{'fuse.cross_entropy_backward' op grad_loss has type 'tensor<32xf32>' but the loss has type 'tensor<f32>'}}
  // expected-error @+1 {{'fuse.cross_entropy_backward' op failed to infer returned types}}
  %d = fuse.cross_entropy_backward %dloss, %logits, %labels : (tensor<32xf32>, tensor<32x128xf32>, tensor<32xi64>) -> tensor<32x128xf32>
  return %d : tensor<32x128xf32>
}

// -----

func.func @cross_entropy_backward_grad_loss_none(%dloss: tensor<f32>, %logits: tensor<32x128xf32>, %labels: tensor<32xi64>) -> tensor<32x128xf32> {
  // expected-error @+2 {{'fuse.cross_entropy_backward' op grad_loss has type 'tensor<f32>' but the loss has type 'tensor<32xf32>'}}
  // expected-error @+1 {{'fuse.cross_entropy_backward' op failed to infer returned types}}
  %d = fuse.cross_entropy_backward %dloss, %logits, %labels reduction = none : (tensor<f32>, tensor<32x128xf32>, tensor<32xi64>) -> tensor<32x128xf32>
  return %d : tensor<32x128xf32>
}

// -----

func.func @cross_entropy_backward_grad_loss_element_type(%dloss: tensor<f32>, %logits: tensor<32x128xbf16>, %labels: tensor<32xi32>) -> tensor<32x128xbf16> {
  // expected-error @+2 {{'fuse.cross_entropy_backward' op grad_loss has type 'tensor<f32>' but the loss has type 'tensor<bf16>'}}
  // expected-error @+1 {{'fuse.cross_entropy_backward' op failed to infer returned types}}
  %d = fuse.cross_entropy_backward %dloss, %logits, %labels : (tensor<f32>, tensor<32x128xbf16>, tensor<32xi32>) -> tensor<32x128xbf16>
  return %d : tensor<32x128xbf16>
}

// -----

func.func @cross_entropy_backward_labels_shape(%dloss: tensor<f32>, %logits: tensor<32x128xf32>, %labels: tensor<2x16xi64>) -> tensor<32x128xf32> {
  // expected-error @+2 {{'fuse.cross_entropy_backward' op labels have shape 2x16 but logits 32x128 (classes last) need 32}}
  // expected-error @+1 {{'fuse.cross_entropy_backward' op failed to infer returned types}}
  %d = fuse.cross_entropy_backward %dloss, %logits, %labels : (tensor<f32>, tensor<32x128xf32>, tensor<2x16xi64>) -> tensor<32x128xf32>
  return %d : tensor<32x128xf32>
}

// -----

func.func @cross_entropy_backward_scalar_logits(%dloss: tensor<f32>, %logits: tensor<f32>, %labels: tensor<i64>) -> tensor<f32> {
  // expected-error @+2 {{'fuse.cross_entropy_backward' op logits need a class dimension (rank >= 1)}}
  // expected-error @+1 {{'fuse.cross_entropy_backward' op failed to infer returned types}}
  %d = fuse.cross_entropy_backward %dloss, %logits, %labels : (tensor<f32>, tensor<f32>, tensor<i64>) -> tensor<f32>
  return %d : tensor<f32>
}

// -----

func.func @cross_entropy_backward_result(%dloss: tensor<bf16>, %logits: tensor<32x128xbf16>, %labels: tensor<32xi64>) -> tensor<32x128xf32> {
  // expected-error @+2 {{'fuse.cross_entropy_backward' op inferred type(s) 'tensor<32x128xbf16>' are incompatible with return type(s) of operation 'tensor<32x128xf32>'}}
  // expected-error @+1 {{'fuse.cross_entropy_backward' op failed to infer returned types}}
  %d = fuse.cross_entropy_backward %dloss, %logits, %labels : (tensor<bf16>, tensor<32x128xbf16>, tensor<32xi64>) -> tensor<32x128xf32>
  return %d : tensor<32x128xf32>
}

// -----

//===----------------------------------------------------------------------===//
// fuse.fusion, fuse.yield
//===----------------------------------------------------------------------===//

func.func @fusion_too_few_block_arguments(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fuse.fusion' op body has 1 arguments but the fusion has 2 inputs}}
  %r = fuse.fusion loop (%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    fuse.yield %a : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @fusion_block_arguments_without_inputs() -> tensor<4x8xf32> {
  // expected-error @+1 {{'fuse.fusion' op body has 1 arguments but the fusion has 0 inputs}}
  %r = fuse.fusion loop () : () -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    fuse.yield %a : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @fusion_block_argument_type(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fuse.fusion' op body argument #1 has type 'tensor<4x8xbf16>' but input #1 has type 'tensor<4x8xf32>'}}
  %r = fuse.fusion loop (%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xbf16>):
    fuse.yield %a : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @fusion_yield_count(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %r:2 = fuse.fusion loop (%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %e = fuse.exp %a : tensor<4x8xf32>
    // expected-error @+1 {{'fuse.yield' op yields 1 values but the enclosing fusion has 2 results}}
    fuse.yield %e : tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

func.func @fusion_yield_nothing(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = fuse.fusion loop (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{'fuse.yield' op yields 0 values but the enclosing fusion has 1 results}}
    fuse.yield
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @fusion_yield_type(%x: tensor<32x128xf32>) -> tensor<32xf32> {
  %r = fuse.fusion row_reduction (%x) : (tensor<32x128xf32>) -> tensor<32xf32> {
  ^bb0(%a: tensor<32x128xf32>):
    %s = fuse.reduce sum %a, dims = [1] keepdim : (tensor<32x128xf32>) -> tensor<32x1xf32>
    // expected-error @+1 {{'fuse.yield' op value #0 has type 'tensor<32x1xf32>' but fusion result #0 has type 'tensor<32xf32>'}}
    fuse.yield %s : tensor<32x1xf32>
  }
  return %r : tensor<32xf32>
}

// -----

func.func @yield_outside_fusion(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fuse.yield' op expects parent op 'fuse.fusion'}}
  fuse.yield %x : tensor<4x8xf32>
}

// -----

// fuse.yield is the only terminator allowed in a fusion body.
func.func @fusion_return_terminator(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = fuse.fusion loop (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{'func.return' op expects parent op 'func.func'}}
    func.return %a : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @fusion_no_terminator(%x: tensor<4x8xf32>) {
  fuse.fusion loop (%x) : (tensor<4x8xf32>) -> () {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{block with no terminator}}
    %e = fuse.exp %a : tensor<4x8xf32>
  }
  return
}

// -----

func.func @fusion_empty_body() {
  // expected-error @+1 {{'fuse.fusion' op expects a non-empty block}}
  fuse.fusion loop () : () -> () {
  }
  return
}

// -----

func.func @fusion_two_blocks() {
  // expected-error @+1 {{'fuse.fusion' op expects region #0 to have 0 or 1 blocks}}
  "fuse.fusion"() <{kind = #fuse<fusion_kind loop>}> ({
    "fuse.yield"() : () -> ()
  ^bb1:
    "fuse.yield"() : () -> ()
  }) : () -> ()
  return
}

// -----

func.func @fusion_f64_input(%x: tensor<4xf64>) {
  // expected-error @+1 {{'fuse.fusion' op operand #0 must be variadic of statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 32-bit signless integer or 1-bit signless integer values, but got 'tensor<4xf64>'}}
  fuse.fusion loop (%x) : (tensor<4xf64>) -> () {
  ^bb0(%a: tensor<4xf64>):
    fuse.yield
  }
  return
}

// -----

// The body is isolated from above: values from outside are not visible.
func.func @fusion_captures_value(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %r = fuse.fusion loop () : () -> tensor<4x8xf32> {
    // expected-error @+1 {{using value defined outside the region}}
    %e = fuse.exp %x : tensor<4x8xf32>
    fuse.yield %e : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @fusion_bad_kind(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{expected ::mlir::fuse::FusionKind to be one of: loop, row_reduction, column_reduction, gemm_epilogue, attention}}
  // expected-error @+1 {{failed to parse Fuse_FusionKindAttr parameter 'value'}}
  fuse.fusion elementwise (%x) : (tensor<4x8xf32>) -> () {
  ^bb0(%a: tensor<4x8xf32>):
    fuse.yield
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// Function argument attributes
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'fuse.name' on argument #1 must be a string, got 3 : i64}}
func.func @name_not_a_string(%wte: tensor<128x64xf32> {fuse.name = "transformer.wte.weight"}, %wpe: tensor<16x64xf32> {fuse.name = 3}) {
  return
}

// -----

// expected-error @+1 {{unknown fuse argument attribute 'fuse.nmae' on argument #0 (known: 'fuse.name', 'fuse.index_bound', 'fuse.donated', 'fuse.arena_offset')}}
func.func @unknown_argument_attribute(%wte: tensor<128x64xf32> {fuse.nmae = "transformer.wte.weight"}) {
  return
}

// -----

// expected-error @+1 {{'fuse.index_bound' on argument #0 must be a positive integer, got 0 : i64}}
func.func @index_bound_not_positive(%ids: tensor<4xi64> {fuse.index_bound = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{'fuse.index_bound' on argument #0 must be a positive integer, got "50257"}}
func.func @index_bound_not_an_integer(%ids: tensor<4xi64> {fuse.index_bound = "50257"}) {
  return
}

// -----

// expected-error @+1 {{'fuse.index_bound' on argument #0 needs an integer tensor, not 'tensor<4xf32>'}}
func.func @index_bound_on_float(%x: tensor<4xf32> {fuse.index_bound = 8 : i64}) {
  return
}

// -----

// expected-error @+1 {{'fuse.name' on argument #2 must be a string, got ["idx"]}}
func.func @argument_name_not_a_string_after_names(%a: tensor<4xf32> {fuse.name = "a"}, %b: tensor<4xf32> {fuse.name = "b"}, %c: tensor<4xi64> {fuse.name = ["idx"]}) {
  return
}

// -----

// expected-error @+1 {{arguments #0 and #2 are both named "h" ('fuse.name' must be unique)}}
func.func @argument_names_repeat(%a: tensor<4xf32> {fuse.name = "h"}, %b: tensor<4xf32> {fuse.name = "w"}, %c: tensor<4xf32> {fuse.name = "h"}) {
  return
}

// -----

// expected-error @+1 {{unknown fuse result attribute 'fuse.nmae' on result #0 (known: 'fuse.name', 'fuse.arena_offset', 'fuse.in_arena')}}
func.func @unknown_result_attribute(%x: tensor<4xf32>) -> (tensor<4xf32> {fuse.nmae = "y"}) {
  return %x : tensor<4xf32>
}

// -----

// fuse.index_bound belongs on arguments only.
// expected-error @+1 {{unknown fuse result attribute 'fuse.index_bound' on result #1 (known: 'fuse.name', 'fuse.arena_offset', 'fuse.in_arena')}}
func.func @index_bound_on_result(%x: tensor<4xi64>) -> (tensor<4xi64> {fuse.name = "ids"}, tensor<4xi64> {fuse.index_bound = 8 : i64}) {
  return %x, %x : tensor<4xi64>, tensor<4xi64>
}

// -----

// expected-error @+1 {{'fuse.name' on result #1 must be a string, got 3 : i64}}
func.func @result_name_not_a_string(%x: tensor<4xf32>) -> (tensor<4xf32> {fuse.name = "y"}, tensor<4xf32> {fuse.name = 3}) {
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{results #1 and #2 are both named "logits" ('fuse.name' must be unique)}}
func.func @result_names_repeat(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32> {fuse.name = "logits"}, tensor<4xf32> {fuse.name = "logits"}) {
  return %x, %x, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @fuse_attribute_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown fuse attribute 'fuse.bogus' on an operation (known: 'fuse.buffers', 'fuse.arena_size', 'fuse.arena_lower_bound', 'fuse.gemm_staging_bytes'; 'fuse.name', 'fuse.index_bound' and 'fuse.donated' belong on function arguments, 'fuse.name' on results)}}
  %y = fuse.exp %x {fuse.bogus = 1 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{'fuse.gemm_staging_bytes' must be positive}}
func.func @staging_bound_zero(%x: tensor<4xf32>) -> tensor<4xf32> attributes {fuse.gemm_staging_bytes = 0 : i64} {
  return %x : tensor<4xf32>
}

// -----

func.func @staging_bound_on_an_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fuse.gemm_staging_bytes' belongs on a module or a function}}
  %y = fuse.exp %x {fuse.gemm_staging_bytes = 1024 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @nested_fusion(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fuse.fusion loop (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'fuse.fusion' op cannot be nested in another 'fuse.fusion'}}
    %b = fuse.fusion loop (%a) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%c: tensor<4xf32>):
      fuse.yield %c : tensor<4xf32>
    }
    fuse.yield %b : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @rng_seed_without_offset(%q: tensor<2x4x16x16xbf16>, %s: tensor<i64>) {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op rng needs both a seed and an offset}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o:2 = "fuse.scaled_dot_product_attention"(%q, %q, %q, %s) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0>, scale = 2.5e-01 : f64, dropout_p = 1.0e-01 : f64}> : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<i64>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return
}

// -----

func.func @scale_infinite(%q: tensor<2x4x16x16xbf16>) {
  // expected-error @+2 {{'fuse.scaled_dot_product_attention' op scale must be finite and > 0, got INF}}
  // expected-error @+1 {{'fuse.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q scale = 0x7FF0000000000000 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return
}
