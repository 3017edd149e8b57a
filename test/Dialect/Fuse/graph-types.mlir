// RUN: fuse-opt %s -split-input-file -verify-diagnostics

// The graph type check (GraphVerification.h), which fuse-opt runs on every
// input after the op verifiers: values no op verifier sees (a function's
// arguments and results, a value returned as it is) must be static tensors
// of a stored element type, small enough for int64 sizes. One diagnostic
// per graph, at the first offending value.

// expected-error @+1 {{argument #0 of @dynamic_argument has type 'tensor<?xi64>': dynamic shapes are not supported (Fuse graphs are static-shaped: every buffer is planned before the graph runs)}}
func.func @dynamic_argument(%i: tensor<?xi64>) -> tensor<?xi64> {
  return %i : tensor<?xi64>
}

// -----

// A declaration has no body: the function's location.
// expected-error @+1 {{result #1 of @dynamic_result has type 'tensor<4x?xf32>': dynamic shapes are not supported}}
func.func private @dynamic_result(tensor<4xf32>) -> (tensor<4xf32>, tensor<4x?xf32>)

// -----

// expected-error @+1 {{argument #1 of @unranked has type 'tensor<*xf32>': unranked tensors are not supported}}
func.func @unranked(%x: tensor<4xf32>, %u: tensor<*xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0 of @scalar has type 'f32': not a tensor (Fuse graph values are ranked tensors)}}
func.func @scalar(%s: f32) -> f32 {
  return %s : f32
}

// -----

// expected-error @+1 {{argument #0 of @f64_argument has type 'tensor<4xf64>': not an element type Fuse stores (f32, f16, bf16, i64, i32, i1)}}
func.func @f64_argument(%x: tensor<4xf64>) -> tensor<4xf64> {
  return %x : tensor<4xf64>
}

// -----

// expected-error @+1 {{argument #0 of @index_argument has type 'tensor<4xindex>': not an element type Fuse stores}}
func.func @index_argument(%x: tensor<4xindex>) -> tensor<4xindex> {
  return %x : tensor<4xindex>
}

// -----

// 2^68 elements: the count wraps to 0 in int64.
// expected-error @+1 {{argument #0 of @too_many_elements has type 'tensor<268435456x1099511627776xf32>': too large (over 2^48 bytes = 256 TiB, the most a Fuse tensor may take, so that sizes, offsets and their sums fit in int64)}}
func.func @too_many_elements(%x: tensor<268435456x1099511627776xf32>) -> tensor<268435456x1099511627776xf32> {
  return %x : tensor<268435456x1099511627776xf32>
}

// -----

// 2^47 f32 elements: 2^49 bytes, over the limit.
// expected-error @+1 {{argument #0 of @too_many_bytes has type 'tensor<140737488355328xf32>': too large}}
func.func @too_many_bytes(%x: tensor<140737488355328xf32>) -> tensor<140737488355328xf32> {
  return %x : tensor<140737488355328xf32>
}

// -----

// No elements, but the other dimensions multiply past int64 (a stride of
// 2^80).
// expected-error @+1 {{argument #0 of @empty_but_huge has type 'tensor<0x1099511627776x1099511627776xf32>': too large}}
func.func @empty_but_huge(%x: tensor<0x1099511627776x1099511627776xf32>) -> tensor<0x1099511627776x1099511627776xf32> {
  return %x : tensor<0x1099511627776x1099511627776xf32>
}

// -----

// An op result: a broadcast of a small operand to 2^68 elements, then a sum
// (which summed nothing and returned 0).
func.func @broadcast_too_large(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'fuse.broadcast_in_dim' op result #0 has type 'tensor<268435456x1099511627776xf32>': too large}}
  %b = fuse.broadcast_in_dim %x, dims = [] : (tensor<f32>) -> tensor<268435456x1099511627776xf32>
  %s = fuse.reduce sum %b, dims = [0, 1] : (tensor<268435456x1099511627776xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// The largest allowed: exactly 2^48 bytes (2^46 f32, 2^48 i1, a byte
// each); and 0-size tensors.
func.func @at_the_limit(%x: tensor<70368744177664xf32>, %b: tensor<16777216x16777216xi1>, %e: tensor<0x4xf32>) -> (tensor<70368744177664xf32>, tensor<16777216x16777216xi1>, tensor<0x4xf32>) {
  return %x, %b, %e : tensor<70368744177664xf32>, tensor<16777216x16777216xi1>, tensor<0x4xf32>
}
