// RUN: fuse-opt %s -split-input-file -canonicalize | FileCheck %s

// Grouped-query attention written out (HuggingFace's repeat_kv: each
// key/value head repeated G times by a reshape, a broadcast and a reshape)
// is read from the repeat's source by the attention op, which takes Hkv
// heads itself; the backward too, where the graph only sums the repeated
// heads' key and value gradients over each group. The repeats are then dead.
// The results are the same as before on the reference interpreter:
// RUN: fuse-run %s --entry forward --check-pipeline=canonicalize | FileCheck %s --check-prefix=SAME1
// RUN: fuse-run %s --entry forward_without_unit_dim --check-pipeline=canonicalize | FileCheck %s --check-prefix=SAME1
// RUN: fuse-run %s --entry backward --check-pipeline=canonicalize | FileCheck %s --check-prefix=SAME3
// RUN: fuse-run %s --entry gradient_read_elsewhere --check-pipeline=canonicalize | FileCheck %s --check-prefix=SAME2
// The whole pipeline in bf16, on the interpreter and in the CUDA plan: the
// flash kernels run on the two key/value heads (the backward's grid has
// one CTA per key/value head) and nothing writes the repeated heads.
// RUN: fuse-run %s --entry pipeline_bf16 --check-pipeline=fuse-pipeline | FileCheck %s --check-prefix=SAME3
// RUN: fuse-translate %s --entry pipeline_bf16 --emit-plan | FileCheck %s --check-prefix=PLAN
// PLAN-NOT: broadcast_in_dim
// PLAN: launch fuse_flash_forward_0
// PLAN: launch fuse_flash_backward_0 grid=(1,2,2)
// PLAN-NOT: broadcast_in_dim
// SAME1: check-pipeline: PASS (1 of 1 outputs match)
// SAME2: check-pipeline: PASS (2 of 2 outputs match)
// SAME3: check-pipeline: PASS (3 of 3 outputs match)

// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x8xf32>, %[[K:[^:]+]]: tensor<2x2x8x8xf32>, %[[V:[^:]+]]: tensor<2x2x8x8xf32>)
// CHECK-NOT: fuse.broadcast_in_dim
// CHECK: fuse.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] causal
// CHECK-SAME: (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) ->
func.func @forward(%q: tensor<2x4x8x8xf32>, %k: tensor<2x2x8x8xf32>, %v: tensor<2x2x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %k1 = fuse.reshape %k : (tensor<2x2x8x8xf32>) -> tensor<2x2x1x8x8xf32>
  %k2 = fuse.broadcast_in_dim %k1, dims = [0, 1, 2, 3, 4] : (tensor<2x2x1x8x8xf32>) -> tensor<2x2x2x8x8xf32>
  %k3 = fuse.reshape %k2 : (tensor<2x2x2x8x8xf32>) -> tensor<2x4x8x8xf32>
  %v1 = fuse.reshape %v : (tensor<2x2x8x8xf32>) -> tensor<2x2x1x8x8xf32>
  %v2 = fuse.broadcast_in_dim %v1, dims = [0, 1, 2, 3, 4] : (tensor<2x2x1x8x8xf32>) -> tensor<2x2x2x8x8xf32>
  %v3 = fuse.reshape %v2 : (tensor<2x2x2x8x8xf32>) -> tensor<2x4x8x8xf32>
  %o, %lse = fuse.scaled_dot_product_attention %q, %k3, %v3 causal scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>)
  return %o : tensor<2x4x8x8xf32>
}

// -----

// The broadcast may add the group dimension itself.
// CHECK-LABEL: func.func @forward_without_unit_dim
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x6x4x8xf32>, %[[K:[^:]+]]: tensor<1x2x4x8xf32>, %[[V:[^:]+]]: tensor<1x2x4x8xf32>)
// CHECK-NOT: fuse.broadcast_in_dim
// CHECK: fuse.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] scale
func.func @forward_without_unit_dim(%q: tensor<1x6x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x6x4x8xf32> {
  %k2 = fuse.broadcast_in_dim %k, dims = [0, 1, 3, 4] : (tensor<1x2x4x8xf32>) -> tensor<1x2x3x4x8xf32>
  %k3 = fuse.reshape %k2 : (tensor<1x2x3x4x8xf32>) -> tensor<1x6x4x8xf32>
  %v2 = fuse.broadcast_in_dim %v, dims = [0, 1, 3, 4] : (tensor<1x2x4x8xf32>) -> tensor<1x2x3x4x8xf32>
  %v3 = fuse.reshape %v2 : (tensor<1x2x3x4x8xf32>) -> tensor<1x6x4x8xf32>
  %o, %lse = fuse.scaled_dot_product_attention %q, %k3, %v3 scale = 5.000000e-01 : (tensor<1x6x4x8xf32>, tensor<1x6x4x8xf32>, tensor<1x6x4x8xf32>) -> (tensor<1x6x4x8xf32>, tensor<1x6x4xf32>)
  return %o : tensor<1x6x4x8xf32>
}

// -----

// The backward as AOTAutograd writes repeat_kv's: each repeated gradient
// reshaped to [B, Hkv, G, T, D] and summed over the group (here with a
// cast between, and one sum without keepdim).
// CHECK-LABEL: func.func @backward
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x8xf32>, %[[K:[^:]+]]: tensor<2x2x8x8xf32>, %[[V:[^:]+]]: tensor<2x2x8x8xf32>, %[[DO:[^:]+]]: tensor<2x4x8x8xf32>)
// CHECK-NOT: fuse.broadcast_in_dim
// CHECK: fuse.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] causal
// CHECK: %[[DQ:.+]], %[[DK:.+]], %[[DV:.+]] = fuse.scaled_dot_product_attention_backward %[[DO]], %[[Q]], %[[K]], %[[V]], %{{.+}}, %{{.+}} causal
// CHECK-SAME: -> (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>)
// CHECK-NOT: fuse.reduce
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
func.func @backward(%q: tensor<2x4x8x8xf32>, %k: tensor<2x2x8x8xf32>, %v: tensor<2x2x8x8xf32>, %do: tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) {
  %k1 = fuse.reshape %k : (tensor<2x2x8x8xf32>) -> tensor<2x2x1x8x8xf32>
  %k2 = fuse.broadcast_in_dim %k1, dims = [0, 1, 2, 3, 4] : (tensor<2x2x1x8x8xf32>) -> tensor<2x2x2x8x8xf32>
  %k3 = fuse.reshape %k2 : (tensor<2x2x2x8x8xf32>) -> tensor<2x4x8x8xf32>
  %v1 = fuse.reshape %v : (tensor<2x2x8x8xf32>) -> tensor<2x2x1x8x8xf32>
  %v2 = fuse.broadcast_in_dim %v1, dims = [0, 1, 2, 3, 4] : (tensor<2x2x1x8x8xf32>) -> tensor<2x2x2x8x8xf32>
  %v3 = fuse.reshape %v2 : (tensor<2x2x2x8x8xf32>) -> tensor<2x4x8x8xf32>
  %o, %lse = fuse.scaled_dot_product_attention %q, %k3, %v3 causal scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>)
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %k3, %v3, %o, %lse causal scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>)
  %dk1 = fuse.reshape %dk : (tensor<2x4x8x8xf32>) -> tensor<2x2x2x8x8xf32>
  %dk2 = fuse.reduce sum %dk1, dims = [2] keepdim : (tensor<2x2x2x8x8xf32>) -> tensor<2x2x1x8x8xf32>
  %dk3 = fuse.reshape %dk2 : (tensor<2x2x1x8x8xf32>) -> tensor<2x2x8x8xf32>
  %dvc = fuse.cast %dv : tensor<2x4x8x8xf32> to tensor<2x4x8x8xf32>
  %dv1 = fuse.reshape %dvc : (tensor<2x4x8x8xf32>) -> tensor<2x2x2x8x8xf32>
  %dv2 = fuse.reduce sum %dv1, dims = [2] : (tensor<2x2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  return %dq, %dk3, %dv2 : tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>
}

// -----

// A repeated head's own gradient read elsewhere (returned): the backward
// keeps the repeated operands; the forward still reads the source.
// CHECK-LABEL: func.func @gradient_read_elsewhere
// CHECK: fuse.scaled_dot_product_attention_backward
// CHECK-SAME: -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>)
func.func @gradient_read_elsewhere(%q: tensor<2x4x8x8xf32>, %k: tensor<2x2x8x8xf32>, %v: tensor<2x2x8x8xf32>, %do: tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>) {
  %k1 = fuse.reshape %k : (tensor<2x2x8x8xf32>) -> tensor<2x2x1x8x8xf32>
  %k2 = fuse.broadcast_in_dim %k1, dims = [0, 1, 2, 3, 4] : (tensor<2x2x1x8x8xf32>) -> tensor<2x2x2x8x8xf32>
  %k3 = fuse.reshape %k2 : (tensor<2x2x2x8x8xf32>) -> tensor<2x4x8x8xf32>
  %v1 = fuse.reshape %v : (tensor<2x2x8x8xf32>) -> tensor<2x2x1x8x8xf32>
  %v2 = fuse.broadcast_in_dim %v1, dims = [0, 1, 2, 3, 4] : (tensor<2x2x1x8x8xf32>) -> tensor<2x2x2x8x8xf32>
  %v3 = fuse.reshape %v2 : (tensor<2x2x2x8x8xf32>) -> tensor<2x4x8x8xf32>
  %o, %lse = fuse.scaled_dot_product_attention %q, %k3, %v3 scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>)
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %k3, %v3, %o, %lse scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>)
  %dv1 = fuse.reshape %dv : (tensor<2x4x8x8xf32>) -> tensor<2x2x2x8x8xf32>
  %dv2 = fuse.reduce sum %dv1, dims = [2] : (tensor<2x2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  return %dk, %dv2 : tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @pipeline_bf16
func.func @pipeline_bf16(%q: tensor<2x4x128x64xbf16>, %k: tensor<2x2x128x64xbf16>, %v: tensor<2x2x128x64xbf16>, %do: tensor<2x4x128x64xbf16>) -> (tensor<2x4x128x64xbf16>, tensor<2x2x128x64xf32>, tensor<2x2x128x64xf32>) {
  %k1 = fuse.reshape %k : (tensor<2x2x128x64xbf16>) -> tensor<2x2x1x128x64xbf16>
  %k2 = fuse.broadcast_in_dim %k1, dims = [0, 1, 2, 3, 4] : (tensor<2x2x1x128x64xbf16>) -> tensor<2x2x2x128x64xbf16>
  %k3 = fuse.reshape %k2 : (tensor<2x2x2x128x64xbf16>) -> tensor<2x4x128x64xbf16>
  %v1 = fuse.reshape %v : (tensor<2x2x128x64xbf16>) -> tensor<2x2x1x128x64xbf16>
  %v2 = fuse.broadcast_in_dim %v1, dims = [0, 1, 2, 3, 4] : (tensor<2x2x1x128x64xbf16>) -> tensor<2x2x2x128x64xbf16>
  %v3 = fuse.reshape %v2 : (tensor<2x2x2x128x64xbf16>) -> tensor<2x4x128x64xbf16>
  %o, %lse = fuse.scaled_dot_product_attention %q, %k3, %v3 causal scale = 1.250000e-01 : (tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>) -> (tensor<2x4x128x64xbf16>, tensor<2x4x128xf32>)
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %k3, %v3, %o, %lse causal scale = 1.250000e-01 : (tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128xf32>) -> (tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>)
  %dkc = fuse.cast %dk : tensor<2x4x128x64xbf16> to tensor<2x4x128x64xf32>
  %dk1 = fuse.reshape %dkc : (tensor<2x4x128x64xf32>) -> tensor<2x2x2x128x64xf32>
  %dk2 = fuse.reduce sum %dk1, dims = [2] keepdim : (tensor<2x2x2x128x64xf32>) -> tensor<2x2x1x128x64xf32>
  %dk3 = fuse.reshape %dk2 : (tensor<2x2x1x128x64xf32>) -> tensor<2x2x128x64xf32>
  %dvc = fuse.cast %dv : tensor<2x4x128x64xbf16> to tensor<2x4x128x64xf32>
  %dv1 = fuse.reshape %dvc : (tensor<2x4x128x64xf32>) -> tensor<2x2x2x128x64xf32>
  %dv2 = fuse.reduce sum %dv1, dims = [2] keepdim : (tensor<2x2x2x128x64xf32>) -> tensor<2x2x1x128x64xf32>
  %dv3 = fuse.reshape %dv2 : (tensor<2x2x1x128x64xf32>) -> tensor<2x2x128x64xf32>
  return %dq, %dk3, %dv3 : tensor<2x4x128x64xbf16>, tensor<2x2x128x64xf32>, tensor<2x2x128x64xf32>
}
