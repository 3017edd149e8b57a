// An op name that fuse-decompose does not know in `keep` is an error when
// the pass is set up, before it touches the graph; the message lists the
// names it knows. Names are the ops' mnemonics: no `fuse.` prefix, lower case.
// RUN: fuse-opt %s -fuse-decompose=keep=layer_norm,layernorm -verify-diagnostics -o /dev/null
// RUN: not fuse-opt %s -fuse-decompose=keep=fuse.gelu 2>&1 | FileCheck %s --check-prefix=PREFIXED
// RUN: not fuse-opt %s -fuse-decompose=keep=Softmax 2>&1 | FileCheck %s --check-prefix=CASE
// RUN: not fuse-run %s --check-pipeline='fuse-decompose{keep=attention}' 2>&1 | FileCheck %s --check-prefix=CHECK-PIPELINE

// Naming attention, which is never decomposed, is allowed.
// RUN: fuse-opt %s -fuse-decompose=keep=scaled_dot_product_attention,scaled_dot_product_attention_backward -o /dev/null

// expected-error@unknown {{fuse-decompose: unknown op 'layernorm' in keep; valid names: argmax, cross_entropy, cross_entropy_backward, gelu, layer_norm, log_softmax, rms_norm, silu, softmax (scaled_dot_product_attention and scaled_dot_product_attention_backward are always kept)}}
// PREFIXED: error: fuse-decompose: unknown op 'fuse.gelu' in keep; valid names: argmax, cross_entropy, cross_entropy_backward, gelu, layer_norm, log_softmax, rms_norm, silu, softmax
// CASE: error: fuse-decompose: unknown op 'Softmax' in keep
// CHECK-PIPELINE: error: fuse-decompose: unknown op 'attention' in keep
// CHECK-PIPELINE-NEXT: fuse-run: error: the pipeline 'fuse-decompose{keep=attention}' failed on the graph
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = fuse.softmax %x, dim = 1 : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
