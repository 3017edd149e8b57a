// RUN: fuse-opt %s -split-input-file -verify-diagnostics --fuse-auto-mixed-precision=dtype=f16 -o /dev/null

// The options are checked when the pass is set up, before it touches the
// graph; the message names the valid values.
// RUN: not fuse-opt %s --fuse-auto-mixed-precision=dtype=f8 2>&1 | FileCheck %s --check-prefix=BAD-DTYPE
// RUN: not fuse-opt %s --fuse-auto-mixed-precision=dtype=fp16 2>&1 | FileCheck %s --check-prefix=BAD-DTYPE-FP16
// RUN: not fuse-opt %s --fuse-auto-mixed-precision='dtype=f16 growth-interval=0' 2>&1 | FileCheck %s --check-prefix=BAD-INTERVAL
// RUN: not fuse-run %s --entry attention_backward --check-pipeline='fuse-auto-mixed-precision{dtype=f8}' 2>&1 | FileCheck %s --check-prefix=CHECK-PIPELINE
// BAD-DTYPE: error: fuse-auto-mixed-precision: unknown dtype 'f8'; valid values: bf16, f16
// BAD-DTYPE-FP16: error: fuse-auto-mixed-precision: unknown dtype 'fp16'; valid values: bf16, f16
// BAD-INTERVAL: error: fuse-auto-mixed-precision: growth-interval must be at least 1, got 0
// CHECK-PIPELINE: error: fuse-auto-mixed-precision: unknown dtype 'f8'
// CHECK-PIPELINE-NEXT: fuse-run: error: the pipeline 'fuse-auto-mixed-precision{dtype=f8}' failed on the graph

// An f16 training step needs the loss gradient, where loss scaling starts:
// one with attention backward but no fuse.cross_entropy_backward (a loss
// the graph does not compute, say) cannot be scaled. bf16 needs no scaling.
// expected-error@below {{dtype=f16 training step without a loss gradient: dynamic loss scaling needs the loss gradient, fuse.cross_entropy_backward, but the function has none (it has fuse.scaled_dot_product_attention_backward); use dtype=bf16, which needs no loss scaling}}
func.func @attention_backward(%q: tensor<1x2x8x4xf32>, %do: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %o, %lse = fuse.scaled_dot_product_attention %q, %q, %q causal scale = 5.000000e-01 : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %q, %q, %o, %lse causal scale = 5.000000e-01 : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  return %dq : tensor<1x2x8x4xf32>
}

// -----

// Gradients returned by name make a training step too.
// expected-error@below {{but the function has none (it has a result named 'grad.w')}}
func.func @named_gradient(%x: tensor<4x8xf32>, %dy: tensor<4x16xf32>)
    -> (tensor<8x16xf32> {fuse.name = "grad.w"}) {
  %dw = fuse.matmul %x, %dy transpose_lhs : (tensor<4x8xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  return %dw : tensor<8x16xf32>
}

// -----

// The pass adds `loss_scale` once: a graph that has it already (the pass
// ran twice, say) is an error, not a second scaler.
// expected-error@below {{cannot add dynamic loss scaling: argument #2 is already named 'loss_scale' (was fuse-auto-mixed-precision run twice?)}}
func.func @scaled_twice(%logits: tensor<4x3xf32>, %labels: tensor<4xi64>, %scale: tensor<f32> {fuse.name = "loss_scale"})
    -> tensor<4x3xf32> {
  %dz = fuse.cross_entropy_backward %scale, %logits, %labels : (tensor<f32>, tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  return %dz : tensor<4x3xf32>
}

// -----

// A result named like an argument is that argument's update, which an
// overflowing step skips; it needs the argument's type.
// expected-error@below {{cannot skip the update of 'w' when a gradient overflows: result #0 has type 'tensor<3x4xf32>' but argument #0 of that name has type 'tensor<4x3xf32>'}}
func.func @update_of_another_type(%logits: tensor<4x3xf32> {fuse.name = "w"}, %labels: tensor<4xi64>)
    -> (tensor<3x4xf32> {fuse.name = "w"}) {
  %one = fuse.constant dense<1.0> : tensor<f32>
  %dz = fuse.cross_entropy_backward %one, %logits, %labels : (tensor<f32>, tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  %t = fuse.transpose %dz, permutation = [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>
  return %t : tensor<3x4xf32>
}
