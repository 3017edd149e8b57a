// RUN: fuse-opt %s -split-input-file --fuse-auto-mixed-precision=weight-copies=true | FileCheck %s
// RUN: fuse-opt %s -split-input-file --fuse-auto-mixed-precision='dtype=f16 weight-copies=true' | FileCheck %s --check-prefix=F16
// RUN: fuse-opt %s -split-input-file --fuse-auto-mixed-precision | FileCheck %s --check-prefix=OFF

// A step that updates its weight keeps the weight's bf16 copy as state: a
// donated argument `amp_weight.w` replaces the cast the matmul read, and a
// result of that name returns the updated weight's copy. The update keeps
// the weight unless `apply` (a micro-batch that only accumulates), so the
// copy keeps the copy under the same condition. The bias, which no matmul
// reads in bf16, and the input, which the step does not update, get none.
// CHECK-LABEL: func.func @sgd_step
// CHECK-SAME: %[[W:[^:]*]]: tensor<16x32xf32> {fuse.donated, fuse.name = "w"}
// CHECK-SAME: %[[COPY:[^:]*]]: tensor<16x32xbf16> {fuse.donated, fuse.name = "amp_weight.w"}
// CHECK-SAME: tensor<16x32xbf16> {fuse.name = "amp_weight.w"})
// CHECK-NOT: fuse.cast %[[W]]
// CHECK: fuse.matmul %{{.*}}, %[[COPY]] transpose_rhs
// CHECK: %[[NEW:.*]] = fuse.sub %[[W]]
// CHECK: %[[UPDATED:.*]] = fuse.select %[[APPLY:.*]], %[[NEW]], %[[W]]
// CHECK: %[[NEWCOPY:.*]] = fuse.cast %[[NEW]] : tensor<16x32xf32> to tensor<16x32xbf16>
// CHECK: %[[KEPT:.*]] = fuse.select %[[APPLY]], %[[NEWCOPY]], %[[COPY]] : tensor<16x32xi1>, tensor<16x32xbf16>
// CHECK: return %{{.*}}, %[[UPDATED]], %{{.*}}, %[[KEPT]]
// OFF-LABEL: func.func @sgd_step
// OFF-NOT: amp_weight
// OFF: fuse.cast %arg0 : tensor<16x32xf32> to tensor<16x32xbf16>
// f16 adds loss scaling first: the update is skipped on overflow too, and
// the copy follows (two nested selects that keep it).
// F16-LABEL: func.func @sgd_step
// F16: fuse.name = "amp_weight.w"
// F16: %[[C1:.*]] = fuse.select %{{.*}}, %{{.*}}, %arg{{[0-9]+}} : tensor<16x32xi1>, tensor<16x32xf16>
// F16: fuse.select %{{.*}}, %arg{{[0-9]+}}, %[[C1]] : tensor<16x32xi1>, tensor<16x32xf16>
func.func @sgd_step(%w: tensor<16x32xf32> {fuse.donated, fuse.name = "w"},
                    %b: tensor<16xf32> {fuse.donated, fuse.name = "b"},
                    %x: tensor<8x32xf32> {fuse.name = "x"},
                    %y: tensor<8xi64> {fuse.name = "y"},
                    %apply: tensor<f32> {fuse.name = "accumulate.apply"})
    -> (tensor<f32> {fuse.name = "loss"}, tensor<16x32xf32> {fuse.name = "w"},
        tensor<16xf32> {fuse.name = "b"}) {
  %mm = fuse.matmul %x, %w transpose_rhs : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  %bb = fuse.broadcast_in_dim %b, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
  %logits = fuse.add %mm, %bb : tensor<8x16xf32>
  %loss = fuse.cross_entropy %logits, %y : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  %one = fuse.constant dense<1.0> : tensor<f32>
  %dlogits = fuse.cross_entropy_backward %one, %logits, %y : (tensor<f32>, tensor<8x16xf32>, tensor<8xi64>) -> tensor<8x16xf32>
  %gw = fuse.matmul %dlogits, %x transpose_lhs : (tensor<8x16xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %gb = fuse.reduce sum %dlogits, dims = [0] : (tensor<8x16xf32>) -> tensor<16xf32>
  %lr = fuse.constant dense<0.1> : tensor<16x32xf32>
  %step = fuse.mul %gw, %lr : tensor<16x32xf32>
  %new = fuse.sub %w, %step : tensor<16x32xf32>
  %half = fuse.constant dense<0.5> : tensor<f32>
  %gt = fuse.compare gt, %apply, %half : tensor<f32>
  %c = fuse.broadcast_in_dim %gt, dims = [] : (tensor<i1>) -> tensor<16x32xi1>
  %updated = fuse.select %c, %new, %w : tensor<16x32xi1>, tensor<16x32xf32>
  %lrb = fuse.constant dense<0.1> : tensor<16xf32>
  %sb = fuse.mul %gb, %lrb : tensor<16xf32>
  %newb = fuse.sub %b, %sb : tensor<16xf32>
  return %loss, %updated, %newb : tensor<f32>, tensor<16x32xf32>, tensor<16xf32>
}

// -----

// An inference graph (nothing updated) and a weight returned unchanged get
// no copy: the caller could change them between calls.
// CHECK-LABEL: func.func @not_updated
// CHECK-NOT: amp_weight
// CHECK: fuse.cast %arg1 : tensor<16x32xf32> to tensor<16x32xbf16>
func.func @not_updated(%x: tensor<8x32xf32>, %w: tensor<16x32xf32> {fuse.donated, fuse.name = "w"})
    -> (tensor<8x16xf32>, tensor<16x32xf32> {fuse.name = "w"}) {
  %mm = fuse.matmul %x, %w transpose_rhs : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  return %mm, %w : tensor<8x16xf32>, tensor<16x32xf32>
}
