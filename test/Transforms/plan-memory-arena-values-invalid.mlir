// Values left in the arena that the plan cannot honour, and malformed
// attributes, are errors that name the result or argument.
// RUN: fuse-opt %s -split-input-file -fuse-plan-memory -verify-diagnostics -o /dev/null

// An offset demanded for an argument returned as it is.
// expected-error @+1 {{fuse-plan-memory: result #0 of @argument_at_offset is to be left at arena offset 0, but it is not a value the function computes (an argument or a constant)}}
func.func @argument_at_offset(%x: tensor<16x16xf32>) -> (tensor<16x16xf32> {fuse.arena_offset = 0 : i64}) {
  return %x : tensor<16x16xf32>
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
