// RUN: fuse-opt %s -split-input-file --fuse-auto-mixed-precision | FileCheck %s
// RUN: fuse-opt %s -split-input-file --fuse-auto-mixed-precision=round-linear-outputs=false | FileCheck %s --check-prefix=KEEP

// A linear layer (matmul + broadcast bias) returns its output in bf16, as
// torch.autocast's addmm does: the f32 sum is rounded and widened again for
// its users (GELU here), so what the backward keeps of it is bf16. With
// round-linear-outputs=false the sum stays f32.

// CHECK-LABEL: func.func @mlp_up
// CHECK: %[[MM:.+]] = fuse.matmul %{{.+}}, %{{.+}} : (tensor<8x16xbf16>, tensor<16x32xbf16>) -> tensor<8x32xbf16>
// CHECK: %[[UP:.+]] = fuse.cast %[[MM]] : tensor<8x32xbf16> to tensor<8x32xf32>
// CHECK: %[[SUM:.+]] = fuse.add %[[UP]], %{{.+}} : tensor<8x32xf32>
// CHECK-NEXT: %[[LOW:.+]] = fuse.cast %[[SUM]] : tensor<8x32xf32> to tensor<8x32xbf16>
// CHECK-NEXT: %[[BACK:.+]] = fuse.cast %[[LOW]] : tensor<8x32xbf16> to tensor<8x32xf32>
// CHECK-NEXT: %[[G:.+]] = fuse.gelu %[[BACK]]
// CHECK: return %[[G]], %[[BACK]]
// KEEP-LABEL: func.func @mlp_up
// KEEP: %[[SUM:.+]] = fuse.add
// KEEP-NOT: to tensor<8x32xbf16>
// KEEP: return %{{.+}}, %[[SUM]]
func.func @mlp_up(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %0 = fuse.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = fuse.broadcast_in_dim %b, dims = [1] : (tensor<32xf32>) -> tensor<8x32xf32>
  %2 = fuse.add %0, %1 : tensor<8x32xf32>
  %3 = fuse.gelu %2, approximate = tanh : tensor<8x32xf32>
  return %3, %2 : tensor<8x32xf32>, tensor<8x32xf32>
}

// -----

// Through a reshape (a 3-D activation's matmul on its 2-D view), bias first.
// CHECK-LABEL: func.func @reshaped
// CHECK: %[[SUM:.+]] = fuse.add %{{.+}}, %{{.+}} : tensor<2x4x32xf32>
// CHECK-NEXT: %[[LOW:.+]] = fuse.cast %[[SUM]] : tensor<2x4x32xf32> to tensor<2x4x32xbf16>
// CHECK-NEXT: fuse.cast %[[LOW]] : tensor<2x4x32xbf16> to tensor<2x4x32xf32>
func.func @reshaped(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<2x4x32xf32> {
  %0 = fuse.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = fuse.reshape %0 : (tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %2 = fuse.broadcast_in_dim %b, dims = [2] : (tensor<32xf32>) -> tensor<2x4x32xf32>
  %3 = fuse.add %2, %1 : tensor<2x4x32xf32>
  return %3 : tensor<2x4x32xf32>
}

// -----

// A full-size addend (a residual) is no bias: the sum stays f32, as
// autocast adds a bf16 projection to an f32 residual stream in f32.
// CHECK-LABEL: func.func @residual
// CHECK: %[[SUM:.+]] = fuse.add %{{.+}}, %{{.+}} : tensor<8x32xf32>
// CHECK-NOT: fuse.cast %[[SUM]]
// CHECK: return %[[SUM]]
func.func @residual(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %r: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = fuse.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = fuse.add %0, %r : tensor<8x32xf32>
  return %1 : tensor<8x32xf32>
}
