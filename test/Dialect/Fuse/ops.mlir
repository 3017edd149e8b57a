// RUN: fuse-opt %s -split-input-file | fuse-opt -split-input-file | FileCheck %s
// RUN: fuse-opt %s -split-input-file -mlir-print-op-generic | fuse-opt -split-input-file | FileCheck %s

// Round trip of every fuse op in every element type it accepts, through the
// custom and the generic form.

// CHECK-LABEL: func.func @add(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[Y_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[Y_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>, %[[Y_BF16:.+]]: tensor<2x16x64xbf16>, %[[X_I64:.+]]: tensor<2x16xi64>, %[[Y_I64:.+]]: tensor<2x16xi64>, %[[X_I32:.+]]: tensor<2x16xi32>, %[[Y_I32:.+]]: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>)
// CHECK: %[[R_F32:.+]] = fuse.add %[[X_F32]], %[[Y_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.add %[[X_F16]], %[[Y_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.add %[[X_BF16]], %[[Y_BF16]] : tensor<2x16x64xbf16>
// CHECK: %[[R_I64:.+]] = fuse.add %[[X_I64]], %[[Y_I64]] : tensor<2x16xi64>
// CHECK: %[[R_I32:.+]] = fuse.add %[[X_I32]], %[[Y_I32]] : tensor<2x16xi32>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]], %[[R_I64]], %[[R_I32]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
func.func @add(%x_f32: tensor<2x16x64xf32>, %y_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %y_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>, %y_bf16: tensor<2x16x64xbf16>, %x_i64: tensor<2x16xi64>, %y_i64: tensor<2x16xi64>, %x_i32: tensor<2x16xi32>, %y_i32: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>) {
  %r_f32 = fuse.add %x_f32, %y_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.add %x_f16, %y_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.add %x_bf16, %y_bf16 : tensor<2x16x64xbf16>
  %r_i64 = fuse.add %x_i64, %y_i64 : tensor<2x16xi64>
  %r_i32 = fuse.add %x_i32, %y_i32 : tensor<2x16xi32>
  return %r_f32, %r_f16, %r_bf16, %r_i64, %r_i32 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
}

// -----

// CHECK-LABEL: func.func @sub(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[Y_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[Y_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>, %[[Y_BF16:.+]]: tensor<2x16x64xbf16>, %[[X_I64:.+]]: tensor<2x16xi64>, %[[Y_I64:.+]]: tensor<2x16xi64>, %[[X_I32:.+]]: tensor<2x16xi32>, %[[Y_I32:.+]]: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>)
// CHECK: %[[R_F32:.+]] = fuse.sub %[[X_F32]], %[[Y_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.sub %[[X_F16]], %[[Y_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.sub %[[X_BF16]], %[[Y_BF16]] : tensor<2x16x64xbf16>
// CHECK: %[[R_I64:.+]] = fuse.sub %[[X_I64]], %[[Y_I64]] : tensor<2x16xi64>
// CHECK: %[[R_I32:.+]] = fuse.sub %[[X_I32]], %[[Y_I32]] : tensor<2x16xi32>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]], %[[R_I64]], %[[R_I32]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
func.func @sub(%x_f32: tensor<2x16x64xf32>, %y_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %y_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>, %y_bf16: tensor<2x16x64xbf16>, %x_i64: tensor<2x16xi64>, %y_i64: tensor<2x16xi64>, %x_i32: tensor<2x16xi32>, %y_i32: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>) {
  %r_f32 = fuse.sub %x_f32, %y_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.sub %x_f16, %y_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.sub %x_bf16, %y_bf16 : tensor<2x16x64xbf16>
  %r_i64 = fuse.sub %x_i64, %y_i64 : tensor<2x16xi64>
  %r_i32 = fuse.sub %x_i32, %y_i32 : tensor<2x16xi32>
  return %r_f32, %r_f16, %r_bf16, %r_i64, %r_i32 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
}

// -----

// CHECK-LABEL: func.func @mul(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[Y_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[Y_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>, %[[Y_BF16:.+]]: tensor<2x16x64xbf16>, %[[X_I64:.+]]: tensor<2x16xi64>, %[[Y_I64:.+]]: tensor<2x16xi64>, %[[X_I32:.+]]: tensor<2x16xi32>, %[[Y_I32:.+]]: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>)
// CHECK: %[[R_F32:.+]] = fuse.mul %[[X_F32]], %[[Y_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.mul %[[X_F16]], %[[Y_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.mul %[[X_BF16]], %[[Y_BF16]] : tensor<2x16x64xbf16>
// CHECK: %[[R_I64:.+]] = fuse.mul %[[X_I64]], %[[Y_I64]] : tensor<2x16xi64>
// CHECK: %[[R_I32:.+]] = fuse.mul %[[X_I32]], %[[Y_I32]] : tensor<2x16xi32>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]], %[[R_I64]], %[[R_I32]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
func.func @mul(%x_f32: tensor<2x16x64xf32>, %y_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %y_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>, %y_bf16: tensor<2x16x64xbf16>, %x_i64: tensor<2x16xi64>, %y_i64: tensor<2x16xi64>, %x_i32: tensor<2x16xi32>, %y_i32: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>) {
  %r_f32 = fuse.mul %x_f32, %y_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.mul %x_f16, %y_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.mul %x_bf16, %y_bf16 : tensor<2x16x64xbf16>
  %r_i64 = fuse.mul %x_i64, %y_i64 : tensor<2x16xi64>
  %r_i32 = fuse.mul %x_i32, %y_i32 : tensor<2x16xi32>
  return %r_f32, %r_f16, %r_bf16, %r_i64, %r_i32 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
}

// -----

// CHECK-LABEL: func.func @div(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[Y_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[Y_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>, %[[Y_BF16:.+]]: tensor<2x16x64xbf16>, %[[X_I64:.+]]: tensor<2x16xi64>, %[[Y_I64:.+]]: tensor<2x16xi64>, %[[X_I32:.+]]: tensor<2x16xi32>, %[[Y_I32:.+]]: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>)
// CHECK: %[[R_F32:.+]] = fuse.div %[[X_F32]], %[[Y_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.div %[[X_F16]], %[[Y_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.div %[[X_BF16]], %[[Y_BF16]] : tensor<2x16x64xbf16>
// CHECK: %[[R_I64:.+]] = fuse.div %[[X_I64]], %[[Y_I64]] : tensor<2x16xi64>
// CHECK: %[[R_I32:.+]] = fuse.div %[[X_I32]], %[[Y_I32]] : tensor<2x16xi32>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]], %[[R_I64]], %[[R_I32]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
func.func @div(%x_f32: tensor<2x16x64xf32>, %y_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %y_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>, %y_bf16: tensor<2x16x64xbf16>, %x_i64: tensor<2x16xi64>, %y_i64: tensor<2x16xi64>, %x_i32: tensor<2x16xi32>, %y_i32: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>) {
  %r_f32 = fuse.div %x_f32, %y_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.div %x_f16, %y_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.div %x_bf16, %y_bf16 : tensor<2x16x64xbf16>
  %r_i64 = fuse.div %x_i64, %y_i64 : tensor<2x16xi64>
  %r_i32 = fuse.div %x_i32, %y_i32 : tensor<2x16xi32>
  return %r_f32, %r_f16, %r_bf16, %r_i64, %r_i32 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
}

// -----

// CHECK-LABEL: func.func @maximum(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[Y_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[Y_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>, %[[Y_BF16:.+]]: tensor<2x16x64xbf16>, %[[X_I64:.+]]: tensor<2x16xi64>, %[[Y_I64:.+]]: tensor<2x16xi64>, %[[X_I32:.+]]: tensor<2x16xi32>, %[[Y_I32:.+]]: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>)
// CHECK: %[[R_F32:.+]] = fuse.maximum %[[X_F32]], %[[Y_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.maximum %[[X_F16]], %[[Y_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.maximum %[[X_BF16]], %[[Y_BF16]] : tensor<2x16x64xbf16>
// CHECK: %[[R_I64:.+]] = fuse.maximum %[[X_I64]], %[[Y_I64]] : tensor<2x16xi64>
// CHECK: %[[R_I32:.+]] = fuse.maximum %[[X_I32]], %[[Y_I32]] : tensor<2x16xi32>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]], %[[R_I64]], %[[R_I32]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
func.func @maximum(%x_f32: tensor<2x16x64xf32>, %y_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %y_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>, %y_bf16: tensor<2x16x64xbf16>, %x_i64: tensor<2x16xi64>, %y_i64: tensor<2x16xi64>, %x_i32: tensor<2x16xi32>, %y_i32: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>) {
  %r_f32 = fuse.maximum %x_f32, %y_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.maximum %x_f16, %y_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.maximum %x_bf16, %y_bf16 : tensor<2x16x64xbf16>
  %r_i64 = fuse.maximum %x_i64, %y_i64 : tensor<2x16xi64>
  %r_i32 = fuse.maximum %x_i32, %y_i32 : tensor<2x16xi32>
  return %r_f32, %r_f16, %r_bf16, %r_i64, %r_i32 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
}

// -----

// CHECK-LABEL: func.func @minimum(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[Y_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[Y_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>, %[[Y_BF16:.+]]: tensor<2x16x64xbf16>, %[[X_I64:.+]]: tensor<2x16xi64>, %[[Y_I64:.+]]: tensor<2x16xi64>, %[[X_I32:.+]]: tensor<2x16xi32>, %[[Y_I32:.+]]: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>)
// CHECK: %[[R_F32:.+]] = fuse.minimum %[[X_F32]], %[[Y_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.minimum %[[X_F16]], %[[Y_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.minimum %[[X_BF16]], %[[Y_BF16]] : tensor<2x16x64xbf16>
// CHECK: %[[R_I64:.+]] = fuse.minimum %[[X_I64]], %[[Y_I64]] : tensor<2x16xi64>
// CHECK: %[[R_I32:.+]] = fuse.minimum %[[X_I32]], %[[Y_I32]] : tensor<2x16xi32>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]], %[[R_I64]], %[[R_I32]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
func.func @minimum(%x_f32: tensor<2x16x64xf32>, %y_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %y_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>, %y_bf16: tensor<2x16x64xbf16>, %x_i64: tensor<2x16xi64>, %y_i64: tensor<2x16xi64>, %x_i32: tensor<2x16xi32>, %y_i32: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>) {
  %r_f32 = fuse.minimum %x_f32, %y_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.minimum %x_f16, %y_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.minimum %x_bf16, %y_bf16 : tensor<2x16x64xbf16>
  %r_i64 = fuse.minimum %x_i64, %y_i64 : tensor<2x16xi64>
  %r_i32 = fuse.minimum %x_i32, %y_i32 : tensor<2x16xi32>
  return %r_f32, %r_f16, %r_bf16, %r_i64, %r_i32 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
}

// -----

// CHECK-LABEL: func.func @pow(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[Y_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[Y_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>, %[[Y_BF16:.+]]: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>)
// CHECK: %[[R_F32:.+]] = fuse.pow %[[X_F32]], %[[Y_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.pow %[[X_F16]], %[[Y_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.pow %[[X_BF16]], %[[Y_BF16]] : tensor<2x16x64xbf16>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
func.func @pow(%x_f32: tensor<2x16x64xf32>, %y_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %y_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>, %y_bf16: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>) {
  %r_f32 = fuse.pow %x_f32, %y_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.pow %x_f16, %y_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.pow %x_bf16, %y_bf16 : tensor<2x16x64xbf16>
  return %r_f32, %r_f16, %r_bf16 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
}

// -----

// CHECK-LABEL: func.func @and(
// CHECK-SAME: %[[X_I1:.+]]: tensor<2x16x16xi1>, %[[Y_I1:.+]]: tensor<2x16x16xi1>) -> tensor<2x16x16xi1>
// CHECK: %[[R_I1:.+]] = fuse.and %[[X_I1]], %[[Y_I1]] : tensor<2x16x16xi1>
// CHECK: return %[[R_I1]] : tensor<2x16x16xi1>
func.func @and(%x_i1: tensor<2x16x16xi1>, %y_i1: tensor<2x16x16xi1>) -> tensor<2x16x16xi1> {
  %r_i1 = fuse.and %x_i1, %y_i1 : tensor<2x16x16xi1>
  return %r_i1 : tensor<2x16x16xi1>
}

// -----

// CHECK-LABEL: func.func @or(
// CHECK-SAME: %[[X_I1:.+]]: tensor<2x16x16xi1>, %[[Y_I1:.+]]: tensor<2x16x16xi1>) -> tensor<2x16x16xi1>
// CHECK: %[[R_I1:.+]] = fuse.or %[[X_I1]], %[[Y_I1]] : tensor<2x16x16xi1>
// CHECK: return %[[R_I1]] : tensor<2x16x16xi1>
func.func @or(%x_i1: tensor<2x16x16xi1>, %y_i1: tensor<2x16x16xi1>) -> tensor<2x16x16xi1> {
  %r_i1 = fuse.or %x_i1, %y_i1 : tensor<2x16x16xi1>
  return %r_i1 : tensor<2x16x16xi1>
}

// -----

// CHECK-LABEL: func.func @neg(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>, %[[X_I64:.+]]: tensor<2x16xi64>, %[[X_I32:.+]]: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>)
// CHECK: %[[R_F32:.+]] = fuse.neg %[[X_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.neg %[[X_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.neg %[[X_BF16]] : tensor<2x16x64xbf16>
// CHECK: %[[R_I64:.+]] = fuse.neg %[[X_I64]] : tensor<2x16xi64>
// CHECK: %[[R_I32:.+]] = fuse.neg %[[X_I32]] : tensor<2x16xi32>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]], %[[R_I64]], %[[R_I32]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
func.func @neg(%x_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>, %x_i64: tensor<2x16xi64>, %x_i32: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>) {
  %r_f32 = fuse.neg %x_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.neg %x_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.neg %x_bf16 : tensor<2x16x64xbf16>
  %r_i64 = fuse.neg %x_i64 : tensor<2x16xi64>
  %r_i32 = fuse.neg %x_i32 : tensor<2x16xi32>
  return %r_f32, %r_f16, %r_bf16, %r_i64, %r_i32 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
}

// -----

// CHECK-LABEL: func.func @abs(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>, %[[X_I64:.+]]: tensor<2x16xi64>, %[[X_I32:.+]]: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>)
// CHECK: %[[R_F32:.+]] = fuse.abs %[[X_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.abs %[[X_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.abs %[[X_BF16]] : tensor<2x16x64xbf16>
// CHECK: %[[R_I64:.+]] = fuse.abs %[[X_I64]] : tensor<2x16xi64>
// CHECK: %[[R_I32:.+]] = fuse.abs %[[X_I32]] : tensor<2x16xi32>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]], %[[R_I64]], %[[R_I32]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
func.func @abs(%x_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>, %x_i64: tensor<2x16xi64>, %x_i32: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>) {
  %r_f32 = fuse.abs %x_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.abs %x_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.abs %x_bf16 : tensor<2x16x64xbf16>
  %r_i64 = fuse.abs %x_i64 : tensor<2x16xi64>
  %r_i32 = fuse.abs %x_i32 : tensor<2x16xi32>
  return %r_f32, %r_f16, %r_bf16, %r_i64, %r_i32 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
}

// -----

// CHECK-LABEL: func.func @relu(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>, %[[X_I64:.+]]: tensor<2x16xi64>, %[[X_I32:.+]]: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>)
// CHECK: %[[R_F32:.+]] = fuse.relu %[[X_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.relu %[[X_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.relu %[[X_BF16]] : tensor<2x16x64xbf16>
// CHECK: %[[R_I64:.+]] = fuse.relu %[[X_I64]] : tensor<2x16xi64>
// CHECK: %[[R_I32:.+]] = fuse.relu %[[X_I32]] : tensor<2x16xi32>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]], %[[R_I64]], %[[R_I32]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
func.func @relu(%x_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>, %x_i64: tensor<2x16xi64>, %x_i32: tensor<2x16xi32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>) {
  %r_f32 = fuse.relu %x_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.relu %x_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.relu %x_bf16 : tensor<2x16x64xbf16>
  %r_i64 = fuse.relu %x_i64 : tensor<2x16xi64>
  %r_i32 = fuse.relu %x_i32 : tensor<2x16xi32>
  return %r_f32, %r_f16, %r_bf16, %r_i64, %r_i32 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16xi64>, tensor<2x16xi32>
}

// -----

// CHECK-LABEL: func.func @not(
// CHECK-SAME: %[[X_I1:.+]]: tensor<2x16x16xi1>) -> tensor<2x16x16xi1>
// CHECK: %[[R_I1:.+]] = fuse.not %[[X_I1]] : tensor<2x16x16xi1>
// CHECK: return %[[R_I1]] : tensor<2x16x16xi1>
func.func @not(%x_i1: tensor<2x16x16xi1>) -> tensor<2x16x16xi1> {
  %r_i1 = fuse.not %x_i1 : tensor<2x16x16xi1>
  return %r_i1 : tensor<2x16x16xi1>
}

// -----

// CHECK-LABEL: func.func @exp(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>)
// CHECK: %[[R_F32:.+]] = fuse.exp %[[X_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.exp %[[X_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.exp %[[X_BF16]] : tensor<2x16x64xbf16>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
func.func @exp(%x_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>) {
  %r_f32 = fuse.exp %x_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.exp %x_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.exp %x_bf16 : tensor<2x16x64xbf16>
  return %r_f32, %r_f16, %r_bf16 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
}

// -----

// CHECK-LABEL: func.func @log(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>)
// CHECK: %[[R_F32:.+]] = fuse.log %[[X_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.log %[[X_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.log %[[X_BF16]] : tensor<2x16x64xbf16>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
func.func @log(%x_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>) {
  %r_f32 = fuse.log %x_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.log %x_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.log %x_bf16 : tensor<2x16x64xbf16>
  return %r_f32, %r_f16, %r_bf16 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
}

// -----

// CHECK-LABEL: func.func @tanh(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>)
// CHECK: %[[R_F32:.+]] = fuse.tanh %[[X_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.tanh %[[X_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.tanh %[[X_BF16]] : tensor<2x16x64xbf16>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
func.func @tanh(%x_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>) {
  %r_f32 = fuse.tanh %x_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.tanh %x_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.tanh %x_bf16 : tensor<2x16x64xbf16>
  return %r_f32, %r_f16, %r_bf16 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
}

// -----

// CHECK-LABEL: func.func @erf(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>)
// CHECK: %[[R_F32:.+]] = fuse.erf %[[X_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.erf %[[X_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.erf %[[X_BF16]] : tensor<2x16x64xbf16>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
func.func @erf(%x_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>) {
  %r_f32 = fuse.erf %x_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.erf %x_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.erf %x_bf16 : tensor<2x16x64xbf16>
  return %r_f32, %r_f16, %r_bf16 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
}

// -----

// CHECK-LABEL: func.func @sqrt(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>)
// CHECK: %[[R_F32:.+]] = fuse.sqrt %[[X_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.sqrt %[[X_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.sqrt %[[X_BF16]] : tensor<2x16x64xbf16>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
func.func @sqrt(%x_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>) {
  %r_f32 = fuse.sqrt %x_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.sqrt %x_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.sqrt %x_bf16 : tensor<2x16x64xbf16>
  return %r_f32, %r_f16, %r_bf16 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
}

// -----

// CHECK-LABEL: func.func @rsqrt(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>)
// CHECK: %[[R_F32:.+]] = fuse.rsqrt %[[X_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.rsqrt %[[X_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.rsqrt %[[X_BF16]] : tensor<2x16x64xbf16>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
func.func @rsqrt(%x_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>) {
  %r_f32 = fuse.rsqrt %x_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.rsqrt %x_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.rsqrt %x_bf16 : tensor<2x16x64xbf16>
  return %r_f32, %r_f16, %r_bf16 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
}

// -----

// CHECK-LABEL: func.func @reciprocal(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>)
// CHECK: %[[R_F32:.+]] = fuse.reciprocal %[[X_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.reciprocal %[[X_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.reciprocal %[[X_BF16]] : tensor<2x16x64xbf16>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
func.func @reciprocal(%x_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>) {
  %r_f32 = fuse.reciprocal %x_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.reciprocal %x_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.reciprocal %x_bf16 : tensor<2x16x64xbf16>
  return %r_f32, %r_f16, %r_bf16 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
}

// -----

// CHECK-LABEL: func.func @sigmoid(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>)
// CHECK: %[[R_F32:.+]] = fuse.sigmoid %[[X_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.sigmoid %[[X_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.sigmoid %[[X_BF16]] : tensor<2x16x64xbf16>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
func.func @sigmoid(%x_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>) {
  %r_f32 = fuse.sigmoid %x_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.sigmoid %x_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.sigmoid %x_bf16 : tensor<2x16x64xbf16>
  return %r_f32, %r_f16, %r_bf16 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
}

// -----

// CHECK-LABEL: func.func @silu(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x64xf32>, %[[X_F16:.+]]: tensor<2x16x64xf16>, %[[X_BF16:.+]]: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>)
// CHECK: %[[R_F32:.+]] = fuse.silu %[[X_F32]] : tensor<2x16x64xf32>
// CHECK: %[[R_F16:.+]] = fuse.silu %[[X_F16]] : tensor<2x16x64xf16>
// CHECK: %[[R_BF16:.+]] = fuse.silu %[[X_BF16]] : tensor<2x16x64xbf16>
// CHECK: return %[[R_F32]], %[[R_F16]], %[[R_BF16]] : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
func.func @silu(%x_f32: tensor<2x16x64xf32>, %x_f16: tensor<2x16x64xf16>, %x_bf16: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>) {
  %r_f32 = fuse.silu %x_f32 : tensor<2x16x64xf32>
  %r_f16 = fuse.silu %x_f16 : tensor<2x16x64xf16>
  %r_bf16 = fuse.silu %x_bf16 : tensor<2x16x64xbf16>
  return %r_f32, %r_f16, %r_bf16 : tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>
}

// -----

// GELU, exact (erf) and GPT-2's tanh approximation.
// CHECK-LABEL: func.func @gelu(
// CHECK-SAME: %[[X_F32:.+]]: tensor<2x16x256xf32>, %[[X_F16:.+]]: tensor<2x16x256xf16>, %[[X_BF16:.+]]: tensor<2x16x256xbf16>) -> (tensor<2x16x256xf32>, tensor<2x16x256xf32>, tensor<2x16x256xf16>, tensor<2x16x256xbf16>)
// CHECK: %[[EXACT:.+]] = fuse.gelu %[[X_F32]], approximate = erf : tensor<2x16x256xf32>
// CHECK: %[[APPROX:.+]] = fuse.gelu %[[X_F32]], approximate = tanh : tensor<2x16x256xf32>
// CHECK: %[[EXACT_F16:.+]] = fuse.gelu %[[X_F16]], approximate = erf : tensor<2x16x256xf16>
// CHECK: %[[APPROX_BF16:.+]] = fuse.gelu %[[X_BF16]], approximate = tanh : tensor<2x16x256xbf16>
// CHECK: return %[[EXACT]], %[[APPROX]], %[[EXACT_F16]], %[[APPROX_BF16]] : tensor<2x16x256xf32>, tensor<2x16x256xf32>, tensor<2x16x256xf16>, tensor<2x16x256xbf16>
func.func @gelu(%x_f32: tensor<2x16x256xf32>, %x_f16: tensor<2x16x256xf16>, %x_bf16: tensor<2x16x256xbf16>) -> (tensor<2x16x256xf32>, tensor<2x16x256xf32>, tensor<2x16x256xf16>, tensor<2x16x256xbf16>) {
  %exact = fuse.gelu %x_f32, approximate = erf : tensor<2x16x256xf32>
  %approx = fuse.gelu %x_f32, approximate = tanh : tensor<2x16x256xf32>
  %exact_f16 = fuse.gelu %x_f16, approximate = erf : tensor<2x16x256xf16>
  %approx_bf16 = fuse.gelu %x_bf16, approximate = tanh : tensor<2x16x256xbf16>
  return %exact, %approx, %exact_f16, %approx_bf16 : tensor<2x16x256xf32>, tensor<2x16x256xf32>, tensor<2x16x256xf16>, tensor<2x16x256xbf16>
}

// -----

// All six directions, over every element type.
// CHECK-LABEL: func.func @compare(
// CHECK-SAME: %[[A:.+]]: tensor<2x16xf32>, %[[B:.+]]: tensor<2x16xf32>, %[[H:.+]]: tensor<2x16xf16>, %[[G:.+]]: tensor<2x16xbf16>, %[[I:.+]]: tensor<2x16xi64>, %[[J:.+]]: tensor<2x16xi32>, %[[P:.+]]: tensor<2x16xi1>, %[[Q:.+]]: tensor<2x16xi1>) -> (tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>)
// CHECK: %[[EQ:.+]] = fuse.compare eq, %[[A]], %[[B]] : tensor<2x16xf32>
// CHECK: %[[NE:.+]] = fuse.compare ne, %[[H]], %[[H]] : tensor<2x16xf16>
// CHECK: %[[LT:.+]] = fuse.compare lt, %[[G]], %[[G]] : tensor<2x16xbf16>
// CHECK: %[[LE:.+]] = fuse.compare le, %[[I]], %[[I]] : tensor<2x16xi64>
// CHECK: %[[GT:.+]] = fuse.compare gt, %[[J]], %[[J]] : tensor<2x16xi32>
// CHECK: %[[GE:.+]] = fuse.compare ge, %[[A]], %[[B]] : tensor<2x16xf32>
// CHECK: %[[EQ_I1:.+]] = fuse.compare eq, %[[P]], %[[Q]] : tensor<2x16xi1>
// CHECK: %[[NE_I1:.+]] = fuse.compare ne, %[[P]], %[[Q]] : tensor<2x16xi1>
// CHECK: return %[[EQ]], %[[NE]], %[[LT]], %[[LE]], %[[GT]], %[[GE]], %[[EQ_I1]], %[[NE_I1]] : tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>
func.func @compare(%a: tensor<2x16xf32>, %b: tensor<2x16xf32>, %h: tensor<2x16xf16>, %g: tensor<2x16xbf16>, %i: tensor<2x16xi64>, %j: tensor<2x16xi32>, %p: tensor<2x16xi1>, %q: tensor<2x16xi1>) -> (tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>) {
  %eq = fuse.compare eq, %a, %b : tensor<2x16xf32>
  %ne = fuse.compare ne, %h, %h : tensor<2x16xf16>
  %lt = fuse.compare lt, %g, %g : tensor<2x16xbf16>
  %le = fuse.compare le, %i, %i : tensor<2x16xi64>
  %gt = fuse.compare gt, %j, %j : tensor<2x16xi32>
  %ge = fuse.compare ge, %a, %b : tensor<2x16xf32>
  %eq_i1 = fuse.compare eq, %p, %q : tensor<2x16xi1>
  %ne_i1 = fuse.compare ne, %p, %q : tensor<2x16xi1>
  return %eq, %ne, %lt, %le, %gt, %ge, %eq_i1, %ne_i1 : tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x16xi1>
}

// -----

// torch.where over every element type: masked_fill of attention scores,
// label masking, boolean choice.
// CHECK-LABEL: func.func @select(
// CHECK-SAME: %[[MASK:.+]]: tensor<2x4x16x16xi1>, %[[SCORES:.+]]: tensor<2x4x16x16xf32>, %[[FILL:.+]]: tensor<2x4x16x16xf32>, %[[H:.+]]: tensor<2x4x16x16xf16>, %[[G:.+]]: tensor<2x4x16x16xbf16>, %[[COND:.+]]: tensor<2x16xi1>, %[[LABELS:.+]]: tensor<2x16xi64>, %[[IGNORE:.+]]: tensor<2x16xi64>, %[[IDS:.+]]: tensor<2x16xi32>, %[[P:.+]]: tensor<2x16xi1>, %[[Q:.+]]: tensor<2x16xi1>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf16>, tensor<2x4x16x16xbf16>, tensor<2x16xi64>, tensor<2x16xi32>, tensor<2x16xi1>)
// CHECK: %[[MASKED:.+]] = fuse.select %[[MASK]], %[[SCORES]], %[[FILL]] : tensor<2x4x16x16xi1>, tensor<2x4x16x16xf32>
// CHECK: %[[SEL_F16:.+]] = fuse.select %[[MASK]], %[[H]], %[[H]] : tensor<2x4x16x16xi1>, tensor<2x4x16x16xf16>
// CHECK: %[[SEL_BF16:.+]] = fuse.select %[[MASK]], %[[G]], %[[G]] : tensor<2x4x16x16xi1>, tensor<2x4x16x16xbf16>
// CHECK: %[[KEPT:.+]] = fuse.select %[[COND]], %[[LABELS]], %[[IGNORE]] : tensor<2x16xi1>, tensor<2x16xi64>
// CHECK: %[[SEL_I32:.+]] = fuse.select %[[COND]], %[[IDS]], %[[IDS]] : tensor<2x16xi1>, tensor<2x16xi32>
// CHECK: %[[SEL_I1:.+]] = fuse.select %[[COND]], %[[P]], %[[Q]] : tensor<2x16xi1>, tensor<2x16xi1>
// CHECK: return %[[MASKED]], %[[SEL_F16]], %[[SEL_BF16]], %[[KEPT]], %[[SEL_I32]], %[[SEL_I1]] : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf16>, tensor<2x4x16x16xbf16>, tensor<2x16xi64>, tensor<2x16xi32>, tensor<2x16xi1>
func.func @select(%mask: tensor<2x4x16x16xi1>, %scores: tensor<2x4x16x16xf32>, %fill: tensor<2x4x16x16xf32>, %h: tensor<2x4x16x16xf16>, %g: tensor<2x4x16x16xbf16>, %cond: tensor<2x16xi1>, %labels: tensor<2x16xi64>, %ignore: tensor<2x16xi64>, %ids: tensor<2x16xi32>, %p: tensor<2x16xi1>, %q: tensor<2x16xi1>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf16>, tensor<2x4x16x16xbf16>, tensor<2x16xi64>, tensor<2x16xi32>, tensor<2x16xi1>) {
  %masked = fuse.select %mask, %scores, %fill : tensor<2x4x16x16xi1>, tensor<2x4x16x16xf32>
  %sel_f16 = fuse.select %mask, %h, %h : tensor<2x4x16x16xi1>, tensor<2x4x16x16xf16>
  %sel_bf16 = fuse.select %mask, %g, %g : tensor<2x4x16x16xi1>, tensor<2x4x16x16xbf16>
  %kept = fuse.select %cond, %labels, %ignore : tensor<2x16xi1>, tensor<2x16xi64>
  %sel_i32 = fuse.select %cond, %ids, %ids : tensor<2x16xi1>, tensor<2x16xi32>
  %sel_i1 = fuse.select %cond, %p, %q : tensor<2x16xi1>, tensor<2x16xi1>
  return %masked, %sel_f16, %sel_bf16, %kept, %sel_i32, %sel_i1 : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf16>, tensor<2x4x16x16xbf16>, tensor<2x16xi64>, tensor<2x16xi32>, tensor<2x16xi1>
}

// -----

// Mixed-precision conversions and integer/boolean conversions.
// CHECK-LABEL: func.func @cast(
// CHECK-SAME: %[[X:.+]]: tensor<2x16x64xf32>, %[[H:.+]]: tensor<2x16x64xf16>, %[[IDS:.+]]: tensor<2x16xi64>, %[[IDS32:.+]]: tensor<2x16xi32>, %[[MASK:.+]]: tensor<2x16xi1>) -> (tensor<2x16x64xbf16>, tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16x64xf32>, tensor<2x16xi32>, tensor<2x16xi64>, tensor<2x16xf32>, tensor<2x16xi1>, tensor<2x16xf32>, tensor<2x16xi64>, tensor<2x16xi32>, tensor<2x16xbf16>)
// CHECK: %[[TO_BF16:.+]] = fuse.cast %[[X]] : tensor<2x16x64xf32> to tensor<2x16x64xbf16>
// CHECK: %[[TO_F32:.+]] = fuse.cast %[[TO_BF16]] : tensor<2x16x64xbf16> to tensor<2x16x64xf32>
// CHECK: %[[TO_F16:.+]] = fuse.cast %[[X]] : tensor<2x16x64xf32> to tensor<2x16x64xf16>
// CHECK: %[[F16_BF16:.+]] = fuse.cast %[[H]] : tensor<2x16x64xf16> to tensor<2x16x64xbf16>
// CHECK: %[[F16_F32:.+]] = fuse.cast %[[H]] : tensor<2x16x64xf16> to tensor<2x16x64xf32>
// CHECK: %[[NARROW:.+]] = fuse.cast %[[IDS]] : tensor<2x16xi64> to tensor<2x16xi32>
// CHECK: %[[WIDEN:.+]] = fuse.cast %[[IDS32]] : tensor<2x16xi32> to tensor<2x16xi64>
// CHECK: %[[I_F:.+]] = fuse.cast %[[IDS]] : tensor<2x16xi64> to tensor<2x16xf32>
// CHECK: %[[NONZERO:.+]] = fuse.cast %[[I_F]] : tensor<2x16xf32> to tensor<2x16xi1>
// CHECK: %[[B_F:.+]] = fuse.cast %[[MASK]] : tensor<2x16xi1> to tensor<2x16xf32>
// CHECK: %[[B_I:.+]] = fuse.cast %[[MASK]] : tensor<2x16xi1> to tensor<2x16xi64>
// CHECK: %[[F_I:.+]] = fuse.cast %[[B_F]] : tensor<2x16xf32> to tensor<2x16xi32>
// CHECK: %[[I32_BF16:.+]] = fuse.cast %[[IDS32]] : tensor<2x16xi32> to tensor<2x16xbf16>
// CHECK: return %[[TO_BF16]], %[[TO_F32]], %[[TO_F16]], %[[F16_BF16]], %[[F16_F32]], %[[NARROW]], %[[WIDEN]], %[[I_F]], %[[NONZERO]], %[[B_F]], %[[B_I]], %[[F_I]], %[[I32_BF16]] : tensor<2x16x64xbf16>, tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16x64xf32>, tensor<2x16xi32>, tensor<2x16xi64>, tensor<2x16xf32>, tensor<2x16xi1>, tensor<2x16xf32>, tensor<2x16xi64>, tensor<2x16xi32>, tensor<2x16xbf16>
func.func @cast(%x: tensor<2x16x64xf32>, %h: tensor<2x16x64xf16>, %ids: tensor<2x16xi64>, %ids32: tensor<2x16xi32>, %mask: tensor<2x16xi1>) -> (tensor<2x16x64xbf16>, tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16x64xf32>, tensor<2x16xi32>, tensor<2x16xi64>, tensor<2x16xf32>, tensor<2x16xi1>, tensor<2x16xf32>, tensor<2x16xi64>, tensor<2x16xi32>, tensor<2x16xbf16>) {
  %to_bf16 = fuse.cast %x : tensor<2x16x64xf32> to tensor<2x16x64xbf16>
  %to_f32 = fuse.cast %to_bf16 : tensor<2x16x64xbf16> to tensor<2x16x64xf32>
  %to_f16 = fuse.cast %x : tensor<2x16x64xf32> to tensor<2x16x64xf16>
  %f16_bf16 = fuse.cast %h : tensor<2x16x64xf16> to tensor<2x16x64xbf16>
  %f16_f32 = fuse.cast %h : tensor<2x16x64xf16> to tensor<2x16x64xf32>
  %narrow = fuse.cast %ids : tensor<2x16xi64> to tensor<2x16xi32>
  %widen = fuse.cast %ids32 : tensor<2x16xi32> to tensor<2x16xi64>
  %i_f = fuse.cast %ids : tensor<2x16xi64> to tensor<2x16xf32>
  %nonzero = fuse.cast %i_f : tensor<2x16xf32> to tensor<2x16xi1>
  %b_f = fuse.cast %mask : tensor<2x16xi1> to tensor<2x16xf32>
  %b_i = fuse.cast %mask : tensor<2x16xi1> to tensor<2x16xi64>
  %f_i = fuse.cast %b_f : tensor<2x16xf32> to tensor<2x16xi32>
  %i32_bf16 = fuse.cast %ids32 : tensor<2x16xi32> to tensor<2x16xbf16>
  return %to_bf16, %to_f32, %to_f16, %f16_bf16, %f16_f32, %narrow, %widen, %i_f, %nonzero, %b_f, %b_i, %f_i, %i32_bf16 : tensor<2x16x64xbf16>, tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<2x16x64xf32>, tensor<2x16xi32>, tensor<2x16xi64>, tensor<2x16xf32>, tensor<2x16xi1>, tensor<2x16xf32>, tensor<2x16xi64>, tensor<2x16xi32>, tensor<2x16xbf16>
}

// -----

// Splat constants of every element type; their results are named %cst,
// %cst_0, ... (OpAsmOpInterface).
// CHECK-LABEL: func.func @constant_splat(
// CHECK-SAME: ) -> (tensor<2x16x64xf32>, tensor<64xf16>, tensor<64xbf16>, tensor<2x16xi64>, tensor<16xi32>, tensor<16x16xi1>, tensor<16x16xi1>, tensor<f32>, tensor<i64>, tensor<2x4x16x16xf32>)
// CHECK: %[[ZEROS:cst]] = fuse.constant dense<0.000000e+00> : tensor<2x16x64xf32>
// CHECK: %[[HALF:cst_[0-9]+]] = fuse.constant dense<5.000000e-01> : tensor<64xf16>
// CHECK: %[[ONES:cst_[0-9]+]] = fuse.constant dense<1.000000e+00> : tensor<64xbf16>
// CHECK: %[[IGNORE:cst_[0-9]+]] = fuse.constant dense<-100> : tensor<2x16xi64>
// CHECK: %[[SEVEN:cst_[0-9]+]] = fuse.constant dense<7> : tensor<16xi32>
// CHECK: %[[ALL:cst_[0-9]+]] = fuse.constant dense<true> : tensor<16x16xi1>
// CHECK: %[[NONE:cst_[0-9]+]] = fuse.constant dense<false> : tensor<16x16xi1>
// CHECK: %[[SCALE:cst_[0-9]+]] = fuse.constant dense<1.250000e-01> : tensor<f32>
// CHECK: %[[SEED:cst_[0-9]+]] = fuse.constant dense<42> : tensor<i64>
// CHECK: %[[NEG_INF:cst_[0-9]+]] = fuse.constant dense<0xFF800000> : tensor<2x4x16x16xf32>
// CHECK: return %[[ZEROS]], %[[HALF]], %[[ONES]], %[[IGNORE]], %[[SEVEN]], %[[ALL]], %[[NONE]], %[[SCALE]], %[[SEED]], %[[NEG_INF]] : tensor<2x16x64xf32>, tensor<64xf16>, tensor<64xbf16>, tensor<2x16xi64>, tensor<16xi32>, tensor<16x16xi1>, tensor<16x16xi1>, tensor<f32>, tensor<i64>, tensor<2x4x16x16xf32>
func.func @constant_splat() -> (tensor<2x16x64xf32>, tensor<64xf16>, tensor<64xbf16>, tensor<2x16xi64>, tensor<16xi32>, tensor<16x16xi1>, tensor<16x16xi1>, tensor<f32>, tensor<i64>, tensor<2x4x16x16xf32>) {
  %zeros = fuse.constant dense<0.0> : tensor<2x16x64xf32>
  %half = fuse.constant dense<0.5> : tensor<64xf16>
  %ones = fuse.constant dense<1.0> : tensor<64xbf16>
  %ignore = fuse.constant dense<-100> : tensor<2x16xi64>
  %seven = fuse.constant dense<7> : tensor<16xi32>
  %all = fuse.constant dense<true> : tensor<16x16xi1>
  %none = fuse.constant dense<false> : tensor<16x16xi1>
  %scale = fuse.constant dense<0.125> : tensor<f32>
  %seed = fuse.constant dense<42> : tensor<i64>
  %neg_inf = fuse.constant dense<0xFF800000> : tensor<2x4x16x16xf32>
  return %zeros, %half, %ones, %ignore, %seven, %all, %none, %scale, %seed, %neg_inf : tensor<2x16x64xf32>, tensor<64xf16>, tensor<64xbf16>, tensor<2x16xi64>, tensor<16xi32>, tensor<16x16xi1>, tensor<16x16xi1>, tensor<f32>, tensor<i64>, tensor<2x4x16x16xf32>
}

// -----

// Dense constants of every element type.
// CHECK-LABEL: func.func @constant_dense(
// CHECK-SAME: ) -> (tensor<2x3xf32>, tensor<4xf16>, tensor<2x2xbf16>, tensor<3xi64>, tensor<2x2xi32>, tensor<4xi1>)
// CHECK: %[[TABLE:.+]] = fuse.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK: %[[H:.+]] = fuse.constant dense<[5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00]> : tensor<4xf16>
// CHECK: %[[G:.+]] = fuse.constant dense<{{\[\[}}1.000000e+00, -1.000000e+00], [2.500000e-01, 8.000000e+00]]> : tensor<2x2xbf16>
// CHECK: %[[IDS:.+]] = fuse.constant dense<[0, 1, 2]> : tensor<3xi64>
// CHECK: %[[PERM:.+]] = fuse.constant dense<{{\[\[}}1, 0], [0, 1]]> : tensor<2x2xi32>
// CHECK: %[[KEEP:.+]] = fuse.constant dense<[true, false, true, true]> : tensor<4xi1>
// CHECK: return %[[TABLE]], %[[H]], %[[G]], %[[IDS]], %[[PERM]], %[[KEEP]] : tensor<2x3xf32>, tensor<4xf16>, tensor<2x2xbf16>, tensor<3xi64>, tensor<2x2xi32>, tensor<4xi1>
func.func @constant_dense() -> (tensor<2x3xf32>, tensor<4xf16>, tensor<2x2xbf16>, tensor<3xi64>, tensor<2x2xi32>, tensor<4xi1>) {
  %table = fuse.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %h = fuse.constant dense<[0.5, 1.0, 1.5, 2.0]> : tensor<4xf16>
  %g = fuse.constant dense<[[1.0, -1.0], [0.25, 8.0]]> : tensor<2x2xbf16>
  %ids = fuse.constant dense<[0, 1, 2]> : tensor<3xi64>
  %perm = fuse.constant dense<[[1, 0], [0, 1]]> : tensor<2x2xi32>
  %keep = fuse.constant dense<[true, false, true, true]> : tensor<4xi1>
  return %table, %h, %g, %ids, %perm, %keep : tensor<2x3xf32>, tensor<4xf16>, tensor<2x2xbf16>, tensor<3xi64>, tensor<2x2xi32>, tensor<4xi1>
}

// -----

// Positions (torch.arange) along each dimension, in every numeric type.
// CHECK-LABEL: func.func @iota(
// CHECK-SAME: ) -> (tensor<16xi64>, tensor<2x16xi64>, tensor<16x16xi32>, tensor<16x16xi32>, tensor<16xf32>, tensor<8x16xf16>, tensor<16xbf16>)
// CHECK: %[[POS:.+]] = fuse.iota dim = 0 : tensor<16xi64>
// CHECK: %[[POS2:.+]] = fuse.iota dim = 1 : tensor<2x16xi64>
// CHECK: %[[ROWS:.+]] = fuse.iota dim = 0 : tensor<16x16xi32>
// CHECK: %[[COLS:.+]] = fuse.iota dim = 1 : tensor<16x16xi32>
// CHECK: %[[F:.+]] = fuse.iota dim = 0 : tensor<16xf32>
// CHECK: %[[H:.+]] = fuse.iota dim = 1 : tensor<8x16xf16>
// CHECK: %[[G:.+]] = fuse.iota dim = 0 : tensor<16xbf16>
// CHECK: return %[[POS]], %[[POS2]], %[[ROWS]], %[[COLS]], %[[F]], %[[H]], %[[G]] : tensor<16xi64>, tensor<2x16xi64>, tensor<16x16xi32>, tensor<16x16xi32>, tensor<16xf32>, tensor<8x16xf16>, tensor<16xbf16>
func.func @iota() -> (tensor<16xi64>, tensor<2x16xi64>, tensor<16x16xi32>, tensor<16x16xi32>, tensor<16xf32>, tensor<8x16xf16>, tensor<16xbf16>) {
  %pos = fuse.iota dim = 0 : tensor<16xi64>
  %pos2 = fuse.iota dim = 1 : tensor<2x16xi64>
  %rows = fuse.iota dim = 0 : tensor<16x16xi32>
  %cols = fuse.iota dim = 1 : tensor<16x16xi32>
  %f = fuse.iota dim = 0 : tensor<16xf32>
  %h = fuse.iota dim = 1 : tensor<8x16xf16>
  %g = fuse.iota dim = 0 : tensor<16xbf16>
  return %pos, %pos2, %rows, %cols, %f, %h, %g : tensor<16xi64>, tensor<2x16xi64>, tensor<16x16xi32>, tensor<16x16xi32>, tensor<16xf32>, tensor<8x16xf16>, tensor<16xbf16>
}

// -----

// Philox random numbers: the three distributions, float and i1 results.
// CHECK-LABEL: func.func @random(
// CHECK-SAME: %[[SEED:.+]]: tensor<i64>, %[[OFFSET:.+]]: tensor<i64>) -> (tensor<2x16x64xf32>, tensor<64xf16>, tensor<64xbf16>, tensor<64x64xf32>, tensor<64x64xbf16>, tensor<2x16x64xi1>, tensor<2x16x64xf32>, tensor<2x16x64xbf16>, tensor<16xi1>)
// CHECK: %[[U:.+]] = fuse.random uniform, %[[SEED]], %[[OFFSET]] : tensor<2x16x64xf32>
// CHECK: %[[U_F16:.+]] = fuse.random uniform, %[[SEED]], %[[OFFSET]] : tensor<64xf16>
// CHECK: %[[U_BF16:.+]] = fuse.random uniform, %[[SEED]], %[[OFFSET]] : tensor<64xbf16>
// CHECK: %[[N:.+]] = fuse.random normal, %[[SEED]], %[[OFFSET]] : tensor<64x64xf32>
// CHECK: %[[N_BF16:.+]] = fuse.random normal, %[[SEED]], %[[OFFSET]] : tensor<64x64xbf16>
// CHECK: %[[KEEP:.+]] = fuse.random bernoulli, %[[SEED]], %[[OFFSET]], p = 9.000000e-01 : tensor<2x16x64xi1>
// CHECK: %[[KEEP_F32:.+]] = fuse.random bernoulli, %[[SEED]], %[[OFFSET]], p = 5.000000e-01 : tensor<2x16x64xf32>
// CHECK: %[[KEEP_BF16:.+]] = fuse.random bernoulli, %[[SEED]], %[[OFFSET]], p = 1.000000e+00 : tensor<2x16x64xbf16>
// CHECK: %[[NEVER:.+]] = fuse.random bernoulli, %[[SEED]], %[[OFFSET]], p = 0.000000e+00 : tensor<16xi1>
// CHECK: return %[[U]], %[[U_F16]], %[[U_BF16]], %[[N]], %[[N_BF16]], %[[KEEP]], %[[KEEP_F32]], %[[KEEP_BF16]], %[[NEVER]] : tensor<2x16x64xf32>, tensor<64xf16>, tensor<64xbf16>, tensor<64x64xf32>, tensor<64x64xbf16>, tensor<2x16x64xi1>, tensor<2x16x64xf32>, tensor<2x16x64xbf16>, tensor<16xi1>
func.func @random(%seed: tensor<i64>, %offset: tensor<i64>) -> (tensor<2x16x64xf32>, tensor<64xf16>, tensor<64xbf16>, tensor<64x64xf32>, tensor<64x64xbf16>, tensor<2x16x64xi1>, tensor<2x16x64xf32>, tensor<2x16x64xbf16>, tensor<16xi1>) {
  %u = fuse.random uniform, %seed, %offset : tensor<2x16x64xf32>
  %u_f16 = fuse.random uniform, %seed, %offset : tensor<64xf16>
  %u_bf16 = fuse.random uniform, %seed, %offset : tensor<64xbf16>
  %n = fuse.random normal, %seed, %offset : tensor<64x64xf32>
  %n_bf16 = fuse.random normal, %seed, %offset : tensor<64x64xbf16>
  %keep = fuse.random bernoulli, %seed, %offset, p = 0.9 : tensor<2x16x64xi1>
  %keep_f32 = fuse.random bernoulli, %seed, %offset, p = 0.5 : tensor<2x16x64xf32>
  %keep_bf16 = fuse.random bernoulli, %seed, %offset, p = 1.0 : tensor<2x16x64xbf16>
  %never = fuse.random bernoulli, %seed, %offset, p = 0.0 : tensor<16xi1>
  return %u, %u_f16, %u_bf16, %n, %n_bf16, %keep, %keep_f32, %keep_bf16, %never : tensor<2x16x64xf32>, tensor<64xf16>, tensor<64xbf16>, tensor<64x64xf32>, tensor<64x64xbf16>, tensor<2x16x64xi1>, tensor<2x16x64xf32>, tensor<2x16x64xbf16>, tensor<16xi1>
}

// -----

// Bias add, size-1 broadcast, scalar broadcast, causal mask broadcast.
// CHECK-LABEL: func.func @broadcast_in_dim(
// CHECK-SAME: %[[BIAS:.+]]: tensor<64xf32>, %[[STATS:.+]]: tensor<2x16x1xf32>, %[[SCALE:.+]]: tensor<f32>, %[[CAUSAL:.+]]: tensor<16x16xi1>, %[[POS:.+]]: tensor<16xi64>, %[[IDS:.+]]: tensor<1x16xi32>, %[[H:.+]]: tensor<64xf16>, %[[G:.+]]: tensor<2x1x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xi1>, tensor<2x16xi64>, tensor<2x16xi32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<64xf32>)
// CHECK: %[[B:.+]] = fuse.broadcast_in_dim %[[BIAS]], dims = [2] : (tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK: %[[S:.+]] = fuse.broadcast_in_dim %[[STATS]], dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
// CHECK: %[[C:.+]] = fuse.broadcast_in_dim %[[SCALE]], dims = [] : (tensor<f32>) -> tensor<2x4x16x16xf32>
// CHECK: %[[M:.+]] = fuse.broadcast_in_dim %[[CAUSAL]], dims = [2, 3] : (tensor<16x16xi1>) -> tensor<2x4x16x16xi1>
// CHECK: %[[P:.+]] = fuse.broadcast_in_dim %[[POS]], dims = [1] : (tensor<16xi64>) -> tensor<2x16xi64>
// CHECK: %[[I:.+]] = fuse.broadcast_in_dim %[[IDS]], dims = [0, 1] : (tensor<1x16xi32>) -> tensor<2x16xi32>
// CHECK: %[[HB:.+]] = fuse.broadcast_in_dim %[[H]], dims = [2] : (tensor<64xf16>) -> tensor<2x16x64xf16>
// CHECK: %[[GB:.+]] = fuse.broadcast_in_dim %[[G]], dims = [0, 1, 2] : (tensor<2x1x64xbf16>) -> tensor<2x16x64xbf16>
// CHECK: %[[SAME:.+]] = fuse.broadcast_in_dim %[[BIAS]], dims = [0] : (tensor<64xf32>) -> tensor<64xf32>
// CHECK: return %[[B]], %[[S]], %[[C]], %[[M]], %[[P]], %[[I]], %[[HB]], %[[GB]], %[[SAME]] : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xi1>, tensor<2x16xi64>, tensor<2x16xi32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<64xf32>
func.func @broadcast_in_dim(%bias: tensor<64xf32>, %stats: tensor<2x16x1xf32>, %scale: tensor<f32>, %causal: tensor<16x16xi1>, %pos: tensor<16xi64>, %ids: tensor<1x16xi32>, %h: tensor<64xf16>, %g: tensor<2x1x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xi1>, tensor<2x16xi64>, tensor<2x16xi32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<64xf32>) {
  %b = fuse.broadcast_in_dim %bias, dims = [2] : (tensor<64xf32>) -> tensor<2x16x64xf32>
  %s = fuse.broadcast_in_dim %stats, dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %c = fuse.broadcast_in_dim %scale, dims = [] : (tensor<f32>) -> tensor<2x4x16x16xf32>
  %m = fuse.broadcast_in_dim %causal, dims = [2, 3] : (tensor<16x16xi1>) -> tensor<2x4x16x16xi1>
  %p = fuse.broadcast_in_dim %pos, dims = [1] : (tensor<16xi64>) -> tensor<2x16xi64>
  %i = fuse.broadcast_in_dim %ids, dims = [0, 1] : (tensor<1x16xi32>) -> tensor<2x16xi32>
  %hb = fuse.broadcast_in_dim %h, dims = [2] : (tensor<64xf16>) -> tensor<2x16x64xf16>
  %gb = fuse.broadcast_in_dim %g, dims = [0, 1, 2] : (tensor<2x1x64xbf16>) -> tensor<2x16x64xbf16>
  %same = fuse.broadcast_in_dim %bias, dims = [0] : (tensor<64xf32>) -> tensor<64xf32>
  return %b, %s, %c, %m, %p, %i, %hb, %gb, %same : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xi1>, tensor<2x16xi64>, tensor<2x16xi32>, tensor<2x16x64xf16>, tensor<2x16x64xbf16>, tensor<64xf32>
}

// -----

// Flatten tokens, split heads, and reshapes of every element type.
// CHECK-LABEL: func.func @reshape(
// CHECK-SAME: %[[X:.+]]: tensor<2x16x64xf32>, %[[G:.+]]: tensor<2x16x64xbf16>, %[[H:.+]]: tensor<32x64xf16>, %[[IDS:.+]]: tensor<2x16xi64>, %[[IDS32:.+]]: tensor<32xi32>, %[[MASK:.+]]: tensor<16x16xi1>, %[[LOSS:.+]]: tensor<1xf32>) -> (tensor<32x64xf32>, tensor<2x16x4x16xbf16>, tensor<2x16x64xf16>, tensor<32xi64>, tensor<2x16xi32>, tensor<1x1x16x16xi1>, tensor<f32>)
// CHECK: %[[FLAT:.+]] = fuse.reshape %[[X]] : (tensor<2x16x64xf32>) -> tensor<32x64xf32>
// CHECK: %[[HEADS:.+]] = fuse.reshape %[[G]] : (tensor<2x16x64xbf16>) -> tensor<2x16x4x16xbf16>
// CHECK: %[[UNFLAT:.+]] = fuse.reshape %[[H]] : (tensor<32x64xf16>) -> tensor<2x16x64xf16>
// CHECK: %[[TOKENS:.+]] = fuse.reshape %[[IDS]] : (tensor<2x16xi64>) -> tensor<32xi64>
// CHECK: %[[IDS2:.+]] = fuse.reshape %[[IDS32]] : (tensor<32xi32>) -> tensor<2x16xi32>
// CHECK: %[[MASK4:.+]] = fuse.reshape %[[MASK]] : (tensor<16x16xi1>) -> tensor<1x1x16x16xi1>
// CHECK: %[[SCALAR:.+]] = fuse.reshape %[[LOSS]] : (tensor<1xf32>) -> tensor<f32>
// CHECK: return %[[FLAT]], %[[HEADS]], %[[UNFLAT]], %[[TOKENS]], %[[IDS2]], %[[MASK4]], %[[SCALAR]] : tensor<32x64xf32>, tensor<2x16x4x16xbf16>, tensor<2x16x64xf16>, tensor<32xi64>, tensor<2x16xi32>, tensor<1x1x16x16xi1>, tensor<f32>
func.func @reshape(%x: tensor<2x16x64xf32>, %g: tensor<2x16x64xbf16>, %h: tensor<32x64xf16>, %ids: tensor<2x16xi64>, %ids32: tensor<32xi32>, %mask: tensor<16x16xi1>, %loss: tensor<1xf32>) -> (tensor<32x64xf32>, tensor<2x16x4x16xbf16>, tensor<2x16x64xf16>, tensor<32xi64>, tensor<2x16xi32>, tensor<1x1x16x16xi1>, tensor<f32>) {
  %flat = fuse.reshape %x : (tensor<2x16x64xf32>) -> tensor<32x64xf32>
  %heads = fuse.reshape %g : (tensor<2x16x64xbf16>) -> tensor<2x16x4x16xbf16>
  %unflat = fuse.reshape %h : (tensor<32x64xf16>) -> tensor<2x16x64xf16>
  %tokens = fuse.reshape %ids : (tensor<2x16xi64>) -> tensor<32xi64>
  %ids2 = fuse.reshape %ids32 : (tensor<32xi32>) -> tensor<2x16xi32>
  %mask4 = fuse.reshape %mask : (tensor<16x16xi1>) -> tensor<1x1x16x16xi1>
  %scalar = fuse.reshape %loss : (tensor<1xf32>) -> tensor<f32>
  return %flat, %heads, %unflat, %tokens, %ids2, %mask4, %scalar : tensor<32x64xf32>, tensor<2x16x4x16xbf16>, tensor<2x16x64xf16>, tensor<32xi64>, tensor<2x16xi32>, tensor<1x1x16x16xi1>, tensor<f32>
}

// -----

// Head split permutation, matrix transpose, and other element types.
// CHECK-LABEL: func.func @transpose(
// CHECK-SAME: %[[Q:.+]]: tensor<2x16x4x16xbf16>, %[[W:.+]]: tensor<256x64xf32>, %[[H:.+]]: tensor<64x256xf16>, %[[IDS:.+]]: tensor<2x16xi64>, %[[IDS32:.+]]: tensor<2x16xi32>, %[[MASK:.+]]: tensor<2x16x16xi1>) -> (tensor<2x4x16x16xbf16>, tensor<64x256xf32>, tensor<256x64xf16>, tensor<16x2xi64>, tensor<16x2xi32>, tensor<16x16x2xi1>)
// CHECK: %[[QT:.+]] = fuse.transpose %[[Q]], permutation = [0, 2, 1, 3] : (tensor<2x16x4x16xbf16>) -> tensor<2x4x16x16xbf16>
// CHECK: %[[WT:.+]] = fuse.transpose %[[W]], permutation = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
// CHECK: %[[HT:.+]] = fuse.transpose %[[H]], permutation = [1, 0] : (tensor<64x256xf16>) -> tensor<256x64xf16>
// CHECK: %[[IT:.+]] = fuse.transpose %[[IDS]], permutation = [1, 0] : (tensor<2x16xi64>) -> tensor<16x2xi64>
// CHECK: %[[JT:.+]] = fuse.transpose %[[IDS32]], permutation = [1, 0] : (tensor<2x16xi32>) -> tensor<16x2xi32>
// CHECK: %[[MT:.+]] = fuse.transpose %[[MASK]], permutation = [1, 2, 0] : (tensor<2x16x16xi1>) -> tensor<16x16x2xi1>
// CHECK: return %[[QT]], %[[WT]], %[[HT]], %[[IT]], %[[JT]], %[[MT]] : tensor<2x4x16x16xbf16>, tensor<64x256xf32>, tensor<256x64xf16>, tensor<16x2xi64>, tensor<16x2xi32>, tensor<16x16x2xi1>
func.func @transpose(%q: tensor<2x16x4x16xbf16>, %w: tensor<256x64xf32>, %h: tensor<64x256xf16>, %ids: tensor<2x16xi64>, %ids32: tensor<2x16xi32>, %mask: tensor<2x16x16xi1>) -> (tensor<2x4x16x16xbf16>, tensor<64x256xf32>, tensor<256x64xf16>, tensor<16x2xi64>, tensor<16x2xi32>, tensor<16x16x2xi1>) {
  %qt = fuse.transpose %q, permutation = [0, 2, 1, 3] : (tensor<2x16x4x16xbf16>) -> tensor<2x4x16x16xbf16>
  %wt = fuse.transpose %w, permutation = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
  %ht = fuse.transpose %h, permutation = [1, 0] : (tensor<64x256xf16>) -> tensor<256x64xf16>
  %it = fuse.transpose %ids, permutation = [1, 0] : (tensor<2x16xi64>) -> tensor<16x2xi64>
  %jt = fuse.transpose %ids32, permutation = [1, 0] : (tensor<2x16xi32>) -> tensor<16x2xi32>
  %mt = fuse.transpose %mask, permutation = [1, 2, 0] : (tensor<2x16x16xi1>) -> tensor<16x16x2xi1>
  return %qt, %wt, %ht, %it, %jt, %mt : tensor<2x4x16x16xbf16>, tensor<64x256xf32>, tensor<256x64xf16>, tensor<16x2xi64>, tensor<16x2xi32>, tensor<16x16x2xi1>
}

// -----

// Splitting a fused QKV projection, strided and empty slices.
// CHECK-LABEL: func.func @slice(
// CHECK-SAME: %[[QKV:.+]]: tensor<2x16x192xf32>, %[[H:.+]]: tensor<2x16x192xf16>, %[[G:.+]]: tensor<2x16x64xbf16>, %[[IDS:.+]]: tensor<2x16xi64>, %[[IDS32:.+]]: tensor<2x17xi32>, %[[MASK:.+]]: tensor<16x16xi1>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x8x64xbf16>, tensor<2x15xi64>, tensor<2x16xi32>, tensor<8x8xi1>, tensor<2x0x64xf32>)
// CHECK: %[[Q:.+]] = fuse.slice %[[QKV]], start = [0, 0, 0], limit = [2, 16, 64], stride = [1, 1, 1] : (tensor<2x16x192xf32>) -> tensor<2x16x64xf32>
// CHECK: %[[K:.+]] = fuse.slice %[[QKV]], start = [0, 0, 64], limit = [2, 16, 128], stride = [1, 1, 1] : (tensor<2x16x192xf32>) -> tensor<2x16x64xf32>
// CHECK: %[[V:.+]] = fuse.slice %[[H]], start = [0, 0, 128], limit = [2, 16, 192], stride = [1, 1, 1] : (tensor<2x16x192xf16>) -> tensor<2x16x64xf16>
// CHECK: %[[EVEN:.+]] = fuse.slice %[[G]], start = [0, 0, 0], limit = [2, 16, 64], stride = [1, 2, 1] : (tensor<2x16x64xbf16>) -> tensor<2x8x64xbf16>
// CHECK: %[[SHIFTED:.+]] = fuse.slice %[[IDS]], start = [0, 1], limit = [2, 16], stride = [1, 1] : (tensor<2x16xi64>) -> tensor<2x15xi64>
// CHECK: %[[INPUTS:.+]] = fuse.slice %[[IDS32]], start = [0, 0], limit = [2, 16], stride = [1, 1] : (tensor<2x17xi32>) -> tensor<2x16xi32>
// CHECK: %[[ODD:.+]] = fuse.slice %[[MASK]], start = [1, 1], limit = [16, 16], stride = [2, 2] : (tensor<16x16xi1>) -> tensor<8x8xi1>
// CHECK: %[[EMPTY:.+]] = fuse.slice %[[QKV]], start = [0, 5, 0], limit = [2, 5, 64], stride = [1, 1, 1] : (tensor<2x16x192xf32>) -> tensor<2x0x64xf32>
// CHECK: return %[[Q]], %[[K]], %[[V]], %[[EVEN]], %[[SHIFTED]], %[[INPUTS]], %[[ODD]], %[[EMPTY]] : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x8x64xbf16>, tensor<2x15xi64>, tensor<2x16xi32>, tensor<8x8xi1>, tensor<2x0x64xf32>
func.func @slice(%qkv: tensor<2x16x192xf32>, %h: tensor<2x16x192xf16>, %g: tensor<2x16x64xbf16>, %ids: tensor<2x16xi64>, %ids32: tensor<2x17xi32>, %mask: tensor<16x16xi1>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x8x64xbf16>, tensor<2x15xi64>, tensor<2x16xi32>, tensor<8x8xi1>, tensor<2x0x64xf32>) {
  %q = fuse.slice %qkv, start = [0, 0, 0], limit = [2, 16, 64], stride = [1, 1, 1] : (tensor<2x16x192xf32>) -> tensor<2x16x64xf32>
  %k = fuse.slice %qkv, start = [0, 0, 64], limit = [2, 16, 128], stride = [1, 1, 1] : (tensor<2x16x192xf32>) -> tensor<2x16x64xf32>
  %v = fuse.slice %h, start = [0, 0, 128], limit = [2, 16, 192], stride = [1, 1, 1] : (tensor<2x16x192xf16>) -> tensor<2x16x64xf16>
  %even = fuse.slice %g, start = [0, 0, 0], limit = [2, 16, 64], stride = [1, 2, 1] : (tensor<2x16x64xbf16>) -> tensor<2x8x64xbf16>
  %shifted = fuse.slice %ids, start = [0, 1], limit = [2, 16], stride = [1, 1] : (tensor<2x16xi64>) -> tensor<2x15xi64>
  %inputs = fuse.slice %ids32, start = [0, 0], limit = [2, 16], stride = [1, 1] : (tensor<2x17xi32>) -> tensor<2x16xi32>
  %odd = fuse.slice %mask, start = [1, 1], limit = [16, 16], stride = [2, 2] : (tensor<16x16xi1>) -> tensor<8x8xi1>
  %empty = fuse.slice %qkv, start = [0, 5, 0], limit = [2, 5, 64], stride = [1, 1, 1] : (tensor<2x16x192xf32>) -> tensor<2x0x64xf32>
  return %q, %k, %v, %even, %shifted, %inputs, %odd, %empty : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x8x64xbf16>, tensor<2x15xi64>, tensor<2x16xi32>, tensor<8x8xi1>, tensor<2x0x64xf32>
}

// -----

// torch.cat: one, two and three inputs of different sizes along dim.
// CHECK-LABEL: func.func @concat(
// CHECK-SAME: %[[K:.+]]: tensor<2x4x16x16xbf16>, %[[V:.+]]: tensor<2x4x16x16xbf16>, %[[A:.+]]: tensor<2x16x64xf32>, %[[B:.+]]: tensor<2x16x64xf32>, %[[C:.+]]: tensor<2x16x64xf32>, %[[H:.+]]: tensor<3x64xf16>, %[[IDS:.+]]: tensor<2x16xi64>, %[[NEXT:.+]]: tensor<2x1xi64>, %[[I32:.+]]: tensor<4xi32>, %[[P:.+]]: tensor<2x16xi1>, %[[Q:.+]]: tensor<3x16xi1>) -> (tensor<2x4x16x32xbf16>, tensor<2x16x192xf32>, tensor<3x64xf16>, tensor<2x17xi64>, tensor<8xi32>, tensor<5x16xi1>)
// CHECK: %[[KV:.+]] = fuse.concat dim(3) %[[K]], %[[V]] : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> tensor<2x4x16x32xbf16>
// CHECK: %[[QKV:.+]] = fuse.concat dim(2) %[[A]], %[[B]], %[[C]] : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x192xf32>
// CHECK: %[[ONE:.+]] = fuse.concat dim(0) %[[H]] : (tensor<3x64xf16>) -> tensor<3x64xf16>
// CHECK: %[[GROWN:.+]] = fuse.concat dim(1) %[[IDS]], %[[NEXT]] : (tensor<2x16xi64>, tensor<2x1xi64>) -> tensor<2x17xi64>
// CHECK: %[[TWICE:.+]] = fuse.concat dim(0) %[[I32]], %[[I32]] : (tensor<4xi32>, tensor<4xi32>) -> tensor<8xi32>
// CHECK: %[[ROWS:.+]] = fuse.concat dim(0) %[[P]], %[[Q]] : (tensor<2x16xi1>, tensor<3x16xi1>) -> tensor<5x16xi1>
// CHECK: return %[[KV]], %[[QKV]], %[[ONE]], %[[GROWN]], %[[TWICE]], %[[ROWS]] : tensor<2x4x16x32xbf16>, tensor<2x16x192xf32>, tensor<3x64xf16>, tensor<2x17xi64>, tensor<8xi32>, tensor<5x16xi1>
func.func @concat(%k: tensor<2x4x16x16xbf16>, %v: tensor<2x4x16x16xbf16>, %a: tensor<2x16x64xf32>, %b: tensor<2x16x64xf32>, %c: tensor<2x16x64xf32>, %h: tensor<3x64xf16>, %ids: tensor<2x16xi64>, %next: tensor<2x1xi64>, %i32: tensor<4xi32>, %p: tensor<2x16xi1>, %q: tensor<3x16xi1>) -> (tensor<2x4x16x32xbf16>, tensor<2x16x192xf32>, tensor<3x64xf16>, tensor<2x17xi64>, tensor<8xi32>, tensor<5x16xi1>) {
  %kv = fuse.concat dim(3) %k, %v : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> tensor<2x4x16x32xbf16>
  %qkv = fuse.concat dim(2) %a, %b, %c : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x192xf32>
  %one = fuse.concat dim(0) %h : (tensor<3x64xf16>) -> tensor<3x64xf16>
  %grown = fuse.concat dim(1) %ids, %next : (tensor<2x16xi64>, tensor<2x1xi64>) -> tensor<2x17xi64>
  %twice = fuse.concat dim(0) %i32, %i32 : (tensor<4xi32>, tensor<4xi32>) -> tensor<8xi32>
  %rows = fuse.concat dim(0) %p, %q : (tensor<2x16xi1>, tensor<3x16xi1>) -> tensor<5x16xi1>
  return %kv, %qkv, %one, %grown, %twice, %rows : tensor<2x4x16x32xbf16>, tensor<2x16x192xf32>, tensor<3x64xf16>, tensor<2x17xi64>, tensor<8xi32>, tensor<5x16xi1>
}

// -----

// Embedding lookups (i64 and i32 indices), index_select along dim 1, a
// 0-d index, and gathers of integer and boolean tables.
// CHECK-LABEL: func.func @gather(
// CHECK-SAME: %[[WTE:.+]]: tensor<128x64xf32>, %[[TOKENS:.+]]: tensor<2x16xi64>, %[[WPE:.+]]: tensor<16x64xbf16>, %[[POS:.+]]: tensor<16xi32>, %[[H:.+]]: tensor<2x16x64xf16>, %[[COLS:.+]]: tensor<8xi64>, %[[LAST:.+]]: tensor<i64>, %[[TABLE:.+]]: tensor<128xi64>, %[[T32:.+]]: tensor<128x4xi32>, %[[FLAGS:.+]]: tensor<128xi1>) -> (tensor<2x16x64xf32>, tensor<16x64xbf16>, tensor<2x8x64xf16>, tensor<2x64xf16>, tensor<2x16xi64>, tensor<2x16x4xi32>, tensor<2x16xi1>)
// CHECK: %[[EMB:.+]] = fuse.gather %[[WTE]][%[[TOKENS]]], dim = 0 : (tensor<128x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
// CHECK: %[[PEMB:.+]] = fuse.gather %[[WPE]][%[[POS]]], dim = 0 : (tensor<16x64xbf16>, tensor<16xi32>) -> tensor<16x64xbf16>
// CHECK: %[[PICKED:.+]] = fuse.gather %[[H]][%[[COLS]]], dim = 1 : (tensor<2x16x64xf16>, tensor<8xi64>) -> tensor<2x8x64xf16>
// CHECK: %[[FINAL:.+]] = fuse.gather %[[H]][%[[LAST]]], dim = 1 : (tensor<2x16x64xf16>, tensor<i64>) -> tensor<2x64xf16>
// CHECK: %[[MAPPED:.+]] = fuse.gather %[[TABLE]][%[[TOKENS]]], dim = 0 : (tensor<128xi64>, tensor<2x16xi64>) -> tensor<2x16xi64>
// CHECK: %[[ROWS:.+]] = fuse.gather %[[T32]][%[[TOKENS]]], dim = 0 : (tensor<128x4xi32>, tensor<2x16xi64>) -> tensor<2x16x4xi32>
// CHECK: %[[SPECIAL:.+]] = fuse.gather %[[FLAGS]][%[[TOKENS]]], dim = 0 : (tensor<128xi1>, tensor<2x16xi64>) -> tensor<2x16xi1>
// CHECK: return %[[EMB]], %[[PEMB]], %[[PICKED]], %[[FINAL]], %[[MAPPED]], %[[ROWS]], %[[SPECIAL]] : tensor<2x16x64xf32>, tensor<16x64xbf16>, tensor<2x8x64xf16>, tensor<2x64xf16>, tensor<2x16xi64>, tensor<2x16x4xi32>, tensor<2x16xi1>
func.func @gather(%wte: tensor<128x64xf32>, %tokens: tensor<2x16xi64>, %wpe: tensor<16x64xbf16>, %pos: tensor<16xi32>, %h: tensor<2x16x64xf16>, %cols: tensor<8xi64>, %last: tensor<i64>, %table: tensor<128xi64>, %t32: tensor<128x4xi32>, %flags: tensor<128xi1>) -> (tensor<2x16x64xf32>, tensor<16x64xbf16>, tensor<2x8x64xf16>, tensor<2x64xf16>, tensor<2x16xi64>, tensor<2x16x4xi32>, tensor<2x16xi1>) {
  %emb = fuse.gather %wte[%tokens], dim = 0 : (tensor<128x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
  %pemb = fuse.gather %wpe[%pos], dim = 0 : (tensor<16x64xbf16>, tensor<16xi32>) -> tensor<16x64xbf16>
  %picked = fuse.gather %h[%cols], dim = 1 : (tensor<2x16x64xf16>, tensor<8xi64>) -> tensor<2x8x64xf16>
  %final = fuse.gather %h[%last], dim = 1 : (tensor<2x16x64xf16>, tensor<i64>) -> tensor<2x64xf16>
  %mapped = fuse.gather %table[%tokens], dim = 0 : (tensor<128xi64>, tensor<2x16xi64>) -> tensor<2x16xi64>
  %rows = fuse.gather %t32[%tokens], dim = 0 : (tensor<128x4xi32>, tensor<2x16xi64>) -> tensor<2x16x4xi32>
  %special = fuse.gather %flags[%tokens], dim = 0 : (tensor<128xi1>, tensor<2x16xi64>) -> tensor<2x16xi1>
  return %emb, %pemb, %picked, %final, %mapped, %rows, %special : tensor<2x16x64xf32>, tensor<16x64xbf16>, tensor<2x8x64xf16>, tensor<2x64xf16>, tensor<2x16xi64>, tensor<2x16x4xi32>, tensor<2x16xi1>
}

// -----

// Embedding backward, and scatters of every numeric element type.
// CHECK-LABEL: func.func @scatter_add(
// CHECK-SAME: %[[ZEROS:.+]]: tensor<128x64xf32>, %[[TOKENS:.+]]: tensor<2x16xi64>, %[[DEMB:.+]]: tensor<2x16x64xf32>, %[[G:.+]]: tensor<16x64xbf16>, %[[POS:.+]]: tensor<16xi32>, %[[DPOS:.+]]: tensor<16x64xbf16>, %[[H:.+]]: tensor<2x16x64xf16>, %[[COLS:.+]]: tensor<8xi64>, %[[DH:.+]]: tensor<2x8x64xf16>, %[[COUNTS:.+]]: tensor<128xi64>, %[[ONES:.+]]: tensor<2x16xi64>, %[[C32:.+]]: tensor<4x128xi32>, %[[U32:.+]]: tensor<4x2x16xi32>) -> (tensor<128x64xf32>, tensor<16x64xbf16>, tensor<2x16x64xf16>, tensor<128xi64>, tensor<4x128xi32>)
// CHECK: %[[DWTE:.+]] = fuse.scatter_add %[[ZEROS]][%[[TOKENS]]], %[[DEMB]], dim = 0 : (tensor<128x64xf32>, tensor<2x16xi64>, tensor<2x16x64xf32>) -> tensor<128x64xf32>
// CHECK: %[[DWPE:.+]] = fuse.scatter_add %[[G]][%[[POS]]], %[[DPOS]], dim = 0 : (tensor<16x64xbf16>, tensor<16xi32>, tensor<16x64xbf16>) -> tensor<16x64xbf16>
// CHECK: %[[DH2:.+]] = fuse.scatter_add %[[H]][%[[COLS]]], %[[DH]], dim = 1 : (tensor<2x16x64xf16>, tensor<8xi64>, tensor<2x8x64xf16>) -> tensor<2x16x64xf16>
// CHECK: %[[HIST:.+]] = fuse.scatter_add %[[COUNTS]][%[[TOKENS]]], %[[ONES]], dim = 0 : (tensor<128xi64>, tensor<2x16xi64>, tensor<2x16xi64>) -> tensor<128xi64>
// CHECK: %[[HIST32:.+]] = fuse.scatter_add %[[C32]][%[[TOKENS]]], %[[U32]], dim = 1 : (tensor<4x128xi32>, tensor<2x16xi64>, tensor<4x2x16xi32>) -> tensor<4x128xi32>
// CHECK: return %[[DWTE]], %[[DWPE]], %[[DH2]], %[[HIST]], %[[HIST32]] : tensor<128x64xf32>, tensor<16x64xbf16>, tensor<2x16x64xf16>, tensor<128xi64>, tensor<4x128xi32>
func.func @scatter_add(%zeros: tensor<128x64xf32>, %tokens: tensor<2x16xi64>, %demb: tensor<2x16x64xf32>, %g: tensor<16x64xbf16>, %pos: tensor<16xi32>, %dpos: tensor<16x64xbf16>, %h: tensor<2x16x64xf16>, %cols: tensor<8xi64>, %dh: tensor<2x8x64xf16>, %counts: tensor<128xi64>, %ones: tensor<2x16xi64>, %c32: tensor<4x128xi32>, %u32: tensor<4x2x16xi32>) -> (tensor<128x64xf32>, tensor<16x64xbf16>, tensor<2x16x64xf16>, tensor<128xi64>, tensor<4x128xi32>) {
  %dwte = fuse.scatter_add %zeros[%tokens], %demb, dim = 0 : (tensor<128x64xf32>, tensor<2x16xi64>, tensor<2x16x64xf32>) -> tensor<128x64xf32>
  %dwpe = fuse.scatter_add %g[%pos], %dpos, dim = 0 : (tensor<16x64xbf16>, tensor<16xi32>, tensor<16x64xbf16>) -> tensor<16x64xbf16>
  %dh2 = fuse.scatter_add %h[%cols], %dh, dim = 1 : (tensor<2x16x64xf16>, tensor<8xi64>, tensor<2x8x64xf16>) -> tensor<2x16x64xf16>
  %hist = fuse.scatter_add %counts[%tokens], %ones, dim = 0 : (tensor<128xi64>, tensor<2x16xi64>, tensor<2x16xi64>) -> tensor<128xi64>
  %hist32 = fuse.scatter_add %c32[%tokens], %u32, dim = 1 : (tensor<4x128xi32>, tensor<2x16xi64>, tensor<4x2x16xi32>) -> tensor<4x128xi32>
  return %dwte, %dwpe, %dh2, %hist, %hist32 : tensor<128x64xf32>, tensor<16x64xbf16>, tensor<2x16x64xf16>, tensor<128xi64>, tensor<4x128xi32>
}

// -----

// The four combiners, with and without keepdim, over one, several and all
// dimensions.
// CHECK-LABEL: func.func @reduce(
// CHECK-SAME: %[[X:.+]]: tensor<2x16x64xf32>, %[[H:.+]]: tensor<2x16x64xf16>, %[[G:.+]]: tensor<2x16x64xbf16>, %[[IDS:.+]]: tensor<2x16xi64>, %[[IDS32:.+]]: tensor<2x16xi32>) -> (tensor<2x16xf32>, tensor<2x16x1xf32>, tensor<64xf32>, tensor<1x1x64xf32>, tensor<f32>, tensor<2x16xf16>, tensor<2x16x1xbf16>, tensor<2x16xbf16>, tensor<2x16x1xf16>, tensor<2xi64>, tensor<i64>, tensor<2x1xi32>, tensor<16xi32>)
// CHECK: %[[SUM:.+]] = fuse.reduce sum %[[X]], dims = [2] : (tensor<2x16x64xf32>) -> tensor<2x16xf32>
// CHECK: %[[SUM_K:.+]] = fuse.reduce sum %[[X]], dims = [2] keepdim : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>
// CHECK: %[[BIAS_GRAD:.+]] = fuse.reduce sum %[[X]], dims = [0, 1] : (tensor<2x16x64xf32>) -> tensor<64xf32>
// CHECK: %[[BIAS_GRAD_K:.+]] = fuse.reduce sum %[[X]], dims = [0, 1] keepdim : (tensor<2x16x64xf32>) -> tensor<1x1x64xf32>
// CHECK: %[[TOTAL:.+]] = fuse.reduce sum %[[X]], dims = [0, 1, 2] : (tensor<2x16x64xf32>) -> tensor<f32>
// CHECK: %[[MAX:.+]] = fuse.reduce max %[[H]], dims = [2] : (tensor<2x16x64xf16>) -> tensor<2x16xf16>
// CHECK: %[[MAX_K:.+]] = fuse.reduce max %[[G]], dims = [2] keepdim : (tensor<2x16x64xbf16>) -> tensor<2x16x1xbf16>
// CHECK: %[[MEAN:.+]] = fuse.reduce mean %[[G]], dims = [2] : (tensor<2x16x64xbf16>) -> tensor<2x16xbf16>
// CHECK: %[[MEAN_K:.+]] = fuse.reduce mean %[[H]], dims = [2] keepdim : (tensor<2x16x64xf16>) -> tensor<2x16x1xf16>
// CHECK: %[[COUNT:.+]] = fuse.reduce sum %[[IDS]], dims = [1] : (tensor<2x16xi64>) -> tensor<2xi64>
// CHECK: %[[MIN_ALL:.+]] = fuse.reduce min %[[IDS]], dims = [0, 1] : (tensor<2x16xi64>) -> tensor<i64>
// CHECK: %[[MIN_K:.+]] = fuse.reduce min %[[IDS32]], dims = [1] keepdim : (tensor<2x16xi32>) -> tensor<2x1xi32>
// CHECK: %[[MAX_I32:.+]] = fuse.reduce max %[[IDS32]], dims = [0] : (tensor<2x16xi32>) -> tensor<16xi32>
// CHECK: return %[[SUM]], %[[SUM_K]], %[[BIAS_GRAD]], %[[BIAS_GRAD_K]], %[[TOTAL]], %[[MAX]], %[[MAX_K]], %[[MEAN]], %[[MEAN_K]], %[[COUNT]], %[[MIN_ALL]], %[[MIN_K]], %[[MAX_I32]] : tensor<2x16xf32>, tensor<2x16x1xf32>, tensor<64xf32>, tensor<1x1x64xf32>, tensor<f32>, tensor<2x16xf16>, tensor<2x16x1xbf16>, tensor<2x16xbf16>, tensor<2x16x1xf16>, tensor<2xi64>, tensor<i64>, tensor<2x1xi32>, tensor<16xi32>
func.func @reduce(%x: tensor<2x16x64xf32>, %h: tensor<2x16x64xf16>, %g: tensor<2x16x64xbf16>, %ids: tensor<2x16xi64>, %ids32: tensor<2x16xi32>) -> (tensor<2x16xf32>, tensor<2x16x1xf32>, tensor<64xf32>, tensor<1x1x64xf32>, tensor<f32>, tensor<2x16xf16>, tensor<2x16x1xbf16>, tensor<2x16xbf16>, tensor<2x16x1xf16>, tensor<2xi64>, tensor<i64>, tensor<2x1xi32>, tensor<16xi32>) {
  %sum = fuse.reduce sum %x, dims = [2] : (tensor<2x16x64xf32>) -> tensor<2x16xf32>
  %sum_k = fuse.reduce sum %x, dims = [2] keepdim : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>
  %bias_grad = fuse.reduce sum %x, dims = [0, 1] : (tensor<2x16x64xf32>) -> tensor<64xf32>
  %bias_grad_k = fuse.reduce sum %x, dims = [0, 1] keepdim : (tensor<2x16x64xf32>) -> tensor<1x1x64xf32>
  %total = fuse.reduce sum %x, dims = [0, 1, 2] : (tensor<2x16x64xf32>) -> tensor<f32>
  %max = fuse.reduce max %h, dims = [2] : (tensor<2x16x64xf16>) -> tensor<2x16xf16>
  %max_k = fuse.reduce max %g, dims = [2] keepdim : (tensor<2x16x64xbf16>) -> tensor<2x16x1xbf16>
  %mean = fuse.reduce mean %g, dims = [2] : (tensor<2x16x64xbf16>) -> tensor<2x16xbf16>
  %mean_k = fuse.reduce mean %h, dims = [2] keepdim : (tensor<2x16x64xf16>) -> tensor<2x16x1xf16>
  %count = fuse.reduce sum %ids, dims = [1] : (tensor<2x16xi64>) -> tensor<2xi64>
  %min_all = fuse.reduce min %ids, dims = [0, 1] : (tensor<2x16xi64>) -> tensor<i64>
  %min_k = fuse.reduce min %ids32, dims = [1] keepdim : (tensor<2x16xi32>) -> tensor<2x1xi32>
  %max_i32 = fuse.reduce max %ids32, dims = [0] : (tensor<2x16xi32>) -> tensor<16xi32>
  return %sum, %sum_k, %bias_grad, %bias_grad_k, %total, %max, %max_k, %mean, %mean_k, %count, %min_all, %min_k, %max_i32 : tensor<2x16xf32>, tensor<2x16x1xf32>, tensor<64xf32>, tensor<1x1x64xf32>, tensor<f32>, tensor<2x16xf16>, tensor<2x16x1xbf16>, tensor<2x16xbf16>, tensor<2x16x1xf16>, tensor<2xi64>, tensor<i64>, tensor<2x1xi32>, tensor<16xi32>
}

// -----

// Greedy decoding and accuracy: argmax of every numeric type, always i64.
// CHECK-LABEL: func.func @argmax(
// CHECK-SAME: %[[LOGITS:.+]]: tensor<2x16x128xf32>, %[[H:.+]]: tensor<2x128xf16>, %[[G:.+]]: tensor<2x128xbf16>, %[[IDS:.+]]: tensor<2x16xi64>, %[[IDS32:.+]]: tensor<2x16xi32>) -> (tensor<2x16xi64>, tensor<2x16x1xi64>, tensor<2xi64>, tensor<2x1xi64>, tensor<16xi64>, tensor<2x1xi64>)
// CHECK: %[[NEXT:.+]] = fuse.argmax %[[LOGITS]], dim = 2 : (tensor<2x16x128xf32>) -> tensor<2x16xi64>
// CHECK: %[[NEXT_K:.+]] = fuse.argmax %[[LOGITS]], dim = 2 keepdim : (tensor<2x16x128xf32>) -> tensor<2x16x1xi64>
// CHECK: %[[AM_F16:.+]] = fuse.argmax %[[H]], dim = 1 : (tensor<2x128xf16>) -> tensor<2xi64>
// CHECK: %[[AM_BF16:.+]] = fuse.argmax %[[G]], dim = 1 keepdim : (tensor<2x128xbf16>) -> tensor<2x1xi64>
// CHECK: %[[AM_I64:.+]] = fuse.argmax %[[IDS]], dim = 0 : (tensor<2x16xi64>) -> tensor<16xi64>
// CHECK: %[[AM_I32:.+]] = fuse.argmax %[[IDS32]], dim = 1 keepdim : (tensor<2x16xi32>) -> tensor<2x1xi64>
// CHECK: return %[[NEXT]], %[[NEXT_K]], %[[AM_F16]], %[[AM_BF16]], %[[AM_I64]], %[[AM_I32]] : tensor<2x16xi64>, tensor<2x16x1xi64>, tensor<2xi64>, tensor<2x1xi64>, tensor<16xi64>, tensor<2x1xi64>
func.func @argmax(%logits: tensor<2x16x128xf32>, %h: tensor<2x128xf16>, %g: tensor<2x128xbf16>, %ids: tensor<2x16xi64>, %ids32: tensor<2x16xi32>) -> (tensor<2x16xi64>, tensor<2x16x1xi64>, tensor<2xi64>, tensor<2x1xi64>, tensor<16xi64>, tensor<2x1xi64>) {
  %next = fuse.argmax %logits, dim = 2 : (tensor<2x16x128xf32>) -> tensor<2x16xi64>
  %next_k = fuse.argmax %logits, dim = 2 keepdim : (tensor<2x16x128xf32>) -> tensor<2x16x1xi64>
  %am_f16 = fuse.argmax %h, dim = 1 : (tensor<2x128xf16>) -> tensor<2xi64>
  %am_bf16 = fuse.argmax %g, dim = 1 keepdim : (tensor<2x128xbf16>) -> tensor<2x1xi64>
  %am_i64 = fuse.argmax %ids, dim = 0 : (tensor<2x16xi64>) -> tensor<16xi64>
  %am_i32 = fuse.argmax %ids32, dim = 1 keepdim : (tensor<2x16xi32>) -> tensor<2x1xi64>
  return %next, %next_k, %am_f16, %am_bf16, %am_i64, %am_i32 : tensor<2x16xi64>, tensor<2x16x1xi64>, tensor<2xi64>, tensor<2x1xi64>, tensor<16xi64>, tensor<2x1xi64>
}

// -----

// Prefix sums along any dimension, in every numeric type (RoBERTa's position
// ids; a float cumsum's backward).
// CHECK-LABEL: func.func @cumsum(
// CHECK-SAME: %[[MASK:.+]]: tensor<2x16xi64>, %[[M32:.+]]: tensor<2x16xi32>, %[[X:.+]]: tensor<2x16x8xf32>, %[[H:.+]]: tensor<2x16xf16>, %[[G:.+]]: tensor<2x16xbf16>)
// CHECK: %[[P:.+]] = fuse.cumsum %[[MASK]], dim = 1 : tensor<2x16xi64>
// CHECK: %[[P32:.+]] = fuse.cumsum %[[M32]], dim = 0 : tensor<2x16xi32>
// CHECK: %[[C:.+]] = fuse.cumsum %[[X]], dim = 1 : tensor<2x16x8xf32>
// CHECK: %[[CH:.+]] = fuse.cumsum %[[H]], dim = 1 : tensor<2x16xf16>
// CHECK: %[[CG:.+]] = fuse.cumsum %[[G]], dim = 0 : tensor<2x16xbf16>
// CHECK: return %[[P]], %[[P32]], %[[C]], %[[CH]], %[[CG]]
func.func @cumsum(%mask: tensor<2x16xi64>, %m32: tensor<2x16xi32>, %x: tensor<2x16x8xf32>, %h: tensor<2x16xf16>, %g: tensor<2x16xbf16>) -> (tensor<2x16xi64>, tensor<2x16xi32>, tensor<2x16x8xf32>, tensor<2x16xf16>, tensor<2x16xbf16>) {
  %p = fuse.cumsum %mask, dim = 1 : tensor<2x16xi64>
  %p32 = fuse.cumsum %m32, dim = 0 : tensor<2x16xi32>
  %c = fuse.cumsum %x, dim = 1 : tensor<2x16x8xf32>
  %ch = fuse.cumsum %h, dim = 1 : tensor<2x16xf16>
  %cg = fuse.cumsum %g, dim = 0 : tensor<2x16xbf16>
  return %p, %p32, %c, %ch, %cg : tensor<2x16xi64>, tensor<2x16xi32>, tensor<2x16x8xf32>, tensor<2x16xf16>, tensor<2x16xbf16>
}

// -----

// Plain and transposed 2-D products.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[X:.+]]: tensor<32x64xf32>, %[[W:.+]]: tensor<64x256xf32>, %[[WT:.+]]: tensor<256x64xf32>, %[[DY:.+]]: tensor<32x256xf32>, %[[XH:.+]]: tensor<32x64xf16>, %[[WH:.+]]: tensor<64x256xf16>) -> (tensor<32x256xf32>, tensor<32x256xf32>, tensor<64x256xf32>, tensor<32x64xf32>, tensor<64x32xf32>, tensor<32x256xf16>)
// CHECK: %[[Y:.+]] = fuse.matmul %[[X]], %[[W]] : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
// CHECK: %[[Y_T:.+]] = fuse.matmul %[[X]], %[[WT]] transpose_rhs : (tensor<32x64xf32>, tensor<256x64xf32>) -> tensor<32x256xf32>
// CHECK: %[[DW:.+]] = fuse.matmul %[[X]], %[[DY]] transpose_lhs : (tensor<32x64xf32>, tensor<32x256xf32>) -> tensor<64x256xf32>
// CHECK: %[[DX:.+]] = fuse.matmul %[[DY]], %[[W]] transpose_rhs : (tensor<32x256xf32>, tensor<64x256xf32>) -> tensor<32x64xf32>
// CHECK: %[[BOTH:.+]] = fuse.matmul %[[WT]], %[[DY]] transpose_lhs transpose_rhs : (tensor<256x64xf32>, tensor<32x256xf32>) -> tensor<64x32xf32>
// CHECK: %[[YH:.+]] = fuse.matmul %[[XH]], %[[WH]] : (tensor<32x64xf16>, tensor<64x256xf16>) -> tensor<32x256xf16>
// CHECK: return %[[Y]], %[[Y_T]], %[[DW]], %[[DX]], %[[BOTH]], %[[YH]] : tensor<32x256xf32>, tensor<32x256xf32>, tensor<64x256xf32>, tensor<32x64xf32>, tensor<64x32xf32>, tensor<32x256xf16>
func.func @matmul(%x: tensor<32x64xf32>, %w: tensor<64x256xf32>, %wt: tensor<256x64xf32>, %dy: tensor<32x256xf32>, %xh: tensor<32x64xf16>, %wh: tensor<64x256xf16>) -> (tensor<32x256xf32>, tensor<32x256xf32>, tensor<64x256xf32>, tensor<32x64xf32>, tensor<64x32xf32>, tensor<32x256xf16>) {
  %y = fuse.matmul %x, %w : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
  %y_t = fuse.matmul %x, %wt transpose_rhs : (tensor<32x64xf32>, tensor<256x64xf32>) -> tensor<32x256xf32>
  %dw = fuse.matmul %x, %dy transpose_lhs : (tensor<32x64xf32>, tensor<32x256xf32>) -> tensor<64x256xf32>
  %dx = fuse.matmul %dy, %w transpose_rhs : (tensor<32x256xf32>, tensor<64x256xf32>) -> tensor<32x64xf32>
  %both = fuse.matmul %wt, %dy transpose_lhs transpose_rhs : (tensor<256x64xf32>, tensor<32x256xf32>) -> tensor<64x32xf32>
  %yh = fuse.matmul %xh, %wh : (tensor<32x64xf16>, tensor<64x256xf16>) -> tensor<32x256xf16>
  return %y, %y_t, %dw, %dx, %both, %yh : tensor<32x256xf32>, tensor<32x256xf32>, tensor<64x256xf32>, tensor<32x64xf32>, tensor<64x32xf32>, tensor<32x256xf16>
}

// -----

// Batched products: attention scores and values, and a batched lhs with a
// 2-D weight shared by every batch (a linear layer).
// CHECK-LABEL: func.func @matmul_batched(
// CHECK-SAME: %[[Q:.+]]: tensor<2x4x16x16xbf16>, %[[K:.+]]: tensor<2x4x16x16xbf16>, %[[P:.+]]: tensor<2x4x16x16xbf16>, %[[V:.+]]: tensor<2x4x16x16xbf16>, %[[X:.+]]: tensor<2x16x64xbf16>, %[[W:.+]]: tensor<192x64xbf16>, %[[W2:.+]]: tensor<64x256xf16>, %[[XH:.+]]: tensor<2x16x64xf16>, %[[A:.+]]: tensor<8x16x64xf32>, %[[B:.+]]: tensor<8x64x16xf32>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x16x192xbf16>, tensor<2x16x256xf16>, tensor<8x16x16xf32>, tensor<8x64x64xf32>)
// CHECK: %[[SCORES:.+]] = fuse.matmul %[[Q]], %[[K]] transpose_rhs : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
// CHECK: %[[OUT:.+]] = fuse.matmul %[[P]], %[[V]] : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
// CHECK: %[[QKV:.+]] = fuse.matmul %[[X]], %[[W]] transpose_rhs : (tensor<2x16x64xbf16>, tensor<192x64xbf16>) -> tensor<2x16x192xbf16>
// CHECK: %[[FC:.+]] = fuse.matmul %[[XH]], %[[W2]] : (tensor<2x16x64xf16>, tensor<64x256xf16>) -> tensor<2x16x256xf16>
// CHECK: %[[BMM:.+]] = fuse.matmul %[[A]], %[[B]] : (tensor<8x16x64xf32>, tensor<8x64x16xf32>) -> tensor<8x16x16xf32>
// CHECK: %[[BMM_T:.+]] = fuse.matmul %[[A]], %[[B]] transpose_lhs transpose_rhs : (tensor<8x16x64xf32>, tensor<8x64x16xf32>) -> tensor<8x64x64xf32>
// CHECK: return %[[SCORES]], %[[OUT]], %[[QKV]], %[[FC]], %[[BMM]], %[[BMM_T]] : tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x16x192xbf16>, tensor<2x16x256xf16>, tensor<8x16x16xf32>, tensor<8x64x64xf32>
func.func @matmul_batched(%q: tensor<2x4x16x16xbf16>, %k: tensor<2x4x16x16xbf16>, %p: tensor<2x4x16x16xbf16>, %v: tensor<2x4x16x16xbf16>, %x: tensor<2x16x64xbf16>, %w: tensor<192x64xbf16>, %w2: tensor<64x256xf16>, %xh: tensor<2x16x64xf16>, %a: tensor<8x16x64xf32>, %b: tensor<8x64x16xf32>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x16x192xbf16>, tensor<2x16x256xf16>, tensor<8x16x16xf32>, tensor<8x64x64xf32>) {
  %scores = fuse.matmul %q, %k transpose_rhs : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  %out = fuse.matmul %p, %v : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  %qkv = fuse.matmul %x, %w transpose_rhs : (tensor<2x16x64xbf16>, tensor<192x64xbf16>) -> tensor<2x16x192xbf16>
  %fc = fuse.matmul %xh, %w2 : (tensor<2x16x64xf16>, tensor<64x256xf16>) -> tensor<2x16x256xf16>
  %bmm = fuse.matmul %a, %b : (tensor<8x16x64xf32>, tensor<8x64x16xf32>) -> tensor<8x16x16xf32>
  %bmm_t = fuse.matmul %a, %b transpose_lhs transpose_rhs : (tensor<8x16x64xf32>, tensor<8x64x16xf32>) -> tensor<8x64x64xf32>
  return %scores, %out, %qkv, %fc, %bmm, %bmm_t : tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x16x192xbf16>, tensor<2x16x256xf16>, tensor<8x16x16xf32>, tensor<8x64x64xf32>
}

// -----

// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: %[[SCORES:.+]]: tensor<2x4x16x16xf32>, %[[H:.+]]: tensor<2x16x128xf16>, %[[G:.+]]: tensor<32x128xbf16>) -> (tensor<2x4x16x16xf32>, tensor<2x16x128xf16>, tensor<32x128xbf16>, tensor<2x4x16x16xf32>)
// CHECK: %[[P:.+]] = fuse.softmax %[[SCORES]], dim = 3 : tensor<2x4x16x16xf32>
// CHECK: %[[PH:.+]] = fuse.softmax %[[H]], dim = 2 : tensor<2x16x128xf16>
// CHECK: %[[PG:.+]] = fuse.softmax %[[G]], dim = 1 : tensor<32x128xbf16>
// CHECK: %[[COLS:.+]] = fuse.softmax %[[SCORES]], dim = 0 : tensor<2x4x16x16xf32>
// CHECK: return %[[P]], %[[PH]], %[[PG]], %[[COLS]] : tensor<2x4x16x16xf32>, tensor<2x16x128xf16>, tensor<32x128xbf16>, tensor<2x4x16x16xf32>
func.func @softmax(%scores: tensor<2x4x16x16xf32>, %h: tensor<2x16x128xf16>, %g: tensor<32x128xbf16>) -> (tensor<2x4x16x16xf32>, tensor<2x16x128xf16>, tensor<32x128xbf16>, tensor<2x4x16x16xf32>) {
  %p = fuse.softmax %scores, dim = 3 : tensor<2x4x16x16xf32>
  %ph = fuse.softmax %h, dim = 2 : tensor<2x16x128xf16>
  %pg = fuse.softmax %g, dim = 1 : tensor<32x128xbf16>
  %cols = fuse.softmax %scores, dim = 0 : tensor<2x4x16x16xf32>
  return %p, %ph, %pg, %cols : tensor<2x4x16x16xf32>, tensor<2x16x128xf16>, tensor<32x128xbf16>, tensor<2x4x16x16xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax(
// CHECK-SAME: %[[LOGITS:.+]]: tensor<2x16x128xf32>, %[[H:.+]]: tensor<32x128xf16>, %[[G:.+]]: tensor<32x128xbf16>) -> (tensor<2x16x128xf32>, tensor<32x128xf16>, tensor<32x128xbf16>)
// CHECK: %[[LP:.+]] = fuse.log_softmax %[[LOGITS]], dim = 2 : tensor<2x16x128xf32>
// CHECK: %[[LH:.+]] = fuse.log_softmax %[[H]], dim = 1 : tensor<32x128xf16>
// CHECK: %[[LG:.+]] = fuse.log_softmax %[[G]], dim = 0 : tensor<32x128xbf16>
// CHECK: return %[[LP]], %[[LH]], %[[LG]] : tensor<2x16x128xf32>, tensor<32x128xf16>, tensor<32x128xbf16>
func.func @log_softmax(%logits: tensor<2x16x128xf32>, %h: tensor<32x128xf16>, %g: tensor<32x128xbf16>) -> (tensor<2x16x128xf32>, tensor<32x128xf16>, tensor<32x128xbf16>) {
  %lp = fuse.log_softmax %logits, dim = 2 : tensor<2x16x128xf32>
  %lh = fuse.log_softmax %h, dim = 1 : tensor<32x128xf16>
  %lg = fuse.log_softmax %g, dim = 0 : tensor<32x128xbf16>
  return %lp, %lh, %lg : tensor<2x16x128xf32>, tensor<32x128xf16>, tensor<32x128xbf16>
}

// -----

// With weight and bias, without either, with only one, normalising the last
// one or two dimensions; mean and rstd are always f32.
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME: %[[X:.+]]: tensor<2x16x64xf32>, %[[W:.+]]: tensor<64xf32>, %[[B:.+]]: tensor<64xf32>, %[[G:.+]]: tensor<2x16x64xbf16>, %[[GW:.+]]: tensor<16x64xbf16>, %[[H:.+]]: tensor<32x64xf16>, %[[HB:.+]]: tensor<64xf16>) -> (tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>, tensor<2x16x64xf32>, tensor<2x16x64xbf16>, tensor<2x1x1xf32>, tensor<32x64xf16>, tensor<1x1x1xf32>)
// CHECK: %[[Y:.+]], %[[MEAN:.+]], %[[RSTD:.+]] = fuse.layer_norm %[[X]] weight(%[[W]]) bias(%[[B]]) axis = 2 epsilon = 1.000000e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
// CHECK: %[[Y2:.+]], %[[MEAN2:.+]], %[[RSTD2:.+]] = fuse.layer_norm %[[X]] axis = 2 epsilon = 1.000000e-05 : (tensor<2x16x64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
// CHECK: %[[Y3:.+]], %[[MEAN3:.+]], %[[RSTD3:.+]] = fuse.layer_norm %[[G]] weight(%[[GW]]) axis = 1 epsilon = 9.9999999999999995E-7 : (tensor<2x16x64xbf16>, tensor<16x64xbf16>) -> (tensor<2x16x64xbf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
// CHECK: %[[Y4:.+]], %[[MEAN4:.+]], %[[RSTD4:.+]] = fuse.layer_norm %[[H]] bias(%[[HB]]) axis = 1 epsilon = 0.000000e+00 : (tensor<32x64xf16>, tensor<64xf16>) -> (tensor<32x64xf16>, tensor<32x1xf32>, tensor<32x1xf32>)
// CHECK: %[[Y5:.+]], %[[MEAN5:.+]], %[[RSTD5:.+]] = fuse.layer_norm %[[X]] axis = 0 epsilon = 9.9999999999999995E-8 : (tensor<2x16x64xf32>) -> (tensor<2x16x64xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>)
// CHECK: return %[[Y]], %[[MEAN]], %[[RSTD]], %[[Y2]], %[[Y3]], %[[MEAN3]], %[[Y4]], %[[MEAN5]] : tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>, tensor<2x16x64xf32>, tensor<2x16x64xbf16>, tensor<2x1x1xf32>, tensor<32x64xf16>, tensor<1x1x1xf32>
func.func @layer_norm(%x: tensor<2x16x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>, %g: tensor<2x16x64xbf16>, %gw: tensor<16x64xbf16>, %h: tensor<32x64xf16>, %hb: tensor<64xf16>) -> (tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>, tensor<2x16x64xf32>, tensor<2x16x64xbf16>, tensor<2x1x1xf32>, tensor<32x64xf16>, tensor<1x1x1xf32>) {
  %y, %mean, %rstd = fuse.layer_norm %x weight(%w) bias(%b) axis = 2 epsilon = 1.0e-5 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
  %y2, %mean2, %rstd2 = fuse.layer_norm %x axis = 2 epsilon = 1.0e-5 : (tensor<2x16x64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
  %y3, %mean3, %rstd3 = fuse.layer_norm %g weight(%gw) axis = 1 epsilon = 1.0e-6 : (tensor<2x16x64xbf16>, tensor<16x64xbf16>) -> (tensor<2x16x64xbf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  %y4, %mean4, %rstd4 = fuse.layer_norm %h bias(%hb) axis = 1 epsilon = 0.0 : (tensor<32x64xf16>, tensor<64xf16>) -> (tensor<32x64xf16>, tensor<32x1xf32>, tensor<32x1xf32>)
  %y5, %mean5, %rstd5 = fuse.layer_norm %x axis = 0 epsilon = 1.0e-7 : (tensor<2x16x64xf32>) -> (tensor<2x16x64xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>)
  return %y, %mean, %rstd, %y2, %y3, %mean3, %y4, %mean5 : tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>, tensor<2x16x64xf32>, tensor<2x16x64xbf16>, tensor<2x1x1xf32>, tensor<32x64xf16>, tensor<1x1x1xf32>
}

// -----

// Llama's RMSNorm, with and without weight.
// CHECK-LABEL: func.func @rms_norm(
// CHECK-SAME: %[[X:.+]]: tensor<2x16x64xf32>, %[[W:.+]]: tensor<64xf32>, %[[G:.+]]: tensor<2x16x64xbf16>, %[[GW:.+]]: tensor<64xbf16>, %[[H:.+]]: tensor<2x4x16x16xf16>, %[[HW:.+]]: tensor<16x16xf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xbf16>, tensor<2x4x16x16xf16>, tensor<2x4x16x16xf16>)
// CHECK: %[[Y:.+]] = fuse.rms_norm %[[X]] weight(%[[W]]) axis = 2 epsilon = 9.9999999999999995E-7 : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK: %[[Y2:.+]] = fuse.rms_norm %[[X]] axis = 2 epsilon = 9.9999999999999995E-7 : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
// CHECK: %[[Y3:.+]] = fuse.rms_norm %[[G]] weight(%[[GW]]) axis = 2 epsilon = 1.000000e-05 : (tensor<2x16x64xbf16>, tensor<64xbf16>) -> tensor<2x16x64xbf16>
// CHECK: %[[Y4:.+]] = fuse.rms_norm %[[H]] weight(%[[HW]]) axis = 2 epsilon = 9.9999999999999995E-8 : (tensor<2x4x16x16xf16>, tensor<16x16xf16>) -> tensor<2x4x16x16xf16>
// CHECK: %[[Y5:.+]] = fuse.rms_norm %[[H]] axis = 3 epsilon = 0.000000e+00 : (tensor<2x4x16x16xf16>) -> tensor<2x4x16x16xf16>
// CHECK: return %[[Y]], %[[Y2]], %[[Y3]], %[[Y4]], %[[Y5]] : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xbf16>, tensor<2x4x16x16xf16>, tensor<2x4x16x16xf16>
func.func @rms_norm(%x: tensor<2x16x64xf32>, %w: tensor<64xf32>, %g: tensor<2x16x64xbf16>, %gw: tensor<64xbf16>, %h: tensor<2x4x16x16xf16>, %hw: tensor<16x16xf16>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xbf16>, tensor<2x4x16x16xf16>, tensor<2x4x16x16xf16>) {
  %y = fuse.rms_norm %x weight(%w) axis = 2 epsilon = 1.0e-6 : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %y2 = fuse.rms_norm %x axis = 2 epsilon = 1.0e-6 : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  %y3 = fuse.rms_norm %g weight(%gw) axis = 2 epsilon = 1.0e-5 : (tensor<2x16x64xbf16>, tensor<64xbf16>) -> tensor<2x16x64xbf16>
  %y4 = fuse.rms_norm %h weight(%hw) axis = 2 epsilon = 1.0e-7 : (tensor<2x4x16x16xf16>, tensor<16x16xf16>) -> tensor<2x4x16x16xf16>
  %y5 = fuse.rms_norm %h axis = 3 epsilon = 0.0 : (tensor<2x4x16x16xf16>) -> tensor<2x4x16x16xf16>
  return %y, %y2, %y3, %y4, %y5 : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xbf16>, tensor<2x4x16x16xf16>, tensor<2x4x16x16xf16>
}

// -----

// GPT-2 causal self-attention in bf16.
// CHECK-LABEL: func.func @attention_causal(
// CHECK-SAME: %[[Q:.+]]: tensor<2x4x16x16xbf16>, %[[K:.+]]: tensor<2x4x16x16xbf16>, %[[V:.+]]: tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
// CHECK: %[[OUT:.+]], %[[LSE:.+]] = fuse.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] causal scale = 2.500000e-01 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
// CHECK: return %[[OUT]], %[[LSE]] : tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>
func.func @attention_causal(%q: tensor<2x4x16x16xbf16>, %k: tensor<2x4x16x16xbf16>, %v: tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>) {
  %out, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %out, %lse : tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>
}

// -----

// An additive float mask broadcast over heads (padding), a full-size one,
// and a cross-attention with a different key length and value head dim.
// CHECK-LABEL: func.func @attention_float_mask(
// CHECK-SAME: %[[Q:.+]]: tensor<2x4x16x16xf32>, %[[K:.+]]: tensor<2x4x16x16xf32>, %[[V:.+]]: tensor<2x4x16x16xf32>, %[[PAD:.+]]: tensor<2x1x1x16xf32>, %[[BIAS:.+]]: tensor<2x4x16x16xf32>, %[[QH:.+]]: tensor<2x4x8x16xf16>, %[[KH:.+]]: tensor<2x4x32x16xf16>, %[[VH:.+]]: tensor<2x4x32x32xf16>, %[[MH:.+]]: tensor<1x1x8x32xf16>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x8x32xf16>, tensor<2x4x8xf32>)
// CHECK: %[[OUT:.+]], %[[LSE:.+]] = fuse.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] mask(%[[PAD]]) scale = 2.500000e-01 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x1x1x16xf32>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16xf32>)
// CHECK: %[[OUT2:.+]], %[[LSE2:.+]] = fuse.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] mask(%[[BIAS]]) scale = 1.000000e+00 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16xf32>)
// CHECK: %[[OUT3:.+]], %[[LSE3:.+]] = fuse.scaled_dot_product_attention %[[QH]], %[[KH]], %[[VH]] mask(%[[MH]]) scale = 2.500000e-01 : (tensor<2x4x8x16xf16>, tensor<2x4x32x16xf16>, tensor<2x4x32x32xf16>, tensor<1x1x8x32xf16>) -> (tensor<2x4x8x32xf16>, tensor<2x4x8xf32>)
// CHECK: return %[[OUT]], %[[LSE]], %[[OUT2]], %[[OUT3]], %[[LSE3]] : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x8x32xf16>, tensor<2x4x8xf32>
func.func @attention_float_mask(%q: tensor<2x4x16x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>, %pad: tensor<2x1x1x16xf32>, %bias: tensor<2x4x16x16xf32>, %qh: tensor<2x4x8x16xf16>, %kh: tensor<2x4x32x16xf16>, %vh: tensor<2x4x32x32xf16>, %mh: tensor<1x1x8x32xf16>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x8x32xf16>, tensor<2x4x8xf32>) {
  %out, %lse = fuse.scaled_dot_product_attention %q, %k, %v mask(%pad) scale = 0.25 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x1x1x16xf32>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16xf32>)
  %out2, %lse2 = fuse.scaled_dot_product_attention %q, %k, %v mask(%bias) scale = 1.0 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16xf32>)
  %out3, %lse3 = fuse.scaled_dot_product_attention %qh, %kh, %vh mask(%mh) scale = 0.25 : (tensor<2x4x8x16xf16>, tensor<2x4x32x16xf16>, tensor<2x4x32x32xf16>, tensor<1x1x8x32xf16>) -> (tensor<2x4x8x32xf16>, tensor<2x4x8xf32>)
  return %out, %lse, %out2, %out3, %lse3 : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x8x32xf16>, tensor<2x4x8xf32>
}

// -----

// A boolean mask keeping the positions where it is true.
// CHECK-LABEL: func.func @attention_bool_mask(
// CHECK-SAME: %[[Q:.+]]: tensor<2x4x16x16xbf16>, %[[K:.+]]: tensor<2x4x16x16xbf16>, %[[V:.+]]: tensor<2x4x16x16xbf16>, %[[KEEP:.+]]: tensor<1x1x16x16xi1>, %[[FULL:.+]]: tensor<2x4x16x16xi1>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>, tensor<2x4x16x16xbf16>)
// CHECK: %[[OUT:.+]], %[[LSE:.+]] = fuse.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] mask(%[[KEEP]]) scale = 2.500000e-01 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<1x1x16x16xi1>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
// CHECK: %[[OUT2:.+]], %[[LSE2:.+]] = fuse.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] mask(%[[FULL]]) scale = 2.500000e-01 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xi1>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
// CHECK: return %[[OUT]], %[[LSE]], %[[OUT2]] : tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>, tensor<2x4x16x16xbf16>
func.func @attention_bool_mask(%q: tensor<2x4x16x16xbf16>, %k: tensor<2x4x16x16xbf16>, %v: tensor<2x4x16x16xbf16>, %keep: tensor<1x1x16x16xi1>, %full: tensor<2x4x16x16xi1>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>, tensor<2x4x16x16xbf16>) {
  %out, %lse = fuse.scaled_dot_product_attention %q, %k, %v mask(%keep) scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<1x1x16x16xi1>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  %out2, %lse2 = fuse.scaled_dot_product_attention %q, %k, %v mask(%full) scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xi1>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %out, %lse, %out2 : tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>, tensor<2x4x16x16xbf16>
}

// -----

// Attention dropout with the Philox state, causal and masked.
// CHECK-LABEL: func.func @attention_dropout(
// CHECK-SAME: %[[Q:.+]]: tensor<2x4x16x16xbf16>, %[[K:.+]]: tensor<2x4x16x16xbf16>, %[[V:.+]]: tensor<2x4x16x16xbf16>, %[[KEEP:.+]]: tensor<2x1x16x16xi1>, %[[SEED:.+]]: tensor<i64>, %[[OFFSET:.+]]: tensor<i64>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>, tensor<2x4x16x16xbf16>)
// CHECK: %[[OUT:.+]], %[[LSE:.+]] = fuse.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] rng(%[[SEED]], %[[OFFSET]]) causal scale = 2.500000e-01 dropout_p = 1.000000e-01 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<i64>, tensor<i64>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
// CHECK: %[[OUT2:.+]], %[[LSE2:.+]] = fuse.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] mask(%[[KEEP]]) rng(%[[SEED]], %[[OFFSET]]) scale = 2.500000e-01 dropout_p = 5.000000e-01 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x1x16x16xi1>, tensor<i64>, tensor<i64>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
// CHECK: return %[[OUT]], %[[LSE]], %[[OUT2]] : tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>, tensor<2x4x16x16xbf16>
func.func @attention_dropout(%q: tensor<2x4x16x16xbf16>, %k: tensor<2x4x16x16xbf16>, %v: tensor<2x4x16x16xbf16>, %keep: tensor<2x1x16x16xi1>, %seed: tensor<i64>, %offset: tensor<i64>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>, tensor<2x4x16x16xbf16>) {
  %out, %lse = fuse.scaled_dot_product_attention %q, %k, %v rng(%seed, %offset) causal scale = 0.25 dropout_p = 0.1 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<i64>, tensor<i64>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  %out2, %lse2 = fuse.scaled_dot_product_attention %q, %k, %v mask(%keep) rng(%seed, %offset) scale = 0.25 dropout_p = 0.5 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x1x16x16xi1>, tensor<i64>, tensor<i64>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
  return %out, %lse, %out2 : tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>, tensor<2x4x16x16xbf16>
}

// -----

// Grouped-query attention: 8 query heads share 2 key/value heads; and
// multi-query attention with a single key/value head.
// CHECK-LABEL: func.func @attention_gqa(
// CHECK-SAME: %[[Q:.+]]: tensor<2x8x16x16xf16>, %[[K:.+]]: tensor<2x2x16x16xf16>, %[[V:.+]]: tensor<2x2x16x16xf16>, %[[K1:.+]]: tensor<2x1x16x16xf16>, %[[V1:.+]]: tensor<2x1x16x16xf16>) -> (tensor<2x8x16x16xf16>, tensor<2x8x16xf32>, tensor<2x8x16x16xf16>)
// CHECK: %[[OUT:.+]], %[[LSE:.+]] = fuse.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] causal scale = 2.500000e-01 : (tensor<2x8x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x2x16x16xf16>) -> (tensor<2x8x16x16xf16>, tensor<2x8x16xf32>)
// CHECK: %[[OUT2:.+]], %[[LSE2:.+]] = fuse.scaled_dot_product_attention %[[Q]], %[[K1]], %[[V1]] causal scale = 2.500000e-01 : (tensor<2x8x16x16xf16>, tensor<2x1x16x16xf16>, tensor<2x1x16x16xf16>) -> (tensor<2x8x16x16xf16>, tensor<2x8x16xf32>)
// CHECK: return %[[OUT]], %[[LSE]], %[[OUT2]] : tensor<2x8x16x16xf16>, tensor<2x8x16xf32>, tensor<2x8x16x16xf16>
func.func @attention_gqa(%q: tensor<2x8x16x16xf16>, %k: tensor<2x2x16x16xf16>, %v: tensor<2x2x16x16xf16>, %k1: tensor<2x1x16x16xf16>, %v1: tensor<2x1x16x16xf16>) -> (tensor<2x8x16x16xf16>, tensor<2x8x16xf32>, tensor<2x8x16x16xf16>) {
  %out, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.25 : (tensor<2x8x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x2x16x16xf16>) -> (tensor<2x8x16x16xf16>, tensor<2x8x16xf32>)
  %out2, %lse2 = fuse.scaled_dot_product_attention %q, %k1, %v1 causal scale = 0.25 : (tensor<2x8x16x16xf16>, tensor<2x1x16x16xf16>, tensor<2x1x16x16xf16>) -> (tensor<2x8x16x16xf16>, tensor<2x8x16xf32>)
  return %out, %lse, %out2 : tensor<2x8x16x16xf16>, tensor<2x8x16xf32>, tensor<2x8x16x16xf16>
}

// -----

// Backward of causal attention, of masked attention with dropout, and of
// grouped-query attention: gradients have the operands' types.
// CHECK-LABEL: func.func @attention_backward(
// CHECK-SAME: %[[DO:.+]]: tensor<2x4x16x16xbf16>, %[[Q:.+]]: tensor<2x4x16x16xbf16>, %[[K:.+]]: tensor<2x4x16x16xbf16>, %[[V:.+]]: tensor<2x4x16x16xbf16>, %[[O:.+]]: tensor<2x4x16x16xbf16>, %[[LSE:.+]]: tensor<2x4x16xf32>, %[[KEEP:.+]]: tensor<1x1x16x16xi1>, %[[SEED:.+]]: tensor<i64>, %[[OFFSET:.+]]: tensor<i64>, %[[DO8:.+]]: tensor<2x8x16x16xf16>, %[[Q8:.+]]: tensor<2x8x16x16xf16>, %[[K2:.+]]: tensor<2x2x16x16xf16>, %[[V2:.+]]: tensor<2x2x16x16xf16>, %[[O8:.+]]: tensor<2x8x16x16xf16>, %[[LSE8:.+]]: tensor<2x8x16xf32>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x8x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x2x16x16xf16>)
// CHECK: %[[DQ:.+]], %[[DK:.+]], %[[DV:.+]] = fuse.scaled_dot_product_attention_backward %[[DO]], %[[Q]], %[[K]], %[[V]], %[[O]], %[[LSE]] causal scale = 2.500000e-01 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>)
// CHECK: %[[DQ2:.+]], %[[DK2:.+]], %[[DV2:.+]] = fuse.scaled_dot_product_attention_backward %[[DO]], %[[Q]], %[[K]], %[[V]], %[[O]], %[[LSE]] mask(%[[KEEP]]) rng(%[[SEED]], %[[OFFSET]]) scale = 2.500000e-01 dropout_p = 1.000000e-01 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>, tensor<1x1x16x16xi1>, tensor<i64>, tensor<i64>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>)
// CHECK: %[[DQ3:.+]], %[[DK3:.+]], %[[DV3:.+]] = fuse.scaled_dot_product_attention_backward %[[DO8]], %[[Q8]], %[[K2]], %[[V2]], %[[O8]], %[[LSE8]] causal scale = 2.500000e-01 : (tensor<2x8x16x16xf16>, tensor<2x8x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x8x16x16xf16>, tensor<2x8x16xf32>) -> (tensor<2x8x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x2x16x16xf16>)
// CHECK: return %[[DQ]], %[[DK]], %[[DV]], %[[DQ2]], %[[DQ3]], %[[DK3]], %[[DV3]] : tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x8x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x2x16x16xf16>
func.func @attention_backward(%do: tensor<2x4x16x16xbf16>, %q: tensor<2x4x16x16xbf16>, %k: tensor<2x4x16x16xbf16>, %v: tensor<2x4x16x16xbf16>, %o: tensor<2x4x16x16xbf16>, %lse: tensor<2x4x16xf32>, %keep: tensor<1x1x16x16xi1>, %seed: tensor<i64>, %offset: tensor<i64>, %do8: tensor<2x8x16x16xf16>, %q8: tensor<2x8x16x16xf16>, %k2: tensor<2x2x16x16xf16>, %v2: tensor<2x2x16x16xf16>, %o8: tensor<2x8x16x16xf16>, %lse8: tensor<2x8x16xf32>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x8x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x2x16x16xf16>) {
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %k, %v, %o, %lse causal scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>)
  %dq2, %dk2, %dv2 = fuse.scaled_dot_product_attention_backward %do, %q, %k, %v, %o, %lse mask(%keep) rng(%seed, %offset) scale = 0.25 dropout_p = 0.1 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>, tensor<1x1x16x16xi1>, tensor<i64>, tensor<i64>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>)
  %dq3, %dk3, %dv3 = fuse.scaled_dot_product_attention_backward %do8, %q8, %k2, %v2, %o8, %lse8 causal scale = 0.25 : (tensor<2x8x16x16xf16>, tensor<2x8x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x8x16x16xf16>, tensor<2x8x16xf32>) -> (tensor<2x8x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x2x16x16xf16>)
  return %dq, %dk, %dv, %dq2, %dq3, %dk3, %dv3 : tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x8x16x16xf16>, tensor<2x2x16x16xf16>, tensor<2x2x16x16xf16>
}

// -----

// Default mean reduction (printed without attributes), reduction = none,
// reduction = sum with an ignore_index, i32 labels and low-precision logits.
// CHECK-LABEL: func.func @cross_entropy(
// CHECK-SAME: %[[LOGITS:.+]]: tensor<2x16x128xf32>, %[[LABELS:.+]]: tensor<2x16xi64>, %[[FLAT:.+]]: tensor<32x128xbf16>, %[[FLAT_LABELS:.+]]: tensor<32xi32>, %[[H:.+]]: tensor<4x10xf16>, %[[HL:.+]]: tensor<4xi64>) -> (tensor<f32>, tensor<2x16xf32>, tensor<f32>, tensor<bf16>, tensor<32xbf16>, tensor<f16>)
// CHECK: %[[LOSS:.+]] = fuse.cross_entropy %[[LOGITS]], %[[LABELS]] : (tensor<2x16x128xf32>, tensor<2x16xi64>) -> tensor<f32>
// CHECK: %[[EACH:.+]] = fuse.cross_entropy %[[LOGITS]], %[[LABELS]] reduction = none : (tensor<2x16x128xf32>, tensor<2x16xi64>) -> tensor<2x16xf32>
// CHECK: %[[TOTAL:.+]] = fuse.cross_entropy %[[LOGITS]], %[[LABELS]] ignore_index = 0 reduction = sum : (tensor<2x16x128xf32>, tensor<2x16xi64>) -> tensor<f32>
// CHECK: %[[LOSS_BF16:.+]] = fuse.cross_entropy %[[FLAT]], %[[FLAT_LABELS]] ignore_index = -1 : (tensor<32x128xbf16>, tensor<32xi32>) -> tensor<bf16>
// CHECK: %[[EACH_BF16:.+]] = fuse.cross_entropy %[[FLAT]], %[[FLAT_LABELS]] ignore_index = 127 reduction = none : (tensor<32x128xbf16>, tensor<32xi32>) -> tensor<32xbf16>
// CHECK: %[[LOSS_F16:.+]] = fuse.cross_entropy %[[H]], %[[HL]] : (tensor<4x10xf16>, tensor<4xi64>) -> tensor<f16>
// CHECK: return %[[LOSS]], %[[EACH]], %[[TOTAL]], %[[LOSS_BF16]], %[[EACH_BF16]], %[[LOSS_F16]] : tensor<f32>, tensor<2x16xf32>, tensor<f32>, tensor<bf16>, tensor<32xbf16>, tensor<f16>
func.func @cross_entropy(%logits: tensor<2x16x128xf32>, %labels: tensor<2x16xi64>, %flat: tensor<32x128xbf16>, %flat_labels: tensor<32xi32>, %h: tensor<4x10xf16>, %hl: tensor<4xi64>) -> (tensor<f32>, tensor<2x16xf32>, tensor<f32>, tensor<bf16>, tensor<32xbf16>, tensor<f16>) {
  %loss = fuse.cross_entropy %logits, %labels : (tensor<2x16x128xf32>, tensor<2x16xi64>) -> tensor<f32>
  %each = fuse.cross_entropy %logits, %labels reduction = none : (tensor<2x16x128xf32>, tensor<2x16xi64>) -> tensor<2x16xf32>
  %total = fuse.cross_entropy %logits, %labels ignore_index = 0 reduction = sum : (tensor<2x16x128xf32>, tensor<2x16xi64>) -> tensor<f32>
  %loss_bf16 = fuse.cross_entropy %flat, %flat_labels ignore_index = -1 : (tensor<32x128xbf16>, tensor<32xi32>) -> tensor<bf16>
  %each_bf16 = fuse.cross_entropy %flat, %flat_labels ignore_index = 127 reduction = none : (tensor<32x128xbf16>, tensor<32xi32>) -> tensor<32xbf16>
  %loss_f16 = fuse.cross_entropy %h, %hl reduction = mean : (tensor<4x10xf16>, tensor<4xi64>) -> tensor<f16>
  return %loss, %each, %total, %loss_bf16, %each_bf16, %loss_f16 : tensor<f32>, tensor<2x16xf32>, tensor<f32>, tensor<bf16>, tensor<32xbf16>, tensor<f16>
}

// -----

// grad_loss has the shape of the forward's loss: 0-d for mean and sum, one
// value per position for none.
// CHECK-LABEL: func.func @cross_entropy_backward(
// CHECK-SAME: %[[DLOSS:.+]]: tensor<f32>, %[[LOGITS:.+]]: tensor<2x16x128xf32>, %[[LABELS:.+]]: tensor<2x16xi64>, %[[DEACH:.+]]: tensor<32xbf16>, %[[FLAT:.+]]: tensor<32x128xbf16>, %[[FLAT_LABELS:.+]]: tensor<32xi32>) -> (tensor<2x16x128xf32>, tensor<2x16x128xf32>, tensor<32x128xbf16>)
// CHECK: %[[DLOGITS:.+]] = fuse.cross_entropy_backward %[[DLOSS]], %[[LOGITS]], %[[LABELS]] : (tensor<f32>, tensor<2x16x128xf32>, tensor<2x16xi64>) -> tensor<2x16x128xf32>
// CHECK: %[[DSUM:.+]] = fuse.cross_entropy_backward %[[DLOSS]], %[[LOGITS]], %[[LABELS]] ignore_index = 0 reduction = sum : (tensor<f32>, tensor<2x16x128xf32>, tensor<2x16xi64>) -> tensor<2x16x128xf32>
// CHECK: %[[DEACH_LOGITS:.+]] = fuse.cross_entropy_backward %[[DEACH]], %[[FLAT]], %[[FLAT_LABELS]] ignore_index = -1 reduction = none : (tensor<32xbf16>, tensor<32x128xbf16>, tensor<32xi32>) -> tensor<32x128xbf16>
// CHECK: return %[[DLOGITS]], %[[DSUM]], %[[DEACH_LOGITS]] : tensor<2x16x128xf32>, tensor<2x16x128xf32>, tensor<32x128xbf16>
func.func @cross_entropy_backward(%dloss: tensor<f32>, %logits: tensor<2x16x128xf32>, %labels: tensor<2x16xi64>, %deach: tensor<32xbf16>, %flat: tensor<32x128xbf16>, %flat_labels: tensor<32xi32>) -> (tensor<2x16x128xf32>, tensor<2x16x128xf32>, tensor<32x128xbf16>) {
  %dlogits = fuse.cross_entropy_backward %dloss, %logits, %labels : (tensor<f32>, tensor<2x16x128xf32>, tensor<2x16xi64>) -> tensor<2x16x128xf32>
  %dsum = fuse.cross_entropy_backward %dloss, %logits, %labels ignore_index = 0 reduction = sum : (tensor<f32>, tensor<2x16x128xf32>, tensor<2x16xi64>) -> tensor<2x16x128xf32>
  %deach_logits = fuse.cross_entropy_backward %deach, %flat, %flat_labels ignore_index = -1 reduction = none : (tensor<32xbf16>, tensor<32x128xbf16>, tensor<32xi32>) -> tensor<32x128xbf16>
  return %dlogits, %dsum, %deach_logits : tensor<2x16x128xf32>, tensor<2x16x128xf32>, tensor<32x128xbf16>
}

// -----

// A loop fusion: bias add and GELU in one kernel.
// CHECK-LABEL: func.func @fusion_loop(
// CHECK-SAME: %[[X:.+]]: tensor<2x16x256xbf16>, %[[BIAS:.+]]: tensor<256xbf16>) -> tensor<2x16x256xbf16>
// CHECK: %[[Y:.+]] = fuse.fusion loop (%[[X]], %[[BIAS]]) : (tensor<2x16x256xbf16>, tensor<256xbf16>) -> tensor<2x16x256xbf16> {
// CHECK: ^bb0(%[[A:.+]]: tensor<2x16x256xbf16>, %[[B:.+]]: tensor<256xbf16>):
// CHECK: %[[BB:.+]] = fuse.broadcast_in_dim %[[B]], dims = [2] : (tensor<256xbf16>) -> tensor<2x16x256xbf16>
// CHECK: %[[S:.+]] = fuse.add %[[A]], %[[BB]] : tensor<2x16x256xbf16>
// CHECK: %[[G:.+]] = fuse.gelu %[[S]], approximate = tanh : tensor<2x16x256xbf16>
// CHECK: fuse.yield %[[G]] : tensor<2x16x256xbf16>
// CHECK: return %[[Y]] : tensor<2x16x256xbf16>
func.func @fusion_loop(%x: tensor<2x16x256xbf16>, %bias: tensor<256xbf16>) -> tensor<2x16x256xbf16> {
  %y = fuse.fusion loop (%x, %bias) : (tensor<2x16x256xbf16>, tensor<256xbf16>) -> tensor<2x16x256xbf16> {
  ^bb0(%a: tensor<2x16x256xbf16>, %b: tensor<256xbf16>):
    %bb = fuse.broadcast_in_dim %b, dims = [2] : (tensor<256xbf16>) -> tensor<2x16x256xbf16>
    %s = fuse.add %a, %bb : tensor<2x16x256xbf16>
    %g = fuse.gelu %s, approximate = tanh : tensor<2x16x256xbf16>
    fuse.yield %g : tensor<2x16x256xbf16>
  }
  return %y : tensor<2x16x256xbf16>
}

// -----

// A row reduction with two results: the row max and the row sum of exp.
// CHECK-LABEL: func.func @fusion_row_reduction(
// CHECK-SAME: %[[X:.+]]: tensor<32x128xf32>) -> (tensor<32xf32>, tensor<32xf32>)
// CHECK: %[[STATS:.+]]:2 = fuse.fusion row_reduction (%[[X]]) : (tensor<32x128xf32>) -> (tensor<32xf32>, tensor<32xf32>) {
// CHECK: ^bb0(%[[A:.+]]: tensor<32x128xf32>):
// CHECK: %[[M:.+]] = fuse.reduce max %[[A]], dims = [1] : (tensor<32x128xf32>) -> tensor<32xf32>
// CHECK: %[[MB:.+]] = fuse.broadcast_in_dim %[[M]], dims = [0] : (tensor<32xf32>) -> tensor<32x128xf32>
// CHECK: %[[D:.+]] = fuse.sub %[[A]], %[[MB]] : tensor<32x128xf32>
// CHECK: %[[E:.+]] = fuse.exp %[[D]] : tensor<32x128xf32>
// CHECK: %[[S:.+]] = fuse.reduce sum %[[E]], dims = [1] : (tensor<32x128xf32>) -> tensor<32xf32>
// CHECK: fuse.yield %[[M]], %[[S]] : tensor<32xf32>, tensor<32xf32>
// CHECK: return %[[STATS]]#0, %[[STATS]]#1 : tensor<32xf32>, tensor<32xf32>
func.func @fusion_row_reduction(%x: tensor<32x128xf32>) -> (tensor<32xf32>, tensor<32xf32>) {
  %stats:2 = fuse.fusion row_reduction (%x) : (tensor<32x128xf32>) -> (tensor<32xf32>, tensor<32xf32>) {
  ^bb0(%a: tensor<32x128xf32>):
    %m = fuse.reduce max %a, dims = [1] : (tensor<32x128xf32>) -> tensor<32xf32>
    %mb = fuse.broadcast_in_dim %m, dims = [0] : (tensor<32xf32>) -> tensor<32x128xf32>
    %d = fuse.sub %a, %mb : tensor<32x128xf32>
    %e = fuse.exp %d : tensor<32x128xf32>
    %s = fuse.reduce sum %e, dims = [1] : (tensor<32x128xf32>) -> tensor<32xf32>
    fuse.yield %m, %s : tensor<32xf32>, tensor<32xf32>
  }
  return %stats#0, %stats#1 : tensor<32xf32>, tensor<32xf32>
}

// -----

// A column reduction: the bias gradient of a linear layer.
// CHECK-LABEL: func.func @fusion_column_reduction(
// CHECK-SAME: %[[DY:.+]]: tensor<32x256xbf16>) -> tensor<256xf32>
// CHECK: %[[DB:.+]] = fuse.fusion column_reduction (%[[DY]]) : (tensor<32x256xbf16>) -> tensor<256xf32> {
// CHECK: ^bb0(%[[A:.+]]: tensor<32x256xbf16>):
// CHECK: %[[F:.+]] = fuse.cast %[[A]] : tensor<32x256xbf16> to tensor<32x256xf32>
// CHECK: %[[S:.+]] = fuse.reduce sum %[[F]], dims = [0] : (tensor<32x256xf32>) -> tensor<256xf32>
// CHECK: fuse.yield %[[S]] : tensor<256xf32>
// CHECK: return %[[DB]] : tensor<256xf32>
func.func @fusion_column_reduction(%dy: tensor<32x256xbf16>) -> tensor<256xf32> {
  %db = fuse.fusion column_reduction (%dy) : (tensor<32x256xbf16>) -> tensor<256xf32> {
  ^bb0(%a: tensor<32x256xbf16>):
    %f = fuse.cast %a : tensor<32x256xbf16> to tensor<32x256xf32>
    %s = fuse.reduce sum %f, dims = [0] : (tensor<32x256xf32>) -> tensor<256xf32>
    fuse.yield %s : tensor<256xf32>
  }
  return %db : tensor<256xf32>
}

// -----

// A matmul with its epilogue (bias add and ReLU).
// CHECK-LABEL: func.func @fusion_gemm_epilogue(
// CHECK-SAME: %[[X:.+]]: tensor<32x64xf16>, %[[W:.+]]: tensor<256x64xf16>, %[[BIAS:.+]]: tensor<32x256xf16>) -> tensor<32x256xf16>
// CHECK: %[[Y:.+]] = fuse.fusion gemm_epilogue (%[[X]], %[[W]], %[[BIAS]]) : (tensor<32x64xf16>, tensor<256x64xf16>, tensor<32x256xf16>) -> tensor<32x256xf16> {
// CHECK: ^bb0(%[[A:.+]]: tensor<32x64xf16>, %[[B:.+]]: tensor<256x64xf16>, %[[C:.+]]: tensor<32x256xf16>):
// CHECK: %[[MM:.+]] = fuse.matmul %[[A]], %[[B]] transpose_rhs : (tensor<32x64xf16>, tensor<256x64xf16>) -> tensor<32x256xf16>
// CHECK: %[[S:.+]] = fuse.add %[[MM]], %[[C]] : tensor<32x256xf16>
// CHECK: %[[R:.+]] = fuse.relu %[[S]] : tensor<32x256xf16>
// CHECK: fuse.yield %[[R]] : tensor<32x256xf16>
// CHECK: return %[[Y]] : tensor<32x256xf16>
func.func @fusion_gemm_epilogue(%x: tensor<32x64xf16>, %w: tensor<256x64xf16>, %bias: tensor<32x256xf16>) -> tensor<32x256xf16> {
  %y = fuse.fusion gemm_epilogue (%x, %w, %bias) : (tensor<32x64xf16>, tensor<256x64xf16>, tensor<32x256xf16>) -> tensor<32x256xf16> {
  ^bb0(%a: tensor<32x64xf16>, %b: tensor<256x64xf16>, %c: tensor<32x256xf16>):
    %mm = fuse.matmul %a, %b transpose_rhs : (tensor<32x64xf16>, tensor<256x64xf16>) -> tensor<32x256xf16>
    %s = fuse.add %mm, %c : tensor<32x256xf16>
    %r = fuse.relu %s : tensor<32x256xf16>
    fuse.yield %r : tensor<32x256xf16>
  }
  return %y : tensor<32x256xf16>
}

// -----

// An attention kernel returning both the output and the log-sum-exp.
// CHECK-LABEL: func.func @fusion_attention(
// CHECK-SAME: %[[Q:.+]]: tensor<2x4x16x16xbf16>, %[[K:.+]]: tensor<2x4x16x16xbf16>, %[[V:.+]]: tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
// CHECK: %[[ATTN:.+]]:2 = fuse.fusion attention (%[[Q]], %[[K]], %[[V]]) : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>) {
// CHECK: ^bb0(%[[A:.+]]: tensor<2x4x16x16xbf16>, %[[B:.+]]: tensor<2x4x16x16xbf16>, %[[C:.+]]: tensor<2x4x16x16xbf16>):
// CHECK: %[[O:.+]], %[[L:.+]] = fuse.scaled_dot_product_attention %[[A]], %[[B]], %[[C]] causal scale = 2.500000e-01 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
// CHECK: fuse.yield %[[O]], %[[L]] : tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>
// CHECK: return %[[ATTN]]#0, %[[ATTN]]#1 : tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>
func.func @fusion_attention(%q: tensor<2x4x16x16xbf16>, %k: tensor<2x4x16x16xbf16>, %v: tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>) {
  %attn:2 = fuse.fusion attention (%q, %k, %v) : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>) {
  ^bb0(%a: tensor<2x4x16x16xbf16>, %b: tensor<2x4x16x16xbf16>, %c: tensor<2x4x16x16xbf16>):
    %o, %l = fuse.scaled_dot_product_attention %a, %b, %c causal scale = 0.25 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
    fuse.yield %o, %l : tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>
  }
  return %attn#0, %attn#1 : tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>
}

// -----

// A fusion with no inputs: the causal mask is computed inside the kernel;
// integer and boolean values cross the region boundary.
// CHECK-LABEL: func.func @fusion_no_inputs(
// CHECK-SAME: ) -> (tensor<16x16xi1>, tensor<16xi64>)
// CHECK: %[[GEN:.+]]:2 = fuse.fusion loop () : () -> (tensor<16x16xi1>, tensor<16xi64>) {
// CHECK: %[[ROWS:.+]] = fuse.iota dim = 0 : tensor<16x16xi64>
// CHECK: %[[COLS:.+]] = fuse.iota dim = 1 : tensor<16x16xi64>
// CHECK: %[[M:.+]] = fuse.compare ge, %[[ROWS]], %[[COLS]] : tensor<16x16xi64>
// CHECK: %[[P:.+]] = fuse.iota dim = 0 : tensor<16xi64>
// CHECK: fuse.yield %[[M]], %[[P]] : tensor<16x16xi1>, tensor<16xi64>
// CHECK: return %[[GEN]]#0, %[[GEN]]#1 : tensor<16x16xi1>, tensor<16xi64>
func.func @fusion_no_inputs() -> (tensor<16x16xi1>, tensor<16xi64>) {
  %gen:2 = fuse.fusion loop () : () -> (tensor<16x16xi1>, tensor<16xi64>) {
    %rows = fuse.iota dim = 0 : tensor<16x16xi64>
    %cols = fuse.iota dim = 1 : tensor<16x16xi64>
    %m = fuse.compare ge, %rows, %cols : tensor<16x16xi64>
    %p = fuse.iota dim = 0 : tensor<16xi64>
    fuse.yield %m, %p : tensor<16x16xi1>, tensor<16xi64>
  }
  return %gen#0, %gen#1 : tensor<16x16xi1>, tensor<16xi64>
}

// -----

// A fusion without results.
// CHECK-LABEL: func.func @fusion_no_results(
// CHECK-SAME: %[[X:.+]]: tensor<4xi32>)
// CHECK: fuse.fusion loop (%[[X]]) : (tensor<4xi32>) -> () {
// CHECK: ^bb0(%[[A:.+]]: tensor<4xi32>):
// CHECK: fuse.yield
// CHECK: return
func.func @fusion_no_results(%x: tensor<4xi32>) {
  fuse.fusion loop (%x) : (tensor<4xi32>) -> () {
  ^bb0(%a: tensor<4xi32>):
    fuse.yield
  }
  return
}

// -----

// PyTorch parameter and input names on function arguments.
// CHECK-LABEL: func.func @named_arguments(
// CHECK-SAME: %[[WTE:.+]]: tensor<128x64xf32> {fuse.name = "transformer.wte.weight"}, %[[TOKENS:.+]]: tensor<2x16xi64> {fuse.name = "idx"}, %[[W:.+]]: tensor<192x64xbf16> {fuse.name = "transformer.h.0.attn.c_attn.weight"}, %[[X:.+]]: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x192xbf16>)
// CHECK: %[[EMB:.+]] = fuse.gather %[[WTE]][%[[TOKENS]]], dim = 0 : (tensor<128x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
// CHECK: %[[QKV:.+]] = fuse.matmul %[[X]], %[[W]] transpose_rhs : (tensor<2x16x64xbf16>, tensor<192x64xbf16>) -> tensor<2x16x192xbf16>
// CHECK: return %[[EMB]], %[[QKV]] : tensor<2x16x64xf32>, tensor<2x16x192xbf16>
func.func @named_arguments(%wte: tensor<128x64xf32> {fuse.name = "transformer.wte.weight"}, %tokens: tensor<2x16xi64> {fuse.name = "idx"}, %w: tensor<192x64xbf16> {fuse.name = "transformer.h.0.attn.c_attn.weight"}, %x: tensor<2x16x64xbf16>) -> (tensor<2x16x64xf32>, tensor<2x16x192xbf16>) {
  %emb = fuse.gather %wte[%tokens], dim = 0 : (tensor<128x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
  %qkv = fuse.matmul %x, %w transpose_rhs : (tensor<2x16x64xbf16>, tensor<192x64xbf16>) -> tensor<2x16x192xbf16>
  return %emb, %qkv : tensor<2x16x64xf32>, tensor<2x16x192xbf16>
}

// -----

// CHECK-LABEL: func.func @index_bound_argument(
// CHECK-SAME: %{{.+}}: tensor<8x16xi64> {fuse.index_bound = 50257 : i64, fuse.name = "input_ids"}
func.func @index_bound_argument(%ids: tensor<8x16xi64> {fuse.name = "input_ids", fuse.index_bound = 50257 : i64}) -> tensor<8x16xi64> {
  return %ids : tensor<8x16xi64>
}

// -----

// Output names on function results; a result may share its name with an
// argument (names are unique among arguments and among results).
// CHECK-LABEL: func.func @named_results(
// CHECK-SAME: %{{.+}}: tensor<4x8xf32> {fuse.name = "x"}) -> (tensor<4x8xf32> {fuse.name = "x"}, tensor<4x8xf32>, tensor<f32> {fuse.name = "loss"})
func.func @named_results(%x: tensor<4x8xf32> {fuse.name = "x"}) -> (tensor<4x8xf32> {fuse.name = "x"}, tensor<4x8xf32>, tensor<f32> {fuse.name = "loss"}) {
  %e = fuse.exp %x : tensor<4x8xf32>
  %s = fuse.reduce sum %e, dims = [0, 1] : (tensor<4x8xf32>) -> tensor<f32>
  return %x, %e, %s : tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>
}
