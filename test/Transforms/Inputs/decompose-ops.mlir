// Every composite op fuse-decompose rewrites, in f32 (@f32), bf16 (@bf16)
// and f16 (@f16): softmax along the first, a middle and the last dimension;
// norms over one, two and all dimensions, with and without weight and bias;
// cross entropy with every reduction, i64 and i32 labels, an ignore_index
// that random labels in [0, 5) hit, and logits without positions (rank 1).
// decompose.mlir runs each function through
// `fuse-run --check-pipeline=fuse-decompose` on random inputs.

func.func @f32(%x: tensor<4x6x8xf32>, %w: tensor<8xf32>, %bias: tensor<8xf32>, %w2: tensor<6x8xf32>, %logits: tensor<3x4x5xf32>, %labels: tensor<3x4xi64>, %labels32: tensor<3x4xi32>, %vec: tensor<5xf32>, %label: tensor<i64>, %dloss: tensor<f32>, %dlosses: tensor<3x4xf32>)
    -> (tensor<4x6x8xf32> {fuse.name = "gelu_erf"}, tensor<4x6x8xf32> {fuse.name = "gelu_tanh"}, tensor<4x6x8xf32> {fuse.name = "silu"}, tensor<4x6x8xf32> {fuse.name = "softmax_last"}, tensor<4x6x8xf32> {fuse.name = "softmax_mid"}, tensor<4x6x8xf32> {fuse.name = "log_softmax"}, tensor<4x6x8xf32> {fuse.name = "log_softmax_first"}, tensor<4x6x8xf32> {fuse.name = "ln"}, tensor<4x6x1xf32> {fuse.name = "ln_mean"}, tensor<4x6x1xf32> {fuse.name = "ln_rstd"}, tensor<4x6x8xf32> {fuse.name = "ln2"}, tensor<4x1x1xf32> {fuse.name = "ln2_mean"}, tensor<4x1x1xf32> {fuse.name = "ln2_rstd"}, tensor<4x6x8xf32> {fuse.name = "ln3"}, tensor<1x1x1xf32> {fuse.name = "ln3_mean"}, tensor<1x1x1xf32> {fuse.name = "ln3_rstd"}, tensor<4x6x8xf32> {fuse.name = "rms"}, tensor<4x6x8xf32> {fuse.name = "rms_plain"}, tensor<f32> {fuse.name = "ce_mean"}, tensor<f32> {fuse.name = "ce_mean_ignore"}, tensor<f32> {fuse.name = "ce_sum"}, tensor<3x4xf32> {fuse.name = "ce_none"}, tensor<f32> {fuse.name = "ce_vec"}, tensor<3x4x5xf32> {fuse.name = "dce_mean"}, tensor<3x4x5xf32> {fuse.name = "dce_sum"}, tensor<3x4x5xf32> {fuse.name = "dce_none"}, tensor<5xf32> {fuse.name = "dce_vec"}) {
  %gelu_erf = fuse.gelu %x, approximate = erf : tensor<4x6x8xf32>
  %gelu_tanh = fuse.gelu %x, approximate = tanh : tensor<4x6x8xf32>
  %silu = fuse.silu %x : tensor<4x6x8xf32>
  %softmax_last = fuse.softmax %x, dim = 2 : tensor<4x6x8xf32>
  %softmax_mid = fuse.softmax %x, dim = 1 : tensor<4x6x8xf32>
  %log_softmax = fuse.log_softmax %x, dim = 2 : tensor<4x6x8xf32>
  %log_softmax_first = fuse.log_softmax %x, dim = 0 : tensor<4x6x8xf32>
  %ln, %ln_mean, %ln_rstd = fuse.layer_norm %x weight(%w) bias(%bias) axis = 2 epsilon = 1.0e-05 : (tensor<4x6x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x6x8xf32>, tensor<4x6x1xf32>, tensor<4x6x1xf32>)
  %ln2, %ln2_mean, %ln2_rstd = fuse.layer_norm %x weight(%w2) axis = 1 epsilon = 1.0e-12 : (tensor<4x6x8xf32>, tensor<6x8xf32>) -> (tensor<4x6x8xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>)
  %ln3, %ln3_mean, %ln3_rstd = fuse.layer_norm %x axis = 0 epsilon = 1.0e-05 : (tensor<4x6x8xf32>) -> (tensor<4x6x8xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>)
  %rms = fuse.rms_norm %x weight(%w) axis = 2 epsilon = 1.0e-06 : (tensor<4x6x8xf32>, tensor<8xf32>) -> tensor<4x6x8xf32>
  %rms_plain = fuse.rms_norm %x axis = 1 epsilon = 1.0e-06 : (tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  %ce_mean = fuse.cross_entropy %logits, %labels : (tensor<3x4x5xf32>, tensor<3x4xi64>) -> tensor<f32>
  %ce_mean_ignore = fuse.cross_entropy %logits, %labels ignore_index = 2 : (tensor<3x4x5xf32>, tensor<3x4xi64>) -> tensor<f32>
  %ce_sum = fuse.cross_entropy %logits, %labels32 ignore_index = 2 reduction = sum : (tensor<3x4x5xf32>, tensor<3x4xi32>) -> tensor<f32>
  %ce_none = fuse.cross_entropy %logits, %labels ignore_index = 2 reduction = none : (tensor<3x4x5xf32>, tensor<3x4xi64>) -> tensor<3x4xf32>
  %ce_vec = fuse.cross_entropy %vec, %label : (tensor<5xf32>, tensor<i64>) -> tensor<f32>
  %dce_mean = fuse.cross_entropy_backward %dloss, %logits, %labels ignore_index = 2 : (tensor<f32>, tensor<3x4x5xf32>, tensor<3x4xi64>) -> tensor<3x4x5xf32>
  %dce_sum = fuse.cross_entropy_backward %dloss, %logits, %labels32 ignore_index = 2 reduction = sum : (tensor<f32>, tensor<3x4x5xf32>, tensor<3x4xi32>) -> tensor<3x4x5xf32>
  %dce_none = fuse.cross_entropy_backward %dlosses, %logits, %labels ignore_index = 2 reduction = none : (tensor<3x4xf32>, tensor<3x4x5xf32>, tensor<3x4xi64>) -> tensor<3x4x5xf32>
  %dce_vec = fuse.cross_entropy_backward %dloss, %vec, %label : (tensor<f32>, tensor<5xf32>, tensor<i64>) -> tensor<5xf32>
  return %gelu_erf, %gelu_tanh, %silu, %softmax_last, %softmax_mid, %log_softmax, %log_softmax_first, %ln, %ln_mean, %ln_rstd, %ln2, %ln2_mean, %ln2_rstd, %ln3, %ln3_mean, %ln3_rstd, %rms, %rms_plain, %ce_mean, %ce_mean_ignore, %ce_sum, %ce_none, %ce_vec, %dce_mean, %dce_sum, %dce_none, %dce_vec
    : tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x1xf32>, tensor<4x6x1xf32>, tensor<4x6x8xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x6x8xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<3x4xf32>, tensor<f32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<5xf32>
}

func.func @bf16(%x: tensor<4x6x8xbf16>, %w: tensor<8xbf16>, %bias: tensor<8xbf16>, %w2: tensor<6x8xbf16>, %logits: tensor<3x4x5xbf16>, %labels: tensor<3x4xi64>, %labels32: tensor<3x4xi32>, %vec: tensor<5xbf16>, %label: tensor<i64>, %dloss: tensor<bf16>, %dlosses: tensor<3x4xbf16>)
    -> (tensor<4x6x8xbf16> {fuse.name = "gelu_erf"}, tensor<4x6x8xbf16> {fuse.name = "gelu_tanh"}, tensor<4x6x8xbf16> {fuse.name = "silu"}, tensor<4x6x8xbf16> {fuse.name = "softmax_last"}, tensor<4x6x8xbf16> {fuse.name = "softmax_mid"}, tensor<4x6x8xbf16> {fuse.name = "log_softmax"}, tensor<4x6x8xbf16> {fuse.name = "log_softmax_first"}, tensor<4x6x8xbf16> {fuse.name = "ln"}, tensor<4x6x1xf32> {fuse.name = "ln_mean"}, tensor<4x6x1xf32> {fuse.name = "ln_rstd"}, tensor<4x6x8xbf16> {fuse.name = "ln2"}, tensor<4x1x1xf32> {fuse.name = "ln2_mean"}, tensor<4x1x1xf32> {fuse.name = "ln2_rstd"}, tensor<4x6x8xbf16> {fuse.name = "ln3"}, tensor<1x1x1xf32> {fuse.name = "ln3_mean"}, tensor<1x1x1xf32> {fuse.name = "ln3_rstd"}, tensor<4x6x8xbf16> {fuse.name = "rms"}, tensor<4x6x8xbf16> {fuse.name = "rms_plain"}, tensor<bf16> {fuse.name = "ce_mean"}, tensor<bf16> {fuse.name = "ce_mean_ignore"}, tensor<bf16> {fuse.name = "ce_sum"}, tensor<3x4xbf16> {fuse.name = "ce_none"}, tensor<bf16> {fuse.name = "ce_vec"}, tensor<3x4x5xbf16> {fuse.name = "dce_mean"}, tensor<3x4x5xbf16> {fuse.name = "dce_sum"}, tensor<3x4x5xbf16> {fuse.name = "dce_none"}, tensor<5xbf16> {fuse.name = "dce_vec"}) {
  %gelu_erf = fuse.gelu %x, approximate = erf : tensor<4x6x8xbf16>
  %gelu_tanh = fuse.gelu %x, approximate = tanh : tensor<4x6x8xbf16>
  %silu = fuse.silu %x : tensor<4x6x8xbf16>
  %softmax_last = fuse.softmax %x, dim = 2 : tensor<4x6x8xbf16>
  %softmax_mid = fuse.softmax %x, dim = 1 : tensor<4x6x8xbf16>
  %log_softmax = fuse.log_softmax %x, dim = 2 : tensor<4x6x8xbf16>
  %log_softmax_first = fuse.log_softmax %x, dim = 0 : tensor<4x6x8xbf16>
  %ln, %ln_mean, %ln_rstd = fuse.layer_norm %x weight(%w) bias(%bias) axis = 2 epsilon = 1.0e-05 : (tensor<4x6x8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> (tensor<4x6x8xbf16>, tensor<4x6x1xf32>, tensor<4x6x1xf32>)
  %ln2, %ln2_mean, %ln2_rstd = fuse.layer_norm %x weight(%w2) axis = 1 epsilon = 1.0e-12 : (tensor<4x6x8xbf16>, tensor<6x8xbf16>) -> (tensor<4x6x8xbf16>, tensor<4x1x1xf32>, tensor<4x1x1xf32>)
  %ln3, %ln3_mean, %ln3_rstd = fuse.layer_norm %x axis = 0 epsilon = 1.0e-05 : (tensor<4x6x8xbf16>) -> (tensor<4x6x8xbf16>, tensor<1x1x1xf32>, tensor<1x1x1xf32>)
  %rms = fuse.rms_norm %x weight(%w) axis = 2 epsilon = 1.0e-06 : (tensor<4x6x8xbf16>, tensor<8xbf16>) -> tensor<4x6x8xbf16>
  %rms_plain = fuse.rms_norm %x axis = 1 epsilon = 1.0e-06 : (tensor<4x6x8xbf16>) -> tensor<4x6x8xbf16>
  %ce_mean = fuse.cross_entropy %logits, %labels : (tensor<3x4x5xbf16>, tensor<3x4xi64>) -> tensor<bf16>
  %ce_mean_ignore = fuse.cross_entropy %logits, %labels ignore_index = 2 : (tensor<3x4x5xbf16>, tensor<3x4xi64>) -> tensor<bf16>
  %ce_sum = fuse.cross_entropy %logits, %labels32 ignore_index = 2 reduction = sum : (tensor<3x4x5xbf16>, tensor<3x4xi32>) -> tensor<bf16>
  %ce_none = fuse.cross_entropy %logits, %labels ignore_index = 2 reduction = none : (tensor<3x4x5xbf16>, tensor<3x4xi64>) -> tensor<3x4xbf16>
  %ce_vec = fuse.cross_entropy %vec, %label : (tensor<5xbf16>, tensor<i64>) -> tensor<bf16>
  %dce_mean = fuse.cross_entropy_backward %dloss, %logits, %labels ignore_index = 2 : (tensor<bf16>, tensor<3x4x5xbf16>, tensor<3x4xi64>) -> tensor<3x4x5xbf16>
  %dce_sum = fuse.cross_entropy_backward %dloss, %logits, %labels32 ignore_index = 2 reduction = sum : (tensor<bf16>, tensor<3x4x5xbf16>, tensor<3x4xi32>) -> tensor<3x4x5xbf16>
  %dce_none = fuse.cross_entropy_backward %dlosses, %logits, %labels ignore_index = 2 reduction = none : (tensor<3x4xbf16>, tensor<3x4x5xbf16>, tensor<3x4xi64>) -> tensor<3x4x5xbf16>
  %dce_vec = fuse.cross_entropy_backward %dloss, %vec, %label : (tensor<bf16>, tensor<5xbf16>, tensor<i64>) -> tensor<5xbf16>
  return %gelu_erf, %gelu_tanh, %silu, %softmax_last, %softmax_mid, %log_softmax, %log_softmax_first, %ln, %ln_mean, %ln_rstd, %ln2, %ln2_mean, %ln2_rstd, %ln3, %ln3_mean, %ln3_rstd, %rms, %rms_plain, %ce_mean, %ce_mean_ignore, %ce_sum, %ce_none, %ce_vec, %dce_mean, %dce_sum, %dce_none, %dce_vec
    : tensor<4x6x8xbf16>, tensor<4x6x8xbf16>, tensor<4x6x8xbf16>, tensor<4x6x8xbf16>, tensor<4x6x8xbf16>, tensor<4x6x8xbf16>, tensor<4x6x8xbf16>, tensor<4x6x8xbf16>, tensor<4x6x1xf32>, tensor<4x6x1xf32>, tensor<4x6x8xbf16>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x6x8xbf16>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<4x6x8xbf16>, tensor<4x6x8xbf16>, tensor<bf16>, tensor<bf16>, tensor<bf16>, tensor<3x4xbf16>, tensor<bf16>, tensor<3x4x5xbf16>, tensor<3x4x5xbf16>, tensor<3x4x5xbf16>, tensor<5xbf16>
}

func.func @f16(%x: tensor<4x6x8xf16>, %w: tensor<8xf16>, %bias: tensor<8xf16>, %w2: tensor<6x8xf16>, %logits: tensor<3x4x5xf16>, %labels: tensor<3x4xi64>, %labels32: tensor<3x4xi32>, %vec: tensor<5xf16>, %label: tensor<i64>, %dloss: tensor<f16>, %dlosses: tensor<3x4xf16>)
    -> (tensor<4x6x8xf16> {fuse.name = "gelu_erf"}, tensor<4x6x8xf16> {fuse.name = "gelu_tanh"}, tensor<4x6x8xf16> {fuse.name = "silu"}, tensor<4x6x8xf16> {fuse.name = "softmax_last"}, tensor<4x6x8xf16> {fuse.name = "softmax_mid"}, tensor<4x6x8xf16> {fuse.name = "log_softmax"}, tensor<4x6x8xf16> {fuse.name = "log_softmax_first"}, tensor<4x6x8xf16> {fuse.name = "ln"}, tensor<4x6x1xf32> {fuse.name = "ln_mean"}, tensor<4x6x1xf32> {fuse.name = "ln_rstd"}, tensor<4x6x8xf16> {fuse.name = "ln2"}, tensor<4x1x1xf32> {fuse.name = "ln2_mean"}, tensor<4x1x1xf32> {fuse.name = "ln2_rstd"}, tensor<4x6x8xf16> {fuse.name = "ln3"}, tensor<1x1x1xf32> {fuse.name = "ln3_mean"}, tensor<1x1x1xf32> {fuse.name = "ln3_rstd"}, tensor<4x6x8xf16> {fuse.name = "rms"}, tensor<4x6x8xf16> {fuse.name = "rms_plain"}, tensor<f16> {fuse.name = "ce_mean"}, tensor<f16> {fuse.name = "ce_mean_ignore"}, tensor<f16> {fuse.name = "ce_sum"}, tensor<3x4xf16> {fuse.name = "ce_none"}, tensor<f16> {fuse.name = "ce_vec"}, tensor<3x4x5xf16> {fuse.name = "dce_mean"}, tensor<3x4x5xf16> {fuse.name = "dce_sum"}, tensor<3x4x5xf16> {fuse.name = "dce_none"}, tensor<5xf16> {fuse.name = "dce_vec"}) {
  %gelu_erf = fuse.gelu %x, approximate = erf : tensor<4x6x8xf16>
  %gelu_tanh = fuse.gelu %x, approximate = tanh : tensor<4x6x8xf16>
  %silu = fuse.silu %x : tensor<4x6x8xf16>
  %softmax_last = fuse.softmax %x, dim = 2 : tensor<4x6x8xf16>
  %softmax_mid = fuse.softmax %x, dim = 1 : tensor<4x6x8xf16>
  %log_softmax = fuse.log_softmax %x, dim = 2 : tensor<4x6x8xf16>
  %log_softmax_first = fuse.log_softmax %x, dim = 0 : tensor<4x6x8xf16>
  %ln, %ln_mean, %ln_rstd = fuse.layer_norm %x weight(%w) bias(%bias) axis = 2 epsilon = 1.0e-05 : (tensor<4x6x8xf16>, tensor<8xf16>, tensor<8xf16>) -> (tensor<4x6x8xf16>, tensor<4x6x1xf32>, tensor<4x6x1xf32>)
  %ln2, %ln2_mean, %ln2_rstd = fuse.layer_norm %x weight(%w2) axis = 1 epsilon = 1.0e-12 : (tensor<4x6x8xf16>, tensor<6x8xf16>) -> (tensor<4x6x8xf16>, tensor<4x1x1xf32>, tensor<4x1x1xf32>)
  %ln3, %ln3_mean, %ln3_rstd = fuse.layer_norm %x axis = 0 epsilon = 1.0e-05 : (tensor<4x6x8xf16>) -> (tensor<4x6x8xf16>, tensor<1x1x1xf32>, tensor<1x1x1xf32>)
  %rms = fuse.rms_norm %x weight(%w) axis = 2 epsilon = 1.0e-06 : (tensor<4x6x8xf16>, tensor<8xf16>) -> tensor<4x6x8xf16>
  %rms_plain = fuse.rms_norm %x axis = 1 epsilon = 1.0e-06 : (tensor<4x6x8xf16>) -> tensor<4x6x8xf16>
  %ce_mean = fuse.cross_entropy %logits, %labels : (tensor<3x4x5xf16>, tensor<3x4xi64>) -> tensor<f16>
  %ce_mean_ignore = fuse.cross_entropy %logits, %labels ignore_index = 2 : (tensor<3x4x5xf16>, tensor<3x4xi64>) -> tensor<f16>
  %ce_sum = fuse.cross_entropy %logits, %labels32 ignore_index = 2 reduction = sum : (tensor<3x4x5xf16>, tensor<3x4xi32>) -> tensor<f16>
  %ce_none = fuse.cross_entropy %logits, %labels ignore_index = 2 reduction = none : (tensor<3x4x5xf16>, tensor<3x4xi64>) -> tensor<3x4xf16>
  %ce_vec = fuse.cross_entropy %vec, %label : (tensor<5xf16>, tensor<i64>) -> tensor<f16>
  %dce_mean = fuse.cross_entropy_backward %dloss, %logits, %labels ignore_index = 2 : (tensor<f16>, tensor<3x4x5xf16>, tensor<3x4xi64>) -> tensor<3x4x5xf16>
  %dce_sum = fuse.cross_entropy_backward %dloss, %logits, %labels32 ignore_index = 2 reduction = sum : (tensor<f16>, tensor<3x4x5xf16>, tensor<3x4xi32>) -> tensor<3x4x5xf16>
  %dce_none = fuse.cross_entropy_backward %dlosses, %logits, %labels ignore_index = 2 reduction = none : (tensor<3x4xf16>, tensor<3x4x5xf16>, tensor<3x4xi64>) -> tensor<3x4x5xf16>
  %dce_vec = fuse.cross_entropy_backward %dloss, %vec, %label : (tensor<f16>, tensor<5xf16>, tensor<i64>) -> tensor<5xf16>
  return %gelu_erf, %gelu_tanh, %silu, %softmax_last, %softmax_mid, %log_softmax, %log_softmax_first, %ln, %ln_mean, %ln_rstd, %ln2, %ln2_mean, %ln2_rstd, %ln3, %ln3_mean, %ln3_rstd, %rms, %rms_plain, %ce_mean, %ce_mean_ignore, %ce_sum, %ce_none, %ce_vec, %dce_mean, %dce_sum, %dce_none, %dce_vec
    : tensor<4x6x8xf16>, tensor<4x6x8xf16>, tensor<4x6x8xf16>, tensor<4x6x8xf16>, tensor<4x6x8xf16>, tensor<4x6x8xf16>, tensor<4x6x8xf16>, tensor<4x6x8xf16>, tensor<4x6x1xf32>, tensor<4x6x1xf32>, tensor<4x6x8xf16>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x6x8xf16>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<4x6x8xf16>, tensor<4x6x8xf16>, tensor<f16>, tensor<f16>, tensor<f16>, tensor<3x4xf16>, tensor<f16>, tensor<3x4x5xf16>, tensor<3x4x5xf16>, tensor<3x4x5xf16>, tensor<5xf16>
}
