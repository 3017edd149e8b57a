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

// -----

// A narrowing cast after data movement moves before it, so the producer
// (here an f32 projection) can write the narrow copy. Through slices only
// when every slice of the value is narrowed: here all three of q, k, v, which
// then narrow one copy (CSE merges the casts).
// RUN: fuse-opt %s -split-input-file -canonicalize -cse | FileCheck %s --check-prefix=NARROW
// NARROW-LABEL: func.func @narrow_qkv
// NARROW-SAME: (%[[QKV:[^:]+]]: tensor<2x8x48xf32>)
// NARROW-NEXT: %[[N:.+]] = fuse.cast %[[QKV]] : tensor<2x8x48xf32> to tensor<2x8x48xbf16>
// NARROW-NOT: fuse.cast
// NARROW-COUNT-3: fuse.slice %[[N]]
// NARROW-NOT: fuse.cast
// NARROW: return
// The narrowed values are the same.
// RUN: fuse-run %s --entry narrow_qkv --check-pipeline=canonicalize | FileCheck %s --check-prefix=SAME_QKV
// SAME_QKV: check-pipeline: PASS (3 of 3 outputs match)
func.func @narrow_qkv(%qkv: tensor<2x8x48xf32>) -> (tensor<2x4x8x4xbf16>, tensor<2x4x8x4xbf16>, tensor<2x4x8x4xbf16>) {
  %q = fuse.slice %qkv, start = [0, 0, 0], limit = [2, 8, 16], stride = [1, 1, 1] : (tensor<2x8x48xf32>) -> tensor<2x8x16xf32>
  %k = fuse.slice %qkv, start = [0, 0, 16], limit = [2, 8, 32], stride = [1, 1, 1] : (tensor<2x8x48xf32>) -> tensor<2x8x16xf32>
  %v = fuse.slice %qkv, start = [0, 0, 32], limit = [2, 8, 48], stride = [1, 1, 1] : (tensor<2x8x48xf32>) -> tensor<2x8x16xf32>
  %q4 = fuse.reshape %q : (tensor<2x8x16xf32>) -> tensor<2x8x4x4xf32>
  %k4 = fuse.reshape %k : (tensor<2x8x16xf32>) -> tensor<2x8x4x4xf32>
  %v4 = fuse.reshape %v : (tensor<2x8x16xf32>) -> tensor<2x8x4x4xf32>
  %qt = fuse.transpose %q4, permutation = [0, 2, 1, 3] : (tensor<2x8x4x4xf32>) -> tensor<2x4x8x4xf32>
  %kt = fuse.transpose %k4, permutation = [0, 2, 1, 3] : (tensor<2x8x4x4xf32>) -> tensor<2x4x8x4xf32>
  %vt = fuse.transpose %v4, permutation = [0, 2, 1, 3] : (tensor<2x8x4x4xf32>) -> tensor<2x4x8x4xf32>
  %qb = fuse.cast %qt : tensor<2x4x8x4xf32> to tensor<2x4x8x4xbf16>
  %kb = fuse.cast %kt : tensor<2x4x8x4xf32> to tensor<2x4x8x4xbf16>
  %vb = fuse.cast %vt : tensor<2x4x8x4xf32> to tensor<2x4x8x4xbf16>
  return %qb, %kb, %vb : tensor<2x4x8x4xbf16>, tensor<2x4x8x4xbf16>, tensor<2x4x8x4xbf16>
}

// -----

// Not through a slice when another slice of the value stays f32 (narrowing
// all of it would convert elements only the f32 reader wants), nor through
// movement whose result is read elsewhere, nor for a widening cast.
// NARROW-LABEL: func.func @keep_wide
// NARROW: fuse.slice %{{.+}} : (tensor<2x8xf32>) -> tensor<2x4xf32>
// NARROW-NEXT: fuse.slice %{{.+}} : (tensor<2x8xf32>) -> tensor<2x4xf32>
// NARROW-NEXT: fuse.cast %{{.+}} : tensor<2x4xf32> to tensor<2x4xbf16>
// NARROW-NEXT: fuse.transpose %{{.+}} : (tensor<2x4xf32>) -> tensor<4x2xf32>
// NARROW-NEXT: fuse.cast %{{.+}} : tensor<4x2xf32> to tensor<4x2xbf16>
// NARROW-NEXT: fuse.transpose %{{.+}} : (tensor<2x4xbf16>) -> tensor<4x2xbf16>
// NARROW-NEXT: fuse.cast %{{.+}} : tensor<4x2xbf16> to tensor<4x2xf32>
func.func @keep_wide(%x: tensor<2x8xf32>, %y: tensor<2x4xf32>, %z: tensor<2x4xbf16>) -> (tensor<2x4xbf16>, tensor<2x4xf32>, tensor<4x2xbf16>, tensor<4x2xf32>, tensor<4x2xf32>) {
  %a = fuse.slice %x, start = [0, 0], limit = [2, 4], stride = [1, 1] : (tensor<2x8xf32>) -> tensor<2x4xf32>
  %b = fuse.slice %x, start = [0, 4], limit = [2, 8], stride = [1, 1] : (tensor<2x8xf32>) -> tensor<2x4xf32>
  %an = fuse.cast %a : tensor<2x4xf32> to tensor<2x4xbf16>
  %yt = fuse.transpose %y, permutation = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %ytn = fuse.cast %yt : tensor<4x2xf32> to tensor<4x2xbf16>
  %zt = fuse.transpose %z, permutation = [1, 0] : (tensor<2x4xbf16>) -> tensor<4x2xbf16>
  %ztw = fuse.cast %zt : tensor<4x2xbf16> to tensor<4x2xf32>
  return %an, %b, %ytn, %yt, %ztw : tensor<2x4xbf16>, tensor<2x4xf32>, tensor<4x2xbf16>, tensor<4x2xf32>, tensor<4x2xf32>
}


// -----

// The mirror for a widening cast that only data movement reads (reshape,
// transpose, a concat of parts widened from one type): it moves after the
// movement, which then moves 16-bit elements, and the widening lands next to
// its reader. The attention backward's bf16 gradients, widened, transposed
// back to heads-last and concatenated, become one bf16 concat that the
// attention kernels can write themselves; narrowed again for a GEMM, the
// widen-narrow pair folds away.
// RUN: fuse-opt %s -split-input-file -canonicalize -cse | FileCheck %s --check-prefix=WIDEN
// WIDEN-LABEL: func.func @widen_after_movement
// WIDEN-SAME: (%[[A:[^:]+]]: tensor<2x4x8x16xbf16>, %[[B:[^:]+]]: tensor<2x4x8x16xbf16>)
// WIDEN-NOT: fuse.cast
// WIDEN-DAG: %[[AT:.+]] = fuse.transpose %[[A]], permutation = [0, 2, 1, 3] : (tensor<2x4x8x16xbf16>) -> tensor<2x8x4x16xbf16>
// WIDEN-DAG: %[[BT:.+]] = fuse.transpose %[[B]], permutation = [0, 2, 1, 3] : (tensor<2x4x8x16xbf16>) -> tensor<2x8x4x16xbf16>
// WIDEN-DAG: %[[AR:.+]] = fuse.reshape %[[AT]] : (tensor<2x8x4x16xbf16>) -> tensor<2x8x64xbf16>
// WIDEN-DAG: %[[BR:.+]] = fuse.reshape %[[BT]] : (tensor<2x8x4x16xbf16>) -> tensor<2x8x64xbf16>
// WIDEN: %[[C:.+]] = fuse.concat dim(2) %[[AR]], %[[BR]] : (tensor<2x8x64xbf16>, tensor<2x8x64xbf16>) -> tensor<2x8x128xbf16>
// WIDEN-NEXT: %[[W:.+]] = fuse.cast %[[C]] : tensor<2x8x128xbf16> to tensor<2x8x128xf32>
// WIDEN-NEXT: return %[[W]], %[[C]]
// RUN: fuse-run %s --entry widen_after_movement --check-pipeline=canonicalize | FileCheck %s --check-prefix=SAME_WIDEN
// SAME_WIDEN: check-pipeline: PASS (2 of 2 outputs match)
func.func @widen_after_movement(%a: tensor<2x4x8x16xbf16>, %b: tensor<2x4x8x16xbf16>) -> (tensor<2x8x128xf32>, tensor<2x8x128xbf16>) {
  %aw = fuse.cast %a : tensor<2x4x8x16xbf16> to tensor<2x4x8x16xf32>
  %bw = fuse.cast %b : tensor<2x4x8x16xbf16> to tensor<2x4x8x16xf32>
  %at = fuse.transpose %aw, permutation = [0, 2, 1, 3] : (tensor<2x4x8x16xf32>) -> tensor<2x8x4x16xf32>
  %ar = fuse.reshape %at : (tensor<2x8x4x16xf32>) -> tensor<2x8x64xf32>
  %bt = fuse.transpose %bw, permutation = [0, 2, 1, 3] : (tensor<2x4x8x16xf32>) -> tensor<2x8x4x16xf32>
  %br = fuse.reshape %bt : (tensor<2x8x4x16xf32>) -> tensor<2x8x64xf32>
  %c = fuse.concat dim(2) %ar, %br : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x128xf32>
  %n = fuse.cast %c : tensor<2x8x128xf32> to tensor<2x8x128xbf16>
  return %c, %n : tensor<2x8x128xf32>, tensor<2x8x128xbf16>
}

// -----

// Not when the widened value has another reader (the movement would not
// save its wide copy), nor for a concat of parts widened from different
// types, nor for a widen-narrow pair that does not return to the source type.
// WIDEN-LABEL: func.func @keep_narrow
// WIDEN: %[[XW:.+]] = fuse.cast %{{.+}} : tensor<2x4xbf16> to tensor<2x4xf32>
// WIDEN-NEXT: fuse.transpose %[[XW]], permutation = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
// WIDEN: fuse.concat dim(0) %{{.+}}, %{{.+}} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
// WIDEN: fuse.cast %{{.+}} : tensor<2x4xf32> to tensor<2x4xf16>
// WIDEN: return
func.func @keep_narrow(%x: tensor<2x4xbf16>, %y: tensor<2x4xf16>) -> (tensor<4x2xf32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf16>) {
  %xw = fuse.cast %x : tensor<2x4xbf16> to tensor<2x4xf32>
  %xt = fuse.transpose %xw, permutation = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %yw = fuse.cast %y : tensor<2x4xf16> to tensor<2x4xf32>
  %xw2 = fuse.cast %x : tensor<2x4xbf16> to tensor<2x4xf32>
  %c = fuse.concat dim(0) %xw2, %yw : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %z = fuse.cast %x : tensor<2x4xbf16> to tensor<2x4xf32>
  %zn = fuse.cast %z : tensor<2x4xf32> to tensor<2x4xf16>
  return %xt, %xw, %c, %zn : tensor<4x2xf32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf16>
}

// -----

// A cumsum along a dimension of size 1 is its operand; along a longer one it
// stays.
// CHECK-LABEL: func.func @cumsum_of_one
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x1xf32>, %[[Y:[^:]+]]: tensor<4x2xf32>)
// CHECK-NEXT: %[[C:.+]] = fuse.cumsum %[[Y]], dim = 1
// CHECK-NEXT: return %[[X]], %[[C]]
func.func @cumsum_of_one(%x: tensor<4x1xf32>, %y: tensor<4x2xf32>) -> (tensor<4x1xf32>, tensor<4x2xf32>) {
  %a = fuse.cumsum %x, dim = 1 : tensor<4x1xf32>
  %b = fuse.cumsum %y, dim = 1 : tensor<4x2xf32>
  return %a, %b : tensor<4x1xf32>, tensor<4x2xf32>
}

// -----

// A reshape of a reshape is one reshape of the first operand; back to the
// first operand's type, none.
// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.+]] = fuse.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: return %[[R]], %[[X]]
func.func @reshape_of_reshape(%x: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<2x3x4xf32>) {
  %a = fuse.reshape %x : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %b = fuse.reshape %a : (tensor<24xf32>) -> tensor<4x6xf32>
  %c = fuse.reshape %b : (tensor<4x6xf32>) -> tensor<2x3x4xf32>
  return %b, %c : tensor<4x6xf32>, tensor<2x3x4xf32>
}

// -----

// A transpose of a transpose is one transpose of the first operand, with
// the permutations composed; the identity permutation is no transpose. A
// value stored as [B, T, H*D] and viewed as heads and back costs nothing.
// CHECK-LABEL: func.func @transpose_of_transpose
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x4x5xf32>, %[[Y:[^:]+]]: tensor<2x3x20xf32>)
// CHECK-NEXT: %[[T:.+]] = fuse.transpose %[[X]], permutation = [2, 0, 1, 3] : (tensor<2x3x4x5xf32>) -> tensor<4x2x3x5xf32>
// CHECK-NEXT: return %[[T]], %[[X]], %[[Y]]
func.func @transpose_of_transpose(%x: tensor<2x3x4x5xf32>, %y: tensor<2x3x20xf32>)
    -> (tensor<4x2x3x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x20xf32>) {
  %a = fuse.transpose %x, permutation = [0, 2, 1, 3] : (tensor<2x3x4x5xf32>) -> tensor<2x4x3x5xf32>
  %b = fuse.transpose %a, permutation = [1, 0, 2, 3] : (tensor<2x4x3x5xf32>) -> tensor<4x2x3x5xf32>
  %c = fuse.transpose %x, permutation = [0, 1, 2, 3] : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  %r = fuse.reshape %y : (tensor<2x3x20xf32>) -> tensor<2x3x4x5xf32>
  %h = fuse.transpose %r, permutation = [0, 2, 1, 3] : (tensor<2x3x4x5xf32>) -> tensor<2x4x3x5xf32>
  %back = fuse.transpose %h, permutation = [0, 2, 1, 3] : (tensor<2x4x3x5xf32>) -> tensor<2x3x4x5xf32>
  %flat = fuse.reshape %back : (tensor<2x3x4x5xf32>) -> tensor<2x3x20xf32>
  return %b, %c, %flat : tensor<4x2x3x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x20xf32>
}

// -----

// A reduction over dimensions of size 1 is its operand, or a reshape of it
// without keepdim (a batch-1 step's bias gradient over the batch); one with
// a larger reduced dimension stays.
// CHECK-LABEL: func.func @reduce_over_unit_dims
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x1x8xbf16>)
// CHECK-NEXT: %[[R:.+]] = fuse.reshape %[[X]] : (tensor<1x4x1x8xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT: %[[S:.+]] = fuse.reduce sum %[[X]], dims = [0, 1] keepdim
// CHECK-NEXT: return %[[X]], %[[R]], %[[S]]
func.func @reduce_over_unit_dims(%x: tensor<1x4x1x8xbf16>)
    -> (tensor<1x4x1x8xbf16>, tensor<4x8xbf16>, tensor<1x1x1x8xbf16>) {
  %a = fuse.reduce mean %x, dims = [0, 2] keepdim : (tensor<1x4x1x8xbf16>) -> tensor<1x4x1x8xbf16>
  %b = fuse.reduce max %x, dims = [0, 2] : (tensor<1x4x1x8xbf16>) -> tensor<4x8xbf16>
  %c = fuse.reduce sum %x, dims = [0, 1] keepdim : (tensor<1x4x1x8xbf16>) -> tensor<1x1x1x8xbf16>
  return %a, %b, %c : tensor<1x4x1x8xbf16>, tensor<4x8xbf16>, tensor<1x1x1x8xbf16>
}
