// RUN: fuse-opt %s -split-input-file | fuse-opt -split-input-file | FileCheck %s
// RUN: fuse-opt %s -split-input-file -mlir-print-op-generic | fuse-opt -split-input-file | FileCheck %s

// Round trip of the memory plan's attributes, through the custom and the
// generic form: #fuse.buffer in each of its three placements, one per
// result in fuse.buffers, the arena's size and lower bound on the module
// and the function, and fuse.donated on an argument.

// CHECK: module attributes {fuse.arena_lower_bound = 1024 : i64, fuse.arena_size = 1280 : i64}
// CHECK-LABEL: func.func @placements
// CHECK-SAME: (%{{.+}}: tensor<16x16xf32>, %{{.+}}: tensor<16x16xf32> {fuse.donated, fuse.name = "p"})
// CHECK-SAME: attributes {fuse.arena_lower_bound = 1024 : i64, fuse.arena_size = 1280 : i64}
// CHECK: fuse.exp %{{.+}} {fuse.buffers = [#fuse.buffer<offset = 256, size = 1024, live = [0, 2]>]} : tensor<16x16xf32>
// CHECK: fuse.reshape %{{.+}} {fuse.buffers = [#fuse.buffer<argument = 0, size = 1024, live = [0, 3]>]}
// CHECK: fuse.mul %{{.+}}, %{{.+}} {fuse.buffers = [#fuse.buffer<argument = 1, size = 1024, live = [2, 3]>]}
// CHECK: fuse.neg %{{.+}} {fuse.buffers = [#fuse.buffer<external, size = 1024, live = [3, 3]>]}
module attributes {fuse.arena_lower_bound = 1024 : i64, fuse.arena_size = 1280 : i64} {
  func.func @placements(%x: tensor<16x16xf32>, %p: tensor<16x16xf32> {fuse.donated, fuse.name = "p"}) -> (tensor<16x16xf32>, tensor<256xf32>, tensor<16x16xf32>)
      attributes {fuse.arena_lower_bound = 1024 : i64, fuse.arena_size = 1280 : i64} {
    %a = fuse.exp %x {fuse.buffers = [#fuse.buffer<offset = 256, size = 1024, live = [0, 2]>]} : tensor<16x16xf32>
    %v = fuse.reshape %x {fuse.buffers = [#fuse.buffer<argument = 0, size = 1024, live = [0, 3]>]} : (tensor<16x16xf32>) -> tensor<256xf32>
    %u = fuse.mul %p, %a {fuse.buffers = [#fuse.buffer<argument = 1, size = 1024, live = [2, 3]>]} : tensor<16x16xf32>
    %n = fuse.neg %a {fuse.buffers = [#fuse.buffer<external, size = 1024, live = [3, 3]>]} : tensor<16x16xf32>
    return %u, %v, %n : tensor<16x16xf32>, tensor<256xf32>, tensor<16x16xf32>
  }
}

// -----

// One entry per result; an empty tensor has an empty buffer.
// CHECK-LABEL: func.func @several_results
// CHECK: fuse.scaled_dot_product_attention {{.*}} {fuse.buffers = [#fuse.buffer<offset = 0, size = 4096, live = [0, 1]>, #fuse.buffer<offset = 4096, size = 512, live = [0, 0]>]}
// CHECK: fuse.exp %{{.+}} {fuse.buffers = [#fuse.buffer<offset = 0, size = 0, live = [2, 2]>]} : tensor<0x4xf32>
func.func @several_results(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>, %e: tensor<0x4xf32>) -> tensor<2x4x16x8xf32> {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.35 {fuse.buffers = [#fuse.buffer<offset = 0, size = 4096, live = [0, 1]>, #fuse.buffer<offset = 4096, size = 512, live = [0, 0]>]} : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16xf32>)
  %y = fuse.neg %o {fuse.buffers = [#fuse.buffer<external, size = 4096, live = [1, 1]>]} : tensor<2x4x16x8xf32>
  %z = fuse.exp %e {fuse.buffers = [#fuse.buffer<offset = 0, size = 0, live = [2, 2]>]} : tensor<0x4xf32>
  return %y : tensor<2x4x16x8xf32>
}

// -----

// The attribute parses on its own too, and elsewhere than in fuse.buffers.
// CHECK-LABEL: func.func @standalone
// CHECK-SAME: attributes {placement = #fuse.buffer<offset = 0, size = 8, live = [1, 1]>}
func.func @standalone() attributes {placement = #fuse.buffer<offset = 0, size = 8, live = [1, 1]>} {
  return
}
