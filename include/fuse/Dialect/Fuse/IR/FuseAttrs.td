//===- FuseAttrs.td - Attributes of the fuse dialect ---------*- tablegen -*-===//
//
// Enumerations used by fuse ops. Each is a typed dialect attribute whose
// syntax is the bare keyword: `fuse.reduce sum ...` inside an op, and
// `#fuse.reduce_kind sum` in the generic form. Then `#fuse.buffer`, the
// placement of a value's memory that fuse-plan-memory records.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_ATTRS_TD
#define FUSE_ATTRS_TD

include "fuse/Dialect/Fuse/IR/FuseBase.td"
include "mlir/IR/EnumAttr.td"

class Fuse_I32Enum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::mlir::fuse";
  let genSpecializedAttr = 0;
}

class Fuse_EnumAttr<EnumAttrInfo enumInfo, string mnemonic>
    : EnumAttr<Fuse_Dialect, enumInfo, mnemonic> {
  let assemblyFormat = "$value";
}

def Fuse_FusionKind : Fuse_I32Enum<"FusionKind",
    "schedule template a fusion is code-generated with", [
  I32EnumAttrCase<"Loop", 0, "loop">,
  I32EnumAttrCase<"RowReduction", 1, "row_reduction">,
  I32EnumAttrCase<"ColumnReduction", 2, "column_reduction">,
  I32EnumAttrCase<"GemmEpilogue", 3, "gemm_epilogue">,
  I32EnumAttrCase<"Attention", 4, "attention">
]>;
def Fuse_FusionKindAttr : Fuse_EnumAttr<Fuse_FusionKind, "fusion_kind">;

def Fuse_ReduceKind : Fuse_I32Enum<"ReduceKind", "reduction combiner", [
  I32EnumAttrCase<"Sum", 0, "sum">,
  I32EnumAttrCase<"Max", 1, "max">,
  I32EnumAttrCase<"Min", 2, "min">,
  I32EnumAttrCase<"Mean", 3, "mean">
]>;
def Fuse_ReduceKindAttr : Fuse_EnumAttr<Fuse_ReduceKind, "reduce_kind">;

def Fuse_CompareDirection : Fuse_I32Enum<"CompareDirection",
    "comparison predicate", [
  I32EnumAttrCase<"EQ", 0, "eq">,
  I32EnumAttrCase<"NE", 1, "ne">,
  I32EnumAttrCase<"LT", 2, "lt">,
  I32EnumAttrCase<"LE", 3, "le">,
  I32EnumAttrCase<"GT", 4, "gt">,
  I32EnumAttrCase<"GE", 5, "ge">
]>;
def Fuse_CompareDirectionAttr
    : Fuse_EnumAttr<Fuse_CompareDirection, "compare_direction">;

def Fuse_GeluApproximation : Fuse_I32Enum<"GeluApproximation",
    "GELU formula (PyTorch's `approximate` argument)", [
  I32EnumAttrCase<"Erf", 0, "erf">,
  I32EnumAttrCase<"Tanh", 1, "tanh">
]>;
def Fuse_GeluApproximationAttr
    : Fuse_EnumAttr<Fuse_GeluApproximation, "gelu_approximation">;

def Fuse_RandomDistribution : Fuse_I32Enum<"RandomDistribution",
    "distribution drawn by fuse.random", [
  I32EnumAttrCase<"Uniform", 0, "uniform">,
  I32EnumAttrCase<"Normal", 1, "normal">,
  I32EnumAttrCase<"Bernoulli", 2, "bernoulli">
]>;
def Fuse_RandomDistributionAttr
    : Fuse_EnumAttr<Fuse_RandomDistribution, "random_distribution">;

def Fuse_LossReduction : Fuse_I32Enum<"LossReduction",
    "how per-element losses are combined (PyTorch's `reduction`)", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"Mean", 1, "mean">,
  I32EnumAttrCase<"Sum", 2, "sum">
]>;
def Fuse_LossReductionAttr
    : Fuse_EnumAttr<Fuse_LossReduction, "loss_reduction">;

//===----------------------------------------------------------------------===//
// Memory planning.
//===----------------------------------------------------------------------===//

def Fuse_BufferAttr : AttrDef<Fuse_Dialect, "Buffer"> {
  let mnemonic = "buffer";
  let summary = "where a value's memory lives and when it holds the value";
  let description = [{
    The placement of one result's buffer, as `fuse-plan-memory` plans it.
    Ops directly in a function body carry one per result, in the array
    `fuse.buffers`. `size` is the buffer's bytes (the result type's; `i1`
    takes a byte) and `live = [first, last]` the positions in the function
    body (its top-level ops, the terminator excluded, counted from 0) from
    the op that writes the buffer to the last op that reads it, both
    included. Where the buffer is:

    - `offset = N`: at byte `N` of the function's arena, a multiple of 256.
      It occupies `size` rounded up to 256 bytes.
    - `external`: in memory the caller provides for a returned value.
    - `argument = N`: in argument #N's memory: a view of the argument, or a
      result written in place over argument #N, which must then be donated
      (`fuse.donated`); a returned value placed so is handed back in the
      argument's memory.

    A `fuse.reshape` is a view: its result carries the placement of the
    buffer it views (the same offset, size and live range), which lives
    until the view's last read. A result written in place over an input
    that dies at its op (elementwise ops, `loop` fusions) has that input's
    offset and a live range that starts where the input's ends.

    Example:

    ```mlir
    // %x, %w, %p (donated) and %g are arguments #0 to #3; %u and %y are
    // returned.
    %e = fuse.exp %x {fuse.buffers = [#fuse.buffer<offset = 0, size = 1024, live = [0, 2]>]} : tensor<16x16xf32>
    %u = fuse.mul %p, %g {fuse.buffers = [#fuse.buffer<argument = 2, size = 1024, live = [1, 3]>]} : tensor<16x16xf32>
    %n = fuse.neg %e {fuse.buffers = [#fuse.buffer<offset = 0, size = 1024, live = [2, 3]>]} : tensor<16x16xf32>
    %y = fuse.add %n, %w {fuse.buffers = [#fuse.buffer<external, size = 1024, live = [3, 3]>]} : tensor<16x16xf32>
    ```
  }];
  let parameters = (ins
    OptionalParameter<"std::optional<int64_t>",
                      "byte offset in the arena, if there">:$offset,
    OptionalParameter<"std::optional<int64_t>",
                      "the argument whose memory holds it, if one">:$argument,
    AttrParameter<"int64_t", "bytes of the value">:$size,
    AttrParameter<"int64_t", "position of the op that writes it">:$liveStart,
    AttrParameter<"int64_t", "position of the last op that reads it">:$liveEnd);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// In memory the caller provides for a returned value.
    bool isExternal() const { return !getOffset() && !getArgument(); }
  }];
}

#endif // FUSE_ATTRS_TD
