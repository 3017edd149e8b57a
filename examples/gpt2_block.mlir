// One GPT-2 transformer block (pre-norm), forward, at a small size: batch 2,
// sequence 16, width 64, 4 heads of 16, MLP width 256. Linear weights are in
// PyTorch's [out, in] layout, so every projection is a matmul with
// transpose_rhs. Arguments carry the PyTorch parameter names.
func.func @gpt2_block(
    %x: tensor<2x16x64xf32> {fuse.name = "hidden_states"},
    %ln1_w: tensor<64xf32> {fuse.name = "ln_1.weight"},
    %ln1_b: tensor<64xf32> {fuse.name = "ln_1.bias"},
    %attn_w: tensor<192x64xf32> {fuse.name = "attn.c_attn.weight"},
    %attn_b: tensor<192xf32> {fuse.name = "attn.c_attn.bias"},
    %proj_w: tensor<64x64xf32> {fuse.name = "attn.c_proj.weight"},
    %proj_b: tensor<64xf32> {fuse.name = "attn.c_proj.bias"},
    %ln2_w: tensor<64xf32> {fuse.name = "ln_2.weight"},
    %ln2_b: tensor<64xf32> {fuse.name = "ln_2.bias"},
    %fc_w: tensor<256x64xf32> {fuse.name = "mlp.c_fc.weight"},
    %fc_b: tensor<256xf32> {fuse.name = "mlp.c_fc.bias"},
    %out_w: tensor<64x256xf32> {fuse.name = "mlp.c_proj.weight"},
    %out_b: tensor<64xf32> {fuse.name = "mlp.c_proj.bias"}) -> tensor<2x16x64xf32> {
  // Attention.
  %h, %mean1, %rstd1 = fuse.layer_norm %x weight(%ln1_w) bias(%ln1_b) axis = 2 epsilon = 1.000000e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
  %qkv0 = fuse.matmul %h, %attn_w transpose_rhs : (tensor<2x16x64xf32>, tensor<192x64xf32>) -> tensor<2x16x192xf32>
  %qkv_bias = fuse.broadcast_in_dim %attn_b, dims = [2] : (tensor<192xf32>) -> tensor<2x16x192xf32>
  %qkv = fuse.add %qkv0, %qkv_bias : tensor<2x16x192xf32>
  %q = fuse.slice %qkv, start = [0, 0, 0], limit = [2, 16, 64], stride = [1, 1, 1] : (tensor<2x16x192xf32>) -> tensor<2x16x64xf32>
  %k = fuse.slice %qkv, start = [0, 0, 64], limit = [2, 16, 128], stride = [1, 1, 1] : (tensor<2x16x192xf32>) -> tensor<2x16x64xf32>
  %v = fuse.slice %qkv, start = [0, 0, 128], limit = [2, 16, 192], stride = [1, 1, 1] : (tensor<2x16x192xf32>) -> tensor<2x16x64xf32>
  %q_split = fuse.reshape %q : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
  %k_split = fuse.reshape %k : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
  %v_split = fuse.reshape %v : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
  %q_heads = fuse.transpose %q_split, permutation = [0, 2, 1, 3] : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
  %k_heads = fuse.transpose %k_split, permutation = [0, 2, 1, 3] : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
  %v_heads = fuse.transpose %v_split, permutation = [0, 2, 1, 3] : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
  %attn, %lse = fuse.scaled_dot_product_attention %q_heads, %k_heads, %v_heads causal scale = 2.500000e-01 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16xf32>)
  %attn_t = fuse.transpose %attn, permutation = [0, 2, 1, 3] : (tensor<2x4x16x16xf32>) -> tensor<2x16x4x16xf32>
  %attn_merged = fuse.reshape %attn_t : (tensor<2x16x4x16xf32>) -> tensor<2x16x64xf32>
  %proj0 = fuse.matmul %attn_merged, %proj_w transpose_rhs : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
  %proj_bias = fuse.broadcast_in_dim %proj_b, dims = [2] : (tensor<64xf32>) -> tensor<2x16x64xf32>
  %proj = fuse.add %proj0, %proj_bias : tensor<2x16x64xf32>
  %residual = fuse.add %x, %proj : tensor<2x16x64xf32>

  // MLP.
  %h2, %mean2, %rstd2 = fuse.layer_norm %residual weight(%ln2_w) bias(%ln2_b) axis = 2 epsilon = 1.000000e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
  %fc0 = fuse.matmul %h2, %fc_w transpose_rhs : (tensor<2x16x64xf32>, tensor<256x64xf32>) -> tensor<2x16x256xf32>
  %fc_bias = fuse.broadcast_in_dim %fc_b, dims = [2] : (tensor<256xf32>) -> tensor<2x16x256xf32>
  %fc = fuse.add %fc0, %fc_bias : tensor<2x16x256xf32>
  %act = fuse.gelu %fc, approximate = tanh : tensor<2x16x256xf32>
  %out0 = fuse.matmul %act, %out_w transpose_rhs : (tensor<2x16x256xf32>, tensor<64x256xf32>) -> tensor<2x16x64xf32>
  %out_bias = fuse.broadcast_in_dim %out_b, dims = [2] : (tensor<64xf32>) -> tensor<2x16x64xf32>
  %out = fuse.add %out0, %out_bias : tensor<2x16x64xf32>
  %y = fuse.add %residual, %out : tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}
