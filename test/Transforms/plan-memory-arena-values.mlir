// Values a function finds or leaves in its arena: a forward leaves what it
// saves there (`fuse.in_arena`, the plan chooses the offset and records it
// as `fuse.arena_offset`), and its backward finds the values at those
// offsets (`fuse.arena_offset` on arguments) and reuses their bytes once
// it has read them for the last time.
// RUN: fuse-opt %s -split-input-file -fuse-plan-memory | FileCheck %s
// RUN: fuse-opt %s -split-input-file -fuse-plan-memory=strategy=linear | FileCheck %s --check-prefix=LINEAR
// Planning again from planned IR gives the same plan.
// RUN: fuse-opt %s -split-input-file -fuse-plan-memory | fuse-opt -split-input-file -fuse-plan-memory | FileCheck %s

// The saved %a stays in the arena until the end (live to the last
// position), at the offset recorded on the result; %b, a transient, may not
// share its bytes; the returned %d is the caller's.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: -> (tensor<16x16xf32> {fuse.name = "loss"}, tensor<16x16xf32> {fuse.arena_offset = [[SAVED:[0-9]+]] : i64, fuse.name = "saved"})
// CHECK-SAME: fuse.arena_size = 2048 : i64
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = [[SAVED]], size = 1024, live = [0, 2]>]
// CHECK-NEXT: fuse.neg {{.*}}[#fuse.buffer<offset = {{[0-9]+}}, size = 1024, live = [1, 2]>]
// CHECK-NEXT: fuse.mul {{.*}}[#fuse.buffer<external, size = 1024, live = [2, 2]>]
// CHECK-NOT: fuse.in_arena
// LINEAR-LABEL: func.func @forward
// LINEAR-SAME: fuse.arena_offset
func.func @forward(%x: tensor<16x16xf32>) -> (tensor<16x16xf32> {fuse.name = "loss"}, tensor<16x16xf32> {fuse.name = "saved", fuse.in_arena}) {
  %a = fuse.exp %x : tensor<16x16xf32>
  %b = fuse.neg %a : tensor<16x16xf32>
  %d = fuse.mul %b, %b : tensor<16x16xf32>
  return %d, %a : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// The backward finds %s at byte 1024 and %t at 0. %s dies at its first
// read, so the elementwise result takes it over in place (one chain at its
// offset); %t's bytes are free after position 1, so %m, written at 2, may
// go there: the arena needs no more than the two saved values.
// CHECK-LABEL: func.func @backward
// CHECK-SAME: fuse.arena_size = 2048 : i64
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = 1024, size = 1024, live = [0, 1]>]
// CHECK-NEXT: fuse.add {{.*}}[#fuse.buffer<offset = 1024, size = 1024, live = [1, 3]>]
// CHECK-NEXT: fuse.neg {{.*}}[#fuse.buffer<offset = 0, size = 1024, live = [2, 3]>]
// CHECK-NEXT: fuse.mul {{.*}}[#fuse.buffer<external, size = 1024, live = [3, 3]>]
// The linear strategy places free blocks past the fixed ones.
// LINEAR-LABEL: func.func @backward
// LINEAR-SAME: fuse.arena_size = 3072 : i64
func.func @backward(%s: tensor<16x16xf32> {fuse.name = "saved", fuse.arena_offset = 1024 : i64},
                    %t: tensor<16x16xf32> {fuse.name = "other", fuse.arena_offset = 0 : i64},
                    %g: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %e = fuse.exp %s : tensor<16x16xf32>
  %a = fuse.add %e, %t : tensor<16x16xf32>
  %m = fuse.neg %g : tensor<16x16xf32>
  %r = fuse.mul %a, %m : tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

// -----

// A result left at an offset the caller fixed is planned there.
// CHECK-LABEL: func.func @fixed_result
// CHECK-SAME: fuse.arena_offset = 2048 : i64
// CHECK-SAME: fuse.arena_size = 3072 : i64
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = 2048, size = 1024, live = [0, 0]>]
func.func @fixed_result(%x: tensor<16x16xf32>) -> (tensor<16x16xf32> {fuse.arena_offset = 2048 : i64}) {
  %a = fuse.exp %x : tensor<16x16xf32>
  return %a : tensor<16x16xf32>
}

// -----

// One saved base passed twice (the views of a QKV projection): the two
// arguments at one offset are one block, live until the last read of
// either, and never written over in place.
// CHECK-LABEL: func.func @one_value_twice
// CHECK-SAME: fuse.arena_size = 2048 : i64
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = 1024, size = 1024, live = [0, 1]>]
// CHECK-NEXT: fuse.add {{.*}}[#fuse.buffer<external, size = 1024, live = [1, 1]>]
func.func @one_value_twice(%q: tensor<16x16xf32> {fuse.arena_offset = 0 : i64},
                           %k: tensor<16x16xf32> {fuse.arena_offset = 0 : i64}) -> tensor<16x16xf32> {
  %e = fuse.exp %q : tensor<16x16xf32>
  %a = fuse.add %e, %k : tensor<16x16xf32>
  return %a : tensor<16x16xf32>
}

// -----

// Where the plan may choose: an argument returned stays the caller's (no
// offset is recorded), and a value also returned without the attribute is
// in the arena for the one and copied out for the other.
// CHECK-LABEL: func.func @choices
// CHECK-SAME: -> (tensor<16x16xf32>, tensor<16x16xf32> {fuse.arena_offset = 0 : i64}, tensor<16x16xf32>)
// CHECK-NEXT: fuse.exp {{.*}}[#fuse.buffer<offset = 0, size = 1024, live = [0, 0]>]
func.func @choices(%x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32> {fuse.in_arena}, tensor<16x16xf32> {fuse.in_arena}) {
  %a = fuse.exp %x : tensor<16x16xf32>
  return %a, %a, %x : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}
