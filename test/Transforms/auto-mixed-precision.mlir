// RUN: fuse-opt %s -split-input-file --fuse-auto-mixed-precision | FileCheck %s
// RUN: fuse-opt %s -split-input-file --fuse-auto-mixed-precision=dtype=f16 | FileCheck %s --check-prefix=F16
// RUN: fuse-opt %s -split-input-file --fuse-auto-mixed-precision='dtype=f16 growth-interval=3' | FileCheck %s --check-prefix=GROWTH
// RUN: fuse-opt %s -split-input-file --fuse-auto-mixed-precision=dtype=f16 -mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// Whole models keep their meaning (auto-mixed-precision-fixtures.test) and
// the loss scaler behaves as GradScaler on the reference interpreter
// (auto-mixed-precision-loss-scaling.test).

// A matmul reads its operands in the low type and its result goes back to
// f32 for its users; everything else (softmax here) stays f32. Arguments
// are cast at the start of the body, in argument order.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[W:.+]]: tensor<8x16xf32>)
// CHECK-NEXT: %[[XL:.+]] = fuse.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: %[[WL:.+]] = fuse.cast %[[W]] : tensor<8x16xf32> to tensor<8x16xbf16>
// CHECK-NEXT: %[[Y:.+]] = fuse.matmul %[[XL]], %[[WL]] : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
// CHECK-NEXT: %[[YF:.+]] = fuse.cast %[[Y]] : tensor<4x16xbf16> to tensor<4x16xf32>
// CHECK-NEXT: %[[P:.+]] = fuse.softmax %[[YF]], dim = 1 : tensor<4x16xf32>
// CHECK-NEXT: return %[[P]] : tensor<4x16xf32>
// F16-LABEL: func.func @matmul
// F16-SAME: -> tensor<4x16xf32> {
// F16: fuse.matmul %{{.+}}, %{{.+}} : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
// F16-NEXT: fuse.cast %{{.+}} : tensor<4x16xf16> to tensor<4x16xf32>
func.func @matmul(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %y = fuse.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %p = fuse.softmax %y, dim = 1 : tensor<4x16xf32>
  return %p : tensor<4x16xf32>
}

// -----

// Each value is cast once, right after its definition, and every
// low-precision user shares the cast: the weight serves the forward and
// the backward matmul, the activation's cast is the copy the backward reads.
// CHECK-LABEL: func.func @shared_casts
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[W:.+]]: tensor<16x8xf32>, %[[DY:.+]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[WL:.+]] = fuse.cast %[[W]] : tensor<16x8xf32> to tensor<16x8xbf16>
// CHECK-NEXT: %[[DYL:.+]] = fuse.cast %[[DY]] : tensor<4x16xf32> to tensor<4x16xbf16>
// CHECK-NEXT: %[[H:.+]] = fuse.relu %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: %[[HL:.+]] = fuse.cast %[[H]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: %[[E:.+]] = fuse.exp %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: %[[Y:.+]] = fuse.matmul %[[HL]], %[[WL]] transpose_rhs
// CHECK-NEXT: %[[YF:.+]] = fuse.cast %[[Y]]
// CHECK-NEXT: %[[DX:.+]] = fuse.matmul %[[DYL]], %[[WL]] :
// CHECK-NEXT: %[[DXF:.+]] = fuse.cast %[[DX]]
// CHECK-NEXT: %[[DW:.+]] = fuse.matmul %[[DYL]], %[[HL]] transpose_lhs
// CHECK-NEXT: %[[DWF:.+]] = fuse.cast %[[DW]]
// CHECK-NEXT: return %[[YF]], %[[DXF]], %[[DWF]], %[[E]]
// CHECK-NOT: fuse.cast
func.func @shared_casts(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %dy: tensor<4x16xf32>)
    -> (tensor<4x16xf32>, tensor<4x8xf32>, tensor<16x8xf32>, tensor<4x8xf32>) {
  %h = fuse.relu %x : tensor<4x8xf32>
  %e = fuse.exp %x : tensor<4x8xf32>
  %y = fuse.matmul %h, %w transpose_rhs : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %dx = fuse.matmul %dy, %w : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %dw = fuse.matmul %dy, %h transpose_lhs : (tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
  return %y, %dx, %dw, %e : tensor<4x16xf32>, tensor<4x8xf32>, tensor<16x8xf32>, tensor<4x8xf32>
}

// -----

// Attention forward and backward of a small training step run in the low
// type; the log-sum-exp stays f32. The backward reads the forward's bf16
// operands and output, not new casts, and its grad_output is the bf16 matmul
// result moved by reshape and transpose.
// CHECK-LABEL: func.func @attention_step
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x8x4xf32>, %[[K:[^:]+]]: tensor<1x2x8x4xf32>, %[[V:[^:]+]]: tensor<1x2x8x4xf32>, %[[W:[^:]+]]: tensor<8x5xf32>, %[[LABELS:[^:]+]]: tensor<8xi64>)
// CHECK-NEXT: %[[QL:.+]] = fuse.cast %[[Q]] : tensor<1x2x8x4xf32> to tensor<1x2x8x4xbf16>
// CHECK-NEXT: %[[KL:.+]] = fuse.cast %[[K]]
// CHECK-NEXT: %[[VL:.+]] = fuse.cast %[[V]]
// CHECK-NEXT: %[[WL:.+]] = fuse.cast %[[W]]
// CHECK-NEXT: %[[O:.+]], %[[LSE:.+]] = fuse.scaled_dot_product_attention %[[QL]], %[[KL]], %[[VL]] causal scale = 5.000000e-01 : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>)
// CHECK-NEXT: %[[T:.+]] = fuse.transpose %[[O]], permutation = [0, 2, 1, 3] : (tensor<1x2x8x4xbf16>) -> tensor<1x8x2x4xbf16>
// CHECK-NEXT: %[[R:.+]] = fuse.reshape %[[T]] : (tensor<1x8x2x4xbf16>) -> tensor<8x8xbf16>
// CHECK-NEXT: %[[Z:.+]] = fuse.matmul %[[R]], %[[WL]]
// CHECK-NEXT: %[[ZF:.+]] = fuse.cast %[[Z]]
// CHECK-NEXT: %[[LOSS:.+]] = fuse.cross_entropy %[[ZF]], %[[LABELS]]
// CHECK-NEXT: %[[ONE:.+]] = fuse.constant
// CHECK-NEXT: %[[DZ:.+]] = fuse.cross_entropy_backward %[[ONE]], %[[ZF]], %[[LABELS]]
// CHECK-NEXT: %[[DZL:.+]] = fuse.cast %[[DZ]] : tensor<8x5xf32> to tensor<8x5xbf16>
// CHECK-NEXT: %[[DR:.+]] = fuse.matmul %[[DZL]], %[[WL]] transpose_rhs : (tensor<8x5xbf16>, tensor<8x5xbf16>) -> tensor<8x8xbf16>
// CHECK-NEXT: %[[DW:.+]] = fuse.matmul %[[R]], %[[DZL]] transpose_lhs
// CHECK-NEXT: %[[DWF:.+]] = fuse.cast %[[DW]]
// CHECK-NEXT: %[[DT:.+]] = fuse.reshape %[[DR]] : (tensor<8x8xbf16>) -> tensor<1x8x2x4xbf16>
// CHECK-NEXT: %[[DO:.+]] = fuse.transpose %[[DT]], permutation = [0, 2, 1, 3] : (tensor<1x8x2x4xbf16>) -> tensor<1x2x8x4xbf16>
// CHECK-NEXT: %[[DQ:.+]], %[[DK:.+]], %[[DV:.+]] = fuse.scaled_dot_product_attention_backward %[[DO]], %[[QL]], %[[KL]], %[[VL]], %[[O]], %[[LSE]] causal scale = 5.000000e-01 : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>)
// CHECK-NEXT: %[[DQF:.+]] = fuse.cast %[[DQ]] : tensor<1x2x8x4xbf16> to tensor<1x2x8x4xf32>
// CHECK-NEXT: %[[DKF:.+]] = fuse.cast %[[DK]]
// CHECK-NEXT: %[[DVF:.+]] = fuse.cast %[[DV]]
// CHECK-NEXT: return %[[LOSS]], %[[DQF]], %[[DKF]], %[[DVF]], %[[DWF]]
// At f16 the scaled loss gradient flows through the f16 matmul and the
// attention backward: the three attention gradients and the weight's are
// unscaled, after their casts back to f32, and probed.
// F16-LABEL: func.func @attention_step
// F16-SAME: {fuse.name = "loss_scale"}
// F16: fuse.cross_entropy_backward
// F16: %[[DWF:.+]] = fuse.cast %{{.+}} : tensor<8x5xf16> to tensor<8x5xf32>
// F16-NEXT: fuse.broadcast_in_dim
// F16-NEXT: %[[DWU:.+]] = fuse.mul %[[DWF]], %{{.+}} : tensor<8x5xf32>
// F16: fuse.scaled_dot_product_attention_backward {{.+}} -> (tensor<1x2x8x4xf16>, tensor<1x2x8x4xf16>, tensor<1x2x8x4xf16>)
// F16-NEXT: %[[DQF:.+]] = fuse.cast
// F16-NEXT: fuse.broadcast_in_dim
// F16-NEXT: %[[DQU:.+]] = fuse.mul %[[DQF]], %{{.+}} : tensor<1x2x8x4xf32>
// F16: %[[DKF:.+]] = fuse.cast
// F16-NEXT: fuse.broadcast_in_dim
// F16-NEXT: %[[DKU:.+]] = fuse.mul %[[DKF]], %{{.+}} : tensor<1x2x8x4xf32>
// F16: %[[DVF:.+]] = fuse.cast
// F16-NEXT: fuse.broadcast_in_dim
// F16-NEXT: %[[DVU:.+]] = fuse.mul %[[DVF]], %{{.+}} : tensor<1x2x8x4xf32>
// F16: %[[T1:.+]] = fuse.add %{{.+}}, %{{.+}} : tensor<f32>
// F16-NEXT: %[[T2:.+]] = fuse.add %[[T1]], %{{.+}} : tensor<f32>
// F16-NEXT: %[[T3:.+]] = fuse.add %[[T2]], %{{.+}} : tensor<f32>
// F16-NEXT: fuse.compare ne, %[[T3]], %{{.+}} : tensor<f32>
// F16: return %{{.+}}, %[[DQU]], %[[DKU]], %[[DVU]], %[[DWU]], %{{.+}}, %{{.+}}, %{{.+}} :
func.func @attention_step(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>,
                          %w: tensor<8x5xf32>, %labels: tensor<8xi64>)
    -> (tensor<f32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8x5xf32>) {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 5.000000e-01 : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  %t = fuse.transpose %o, permutation = [0, 2, 1, 3] : (tensor<1x2x8x4xf32>) -> tensor<1x8x2x4xf32>
  %r = fuse.reshape %t : (tensor<1x8x2x4xf32>) -> tensor<8x8xf32>
  %logits = fuse.matmul %r, %w : (tensor<8x8xf32>, tensor<8x5xf32>) -> tensor<8x5xf32>
  %loss = fuse.cross_entropy %logits, %labels : (tensor<8x5xf32>, tensor<8xi64>) -> tensor<f32>
  %one = fuse.constant dense<1.0> : tensor<f32>
  %dlogits = fuse.cross_entropy_backward %one, %logits, %labels : (tensor<f32>, tensor<8x5xf32>, tensor<8xi64>) -> tensor<8x5xf32>
  %dr = fuse.matmul %dlogits, %w transpose_rhs : (tensor<8x5xf32>, tensor<8x5xf32>) -> tensor<8x8xf32>
  %dw = fuse.matmul %r, %dlogits transpose_lhs : (tensor<8x8xf32>, tensor<8x5xf32>) -> tensor<8x5xf32>
  %dt = fuse.reshape %dr : (tensor<8x8xf32>) -> tensor<1x8x2x4xf32>
  %do = fuse.transpose %dt, permutation = [0, 2, 1, 3] : (tensor<1x8x2x4xf32>) -> tensor<1x2x8x4xf32>
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %k, %v, %o, %lse causal scale = 5.000000e-01 : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  return %loss, %dq, %dk, %dv, %dw : tensor<f32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8x5xf32>
}

// -----

// A float mask is cast with the query (the op wants one element type); an
// i1 mask is not a float operand and stays.
// CHECK-LABEL: func.func @masks
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x8x4xf32>, %[[M:[^:]+]]: tensor<1x1x8x8xf32>, %[[KEEP:[^:]+]]: tensor<1x1x8x8xi1>)
// CHECK-NEXT: %[[QL:.+]] = fuse.cast %[[Q]]
// CHECK-NEXT: %[[ML:.+]] = fuse.cast %[[M]] : tensor<1x1x8x8xf32> to tensor<1x1x8x8xbf16>
// CHECK-NEXT: fuse.scaled_dot_product_attention %[[QL]], %[[QL]], %[[QL]] mask(%[[ML]])
// CHECK: fuse.scaled_dot_product_attention %[[QL]], %[[QL]], %[[QL]] mask(%[[KEEP]])
func.func @masks(%q: tensor<1x2x8x4xf32>, %mask: tensor<1x1x8x8xf32>, %keep: tensor<1x1x8x8xi1>)
    -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q mask(%mask) scale = 5.000000e-01 : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x1x8x8xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  %p, %lse2 = fuse.scaled_dot_product_attention %q, %q, %q mask(%keep) scale = 5.000000e-01 : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x1x8x8xi1>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return %o, %p : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}

// -----

// The attention output, transposed and reshaped into the output projection,
// stays bf16 end to end: the cast down moves above the data movement and
// cancels the cast up. A matmul of a matmul reads the bf16 result itself.
// The f32 copies left without users are gone.
// CHECK-LABEL: func.func @projection
// CHECK: %[[O:.+]], %{{.+}} = fuse.scaled_dot_product_attention
// CHECK-NEXT: %[[T:.+]] = fuse.transpose %[[O]], permutation = [0, 2, 1, 3] : (tensor<1x2x8x4xbf16>) -> tensor<1x8x2x4xbf16>
// CHECK-NEXT: %[[R:.+]] = fuse.reshape %[[T]] : (tensor<1x8x2x4xbf16>) -> tensor<8x8xbf16>
// CHECK-NEXT: %[[Y:.+]] = fuse.matmul %[[R]], %[[WL:.+]] : (tensor<8x8xbf16>, tensor<8x8xbf16>) -> tensor<8x8xbf16>
// CHECK-NEXT: %[[YF:.+]] = fuse.cast %[[Y]] : tensor<8x8xbf16> to tensor<8x8xf32>
// CHECK-NEXT: %[[Z:.+]] = fuse.matmul %[[Y]], %[[WL]] transpose_rhs
// CHECK-NEXT: %[[ZF:.+]] = fuse.cast %[[Z]]
// CHECK-NEXT: return %[[YF]], %[[ZF]]
func.func @projection(%q: tensor<1x2x8x4xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q causal scale = 5.000000e-01 : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  %t = fuse.transpose %o, permutation = [0, 2, 1, 3] : (tensor<1x2x8x4xf32>) -> tensor<1x8x2x4xf32>
  %r = fuse.reshape %t : (tensor<1x8x2x4xf32>) -> tensor<8x8xf32>
  %y = fuse.matmul %r, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %z = fuse.matmul %y, %w transpose_rhs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y, %z : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Data movement with an f32 user besides the matmul keeps its f32 copy for
// that user; the matmuls read a bf16 copy built beside it, through slice and
// broadcast_in_dim too, each copy built once.
// CHECK-LABEL: func.func @f32_user_kept
// CHECK: %[[O:.+]], %{{.+}} = fuse.scaled_dot_product_attention
// CHECK-NEXT: %[[OF:.+]] = fuse.cast %[[O]] : tensor<1x2x8x4xbf16> to tensor<1x2x8x4xf32>
// CHECK-NEXT: %[[T:.+]] = fuse.transpose %[[OF]], {{.+}} -> tensor<1x8x2x4xf32>
// CHECK-NEXT: %[[TL:.+]] = fuse.transpose %[[O]], {{.+}} -> tensor<1x8x2x4xbf16>
// CHECK-NEXT: %[[R:.+]] = fuse.reshape %[[T]] : (tensor<1x8x2x4xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[RL:.+]] = fuse.reshape %[[TL]] : (tensor<1x8x2x4xbf16>) -> tensor<8x8xbf16>
// CHECK-NEXT: %[[Y:.+]] = fuse.matmul %[[RL]], %{{.+}} : (tensor<8x8xbf16>, tensor<8x8xbf16>)
// CHECK-NEXT: %[[YF:.+]] = fuse.cast %[[Y]]
// CHECK-NEXT: %[[SL:.+]] = fuse.slice %[[RL]], {{.+}} : (tensor<8x8xbf16>) -> tensor<8x4xbf16>
// CHECK-NEXT: %[[BL:.+]] = fuse.broadcast_in_dim %[[SL]], dims = [1, 2] : (tensor<8x4xbf16>) -> tensor<2x8x4xbf16>
// CHECK-NEXT: %[[U:.+]] = fuse.matmul %[[BL]], %[[SL]] transpose_rhs : (tensor<2x8x4xbf16>, tensor<8x4xbf16>) -> tensor<2x8x8xbf16>
// CHECK-NEXT: %[[UF:.+]] = fuse.cast %[[U]]
// CHECK-NEXT: return %[[YF]], %[[R]], %[[UF]]
func.func @f32_user_kept(%q: tensor<1x2x8x4xf32>, %w: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x8x8xf32>) {
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q causal scale = 5.000000e-01 : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  %t = fuse.transpose %o, permutation = [0, 2, 1, 3] : (tensor<1x2x8x4xf32>) -> tensor<1x8x2x4xf32>
  %r = fuse.reshape %t : (tensor<1x8x2x4xf32>) -> tensor<8x8xf32>
  %y = fuse.matmul %r, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = fuse.slice %r, start = [0, 0], limit = [8, 4], stride = [1, 1] : (tensor<8x8xf32>) -> tensor<8x4xf32>
  %b = fuse.broadcast_in_dim %s, dims = [1, 2] : (tensor<8x4xf32>) -> tensor<2x8x4xf32>
  %u = fuse.matmul %b, %s transpose_rhs : (tensor<2x8x4xf32>, tensor<8x4xf32>) -> tensor<2x8x8xf32>
  return %y, %r, %u : tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x8x8xf32>
}

// -----

// Ops already in a 16-bit type are left as they are.
// CHECK-LABEL: func.func @already_low
// CHECK-NOT: fuse.cast
// CHECK: fuse.matmul %{{.+}}, %{{.+}} : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
// CHECK-NEXT: fuse.scaled_dot_product_attention {{.+}} -> (tensor<1x2x8x4xf16>, tensor<1x2x8xf32>)
// CHECK-NEXT: return
func.func @already_low(%x: tensor<4x8xbf16>, %w: tensor<8x16xbf16>, %q: tensor<1x2x8x4xf16>)
    -> (tensor<4x16xbf16>, tensor<1x2x8x4xf16>) {
  %y = fuse.matmul %x, %w : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q causal scale = 5.000000e-01 : (tensor<1x2x8x4xf16>, tensor<1x2x8x4xf16>, tensor<1x2x8x4xf16>) -> (tensor<1x2x8x4xf16>, tensor<1x2x8xf32>)
  return %y, %o : tensor<4x16xbf16>, tensor<1x2x8x4xf16>
}

// -----

// An f16 value widened to f32 is read as it was at f16, and the widening
// cast goes; at bf16 it is a value like any other.
// CHECK-LABEL: func.func @widened_input
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf16>, %[[W:.+]]: tensor<8x16xf32>)
// CHECK-NEXT: %[[XF:.+]] = fuse.cast %[[X]] : tensor<4x8xf16> to tensor<4x8xf32>
// CHECK-NEXT: %[[WL:.+]] = fuse.cast %[[W]]
// CHECK-NEXT: %[[XL:.+]] = fuse.cast %[[XF]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: fuse.matmul %[[XL]], %[[WL]]
// F16-LABEL: func.func @widened_input
// F16-SAME: (%[[X:.+]]: tensor<4x8xf16>, %[[W:.+]]: tensor<8x16xf32>)
// F16-NEXT: %[[WL:.+]] = fuse.cast %[[W]] : tensor<8x16xf32> to tensor<8x16xf16>
// F16-NEXT: %[[Y:.+]] = fuse.matmul %[[X]], %[[WL]] : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
// F16-NEXT: %[[YF:.+]] = fuse.cast %[[Y]] : tensor<4x16xf16> to tensor<4x16xf32>
// F16-NEXT: return %[[YF]]
func.func @widened_input(%x: tensor<4x8xf16>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %xf = fuse.cast %x : tensor<4x8xf16> to tensor<4x8xf32>
  %y = fuse.matmul %xf, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Dynamic loss scaling at f16 on a training step: a linear layer, its loss
// and gradient, an SGD update of `w`, a running sum of squared gradients
// under `exp_avg_sq.w`, and the gradient returned as `grad.w`.
//   - the scaler's state comes in and goes out as `loss_scale` and
//     `loss_scale.growth_tracker`, and `found_inf` goes out;
//   - only the loss gradient's use of the constant 1.0 is scaled, not the
//     optimizer's;
//   - the gradient is unscaled where it leaves the linear part: for the
//     returned grad.w and the square (dw·dw is not linear), while lr·dw is
//     still linear and is unscaled before the subtraction from w;
//   - each unscaled gradient adds sum(g·0) to the total that says found_inf;
//   - the updates of `w` and `exp_avg_sq.w` keep the arguments when
//     found_inf; grad.w, which updates no argument, does not.
// At bf16 there is no loss scaling: the signature stays.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: {fuse.name = "lr"}) -> (
// CHECK-NOT: loss_scale
// CHECK: return
// F16-LABEL: func.func @train_step
// F16-SAME: (%[[X:[^:]+]]: tensor<4x8xf32> {fuse.name = "x"}, %[[W:[^:]+]]: tensor<8x3xf32> {fuse.name = "w"}, %[[V:[^:]+]]: tensor<8x3xf32> {fuse.name = "exp_avg_sq.w"}, %[[LABELS:[^:]+]]: tensor<4xi64> {{.+}}, %[[LR:[^:]+]]: tensor<f32> {fuse.name = "lr"},
// F16-SAME: %[[SCALE:[^:]+]]: tensor<f32> {fuse.name = "loss_scale"}, %[[TRACKER:[^:]+]]: tensor<f32> {fuse.name = "loss_scale.growth_tracker"})
// F16-SAME: -> (tensor<f32> {fuse.name = "loss"}, tensor<8x3xf32> {fuse.name = "w"}, tensor<8x3xf32> {fuse.name = "exp_avg_sq.w"}, tensor<8x3xf32> {fuse.name = "grad.w"},
// F16-SAME: tensor<f32> {fuse.name = "loss_scale"}, tensor<f32> {fuse.name = "loss_scale.growth_tracker"}, tensor<i1> {fuse.name = "found_inf"})
// F16-NEXT: %[[INV:.+]] = fuse.reciprocal %[[SCALE]] : tensor<f32>
// F16-NEXT: %[[XL:.+]] = fuse.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xf16>
// F16-NEXT: %[[WL:.+]] = fuse.cast %[[W]]
// F16-NEXT: %[[Z:.+]] = fuse.matmul %[[XL]], %[[WL]]
// F16-NEXT: %[[ZF:.+]] = fuse.cast %[[Z]]
// F16-NEXT: %[[LOSS:.+]] = fuse.cross_entropy %[[ZF]], %[[LABELS]]
// F16-NEXT: %[[ONE:.+]] = fuse.constant dense<1.000000e+00> : tensor<f32>
// F16-NEXT: %[[SEED:.+]] = fuse.mul %[[ONE]], %[[SCALE]] : tensor<f32>
// F16-NEXT: %[[DZ:.+]] = fuse.cross_entropy_backward %[[SEED]], %[[ZF]], %[[LABELS]]
// F16-NEXT: %[[DZL:.+]] = fuse.cast %[[DZ]] : tensor<4x3xf32> to tensor<4x3xf16>
// F16-NEXT: %[[DWL:.+]] = fuse.matmul %[[XL]], %[[DZL]] transpose_lhs
// F16-NEXT: %[[DW:.+]] = fuse.cast %[[DWL]] : tensor<8x3xf16> to tensor<8x3xf32>
// F16-NEXT: %[[INVB:.+]] = fuse.broadcast_in_dim %[[INV]], dims = [] : (tensor<f32>) -> tensor<8x3xf32>
// F16-NEXT: %[[G:.+]] = fuse.mul %[[DW]], %[[INVB]] : tensor<8x3xf32>
// F16-NEXT: %[[ZERO:.+]] = fuse.constant dense<0.000000e+00> : tensor<8x3xf32>
// F16-NEXT: %[[NAN:.+]] = fuse.mul %[[G]], %[[ZERO]] : tensor<8x3xf32>
// F16-NEXT: %[[PROBE:.+]] = fuse.reduce sum %[[NAN]], dims = [0, 1] : (tensor<8x3xf32>) -> tensor<f32>
// F16-NEXT: %[[SQ:.+]] = fuse.mul %[[G]], %[[G]] : tensor<8x3xf32>
// F16-NEXT: %[[V1:.+]] = fuse.add %[[V]], %[[SQ]]
// F16-NEXT: %[[DECAY:.+]] = fuse.sub %[[ONE]], %[[LR]] : tensor<f32>
// F16-NEXT: %[[LRB:.+]] = fuse.broadcast_in_dim %[[LR]]
// F16-NEXT: %[[DELTA:.+]] = fuse.mul %[[LRB]], %[[DW]] : tensor<8x3xf32>
// F16-NEXT: %[[INVB2:.+]] = fuse.broadcast_in_dim %[[INV]]
// F16-NEXT: %[[DELTA1:.+]] = fuse.mul %[[DELTA]], %[[INVB2]] : tensor<8x3xf32>
// F16-NEXT: %[[ZERO2:.+]] = fuse.constant dense<0.000000e+00> : tensor<8x3xf32>
// F16-NEXT: %[[NAN2:.+]] = fuse.mul %[[DELTA1]], %[[ZERO2]]
// F16-NEXT: %[[PROBE2:.+]] = fuse.reduce sum %[[NAN2]]
// F16-NEXT: %[[W1:.+]] = fuse.sub %[[W]], %[[DELTA1]] : tensor<8x3xf32>
// F16-NEXT: %[[ZS:.+]] = fuse.constant dense<0.000000e+00> : tensor<f32>
// F16-NEXT: %[[TOTAL:.+]] = fuse.add %[[PROBE]], %[[PROBE2]] : tensor<f32>
// F16-NEXT: %[[INF:.+]] = fuse.compare ne, %[[TOTAL]], %[[ZS]] : tensor<f32>
// F16-NEXT: %[[INFB:.+]] = fuse.broadcast_in_dim %[[INF]], dims = [] : (tensor<i1>) -> tensor<8x3xi1>
// F16-NEXT: %[[WOUT:.+]] = fuse.select %[[INFB]], %[[W]], %[[W1]] : tensor<8x3xi1>, tensor<8x3xf32>
// F16-NEXT: %[[VOUT:.+]] = fuse.select %[[INFB]], %[[V]], %[[V1]] : tensor<8x3xi1>, tensor<8x3xf32>
// The scale: halved with the tracker reset on found_inf; else doubled, with
// the tracker reset, when the tracker reaches growth-interval (unless the
// double is not finite); else the tracker counts one more finite step.
// F16-NEXT: %[[Z0:.+]] = fuse.constant dense<0.000000e+00> : tensor<f32>
// F16-NEXT: %[[ONE2:.+]] = fuse.constant dense<1.000000e+00> : tensor<f32>
// F16-NEXT: %[[COUNTED:.+]] = fuse.add %[[TRACKER]], %[[ONE2]] : tensor<f32>
// F16-NEXT: %[[INTERVAL:.+]] = fuse.constant dense<2.000000e+03> : tensor<f32>
// F16-NEXT: %[[GROWS:.+]] = fuse.compare eq, %[[COUNTED]], %[[INTERVAL]] : tensor<f32>
// F16-NEXT: %[[TWO:.+]] = fuse.constant dense<2.000000e+00> : tensor<f32>
// F16-NEXT: %[[GROWN:.+]] = fuse.mul %[[SCALE]], %[[TWO]] : tensor<f32>
// F16-NEXT: %[[DIFF:.+]] = fuse.sub %[[GROWN]], %[[GROWN]] : tensor<f32>
// F16-NEXT: %[[FINITE:.+]] = fuse.compare eq, %[[DIFF]], %[[Z0]] : tensor<f32>
// F16-NEXT: %[[DOUBLES:.+]] = fuse.and %[[GROWS]], %[[FINITE]] : tensor<i1>
// F16-NEXT: %[[OKSCALE:.+]] = fuse.select %[[DOUBLES]], %[[GROWN]], %[[SCALE]] : tensor<i1>, tensor<f32>
// F16-NEXT: %[[OKTRACKER:.+]] = fuse.select %[[GROWS]], %[[Z0]], %[[COUNTED]] : tensor<i1>, tensor<f32>
// F16-NEXT: %[[HALF:.+]] = fuse.constant dense<5.000000e-01> : tensor<f32>
// F16-NEXT: %[[BACKOFF:.+]] = fuse.mul %[[SCALE]], %[[HALF]] : tensor<f32>
// F16-NEXT: %[[NEWSCALE:.+]] = fuse.select %[[INF]], %[[BACKOFF]], %[[OKSCALE]] : tensor<i1>, tensor<f32>
// F16-NEXT: %[[NEWTRACKER:.+]] = fuse.select %[[INF]], %[[Z0]], %[[OKTRACKER]] : tensor<i1>, tensor<f32>
// F16-NEXT: return %[[LOSS]], %[[WOUT]], %[[VOUT]], %[[G]], %[[NEWSCALE]], %[[NEWTRACKER]], %[[INF]] :
// GROWTH-LABEL: func.func @train_step
// GROWTH: %[[INTERVAL:.+]] = fuse.constant dense<3.000000e+00> : tensor<f32>
// GROWTH-NEXT: fuse.compare eq, %{{.+}}, %[[INTERVAL]]
// The new ops say what they are where diagnostics and cost tables show them.
// LOC-LABEL: func.func @train_step
// LOC-SAME: {fuse.name = "loss_scale"} loc("loss_scale")
// LOC-SAME: {fuse.name = "loss_scale.growth_tracker"} loc("loss_scale.growth_tracker")
// LOC: fuse.reciprocal {{.+}} loc(#[[UNSCALE_LOC:loc[0-9]*]])
// LOC: fuse.mul {{.+}} : tensor<8x3xf32> loc(#[[UNSCALE_AT:loc[0-9]*]])
// LOC: fuse.reduce sum {{.+}} loc(#[[PROBE_AT:loc[0-9]*]])
// LOC: fuse.compare ne, {{.+}} loc(#[[FOUND_INF_LOC:loc[0-9]*]])
// LOC: fuse.select {{.+}} loc(#[[SKIP_LOC:loc[0-9]*]])
// LOC: fuse.compare eq, {{.+}} loc(#[[UPDATE_LOC:loc[0-9]*]])
// LOC-DAG: #[[UNSCALE_LOC]] = loc("loss_scale.unscale")
// LOC-DAG: #[[UNSCALE_AT]] = loc("loss_scale.unscale"(#{{loc[0-9]*}}))
// LOC-DAG: #[[PROBE_AT]] = loc("found_inf"(#{{loc[0-9]*}}))
// LOC-DAG: #[[FOUND_INF_LOC]] = loc("found_inf")
// LOC-DAG: #[[SKIP_LOC]] = loc("loss_scale.skip_update")
// LOC-DAG: #[[UPDATE_LOC]] = loc("loss_scale.update")
func.func @train_step(%x: tensor<4x8xf32> {fuse.name = "x"},
                      %w: tensor<8x3xf32> {fuse.name = "w"},
                      %v: tensor<8x3xf32> {fuse.name = "exp_avg_sq.w"},
                      %labels: tensor<4xi64> {fuse.name = "labels", fuse.index_bound = 3 : i64},
                      %lr: tensor<f32> {fuse.name = "lr"})
    -> (tensor<f32> {fuse.name = "loss"}, tensor<8x3xf32> {fuse.name = "w"},
        tensor<8x3xf32> {fuse.name = "exp_avg_sq.w"}, tensor<8x3xf32> {fuse.name = "grad.w"}) {
  %logits = fuse.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %loss = fuse.cross_entropy %logits, %labels : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  %one = fuse.constant dense<1.0> : tensor<f32>
  %dlogits = fuse.cross_entropy_backward %one, %logits, %labels : (tensor<f32>, tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  %dw = fuse.matmul %x, %dlogits transpose_lhs : (tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %sq = fuse.mul %dw, %dw : tensor<8x3xf32>
  %v1 = fuse.add %v, %sq : tensor<8x3xf32>
  %decay = fuse.sub %one, %lr : tensor<f32>
  %lrb = fuse.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
  %delta = fuse.mul %lrb, %dw : tensor<8x3xf32>
  %w1 = fuse.sub %w, %delta : tensor<8x3xf32>
  return %loss, %w1, %v1, %dw : tensor<f32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>
}

// -----

// What belongs to the linear part: the seed flows through neg, div by a
// non-member, reduce sum, broadcast, select against zeros, scatter_add into
// zeros and concat with zeros; a value is unscaled where an op outside the
// linear part reads it: one that reads two members (the product), a member
// and a non-zero value (the add of 1), or a max.
// F16-LABEL: func.func @linear_part
// F16-SAME: %[[SCALE:[^:]+]]: tensor<f32> {fuse.name = "loss_scale"}
// F16: %[[INV:.+]] = fuse.reciprocal %[[SCALE]]
// F16: %[[DZ:.+]] = fuse.cross_entropy_backward
// F16-NEXT: %[[NEG:.+]] = fuse.neg %[[DZ]]
// F16-NEXT: %[[DIV:.+]] = fuse.div %[[NEG]], %{{.+}} : tensor<4x3xf32>
// F16-NEXT: %[[ZEROS:.+]] = fuse.constant dense<0.000000e+00> : tensor<4x3xf32>
// F16-NEXT: %[[SEL:.+]] = fuse.select %{{.+}}, %[[DIV]], %[[ZEROS]]
// F16-NEXT: fuse.broadcast_in_dim %[[INV]]
// F16-NEXT: %[[SELU:.+]] = fuse.mul %[[SEL]], %{{.+}} : tensor<4x3xf32>
// F16: %[[SUM:.+]] = fuse.reduce sum %[[SEL]], dims = [1]
// F16-NEXT: fuse.broadcast_in_dim %[[INV]]
// F16-NEXT: %[[SUMU:.+]] = fuse.mul %[[SUM]], %{{.+}} : tensor<4xf32>
// F16: %[[SC:.+]] = fuse.scatter_add %{{.+}}[%{{.+}}], %[[SUM]], dim = 0
// F16-NEXT: %[[CAT:.+]] = fuse.concat dim(0) %[[SC]], %{{.+}} :
// F16-NEXT: fuse.broadcast_in_dim %[[INV]]
// F16-NEXT: %[[CATU:.+]] = fuse.mul %[[CAT]], %{{.+}} : tensor<8xf32>
// F16: %[[PROD:.+]] = fuse.mul %[[CATU]], %[[CATU]] : tensor<8xf32>
// F16-NEXT: %[[MAX:.+]] = fuse.reduce max %[[SELU]], dims = [1]
// F16-NEXT: fuse.constant dense<1.000000e+00> : tensor<4xf32>
// F16-NEXT: %[[PLUS:.+]] = fuse.add %[[SUMU]], %{{.+}} : tensor<4xf32>
// Three gradients, three probes.
// F16: %[[T1:.+]] = fuse.add %{{.+}}, %{{.+}} : tensor<f32>
// F16-NEXT: %[[T2:.+]] = fuse.add %[[T1]], %{{.+}} : tensor<f32>
// F16-NEXT: fuse.compare ne, %[[T2]], %{{.+}} : tensor<f32>
// F16: return %[[PROD]], %[[MAX]], %[[PLUS]],
func.func @linear_part(%logits: tensor<4x3xf32>, %labels: tensor<4xi64>, %d: tensor<4x3xf32>, %keep: tensor<4x3xi1>)
    -> (tensor<8xf32>, tensor<4xf32>, tensor<4xf32>) {
  %one = fuse.constant dense<1.0> : tensor<f32>
  %dz = fuse.cross_entropy_backward %one, %logits, %labels : (tensor<f32>, tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  %neg = fuse.neg %dz : tensor<4x3xf32>
  %div = fuse.div %neg, %d : tensor<4x3xf32>
  %zeros = fuse.constant dense<0.0> : tensor<4x3xf32>
  %sel = fuse.select %keep, %div, %zeros : tensor<4x3xi1>, tensor<4x3xf32>
  %sum = fuse.reduce sum %sel, dims = [1] : (tensor<4x3xf32>) -> tensor<4xf32>
  %base = fuse.constant dense<0.0> : tensor<4xf32>
  %sc = fuse.scatter_add %base[%labels], %sum, dim = 0 : (tensor<4xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<4xf32>
  %cat = fuse.concat dim(0) %sc, %base : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  %prod = fuse.mul %cat, %cat : tensor<8xf32>
  %max = fuse.reduce max %sel, dims = [1] : (tensor<4x3xf32>) -> tensor<4xf32>
  %ones = fuse.constant dense<1.0> : tensor<4xf32>
  %plus = fuse.add %sum, %ones : tensor<4xf32>
  return %prod, %max, %plus : tensor<8xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A cumsum is linear (the backward of a float cumsum runs one): the
// gradient stays scaled through it and is unscaled where the square reads
// it.
// F16-LABEL: func.func @linear_cumsum
// F16: %[[DZ:.+]] = fuse.cross_entropy_backward
// F16-NEXT: %[[C:.+]] = fuse.cumsum %[[DZ]], dim = 1 : tensor<4x3xf32>
// F16-NEXT: fuse.broadcast_in_dim
// F16-NEXT: %[[U:.+]] = fuse.mul %[[C]], %{{.+}} : tensor<4x3xf32>
// F16: fuse.mul %[[U]], %[[U]] : tensor<4x3xf32>
func.func @linear_cumsum(%logits: tensor<4x3xf32>, %labels: tensor<4xi64>) -> tensor<4x3xf32> {
  %one = fuse.constant dense<1.0> : tensor<f32>
  %dz = fuse.cross_entropy_backward %one, %logits, %labels : (tensor<f32>, tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  %c = fuse.cumsum %dz, dim = 1 : tensor<4x3xf32>
  %sq = fuse.mul %c, %c : tensor<4x3xf32>
  return %sq : tensor<4x3xf32>
}

// -----

// An inference graph at f16 gets the precision policy and no loss scaling.
// F16-LABEL: func.func @inference
// F16-SAME: -> (tensor<4x16xf32> {fuse.name = "logits"}) {
// F16-NOT: loss_scale
// F16-NOT: found_inf
// F16: fuse.matmul %{{.+}}, %{{.+}} : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
// F16-NOT: fuse.reciprocal
// F16: return
func.func @inference(%x: tensor<4x8xf32> {fuse.name = "x"}, %w: tensor<8x16xf32> {fuse.name = "w"})
    -> (tensor<4x16xf32> {fuse.name = "logits"}) {
  %y = fuse.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
