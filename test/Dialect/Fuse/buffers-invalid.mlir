// RUN: fuse-opt %s -split-input-file -verify-diagnostics

// Every rule of the memory plan's attributes, one split per rule.

func.func @where_misspelled(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected 'offset', 'argument' or 'external', got 'offst'}}
  %a = fuse.exp %x {fuse.buffers = [#fuse.buffer<offst = 0, size = 16, live = [0, 0]>]} : tensor<4xf32>
  return
}

// -----

func.func @missing_live(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected ','}}
  %a = fuse.exp %x {fuse.buffers = [#fuse.buffer<offset = 0, size = 16>]} : tensor<4xf32>
  return
}

// -----

func.func @offset_not_aligned(%x: tensor<4xf32>) {
  // expected-error @+1 {{buffer offset 100 is not a non-negative multiple of 256}}
  %a = fuse.exp %x {fuse.buffers = [#fuse.buffer<offset = 100, size = 16, live = [0, 0]>]} : tensor<4xf32>
  return
}

// -----

func.func @negative_size(%x: tensor<4xf32>) {
  // expected-error @+1 {{buffer size -16 is negative}}
  %a = fuse.exp %x {fuse.buffers = [#fuse.buffer<external, size = -16, live = [0, 0]>]} : tensor<4xf32>
  return
}

// -----

func.func @live_range_reversed(%x: tensor<4xf32>) {
  // expected-error @+1 {{buffer live range [3, 1] is empty or negative}}
  %a = fuse.exp %x {fuse.buffers = [#fuse.buffer<offset = 0, size = 16, live = [3, 1]>]} : tensor<4xf32>
  return
}

// -----

func.func @negative_argument(%x: tensor<4xf32>) {
  // expected-error @+1 {{buffer argument index -1 is negative}}
  %a = fuse.exp %x {fuse.buffers = [#fuse.buffer<argument = -1, size = 16, live = [0, 0]>]} : tensor<4xf32>
  return
}

// -----

func.func @buffers_not_an_array(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fuse.buffers' must be an array of #fuse.buffer, got 3 : i64}}
  %a = fuse.exp %x {fuse.buffers = 3} : tensor<4xf32>
  return
}

// -----

func.func @one_entry_per_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fuse.buffers' has 2 entries for 1 results}}
  %a = fuse.exp %x {fuse.buffers = [#fuse.buffer<offset = 0, size = 16, live = [0, 0]>, #fuse.buffer<offset = 256, size = 16, live = [0, 0]>]} : tensor<4xf32>
  return
}

// -----

func.func @entry_not_a_buffer(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fuse.buffers' entry #0 must be a #fuse.buffer, got 0 : i64}}
  %a = fuse.exp %x {fuse.buffers = [0]} : tensor<4xf32>
  return
}

// -----

func.func @size_of_another_type(%x: tensor<16x16xf32>) {
  // expected-error @+1 {{'fuse.buffers' entry #0 has size 512, but result #0 ('tensor<16x16xf32>') takes 1024 bytes}}
  %a = fuse.exp %x {fuse.buffers = [#fuse.buffer<offset = 0, size = 512, live = [0, 0]>]} : tensor<16x16xf32>
  return
}

// -----

// fuse.buffers is checked before the op's own type constraints: an index
// tensor (no bit width) reaches it, and the op then reports the type (this
// crashed in FloatType::getWidth). So does a result too large for int64
// bytes.
func.func @size_of_an_index_tensor(%x: tensor<4xindex>) {
  // expected-error @+1 {{'fuse.neg' op operand #0 must be statically shaped tensor of}}
  %a = fuse.neg %x {fuse.buffers = [#fuse.buffer<external, size = 32, live = [0, 0]>]} : tensor<4xindex>
  return
}

// -----

func.func @size_of_a_huge_tensor(%x: tensor<f32>) {
  // expected-error @+1 {{'fuse.broadcast_in_dim' op result #0 has type 'tensor<268435456x1099511627776xf32>': too large}}
  %a = fuse.broadcast_in_dim %x, dims = [] {fuse.buffers = [#fuse.buffer<offset = 0, size = 0, live = [0, 0]>]} : (tensor<f32>) -> tensor<268435456x1099511627776xf32>
  return
}

// -----

func.func @no_such_argument(%x: tensor<4xf32> {fuse.donated}) {
  // expected-error @+1 {{'fuse.buffers' entry #0 is in argument #1, but the function has 1 arguments}}
  %a = fuse.exp %x {fuse.buffers = [#fuse.buffer<argument = 1, size = 16, live = [0, 0]>]} : tensor<4xf32>
  return
}

// -----

// Only a view may share an argument that the caller keeps.
func.func @argument_not_donated(%x: tensor<4xf32>) {
  %v = fuse.reshape %x {fuse.buffers = [#fuse.buffer<argument = 0, size = 16, live = [0, 1]>]} : (tensor<4xf32>) -> tensor<2x2xf32>
  // expected-error @+1 {{'fuse.buffers' entry #0 writes over argument #0, which is not donated ('fuse.donated')}}
  %a = fuse.exp %x {fuse.buffers = [#fuse.buffer<argument = 0, size = 16, live = [1, 1]>]} : tensor<4xf32>
  return
}

// -----

func.func @inside_a_fusion(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fuse.fusion loop (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'fuse.buffers' belongs only on ops directly in a function body}}
    %b = fuse.exp %a {fuse.buffers = [#fuse.buffer<offset = 0, size = 16, live = [0, 0]>]} : tensor<4xf32>
    fuse.yield %b : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{'fuse.buffers' belongs only on ops directly in a function body}}
func.func @on_a_function() attributes {fuse.buffers = []} {
  return
}

// -----

// expected-error @+1 {{'fuse.arena_size' must be a non-negative i64, got 256 : i32}}
func.func @arena_size_not_i64() attributes {fuse.arena_size = 256 : i32} {
  return
}

// -----

// expected-error @+1 {{'fuse.arena_lower_bound' must be a non-negative i64, got -1 : i64}}
module attributes {fuse.arena_lower_bound = -1 : i64} {
}

// -----

// expected-error @+1 {{'fuse.arena_size' (100) is not a multiple of 256}}
func.func @arena_size_not_aligned() attributes {fuse.arena_size = 100 : i64} {
  return
}

// -----

// expected-error @+1 {{'fuse.arena_size' (256) is below 'fuse.arena_lower_bound' (512)}}
func.func @arena_below_its_bound() attributes {fuse.arena_lower_bound = 512 : i64, fuse.arena_size = 256 : i64} {
  return
}

// -----

func.func @arena_size_on_an_op(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fuse.arena_size' belongs on a module or a function}}
  %a = fuse.exp %x {fuse.arena_size = 256 : i64} : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{'fuse.donated' on argument #0 takes no value, got true}}
func.func @donated_with_a_value(%x: tensor<4xf32> {fuse.donated = true}) {
  return
}
