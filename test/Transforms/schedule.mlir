// RUN: fuse-opt %s -split-input-file -fuse-schedule | FileCheck %s
// RUN: fuse-opt %s -split-input-file -fuse-schedule=report=true -o /dev/null | FileCheck %s --check-prefix=REPORT

// Every function computes the same before and after, on random inputs.
// RUN: fuse-run %s --entry two_chains --check-pipeline=fuse-schedule | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry weight_casts --check-pipeline=fuse-schedule | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry view_read_last --check-pipeline=fuse-schedule | FileCheck %s --check-prefix=SAME
// RUN: fuse-run %s --entry already_best --check-pipeline=fuse-schedule | FileCheck %s --check-prefix=SAME
// SAME: check-pipeline: PASS

// The tiny fixtures too, as given and after the pipeline (whose fusions and
// casts give the scheduler more to move).
// RUN: fuse-run %S/../graphs/gpt2-tiny-train.mlir --inputs %S/../graphs/gpt2-tiny-train.inputs.npz --check-pipeline=fuse-schedule | FileCheck %s --check-prefix=N29
// RUN: fuse-run %S/../graphs/gpt2-tiny-train-adamw.mlir --inputs %S/../graphs/gpt2-tiny-train-adamw.inputs.npz --check-pipeline=fuse-schedule | FileCheck %s --check-prefix=N86
// RUN: fuse-run %S/../graphs/bert-tiny-train.mlir --inputs %S/../graphs/bert-tiny-train.inputs.npz --check-pipeline=fuse-schedule | FileCheck %s --check-prefix=N42
// RUN: fuse-run %S/../graphs/llama-tiny-train.mlir --inputs %S/../graphs/llama-tiny-train.inputs.npz --check-pipeline=fuse-schedule | FileCheck %s --check-prefix=N22
// RUN: fuse-run %S/../graphs/gpt2-tiny-infer.mlir --inputs %S/../graphs/gpt2-tiny-infer.inputs.npz --check-pipeline='fuse-pipeline,fuse-schedule' | FileCheck %s --check-prefix=N1
// RUN: fuse-run %S/../graphs/gpt2-tiny-train.mlir --inputs %S/../graphs/gpt2-tiny-train.inputs.npz --check-pipeline='fuse-pipeline,fuse-schedule' | FileCheck %s --check-prefix=N29
// RUN: fuse-run %S/../graphs/bert-tiny-infer.mlir --inputs %S/../graphs/bert-tiny-infer.inputs.npz --check-pipeline='fuse-pipeline,fuse-schedule' | FileCheck %s --check-prefix=N1
// RUN: fuse-run %S/../graphs/bert-tiny-train.mlir --inputs %S/../graphs/bert-tiny-train.inputs.npz --check-pipeline='fuse-pipeline,fuse-schedule' | FileCheck %s --check-prefix=N42
// RUN: fuse-run %S/../graphs/llama-tiny-infer.mlir --inputs %S/../graphs/llama-tiny-infer.inputs.npz --check-pipeline='fuse-pipeline,fuse-schedule' | FileCheck %s --check-prefix=N1
// N1: check-pipeline: PASS (1 of 1 outputs match)
// N22: check-pipeline: PASS (22 of 22 outputs match)
// N29: check-pipeline: PASS (29 of 29 outputs match)
// N42: check-pipeline: PASS (42 of 42 outputs match)
// N86: check-pipeline: PASS (86 of 86 outputs match)

// On the GPT-2 inference fixture after fusion, the weights' bf16
// casts, all at the top, move down to their matmuls: the peak falls to
// less than half.
// RUN: fuse-opt %S/../graphs/gpt2-tiny-infer.mlir --fuse-auto-mixed-precision --fuse-decompose=keep=gelu --canonicalize --cse --fuse-form-fusions --fuse-schedule=report=true -o /dev/null | FileCheck %s --check-prefix=GPT2
// GPT2-LABEL: schedule of @gpt2_infer
// GPT2-NEXT: peak before: 311296 bytes at 11
// GPT2-NEXT: peak after: 98304 bytes at 13

// Sizes: tensor<256xf32> is 1 KiB (1024 bytes); a tensor<f32> is 4 bytes.

// Two chains, each a large value reduced to a scalar. As given, both large
// values are live at once (3 KiB at the first tanh); reducing the first
// chain before starting the second holds at most two (2 KiB). The sources
// (the exps of arguments) run right before their readers, and the constant
// goes to the top.
// CHECK-LABEL: func.func @two_chains
// CHECK-SAME: (%[[X:.+]]: tensor<256xf32>, %[[Y:.+]]: tensor<256xf32>)
// CHECK-NEXT: %[[ONE:.+]] = fuse.constant
// CHECK-NEXT: %[[A:.+]] = fuse.exp %[[X]]
// CHECK-NEXT: %[[C:.+]] = fuse.tanh %[[A]]
// CHECK-NEXT: %[[SA:.+]] = fuse.reduce sum %[[C]]
// CHECK-NEXT: %[[B:.+]] = fuse.exp %[[Y]]
// CHECK-NEXT: %[[D:.+]] = fuse.mul %[[B]], %[[ONE]]
// CHECK-NEXT: %[[SB:.+]] = fuse.reduce sum %[[D]]
// CHECK-NEXT: return %[[SA]], %[[SB]]
// REPORT-LABEL: schedule of @two_chains
// REPORT-NEXT: peak before: 3072 bytes at 2
// REPORT-NEXT: peak after: 2048 bytes at 2
// REPORT-NEXT: ops moved: 3 of 7
func.func @two_chains(%x: tensor<256xf32>, %y: tensor<256xf32>) -> (tensor<f32>, tensor<f32>) {
  %a = fuse.exp %x : tensor<256xf32>
  %b = fuse.exp %y : tensor<256xf32>
  %c = fuse.tanh %a : tensor<256xf32>
  %one = fuse.constant dense<1.0> : tensor<256xf32>
  %d = fuse.mul %b, %one : tensor<256xf32>
  %sa = fuse.reduce sum %c, dims = [0] : (tensor<256xf32>) -> tensor<f32>
  %sb = fuse.reduce sum %d, dims = [0] : (tensor<256xf32>) -> tensor<f32>
  return %sa, %sb : tensor<f32>, tensor<f32>
}

// -----

// An inference graph casts every weight at the top (as
// fuse-auto-mixed-precision does): each cast, which reads only an argument,
// moves down to its matmul, so one layer's weight is live at a time, not
// all of them.
// CHECK-LABEL: func.func @weight_casts
// CHECK-SAME: (%[[X:.+]]: tensor<16x16xf32>, %[[W1:.+]]: tensor<16x16xf32>, %[[W2:.+]]: tensor<16x16xf32>, %[[W3:.+]]: tensor<16x16xf32>)
// CHECK-NEXT: %[[C1:.+]] = fuse.cast %[[W1]]
// CHECK-NEXT: %[[XC:.+]] = fuse.cast %[[X]]
// CHECK-NEXT: %[[H1:.+]] = fuse.matmul %[[XC]], %[[C1]]
// CHECK-NEXT: %[[C2:.+]] = fuse.cast %[[W2]]
// CHECK-NEXT: %[[H2:.+]] = fuse.matmul %[[H1]], %[[C2]]
// CHECK-NEXT: %[[C3:.+]] = fuse.cast %[[W3]]
// CHECK-NEXT: %[[H3:.+]] = fuse.matmul %[[H2]], %[[C3]]
// CHECK-NEXT: %[[Y:.+]] = fuse.cast %[[H3]]
// CHECK-NEXT: return %[[Y]]
// REPORT-LABEL: schedule of @weight_casts
// REPORT-NEXT: peak before: 2560 bytes at 4
// REPORT-NEXT: peak after: 1536 bytes at 2
// REPORT-NEXT: ops moved: 2 of 8
func.func @weight_casts(%x: tensor<16x16xf32>, %w1: tensor<16x16xf32>, %w2: tensor<16x16xf32>, %w3: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %c1 = fuse.cast %w1 : tensor<16x16xf32> to tensor<16x16xbf16>
  %c2 = fuse.cast %w2 : tensor<16x16xf32> to tensor<16x16xbf16>
  %c3 = fuse.cast %w3 : tensor<16x16xf32> to tensor<16x16xbf16>
  %xc = fuse.cast %x : tensor<16x16xf32> to tensor<16x16xbf16>
  %h1 = fuse.matmul %xc, %c1 : (tensor<16x16xbf16>, tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %h2 = fuse.matmul %h1, %c2 : (tensor<16x16xbf16>, tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %h3 = fuse.matmul %h2, %c3 : (tensor<16x16xbf16>, tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %y = fuse.cast %h3 : tensor<16x16xbf16> to tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// A view shares its operand's buffer, which dies at the last read through
// either: %a is read by %r1 and, through the view %v, by %r3. Once %r1 has
// run, %r3 is the buffer's last reader and runs next, before the second
// chain (the backward's "consume the large activation early"): 2 KiB
// instead of 3.
// CHECK-LABEL: func.func @view_read_last
// CHECK-SAME: (%[[X:.+]]: tensor<256xf32>, %[[Y:.+]]: tensor<256xf32>)
// CHECK-NEXT: %[[A:.+]] = fuse.exp %[[X]]
// CHECK-NEXT: %[[V:.+]] = fuse.reshape %[[A]]
// CHECK-NEXT: %[[R1:.+]] = fuse.reduce sum %[[A]]
// CHECK-NEXT: %[[R3:.+]] = fuse.reduce max %[[V]]
// CHECK-NEXT: %[[B:.+]] = fuse.exp %[[Y]]
// CHECK-NEXT: %[[C:.+]] = fuse.tanh %[[B]]
// CHECK-NEXT: %[[R2:.+]] = fuse.reduce sum %[[C]]
// CHECK-NEXT: return %[[R1]], %[[R2]], %[[R3]]
// REPORT-LABEL: schedule of @view_read_last
// REPORT-NEXT: peak before: 3072 bytes at 4
// REPORT-NEXT: peak after: 2048 bytes at 5
// REPORT-NEXT: ops moved: 1 of 7
func.func @view_read_last(%x: tensor<256xf32>, %y: tensor<256xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %a = fuse.exp %x : tensor<256xf32>
  %v = fuse.reshape %a : (tensor<256xf32>) -> tensor<16x16xf32>
  %r1 = fuse.reduce sum %a, dims = [0] : (tensor<256xf32>) -> tensor<f32>
  %b = fuse.exp %y : tensor<256xf32>
  %c = fuse.tanh %b : tensor<256xf32>
  %r2 = fuse.reduce sum %c, dims = [0] : (tensor<256xf32>) -> tensor<f32>
  %r3 = fuse.reduce max %v, dims = [0, 1] : (tensor<16x16xf32>) -> tensor<f32>
  return %r1, %r2, %r3 : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// An order no schedule improves on stays as it is, constants included.
// CHECK-LABEL: func.func @already_best
// CHECK-SAME: (%[[X:.+]]: tensor<256xf32>, %[[Y:.+]]: tensor<256xf32>)
// CHECK-NEXT: %[[A:.+]] = fuse.exp %[[X]]
// CHECK-NEXT: %[[C:.+]] = fuse.tanh %[[A]]
// CHECK-NEXT: %[[SA:.+]] = fuse.reduce sum %[[C]]
// CHECK-NEXT: %[[ONE:.+]] = fuse.constant
// CHECK-NEXT: %[[B:.+]] = fuse.exp %[[Y]]
// CHECK-NEXT: %[[D:.+]] = fuse.mul %[[B]], %[[ONE]]
// CHECK-NEXT: %[[SB:.+]] = fuse.reduce sum %[[D]]
// CHECK-NEXT: return %[[SA]], %[[SB]]
// REPORT-LABEL: schedule of @already_best
// REPORT-NEXT: peak before: 2048 bytes at 1
// REPORT-NEXT: peak after: 2048 bytes at 1
// REPORT-NEXT: ops moved: 0 of 7
func.func @already_best(%x: tensor<256xf32>, %y: tensor<256xf32>) -> (tensor<f32>, tensor<f32>) {
  %a = fuse.exp %x : tensor<256xf32>
  %c = fuse.tanh %a : tensor<256xf32>
  %sa = fuse.reduce sum %c, dims = [0] : (tensor<256xf32>) -> tensor<f32>
  %one = fuse.constant dense<1.0> : tensor<256xf32>
  %b = fuse.exp %y : tensor<256xf32>
  %d = fuse.mul %b, %one : tensor<256xf32>
  %sb = fuse.reduce sum %d, dims = [0] : (tensor<256xf32>) -> tensor<f32>
  return %sa, %sb : tensor<f32>, tensor<f32>
}

// -----

// A declaration has no body to order: nothing is printed for it.
// REPORT-NOT: schedule of @declared
func.func private @declared(tensor<256xf32>) -> tensor<256xf32>
