// RUN: fuse-opt %s -split-input-file -canonicalize | FileCheck %s

// Attention reads a mask's size-1 dimensions with a zero stride, so a mask
// broadcast to every head (a HuggingFace padding mask expanded before
// attention) is read from the broadcast's operand instead, by the forward
// and by the backward; the [B, H, Tq, Tk] broadcast is then dead.
// The results are the same as before on the reference interpreter:
// RUN: fuse-run %s --entry heads --check-pipeline=canonicalize | FileCheck %s --check-prefix=SAME2
// RUN: fuse-run %s --entry padding_rows --check-pipeline=canonicalize | FileCheck %s --check-prefix=SAME1
// RUN: fuse-run %s --entry batch_of_heads --check-pipeline=canonicalize | FileCheck %s --check-prefix=SAME1
// RUN: fuse-run %s --entry keep_flags --check-pipeline=canonicalize | FileCheck %s --check-prefix=SAME1
// RUN: fuse-run %s --entry two_broadcasts --check-pipeline=canonicalize | FileCheck %s --check-prefix=SAME1
// RUN: fuse-run %s --entry narrowed --check-pipeline=canonicalize | FileCheck %s --check-prefix=SAME1
// RUN: fuse-run %s --entry read_elsewhere --check-pipeline=canonicalize | FileCheck %s --check-prefix=SAME2
// SAME1: check-pipeline: PASS (1 of 1 outputs match)
// SAME2: check-pipeline: PASS (2 of 2 outputs match)

// CHECK-LABEL: func.func @heads
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x8xf32>, %[[K:[^:]+]]: tensor<2x4x8x8xf32>, %[[V:[^:]+]]: tensor<2x4x8x8xf32>, %[[M:[^:]+]]: tensor<2x1x8x8xf32>, %[[DO:[^:]+]]: tensor<2x4x8x8xf32>)
// CHECK-NOT: fuse.broadcast_in_dim
// CHECK: fuse.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] mask(%[[M]]) scale
// CHECK-SAME: tensor<2x1x8x8xf32>) ->
// CHECK: fuse.scaled_dot_product_attention_backward %[[DO]], %[[Q]], %[[K]], %[[V]], %{{.+}}, %{{.+}} mask(%[[M]]) scale
// CHECK-SAME: tensor<2x1x8x8xf32>) ->
// CHECK-NOT: fuse.broadcast_in_dim
func.func @heads(%q: tensor<2x4x8x8xf32>, %k: tensor<2x4x8x8xf32>, %v: tensor<2x4x8x8xf32>, %m: tensor<2x1x8x8xf32>, %do: tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) {
  %mask = fuse.broadcast_in_dim %m, dims = [0, 1, 2, 3] : (tensor<2x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v mask(%mask) scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>)
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %k, %v, %o, %lse mask(%mask) scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>)
  return %o, %dk : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>
}

// -----

// A [B, Tk] padding mask broadcast to [B, H, Tq, Tk] becomes [B, 1, 1, Tk]
// through a reshape (only 1s inserted, so the element order is kept).
// CHECK-LABEL: func.func @padding_rows
// CHECK-SAME: %[[M:[^:]+]]: tensor<2x8xf32>)
// CHECK-NOT: fuse.broadcast_in_dim
// CHECK: %[[R:.+]] = fuse.reshape %[[M]] : (tensor<2x8xf32>) -> tensor<2x1x1x8xf32>
// CHECK-NEXT: fuse.scaled_dot_product_attention %{{.+}} mask(%[[R]])
func.func @padding_rows(%q: tensor<2x4x8x8xf32>, %m: tensor<2x8xf32>) -> tensor<2x4x8x8xf32> {
  %mask = fuse.broadcast_in_dim %m, dims = [0, 3] : (tensor<2x8xf32>) -> tensor<2x4x8x8xf32>
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q mask(%mask) scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>)
  return %o : tensor<2x4x8x8xf32>
}

// -----

// A per-head [H, Tq, Tk] bias (the same for every batch element, as ALiBi)
// becomes [1, H, Tq, Tk]; a size-1 dimension of the operand mapped to a
// larger one (Tq here) stays 1.
// CHECK-LABEL: func.func @batch_of_heads
// CHECK-SAME: %[[M:[^:]+]]: tensor<4x1x8xf32>)
// CHECK: %[[R:.+]] = fuse.reshape %[[M]] : (tensor<4x1x8xf32>) -> tensor<1x4x1x8xf32>
// CHECK-NEXT: fuse.scaled_dot_product_attention %{{.+}} mask(%[[R]])
func.func @batch_of_heads(%q: tensor<2x4x8x8xf32>, %m: tensor<4x1x8xf32>) -> tensor<2x4x8x8xf32> {
  %mask = fuse.broadcast_in_dim %m, dims = [1, 2, 3] : (tensor<4x1x8xf32>) -> tensor<2x4x8x8xf32>
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q mask(%mask) scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>)
  return %o : tensor<2x4x8x8xf32>
}

// -----

// An i1 mask (keep where true) too.
// CHECK-LABEL: func.func @keep_flags
// CHECK-SAME: %[[M:[^:]+]]: tensor<2x1x8x8xi1>)
// CHECK-NOT: fuse.broadcast_in_dim
// CHECK: fuse.scaled_dot_product_attention %{{.+}} mask(%[[M]])
func.func @keep_flags(%q: tensor<2x4x8x8xf32>, %m: tensor<2x1x8x8xi1>) -> tensor<2x4x8x8xf32> {
  %mask = fuse.broadcast_in_dim %m, dims = [0, 1, 2, 3] : (tensor<2x1x8x8xi1>) -> tensor<2x4x8x8xi1>
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q mask(%mask) scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xi1>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>)
  return %o : tensor<2x4x8x8xf32>
}

// -----

// A broadcast of a broadcast: each one in turn.
// CHECK-LABEL: func.func @two_broadcasts
// CHECK-SAME: %[[M:[^:]+]]: tensor<2x8xf32>)
// CHECK-NOT: fuse.broadcast_in_dim
// CHECK: %[[R:.+]] = fuse.reshape %[[M]] : (tensor<2x8xf32>) -> tensor<2x1x1x8xf32>
// CHECK-NOT: fuse.broadcast_in_dim
// CHECK: fuse.scaled_dot_product_attention %{{.+}} mask(%[[R]])
func.func @two_broadcasts(%q: tensor<2x4x8x8xf32>, %m: tensor<2x8xf32>) -> tensor<2x4x8x8xf32> {
  %rows = fuse.broadcast_in_dim %m, dims = [0, 3] : (tensor<2x8xf32>) -> tensor<2x1x8x8xf32>
  %mask = fuse.broadcast_in_dim %rows, dims = [0, 1, 2, 3] : (tensor<2x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q mask(%mask) scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>)
  return %o : tensor<2x4x8x8xf32>
}

// -----

// Mixed precision narrows the broadcast mask with the query; the narrowing
// moves before the broadcast (NarrowBeforeDataMovement), which then folds.
// CHECK-LABEL: func.func @narrowed
// CHECK-SAME: %[[M:[^:]+]]: tensor<2x1x8x8xf32>)
// CHECK-NOT: fuse.broadcast_in_dim
// CHECK: %[[N:.+]] = fuse.cast %[[M]] : tensor<2x1x8x8xf32> to tensor<2x1x8x8xbf16>
// CHECK-NOT: fuse.broadcast_in_dim
// CHECK: fuse.scaled_dot_product_attention %{{.+}} mask(%[[N]])
func.func @narrowed(%q: tensor<2x4x8x8xbf16>, %m: tensor<2x1x8x8xf32>) -> tensor<2x4x8x8xbf16> {
  %wide = fuse.broadcast_in_dim %m, dims = [0, 1, 2, 3] : (tensor<2x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %mask = fuse.cast %wide : tensor<2x4x8x8xf32> to tensor<2x4x8x8xbf16>
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q mask(%mask) scale = 5.000000e-01 : (tensor<2x4x8x8xbf16>, tensor<2x4x8x8xbf16>, tensor<2x4x8x8xbf16>, tensor<2x4x8x8xbf16>) -> (tensor<2x4x8x8xbf16>, tensor<2x4x8xf32>)
  return %o : tensor<2x4x8x8xbf16>
}

// -----

// A broadcast that something else reads too stays for that reader; the
// attention reads the operand all the same.
// CHECK-LABEL: func.func @read_elsewhere
// CHECK-SAME: %[[M:[^:]+]]: tensor<2x1x8x8xf32>)
// CHECK: %[[B:.+]] = fuse.broadcast_in_dim %[[M]]
// CHECK: fuse.scaled_dot_product_attention %{{.+}} mask(%[[M]])
// CHECK: return %{{.+}}, %[[B]]
func.func @read_elsewhere(%q: tensor<2x4x8x8xf32>, %m: tensor<2x1x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) {
  %mask = fuse.broadcast_in_dim %m, dims = [0, 1, 2, 3] : (tensor<2x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q mask(%mask) scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>)
  return %o, %mask : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>
}

// -----

// Not over the key dimension: attention takes the keys at full size only.
// Neither a size-1 key dimension expanded ([B, 1, Tq, 1]) nor a [B, Tq]
// operand whose last dimension maps to the queries.
// CHECK-LABEL: func.func @keys_broadcast
// CHECK-NOT: fuse.reshape
// CHECK: %[[A:.+]] = fuse.broadcast_in_dim
// CHECK-NEXT: fuse.scaled_dot_product_attention %{{.+}} mask(%[[A]])
// CHECK-NEXT: %[[B:.+]] = fuse.broadcast_in_dim
// CHECK-NEXT: fuse.scaled_dot_product_attention %{{.+}} mask(%[[B]])
func.func @keys_broadcast(%q: tensor<2x4x8x8xf32>, %m: tensor<2x1x8x1xf32>, %n: tensor<2x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) {
  %mask = fuse.broadcast_in_dim %m, dims = [0, 1, 2, 3] : (tensor<2x1x8x1xf32>) -> tensor<2x4x8x8xf32>
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q mask(%mask) scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>)
  %rows = fuse.broadcast_in_dim %n, dims = [0, 2] : (tensor<2x8xf32>) -> tensor<2x4x8x8xf32>
  %p, %lse2 = fuse.scaled_dot_product_attention %q, %q, %q mask(%rows) scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>)
  return %o, %p : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>
}
