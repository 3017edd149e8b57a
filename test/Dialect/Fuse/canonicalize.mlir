// RUN: fuse-opt %s -split-input-file -canonicalize | FileCheck %s

// x + scatter_add(zeros, i, u), either way round, accumulates into x.
// CHECK-LABEL: func.func @accumulate_into_addend
// CHECK-SAME: (%[[X:[^:]+]]: tensor<16x8xf32>, %[[I:[^:]+]]: tensor<4xi64>, %[[U:[^:]+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[A:.+]] = fuse.scatter_add %[[X]][%[[I]]], %[[U]], dim = 0
// CHECK-NEXT: %[[B:.+]] = fuse.scatter_add %[[X]][%[[I]]], %[[U]], dim = 0
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @accumulate_into_addend(%x: tensor<16x8xf32>, %i: tensor<4xi64>, %u: tensor<4x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
  %zeros = fuse.constant dense<0.0> : tensor<16x8xf32>
  %s = fuse.scatter_add %zeros[%i], %u, dim = 0 : (tensor<16x8xf32>, tensor<4xi64>, tensor<4x8xf32>) -> tensor<16x8xf32>
  %a = fuse.add %x, %s : tensor<16x8xf32>
  %t = fuse.scatter_add %zeros[%i], %u, dim = 0 : (tensor<16x8xf32>, tensor<4xi64>, tensor<4x8xf32>) -> tensor<16x8xf32>
  %b = fuse.add %t, %x : tensor<16x8xf32>
  return %a, %b : tensor<16x8xf32>, tensor<16x8xf32>
}

// -----

// Not when the scatter starts from something other than zeros, or when its
// result is read elsewhere too.
// CHECK-LABEL: func.func @keep
// CHECK-COUNT-2: fuse.add
func.func @keep(%x: tensor<16x8xf32>, %i: tensor<4xi64>, %u: tensor<4x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) {
  %ones = fuse.constant dense<1.0> : tensor<16x8xf32>
  %zeros = fuse.constant dense<0.0> : tensor<16x8xf32>
  %s = fuse.scatter_add %ones[%i], %u, dim = 0 : (tensor<16x8xf32>, tensor<4xi64>, tensor<4x8xf32>) -> tensor<16x8xf32>
  %a = fuse.add %x, %s : tensor<16x8xf32>
  %t = fuse.scatter_add %zeros[%i], %u, dim = 0 : (tensor<16x8xf32>, tensor<4xi64>, tensor<4x8xf32>) -> tensor<16x8xf32>
  %b = fuse.add %t, %x : tensor<16x8xf32>
  return %a, %b, %t : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>
}

// -----

// The meaning is kept (up to the order of the additions).
// RUN: fuse-run %s --entry accumulate_into_addend --check-pipeline=canonicalize | FileCheck %s --check-prefix=SAME
// SAME: check-pipeline: PASS (2 of 2 outputs match)
