// bert (tiny): BertForSequenceClassification, 0.1M parameters, batch 2, sequence 32, float32
// Exported by: python -m fuse.export bert --config tiny --mode infer
// torch 2.11.0+cu130
func.func @bert_infer(
    %bert.embeddings.word_embeddings.weight: tensor<512x64xf32> {fuse.name = "bert.embeddings.word_embeddings.weight"},
    %bert.embeddings.position_embeddings.weight: tensor<64x64xf32> {fuse.name = "bert.embeddings.position_embeddings.weight"},
    %bert.embeddings.token_type_embeddings.weight: tensor<2x64xf32> {fuse.name = "bert.embeddings.token_type_embeddings.weight"},
    %bert.embeddings.LayerNorm.weight: tensor<64xf32> {fuse.name = "bert.embeddings.LayerNorm.weight"},
    %bert.embeddings.LayerNorm.bias: tensor<64xf32> {fuse.name = "bert.embeddings.LayerNorm.bias"},
    %bert.encoder.layer.0.attention.self.query.weight: tensor<64x64xf32> {fuse.name = "bert.encoder.layer.0.attention.self.query.weight"},
    %bert.encoder.layer.0.attention.self.query.bias: tensor<64xf32> {fuse.name = "bert.encoder.layer.0.attention.self.query.bias"},
    %bert.encoder.layer.0.attention.self.key.weight: tensor<64x64xf32> {fuse.name = "bert.encoder.layer.0.attention.self.key.weight"},
    %bert.encoder.layer.0.attention.self.key.bias: tensor<64xf32> {fuse.name = "bert.encoder.layer.0.attention.self.key.bias"},
    %bert.encoder.layer.0.attention.self.value.weight: tensor<64x64xf32> {fuse.name = "bert.encoder.layer.0.attention.self.value.weight"},
    %bert.encoder.layer.0.attention.self.value.bias: tensor<64xf32> {fuse.name = "bert.encoder.layer.0.attention.self.value.bias"},
    %bert.encoder.layer.0.attention.output.dense.weight: tensor<64x64xf32> {fuse.name = "bert.encoder.layer.0.attention.output.dense.weight"},
    %bert.encoder.layer.0.attention.output.dense.bias: tensor<64xf32> {fuse.name = "bert.encoder.layer.0.attention.output.dense.bias"},
    %bert.encoder.layer.0.attention.output.LayerNorm.weight: tensor<64xf32> {fuse.name = "bert.encoder.layer.0.attention.output.LayerNorm.weight"},
    %bert.encoder.layer.0.attention.output.LayerNorm.bias: tensor<64xf32> {fuse.name = "bert.encoder.layer.0.attention.output.LayerNorm.bias"},
    %bert.encoder.layer.0.intermediate.dense.weight: tensor<256x64xf32> {fuse.name = "bert.encoder.layer.0.intermediate.dense.weight"},
    %bert.encoder.layer.0.intermediate.dense.bias: tensor<256xf32> {fuse.name = "bert.encoder.layer.0.intermediate.dense.bias"},
    %bert.encoder.layer.0.output.dense.weight: tensor<64x256xf32> {fuse.name = "bert.encoder.layer.0.output.dense.weight"},
    %bert.encoder.layer.0.output.dense.bias: tensor<64xf32> {fuse.name = "bert.encoder.layer.0.output.dense.bias"},
    %bert.encoder.layer.0.output.LayerNorm.weight: tensor<64xf32> {fuse.name = "bert.encoder.layer.0.output.LayerNorm.weight"},
    %bert.encoder.layer.0.output.LayerNorm.bias: tensor<64xf32> {fuse.name = "bert.encoder.layer.0.output.LayerNorm.bias"},
    %bert.encoder.layer.1.attention.self.query.weight: tensor<64x64xf32> {fuse.name = "bert.encoder.layer.1.attention.self.query.weight"},
    %bert.encoder.layer.1.attention.self.query.bias: tensor<64xf32> {fuse.name = "bert.encoder.layer.1.attention.self.query.bias"},
    %bert.encoder.layer.1.attention.self.key.weight: tensor<64x64xf32> {fuse.name = "bert.encoder.layer.1.attention.self.key.weight"},
    %bert.encoder.layer.1.attention.self.key.bias: tensor<64xf32> {fuse.name = "bert.encoder.layer.1.attention.self.key.bias"},
    %bert.encoder.layer.1.attention.self.value.weight: tensor<64x64xf32> {fuse.name = "bert.encoder.layer.1.attention.self.value.weight"},
    %bert.encoder.layer.1.attention.self.value.bias: tensor<64xf32> {fuse.name = "bert.encoder.layer.1.attention.self.value.bias"},
    %bert.encoder.layer.1.attention.output.dense.weight: tensor<64x64xf32> {fuse.name = "bert.encoder.layer.1.attention.output.dense.weight"},
    %bert.encoder.layer.1.attention.output.dense.bias: tensor<64xf32> {fuse.name = "bert.encoder.layer.1.attention.output.dense.bias"},
    %bert.encoder.layer.1.attention.output.LayerNorm.weight: tensor<64xf32> {fuse.name = "bert.encoder.layer.1.attention.output.LayerNorm.weight"},
    %bert.encoder.layer.1.attention.output.LayerNorm.bias: tensor<64xf32> {fuse.name = "bert.encoder.layer.1.attention.output.LayerNorm.bias"},
    %bert.encoder.layer.1.intermediate.dense.weight: tensor<256x64xf32> {fuse.name = "bert.encoder.layer.1.intermediate.dense.weight"},
    %bert.encoder.layer.1.intermediate.dense.bias: tensor<256xf32> {fuse.name = "bert.encoder.layer.1.intermediate.dense.bias"},
    %bert.encoder.layer.1.output.dense.weight: tensor<64x256xf32> {fuse.name = "bert.encoder.layer.1.output.dense.weight"},
    %bert.encoder.layer.1.output.dense.bias: tensor<64xf32> {fuse.name = "bert.encoder.layer.1.output.dense.bias"},
    %bert.encoder.layer.1.output.LayerNorm.weight: tensor<64xf32> {fuse.name = "bert.encoder.layer.1.output.LayerNorm.weight"},
    %bert.encoder.layer.1.output.LayerNorm.bias: tensor<64xf32> {fuse.name = "bert.encoder.layer.1.output.LayerNorm.bias"},
    %bert.pooler.dense.weight: tensor<64x64xf32> {fuse.name = "bert.pooler.dense.weight"},
    %bert.pooler.dense.bias: tensor<64xf32> {fuse.name = "bert.pooler.dense.bias"},
    %classifier.weight: tensor<2x64xf32> {fuse.name = "classifier.weight"},
    %classifier.bias: tensor<2xf32> {fuse.name = "classifier.bias"},
    %input_ids: tensor<2x32xi64> {fuse.name = "input_ids", fuse.index_bound = 512 : i64})
    -> (tensor<2x2xf32> {fuse.name = "logits"}) {
  %embedding = fuse.gather %bert.embeddings.word_embeddings.weight[%input_ids], dim = 0 : (tensor<512x64xf32>, tensor<2x32xi64>) -> tensor<2x32x64xf32> loc(#loc48)
  %cst = fuse.constant dense<0> : tensor<2x32xi64> loc(#loc49)
  %embedding_1 = fuse.gather %bert.embeddings.token_type_embeddings.weight[%cst], dim = 0 : (tensor<2x64xf32>, tensor<2x32xi64>) -> tensor<2x32x64xf32> loc(#loc49)
  %add = fuse.add %embedding, %embedding_1 : tensor<2x32x64xf32> loc(#loc50)
  %cst_1 = fuse.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]]> : tensor<1x32xi64> loc(#loc51)
  %embedding_2 = fuse.gather %bert.embeddings.position_embeddings.weight[%cst_1], dim = 0 : (tensor<64x64xf32>, tensor<1x32xi64>) -> tensor<1x32x64xf32> loc(#loc51)
  %add_1 = fuse.broadcast_in_dim %embedding_2, dims = [0, 1, 2] : (tensor<1x32x64xf32>) -> tensor<2x32x64xf32> loc(#loc52)
  %add_1_1 = fuse.add %add, %add_1 : tensor<2x32x64xf32> loc(#loc52)
  %native_layer_norm, %native_layer_norm_1, %native_layer_norm_2 = fuse.layer_norm %add_1_1 weight(%bert.embeddings.LayerNorm.weight) bias(%bert.embeddings.LayerNorm.bias) axis = 2 epsilon = 1.0e-12 : (tensor<2x32x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x32x64xf32>, tensor<2x32x1xf32>, tensor<2x32x1xf32>) loc(#loc53)
  %view = fuse.reshape %native_layer_norm : (tensor<2x32x64xf32>) -> tensor<64x64xf32> loc(#loc57)
  %addmm = fuse.matmul %view, %bert.encoder.layer.0.attention.self.query.weight transpose_rhs : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc(#loc59)
  %addmm_1 = fuse.broadcast_in_dim %bert.encoder.layer.0.attention.self.query.bias, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32> loc(#loc59)
  %addmm_2 = fuse.add %addmm, %addmm_1 : tensor<64x64xf32> loc(#loc59)
  %view_1 = fuse.reshape %addmm_2 : (tensor<64x64xf32>) -> tensor<2x32x64xf32> loc(#loc60)
  %view_2 = fuse.reshape %view_1 : (tensor<2x32x64xf32>) -> tensor<2x32x4x16xf32> loc(#loc61)
  %permute_1 = fuse.transpose %view_2, permutation = [0, 2, 1, 3] : (tensor<2x32x4x16xf32>) -> tensor<2x4x32x16xf32> loc(#loc62)
  %view_3 = fuse.reshape %native_layer_norm : (tensor<2x32x64xf32>) -> tensor<64x64xf32> loc(#loc63)
  %addmm_1_1 = fuse.matmul %view_3, %bert.encoder.layer.0.attention.self.key.weight transpose_rhs : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc(#loc65)
  %addmm_1_2 = fuse.broadcast_in_dim %bert.encoder.layer.0.attention.self.key.bias, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32> loc(#loc65)
  %addmm_1_3 = fuse.add %addmm_1_1, %addmm_1_2 : tensor<64x64xf32> loc(#loc65)
  %view_4 = fuse.reshape %addmm_1_3 : (tensor<64x64xf32>) -> tensor<2x32x64xf32> loc(#loc66)
  %view_5 = fuse.reshape %view_4 : (tensor<2x32x64xf32>) -> tensor<2x32x4x16xf32> loc(#loc67)
  %permute_3 = fuse.transpose %view_5, permutation = [0, 2, 1, 3] : (tensor<2x32x4x16xf32>) -> tensor<2x4x32x16xf32> loc(#loc68)
  %view_6 = fuse.reshape %native_layer_norm : (tensor<2x32x64xf32>) -> tensor<64x64xf32> loc(#loc69)
  %addmm_2_1 = fuse.matmul %view_6, %bert.encoder.layer.0.attention.self.value.weight transpose_rhs : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc(#loc71)
  %addmm_2_2 = fuse.broadcast_in_dim %bert.encoder.layer.0.attention.self.value.bias, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32> loc(#loc71)
  %addmm_2_3 = fuse.add %addmm_2_1, %addmm_2_2 : tensor<64x64xf32> loc(#loc71)
  %view_7 = fuse.reshape %addmm_2_3 : (tensor<64x64xf32>) -> tensor<2x32x64xf32> loc(#loc72)
  %view_8 = fuse.reshape %view_7 : (tensor<2x32x64xf32>) -> tensor<2x32x4x16xf32> loc(#loc73)
  %permute_5 = fuse.transpose %view_8, permutation = [0, 2, 1, 3] : (tensor<2x32x4x16xf32>) -> tensor<2x4x32x16xf32> loc(#loc74)
  %_scaled_dot_product_flash_attention_for_cpu, %_scaled_dot_product_flash_attention_for_cpu_1 = fuse.scaled_dot_product_attention %permute_1, %permute_3, %permute_5 scale = 0.25 : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>) loc(#loc75)
  %permute_6 = fuse.transpose %_scaled_dot_product_flash_attention_for_cpu, permutation = [0, 2, 1, 3] : (tensor<2x4x32x16xf32>) -> tensor<2x32x4x16xf32> loc(#loc78)
  %view_9 = fuse.reshape %permute_6 : (tensor<2x32x4x16xf32>) -> tensor<2x32x64xf32> loc(#loc79)
  %view_10 = fuse.reshape %view_9 : (tensor<2x32x64xf32>) -> tensor<64x64xf32> loc(#loc80)
  %addmm_3 = fuse.matmul %view_10, %bert.encoder.layer.0.attention.output.dense.weight transpose_rhs : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc(#loc82)
  %addmm_3_1 = fuse.broadcast_in_dim %bert.encoder.layer.0.attention.output.dense.bias, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32> loc(#loc82)
  %addmm_3_2 = fuse.add %addmm_3, %addmm_3_1 : tensor<64x64xf32> loc(#loc82)
  %view_11 = fuse.reshape %addmm_3_2 : (tensor<64x64xf32>) -> tensor<2x32x64xf32> loc(#loc83)
  %add_2 = fuse.add %view_11, %native_layer_norm : tensor<2x32x64xf32> loc(#loc84)
  %native_layer_norm_1_1, %native_layer_norm_1_2, %native_layer_norm_1_3 = fuse.layer_norm %add_2 weight(%bert.encoder.layer.0.attention.output.LayerNorm.weight) bias(%bert.encoder.layer.0.attention.output.LayerNorm.bias) axis = 2 epsilon = 1.0e-12 : (tensor<2x32x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x32x64xf32>, tensor<2x32x1xf32>, tensor<2x32x1xf32>) loc(#loc85)
  %view_12 = fuse.reshape %native_layer_norm_1_1 : (tensor<2x32x64xf32>) -> tensor<64x64xf32> loc(#loc89)
  %addmm_4 = fuse.matmul %view_12, %bert.encoder.layer.0.intermediate.dense.weight transpose_rhs : (tensor<64x64xf32>, tensor<256x64xf32>) -> tensor<64x256xf32> loc(#loc91)
  %addmm_4_1 = fuse.broadcast_in_dim %bert.encoder.layer.0.intermediate.dense.bias, dims = [1] : (tensor<256xf32>) -> tensor<64x256xf32> loc(#loc91)
  %addmm_4_2 = fuse.add %addmm_4, %addmm_4_1 : tensor<64x256xf32> loc(#loc91)
  %view_13 = fuse.reshape %addmm_4_2 : (tensor<64x256xf32>) -> tensor<2x32x256xf32> loc(#loc92)
  %gelu = fuse.gelu %view_13, approximate = erf : tensor<2x32x256xf32> loc(#loc93)
  %view_14 = fuse.reshape %gelu : (tensor<2x32x256xf32>) -> tensor<64x256xf32> loc(#loc94)
  %addmm_5 = fuse.matmul %view_14, %bert.encoder.layer.0.output.dense.weight transpose_rhs : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x64xf32> loc(#loc96)
  %addmm_5_1 = fuse.broadcast_in_dim %bert.encoder.layer.0.output.dense.bias, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32> loc(#loc96)
  %addmm_5_2 = fuse.add %addmm_5, %addmm_5_1 : tensor<64x64xf32> loc(#loc96)
  %view_15 = fuse.reshape %addmm_5_2 : (tensor<64x64xf32>) -> tensor<2x32x64xf32> loc(#loc97)
  %add_3 = fuse.add %view_15, %native_layer_norm_1_1 : tensor<2x32x64xf32> loc(#loc98)
  %native_layer_norm_2_1, %native_layer_norm_2_2, %native_layer_norm_2_3 = fuse.layer_norm %add_3 weight(%bert.encoder.layer.0.output.LayerNorm.weight) bias(%bert.encoder.layer.0.output.LayerNorm.bias) axis = 2 epsilon = 1.0e-12 : (tensor<2x32x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x32x64xf32>, tensor<2x32x1xf32>, tensor<2x32x1xf32>) loc(#loc99)
  %view_16 = fuse.reshape %native_layer_norm_2_1 : (tensor<2x32x64xf32>) -> tensor<64x64xf32> loc(#loc103)
  %addmm_6 = fuse.matmul %view_16, %bert.encoder.layer.1.attention.self.query.weight transpose_rhs : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc(#loc105)
  %addmm_6_1 = fuse.broadcast_in_dim %bert.encoder.layer.1.attention.self.query.bias, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32> loc(#loc105)
  %addmm_6_2 = fuse.add %addmm_6, %addmm_6_1 : tensor<64x64xf32> loc(#loc105)
  %view_17 = fuse.reshape %addmm_6_2 : (tensor<64x64xf32>) -> tensor<2x32x64xf32> loc(#loc106)
  %view_18 = fuse.reshape %view_17 : (tensor<2x32x64xf32>) -> tensor<2x32x4x16xf32> loc(#loc107)
  %permute_11 = fuse.transpose %view_18, permutation = [0, 2, 1, 3] : (tensor<2x32x4x16xf32>) -> tensor<2x4x32x16xf32> loc(#loc108)
  %view_19 = fuse.reshape %native_layer_norm_2_1 : (tensor<2x32x64xf32>) -> tensor<64x64xf32> loc(#loc109)
  %addmm_7 = fuse.matmul %view_19, %bert.encoder.layer.1.attention.self.key.weight transpose_rhs : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc(#loc111)
  %addmm_7_1 = fuse.broadcast_in_dim %bert.encoder.layer.1.attention.self.key.bias, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32> loc(#loc111)
  %addmm_7_2 = fuse.add %addmm_7, %addmm_7_1 : tensor<64x64xf32> loc(#loc111)
  %view_20 = fuse.reshape %addmm_7_2 : (tensor<64x64xf32>) -> tensor<2x32x64xf32> loc(#loc112)
  %view_21 = fuse.reshape %view_20 : (tensor<2x32x64xf32>) -> tensor<2x32x4x16xf32> loc(#loc113)
  %permute_13 = fuse.transpose %view_21, permutation = [0, 2, 1, 3] : (tensor<2x32x4x16xf32>) -> tensor<2x4x32x16xf32> loc(#loc114)
  %view_22 = fuse.reshape %native_layer_norm_2_1 : (tensor<2x32x64xf32>) -> tensor<64x64xf32> loc(#loc115)
  %addmm_8 = fuse.matmul %view_22, %bert.encoder.layer.1.attention.self.value.weight transpose_rhs : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc(#loc117)
  %addmm_8_1 = fuse.broadcast_in_dim %bert.encoder.layer.1.attention.self.value.bias, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32> loc(#loc117)
  %addmm_8_2 = fuse.add %addmm_8, %addmm_8_1 : tensor<64x64xf32> loc(#loc117)
  %view_23 = fuse.reshape %addmm_8_2 : (tensor<64x64xf32>) -> tensor<2x32x64xf32> loc(#loc118)
  %view_24 = fuse.reshape %view_23 : (tensor<2x32x64xf32>) -> tensor<2x32x4x16xf32> loc(#loc119)
  %permute_15 = fuse.transpose %view_24, permutation = [0, 2, 1, 3] : (tensor<2x32x4x16xf32>) -> tensor<2x4x32x16xf32> loc(#loc120)
  %_scaled_dot_product_flash_attention_for_cpu_1_1, %_scaled_dot_product_flash_attention_for_cpu_1_2 = fuse.scaled_dot_product_attention %permute_11, %permute_13, %permute_15 scale = 0.25 : (tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>) loc(#loc121)
  %permute_16 = fuse.transpose %_scaled_dot_product_flash_attention_for_cpu_1_1, permutation = [0, 2, 1, 3] : (tensor<2x4x32x16xf32>) -> tensor<2x32x4x16xf32> loc(#loc124)
  %view_25 = fuse.reshape %permute_16 : (tensor<2x32x4x16xf32>) -> tensor<2x32x64xf32> loc(#loc125)
  %view_26 = fuse.reshape %view_25 : (tensor<2x32x64xf32>) -> tensor<64x64xf32> loc(#loc126)
  %addmm_9 = fuse.matmul %view_26, %bert.encoder.layer.1.attention.output.dense.weight transpose_rhs : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc(#loc128)
  %addmm_9_1 = fuse.broadcast_in_dim %bert.encoder.layer.1.attention.output.dense.bias, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32> loc(#loc128)
  %addmm_9_2 = fuse.add %addmm_9, %addmm_9_1 : tensor<64x64xf32> loc(#loc128)
  %view_27 = fuse.reshape %addmm_9_2 : (tensor<64x64xf32>) -> tensor<2x32x64xf32> loc(#loc129)
  %add_4 = fuse.add %view_27, %native_layer_norm_2_1 : tensor<2x32x64xf32> loc(#loc130)
  %native_layer_norm_3, %native_layer_norm_3_1, %native_layer_norm_3_2 = fuse.layer_norm %add_4 weight(%bert.encoder.layer.1.attention.output.LayerNorm.weight) bias(%bert.encoder.layer.1.attention.output.LayerNorm.bias) axis = 2 epsilon = 1.0e-12 : (tensor<2x32x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x32x64xf32>, tensor<2x32x1xf32>, tensor<2x32x1xf32>) loc(#loc131)
  %view_28 = fuse.reshape %native_layer_norm_3 : (tensor<2x32x64xf32>) -> tensor<64x64xf32> loc(#loc135)
  %addmm_10 = fuse.matmul %view_28, %bert.encoder.layer.1.intermediate.dense.weight transpose_rhs : (tensor<64x64xf32>, tensor<256x64xf32>) -> tensor<64x256xf32> loc(#loc137)
  %addmm_10_1 = fuse.broadcast_in_dim %bert.encoder.layer.1.intermediate.dense.bias, dims = [1] : (tensor<256xf32>) -> tensor<64x256xf32> loc(#loc137)
  %addmm_10_2 = fuse.add %addmm_10, %addmm_10_1 : tensor<64x256xf32> loc(#loc137)
  %view_29 = fuse.reshape %addmm_10_2 : (tensor<64x256xf32>) -> tensor<2x32x256xf32> loc(#loc138)
  %gelu_1 = fuse.gelu %view_29, approximate = erf : tensor<2x32x256xf32> loc(#loc139)
  %view_30 = fuse.reshape %gelu_1 : (tensor<2x32x256xf32>) -> tensor<64x256xf32> loc(#loc140)
  %addmm_11 = fuse.matmul %view_30, %bert.encoder.layer.1.output.dense.weight transpose_rhs : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x64xf32> loc(#loc142)
  %addmm_11_1 = fuse.broadcast_in_dim %bert.encoder.layer.1.output.dense.bias, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32> loc(#loc142)
  %addmm_11_2 = fuse.add %addmm_11, %addmm_11_1 : tensor<64x64xf32> loc(#loc142)
  %view_31 = fuse.reshape %addmm_11_2 : (tensor<64x64xf32>) -> tensor<2x32x64xf32> loc(#loc143)
  %add_5 = fuse.add %view_31, %native_layer_norm_3 : tensor<2x32x64xf32> loc(#loc144)
  %native_layer_norm_4, %native_layer_norm_4_1, %native_layer_norm_4_2 = fuse.layer_norm %add_5 weight(%bert.encoder.layer.1.output.LayerNorm.weight) bias(%bert.encoder.layer.1.output.LayerNorm.bias) axis = 2 epsilon = 1.0e-12 : (tensor<2x32x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x32x64xf32>, tensor<2x32x1xf32>, tensor<2x32x1xf32>) loc(#loc145)
  %select = fuse.slice %native_layer_norm_4, start = [0, 0, 0], limit = [2, 1, 64], stride = [1, 1, 1] : (tensor<2x32x64xf32>) -> tensor<2x1x64xf32> loc(#loc149)
  %select_1 = fuse.reshape %select : (tensor<2x1x64xf32>) -> tensor<2x64xf32> loc(#loc149)
  %addmm_12 = fuse.matmul %select_1, %bert.pooler.dense.weight transpose_rhs : (tensor<2x64xf32>, tensor<64x64xf32>) -> tensor<2x64xf32> loc(#loc151)
  %addmm_12_1 = fuse.broadcast_in_dim %bert.pooler.dense.bias, dims = [1] : (tensor<64xf32>) -> tensor<2x64xf32> loc(#loc151)
  %addmm_12_2 = fuse.add %addmm_12, %addmm_12_1 : tensor<2x64xf32> loc(#loc151)
  %tanh = fuse.tanh %addmm_12_2 : tensor<2x64xf32> loc(#loc152)
  %addmm_13 = fuse.matmul %tanh, %classifier.weight transpose_rhs : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x2xf32> loc(#loc154)
  %addmm_13_1 = fuse.broadcast_in_dim %classifier.bias, dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32> loc(#loc154)
  %addmm_13_2 = fuse.add %addmm_13, %addmm_13_1 : tensor<2x2xf32> loc(#loc154)
  return %addmm_13_2 : tensor<2x2xf32>
}
#loc48 = loc("embedding"("transformers/models/bert/modeling_bert.py":99:0))
#loc49 = loc("embedding_1"("transformers/models/bert/modeling_bert.py":100:0))
#loc50 = loc("add"("transformers/models/bert/modeling_bert.py":101:0))
#loc51 = loc("embedding_2"("transformers/models/bert/modeling_bert.py":103:0))
#loc52 = loc("add_1"("transformers/models/bert/modeling_bert.py":104:0))
#loc53 = loc("native_layer_norm"("transformers/models/bert/modeling_bert.py":106:0))
#loc57 = loc("view"("transformers/models/bert/modeling_bert.py":175:0))
#loc59 = loc("addmm"("transformers/models/bert/modeling_bert.py":175:0))
#loc60 = loc("view_1"("transformers/models/bert/modeling_bert.py":175:0))
#loc61 = loc("view_2"("transformers/models/bert/modeling_bert.py":175:0))
#loc62 = loc("permute_1"("transformers/models/bert/modeling_bert.py":175:0))
#loc63 = loc("view_3"("transformers/models/bert/modeling_bert.py":176:0))
#loc65 = loc("addmm_1"("transformers/models/bert/modeling_bert.py":176:0))
#loc66 = loc("view_4"("transformers/models/bert/modeling_bert.py":176:0))
#loc67 = loc("view_5"("transformers/models/bert/modeling_bert.py":176:0))
#loc68 = loc("permute_3"("transformers/models/bert/modeling_bert.py":176:0))
#loc69 = loc("view_6"("transformers/models/bert/modeling_bert.py":177:0))
#loc71 = loc("addmm_2"("transformers/models/bert/modeling_bert.py":177:0))
#loc72 = loc("view_7"("transformers/models/bert/modeling_bert.py":177:0))
#loc73 = loc("view_8"("transformers/models/bert/modeling_bert.py":177:0))
#loc74 = loc("permute_5"("transformers/models/bert/modeling_bert.py":177:0))
#loc75 = loc("_scaled_dot_product_flash_attention_for_cpu"("transformers/models/bert/modeling_bert.py":192:0))
#loc78 = loc("permute_6"("transformers/models/bert/modeling_bert.py":192:0))
#loc79 = loc("view_9"("transformers/models/bert/modeling_bert.py":202:0))
#loc80 = loc("view_10"("transformers/models/bert/modeling_bert.py":290:0))
#loc82 = loc("addmm_3"("transformers/models/bert/modeling_bert.py":290:0))
#loc83 = loc("view_11"("transformers/models/bert/modeling_bert.py":290:0))
#loc84 = loc("add_2"("transformers/models/bert/modeling_bert.py":292:0))
#loc85 = loc("native_layer_norm_1"("transformers/models/bert/modeling_bert.py":292:0))
#loc89 = loc("view_12"("transformers/models/bert/modeling_bert.py":335:0))
#loc91 = loc("addmm_4"("transformers/models/bert/modeling_bert.py":335:0))
#loc92 = loc("view_13"("transformers/models/bert/modeling_bert.py":335:0))
#loc93 = loc("gelu"("transformers/activations.py":89:0))
#loc94 = loc("view_14"("transformers/models/bert/modeling_bert.py":348:0))
#loc96 = loc("addmm_5"("transformers/models/bert/modeling_bert.py":348:0))
#loc97 = loc("view_15"("transformers/models/bert/modeling_bert.py":348:0))
#loc98 = loc("add_3"("transformers/models/bert/modeling_bert.py":350:0))
#loc99 = loc("native_layer_norm_2"("transformers/models/bert/modeling_bert.py":350:0))
#loc103 = loc("view_16"("transformers/models/bert/modeling_bert.py":175:0))
#loc105 = loc("addmm_6"("transformers/models/bert/modeling_bert.py":175:0))
#loc106 = loc("view_17"("transformers/models/bert/modeling_bert.py":175:0))
#loc107 = loc("view_18"("transformers/models/bert/modeling_bert.py":175:0))
#loc108 = loc("permute_11"("transformers/models/bert/modeling_bert.py":175:0))
#loc109 = loc("view_19"("transformers/models/bert/modeling_bert.py":176:0))
#loc111 = loc("addmm_7"("transformers/models/bert/modeling_bert.py":176:0))
#loc112 = loc("view_20"("transformers/models/bert/modeling_bert.py":176:0))
#loc113 = loc("view_21"("transformers/models/bert/modeling_bert.py":176:0))
#loc114 = loc("permute_13"("transformers/models/bert/modeling_bert.py":176:0))
#loc115 = loc("view_22"("transformers/models/bert/modeling_bert.py":177:0))
#loc117 = loc("addmm_8"("transformers/models/bert/modeling_bert.py":177:0))
#loc118 = loc("view_23"("transformers/models/bert/modeling_bert.py":177:0))
#loc119 = loc("view_24"("transformers/models/bert/modeling_bert.py":177:0))
#loc120 = loc("permute_15"("transformers/models/bert/modeling_bert.py":177:0))
#loc121 = loc("_scaled_dot_product_flash_attention_for_cpu_1"("transformers/models/bert/modeling_bert.py":192:0))
#loc124 = loc("permute_16"("transformers/models/bert/modeling_bert.py":192:0))
#loc125 = loc("view_25"("transformers/models/bert/modeling_bert.py":202:0))
#loc126 = loc("view_26"("transformers/models/bert/modeling_bert.py":290:0))
#loc128 = loc("addmm_9"("transformers/models/bert/modeling_bert.py":290:0))
#loc129 = loc("view_27"("transformers/models/bert/modeling_bert.py":290:0))
#loc130 = loc("add_4"("transformers/models/bert/modeling_bert.py":292:0))
#loc131 = loc("native_layer_norm_3"("transformers/models/bert/modeling_bert.py":292:0))
#loc135 = loc("view_28"("transformers/models/bert/modeling_bert.py":335:0))
#loc137 = loc("addmm_10"("transformers/models/bert/modeling_bert.py":335:0))
#loc138 = loc("view_29"("transformers/models/bert/modeling_bert.py":335:0))
#loc139 = loc("gelu_1"("transformers/activations.py":89:0))
#loc140 = loc("view_30"("transformers/models/bert/modeling_bert.py":348:0))
#loc142 = loc("addmm_11"("transformers/models/bert/modeling_bert.py":348:0))
#loc143 = loc("view_31"("transformers/models/bert/modeling_bert.py":348:0))
#loc144 = loc("add_5"("transformers/models/bert/modeling_bert.py":350:0))
#loc145 = loc("native_layer_norm_4"("transformers/models/bert/modeling_bert.py":350:0))
#loc149 = loc("select"("transformers/models/bert/modeling_bert.py":460:0))
#loc151 = loc("addmm_12"("transformers/models/bert/modeling_bert.py":461:0))
#loc152 = loc("tanh"("transformers/models/bert/modeling_bert.py":462:0))
#loc154 = loc("addmm_13"("transformers/models/bert/modeling_bert.py":1119:0))
