// Graphs the CUDA code generator refuses, with the error it gives.

// Attention fusions written by hand that the flash kernels cannot address:
// a query whose head dim is not contiguous ([B, D, H, T] seen as
// [B, H, T, D]); views around f32 attention, which runs as GEMMs that read
// their operands as they are; an op other than a view beside the attention.
func.func @strided_head_dim(%x: tensor<1x64x2x16xbf16>, %k: tensor<1x2x16x64xbf16>, %v: tensor<1x2x16x64xbf16>) -> tensor<1x2x16x64xbf16> {
  %r = fuse.fusion attention (%x, %k, %v) : (tensor<1x64x2x16xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>) -> tensor<1x2x16x64xbf16> {
  ^bb0(%a: tensor<1x64x2x16xbf16>, %b: tensor<1x2x16x64xbf16>, %c: tensor<1x2x16x64xbf16>):
    %q = fuse.transpose %a, permutation = [0, 2, 3, 1] : (tensor<1x64x2x16xbf16>) -> tensor<1x2x16x64xbf16>
    %o, %lse = fuse.scaled_dot_product_attention %q, %b, %c scale = 1.250000e-01 : (tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>) -> (tensor<1x2x16x64xbf16>, tensor<1x2x16xf32>)
    fuse.yield %o : tensor<1x2x16x64xbf16>
  }
  return %r : tensor<1x2x16x64xbf16>
}

func.func @views_in_f32(%x: tensor<1x16x128xf32>, %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>) -> tensor<1x2x16x64xf32> {
  %r = fuse.fusion attention (%x, %k, %v) : (tensor<1x16x128xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>) -> tensor<1x2x16x64xf32> {
  ^bb0(%a: tensor<1x16x128xf32>, %b: tensor<1x2x16x64xf32>, %c: tensor<1x2x16x64xf32>):
    %q4 = fuse.reshape %a : (tensor<1x16x128xf32>) -> tensor<1x16x2x64xf32>
    %q = fuse.transpose %q4, permutation = [0, 2, 1, 3] : (tensor<1x16x2x64xf32>) -> tensor<1x2x16x64xf32>
    %o, %lse = fuse.scaled_dot_product_attention %q, %b, %c scale = 1.250000e-01 : (tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>) -> (tensor<1x2x16x64xf32>, tensor<1x2x16xf32>)
    fuse.yield %o : tensor<1x2x16x64xf32>
  }
  return %r : tensor<1x2x16x64xf32>
}

func.func @not_a_view(%q: tensor<1x2x16x64xbf16>, %k: tensor<1x2x16x64xbf16>, %v: tensor<1x2x16x64xbf16>) -> tensor<1x2x16x64xbf16> {
  %r = fuse.fusion attention (%q, %k, %v) : (tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>) -> tensor<1x2x16x64xbf16> {
  ^bb0(%a: tensor<1x2x16x64xbf16>, %b: tensor<1x2x16x64xbf16>, %c: tensor<1x2x16x64xbf16>):
    %e = fuse.exp %a : tensor<1x2x16x64xbf16>
    %o, %lse = fuse.scaled_dot_product_attention %e, %b, %c scale = 1.250000e-01 : (tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>) -> (tensor<1x2x16x64xbf16>, tensor<1x2x16xf32>)
    fuse.yield %o : tensor<1x2x16x64xbf16>
  }
  return %r : tensor<1x2x16x64xbf16>
}
