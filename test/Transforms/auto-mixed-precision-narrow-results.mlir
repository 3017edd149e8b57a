// RUN: fuse-opt %s -split-input-file --fuse-auto-mixed-precision=narrow-results=true | FileCheck %s
// RUN: fuse-opt %s -split-input-file --fuse-auto-mixed-precision | FileCheck %s --check-prefix=WIDE
// RUN: fuse-opt %s -split-input-file --fuse-auto-mixed-precision='dtype=f16 narrow-results=true' | FileCheck %s --check-prefix=F16
// Through the whole pipeline, GPT-2's logits leave the last GEMM in bf16.
// RUN: fuse-translate %S/../graphs/gpt2-tiny-infer.mlir --pipeline='fuse-pipeline{narrow-results=true}' --emit-plan | FileCheck %s --check-prefix=PLAN
// PLAN: outputs: 0 logits: 2x32x512xbf16

// The logits come back in bf16, as under torch.autocast, through the
// reshape that gives them their [batch, sequence, vocabulary] shape; the
// cast back to f32 is gone. A result computed in f32 (the softmax) stays
// f32. Without the option every result keeps its f32 type.
// CHECK-LABEL: func.func @logits
// CHECK-SAME: -> (tensor<2x4x16xbf16>, tensor<8x16xf32>)
// CHECK: %[[MM:.*]] = fuse.matmul {{.*}} -> tensor<8x16xbf16>
// CHECK: %[[LOGITS:.*]] = fuse.reshape %[[MM]] : (tensor<8x16xbf16>) -> tensor<2x4x16xbf16>
// CHECK: return %[[LOGITS]], %{{.*}} : tensor<2x4x16xbf16>, tensor<8x16xf32>
// WIDE-LABEL: func.func @logits
// WIDE-SAME: -> (tensor<2x4x16xf32>, tensor<8x16xf32>)
// F16-LABEL: func.func @logits
// F16-SAME: -> (tensor<2x4x16xf16>, tensor<8x16xf32>)
func.func @logits(%x: tensor<8x32xf32>, %w: tensor<16x32xf32>) -> (tensor<2x4x16xf32>, tensor<8x16xf32>) {
  %0 = fuse.matmul %x, %w transpose_rhs : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  %1 = fuse.reshape %0 : (tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %2 = fuse.softmax %0, dim = 1 : tensor<8x16xf32>
  return %1, %2 : tensor<2x4x16xf32>, tensor<8x16xf32>
}

// -----

// A returned f32 argument or an f32 computation is not narrowed.
// CHECK-LABEL: func.func @nothing_to_narrow
// CHECK-SAME: -> (tensor<8x32xf32>, tensor<8x32xf32>)
func.func @nothing_to_narrow(%x: tensor<8x32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %0 = fuse.exp %x : tensor<8x32xf32>
  return %x, %0 : tensor<8x32xf32>, tensor<8x32xf32>
}
