// RUN: fuse-opt %s -split-input-file -fuse-print-memory -verify-diagnostics -o /dev/null
// RUN: not fuse-opt %s -fuse-print-memory -o /dev/null 2>&1 | FileCheck %s
// CHECK: error: fuse-print-memory: @not_planned has no memory plan (no 'fuse.arena_size'): run fuse-plan-memory first

// A function that has not been planned is an error that names it.
// expected-error @+1 {{fuse-print-memory: @not_planned has no memory plan (no 'fuse.arena_size'): run fuse-plan-memory first}}
func.func @not_planned(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fuse.exp %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// An op added after planning (here %b) has no placement: the plan is stale.
func.func @stale(%x: tensor<4xf32>) -> tensor<4xf32> attributes {fuse.arena_lower_bound = 256 : i64, fuse.arena_size = 256 : i64} {
  %a = fuse.exp %x {fuse.buffers = [#fuse.buffer<offset = 0, size = 16, live = [0, 1]>]} : tensor<4xf32>
  // expected-error @+1 {{fuse-print-memory: no 'fuse.buffers' on this op, though @stale has a memory plan: the plan is stale (run fuse-plan-memory again)}}
  %b = fuse.neg %a : tensor<4xf32>
  %c = fuse.abs %b {fuse.buffers = [#fuse.buffer<external, size = 16, live = [2, 2]>]} : tensor<4xf32>
  return %c : tensor<4xf32>
}
