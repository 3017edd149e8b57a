// Values left in the arena that the plan cannot honour, and malformed
// attributes, are errors that name the result or argument.
// RUN: fuse-opt %s -split-input-file -fuse-plan-memory -verify-diagnostics -o /dev/null

// expected-error @+1 {{fuse-plan-memory: result #0 of @argument_in_arena is to be left in the arena, but it is not a value the function computes (an argument or a constant)}}
func.func @argument_in_arena(%x: tensor<16x16xf32>) -> (tensor<16x16xf32> {fuse.in_arena}) {
  return %x : tensor<16x16xf32>
}

// -----

// expected-error @+1 {{fuse-plan-memory: result #1 of @twice returns a value that another result returns too, one in the arena and the other in the caller's memory}}
func.func @twice(%x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32> {fuse.in_arena}) {
  %a = fuse.exp %x : tensor<16x16xf32>
  return %a, %a : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// expected-error @+1 {{'fuse.arena_offset' on argument #0 must be a non-negative i64 multiple of 256, got 100 : i64}}
func.func @unaligned(%x: tensor<16x16xf32> {fuse.arena_offset = 100 : i64}) -> tensor<16x16xf32> {
  %a = fuse.exp %x : tensor<16x16xf32>
  return %a : tensor<16x16xf32>
}

// -----

// expected-error @+1 {{'fuse.in_arena' on result #0 takes no value, got 1 : i64}}
func.func @in_arena_value(%x: tensor<16x16xf32>) -> (tensor<16x16xf32> {fuse.in_arena = 1 : i64}) {
  %a = fuse.exp %x : tensor<16x16xf32>
  return %a : tensor<16x16xf32>
}

// -----

// Two arguments the caller left at overlapping bytes, both live at once.
// expected-error @+1 {{fuse-plan-memory: cannot pack @overlapping}}
func.func @overlapping(%s: tensor<16x16xf32> {fuse.arena_offset = 0 : i64},
                       %t: tensor<16x16xf32> {fuse.arena_offset = 512 : i64}) -> tensor<16x16xf32> {
  %a = fuse.add %s, %t : tensor<16x16xf32>
  return %a : tensor<16x16xf32>
}
