// Bounds that leave no kernel possible are errors when the pass is set up,
// before it touches the graph.
// RUN: not fuse-opt %s -fuse-form-fusions=max-inputs=0 2>&1 | FileCheck %s --check-prefix=NO-INPUTS
// RUN: not fuse-opt %s -fuse-form-fusions=max-outputs=0 2>&1 | FileCheck %s --check-prefix=NO-OUTPUTS
// RUN: not fuse-run %s --check-pipeline='fuse-pipeline{max-outputs=0}' 2>&1 | FileCheck %s --check-prefix=PIPELINE
// NO-INPUTS: error: fuse-form-fusions: max-inputs and max-outputs must be at least 1 (a kernel reads and writes something), not 0 and 8
// NO-OUTPUTS: error: fuse-form-fusions: max-inputs and max-outputs must be at least 1 (a kernel reads and writes something), not 24 and 0
// PIPELINE: error: fuse-form-fusions: max-inputs and max-outputs must be at least 1
// PIPELINE-NEXT: fuse-run: error: the pipeline 'fuse-pipeline{max-outputs=0}' failed on the graph

// Fusions already formed are kernels the pass does not open again: a second
// run changes nothing.
// RUN: fuse-opt %s -fuse-form-fusions > %t.once.mlir
// RUN: fuse-opt %t.once.mlir -fuse-form-fusions > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
func.func @step(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %ids: tensor<4xi64>) -> (tensor<4x8xf32>, tensor<16x8xf32>) {
  %a = fuse.tanh %x : tensor<4x8xf32>
  %m = fuse.matmul %a, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %r = fuse.relu %m : tensor<4x8xf32>
  %zero = fuse.constant dense<0.0> : tensor<16x8xf32>
  %s = fuse.scatter_add %zero[%ids], %r, dim = 0 : (tensor<16x8xf32>, tensor<4xi64>, tensor<4x8xf32>) -> tensor<16x8xf32>
  %e = fuse.exp %s : tensor<16x8xf32>
  return %r, %e : tensor<4x8xf32>, tensor<16x8xf32>
}
