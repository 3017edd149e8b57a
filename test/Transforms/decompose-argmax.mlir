// fuse.argmax becomes reductions (it has no kernel template): the first index
// at the maximum, or for floats the first NaN when there is one.
// RUN: fuse-opt %s -fuse-decompose | FileCheck %s
// RUN: fuse-opt %s -fuse-decompose=keep=argmax | FileCheck %s --check-prefix=KEEP

// The same results before and after, on random inputs (ints in [0, 3): ties
// in every row) and on constants with ties and NaNs.
// RUN: fuse-run %s --entry floats --check-pipeline=fuse-decompose | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry ints --index-bound=3 --check-pipeline=fuse-decompose | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry ties_and_nans --check-pipeline=fuse-decompose --dump-outputs=%t.npz | FileCheck %s --check-prefix=SAME
// SAME: check-pipeline: PASS

// The whole pipeline gives the GPU kernels for it (no lone argmax left).
// RUN: fuse-translate %s --entry floats --pipeline=fuse-pipeline --emit-plan | FileCheck %s --check-prefix=PLAN
// RUN: fuse-translate %s --entry ints --pipeline=fuse-pipeline --emit-plan | FileCheck %s --check-prefix=PLAN
// PLAN: launch fuse_

// CHECK-LABEL: func.func @floats
// CHECK-NOT: fuse.argmax
// CHECK: fuse.reduce max %{{.+}}, dims = [1] keepdim
// CHECK: fuse.compare eq
// CHECK: fuse.iota dim = 1 : tensor<4x16xf32>
// CHECK: fuse.reduce min %{{.+}}, dims = [1] keepdim : (tensor<4x16xf32>)
// CHECK: fuse.compare ne
// CHECK: fuse.select
// CHECK: fuse.cast %{{.+}} : tensor<4x1xf32> to tensor<4x1xi64>
// CHECK: fuse.reshape %{{.+}} : (tensor<4x1xi64>) -> tensor<4xi64>
// KEEP: fuse.argmax
func.func @floats(%x: tensor<4x16xf32>) -> tensor<4xi64> {
  %i = fuse.argmax %x, dim = 1 : (tensor<4x16xf32>) -> tensor<4xi64>
  return %i : tensor<4xi64>
}

// Integers are compared in f32 (exact below 2^24: token ids), with no NaN rule.
// CHECK-LABEL: func.func @ints
// CHECK: fuse.cast %{{.+}} : tensor<2x8x3xi64> to tensor<2x8x3xf32>
// CHECK-NOT: fuse.compare ne
// CHECK: return
func.func @ints(%x: tensor<2x8x3xi64>) -> tensor<2x1x3xi64> {
  %i = fuse.argmax %x, dim = 1 keepdim : (tensor<2x8x3xi64>) -> tensor<2x1x3xi64>
  return %i : tensor<2x1x3xi64>
}

func.func @ties_and_nans() -> tensor<3xi64> {
  %x = fuse.constant dense<[[1.0, 3.0, 3.0, 0.0], [2.0, 0x7FC00000, 5.0, 0x7FC00000], [-1.0, -1.0, -2.0, -1.0]]> : tensor<3x4xf32>
  %i = fuse.argmax %x, dim = 1 : (tensor<3x4xf32>) -> tensor<3xi64>
  return %i : tensor<3xi64>
}
