// RUN: fuse-opt %s -split-input-file -canonicalize | FileCheck %s

// Ops that turn an empty operand into a non-empty result become the value
// they equal (EmptyTensorCanonicalization.cpp), as the interpreter computes
// it; no kernel template then sees an empty dimension inside a non-empty
// computation. Ops whose results are empty stay: code generation gives them
// no step (test/Codegen/empty-tensors.test).

// A reduction over an empty dimension is its identity; a mean is 0 / 0.
// CHECK-LABEL: func.func @reduce(
// CHECK-DAG: %[[SUM:.+]] = fuse.constant dense<0.000000e+00> : tensor<64xf32>
// CHECK-DAG: %[[MAX:.+]] = fuse.constant dense<0xFF80> : tensor<8xbf16>
// CHECK-DAG: %[[MIN:.+]] = fuse.constant dense<0x7F80> : tensor<8xbf16>
// CHECK-DAG: %[[MEAN:.+]] = fuse.constant dense<0x7FC00000> : tensor<64xf32>
// CHECK-DAG: %[[IMAX:.+]] = fuse.constant dense<-2147483648> : tensor<8xi32>
// CHECK-DAG: %[[IMIN:.+]] = fuse.constant dense<2147483647> : tensor<8xi32>
// CHECK-DAG: %[[LMAX:.+]] = fuse.constant dense<-9223372036854775808> : tensor<3xi64>
// CHECK-DAG: %[[EMPTY:.+]] = fuse.reduce sum %{{.+}}, dims = [1] : (tensor<0x64xf32>) -> tensor<0xf32>
// CHECK: return %[[SUM]], %[[MAX]], %[[MIN]], %[[MEAN]], %[[IMAX]], %[[IMIN]], %[[LMAX]], %[[EMPTY]] :
func.func @reduce(%r: tensor<0x64xf32>, %b: tensor<0x8xbf16>, %i: tensor<8x0xi32>, %l: tensor<0x3xi64>) -> (tensor<64xf32>, tensor<8xbf16>, tensor<8xbf16>, tensor<64xf32>, tensor<8xi32>, tensor<8xi32>, tensor<3xi64>, tensor<0xf32>) {
  %sum = fuse.reduce sum %r, dims = [0] : (tensor<0x64xf32>) -> tensor<64xf32>
  %max = fuse.reduce max %b, dims = [0] : (tensor<0x8xbf16>) -> tensor<8xbf16>
  %min = fuse.reduce min %b, dims = [0] : (tensor<0x8xbf16>) -> tensor<8xbf16>
  %mean = fuse.reduce mean %r, dims = [0] : (tensor<0x64xf32>) -> tensor<64xf32>
  %imax = fuse.reduce max %i, dims = [1] : (tensor<8x0xi32>) -> tensor<8xi32>
  %imin = fuse.reduce min %i, dims = [1] : (tensor<8x0xi32>) -> tensor<8xi32>
  %lmax = fuse.reduce max %l, dims = [0] : (tensor<0x3xi64>) -> tensor<3xi64>
  %empty = fuse.reduce sum %r, dims = [1] : (tensor<0x64xf32>) -> tensor<0xf32>
  return %sum, %max, %min, %mean, %imax, %imin, %lmax, %empty : tensor<64xf32>, tensor<8xbf16>, tensor<8xbf16>, tensor<64xf32>, tensor<8xi32>, tensor<8xi32>, tensor<3xi64>, tensor<0xf32>
}

// -----

// A matmul with K = 0 is zeros; with M = 0 its result is empty and it stays.
// CHECK-LABEL: func.func @matmul(
// CHECK: %[[ZERO:.+]] = fuse.constant dense<0.000000e+00> : tensor<2x4x8xbf16>
// CHECK: %[[EMPTY:.+]] = fuse.matmul
// CHECK: return %[[ZERO]], %[[EMPTY]]
func.func @matmul(%a: tensor<2x4x0xbf16>, %b: tensor<2x0x8xbf16>, %c: tensor<0x3xf32>, %d: tensor<3x5xf32>) -> (tensor<2x4x8xbf16>, tensor<0x5xf32>) {
  %k0 = fuse.matmul %a, %b : (tensor<2x4x0xbf16>, tensor<2x0x8xbf16>) -> tensor<2x4x8xbf16>
  %m0 = fuse.matmul %c, %d : (tensor<0x3xf32>, tensor<3x5xf32>) -> tensor<0x5xf32>
  return %k0, %m0 : tensor<2x4x8xbf16>, tensor<0x5xf32>
}

// -----

// A concat leaves out its empty pieces; one piece left is the result.
// CHECK-LABEL: func.func @concat(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x0xf32>, %[[B:[^:]+]]: tensor<2x3xf32>, %[[C:[^:]+]]: tensor<2x5xf32>
// CHECK: %[[BC:.+]] = fuse.concat dim(1) %[[B]], %[[C]] : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
// CHECK: return %[[BC]], %[[B]] :
func.func @concat(%a: tensor<2x0xf32>, %b: tensor<2x3xf32>, %c: tensor<2x5xf32>) -> (tensor<2x8xf32>, tensor<2x3xf32>) {
  %bc = fuse.concat dim(1) %a, %b, %a, %c : (tensor<2x0xf32>, tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %b2 = fuse.concat dim(1) %b, %a : (tensor<2x3xf32>, tensor<2x0xf32>) -> tensor<2x3xf32>
  return %bc, %b2 : tensor<2x8xf32>, tensor<2x3xf32>
}

// -----

// A scatter_add of no updates is its destination.
// CHECK-LABEL: func.func @scatter_add(
// CHECK-SAME: %[[T:[^:]+]]: tensor<16x4xf32>
// CHECK-NOT: fuse.scatter_add
// CHECK: return %[[T]] :
func.func @scatter_add(%t: tensor<16x4xf32>, %i: tensor<0xi64>, %u: tensor<0x4xf32>) -> tensor<16x4xf32> {
  %s = fuse.scatter_add %t[%i], %u, dim = 0 : (tensor<16x4xf32>, tensor<0xi64>, tensor<0x4xf32>) -> tensor<16x4xf32>
  return %s : tensor<16x4xf32>
}

// -----

// Cross entropy over no positions: a sum of no losses is 0, their mean
// 0 / 0 (as torch).
// CHECK-LABEL: func.func @cross_entropy(
// CHECK-DAG: %[[SUM:.+]] = fuse.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[MEAN:.+]] = fuse.constant dense<0x7FC00000> : tensor<f32>
// CHECK: return %[[SUM]], %[[MEAN]] :
func.func @cross_entropy(%logits: tensor<0x16xf32>, %labels: tensor<0xi64>) -> (tensor<f32>, tensor<f32>) {
  %sum = fuse.cross_entropy %logits, %labels reduction = sum : (tensor<0x16xf32>, tensor<0xi64>) -> tensor<f32>
  %mean = fuse.cross_entropy %logits, %labels : (tensor<0x16xf32>, tensor<0xi64>) -> tensor<f32>
  return %sum, %mean : tensor<f32>, tensor<f32>
}
