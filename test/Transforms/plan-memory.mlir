// RUN: fuse-opt %s -split-input-file -fuse-plan-memory | FileCheck %s
// RUN: fuse-opt %s -split-input-file -fuse-plan-memory=strategy=linear | FileCheck %s --check-prefix=LINEAR

// Planning again, from planned IR that went through the printer and the
// parser, gives the same plan.
// RUN: fuse-opt %s -split-input-file -fuse-plan-memory | fuse-opt -split-input-file -fuse-plan-memory | FileCheck %s

// The attributes do not disturb the reference interpreter.
// RUN: fuse-run %s --entry donated --check-pipeline=fuse-plan-memory | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %S/../graphs/gpt2-tiny-train.mlir --inputs %S/../graphs/gpt2-tiny-train.inputs.npz --check-pipeline='fuse-pipeline,fuse-plan-memory' | FileCheck %s --check-prefix=SAME
// SAME: check-pipeline: PASS

// Positions count the top-level ops from 0, the terminator excluded; a
// buffer lives from its writer to its last reader, both included. f32
// 16x16 is 1024 bytes.

// An elementwise result takes over the input that dies at its op: the
// chain is one buffer at one offset. The argument is the caller's and is
// never written; the returned value is external.
// CHECK: module attributes {fuse.arena_lower_bound = 1024 : i64, fuse.arena_size = 1024 : i64}
// CHECK-LABEL: func.func @elementwise_in_place
// CHECK-SAME: attributes {fuse.arena_lower_bound = 1024 : i64, fuse.arena_size = 1024 : i64}
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = [[OFF:[0-9]+]], size = 1024, live = [0, 1]>]
// CHECK-NEXT: fuse.neg {{.*}}[#fuse.buffer<offset = [[OFF]], size = 1024, live = [1, 2]>]
// CHECK-NEXT: fuse.mul {{.*}}[#fuse.buffer<offset = [[OFF]], size = 1024, live = [2, 3]>]
// CHECK-NEXT: fuse.add {{.*}}[#fuse.buffer<external, size = 1024, live = [3, 3]>]
// The linear strategy keeps in-place chains too: they are one block.
// LINEAR-LABEL: func.func @elementwise_in_place
// LINEAR-SAME: fuse.arena_size = 1024 : i64
func.func @elementwise_in_place(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %a = fuse.exp %x : tensor<16x16xf32>
  %b = fuse.neg %a : tensor<16x16xf32>
  %c = fuse.mul %b, %b : tensor<16x16xf32>
  %d = fuse.add %c, %x : tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}

// -----

// %a is read after %b is written, so %b cannot take it over; %c can take
// over %b (the first input that dies at its op).
// CHECK-LABEL: func.func @read_later
// CHECK-SAME: attributes {fuse.arena_lower_bound = 2048 : i64, fuse.arena_size = 2048 : i64}
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = [[A:[0-9]+]], size = 1024, live = [0, 2]>]
// CHECK-NEXT: fuse.neg {{.*}}[#fuse.buffer<offset = [[B:[0-9]+]], size = 1024, live = [1, 2]>]
// CHECK-NEXT: fuse.add {{.*}}[#fuse.buffer<offset = [[B]], size = 1024, live = [2, 3]>]
// CHECK-NEXT: fuse.abs {{.*}}[#fuse.buffer<external, size = 1024, live = [3, 3]>]
func.func @read_later(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %a = fuse.exp %x : tensor<16x16xf32>
  %b = fuse.neg %a : tensor<16x16xf32>
  %c = fuse.add %b, %a : tensor<16x16xf32>
  %d = fuse.abs %c : tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}

// -----

// A matmul never writes over its input, nor a cast over one of another
// element size. Best fit puts the cast where the exp was (dead by then);
// the linear strategy gives every buffer its own slot.
// CHECK-LABEL: func.func @not_in_place
// CHECK-SAME: attributes {fuse.arena_lower_bound = 2048 : i64, fuse.arena_size = 2048 : i64}
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = [[A:[0-9]+]], size = 1024, live = [0, 1]>]
// CHECK-NEXT: fuse.matmul {{.*}}[#fuse.buffer<offset = [[M:[0-9]+]], size = 1024, live = [1, 2]>]
// CHECK-NEXT: fuse.cast {{.*}}[#fuse.buffer<offset = [[A]], size = 512, live = [2, 3]>]
// CHECK-NEXT: fuse.neg {{.*}}[#fuse.buffer<external, size = 512, live = [3, 3]>]
// LINEAR-LABEL: func.func @not_in_place
// LINEAR-SAME: attributes {fuse.arena_lower_bound = 2048 : i64, fuse.arena_size = 2560 : i64}
// LINEAR-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = 0, size = 1024, live = [0, 1]>]
// LINEAR-NEXT: fuse.matmul {{.*}}[#fuse.buffer<offset = 1024, size = 1024, live = [1, 2]>]
// LINEAR-NEXT: fuse.cast {{.*}}[#fuse.buffer<offset = 2048, size = 512, live = [2, 3]>]
func.func @not_in_place(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xbf16> {
  %a = fuse.exp %x : tensor<16x16xf32>
  %m = fuse.matmul %a, %w : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %c = fuse.cast %m : tensor<16x16xf32> to tensor<16x16xbf16>
  %d = fuse.neg %c : tensor<16x16xbf16>
  return %d : tensor<16x16xbf16>
}

// -----

// A reshape is a view: it carries the placement of the buffer it views
// (an argument's memory for a view of an argument), and a read through it
// keeps that buffer live: %a is read at position 5 through %v, so %b (at
// 3) does not take it over. %c takes over %b through its view %bv.
// CHECK-LABEL: func.func @views
// CHECK-NEXT: fuse.reshape {{.*}}[#fuse.buffer<argument = 0, size = 1024, live = [0, 6]>]
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = [[A:[0-9]+]], size = 1024, live = [1, 5]>]
// CHECK-NEXT: fuse.reshape {{.*}}[#fuse.buffer<offset = [[A]], size = 1024, live = [1, 5]>]
// CHECK-NEXT: fuse.neg {{.*}}[#fuse.buffer<offset = [[B:[0-9]+]], size = 1024, live = [3, 5]>]
// CHECK-NEXT: fuse.reshape {{.*}}[#fuse.buffer<offset = [[B]], size = 1024, live = [3, 5]>]
// CHECK-NEXT: fuse.add {{.*}}[#fuse.buffer<offset = [[B]], size = 1024, live = [5, 6]>]
// CHECK-NEXT: fuse.add {{.*}}[#fuse.buffer<external, size = 1024, live = [6, 6]>]
func.func @views(%x: tensor<16x16xf32>) -> tensor<256xf32> {
  %xv = fuse.reshape %x : (tensor<16x16xf32>) -> tensor<256xf32>
  %a = fuse.exp %x : tensor<16x16xf32>
  %v = fuse.reshape %a : (tensor<16x16xf32>) -> tensor<256xf32>
  %b = fuse.neg %a : tensor<16x16xf32>
  %bv = fuse.reshape %b : (tensor<16x16xf32>) -> tensor<256xf32>
  %c = fuse.add %bv, %v : tensor<256xf32>
  %d = fuse.add %c, %xv : tensor<256xf32>
  return %d : tensor<256xf32>
}

// -----

// A loop fusion that reads its input element by element writes over it; one
// that transposes it does not (element i of the result reads another
// element), nor does a reduction: the chain %a, %b and %t are live
// together at 2.
// CHECK-LABEL: func.func @fusions
// CHECK-SAME: attributes {fuse.arena_lower_bound = 2048 : i64, fuse.arena_size = 2048 : i64}
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = [[A:[0-9]+]], size = 1024, live = [0, 1]>]
// CHECK-NEXT: fuse.fusion loop {{.*}}[#fuse.buffer<offset = [[A]], size = 1024, live = [1, 2]>]
// CHECK: fuse.fusion loop {{.*}}[#fuse.buffer<offset = [[T:[0-9]+]], size = 1024, live = [2, 4]>]
// CHECK: fuse.fusion row_reduction {{.*}}[#fuse.buffer<external, size = 64, live = [3, 4]>]
// CHECK: fuse.neg {{.*}}[#fuse.buffer<external, size = 1024, live = [4, 4]>]
func.func @fusions(%x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16xf32>) {
  %a = fuse.exp %x : tensor<16x16xf32>
  %b = fuse.fusion loop (%a) : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%p: tensor<16x16xf32>):
    %r = fuse.relu %p : tensor<16x16xf32>
    %s = fuse.mul %r, %p : tensor<16x16xf32>
    fuse.yield %s : tensor<16x16xf32>
  }
  %t = fuse.fusion loop (%b) : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%p: tensor<16x16xf32>):
    %q = fuse.transpose %p, permutation = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>
    fuse.yield %q : tensor<16x16xf32>
  }
  %u = fuse.fusion row_reduction (%t) : (tensor<16x16xf32>) -> tensor<16xf32> {
  ^bb0(%p: tensor<16x16xf32>):
    %q = fuse.reduce sum %p, dims = [1] : (tensor<16x16xf32>) -> tensor<16xf32>
    fuse.yield %q : tensor<16xf32>
  }
  %v = fuse.neg %t : tensor<16x16xf32>
  return %v, %u : tensor<16x16xf32>, tensor<16xf32>
}

// -----

// A fusion that reads its input both element by element and through a
// broadcast of a slice is not written in place either: the two buffers
// are live together at 1 and take 512 bytes.
// CHECK-LABEL: func.func @fusion_reads_other_elements
// CHECK-SAME: attributes {fuse.arena_lower_bound = 512 : i64, fuse.arena_size = 512 : i64}
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = {{[0-9]+}}, size = 128, live = [0, 1]>]
// CHECK-NEXT: fuse.fusion loop {{.*}}[#fuse.buffer<offset = {{[0-9]+}}, size = 128, live = [1, 2]>]
func.func @fusion_reads_other_elements(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = fuse.exp %x : tensor<4x8xf32>
  %f = fuse.fusion loop (%a) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%p: tensor<4x8xf32>):
    %row = fuse.slice %p, start = [0, 0], limit = [1, 8], stride = [1, 1] : (tensor<4x8xf32>) -> tensor<1x8xf32>
    %b = fuse.broadcast_in_dim %row, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %s = fuse.add %p, %b : tensor<4x8xf32>
    fuse.yield %s : tensor<4x8xf32>
  }
  %y = fuse.neg %f : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A row reduction writes over an input that dies there when every read of
// it is element-aligned or feeds a reduction over the rows (cross entropy's
// forward and backward over the logits %a: max, sum of exp and the label's
// logit picked by a one-hot select, then the gradient): the row's reductions
// end before its last pass, in which each thread writes the elements it
// reads. The gradient %g gets %a's offset; the pair is one block.
// CHECK-LABEL: func.func @row_reduction_in_place
// CHECK-SAME: attributes {fuse.arena_lower_bound = 1024 : i64, fuse.arena_size = 1024 : i64}
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = [[A:[0-9]+]], size = 1024, live = [0, 1]>]
// CHECK-NEXT: fuse.fusion row_reduction {{.*}}[#fuse.buffer<external, size = 64, live = [1, 2]>, #fuse.buffer<offset = [[A]], size = 1024, live = [1, 2]>]
// CHECK: fuse.neg {{.*}}[#fuse.buffer<external, size = 1024, live = [2, 2]>]
func.func @row_reduction_in_place(%x: tensor<16x16xf32>, %ids: tensor<16xi64>) -> (tensor<16x16xf32>, tensor<16xf32>) {
  %a = fuse.exp %x : tensor<16x16xf32>
  %loss, %g = fuse.fusion row_reduction (%a, %ids) : (tensor<16x16xf32>, tensor<16xi64>) -> (tensor<16xf32>, tensor<16x16xf32>) {
  ^bb0(%p: tensor<16x16xf32>, %i: tensor<16xi64>):
    %m = fuse.reduce max %p, dims = [1] : (tensor<16x16xf32>) -> tensor<16xf32>
    %mb = fuse.broadcast_in_dim %m, dims = [0] : (tensor<16xf32>) -> tensor<16x16xf32>
    %d = fuse.sub %p, %mb : tensor<16x16xf32>
    %e = fuse.exp %d : tensor<16x16xf32>
    %s = fuse.reduce sum %e, dims = [1] : (tensor<16x16xf32>) -> tensor<16xf32>
    %ls = fuse.log %s : tensor<16xf32>
    %lse = fuse.add %m, %ls : tensor<16xf32>
    %col = fuse.iota dim = 1 : tensor<16x16xi64>
    %ib = fuse.broadcast_in_dim %i, dims = [0] : (tensor<16xi64>) -> tensor<16x16xi64>
    %hit = fuse.compare eq, %col, %ib : tensor<16x16xi64>
    %zero = fuse.constant dense<0.0> : tensor<16x16xf32>
    %sel = fuse.select %hit, %p, %zero : tensor<16x16xi1>, tensor<16x16xf32>
    %picked = fuse.reduce sum %sel, dims = [1] : (tensor<16x16xf32>) -> tensor<16xf32>
    %l = fuse.sub %lse, %picked : tensor<16xf32>
    %lb = fuse.broadcast_in_dim %lse, dims = [0] : (tensor<16xf32>) -> tensor<16x16xf32>
    %z = fuse.sub %p, %lb : tensor<16x16xf32>
    %prob = fuse.exp %z : tensor<16x16xf32>
    %oh = fuse.cast %hit : tensor<16x16xi1> to tensor<16x16xf32>
    %grad = fuse.sub %prob, %oh : tensor<16x16xf32>
    fuse.yield %l, %grad : tensor<16xf32>, tensor<16x16xf32>
  }
  %y = fuse.neg %g : tensor<16x16xf32>
  return %y, %loss : tensor<16x16xf32>, tensor<16xf32>
}

// -----

// Not over an input that a row reduction reads at other elements of the row
// (a transpose, a gather: another thread's elements, written by then), nor
// over one that is still live after it (%a, read by the neg): each pair is
// live together at the fusion, 2048 bytes.
// CHECK-LABEL: func.func @row_reduction_transposed
// CHECK-SAME: attributes {fuse.arena_lower_bound = 2048 : i64, fuse.arena_size = 2048 : i64}
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = {{[0-9]+}}, size = 1024, live = [0, 1]>]
// CHECK-NEXT: fuse.fusion row_reduction {{.*}}[#fuse.buffer<offset = {{[0-9]+}}, size = 1024, live = [1, 2]>]
// CHECK-LABEL: func.func @row_reduction_gathered
// CHECK-SAME: attributes {fuse.arena_lower_bound = 2048 : i64, fuse.arena_size = 2048 : i64}
// CHECK-LABEL: func.func @row_reduction_live_after
// CHECK-SAME: attributes {fuse.arena_lower_bound = 2048 : i64, fuse.arena_size = 2048 : i64}
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = {{[0-9]+}}, size = 1024, live = [0, 2]>]
func.func @row_reduction_transposed(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %a = fuse.exp %x : tensor<16x16xf32>
  %s = fuse.fusion row_reduction (%a) : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%p: tensor<16x16xf32>):
    %t = fuse.transpose %p, permutation = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %m = fuse.reduce max %t, dims = [1] : (tensor<16x16xf32>) -> tensor<16xf32>
    %b = fuse.broadcast_in_dim %m, dims = [0] : (tensor<16xf32>) -> tensor<16x16xf32>
    %d = fuse.sub %t, %b : tensor<16x16xf32>
    fuse.yield %d : tensor<16x16xf32>
  }
  %y = fuse.neg %s : tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
func.func @row_reduction_gathered(%x: tensor<16x16xf32>, %ids: tensor<16xi64>) -> tensor<16x16xf32> {
  %a = fuse.exp %x : tensor<16x16xf32>
  %s = fuse.fusion row_reduction (%a, %ids) : (tensor<16x16xf32>, tensor<16xi64>) -> tensor<16x16xf32> {
  ^bb0(%p: tensor<16x16xf32>, %i: tensor<16xi64>):
    %m = fuse.reduce max %p, dims = [1] : (tensor<16x16xf32>) -> tensor<16xf32>
    %b = fuse.broadcast_in_dim %m, dims = [0] : (tensor<16xf32>) -> tensor<16x16xf32>
    %q = fuse.gather %p[%i], dim = 1 : (tensor<16x16xf32>, tensor<16xi64>) -> tensor<16x16xf32>
    %d = fuse.sub %q, %b : tensor<16x16xf32>
    fuse.yield %d : tensor<16x16xf32>
  }
  %y = fuse.neg %s : tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
func.func @row_reduction_live_after(%x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %a = fuse.exp %x : tensor<16x16xf32>
  %s = fuse.fusion row_reduction (%a) : (tensor<16x16xf32>) -> tensor<16x16xf32> {
  ^bb0(%p: tensor<16x16xf32>):
    %m = fuse.reduce max %p, dims = [1] : (tensor<16x16xf32>) -> tensor<16xf32>
    %b = fuse.broadcast_in_dim %m, dims = [0] : (tensor<16xf32>) -> tensor<16x16xf32>
    %d = fuse.sub %p, %b : tensor<16x16xf32>
    fuse.yield %d : tensor<16x16xf32>
  }
  %y = fuse.neg %a : tensor<16x16xf32>
  %z = fuse.add %s, %y : tensor<16x16xf32>
  return %z, %y : tensor<16x16xf32>, tensor<16x16xf32>
}
// -----

// A donated argument's memory may be written in place: the optimizer's
// update %u is returned in argument #0's memory, the chain %v, %w, %s
// stays in argument #2's. Argument #1 is not donated, and #3 is donated
// but returned as it is, so neither is written.
// CHECK-LABEL: func.func @donated
// CHECK-SAME: attributes {fuse.arena_lower_bound = 1024 : i64, fuse.arena_size = 1024 : i64}
// CHECK-NEXT: fuse.sub {{.*}}[#fuse.buffer<argument = 0, size = 1024, live = [0, 5]>]
// CHECK-NEXT: fuse.mul {{.*}}[#fuse.buffer<argument = 2, size = 1024, live = [1, 2]>]
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<argument = 2, size = 1024, live = [2, 4]>]
// CHECK-NEXT: fuse.neg {{.*}}[#fuse.buffer<offset = 0, size = 1024, live = [3, 4]>]
// CHECK-NEXT: fuse.add {{.*}}[#fuse.buffer<argument = 2, size = 1024, live = [4, 5]>]
// CHECK-NEXT: fuse.neg {{.*}}[#fuse.buffer<external, size = 1024, live = [5, 5]>]
func.func @donated(%p: tensor<16x16xf32> {fuse.donated}, %g: tensor<16x16xf32>, %m: tensor<16x16xf32> {fuse.donated}, %q: tensor<16x16xf32> {fuse.donated}) -> (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) {
  %u = fuse.sub %p, %g : tensor<16x16xf32>
  %v = fuse.mul %m, %g : tensor<16x16xf32>
  %w = fuse.exp %v : tensor<16x16xf32>
  %n = fuse.neg %q : tensor<16x16xf32>
  %s = fuse.add %w, %n : tensor<16x16xf32>
  %h = fuse.neg %g : tensor<16x16xf32>
  return %u, %s, %q, %h : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// An optimizer's fused update reads the parameter %p and its moment %m,
// both donated and both dying at it. Each returned result goes to the
// donated argument of its own name (new "m" over "m", new "p" over "p"),
// not to the first input that dies there, so that a caller can bind each
// updated result to the memory it came from.
// CHECK-LABEL: func.func @donated_by_name
// CHECK: fuse.fusion {{.*}}[#fuse.buffer<argument = 1, size = 1024, live = [0, 0]>, #fuse.buffer<argument = 0, size = 1024, live = [0, 0]>]
func.func @donated_by_name(%p: tensor<16x16xf32> {fuse.name = "p", fuse.donated}, %m: tensor<16x16xf32> {fuse.name = "m", fuse.donated}, %g: tensor<16x16xf32> {fuse.name = "g"}) -> (tensor<16x16xf32> {fuse.name = "m"}, tensor<16x16xf32> {fuse.name = "p"}) {
  %m2, %p2 = fuse.fusion loop (%p, %m, %g) : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  ^bb0(%bp: tensor<16x16xf32>, %bm: tensor<16x16xf32>, %bg: tensor<16x16xf32>):
    %nm = fuse.add %bm, %bg : tensor<16x16xf32>
    %np = fuse.sub %bp, %nm : tensor<16x16xf32>
    fuse.yield %nm, %np : tensor<16x16xf32>, tensor<16x16xf32>
  }
  return %m2, %p2 : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// A column reduction writes its per-column results over the donated
// arguments only its epilogue reads (%m, %b: an optimizer's update of a bias
// fused into its gradient's reduction; the thread that finishes a column
// reads them and then writes them). %g is donated too, but its reduction
// reads whole columns in other threads: the per-element %y gets its own
// memory.
// CHECK-LABEL: func.func @column_reduction_in_place
// CHECK: fuse.fusion column_reduction {{.*}}[#fuse.buffer<external, size = 512, live = [0, 0]>, #fuse.buffer<argument = 1, size = 64, live = [0, 0]>, #fuse.buffer<argument = 2, size = 64, live = [0, 0]>]
func.func @column_reduction_in_place(%g: tensor<8x16xf32> {fuse.name = "g", fuse.donated}, %m: tensor<16xf32> {fuse.name = "m", fuse.donated}, %b: tensor<16xf32> {fuse.name = "b", fuse.donated}) -> (tensor<8x16xf32> {fuse.name = "y"}, tensor<16xf32> {fuse.name = "m"}, tensor<16xf32> {fuse.name = "b"}) {
  %y, %m2, %b2 = fuse.fusion column_reduction (%g, %m, %b) : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%bg: tensor<8x16xf32>, %bm: tensor<16xf32>, %bb: tensor<16xf32>):
    %e = fuse.exp %bg : tensor<8x16xf32>
    %s = fuse.reduce sum %bg, dims = [0] : (tensor<8x16xf32>) -> tensor<16xf32>
    %nm = fuse.add %bm, %s : tensor<16xf32>
    %nb = fuse.sub %bb, %nm : tensor<16xf32>
    fuse.yield %e, %nm, %nb : tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>
  }
  return %y, %m2, %b2 : tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// Constants are baked into the code: no buffer, no attribute. A reshape of
// a constant is not a view of a buffer and gets its own.
// CHECK-LABEL: func.func @constants
// CHECK-NEXT: fuse.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: fuse.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
// CHECK-NEXT: fuse.reshape {{.*}}[#fuse.buffer<offset = 0, size = 32, live = [2, 2]>]
// CHECK-NEXT: fuse.add {{.*}}[#fuse.buffer<external, size = 128, live = [3, 4]>]
// CHECK-NEXT: fuse.reshape {{.*}}[#fuse.buffer<external, size = 128, live = [3, 4]>]
func.func @constants(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %z = fuse.constant dense<1.0> : tensor<4x8xf32>
  %ids = fuse.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %r = fuse.reshape %ids : (tensor<4xi64>) -> tensor<2x2xi64>
  %a = fuse.add %x, %z : tensor<4x8xf32>
  %b = fuse.reshape %a : (tensor<4x8xf32>) -> tensor<32xf32>
  return %b : tensor<32xf32>
}

// -----

// Every buffer occupies a multiple of 256 bytes from a multiple of 256, and
// the lower bound counts aligned sizes: two 40-byte buffers live together
// need 512 bytes. Each function has its own arena; the module's attributes
// are the largest over its functions (one arena serves them all, one at a
// time). A function with nothing to plan has an empty arena.
// CHECK: module attributes {fuse.arena_lower_bound = 512 : i64, fuse.arena_size = 512 : i64}
// CHECK-LABEL: func.func @alignment
// CHECK-SAME: attributes {fuse.arena_lower_bound = 512 : i64, fuse.arena_size = 512 : i64}
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = [[A:[0-9]+]], size = 40, live = [0, 2]>]
// CHECK-NEXT: fuse.neg {{.*}}[#fuse.buffer<offset = {{[0-9]+}}, size = 40, live = [1, 2]>]
// CHECK-NEXT: fuse.add {{.*}}[#fuse.buffer<offset = [[A]], size = 40, live = [2, 3]>]
// CHECK-LABEL: func.func @nothing_to_plan
// CHECK-SAME: attributes {fuse.arena_lower_bound = 0 : i64, fuse.arena_size = 0 : i64}
func.func @alignment(%x: tensor<10xf32>) -> tensor<10xf32> {
  %a = fuse.exp %x : tensor<10xf32>
  %b = fuse.neg %x : tensor<10xf32>
  %c = fuse.add %a, %b : tensor<10xf32>
  %d = fuse.abs %c : tensor<10xf32>
  return %d : tensor<10xf32>
}
func.func @nothing_to_plan(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Multi-result ops get one placement per result. A result nobody reads
// lives at its writer only.
// CHECK-LABEL: func.func @several_results
// CHECK-NEXT: fuse.scaled_dot_product_attention {{.*}}[#fuse.buffer<offset = {{[0-9]+}}, size = 4096, live = [0, 1]>, #fuse.buffer<offset = {{[0-9]+}}, size = 512, live = [0, 0]>]
func.func @several_results(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.35 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16xf32>)
  %y = fuse.neg %o : tensor<2x4x16x8xf32>
  return %y : tensor<2x4x16x8xf32>
}

// -----

// A scatter_add into a value nothing else reads accumulates in its memory:
// one buffer from the matmul to the scatter. Returned, that buffer is the
// caller's, so the matmul writes into the result and no arena holds the
// table-sized gradient. Onto an argument (not the step's to overwrite) or a
// value read twice, the scatter_add starts from a copy in a buffer of its
// own.
// CHECK-LABEL: func.func @scatter_in_place
// CHECK-SAME: fuse.arena_size = 0 : i64
// CHECK-NEXT: fuse.matmul {{.*}}[#fuse.buffer<external, size = 2048, live = [0, 1]>]
// CHECK-NEXT: fuse.scatter_add {{.*}}[#fuse.buffer<external, size = 2048, live = [0, 1]>]
// CHECK-LABEL: func.func @scatter_copies
// CHECK-NEXT: fuse.matmul {{.*}}[#fuse.buffer<offset = {{[0-9]+}}, size = 2048, live = [0, 2]>]
// CHECK-NEXT: fuse.scatter_add {{.*}}[#fuse.buffer<external, size = 2048, live = [1, 3]>]
// CHECK-NEXT: fuse.scatter_add {{.*}}[#fuse.buffer<external, size = 2048, live = [2, 3]>]
// CHECK-NEXT: fuse.scatter_add {{.*}}[#fuse.buffer<external, size = 2048, live = [3, 3]>]
func.func @scatter_in_place(%h: tensor<8x32xf32>, %g: tensor<8x16xf32>, %ids: tensor<8xi64>, %u: tensor<8x32xf32>) -> tensor<16x32xf32> {
  %w = fuse.matmul %g, %h transpose_lhs : (tensor<8x16xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %s = fuse.scatter_add %w[%ids], %u, dim = 0 : (tensor<16x32xf32>, tensor<8xi64>, tensor<8x32xf32>) -> tensor<16x32xf32>
  return %s : tensor<16x32xf32>
}
func.func @scatter_copies(%h: tensor<8x32xf32>, %g: tensor<8x16xf32>, %ids: tensor<8xi64>, %u: tensor<8x32xf32>, %t: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>) {
  %w = fuse.matmul %g, %h transpose_lhs : (tensor<8x16xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %s = fuse.scatter_add %w[%ids], %u, dim = 0 : (tensor<16x32xf32>, tensor<8xi64>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %r = fuse.scatter_add %w[%ids], %u, dim = 0 : (tensor<16x32xf32>, tensor<8xi64>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %a = fuse.scatter_add %t[%ids], %u, dim = 0 : (tensor<16x32xf32>, tensor<8xi64>, tensor<8x32xf32>) -> tensor<16x32xf32>
  return %s, %r, %a : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>
}
