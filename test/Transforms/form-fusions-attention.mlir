// fuse-form-fusions gives each attention op the flash kernels take (bf16 or
// f16, head dim 64 or 128) the views around it that their element strides
// can address, so that no copy kernel runs before or after it.
// RUN: fuse-opt %s -split-input-file -fuse-form-fusions | FileCheck %s

// Every function computes the same before and after, on random inputs.
// RUN: fuse-run %s --entry packed_qkv --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry gradient_read_twice --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry unaligned_query --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry unaligned_rows --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry head_dim_strided --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry not_flash --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry reshapes_only --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// SAME: check-pipeline: PASS
// And through the whole pipeline (bf16, views taken in, memory planned) on
// the GPU edge graphs, against the f32 originals.
// RUN: fuse-run %S/../Codegen/Inputs/edge-sizes.mlir --entry flash_packed_qkv --check-pipeline=fuse-pipeline | FileCheck %s --check-prefix=PIPELINE
// RUN: fuse-run %S/../Codegen/Inputs/edge-sizes.mlir --entry flash_projections_gqa --check-pipeline=fuse-pipeline | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: check-pipeline: PASS

// GPT-2's layout: q, k, v are slices of one [B, T, 3C] projection viewed as
// heads; the output goes back to [B, T, C]; the gradients are concatenated
// back into [B, T, 3C]. The forward and the backward each read the
// projection itself (a private copy of the views each), the forward writes
// [B, T, C], the backward reads it back through the inverse views and
// writes the [B, T, 3C] gradient. No other kernel is left.
// CHECK-LABEL: func.func @packed_qkv
// CHECK-SAME: (%[[QKV:[^:]+]]: tensor<2x16x384xbf16>, %[[DOUT:[^:]+]]: tensor<2x16x128xbf16>)
// CHECK: %[[F:.+]]:2 = fuse.fusion attention (%[[QKV]]) : (tensor<2x16x384xbf16>) -> (tensor<2x2x16xf32>, tensor<2x16x128xbf16>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<2x16x384xbf16>):
// CHECK-COUNT-3: fuse.slice %[[A]]
// CHECK: fuse.scaled_dot_product_attention
// CHECK-NEXT: fuse.transpose
// CHECK-NEXT: %[[O:.+]] = fuse.reshape
// CHECK-NEXT: fuse.yield %{{.+}}, %[[O]]
// CHECK: %[[B:.+]] = fuse.fusion attention (%[[DOUT]], %[[QKV]], %[[F]]#1, %[[F]]#0) : ({{.*}}) -> tensor<2x16x384xbf16>
// CHECK: fuse.scaled_dot_product_attention_backward
// CHECK: %[[G:.+]] = fuse.concat dim(2)
// CHECK-NEXT: fuse.yield %[[G]]
// CHECK-NOT: fuse.fusion
// CHECK: return %[[F]]#1, %[[B]]
func.func @packed_qkv(%qkv: tensor<2x16x384xbf16>, %dout: tensor<2x16x128xbf16>) -> (tensor<2x16x128xbf16>, tensor<2x16x384xbf16>) {
  %q = fuse.slice %qkv, start = [0, 0, 0], limit = [2, 16, 128], stride = [1, 1, 1] : (tensor<2x16x384xbf16>) -> tensor<2x16x128xbf16>
  %k = fuse.slice %qkv, start = [0, 0, 128], limit = [2, 16, 256], stride = [1, 1, 1] : (tensor<2x16x384xbf16>) -> tensor<2x16x128xbf16>
  %v = fuse.slice %qkv, start = [0, 0, 256], limit = [2, 16, 384], stride = [1, 1, 1] : (tensor<2x16x384xbf16>) -> tensor<2x16x128xbf16>
  %q4 = fuse.reshape %q : (tensor<2x16x128xbf16>) -> tensor<2x16x2x64xbf16>
  %k4 = fuse.reshape %k : (tensor<2x16x128xbf16>) -> tensor<2x16x2x64xbf16>
  %v4 = fuse.reshape %v : (tensor<2x16x128xbf16>) -> tensor<2x16x2x64xbf16>
  %qt = fuse.transpose %q4, permutation = [0, 2, 1, 3] : (tensor<2x16x2x64xbf16>) -> tensor<2x2x16x64xbf16>
  %kt = fuse.transpose %k4, permutation = [0, 2, 1, 3] : (tensor<2x16x2x64xbf16>) -> tensor<2x2x16x64xbf16>
  %vt = fuse.transpose %v4, permutation = [0, 2, 1, 3] : (tensor<2x16x2x64xbf16>) -> tensor<2x2x16x64xbf16>
  %o, %lse = fuse.scaled_dot_product_attention %qt, %kt, %vt causal scale = 0.125 : (tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>) -> (tensor<2x2x16x64xbf16>, tensor<2x2x16xf32>)
  %ot = fuse.transpose %o, permutation = [0, 2, 1, 3] : (tensor<2x2x16x64xbf16>) -> tensor<2x16x2x64xbf16>
  %o3 = fuse.reshape %ot : (tensor<2x16x2x64xbf16>) -> tensor<2x16x128xbf16>
  %d4 = fuse.reshape %dout : (tensor<2x16x128xbf16>) -> tensor<2x16x2x64xbf16>
  %dt = fuse.transpose %d4, permutation = [0, 2, 1, 3] : (tensor<2x16x2x64xbf16>) -> tensor<2x2x16x64xbf16>
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %dt, %qt, %kt, %vt, %o, %lse causal scale = 0.125 : (tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16xf32>) -> (tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>, tensor<2x2x16x64xbf16>)
  %dqt = fuse.transpose %dq, permutation = [0, 2, 1, 3] : (tensor<2x2x16x64xbf16>) -> tensor<2x16x2x64xbf16>
  %dkt = fuse.transpose %dk, permutation = [0, 2, 1, 3] : (tensor<2x2x16x64xbf16>) -> tensor<2x16x2x64xbf16>
  %dvt = fuse.transpose %dv, permutation = [0, 2, 1, 3] : (tensor<2x2x16x64xbf16>) -> tensor<2x16x2x64xbf16>
  %dq3 = fuse.reshape %dqt : (tensor<2x16x2x64xbf16>) -> tensor<2x16x128xbf16>
  %dk3 = fuse.reshape %dkt : (tensor<2x16x2x64xbf16>) -> tensor<2x16x128xbf16>
  %dv3 = fuse.reshape %dvt : (tensor<2x16x2x64xbf16>) -> tensor<2x16x128xbf16>
  %g = fuse.concat dim(2) %dq3, %dk3, %dv3 : (tensor<2x16x128xbf16>, tensor<2x16x128xbf16>, tensor<2x16x128xbf16>) -> tensor<2x16x384xbf16>
  return %o3, %g : tensor<2x16x128xbf16>, tensor<2x16x384xbf16>
}

// -----

// BERT's layout, separate projections; a gradient read twice after its
// transpose (by its weight's GEMM, and widened by its bias's reduction) is
// written transposed, and its readers take it from there: the widening
// becomes a plain elementwise kernel of its own.
// CHECK-LABEL: func.func @gradient_read_twice
// CHECK: %[[B:.+]]:3 = fuse.fusion attention
// CHECK: %[[DV:.+]] = fuse.transpose %grad_value
// CHECK: fuse.yield %{{.+}}, %{{.+}}, %[[DV]] : {{.*}}, tensor<1x16x2x64xbf16>
// CHECK: fuse.fusion loop (%[[B]]#2)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: fuse.cast
// CHECK-NEXT: fuse.yield
// CHECK: fuse.reshape %[[B]]#2
// CHECK-NOT: fuse.transpose
// CHECK: return
func.func @gradient_read_twice(%q: tensor<1x16x128xbf16>, %k: tensor<1x16x128xbf16>, %v: tensor<1x16x128xbf16>, %dout: tensor<1x2x16x64xbf16>, %o: tensor<1x2x16x64xbf16>, %lse: tensor<1x2x16xf32>) -> (tensor<1x16x2x64xf32>, tensor<16x128xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>) {
  %q4 = fuse.reshape %q : (tensor<1x16x128xbf16>) -> tensor<1x16x2x64xbf16>
  %k4 = fuse.reshape %k : (tensor<1x16x128xbf16>) -> tensor<1x16x2x64xbf16>
  %v4 = fuse.reshape %v : (tensor<1x16x128xbf16>) -> tensor<1x16x2x64xbf16>
  %qt = fuse.transpose %q4, permutation = [0, 2, 1, 3] : (tensor<1x16x2x64xbf16>) -> tensor<1x2x16x64xbf16>
  %kt = fuse.transpose %k4, permutation = [0, 2, 1, 3] : (tensor<1x16x2x64xbf16>) -> tensor<1x2x16x64xbf16>
  %vt = fuse.transpose %v4, permutation = [0, 2, 1, 3] : (tensor<1x16x2x64xbf16>) -> tensor<1x2x16x64xbf16>
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %dout, %qt, %kt, %vt, %o, %lse scale = 0.125 : (tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16xf32>) -> (tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>)
  %dvt = fuse.transpose %dv, permutation = [0, 2, 1, 3] : (tensor<1x2x16x64xbf16>) -> tensor<1x16x2x64xbf16>
  %wide = fuse.cast %dvt : tensor<1x16x2x64xbf16> to tensor<1x16x2x64xf32>
  %flat = fuse.reshape %dvt : (tensor<1x16x2x64xbf16>) -> tensor<16x128xbf16>
  return %wide, %flat, %dq, %dk : tensor<1x16x2x64xf32>, tensor<16x128xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>
}

// -----

// A row that would start off 16 bytes is not read in place: q at element 4
// of each row of the projection. Its slice stays a (contiguous) copy, which
// the kernel then reads through the head views; k and v, at 8-element
// boundaries, are read in place.
// CHECK-LABEL: func.func @unaligned_query
// CHECK: %[[Q:.+]] = fuse.fusion loop
// CHECK: fuse.slice %{{.+}}, start = [0, 0, 4]
// CHECK: fuse.fusion attention (%[[Q]], %{{.+}})
// CHECK-NOT: start = [0, 0, 4]
// CHECK-COUNT-2: fuse.slice
// CHECK: fuse.scaled_dot_product_attention
func.func @unaligned_query(%qkv: tensor<1x16x392xbf16>) -> tensor<1x2x16x64xbf16> {
  %q = fuse.slice %qkv, start = [0, 0, 4], limit = [1, 16, 132], stride = [1, 1, 1] : (tensor<1x16x392xbf16>) -> tensor<1x16x128xbf16>
  %k = fuse.slice %qkv, start = [0, 0, 136], limit = [1, 16, 264], stride = [1, 1, 1] : (tensor<1x16x392xbf16>) -> tensor<1x16x128xbf16>
  %v = fuse.slice %qkv, start = [0, 0, 264], limit = [1, 16, 392], stride = [1, 1, 1] : (tensor<1x16x392xbf16>) -> tensor<1x16x128xbf16>
  %q4 = fuse.reshape %q : (tensor<1x16x128xbf16>) -> tensor<1x16x2x64xbf16>
  %k4 = fuse.reshape %k : (tensor<1x16x128xbf16>) -> tensor<1x16x2x64xbf16>
  %v4 = fuse.reshape %v : (tensor<1x16x128xbf16>) -> tensor<1x16x2x64xbf16>
  %qt = fuse.transpose %q4, permutation = [0, 2, 1, 3] : (tensor<1x16x2x64xbf16>) -> tensor<1x2x16x64xbf16>
  %kt = fuse.transpose %k4, permutation = [0, 2, 1, 3] : (tensor<1x16x2x64xbf16>) -> tensor<1x2x16x64xbf16>
  %vt = fuse.transpose %v4, permutation = [0, 2, 1, 3] : (tensor<1x16x2x64xbf16>) -> tensor<1x2x16x64xbf16>
  %o, %lse = fuse.scaled_dot_product_attention %qt, %kt, %vt scale = 0.125 : (tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>) -> (tensor<1x2x16x64xbf16>, tensor<1x2x16xf32>)
  return %o : tensor<1x2x16x64xbf16>
}

// -----

// Rows 388 elements apart (not a multiple of 8): no slice of the projection
// can be read in place. The slices stay one copy kernel (contiguous
// [B, T, C] each), which the attention reads through the head views.
// CHECK-LABEL: func.func @unaligned_rows
// CHECK: %[[S:.+]]:3 = fuse.fusion loop
// CHECK-COUNT-3: fuse.slice
// CHECK: fuse.fusion attention (%[[S]]#0, %[[S]]#1, %[[S]]#2)
// CHECK-NOT: fuse.slice
// CHECK: fuse.scaled_dot_product_attention
func.func @unaligned_rows(%qkv: tensor<1x16x388xbf16>) -> tensor<1x2x16x64xbf16> {
  %q = fuse.slice %qkv, start = [0, 0, 0], limit = [1, 16, 128], stride = [1, 1, 1] : (tensor<1x16x388xbf16>) -> tensor<1x16x128xbf16>
  %k = fuse.slice %qkv, start = [0, 0, 128], limit = [1, 16, 256], stride = [1, 1, 1] : (tensor<1x16x388xbf16>) -> tensor<1x16x128xbf16>
  %v = fuse.slice %qkv, start = [0, 0, 256], limit = [1, 16, 384], stride = [1, 1, 1] : (tensor<1x16x388xbf16>) -> tensor<1x16x128xbf16>
  %q4 = fuse.reshape %q : (tensor<1x16x128xbf16>) -> tensor<1x16x2x64xbf16>
  %k4 = fuse.reshape %k : (tensor<1x16x128xbf16>) -> tensor<1x16x2x64xbf16>
  %v4 = fuse.reshape %v : (tensor<1x16x128xbf16>) -> tensor<1x16x2x64xbf16>
  %qt = fuse.transpose %q4, permutation = [0, 2, 1, 3] : (tensor<1x16x2x64xbf16>) -> tensor<1x2x16x64xbf16>
  %kt = fuse.transpose %k4, permutation = [0, 2, 1, 3] : (tensor<1x16x2x64xbf16>) -> tensor<1x2x16x64xbf16>
  %vt = fuse.transpose %v4, permutation = [0, 2, 1, 3] : (tensor<1x16x2x64xbf16>) -> tensor<1x2x16x64xbf16>
  %o, %lse = fuse.scaled_dot_product_attention %qt, %kt, %vt scale = 0.125 : (tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>) -> (tensor<1x2x16x64xbf16>, tensor<1x2x16xf32>)
  return %o : tensor<1x2x16x64xbf16>
}

// -----

// A view whose head dim is not contiguous (here stored [B, D, H, T]) stays
// a copy; so does a transpose of the output that leaves D strided.
// CHECK-LABEL: func.func @head_dim_strided
// CHECK: %[[Q:.+]] = fuse.fusion loop
// CHECK: %[[A:.+]] = fuse.fusion attention (%[[Q]], %{{.+}}, %{{.+}})
// CHECK-NEXT: ^bb0
// CHECK-NEXT: fuse.scaled_dot_product_attention
// CHECK: fuse.fusion loop (%[[A]])
// CHECK: fuse.transpose %{{.+}}, permutation = [0, 1, 3, 2]
func.func @head_dim_strided(%x: tensor<1x64x2x16xbf16>, %k: tensor<1x2x16x64xbf16>, %v: tensor<1x2x16x64xbf16>) -> tensor<1x2x64x16xbf16> {
  %q = fuse.transpose %x, permutation = [0, 2, 3, 1] : (tensor<1x64x2x16xbf16>) -> tensor<1x2x16x64xbf16>
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v scale = 0.125 : (tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>) -> (tensor<1x2x16x64xbf16>, tensor<1x2x16xf32>)
  %ot = fuse.transpose %o, permutation = [0, 1, 3, 2] : (tensor<1x2x16x64xbf16>) -> tensor<1x2x64x16xbf16>
  return %ot : tensor<1x2x64x16xbf16>
}

// -----

// f32 attention does not run on the flash kernels (it is GEMMs around
// softmax kernels, which read their operands as they are): the views stay.
// CHECK-LABEL: func.func @not_flash
// CHECK: %[[Q:.+]] = fuse.fusion loop
// CHECK: fuse.fusion attention (%[[Q]], %{{.+}}, %{{.+}})
// CHECK-NEXT: ^bb0
// CHECK-NEXT: fuse.scaled_dot_product_attention
func.func @not_flash(%x: tensor<1x16x128xf32>, %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>) -> tensor<1x2x16x64xf32> {
  %q4 = fuse.reshape %x : (tensor<1x16x128xf32>) -> tensor<1x16x2x64xf32>
  %q = fuse.transpose %q4, permutation = [0, 2, 1, 3] : (tensor<1x16x2x64xf32>) -> tensor<1x2x16x64xf32>
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v scale = 0.125 : (tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>) -> (tensor<1x2x16x64xf32>, tensor<1x2x16xf32>)
  return %o : tensor<1x2x16x64xf32>
}

// -----

// Reshapes alone move nothing: they stay views outside, and the attention
// is a kernel of its own.
// CHECK-LABEL: func.func @reshapes_only
// CHECK: %[[Q:.+]] = fuse.reshape
// CHECK: fuse.fusion attention (%[[Q]], %{{.+}}, %{{.+}})
// CHECK-NEXT: ^bb0
// CHECK-NEXT: fuse.scaled_dot_product_attention
func.func @reshapes_only(%x: tensor<2x16x64xf16>, %k: tensor<1x2x16x64xf16>, %v: tensor<1x2x16x64xf16>) -> tensor<1x2x16x64xf16> {
  %q = fuse.reshape %x : (tensor<2x16x64xf16>) -> tensor<1x2x16x64xf16>
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.125 : (tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>) -> (tensor<1x2x16x64xf16>, tensor<1x2x16xf32>)
  return %o : tensor<1x2x16x64xf16>
}
