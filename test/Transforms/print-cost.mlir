// RUN: fuse-opt %s -split-input-file -fuse-print-cost -o /dev/null | FileCheck %s
// RUN: fuse-opt %s -split-input-file -fuse-print-cost=per-op=false -o /dev/null | FileCheck %s --check-prefix=TOTALS

// Every op of the dialect has a cost (the pass fails on an op without one).
// RUN: fuse-opt %S/../Dialect/Fuse/ops.mlir -split-input-file -fuse-print-cost=per-op=false -o /dev/null > /dev/null

// GPT-2 124M train step, B = 8, T = 1024. PaLM's 6·N + 12·L·H·Q·T per token
// with N = 124.5M gives 7.05 TFLOP; the graph has 7.02: its matmuls are
// exactly 6·(N - wpe - biases - norms)·tokens and attention exactly
// 12·L·H·Q·T·tokens, and elementwise ops add 0.2%.
// RUN: fuse-opt %S/../graphs/gpt2-full-train.mlir -fuse-print-cost=per-op=false -o /dev/null | FileCheck %s --check-prefix=GPT2
// GPT2-LABEL: cost of @gpt2_train
// GPT2-NEXT: flops: {{[0-9]+}} (7.0{{[0-9]}} TFLOP)
// GPT2: kernels: {{[0-9]+$}}

// Costs are hand-computed: f32 is 4 bytes, bf16 and f16 2, i64 8, i32 4,
// i1 1. A matmul is 2·M·N·K FLOPs per batch.

// CHECK-LABEL: cost of @matmul
// CHECK-NEXT: op at flops bytes read bytes written kernels
// 2·64·16·32 FLOPs; reads (64·32 + 32·16)·4 bytes, writes 64·16·4.
// CHECK-NEXT: fuse.matmul mm 65536 10240 4096 1{{$}}
// CHECK-NEXT: flops: 65536 (65.54 KFLOP)
// CHECK-NEXT: bytes read: 10240 (10.0 KiB)
// CHECK-NEXT: bytes written: 4096 (4.00 KiB)
// CHECK-NEXT: intensity: 4.57 FLOP/B
// CHECK-NEXT: kernels: 1{{$}}

// per-op=false prints the totals only.
// TOTALS-LABEL: cost of @matmul
// TOTALS-NEXT: flops: 65536 (65.54 KFLOP)
// TOTALS-NEXT: bytes read: 10240 (10.0 KiB)
// TOTALS-NEXT: bytes written: 4096 (4.00 KiB)
// TOTALS-NEXT: intensity: 4.57 FLOP/B
// TOTALS-NEXT: kernels: 1{{$}}
func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %y = fuse.matmul %a, %b : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32> loc("mm")
  return %y : tensor<64x16xf32>
}

// -----

// Batch dimensions multiply the FLOPs; transposes only move K.
// CHECK-LABEL: cost of @batched_matmul
// CHECK-NEXT: op at flops bytes read bytes written kernels
// Q K^T: batch 2·3, M = N = 8, K = 16 in bf16: 2·6·8·8·16 FLOPs.
// CHECK-NEXT: fuse.matmul qk 12288 3072 768 1{{$}}
// lhs [4, K=16, M=8] transposed, a weight [16, 32] shared by the batch.
// CHECK-NEXT: fuse.matmul xt_w 32768 4096 4096 1{{$}}
// CHECK-NEXT: flops: 45056 (45.06 KFLOP)
// CHECK-NEXT: bytes read: 7168 (7.00 KiB)
// CHECK-NEXT: bytes written: 4864 (4.75 KiB)
// CHECK: kernels: 2{{$}}
func.func @batched_matmul(%q: tensor<2x3x8x16xbf16>, %k: tensor<2x3x8x16xbf16>, %x: tensor<4x16x8xf32>, %w: tensor<16x32xf32>) -> (tensor<2x3x8x8xbf16>, tensor<4x8x32xf32>) {
  %s = fuse.matmul %q, %k transpose_rhs : (tensor<2x3x8x16xbf16>, tensor<2x3x8x16xbf16>) -> tensor<2x3x8x8xbf16> loc("qk")
  %t = fuse.matmul %x, %w transpose_lhs : (tensor<4x16x8xf32>, tensor<16x32xf32>) -> tensor<4x8x32xf32> loc("xt_w")
  return %s, %t : tensor<2x3x8x8xbf16>, tensor<4x8x32xf32>
}

// -----

// Attention forward is 4·B·H·Tq·Tk·D (QK^T and PV), causal or not: PaLM's
// 12·L·H·Q·T counts the whole score matrix.
// CHECK-LABEL: cost of @attention
// CHECK-NEXT: op at flops bytes read bytes written kernels
// 4·2·4·16·16·8 FLOPs; reads Q, K, V; writes O and the f32 log-sum-exp.
// CHECK-NEXT: fuse.scaled_dot_product_attention full 65536 12288 4608 1{{$}}
// CHECK-NEXT: fuse.scaled_dot_product_attention causal 65536 12288 4608 1{{$}}
// Grouped-query cross attention, Tq = 4, Tk = 6, D = 8, Dv = 16, 4 query
// heads over 2 key/value heads: 2·1·4·4·6·(8 + 16) FLOPs.
// CHECK-NEXT: fuse.scaled_dot_product_attention gqa 4608 1664 1088 1{{$}}
// CHECK-NEXT: flops: 135680 (135.68 KFLOP)
// CHECK: kernels: 3{{$}}
func.func @attention(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>, %q2: tensor<1x4x4x8xf32>, %k2: tensor<1x2x6x8xf32>, %v2: tensor<1x2x6x16xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<1x4x4x16xf32>) {
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v scale = 0.35 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16xf32>) loc("full")
  %oc, %lsec = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 0.35 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16xf32>) loc("causal")
  %og, %lseg = fuse.scaled_dot_product_attention %q2, %k2, %v2 scale = 0.35 : (tensor<1x4x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x16xf32>) -> (tensor<1x4x4x16xf32>, tensor<1x4x4xf32>) loc("gqa")
  return %o, %oc, %og : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<1x4x4x16xf32>
}

// -----

// Attention backward is twice the forward, causal or not.
// CHECK-LABEL: cost of @attention_backward
// CHECK-NEXT: op at flops bytes read bytes written kernels
// 2·65536 FLOPs; reads dO, Q, K, V, O (5·4096 bytes) and the log-sum-exp
// (512); writes dQ, dK, dV.
// CHECK-NEXT: fuse.scaled_dot_product_attention_backward causal_bwd 131072 20992 12288 1{{$}}
// CHECK-NEXT: fuse.scaled_dot_product_attention_backward full_bwd 131072 20992 12288 1{{$}}
// CHECK-NEXT: flops: 262144 (262.14 KFLOP)
// CHECK-NEXT: bytes read: 41984 (41.0 KiB)
// CHECK-NEXT: bytes written: 24576 (24.0 KiB)
// CHECK: kernels: 2{{$}}
func.func @attention_backward(%do: tensor<2x4x16x8xf32>, %q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>, %o: tensor<2x4x16x8xf32>, %lse: tensor<2x4x16xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) {
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %k, %v, %o, %lse causal scale = 0.35 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) loc("causal_bwd")
  %dq2, %dk2, %dv2 = fuse.scaled_dot_product_attention_backward %do, %q, %k, %v, %o, %lse scale = 0.35 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) loc("full_bwd")
  return %dq, %dq2 : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>
}

// -----

// Elementwise ops are 1 FLOP per element, exp and casts too. Each expected
// row sits above its op; an op without a name shows file:line:col.
// CHECK-LABEL: cost of @elementwise_chain
// CHECK-NEXT: op at flops bytes read bytes written kernels
func.func @elementwise_chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xbf16>, tensor<4x8xf32>) {
  // CHECK-NEXT: fuse.add add 32 256 128 1{{$}}
  %s = fuse.add %x, %y : tensor<4x8xf32> loc("add")
  // CHECK-NEXT: fuse.exp print-cost.mlir:[[@LINE+1]]:8 32 128 128 1{{$}}
  %e = fuse.exp %s : tensor<4x8xf32>
  // A splat is an immediate: nothing stored, nothing loaded by the mul.
  // CHECK-NEXT: fuse.constant half 0 0 0 0{{$}}
  %h = fuse.constant dense<5.000000e-01> : tensor<4x8xf32> loc("half")
  // CHECK-NEXT: fuse.mul scale 32 128 128 1{{$}}
  %m = fuse.mul %e, %h : tensor<4x8xf32> loc("scale")
  // CHECK-NEXT: fuse.cast to_bf16 32 128 64 1{{$}}
  %c = fuse.cast %m : tensor<4x8xf32> to tensor<4x8xbf16> loc("to_bf16")
  // i1 takes a byte.
  // CHECK-NEXT: fuse.compare less 32 256 32 1{{$}}
  %lt = fuse.compare lt, %x, %y : tensor<4x8xf32> loc("less")
  // CHECK-NEXT: fuse.select where 32 288 128 1{{$}}
  %z = fuse.select %lt, %x, %y : tensor<4x8xi1>, tensor<4x8xf32> loc("where")
  // CHECK-NEXT: flops: 192 (192 FLOP)
  // CHECK-NEXT: bytes read: 1184 (1.16 KiB)
  // CHECK-NEXT: bytes written: 608 (608 B)
  // CHECK: kernels: 6{{$}}
  return %c, %z : tensor<4x8xbf16>, tensor<4x8xf32>
}

// -----

// Constants, iota and random only write. A constant is baked in at compile
// time (no kernel); iota and random are kernels.
// CHECK-LABEL: cost of @generators
// CHECK-NEXT: op at flops bytes read bytes written kernels
// CHECK-NEXT: fuse.constant ids 0 0 16 0{{$}}
// CHECK-NEXT: fuse.iota pos 0 0 256 1{{$}}
// CHECK-NEXT: fuse.random keep 0 0 32 1{{$}}
// CHECK-NEXT: fuse.random noise 0 0 64 1{{$}}
// CHECK-NEXT: flops: 0 (0 FLOP)
// CHECK-NEXT: bytes read: 0 (0 B)
// CHECK-NEXT: bytes written: 368 (368 B)
// CHECK-NEXT: intensity: 0.00 FLOP/B
// CHECK-NEXT: kernels: 3{{$}}
func.func @generators(%seed: tensor<i64>, %offset: tensor<i64>) -> (tensor<4xi32>, tensor<4x8xi64>, tensor<4x8xi1>, tensor<4x8xf16>) {
  %ids = fuse.constant dense<[0, 1, 2, 3]> : tensor<4xi32> loc("ids")
  %pos = fuse.iota dim = 1 : tensor<4x8xi64> loc("pos")
  %keep = fuse.random bernoulli, %seed, %offset, p = 9.000000e-01 : tensor<4x8xi1> loc("keep")
  %noise = fuse.random normal, %seed, %offset : tensor<4x8xf16> loc("noise")
  return %ids, %pos, %keep, %noise : tensor<4xi32>, tensor<4x8xi64>, tensor<4x8xi1>, tensor<4x8xf16>
}

// -----

// Reductions are 1 FLOP per input element.
// CHECK-LABEL: cost of @reductions
// CHECK-NEXT: op at flops bytes read bytes written kernels
// CHECK-NEXT: fuse.reduce rowsum 512 2048 64 1{{$}}
// CHECK-NEXT: fuse.reduce max 512 2048 4 1{{$}}
// CHECK-NEXT: fuse.argmax argmax 512 2048 128 1{{$}}
// CHECK-NEXT: flops: 1536 (1.54 KFLOP)
// CHECK-NEXT: bytes read: 6144 (6.00 KiB)
// CHECK-NEXT: bytes written: 196 (196 B)
// CHECK: kernels: 3{{$}}
func.func @reductions(%x: tensor<16x32xf32>) -> (tensor<16xf32>, tensor<1x1xf32>, tensor<16xi64>) {
  %s = fuse.reduce sum %x, dims = [1] : (tensor<16x32xf32>) -> tensor<16xf32> loc("rowsum")
  %m = fuse.reduce max %x, dims = [0, 1] keepdim : (tensor<16x32xf32>) -> tensor<1x1xf32> loc("max")
  %a = fuse.argmax %x, dim = 1 : (tensor<16x32xf32>) -> tensor<16xi64> loc("argmax")
  return %s, %m, %a : tensor<16xf32>, tensor<1x1xf32>, tensor<16xi64>
}

// -----

// Softmax-like and norm ops: a constant per element (softmax and
// log_softmax 5; layer_norm 5, +1 with weight, +1 with bias; rms_norm 3;
// cross_entropy 4 and its backward 6 per logit).
// CHECK-LABEL: cost of @composites
// CHECK-NEXT: op at flops bytes read bytes written kernels
// CHECK-NEXT: fuse.softmax softmax 200 160 160 1{{$}}
// CHECK-NEXT: fuse.log_softmax log_softmax 200 160 160 1{{$}}
// 7·48 FLOPs; reads x, weight, bias; writes y and the f32 mean and rstd.
// CHECK-NEXT: fuse.layer_norm layer_norm 336 256 240 1{{$}}
// CHECK-NEXT: fuse.layer_norm layer_norm_plain 240 192 240 1{{$}}
// CHECK-NEXT: fuse.rms_norm rms_norm 96 64 64 1{{$}}
// Reads the logits and the i64 labels; writes an f32 scalar.
// CHECK-NEXT: fuse.cross_entropy ce 160 192 4 1{{$}}
// CHECK-NEXT: fuse.cross_entropy_backward ce_bwd 240 196 160 1{{$}}
// CHECK-NEXT: flops: 1472 (1.47 KFLOP)
// CHECK-NEXT: bytes read: 1220 (1.19 KiB)
// CHECK-NEXT: bytes written: 1028 (1.00 KiB)
// CHECK: kernels: 7{{$}}
func.func @composites(%scores: tensor<4x10xf32>, %labels: tensor<4xi64>, %h: tensor<2x3x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %r: tensor<4x8xbf16>, %dloss: tensor<f32>) -> (tensor<4x10xf32>, tensor<4x10xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<4x8xbf16>, tensor<f32>, tensor<4x10xf32>) {
  %p = fuse.softmax %scores, dim = 1 : tensor<4x10xf32> loc("softmax")
  %lp = fuse.log_softmax %scores, dim = 1 : tensor<4x10xf32> loc("log_softmax")
  %y, %mean, %rstd = fuse.layer_norm %h weight(%g) bias(%b) axis = 2 epsilon = 1.0E-5 : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>) loc("layer_norm")
  %y2, %mean2, %rstd2 = fuse.layer_norm %h axis = 2 epsilon = 1.0E-5 : (tensor<2x3x8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>) loc("layer_norm_plain")
  %n = fuse.rms_norm %r axis = 1 epsilon = 1.0E-6 : (tensor<4x8xbf16>) -> tensor<4x8xbf16> loc("rms_norm")
  %loss = fuse.cross_entropy %scores, %labels : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32> loc("ce")
  %dlogits = fuse.cross_entropy_backward %dloss, %scores, %labels : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>) -> tensor<4x10xf32> loc("ce_bwd")
  return %p, %lp, %y, %y2, %n, %loss, %dlogits : tensor<4x10xf32>, tensor<4x10xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<4x8xbf16>, tensor<f32>, tensor<4x10xf32>
}

// -----

// Shape ops do no arithmetic. A reshape is a view: no bytes, no kernel.
// CHECK-LABEL: cost of @reshape
// CHECK-NEXT: op at flops bytes read bytes written kernels
// CHECK-NEXT: fuse.reshape view 0 0 0 0{{$}}
// CHECK-NEXT: flops: 0 (0 FLOP)
// CHECK-NEXT: bytes read: 0 (0 B)
// CHECK-NEXT: bytes written: 0 (0 B)
// CHECK-NEXT: kernels: 0{{$}}
func.func @reshape(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %r = fuse.reshape %x : (tensor<4x8xf32>) -> tensor<32xf32> loc("view")
  return %r : tensor<32xf32>
}

// -----

// The other shape ops move their bytes; slice and gather read only what
// they take, and a splat destination is never loaded.
// CHECK-LABEL: cost of @shape_ops
// CHECK-NEXT: op at flops bytes read bytes written kernels
// CHECK-NEXT: fuse.transpose permute 0 128 128 1{{$}}
// CHECK-NEXT: fuse.broadcast_in_dim expand 0 32 128 1{{$}}
// CHECK-NEXT: fuse.slice every_other 0 64 64 1{{$}}
// CHECK-NEXT: fuse.concat cat 0 256 256 1{{$}}
// Six rows of 16 f32 and six i64 indices, not the whole table.
// CHECK-NEXT: fuse.gather embedding 0 432 384 1{{$}}
// CHECK-NEXT: fuse.scatter_add embedding_backward 0 6832 6400 1{{$}}
// CHECK-NEXT: fuse.constant zeros 0 0 0 0{{$}}
// CHECK-NEXT: fuse.scatter_add embedding_backward_zeros 0 432 6400 1{{$}}
// CHECK-NEXT: flops: 0 (0 FLOP)
// CHECK-NEXT: bytes read: 8176 (7.98 KiB)
// CHECK-NEXT: bytes written: 13760 (13.4 KiB)
// CHECK: kernels: 7{{$}}
func.func @shape_ops(%x: tensor<4x8xf32>, %v: tensor<8xf32>, %table: tensor<100x16xf32>, %idx: tensor<2x3xi64>, %upd: tensor<2x3x16xf32>) -> (tensor<8x4xf32>, tensor<4x4xf32>, tensor<8x8xf32>, tensor<2x3x16xf32>, tensor<100x16xf32>, tensor<100x16xf32>) {
  %t = fuse.transpose %x, permutation = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32> loc("permute")
  %b = fuse.broadcast_in_dim %v, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32> loc("expand")
  %s = fuse.slice %x, start = [0, 0], limit = [4, 8], stride = [1, 2] : (tensor<4x8xf32>) -> tensor<4x4xf32> loc("every_other")
  %c = fuse.concat dim(0) %x, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> loc("cat")
  %g = fuse.gather %table[%idx], dim = 0 : (tensor<100x16xf32>, tensor<2x3xi64>) -> tensor<2x3x16xf32> loc("embedding")
  %d = fuse.scatter_add %table[%idx], %upd, dim = 0 : (tensor<100x16xf32>, tensor<2x3xi64>, tensor<2x3x16xf32>) -> tensor<100x16xf32> loc("embedding_backward")
  %zeros = fuse.constant dense<0.000000e+00> : tensor<100x16xf32> loc("zeros")
  %dz = fuse.scatter_add %zeros[%idx], %upd, dim = 0 : (tensor<100x16xf32>, tensor<2x3xi64>, tensor<2x3x16xf32>) -> tensor<100x16xf32> loc("embedding_backward_zeros")
  return %t, %s, %c, %g, %d, %dz : tensor<8x4xf32>, tensor<4x4xf32>, tensor<8x8xf32>, tensor<2x3x16xf32>, tensor<100x16xf32>, tensor<100x16xf32>
}

// -----

// Fusion shows in the bytes: the same four ops, first as four kernels that
// each go through memory, then as one fusion that reads its two inputs and
// writes its result once. The FLOPs do not change.
// CHECK-LABEL: cost of @unfused
// CHECK-NEXT: op at flops bytes read bytes written kernels
// CHECK-NEXT: fuse.add add 32 256 128 1{{$}}
// CHECK-NEXT: fuse.exp exp 32 128 128 1{{$}}
// CHECK-NEXT: fuse.mul mul 32 256 128 1{{$}}
// CHECK-NEXT: fuse.relu relu 32 128 128 1{{$}}
// CHECK-NEXT: flops: 128 (128 FLOP)
// CHECK-NEXT: bytes read: 768 (768 B)
// CHECK-NEXT: bytes written: 512 (512 B)
// CHECK: kernels: 4{{$}}
func.func @unfused(%x: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = fuse.add %x, %b : tensor<4x8xf32> loc("add")
  %e = fuse.exp %s : tensor<4x8xf32> loc("exp")
  %m = fuse.mul %e, %x : tensor<4x8xf32> loc("mul")
  %r = fuse.relu %m : tensor<4x8xf32> loc("relu")
  return %r : tensor<4x8xf32>
}

// CHECK-LABEL: cost of @fused
// CHECK-NEXT: op at flops bytes read bytes written kernels
// CHECK-NEXT: fuse.fusion loop fused 128 256 128 1{{$}}
// CHECK-NEXT: flops: 128 (128 FLOP)
// CHECK-NEXT: bytes read: 256 (256 B)
// CHECK-NEXT: bytes written: 128 (128 B)
// CHECK: kernels: 1{{$}}
func.func @fused(%x: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = fuse.fusion loop (%x, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %c: tensor<4x8xf32>):
    %s = fuse.add %a, %c : tensor<4x8xf32>
    %e = fuse.exp %s : tensor<4x8xf32>
    %m = fuse.mul %e, %a : tensor<4x8xf32>
    %r = fuse.relu %m : tensor<4x8xf32>
    fuse.yield %r : tensor<4x8xf32>
  } loc("fused")
  return %y : tensor<4x8xf32>
}

// A fusion input that only slices read counts what they take: the three
// thirds of a [4, 24] qkv tensor (128 B each) that one kernel splits and
// adds read 384 B, once each, like the plain slices would; the input the
// add reads whole counts whole (128 B).
// CHECK-LABEL: cost of @sliced_input
// CHECK-NEXT: op at flops bytes read bytes written kernels
// CHECK-NEXT: fuse.fusion loop split 64 512 256 1{{$}}
func.func @sliced_input(%qkv: tensor<4x24xf32>, %b: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %q, %k = fuse.fusion loop (%qkv, %b) : (tensor<4x24xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x24xf32>, %c: tensor<4x8xf32>):
    %s0 = fuse.slice %a, start = [0, 0], limit = [4, 8], stride = [1, 1] : (tensor<4x24xf32>) -> tensor<4x8xf32>
    %s1 = fuse.slice %a, start = [0, 8], limit = [4, 16], stride = [1, 1] : (tensor<4x24xf32>) -> tensor<4x8xf32>
    %s2 = fuse.slice %a, start = [0, 16], limit = [4, 24], stride = [1, 1] : (tensor<4x24xf32>) -> tensor<4x8xf32>
    %t = fuse.add %s0, %s2 : tensor<4x8xf32>
    %u = fuse.add %t, %c : tensor<4x8xf32>
    fuse.yield %u, %s1 : tensor<4x8xf32>, tensor<4x8xf32>
  } loc("split")
  return %q, %k : tensor<4x8xf32>, tensor<4x8xf32>
}

// A GEMM with its epilogue is one kernel too: 2·32·256·64 FLOPs for the
// matmul and 32·256 each for the add and the ReLU; f16 x, w and bias read,
// the f16 result written once.
// CHECK-LABEL: cost of @gemm_epilogue
// CHECK-NEXT: op at flops bytes read bytes written kernels
// CHECK-NEXT: fuse.fusion gemm_epilogue linear 1064960 53248 16384 1{{$}}
// CHECK: kernels: 1{{$}}
func.func @gemm_epilogue(%x: tensor<32x64xf16>, %w: tensor<256x64xf16>, %bias: tensor<32x256xf16>) -> tensor<32x256xf16> {
  %y = fuse.fusion gemm_epilogue (%x, %w, %bias) : (tensor<32x64xf16>, tensor<256x64xf16>, tensor<32x256xf16>) -> tensor<32x256xf16> {
  ^bb0(%a: tensor<32x64xf16>, %b: tensor<256x64xf16>, %c: tensor<32x256xf16>):
    %mm = fuse.matmul %a, %b transpose_rhs : (tensor<32x64xf16>, tensor<256x64xf16>) -> tensor<32x256xf16>
    %s = fuse.add %mm, %c : tensor<32x256xf16>
    %r = fuse.relu %s : tensor<32x256xf16>
    fuse.yield %r : tensor<32x256xf16>
  } loc("linear")
  return %y : tensor<32x256xf16>
}

// -----

// 2·M·N·K = 2^67 for three 2^44-element operands, each within the tensor
// size limit: the count saturates at int64's maximum and says so (it
// wrapped to 0 here, and to -9223372036854775808 for other sizes).
// CHECK-LABEL: cost of @flops_beyond_int64
// CHECK-NEXT: op at flops bytes read bytes written kernels
// CHECK-NEXT: fuse.matmul {{.*}} 9223372036854775807 70368744177664 35184372088832 1
// CHECK-NEXT: flops: 9223372036854775807 (over int64's range: at least 9.22 EFLOP)
func.func @flops_beyond_int64(%a: tensor<4194304x4194304xbf16>, %b: tensor<4194304x4194304xbf16>) -> tensor<4194304x4194304xbf16> {
  %c = fuse.matmul %a, %b : (tensor<4194304x4194304xbf16>, tensor<4194304x4194304xbf16>) -> tensor<4194304x4194304xbf16>
  return %c : tensor<4194304x4194304xbf16>
}
