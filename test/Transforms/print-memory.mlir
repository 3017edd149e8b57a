// RUN: fuse-opt %s -split-input-file -fuse-plan-memory -fuse-print-memory -o /dev/null | FileCheck %s
// RUN: fuse-opt %s -split-input-file -fuse-plan-memory -fuse-print-memory=top=2 -o /dev/null | FileCheck %s --check-prefix=TOP2

// The full fixtures after fuse-pipeline: best fit within 5% of the lower
// bound (the goal), and the largest buffers named by the model source line
// that made them.
// RUN: fuse-opt %S/../graphs/gpt2-full-train.mlir -fuse-pipeline -fuse-plan-memory -fuse-print-memory -o /dev/null | FileCheck %s --check-prefix=GPT2
// GPT2-LABEL: memory of @gpt2_train
// GPT2-NEXT: arena: {{[0-9]+}} ({{.*}} GiB)
// GPT2-NEXT: lower bound: {{[0-9]+}} ({{.*}} GiB)
// GPT2-NEXT: arena / lower bound: 1.0{{[0-4][0-9]$}}
// GPT2: largest buffers:
// GPT2-NEXT: bytes offset live op at
// GPT2-NEXT: {{[0-9]+ +[0-9]+ +\[[0-9]+, [0-9]+\] +fuse\.[a-z_]+.* \(modeling_gpt2\.py:[0-9]+\)$}}
// RUN: fuse-opt %S/../graphs/gpt2-full-train-adamw.mlir -fuse-pipeline -fuse-plan-memory -fuse-print-memory=top=0 -o /dev/null | FileCheck %s --check-prefix=WITHIN5
// RUN: fuse-opt %S/../graphs/bert-full-b4-train.mlir -fuse-pipeline -fuse-plan-memory -fuse-print-memory=top=0 -o /dev/null | FileCheck %s --check-prefix=WITHIN5
// RUN: fuse-opt %S/../graphs/llama-full-train.mlir -fuse-pipeline -fuse-plan-memory -fuse-print-memory=top=0 -o /dev/null | FileCheck %s --check-prefix=WITHIN5
// WITHIN5: arena / lower bound: 1.0{{[0-4][0-9]$}}

// Positions count the top-level ops from 0. Rows are the arena's buffers,
// largest first (the first written on a tie); views are not rows of their
// own. "at" is the exporter's node name and the source line (the file
// without its directories), else file:line, else the result's name.
// CHECK-LABEL: memory of @step
// CHECK-NEXT: arena: 2048 (2.00 KiB)
// CHECK-NEXT: lower bound: 2048 (2.00 KiB)
// CHECK-NEXT: arena / lower bound: 1.000
// %s is written in place of %m; %z is returned; %u is written over the
// donated %p.
// CHECK-NEXT: buffers: 5 in the arena (1 written in place), 1 returned, 1 in arguments
// CHECK-NEXT: largest buffers:
// CHECK-NEXT: bytes offset live op at
// CHECK-NEXT: 1024 [[A:[0-9]+]] [0, 2] fuse.exp exp (model.py:10){{$}}
// CHECK-NEXT: 1024 [[M:[0-9]+]] [1, 2] fuse.matmul mm (model.py:11){{$}}
// CHECK-NEXT: 1024 [[M]] [2, 5] fuse.add %2{{$}}
// CHECK-NEXT: 64 {{[0-9]+}} [4, 6] fuse.fusion row_reduction sum (model.py:12){{$}}
// CHECK-NEXT: 64 {{[0-9]+}} [5, 6] fuse.slice model.py:14{{$}}
// TOP2-LABEL: memory of @step
// TOP2: largest buffers:
// TOP2-NEXT: bytes offset live op at
// TOP2-NEXT: 1024 {{.*}} fuse.exp
// TOP2-NEXT: 1024 {{.*}} fuse.matmul
// TOP2-NOT: fuse.
// TOP2: memory of @nothing_in_the_arena
func.func @step(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>, %p: tensor<64xf32> {fuse.donated}, %g: tensor<64xf32>) -> (tensor<16xf32>, tensor<64xf32>) {
  %a = fuse.exp %x : tensor<16x16xf32> loc("exp"("/src/models/model.py":10:4))
  %m = fuse.matmul %a, %w : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32> loc("mm"("/src/models/model.py":11:0))
  %s = fuse.add %m, %a : tensor<16x16xf32> loc(unknown)
  %v = fuse.reshape %s : (tensor<16x16xf32>) -> tensor<256xf32> loc("view")
  %r = fuse.fusion row_reduction (%s) : (tensor<16x16xf32>) -> tensor<16xf32> {
  ^bb0(%q: tensor<16x16xf32>):
    %t = fuse.reduce sum %q, dims = [1] : (tensor<16x16xf32>) -> tensor<16xf32>
    fuse.yield %t : tensor<16xf32>
  } loc(fused["sum"("/src/models/model.py":12:0), "mean"("/src/models/model.py":13:0)])
  %h = fuse.slice %v, start = [0], limit = [16], stride = [1] : (tensor<256xf32>) -> tensor<16xf32> loc("/src/models/model.py":14:2)
  %z = fuse.add %r, %h : tensor<16xf32> loc("z")
  %u = fuse.sub %p, %g : tensor<64xf32> loc("adamw")
  return %z, %u : tensor<16xf32>, tensor<64xf32>
}

// -----

// Nothing in the arena: no table, and the ratio of an empty arena to its
// zero bound is 1.
// CHECK-LABEL: memory of @nothing_in_the_arena
// CHECK-NEXT: arena: 0 (0 B)
// CHECK-NEXT: lower bound: 0 (0 B)
// CHECK-NEXT: arena / lower bound: 1.000
// CHECK-NEXT: buffers: 0 in the arena (0 written in place), 1 returned, 0 in arguments
// CHECK-NOT: largest buffers
func.func @nothing_in_the_arena(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fuse.exp %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
