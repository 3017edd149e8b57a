//===- Passes.td - Fuse pass declarations ---------------------*- tablegen -*-===//
//
// Every Fuse pass is declared here, named `fuse-<verb>-<noun>`, with its
// options; DEBUG_TYPE in its implementation equals that name.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_TRANSFORMS_PASSES_TD
#define FUSE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FusePrintCost : Pass<"fuse-print-cost", "ModuleOp"> {
  let summary = "print each function's FLOPs, bytes moved and kernel count";
  let description = [{
    Prints, for every function of the module in order, a table of its
    top-level ops (op, location name or `file:line:col`, FLOPs, bytes read,
    bytes written, kernels) in exact integers, then the totals, each also in
    decimal units, and a line `kernels: N`. The IR is not changed.

    FLOPs follow the MFU convention of PaLM and nanoGPT
    (`6·N + 12·L·H·Q·T` per token for a training step): matmul `2·M·N·K`
    per batch; attention forward `4·B·H·Tq·Tk·D` (QK^T and PV), causal or
    not, since PaLM's formula counts the whole score matrix; attention
    backward twice the forward; elementwise ops, transcendentals included,
    1 per output element; reductions 1 per input element; softmax and
    log_softmax 5, layer_norm 5 (+1 with weight, +1 with bias), rms_norm 3
    (+1 with weight), cross_entropy 4 and its backward 6 per element; shape
    ops, constants, iota and random 0.

    Bytes count each operand read once and each result written once, except:
    reshape is a view (0 bytes); gather and slice read only what they take;
    constant, iota and random only write; a splat constant is an immediate
    (0 bytes, for it and for its readers). A `fuse.fusion` reads its inputs
    and writes its results only, while its FLOPs are those of the ops inside.

    Kernels: every top-level op is one kernel (a fusion is one, a matmul is
    one GEMM call) except reshape and constant (baked in at compile time).

    Example:

    ```
    fuse-opt graph.mlir --fuse-print-cost=per-op=false -o /dev/null
    ```
  }];
  let options = [
    Option<"perOp", "per-op", "bool", /*default=*/"true",
           "Print a row per op before the totals">,
  ];
}

#endif // FUSE_TRANSFORMS_PASSES_TD
