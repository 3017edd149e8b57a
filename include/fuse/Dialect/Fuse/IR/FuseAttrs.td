//===- FuseAttrs.td - Attributes of the fuse dialect ---------*- tablegen -*-===//
//
// Enumerations used by fuse ops. Each is a typed dialect attribute whose
// syntax is the bare keyword: `fuse.reduce sum ...` inside an op, and
// `#fuse.reduce_kind sum` in the generic form.
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

#endif // FUSE_ATTRS_TD
