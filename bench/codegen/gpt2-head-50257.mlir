// A GPT-2 head's three GEMMs at B8 T1024 (bf16) over HF GPT-2's unaligned
// vocabulary of 50257: the logits, the input's and the weight's gradients.
// They run on padded copies (lib/Codegen/GemmAlignment.cpp); bench/NOTES.md
// (2026-11-28, seventh and eighth sessions) has their times from
//   fuse-run bench/codegen/gpt2-head-50257.mlir --device=cuda --iters 20 --profile
func.func @head(%x: tensor<8192x768xbf16>, %w: tensor<50257x768xbf16>, %dy: tensor<8192x50257xbf16>) -> (tensor<8192x50257xbf16>, tensor<8192x768xbf16>, tensor<50257x768xbf16>) {
  %logits = fuse.matmul %x, %w transpose_rhs : (tensor<8192x768xbf16>, tensor<50257x768xbf16>) -> tensor<8192x50257xbf16>
  %dx = fuse.matmul %dy, %w : (tensor<8192x50257xbf16>, tensor<50257x768xbf16>) -> tensor<8192x768xbf16>
  %dw = fuse.matmul %dy, %x transpose_lhs : (tensor<8192x50257xbf16>, tensor<8192x768xbf16>) -> tensor<50257x768xbf16>
  return %logits, %dx, %dw : tensor<8192x50257xbf16>, tensor<8192x768xbf16>, tensor<50257x768xbf16>
}
