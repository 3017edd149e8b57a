// RUN: fuse-opt %s -split-input-file -fuse-form-fusions | FileCheck %s
// RUN: fuse-opt %s -split-input-file -fuse-form-fusions=max-inputs=2 | FileCheck %s --check-prefix=BOUNDED

// Every function computes the same before and after, on random inputs.
// RUN: fuse-run %s --entry pointwise_chain --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry softmax --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry bias_gradient --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry gemm_epilogue --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry erf_gelu_not_in_epilogue --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry residual_into_gemm_not_norm --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry no_prologue_no_two_gemms --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry broadcast_copied --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry scatter_add_stays --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry no_cycle --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry lone_ops --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry attention --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry bounded_inputs --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry middle_dimension --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry middle_dimension_wide --check-pipeline=fuse-form-fusions | FileCheck %s --check-prefix=SAME
// SAME: check-pipeline: PASS

// A pointwise chain is one loop kernel.
// CHECK-LABEL: func.func @pointwise_chain
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[Y:.+]]: tensor<4x8xf32>)
// CHECK: %[[F:.+]] = fuse.fusion loop (%[[X]], %[[Y]])
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[S:.+]] = fuse.add %[[A]], %[[B]]
// CHECK-NEXT: %[[E:.+]] = fuse.exp %[[S]]
// CHECK-NEXT: %[[M:.+]] = fuse.mul %[[E]], %[[A]]
// CHECK-NEXT: fuse.yield %[[M]]
// CHECK: return %[[F]]
func.func @pointwise_chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = fuse.add %x, %y : tensor<4x8xf32>
  %b = fuse.exp %a : tensor<4x8xf32>
  %c = fuse.mul %b, %x : tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// Softmax's two reductions over the same rows, with everything around them,
// are one row-reduction kernel.
// CHECK-LABEL: func.func @softmax
// CHECK: fuse.fusion row_reduction
// CHECK: fuse.reduce max
// CHECK: fuse.exp
// CHECK: fuse.reduce sum
// CHECK: fuse.div
// CHECK: fuse.yield
// CHECK-NOT: fuse.fusion
// CHECK: return
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %max = fuse.reduce max %x, dims = [1] keepdim : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %maxb = fuse.broadcast_in_dim %max, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %s = fuse.sub %x, %maxb : tensor<4x8xf32>
  %e = fuse.exp %s : tensor<4x8xf32>
  %sum = fuse.reduce sum %e, dims = [1] keepdim : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %sumb = fuse.broadcast_in_dim %sum, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = fuse.div %e, %sumb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A bias gradient is a column reduction; its pointwise prologue joins it
// and is also stored, as the function returns it (two results).
// CHECK-LABEL: func.func @bias_gradient
// CHECK: %[[F:.+]]:2 = fuse.fusion column_reduction
// CHECK: %[[G:.+]] = fuse.mul
// CHECK: %[[DB:.+]] = fuse.reduce sum %[[G]], dims = [0, 1]
// CHECK: fuse.yield %[[G]], %[[DB]]
// CHECK: return %[[F]]#1, %[[F]]#0
func.func @bias_gradient(%dy: tensor<2x4x8xf32>, %h: tensor<2x4x8xf32>) -> (tensor<8xf32>, tensor<2x4x8xf32>) {
  %g = fuse.mul %dy, %h : tensor<2x4x8xf32>
  %db = fuse.reduce sum %g, dims = [0, 1] : (tensor<2x4x8xf32>) -> tensor<8xf32>
  return %db, %g : tensor<8xf32>, tensor<2x4x8xf32>
}

// -----

// What cuBLASLt applies after the product (bias, tanh-GELU, casts) joins the
// matmul; the pre-activation is stored too, for the backward (GELU_AUX).
// CHECK-LABEL: func.func @gemm_epilogue
// CHECK: %[[F:.+]]:2 = fuse.fusion gemm_epilogue
// CHECK: fuse.matmul
// CHECK: fuse.cast
// CHECK: fuse.broadcast_in_dim
// CHECK: %[[H:.+]] = fuse.add
// CHECK: fuse.gelu %[[H]], approximate = tanh
// CHECK: %[[D:.+]] = fuse.cast
// CHECK: fuse.yield %[[H]], %[[D]]
// CHECK-NOT: fuse.fusion
// CHECK: return %[[F]]#1, %[[F]]#0
func.func @gemm_epilogue(%x: tensor<16x32xbf16>, %w: tensor<32x64xbf16>, %b: tensor<64xf32>) -> (tensor<16x64xbf16>, tensor<16x64xf32>) {
  %mm = fuse.matmul %x, %w : (tensor<16x32xbf16>, tensor<32x64xbf16>) -> tensor<16x64xbf16>
  %up = fuse.cast %mm : tensor<16x64xbf16> to tensor<16x64xf32>
  %bb = fuse.broadcast_in_dim %b, dims = [1] : (tensor<64xf32>) -> tensor<16x64xf32>
  %h = fuse.add %up, %bb : tensor<16x64xf32>
  %g = fuse.gelu %h, approximate = tanh : tensor<16x64xf32>
  %down = fuse.cast %g : tensor<16x64xf32> to tensor<16x64xbf16>
  return %down, %h : tensor<16x64xbf16>, tensor<16x64xf32>
}

// -----

// cuBLASLt has no erf GELU: the bias joins the GEMM, the GELU its own loop.
// CHECK-LABEL: func.func @erf_gelu_not_in_epilogue
// CHECK: %[[G:.+]] = fuse.fusion gemm_epilogue
// CHECK-NOT: fuse.gelu
// CHECK: fuse.yield
// CHECK: fuse.fusion loop (%[[G]])
// CHECK: fuse.gelu %{{.+}}, approximate = erf
func.func @erf_gelu_not_in_epilogue(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> {
  %mm = fuse.matmul %x, %w : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %bb = fuse.broadcast_in_dim %b, dims = [1] : (tensor<64xf32>) -> tensor<16x64xf32>
  %h = fuse.add %mm, %bb : tensor<16x64xf32>
  %g = fuse.gelu %h, approximate = erf : tensor<16x64xf32>
  return %g : tensor<16x64xf32>
}

// -----

// A residual add past the reshape of a GEMM's output joins the GEMM (saving
// the output's store and load) rather than the reduction after it (which
// would save one load).
// CHECK-LABEL: func.func @residual_into_gemm_not_norm
// CHECK-SAME: %[[R:[^:]+]]: tensor<2x8x32xf32>)
// CHECK: %[[G:.+]] = fuse.fusion gemm_epilogue ({{.*}}, %[[R]])
// CHECK: fuse.matmul
// CHECK: fuse.reshape
// CHECK: fuse.add
// CHECK: %[[N:.+]] = fuse.fusion row_reduction (%[[G]])
// CHECK-NOT: fuse.add
// CHECK: fuse.reduce mean
// CHECK: return %[[G]], %[[N]]
func.func @residual_into_gemm_not_norm(%x: tensor<16x32xf32>, %w: tensor<32x32xf32>, %r: tensor<2x8x32xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x1xf32>) {
  %mm = fuse.matmul %x, %w : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %v = fuse.reshape %mm : (tensor<16x32xf32>) -> tensor<2x8x32xf32>
  %h = fuse.add %v, %r : tensor<2x8x32xf32>
  %mean = fuse.reduce mean %h, dims = [2] keepdim : (tensor<2x8x32xf32>) -> tensor<2x8x1xf32>
  return %h, %mean : tensor<2x8x32xf32>, tensor<2x8x1xf32>
}

// -----

// cuBLASLt reads its operands from memory: a producer of a matmul operand
// stays in a kernel of its own, and two matmuls never share one.
// CHECK-LABEL: func.func @no_prologue_no_two_gemms
// CHECK: %[[T:.+]] = fuse.fusion loop
// CHECK: fuse.tanh
// CHECK: %[[M1:.+]] = fuse.matmul %[[T]]
// CHECK: fuse.matmul %[[M1]]
func.func @no_prologue_no_two_gemms(%x: tensor<16x32xf32>, %w: tensor<32x32xf32>) -> tensor<16x32xf32> {
  %a = fuse.tanh %x : tensor<16x32xf32>
  %m1 = fuse.matmul %a, %w : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %m2 = fuse.matmul %m1, %w : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  return %m2 : tensor<16x32xf32>
}

// -----

// A broadcast read by two kernels that cannot merge (a row and a column
// reduction) is copied into both, which read the small vector instead.
// CHECK-LABEL: func.func @broadcast_copied
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK: fuse.fusion row_reduction (%[[B]], %[[X]])
// CHECK: fuse.broadcast_in_dim
// CHECK: fuse.reduce sum %{{.+}}, dims = [1]
// CHECK: fuse.fusion column_reduction (%[[B]], %[[X]])
// CHECK: fuse.broadcast_in_dim
// CHECK: fuse.reduce sum %{{.+}}, dims = [0]
func.func @broadcast_copied(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %bb = fuse.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %p = fuse.mul %x, %bb : tensor<4x8xf32>
  %rows = fuse.reduce sum %p, dims = [1] : (tensor<4x8xf32>) -> tensor<4xf32>
  %q = fuse.add %x, %bb : tensor<4x8xf32>
  %cols = fuse.reduce sum %q, dims = [0] : (tensor<4x8xf32>) -> tensor<8xf32>
  return %rows, %cols : tensor<4xf32>, tensor<8xf32>
}

// -----

// An op with no fusion template (scatter_add) stays a plain op between the
// kernels before and after it.
// CHECK-LABEL: func.func @scatter_add_stays
// CHECK: %[[P:.+]] = fuse.fusion loop
// CHECK: %[[S:.+]] = fuse.scatter_add %{{.+}}[%{{.+}}], %[[P]]
// CHECK: fuse.fusion loop (%[[S]])
func.func @scatter_add_stays(%table: tensor<16x8xf32>, %ids: tensor<4xi64>, %g: tensor<4x8xf32>) -> tensor<16x8xf32> {
  %s = fuse.mul %g, %g : tensor<4x8xf32>
  %z = fuse.scatter_add %table[%ids], %s, dim = 0 : (tensor<16x8xf32>, tensor<4xi64>, tensor<4x8xf32>) -> tensor<16x8xf32>
  %o = fuse.exp %z : tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// -----

// A column reduction finishes only when the whole grid has: what divides by
// it over the full space is another kernel, which reads both results of
// the first (its prologue's exp is stored, not computed twice).
// CHECK-LABEL: func.func @no_cycle
// CHECK: %[[C:.+]]:2 = fuse.fusion column_reduction
// CHECK: fuse.exp
// CHECK: fuse.reduce sum
// CHECK: fuse.fusion loop (%[[C]]#1, %[[C]]#0)
// CHECK: fuse.div
func.func @no_cycle(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = fuse.exp %x : tensor<4x8xf32>
  %cols = fuse.reduce sum %e, dims = [0] keepdim : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %cb = fuse.broadcast_in_dim %cols, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
  %y = fuse.div %e, %cb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A lone reshape is a view and a lone matmul a plain GEMM call: neither
// becomes a fusion.
// CHECK-LABEL: func.func @lone_ops
// CHECK-NOT: fuse.fusion
// CHECK: fuse.reshape
// CHECK: fuse.matmul
func.func @lone_ops(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<32xf32>, tensor<4x8xf32>) {
  %r = fuse.reshape %x : (tensor<4x8xf32>) -> tensor<32xf32>
  %m = fuse.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %r, %m : tensor<32xf32>, tensor<4x8xf32>
}

// -----

// Attention is a kernel of its own; what follows it is not part of it.
// CHECK-LABEL: func.func @attention
// CHECK: %[[A:.+]] = fuse.fusion attention
// CHECK: fuse.scaled_dot_product_attention
// CHECK: fuse.fusion loop (%[[A]])
// CHECK: fuse.relu
func.func @attention(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.5 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  %y = fuse.relu %o : tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// max-inputs bounds what one kernel reads.
// CHECK-LABEL: func.func @bounded_inputs
// CHECK: fuse.fusion loop ({{[^,]+}}, {{[^,]+}}, {{[^,]+}})
// CHECK-NOT: fuse.fusion
// BOUNDED-LABEL: func.func @bounded_inputs
// BOUNDED: %[[X:.+]] = fuse.fusion loop ({{[^,]+}}, {{[^,]+}})
// BOUNDED: fuse.fusion loop (%[[X]], {{[^,]+}})
func.func @bounded_inputs(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>) -> tensor<8xf32> {
  %x = fuse.add %a, %b : tensor<8xf32>
  %y = fuse.add %x, %c : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// A reduction over a middle dimension (grouped-query attention's backward
// sums the heads that share a key) has no template. Over a few f32
// elements it is unrolled: slices of the operand added (or maxed) in
// index order, elementwise, one loop kernel with no reduction in it.
// CHECK-LABEL: func.func @middle_dimension
// CHECK-NOT: fuse.transpose
// CHECK: fuse.fusion loop
// CHECK-DAG: fuse.slice %{{.+}}, start = [0, 0, 1, 0, 0], limit = [2, 2, 2, 32, 16], stride = [1, 1, 1, 1, 1]
// CHECK-DAG: fuse.add
// CHECK-DAG: fuse.maximum
// CHECK-NOT: fuse.reduce
// CHECK: return
func.func @middle_dimension(%x: tensor<2x2x2x32x16xf32>) -> (tensor<2x2x32x16xf32>, tensor<2x2x1x32x16xf32>) {
  %s = fuse.reduce sum %x, dims = [2] : (tensor<2x2x2x32x16xf32>) -> tensor<2x2x32x16xf32>
  %m = fuse.reduce max %x, dims = [2] keepdim : (tensor<2x2x2x32x16xf32>) -> tensor<2x2x1x32x16xf32>
  return %s, %m : tensor<2x2x32x16xf32>, tensor<2x2x1x32x16xf32>
}

// -----

// Over more elements (or in a narrow type, whose reduction accumulates in
// f32) it becomes a row reduction of a transposed view, reshaped back
// under keepdim.
// CHECK-LABEL: func.func @middle_dimension_wide
// CHECK: fuse.transpose %{{.+}}, permutation = [0, 2, 3, 1]
// CHECK: fuse.fusion row_reduction
// CHECK: fuse.reduce sum %{{.+}}, dims = [3] : (tensor<2x8x4x16xf32>) -> tensor<2x8x4xf32>
// CHECK-NEXT: fuse.reshape %{{.+}} : (tensor<2x8x4xf32>) -> tensor<2x1x8x4xf32>
// CHECK-LABEL: func.func @middle_dimension_bf16
// CHECK: fuse.transpose
// CHECK: fuse.reduce sum %{{.+}}, dims = [4]
func.func @middle_dimension_wide(%x: tensor<2x16x8x4xf32>) -> tensor<2x1x8x4xf32> {
  %s = fuse.reduce sum %x, dims = [1] keepdim : (tensor<2x16x8x4xf32>) -> tensor<2x1x8x4xf32>
  return %s : tensor<2x1x8x4xf32>
}

func.func @middle_dimension_bf16(%x: tensor<2x2x3x32x16xbf16>) -> tensor<2x2x32x16xbf16> {
  %s = fuse.reduce sum %x, dims = [2] : (tensor<2x2x3x32x16xbf16>) -> tensor<2x2x32x16xbf16>
  return %s : tensor<2x2x32x16xbf16>
}
