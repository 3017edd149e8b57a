// RUN: fuse-opt %s -split-input-file --fuse-form-fusions --fuse-rematerialize -mlir-print-debuginfo=false 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
// RUN: fuse-opt %s -split-input-file --fuse-form-fusions --fuse-rematerialize=fraction=0.75 -mlir-print-debuginfo=false 2>%t.budget | FileCheck %s --check-prefix=BUDGET
// RUN: FileCheck %s --check-prefix=BUDGET-REMARK < %t.budget

// The step recomputes what it means: every function, before and after.
// RUN: fuse-run %s --entry free --check-pipeline='fuse-form-fusions,fuse-rematerialize' | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry priced --check-pipeline='fuse-form-fusions,fuse-rematerialize{fraction=0.75}' | FileCheck %s --check-prefix=SAME
// SAME: check-pipeline: PASS (3 of 3 outputs match)

// exp(x) and tanh(exp(x)) are read by the backward's loop kernel, which can
// compute both from x itself: neither is kept for it. tanh(exp(x)) is still
// stored for the weight-gradient GEMM, which cannot; exp(x) is not stored
// at all any more.
// REMARK: remark: fuse-rematerialize: recomputed 2 forward values in the backward (0 as kernels of their own, 1 inside their readers' kernels; only what is free: pointwise kernels, inside their readers); peak 65536 -> 49152 bytes (64.0 KiB -> 48.0 KiB), 16384 bytes saved, 8192 FLOPs added
// CHECK-LABEL: func.func @free
// CHECK-SAME: (%[[X:[^:]+]]: tensor<64x64xf32>
// CHECK: %[[T:.+]] = fuse.fusion loop (%[[X]]) : (tensor<64x64xf32>) -> tensor<64x64xf32>
// CHECK: fuse.exp
// CHECK: fuse.tanh
// CHECK: %[[GW:.+]] = fuse.matmul %[[T]], %{{.+}} transpose_lhs
// CHECK: %[[GX:.+]] = fuse.fusion loop (%[[X]], %{{.+}})
// CHECK: fuse.exp
// CHECK: fuse.tanh
// CHECK: fuse.sub
// CHECK: return %{{.+}}, %[[GW]], %[[GX]]
func.func @free(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<f32> {fuse.name = "loss"}, tensor<64x64xf32> {fuse.name = "grad.w"}, tensor<64x64xf32> {fuse.name = "grad.x"}) {
  %e = fuse.exp %x : tensor<64x64xf32>
  %t = fuse.tanh %e : tensor<64x64xf32>
  %y = fuse.matmul %t, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %loss = fuse.reduce sum %y, dims = [0, 1] : (tensor<64x64xf32>) -> tensor<f32>
  %seed = fuse.broadcast_in_dim %loss, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
  %gw = fuse.matmul %t, %seed transpose_lhs : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %gt = fuse.matmul %seed, %w transpose_rhs : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %tt = fuse.mul %t, %t : tensor<64x64xf32>
  %d = fuse.sub %gt, %tt : tensor<64x64xf32>
  %gx = fuse.mul %d, %e : tensor<64x64xf32>
  return %loss, %gw, %gx : tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>
}

