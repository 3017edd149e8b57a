// RUN: fuse-opt %s -split-input-file -fuse-decompose | FileCheck %s
// RUN: fuse-opt %s -split-input-file -fuse-decompose -mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
// RUN: fuse-opt %s -split-input-file -fuse-decompose='keep=layer_norm,softmax' | FileCheck %s --check-prefix=KEEP

// Keeping every composite leaves the file exactly as it was: the pass
// neither folds, nor moves constants, nor touches other ops.
// RUN: fuse-opt %s -split-input-file > %t.before.mlir
// RUN: fuse-opt %s -split-input-file -fuse-decompose='keep=gelu,silu,softmax,log_softmax,layer_norm,rms_norm,cross_entropy,cross_entropy_backward,argmax' > %t.kept.mlir
// RUN: diff %t.before.mlir %t.kept.mlir

// The decomposed graphs compute what the composites do, op by op in f32,
// bf16 and f16 on random inputs (Inputs/decompose-ops.mlir has every op and
// variant) ...
// RUN: fuse-run %S/Inputs/decompose-ops.mlir --entry f32 --check-pipeline=fuse-decompose | FileCheck %s --check-prefix=OPS
// RUN: fuse-run %S/Inputs/decompose-ops.mlir --entry bf16 --check-pipeline=fuse-decompose | FileCheck %s --check-prefix=OPS
// RUN: fuse-run %S/Inputs/decompose-ops.mlir --entry f16 --check-pipeline=fuse-decompose | FileCheck %s --check-prefix=OPS
// OPS: check-pipeline: PASS (27 of 27 outputs match)

// ... and on whole models, with PyTorch's inputs (the tiny fixtures; f32).
// RUN: fuse-run %S/../graphs/gpt2-tiny-train.mlir --inputs %S/../graphs/gpt2-tiny-train.inputs.npz --check-pipeline=fuse-decompose | FileCheck %s --check-prefix=GPT2-TRAIN
// GPT2-TRAIN: check-pipeline: PASS (29 of 29 outputs match)
// RUN: fuse-run %S/../graphs/gpt2-tiny-infer.mlir --inputs %S/../graphs/gpt2-tiny-infer.inputs.npz --check-pipeline=fuse-decompose | FileCheck %s --check-prefix=INFER
// RUN: fuse-run %S/../graphs/bert-tiny-train.mlir --inputs %S/../graphs/bert-tiny-train.inputs.npz --check-pipeline=fuse-decompose | FileCheck %s --check-prefix=BERT-TRAIN
// BERT-TRAIN: check-pipeline: PASS (42 of 42 outputs match)
// RUN: fuse-run %S/../graphs/bert-tiny-infer.mlir --inputs %S/../graphs/bert-tiny-infer.inputs.npz --check-pipeline=fuse-decompose | FileCheck %s --check-prefix=INFER
// RUN: fuse-run %S/../graphs/llama-tiny-train.mlir --inputs %S/../graphs/llama-tiny-train.inputs.npz --check-pipeline=fuse-decompose | FileCheck %s --check-prefix=LLAMA-TRAIN
// LLAMA-TRAIN: check-pipeline: PASS (22 of 22 outputs match)
// RUN: fuse-run %S/../graphs/llama-tiny-infer.mlir --inputs %S/../graphs/llama-tiny-infer.inputs.npz --check-pipeline=fuse-decompose | FileCheck %s --check-prefix=INFER
// INFER: check-pipeline: PASS (1 of 1 outputs match)
// With some composites kept, too.
// RUN: fuse-run %S/../graphs/gpt2-tiny-train.mlir --inputs %S/../graphs/gpt2-tiny-train.inputs.npz --check-pipeline='fuse-decompose{keep=layer_norm,cross_entropy_backward}' | FileCheck %s --check-prefix=GPT2-TRAIN

// On GPT-2 124M's training step every composite but attention goes.
// RUN: fuse-opt %S/../graphs/gpt2-full-train.mlir -fuse-decompose | FileCheck %s --check-prefix=GPT2-FULL \
// RUN:   --implicit-check-not=fuse.gelu --implicit-check-not=fuse.layer_norm --implicit-check-not=fuse.cross_entropy
// GPT2-FULL-COUNT-12: fuse.scaled_dot_product_attention %
// GPT2-FULL-COUNT-12: fuse.scaled_dot_product_attention_backward %

// When no position is counted, mean cross entropy is 0/0 = NaN (as the op
// and PyTorch say), sum is 0 and the gradient is 0: decomposed as whole.
// RUN: fuse-run %S/Inputs/decompose-nothing-counted.mlir | FileCheck %s --check-prefix=NONE-COUNTED
// RUN: fuse-opt %S/Inputs/decompose-nothing-counted.mlir -fuse-decompose | fuse-run - | FileCheck %s --check-prefix=NONE-COUNTED
// NONE-COUNTED: output  mean {{.+}} NaN 1
// NONE-COUNTED-NEXT: output  sum {{.+}} min 0  max 0  mean 0{{$}}
// NONE-COUNTED-NEXT: output  grad {{.+}} min 0  max 0  mean 0{{$}}

// CHECK-LABEL: func.func @gelu_erf
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[C:.+]] = fuse.constant dense<0.707106769> : tensor<4x8xf32>
// CHECK-NEXT: %[[S:.+]] = fuse.mul %[[X]], %[[C]] : tensor<4x8xf32>
// CHECK-NEXT: %[[E:.+]] = fuse.erf %[[S]] : tensor<4x8xf32>
// CHECK-NEXT: %[[ONE:.+]] = fuse.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: %[[P:.+]] = fuse.add %[[E]], %[[ONE]] : tensor<4x8xf32>
// CHECK-NEXT: %[[HALF:.+]] = fuse.constant dense<5.000000e-01> : tensor<4x8xf32>
// CHECK-NEXT: %[[H:.+]] = fuse.mul %[[X]], %[[HALF]] : tensor<4x8xf32>
// CHECK-NEXT: %[[Y:.+]] = fuse.mul %[[H]], %[[P]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]] : tensor<4x8xf32>
// New ops take the composite's location.
// LOC-LABEL: func.func @gelu_erf
// LOC-NEXT: fuse.constant {{.+}} loc(#[[LOC:loc[0-9]*]])
// LOC-COUNT-7: {{^ +}}%{{.+}} = fuse.{{.+}} loc(#[[LOC]])
// LOC-NEXT: return
// LOC: #[[LOC]] = loc("gelu")
// KEEP-LABEL: func.func @gelu_erf
// KEEP-NOT: fuse.gelu
// KEEP: fuse.erf
func.func @gelu_erf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = fuse.gelu %x, approximate = erf : tensor<4x8xf32> loc("gelu")
  return %y : tensor<4x8xf32>
}

// -----

// (0.044715·x)·x·x in the interpreter's order, so the two round alike.
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[K:.+]] = fuse.constant dense<4.471500e-02> : tensor<4x8xf32>
// CHECK-NEXT: %[[A:.+]] = fuse.mul %[[K]], %[[X]]
// CHECK-NEXT: %[[B:.+]] = fuse.mul %[[A]], %[[X]]
// CHECK-NEXT: %[[CUBIC:.+]] = fuse.mul %[[B]], %[[X]]
// CHECK-NEXT: %[[SUM:.+]] = fuse.add %[[X]], %[[CUBIC]]
// CHECK-NEXT: %[[ALPHA:.+]] = fuse.constant dense<0.797884583> : tensor<4x8xf32>
// CHECK-NEXT: %[[ARG:.+]] = fuse.mul %[[SUM]], %[[ALPHA]]
// CHECK-NEXT: %[[T:.+]] = fuse.tanh %[[ARG]]
// CHECK-NEXT: %[[ONE:.+]] = fuse.constant dense<1.000000e+00>
// CHECK-NEXT: %[[P:.+]] = fuse.add %[[T]], %[[ONE]]
// CHECK-NEXT: %[[HALF:.+]] = fuse.constant dense<5.000000e-01>
// CHECK-NEXT: %[[H:.+]] = fuse.mul %[[X]], %[[HALF]]
// CHECK-NEXT: %[[Y:.+]] = fuse.mul %[[H]], %[[P]]
// CHECK-NEXT: return %[[Y]]
func.func @gelu_tanh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = fuse.gelu %x, approximate = tanh : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// bf16 (and f16) data is cast to f32 once, computed on, and cast back once.
// CHECK-LABEL: func.func @gelu_bf16
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xbf16>)
// CHECK-NEXT: %[[XF:.+]] = fuse.cast %[[X]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-NEXT: fuse.constant dense<0.707106769> : tensor<4x8xf32>
// CHECK-NEXT: fuse.mul %[[XF]], {{.+}} : tensor<4x8xf32>
// CHECK-NEXT: fuse.erf {{.+}} : tensor<4x8xf32>
// CHECK-NEXT: fuse.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: fuse.add {{.+}} : tensor<4x8xf32>
// CHECK-NEXT: fuse.constant dense<5.000000e-01> : tensor<4x8xf32>
// CHECK-NEXT: fuse.mul %[[XF]], {{.+}} : tensor<4x8xf32>
// CHECK-NEXT: %[[YF:.+]] = fuse.mul {{.+}} : tensor<4x8xf32>
// CHECK-NEXT: %[[Y:.+]] = fuse.cast %[[YF]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: return %[[Y]] : tensor<4x8xbf16>
func.func @gelu_bf16(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %y = fuse.gelu %x, approximate = erf : tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// CHECK-LABEL: func.func @silu
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[H:.+]]: tensor<4x8xbf16>)
// CHECK-NEXT: %[[S:.+]] = fuse.sigmoid %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: %[[Y:.+]] = fuse.mul %[[X]], %[[S]] : tensor<4x8xf32>
// CHECK-NEXT: %[[HF:.+]] = fuse.cast %[[H]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-NEXT: %[[SH:.+]] = fuse.sigmoid %[[HF]] : tensor<4x8xf32>
// CHECK-NEXT: %[[ZF:.+]] = fuse.mul %[[HF]], %[[SH]] : tensor<4x8xf32>
// CHECK-NEXT: %[[Z:.+]] = fuse.cast %[[ZF]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: return %[[Y]], %[[Z]]
// KEEP-LABEL: func.func @silu
// KEEP-NOT: fuse.silu
func.func @silu(%x: tensor<4x8xf32>, %h: tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<4x8xbf16>) {
  %y = fuse.silu %x : tensor<4x8xf32>
  %z = fuse.silu %h : tensor<4x8xbf16>
  return %y, %z : tensor<4x8xf32>, tensor<4x8xbf16>
}

// -----

// The row maximum is subtracted before exp; reductions keep the reduced
// dimension and broadcast back.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[MAX:.+]] = fuse.reduce max %[[X]], dims = [1] keepdim : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[BMAX:.+]] = fuse.broadcast_in_dim %[[MAX]], dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[SHIFTED:.+]] = fuse.sub %[[X]], %[[BMAX]] : tensor<4x8xf32>
// CHECK-NEXT: %[[EXP:.+]] = fuse.exp %[[SHIFTED]] : tensor<4x8xf32>
// CHECK-NEXT: %[[SUM:.+]] = fuse.reduce sum %[[EXP]], dims = [1] keepdim : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[BSUM:.+]] = fuse.broadcast_in_dim %[[SUM]], dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[Y:.+]] = fuse.div %[[EXP]], %[[BSUM]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
// KEEP-LABEL: func.func @softmax
// KEEP-NEXT: fuse.softmax
// KEEP-NEXT: return
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = fuse.softmax %x, dim = 1 : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Along a middle dimension, in bf16.
// CHECK-LABEL: func.func @softmax_bf16
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xbf16>)
// CHECK-NEXT: %[[XF:.+]] = fuse.cast %[[X]] : tensor<2x4x8xbf16> to tensor<2x4x8xf32>
// CHECK-NEXT: %[[MAX:.+]] = fuse.reduce max %[[XF]], dims = [1] keepdim : (tensor<2x4x8xf32>) -> tensor<2x1x8xf32>
// CHECK-NEXT: fuse.broadcast_in_dim %[[MAX]], dims = [0, 1, 2] : (tensor<2x1x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: fuse.sub %[[XF]], {{.+}} : tensor<2x4x8xf32>
// CHECK-NEXT: %[[EXP:.+]] = fuse.exp {{.+}} : tensor<2x4x8xf32>
// CHECK-NEXT: fuse.reduce sum %[[EXP]], dims = [1] keepdim : (tensor<2x4x8xf32>) -> tensor<2x1x8xf32>
// CHECK-NEXT: fuse.broadcast_in_dim
// CHECK-NEXT: %[[YF:.+]] = fuse.div %[[EXP]], {{.+}} : tensor<2x4x8xf32>
// CHECK-NEXT: %[[Y:.+]] = fuse.cast %[[YF]] : tensor<2x4x8xf32> to tensor<2x4x8xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @softmax_bf16(%x: tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16> {
  %y = fuse.softmax %x, dim = 1 : tensor<2x4x8xbf16>
  return %y : tensor<2x4x8xbf16>
}

// -----

// (x - max) - log(sum(exp(x - max))).
// CHECK-LABEL: func.func @log_softmax
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[MAX:.+]] = fuse.reduce max %[[X]], dims = [1] keepdim
// CHECK-NEXT: %[[BMAX:.+]] = fuse.broadcast_in_dim %[[MAX]], dims = [0, 1]
// CHECK-NEXT: %[[SHIFTED:.+]] = fuse.sub %[[X]], %[[BMAX]]
// CHECK-NEXT: %[[EXP:.+]] = fuse.exp %[[SHIFTED]]
// CHECK-NEXT: %[[SUM:.+]] = fuse.reduce sum %[[EXP]], dims = [1] keepdim
// CHECK-NEXT: %[[LOG:.+]] = fuse.log %[[SUM]] : tensor<4x1xf32>
// CHECK-NEXT: %[[BLOG:.+]] = fuse.broadcast_in_dim %[[LOG]], dims = [0, 1]
// CHECK-NEXT: %[[Y:.+]] = fuse.sub %[[SHIFTED]], %[[BLOG]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
// KEEP-LABEL: func.func @log_softmax
// KEEP-NOT: fuse.log_softmax
func.func @log_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = fuse.log_softmax %x, dim = 1 : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Two-pass statistics; mean and rstd are the op's f32 results.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x8xf32>, %[[W:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[MEAN:.+]] = fuse.reduce mean %[[X]], dims = [2] keepdim : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: %[[BMEAN:.+]] = fuse.broadcast_in_dim %[[MEAN]], dims = [0, 1, 2] : (tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: %[[CENTRED:.+]] = fuse.sub %[[X]], %[[BMEAN]]
// CHECK-NEXT: %[[SQUARES:.+]] = fuse.mul %[[CENTRED]], %[[CENTRED]]
// CHECK-NEXT: %[[VAR:.+]] = fuse.reduce mean %[[SQUARES]], dims = [2] keepdim : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: %[[EPS:.+]] = fuse.constant dense<9.99999974E-6> : tensor<2x3x1xf32>
// CHECK-NEXT: %[[VAREPS:.+]] = fuse.add %[[VAR]], %[[EPS]]
// CHECK-NEXT: %[[RSTD:.+]] = fuse.rsqrt %[[VAREPS]] : tensor<2x3x1xf32>
// CHECK-NEXT: %[[BRSTD:.+]] = fuse.broadcast_in_dim %[[RSTD]], dims = [0, 1, 2]
// CHECK-NEXT: %[[NORM:.+]] = fuse.mul %[[CENTRED]], %[[BRSTD]]
// CHECK-NEXT: %[[BW:.+]] = fuse.broadcast_in_dim %[[W]], dims = [2] : (tensor<8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: %[[SCALED:.+]] = fuse.mul %[[NORM]], %[[BW]]
// CHECK-NEXT: %[[BB:.+]] = fuse.broadcast_in_dim %[[B]], dims = [2] : (tensor<8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: %[[Y:.+]] = fuse.add %[[SCALED]], %[[BB]]
// CHECK-NEXT: return %[[Y]], %[[MEAN]], %[[RSTD]]
// KEEP-LABEL: func.func @layer_norm
// KEEP-NEXT: fuse.layer_norm
// KEEP-NEXT: return
func.func @layer_norm(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>) {
  %y, %mean, %rstd = fuse.layer_norm %x weight(%w) bias(%b) axis = 2 epsilon = 1.0e-05 : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
  return %y, %mean, %rstd : tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>
}

// -----

// bf16 input, statistics in f32 over two dimensions, no weight or bias.
// CHECK-LABEL: func.func @layer_norm_bf16
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x8xbf16>)
// CHECK-NEXT: %[[XF:.+]] = fuse.cast %[[X]] : tensor<2x3x8xbf16> to tensor<2x3x8xf32>
// CHECK-NEXT: %[[MEAN:.+]] = fuse.reduce mean %[[XF]], dims = [1, 2] keepdim : (tensor<2x3x8xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT: fuse.broadcast_in_dim %[[MEAN]], dims = [0, 1, 2] : (tensor<2x1x1xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: %[[CENTRED:.+]] = fuse.sub %[[XF]], {{.+}} : tensor<2x3x8xf32>
// CHECK-NEXT: fuse.mul %[[CENTRED]], %[[CENTRED]] : tensor<2x3x8xf32>
// CHECK-NEXT: fuse.reduce mean {{.+}}, dims = [1, 2] keepdim : (tensor<2x3x8xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT: fuse.constant dense<9.99999974E-6> : tensor<2x1x1xf32>
// CHECK-NEXT: fuse.add
// CHECK-NEXT: %[[RSTD:.+]] = fuse.rsqrt {{.+}} : tensor<2x1x1xf32>
// CHECK-NEXT: fuse.broadcast_in_dim %[[RSTD]]
// CHECK-NEXT: %[[YF:.+]] = fuse.mul %[[CENTRED]], {{.+}} : tensor<2x3x8xf32>
// CHECK-NEXT: %[[Y:.+]] = fuse.cast %[[YF]] : tensor<2x3x8xf32> to tensor<2x3x8xbf16>
// CHECK-NEXT: return %[[Y]], %[[MEAN]], %[[RSTD]] : tensor<2x3x8xbf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>
func.func @layer_norm_bf16(%x: tensor<2x3x8xbf16>) -> (tensor<2x3x8xbf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) {
  %y, %mean, %rstd = fuse.layer_norm %x axis = 1 epsilon = 1.0e-05 : (tensor<2x3x8xbf16>) -> (tensor<2x3x8xbf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  return %y, %mean, %rstd : tensor<2x3x8xbf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x8xf32>, %[[W:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[SQUARES:.+]] = fuse.mul %[[X]], %[[X]]
// CHECK-NEXT: %[[MS:.+]] = fuse.reduce mean %[[SQUARES]], dims = [2] keepdim : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: %[[EPS:.+]] = fuse.constant dense<9.99999997E-7> : tensor<2x3x1xf32>
// CHECK-NEXT: %[[MSEPS:.+]] = fuse.add %[[MS]], %[[EPS]]
// CHECK-NEXT: %[[RSTD:.+]] = fuse.rsqrt %[[MSEPS]]
// CHECK-NEXT: %[[BRSTD:.+]] = fuse.broadcast_in_dim %[[RSTD]], dims = [0, 1, 2]
// CHECK-NEXT: %[[NORM:.+]] = fuse.mul %[[X]], %[[BRSTD]]
// CHECK-NEXT: %[[BW:.+]] = fuse.broadcast_in_dim %[[W]], dims = [2] : (tensor<8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: %[[Y:.+]] = fuse.mul %[[NORM]], %[[BW]]
// CHECK-NEXT: return %[[Y]]
// KEEP-LABEL: func.func @rms_norm
// KEEP-NOT: fuse.rms_norm
func.func @rms_norm(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %y = fuse.rms_norm %x weight(%w) axis = 2 epsilon = 1.0e-06 : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// A bf16 weight is cast to f32 with the input.
// CHECK-LABEL: func.func @rms_norm_bf16
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xbf16>, %[[W:.+]]: tensor<8xbf16>)
// CHECK-NEXT: %[[XF:.+]] = fuse.cast %[[X]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-NEXT: fuse.mul %[[XF]], %[[XF]] : tensor<4x8xf32>
// CHECK-NEXT: fuse.reduce mean {{.+}}, dims = [1] keepdim : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: fuse.constant dense<9.99999997E-7> : tensor<4x1xf32>
// CHECK-NEXT: fuse.add
// CHECK-NEXT: fuse.rsqrt
// CHECK-NEXT: fuse.broadcast_in_dim
// CHECK-NEXT: %[[NORM:.+]] = fuse.mul %[[XF]], {{.+}} : tensor<4x8xf32>
// CHECK-NEXT: %[[WF:.+]] = fuse.cast %[[W]] : tensor<8xbf16> to tensor<8xf32>
// CHECK-NEXT: %[[BW:.+]] = fuse.broadcast_in_dim %[[WF]], dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[YF:.+]] = fuse.mul %[[NORM]], %[[BW]] : tensor<4x8xf32>
// CHECK-NEXT: %[[Y:.+]] = fuse.cast %[[YF]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm_bf16(%x: tensor<4x8xbf16>, %w: tensor<8xbf16>) -> tensor<4x8xbf16> {
  %y = fuse.rms_norm %x weight(%w) axis = 1 epsilon = 1.0e-06 : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// Per position: lse = max + log(sum(exp(x - max))), minus the label's logit
// (picked through a one-hot mask), 0 where the label is ignore_index;
// mean divides the sum by the number of counted positions.
// CHECK-LABEL: func.func @cross_entropy
// CHECK-SAME: (%[[LOGITS:.+]]: tensor<4x10xf32>, %[[LABELS:.+]]: tensor<4xi64>)
// CHECK-NEXT: %[[MAX:.+]] = fuse.reduce max %[[LOGITS]], dims = [1] : (tensor<4x10xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[BMAX:.+]] = fuse.broadcast_in_dim %[[MAX]], dims = [0] : (tensor<4xf32>) -> tensor<4x10xf32>
// CHECK-NEXT: %[[SHIFTED:.+]] = fuse.sub %[[LOGITS]], %[[BMAX]]
// CHECK-NEXT: %[[EXP:.+]] = fuse.exp %[[SHIFTED]]
// CHECK-NEXT: %[[SUM:.+]] = fuse.reduce sum %[[EXP]], dims = [1] : (tensor<4x10xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[LOG:.+]] = fuse.log %[[SUM]]
// CHECK-NEXT: %[[LSE:.+]] = fuse.add %[[MAX]], %[[LOG]] : tensor<4xf32>
// CHECK-NEXT: %[[CLASSES:.+]] = fuse.iota dim = 1 : tensor<4x10xi64>
// CHECK-NEXT: %[[BLABELS:.+]] = fuse.broadcast_in_dim %[[LABELS]], dims = [0] : (tensor<4xi64>) -> tensor<4x10xi64>
// CHECK-NEXT: %[[ONEHOT:.+]] = fuse.compare eq, %[[CLASSES]], %[[BLABELS]] : tensor<4x10xi64>
// CHECK-NEXT: %[[IGNORE:.+]] = fuse.constant dense<-100> : tensor<4xi64>
// CHECK-NEXT: %[[COUNTED:.+]] = fuse.compare ne, %[[LABELS]], %[[IGNORE]] : tensor<4xi64>
// CHECK-NEXT: %[[ZEROS:.+]] = fuse.constant dense<0.000000e+00> : tensor<4x10xf32>
// CHECK-NEXT: %[[SELECTED:.+]] = fuse.select %[[ONEHOT]], %[[LOGITS]], %[[ZEROS]] : tensor<4x10xi1>, tensor<4x10xf32>
// CHECK-NEXT: %[[PICKED:.+]] = fuse.reduce sum %[[SELECTED]], dims = [1] : (tensor<4x10xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[EACH:.+]] = fuse.sub %[[LSE]], %[[PICKED]] : tensor<4xf32>
// CHECK-NEXT: %[[ZERO:.+]] = fuse.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[LOSSES:.+]] = fuse.select %[[COUNTED]], %[[EACH]], %[[ZERO]] : tensor<4xi1>, tensor<4xf32>
// CHECK-NEXT: %[[ONES:.+]] = fuse.cast %[[COUNTED]] : tensor<4xi1> to tensor<4xf32>
// CHECK-NEXT: %[[COUNT:.+]] = fuse.reduce sum %[[ONES]], dims = [0] : (tensor<4xf32>) -> tensor<f32>
// CHECK-NEXT: %[[TOTAL:.+]] = fuse.reduce sum %[[LOSSES]], dims = [0] : (tensor<4xf32>) -> tensor<f32>
// CHECK-NEXT: %[[LOSS:.+]] = fuse.div %[[TOTAL]], %[[COUNT]] : tensor<f32>
// CHECK-NEXT: return %[[LOSS]] : tensor<f32>
// KEEP-LABEL: func.func @cross_entropy
// KEEP-NOT: fuse.cross_entropy
func.func @cross_entropy(%logits: tensor<4x10xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
  %loss = fuse.cross_entropy %logits, %labels : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// reduction = none returns the per-position losses; i32 labels compare
// with an i32 iota and an i32 ignore_index.
// CHECK-LABEL: func.func @cross_entropy_none
// CHECK-SAME: (%[[LOGITS:.+]]: tensor<2x3x10xf32>, %[[LABELS:.+]]: tensor<2x3xi32>)
// CHECK: fuse.reduce max %[[LOGITS]], dims = [2] : (tensor<2x3x10xf32>) -> tensor<2x3xf32>
// CHECK: %[[CLASSES:.+]] = fuse.iota dim = 2 : tensor<2x3x10xi32>
// CHECK-NEXT: %[[BLABELS:.+]] = fuse.broadcast_in_dim %[[LABELS]], dims = [0, 1] : (tensor<2x3xi32>) -> tensor<2x3x10xi32>
// CHECK-NEXT: fuse.compare eq, %[[CLASSES]], %[[BLABELS]] : tensor<2x3x10xi32>
// CHECK-NEXT: %[[IGNORE:.+]] = fuse.constant dense<0> : tensor<2x3xi32>
// CHECK-NEXT: %[[COUNTED:.+]] = fuse.compare ne, %[[LABELS]], %[[IGNORE]] : tensor<2x3xi32>
// CHECK: %[[LOSSES:.+]] = fuse.select %[[COUNTED]], {{.+}} : tensor<2x3xi1>, tensor<2x3xf32>
// CHECK-NEXT: return %[[LOSSES]] : tensor<2x3xf32>
func.func @cross_entropy_none(%logits: tensor<2x3x10xf32>, %labels: tensor<2x3xi32>) -> tensor<2x3xf32> {
  %loss = fuse.cross_entropy %logits, %labels ignore_index = 0 reduction = none : (tensor<2x3x10xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
  return %loss : tensor<2x3xf32>
}

// -----

// sum adds the positions, in f32 for bf16 logits; the total is cast once.
// CHECK-LABEL: func.func @cross_entropy_sum_bf16
// CHECK-SAME: (%[[LOGITS:.+]]: tensor<4x10xbf16>, %[[LABELS:.+]]: tensor<4xi64>)
// CHECK-NEXT: %[[LF:.+]] = fuse.cast %[[LOGITS]] : tensor<4x10xbf16> to tensor<4x10xf32>
// CHECK-NEXT: fuse.reduce max %[[LF]], dims = [1] : (tensor<4x10xf32>) -> tensor<4xf32>
// CHECK: fuse.select {{.+}}, %[[LF]], {{.+}} : tensor<4x10xi1>, tensor<4x10xf32>
// CHECK: %[[LOSSES:.+]] = fuse.select {{.+}} : tensor<4xi1>, tensor<4xf32>
// CHECK-NEXT: %[[TOTAL:.+]] = fuse.reduce sum %[[LOSSES]], dims = [0] : (tensor<4xf32>) -> tensor<f32>
// CHECK-NEXT: %[[LOSS:.+]] = fuse.cast %[[TOTAL]] : tensor<f32> to tensor<bf16>
// CHECK-NEXT: return %[[LOSS]] : tensor<bf16>
func.func @cross_entropy_sum_bf16(%logits: tensor<4x10xbf16>, %labels: tensor<4xi64>) -> tensor<bf16> {
  %loss = fuse.cross_entropy %logits, %labels reduction = sum : (tensor<4x10xbf16>, tensor<4xi64>) -> tensor<bf16>
  return %loss : tensor<bf16>
}

// -----

// Logits without positions: one row, a 0-d label, nothing left to sum.
// CHECK-LABEL: func.func @cross_entropy_one_row
// CHECK-SAME: (%[[LOGITS:.+]]: tensor<10xf32>, %[[LABEL:.+]]: tensor<i64>)
// CHECK-NEXT: %[[MAX:.+]] = fuse.reduce max %[[LOGITS]], dims = [0] : (tensor<10xf32>) -> tensor<f32>
// CHECK-NEXT: fuse.broadcast_in_dim %[[MAX]], dims = [] : (tensor<f32>) -> tensor<10xf32>
// CHECK: fuse.broadcast_in_dim %[[LABEL]], dims = [] : (tensor<i64>) -> tensor<10xi64>
// CHECK: %[[COUNTED:.+]] = fuse.compare ne, %[[LABEL]], {{.+}} : tensor<i64>
// CHECK: %[[LOSS:.+]] = fuse.select %[[COUNTED]], {{.+}} : tensor<i1>, tensor<f32>
// CHECK-NEXT: %[[COUNT:.+]] = fuse.cast %[[COUNTED]] : tensor<i1> to tensor<f32>
// CHECK-NEXT: %[[MEAN:.+]] = fuse.div %[[LOSS]], %[[COUNT]] : tensor<f32>
// CHECK-NEXT: return %[[MEAN]]
func.func @cross_entropy_one_row(%logits: tensor<10xf32>, %label: tensor<i64>) -> tensor<f32> {
  %loss = fuse.cross_entropy %logits, %label : (tensor<10xf32>, tensor<i64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// An ignore_index that i32 labels cannot hold: every position counts.
// CHECK-LABEL: func.func @cross_entropy_ignore_index_out_of_range
// CHECK-NOT: fuse.compare ne
// CHECK: %[[ALL:.+]] = fuse.constant dense<true> : tensor<4xi1>
// CHECK-NOT: fuse.compare ne
// CHECK: fuse.select %[[ALL]], {{.+}} : tensor<4xi1>, tensor<4xf32>
func.func @cross_entropy_ignore_index_out_of_range(%logits: tensor<4x10xf32>, %labels: tensor<4xi32>) -> tensor<f32> {
  %loss = fuse.cross_entropy %logits, %labels ignore_index = 4294967296 reduction = sum : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// (exp(x - lse) - onehot)·g with g = grad_loss / count under mean, then 0
// at ignored positions.
// CHECK-LABEL: func.func @cross_entropy_backward
// CHECK-SAME: (%[[DLOSS:.+]]: tensor<f32>, %[[LOGITS:.+]]: tensor<4x10xf32>, %[[LABELS:.+]]: tensor<4xi64>)
// CHECK-NEXT: %[[MAX:.+]] = fuse.reduce max %[[LOGITS]], dims = [1]
// CHECK-NEXT: fuse.broadcast_in_dim %[[MAX]]
// CHECK-NEXT: fuse.sub %[[LOGITS]]
// CHECK-NEXT: fuse.exp
// CHECK-NEXT: fuse.reduce sum
// CHECK-NEXT: fuse.log
// CHECK-NEXT: %[[LSE:.+]] = fuse.add %[[MAX]], {{.+}} : tensor<4xf32>
// CHECK-NEXT: fuse.iota dim = 1 : tensor<4x10xi64>
// CHECK-NEXT: fuse.broadcast_in_dim %[[LABELS]]
// CHECK-NEXT: %[[ONEHOT:.+]] = fuse.compare eq
// CHECK-NEXT: %[[IGNORE:.+]] = fuse.constant dense<-100> : tensor<4xi64>
// CHECK-NEXT: %[[COUNTED:.+]] = fuse.compare ne, %[[LABELS]], %[[IGNORE]]
// CHECK-NEXT: %[[BLSE:.+]] = fuse.broadcast_in_dim %[[LSE]], dims = [0] : (tensor<4xf32>) -> tensor<4x10xf32>
// CHECK-NEXT: %[[LOGP:.+]] = fuse.sub %[[LOGITS]], %[[BLSE]]
// CHECK-NEXT: %[[P:.+]] = fuse.exp %[[LOGP]]
// CHECK-NEXT: %[[TARGET:.+]] = fuse.cast %[[ONEHOT]] : tensor<4x10xi1> to tensor<4x10xf32>
// CHECK-NEXT: %[[DIFF:.+]] = fuse.sub %[[P]], %[[TARGET]]
// CHECK-NEXT: %[[ONES:.+]] = fuse.cast %[[COUNTED]] : tensor<4xi1> to tensor<4xf32>
// CHECK-NEXT: %[[COUNT:.+]] = fuse.reduce sum %[[ONES]], dims = [0] : (tensor<4xf32>) -> tensor<f32>
// CHECK-NEXT: %[[G:.+]] = fuse.div %[[DLOSS]], %[[COUNT]] : tensor<f32>
// CHECK-NEXT: %[[BG:.+]] = fuse.broadcast_in_dim %[[G]], dims = [] : (tensor<f32>) -> tensor<4x10xf32>
// CHECK-NEXT: %[[GRAD:.+]] = fuse.mul %[[DIFF]], %[[BG]]
// CHECK-NEXT: %[[BCOUNTED:.+]] = fuse.broadcast_in_dim %[[COUNTED]], dims = [0] : (tensor<4xi1>) -> tensor<4x10xi1>
// CHECK-NEXT: %[[ZEROS:.+]] = fuse.constant dense<0.000000e+00> : tensor<4x10xf32>
// CHECK-NEXT: %[[RESULT:.+]] = fuse.select %[[BCOUNTED]], %[[GRAD]], %[[ZEROS]]
// CHECK-NEXT: return %[[RESULT]] : tensor<4x10xf32>
// KEEP-LABEL: func.func @cross_entropy_backward
// KEEP-NOT: fuse.cross_entropy_backward
func.func @cross_entropy_backward(%dloss: tensor<f32>, %logits: tensor<4x10xf32>, %labels: tensor<4xi64>) -> tensor<4x10xf32> {
  %d = fuse.cross_entropy_backward %dloss, %logits, %labels : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>) -> tensor<4x10xf32>
  return %d : tensor<4x10xf32>
}

// -----

// Under none each position has its own incoming gradient; bf16 in and out.
// CHECK-LABEL: func.func @cross_entropy_backward_none_bf16
// CHECK-SAME: (%[[DLOSS:.+]]: tensor<4xbf16>, %[[LOGITS:.+]]: tensor<4x10xbf16>, %[[LABELS:.+]]: tensor<4xi64>)
// CHECK-NEXT: fuse.cast %[[LOGITS]] : tensor<4x10xbf16> to tensor<4x10xf32>
// CHECK: %[[TARGET:.+]] = fuse.cast {{.+}} : tensor<4x10xi1> to tensor<4x10xf32>
// CHECK-NEXT: %[[DIFF:.+]] = fuse.sub {{.+}}, %[[TARGET]] : tensor<4x10xf32>
// CHECK-NEXT: %[[G:.+]] = fuse.cast %[[DLOSS]] : tensor<4xbf16> to tensor<4xf32>
// CHECK-NEXT: %[[BG:.+]] = fuse.broadcast_in_dim %[[G]], dims = [0] : (tensor<4xf32>) -> tensor<4x10xf32>
// CHECK-NEXT: fuse.mul %[[DIFF]], %[[BG]] : tensor<4x10xf32>
// CHECK: %[[RESULT:.+]] = fuse.select {{.+}} : tensor<4x10xi1>, tensor<4x10xf32>
// CHECK-NEXT: %[[CAST:.+]] = fuse.cast %[[RESULT]] : tensor<4x10xf32> to tensor<4x10xbf16>
// CHECK-NEXT: return %[[CAST]] : tensor<4x10xbf16>
func.func @cross_entropy_backward_none_bf16(%dloss: tensor<4xbf16>, %logits: tensor<4x10xbf16>, %labels: tensor<4xi64>) -> tensor<4x10xbf16> {
  %d = fuse.cross_entropy_backward %dloss, %logits, %labels reduction = none : (tensor<4xbf16>, tensor<4x10xbf16>, tensor<4xi64>) -> tensor<4x10xbf16>
  return %d : tensor<4x10xbf16>
}

// -----

// Attention and its backward stay whole, always; the softmax beside them
// does not.
// CHECK-LABEL: func.func @attention
// CHECK: fuse.scaled_dot_product_attention %{{.+}} causal scale
// CHECK: fuse.scaled_dot_product_attention_backward %{{.+}} causal scale
// CHECK-NOT: fuse.softmax
// CHECK: fuse.reduce max
// KEEP-LABEL: func.func @attention
// KEEP: fuse.scaled_dot_product_attention
// KEEP: fuse.scaled_dot_product_attention_backward
// KEEP: fuse.softmax
func.func @attention(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %do: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.35 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %k, %v, %o, %lse causal scale = 0.35 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  %p = fuse.softmax %q, dim = 3 : tensor<1x2x4x8xf32>
  return %o, %dq, %dk, %dv, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
}

// -----

// Inside a fusion the primitives stay in the body, constants included.
// CHECK-LABEL: func.func @in_fusion
// CHECK: fuse.fusion loop
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[S:.+]] = fuse.sigmoid %[[A]]
// CHECK-NEXT: %[[Y:.+]] = fuse.mul %[[A]], %[[S]]
// CHECK-NEXT: fuse.yield %[[Y]]
func.func @in_fusion(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = fuse.fusion loop (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %s = fuse.silu %a : tensor<4x8xf32>
    fuse.yield %s : tensor<4x8xf32>
  }
  return %y : tensor<4x8xf32>
}

// -----

// Other ops are left as they are: no folding (the identity reshape stays),
// no constant moved or merged.
// CHECK-LABEL: func.func @untouched
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[R:.+]] = fuse.reshape %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[C:.+]] = fuse.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: %[[M:.+]] = fuse.mul %[[R]], %[[C]]
// CHECK-NEXT: %[[S:.+]] = fuse.sigmoid %[[M]]
// CHECK-NEXT: %[[Y:.+]] = fuse.mul %[[M]], %[[S]]
// CHECK-NEXT: %[[C2:.+]] = fuse.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: %[[Z:.+]] = fuse.add %[[Y]], %[[C2]]
// CHECK-NEXT: return %[[Z]]
func.func @untouched(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = fuse.reshape %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = fuse.constant dense<2.0> : tensor<4x8xf32>
  %m = fuse.mul %r, %c : tensor<4x8xf32>
  %y = fuse.silu %m : tensor<4x8xf32>
  %c2 = fuse.constant dense<2.0> : tensor<4x8xf32>
  %z = fuse.add %y, %c2 : tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}
