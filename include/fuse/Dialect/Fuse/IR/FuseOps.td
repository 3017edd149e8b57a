//===- FuseOps.td - Operations of the fuse dialect -----------*- tablegen -*-===//
//
// The op set covers transformer graphs after PyTorch's core ATen
// decompositions, forward and backward. Where the result type follows from
// the operands and attributes, the op implements InferTypeOpInterface: the
// builders need no result type and the verifier checks the written one.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_OPS_TD
#define FUSE_OPS_TD

include "fuse/Dialect/Fuse/IR/FuseBase.td"
include "fuse/Dialect/Fuse/IR/FuseAttrs.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Elementwise ops. Operands and result share one type: broadcasting is
// explicit, and so are dtype conversions (fuse.cast).
//===----------------------------------------------------------------------===//

class Fuse_ElementwiseOp<string mnemonic, list<Trait> traits = []>
    : Fuse_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
                                             SameOperandsAndResultType,
                                             InferTypeOpInterface])>;

class Fuse_UnaryOp<string mnemonic, TypeConstraint type, string summaryText,
                   string formula>
    : Fuse_ElementwiseOp<mnemonic> {
  let summary = summaryText;
  let description = "Computes `" # formula # "` for every element. "
    # "Floating-point math runs in f32 for f16 and bf16 data and is rounded "
    # "once to the result type.\n\nExample:\n\n```mlir\n"
    # "%y = fuse." # mnemonic # " %x : tensor<4x8xf32>\n```";
  let arguments = (ins type:$operand);
  let results = (outs type:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

class Fuse_BinaryOp<string mnemonic, TypeConstraint type, string summaryText,
                    string formula>
    : Fuse_ElementwiseOp<mnemonic> {
  let summary = summaryText;
  let description = "Computes `" # formula # "` for every pair of elements. "
    # "Both operands and the result have one type.\n\nExample:\n\n```mlir\n"
    # "%z = fuse." # mnemonic # " %x, %y : tensor<4x8xf32>\n```";
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Fuse_AddOp : Fuse_BinaryOp<"add", Fuse_NumericTensor, "elementwise addition", "lhs + rhs"> {
  // x + scatter_add(zeros, i, u) -> scatter_add(x, i, u).
  let hasCanonicalizer = 1;
}
def Fuse_SubOp : Fuse_BinaryOp<"sub", Fuse_NumericTensor, "elementwise subtraction", "lhs - rhs">;
def Fuse_MulOp : Fuse_BinaryOp<"mul", Fuse_NumericTensor, "elementwise multiplication", "lhs * rhs">;
def Fuse_DivOp : Fuse_BinaryOp<"div", Fuse_NumericTensor, "elementwise division",
    "lhs / rhs (integers truncate toward zero)">;
def Fuse_MaximumOp : Fuse_BinaryOp<"maximum", Fuse_NumericTensor, "elementwise maximum",
    "max(lhs, rhs) (NaN if either is NaN, as torch.maximum)">;
def Fuse_MinimumOp : Fuse_BinaryOp<"minimum", Fuse_NumericTensor, "elementwise minimum",
    "min(lhs, rhs) (NaN if either is NaN, as torch.minimum)">;
def Fuse_PowOp : Fuse_BinaryOp<"pow", Fuse_FloatTensor, "elementwise power", "lhs ^ rhs">;
def Fuse_AndOp : Fuse_BinaryOp<"and", Fuse_BoolTensor, "elementwise logical and", "lhs && rhs">;
def Fuse_OrOp : Fuse_BinaryOp<"or", Fuse_BoolTensor, "elementwise logical or", "lhs || rhs">;

def Fuse_NegOp : Fuse_UnaryOp<"neg", Fuse_NumericTensor, "elementwise negation", "-x">;
def Fuse_AbsOp : Fuse_UnaryOp<"abs", Fuse_NumericTensor, "elementwise absolute value", "|x|">;
def Fuse_NotOp : Fuse_UnaryOp<"not", Fuse_BoolTensor, "elementwise logical not", "!x">;
def Fuse_ExpOp : Fuse_UnaryOp<"exp", Fuse_FloatTensor, "elementwise exponential", "e^x">;
def Fuse_LogOp : Fuse_UnaryOp<"log", Fuse_FloatTensor, "elementwise natural logarithm", "ln(x)">;
def Fuse_TanhOp : Fuse_UnaryOp<"tanh", Fuse_FloatTensor, "elementwise hyperbolic tangent", "tanh(x)">;
def Fuse_SinOp : Fuse_UnaryOp<"sin", Fuse_FloatTensor, "elementwise sine", "sin(x) (x in radians)">;
def Fuse_CosOp : Fuse_UnaryOp<"cos", Fuse_FloatTensor, "elementwise cosine", "cos(x) (x in radians)">;
def Fuse_ErfOp : Fuse_UnaryOp<"erf", Fuse_FloatTensor, "elementwise error function", "erf(x)">;
def Fuse_SqrtOp : Fuse_UnaryOp<"sqrt", Fuse_FloatTensor, "elementwise square root", "sqrt(x)">;
def Fuse_RsqrtOp : Fuse_UnaryOp<"rsqrt", Fuse_FloatTensor, "elementwise reciprocal square root", "1 / sqrt(x)">;
def Fuse_ReciprocalOp : Fuse_UnaryOp<"reciprocal", Fuse_FloatTensor, "elementwise reciprocal", "1 / x">;
def Fuse_SigmoidOp : Fuse_UnaryOp<"sigmoid", Fuse_FloatTensor, "elementwise logistic sigmoid", "1 / (1 + e^-x)">;
def Fuse_ReluOp : Fuse_UnaryOp<"relu", Fuse_NumericTensor, "elementwise rectified linear unit", "max(x, 0)">;
def Fuse_SiluOp : Fuse_UnaryOp<"silu", Fuse_FloatTensor, "elementwise SiLU (swish)", "x * sigmoid(x)">;

def Fuse_GeluOp : Fuse_ElementwiseOp<"gelu"> {
  let summary = "elementwise Gaussian error linear unit";
  let description = [{
    `approximate = erf` computes `x * 0.5 * (1 + erf(x / sqrt(2)))`;
    `approximate = tanh` computes
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`, as
    `torch.nn.functional.gelu(x, approximate="tanh")` (GPT-2's "gelu_new").

    Example:

    ```mlir
    %y = fuse.gelu %x, approximate = tanh : tensor<4x3072xbf16>
    ```
  }];
  let arguments = (ins Fuse_FloatTensor:$operand,
                       Fuse_GeluApproximationAttr:$approximate);
  let results = (outs Fuse_FloatTensor:$result);
  let assemblyFormat = [{
    $operand `,` `approximate` `=` `` $approximate attr-dict `:` type($result)
  }];
}

def Fuse_CompareOp : Fuse_Op<"compare", [Pure, Elementwise,
    AllTypesMatch<["lhs", "rhs"]>, InferTypeOpAdaptor]> {
  let summary = "elementwise comparison producing i1";
  let description = [{
    Compares two tensors of one type element by element and returns an `i1`
    tensor of the same shape. Comparisons with NaN are false, except `ne`,
    which is true (IEEE 754).

    Example:

    ```mlir
    %mask = fuse.compare lt, %x, %y : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Fuse_CompareDirectionAttr:$direction,
                       Fuse_Tensor:$lhs, Fuse_Tensor:$rhs);
  let results = (outs Fuse_BoolTensor:$result);
  let assemblyFormat = "`` $direction `,` $lhs `,` $rhs attr-dict `:` type($lhs)";
}

def Fuse_SelectOp : Fuse_Op<"select", [Pure, Elementwise,
    AllTypesMatch<["on_true", "on_false", "result"]>,
    AllShapesMatch<["condition", "on_true"]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "elementwise choice between two tensors (torch.where)";
  let description = [{
    `result[i] = condition[i] ? on_true[i] : on_false[i]`. The condition is
    an `i1` tensor of the same shape as the two choices.

    Example:

    ```mlir
    %y = fuse.select %mask, %x, %zeros : tensor<4x8xi1>, tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Fuse_BoolTensor:$condition, Fuse_Tensor:$on_true,
                       Fuse_Tensor:$on_false);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` type($condition) `,`
    type($result)
  }];
}

def Fuse_CastOp : Fuse_Op<"cast", [Pure, Elementwise,
    AllShapesMatch<["operand", "result"]>]> {
  let summary = "elementwise element-type conversion";
  let description = [{
    Converts every element to the result's element type, keeping the shape.
    Float to float rounds to nearest even; float to integer truncates toward
    zero (as `tensor.to(dtype)` in PyTorch); to `i1` tests for non-zero.

    Example:

    ```mlir
    %y = fuse.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$operand);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `to` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Constants and generators.
//===----------------------------------------------------------------------===//

def Fuse_ConstantOp : Fuse_Op<"constant", [ConstantLike, Pure,
    AllTypesMatch<["value", "result"]>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "tensor constant, splat or dense";
  let description = [{
    A constant tensor. A splat (`dense<0.0>`) stores one value; larger dense
    constants hold every element.

    Example:

    ```mlir
    %zero = fuse.constant dense<0.000000e+00> : tensor<4x8xf32>
    %ids = fuse.constant dense<[0, 1, 2]> : tensor<3xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Fuse_IotaOp : Fuse_Op<"iota", [Pure]> {
  let summary = "tensor of indices along one dimension";
  let description = [{
    `result[i0, ..., in] = i_dim`: every element holds its own index along
    `dim` (torch.arange broadcast along the other dimensions).

    Example:

    ```mlir
    %positions = fuse.iota dim = 1 : tensor<8x1024xi64>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Fuse_NumericTensor:$result);
  let assemblyFormat = "`dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Fuse_RandomOp : Fuse_Op<"random", [Pure]> {
  let summary = "Philox random numbers (uniform, normal, bernoulli)";
  let description = [{
    Draws a tensor of random numbers with the Philox 4x32-10 counter-based
    generator keyed by `seed`, starting at counter `offset` (both 0-d `i64`
    tensors, as PyTorch's CUDA generator state). The same seed, offset and
    shape always give the same bits, on the CPU reference interpreter and on
    the GPU, which lets recomputation replay dropout masks exactly; the op
    is therefore pure, and two identical random ops are one value. Element
    `i` (row-major) uses Philox counter `offset + i / 4` (`offset + i / 2`
    for `normal`): a random op of N elements uses `ceil(N / 4)` counters
    (`ceil(N / 2)` for `normal`), so the next one should start after them
    (kernels/philox.cuh documents the layout).

    - `uniform`: floats in [0, 1), on a grid of 2^-24 (f32), 2^-11 (f16)
      or 2^-8 (bf16), so every value is exact in the result type;
    - `normal`: standard normal floats;
    - `bernoulli`: 1 (or `true`) with probability `p`, else 0; the result
      is a float or `i1` tensor.

    Example:

    ```mlir
    %keep = fuse.random bernoulli, %seed, %offset, p = 9.000000e-01 : tensor<8x1024x768xi1>
    %noise = fuse.random normal, %seed, %offset : tensor<16xf32>
    ```
  }];
  let arguments = (ins Fuse_RandomDistributionAttr:$distribution,
                       Fuse_RngScalar:$seed, Fuse_RngScalar:$offset,
                       OptionalAttr<F64Attr>:$p);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = [{
    `` $distribution `,` $seed `,` $offset (`,` `p` `=` $p^)? attr-dict `:`
    type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape ops.
//===----------------------------------------------------------------------===//

def Fuse_BroadcastInDimOp : Fuse_Op<"broadcast_in_dim", [Pure,
    AllElementTypesMatch<["operand", "result"]>]> {
  let summary = "explicit broadcast (torch.expand)";
  let description = [{
    Broadcasts `operand` to the result shape. `dims[i]` is the result
    dimension that operand dimension `i` maps to; `dims` is strictly
    increasing (a broadcast never transposes: use `fuse.transpose`). Each
    operand dimension is 1 (broadcast) or equal to the result dimension it
    maps to.

    Example:

    ```mlir
    %b = fuse.broadcast_in_dim %bias, dims = [2] : (tensor<768xf32>) -> tensor<8x1024x768xf32>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$operand, DenseI64ArrayAttr:$dims);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` $dims attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Fuse_ReshapeOp : Fuse_Op<"reshape", [Pure,
    AllElementTypesMatch<["operand", "result"]>]> {
  let summary = "reinterpret a tensor's shape (row-major order kept)";
  let description = [{
    Gives the elements of `operand`, in row-major order, a new shape with the
    same number of elements (torch.view / reshape).

    Example:

    ```mlir
    %flat = fuse.reshape %x : (tensor<8x1024x768xf32>) -> tensor<8192x768xf32>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$operand);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fuse_TransposeOp : Fuse_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "permute dimensions (torch.permute)";
  let description = [{
    `result.shape[i] = operand.shape[permutation[i]]`; `permutation` is a
    permutation of `[0, rank)`.

    Example:

    ```mlir
    %t = fuse.transpose %x, permutation = [0, 2, 1, 3] : (tensor<8x1024x12x64xbf16>) -> tensor<8x12x1024x64xbf16>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `permutation` `=` $permutation attr-dict `:`
    functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Fuse_SliceOp : Fuse_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "strided slice";
  let description = [{
    Takes, along each dimension `d`, the elements at `start[d]`,
    `start[d] + stride[d]`, ... below `limit[d]`, with
    `0 <= start[d] <= limit[d] <= shape[d]` and `stride[d] >= 1`.

    Example:

    ```mlir
    %q = fuse.slice %qkv, start = [0, 0], limit = [8192, 768], stride = [1, 1] : (tensor<8192x2304xbf16>) -> tensor<8192x768xbf16>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$operand, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$stride);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `start` `=` $start `,` `limit` `=` $limit `,` `stride` `=`
    $stride attr-dict `:` functional-type(operands, results)
  }];
}

def Fuse_ConcatOp : Fuse_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "concatenate tensors along one dimension (torch.cat)";
  let description = [{
    Joins one or more tensors of one element type whose shapes agree
    everywhere but along `dim`.

    Example:

    ```mlir
    %kv = fuse.concat dim(1) %k, %v : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x128xf32>
    ```
  }];
  let arguments = (ins Variadic<Fuse_Tensor>:$inputs,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = [{
    `dim` `(` $dim `)` $inputs attr-dict `:` functional-type($inputs, results)
  }];
}

def Fuse_GatherOp : Fuse_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let summary = "take slices by index (embedding lookup, index_select)";
  let description = [{
    `numpy.take(operand, indices, axis=dim)`: the result shape is
    `operand.shape[:dim] + indices.shape + operand.shape[dim+1:]`, and each
    index picks one slice of `operand` along `dim`. An embedding lookup is a
    gather along dimension 0 of the table. Indices must lie in
    `[0, operand.shape[dim])`: the reference interpreter rejects others.

    Example:

    ```mlir
    %emb = fuse.gather %wte[%tokens], dim = 0 : (tensor<50304x768xf32>, tensor<8x1024xi64>) -> tensor<8x1024x768xf32>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$operand, Fuse_IndexTensor:$indices,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = [{
    $operand `[` $indices `]` `,` `dim` `=` $dim attr-dict `:`
    functional-type(operands, results)
  }];
}

def Fuse_ScatterAddOp : Fuse_Op<"scatter_add", [Pure,
    AllTypesMatch<["dest", "result"]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "accumulate slices at indices (embedding backward)";
  let description = [{
    The adjoint of `fuse.gather`: starts from `dest` and adds each slice of
    `updates` into the slice of `dest` along `dim` that its index names;
    repeated indices accumulate. `updates` has the shape
    `dest.shape[:dim] + indices.shape + dest.shape[dim+1:]`.

    Example:

    ```mlir
    %dwte = fuse.scatter_add %zeros[%tokens], %demb, dim = 0 : (tensor<50304x768xf32>, tensor<8x1024xi64>, tensor<8x1024x768xf32>) -> tensor<50304x768xf32>
    ```
  }];
  let arguments = (ins Fuse_NumericTensor:$dest, Fuse_IndexTensor:$indices,
                       Fuse_NumericTensor:$updates,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Fuse_NumericTensor:$result);
  let assemblyFormat = [{
    $dest `[` $indices `]` `,` $updates `,` `dim` `=` $dim attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the result is accumulated in `dest`'s memory: `dest` is
    /// computed by an op of the same block (not an argument or a constant,
    /// which are not the step's to overwrite) and nothing else reads it.
    /// Memory planning then gives both one buffer, and a returned result
    /// makes `dest`'s writer write into the caller's memory.
    bool accumulatesInPlace();
  }];
}

//===----------------------------------------------------------------------===//
// Reductions.
//===----------------------------------------------------------------------===//

def Fuse_ReduceOp : Fuse_Op<"reduce", [Pure, InferTypeOpAdaptor]> {
  let summary = "sum, max, min or mean over a set of dimensions";
  let description = [{
    Reduces `operand` over `dims` (strictly increasing, non-empty). The
    reduced dimensions are dropped, or kept with size 1 under `keepdim`.
    Accumulation is in f32 for f16 and bf16 data (i64 for integers);
    `mean` is defined for floats only.

    Example:

    ```mlir
    %rowsum = fuse.reduce sum %x, dims = [1] : (tensor<4x8xf32>) -> tensor<4xf32>
    %mean = fuse.reduce mean %x, dims = [1] keepdim : (tensor<4x8xf32>) -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins Fuse_ReduceKindAttr:$kind, Fuse_NumericTensor:$operand,
                       DenseI64ArrayAttr:$dims, UnitAttr:$keepdim);
  let results = (outs Fuse_NumericTensor:$result);
  let assemblyFormat = [{
    `` $kind $operand `,` `dims` `=` $dims (`keepdim` $keepdim^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasCanonicalizer = 1;
}

def Fuse_ArgmaxOp : Fuse_Op<"argmax", [Pure, InferTypeOpAdaptor]> {
  let summary = "index of the largest element along a dimension";
  let description = [{
    Returns, as `i64`, the index of the largest element along `dim`; the
    first one on ties, and the first NaN if there is one (as torch.argmax).
    `dim` is dropped, or kept with size 1 under `keepdim`.

    Example:

    ```mlir
    %next = fuse.argmax %logits, dim = 1 : (tensor<8x50304xf32>) -> tensor<8xi64>
    ```
  }];
  let arguments = (ins Fuse_NumericTensor:$operand,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       UnitAttr:$keepdim);
  let results = (outs StaticShapeTensorOf<[I64]>:$result);
  let assemblyFormat = [{
    $operand `,` `dim` `=` $dim (`keepdim` $keepdim^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Fuse_CumsumOp : Fuse_Op<"cumsum", [Pure, SameOperandsAndResultType,
                                       InferTypeOpInterface]> {
  let summary = "inclusive prefix sum along one dimension (torch.cumsum)";
  let description = [{
    `result[..., i, ...] = sum(operand[..., 0..i, ...])` along `dim`: each
    element is the sum of the elements before it along `dim` and itself.
    The result has the operand's type: torch.cumsum's promotion of integer
    and boolean inputs to `i64` is an explicit `fuse.cast` first. Floats
    accumulate in f32 (f16 and bf16 data too) and each element is rounded
    once to the result type; integers accumulate in i64 and wrap to the
    result's width. The backward of a float cumsum is a cumsum of the
    reversed gradient, reversed again.

    Example:

    ```mlir
    %positions = fuse.cumsum %mask, dim = 1 : tensor<8x512xi64>
    ```
  }];
  let arguments = (ins Fuse_NumericTensor:$operand,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Fuse_NumericTensor:$result);
  let assemblyFormat = "$operand `,` `dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra.
//===----------------------------------------------------------------------===//

def Fuse_MatmulOp : Fuse_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "batched matrix multiplication with optional transposes";
  let description = [{
    Multiplies the last two dimensions of `lhs` (`[..., M, K]`, or
    `[..., K, M]` under `transpose_lhs`) and `rhs` (`[..., K, N]`, or
    `[..., N, K]` under `transpose_rhs`). Leading (batch) dimensions of
    `lhs` and `rhs` are equal, or `rhs` is a plain matrix shared by every
    batch (a linear layer's weight). Both operands have one float element
    type, which the result keeps; accumulation is in f32.

    Example:

    ```mlir
    %y = fuse.matmul %x, %w transpose_rhs : (tensor<8x1024x768xbf16>, tensor<2304x768xbf16>) -> tensor<8x1024x2304xbf16>
    %s = fuse.matmul %q, %k transpose_rhs : (tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>) -> tensor<8x12x1024x1024xbf16>
    ```
  }];
  let arguments = (ins Fuse_FloatTensor:$lhs, Fuse_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Fuse_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Composite ops: kept whole where a hand-written kernel beats a generic
// fusion; fuse-decompose rewrites the others into the primitives above.
//===----------------------------------------------------------------------===//

class Fuse_SoftmaxLikeOp<string mnemonic, string formula>
    : Fuse_Op<mnemonic, [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = mnemonic # " along one dimension";
  let description = "Computes `" # formula # "` along `dim`, with max "
    # "subtraction for stability and f32 statistics. A row that is entirely "
    # "-inf gives NaN, as in PyTorch.\n\nExample:\n\n```mlir\n"
    # "%p = fuse." # mnemonic # " %scores, dim = 3 : tensor<8x12x1024x1024xf32>\n```";
  let arguments = (ins Fuse_FloatTensor:$operand,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Fuse_FloatTensor:$result);
  let assemblyFormat = "$operand `,` `dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Fuse_SoftmaxOp : Fuse_SoftmaxLikeOp<"softmax", "exp(x - max) / sum(exp(x - max))">;
def Fuse_LogSoftmaxOp : Fuse_SoftmaxLikeOp<"log_softmax", "x - max - log(sum(exp(x - max)))">;

def Fuse_LayerNormOp : Fuse_Op<"layer_norm", [Pure, InferTypeOpAdaptor,
    AttrSizedOperandSegments]> {
  let summary = "layer normalisation returning output, mean and rstd";
  let description = [{
    Normalises over the trailing dimensions from `axis` on:
    `out = (x - mean) * rstd * weight + bias` with
    `rstd = 1 / sqrt(var + epsilon)` (biased variance), as
    `torch.native_layer_norm`. `weight` and `bias` are optional and have the
    normalised shape (`input.shape[axis:]`) and the input's element type.
    `mean` and `rstd` are f32 and keep the normalised dimensions with size 1,
    for the backward.

    Example:

    ```mlir
    %y, %mean, %rstd = fuse.layer_norm %x weight(%g) bias(%b) axis = 2 epsilon = 9.9999999999999995E-8 : (tensor<8x1024x768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<8x1024x768xf32>, tensor<8x1024x1xf32>, tensor<8x1024x1xf32>)
    ```
  }];
  let arguments = (ins Fuse_FloatTensor:$input,
                       Optional<Fuse_FloatTensor>:$weight,
                       Optional<Fuse_FloatTensor>:$bias,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis,
                       F64Attr:$epsilon);
  let results = (outs Fuse_FloatTensor:$output,
                      StaticShapeTensorOf<[F32]>:$mean,
                      StaticShapeTensorOf<[F32]>:$rstd);
  let assemblyFormat = [{
    $input (`weight` `(` $weight^ `)`)? (`bias` `(` $bias^ `)`)? `axis` `=`
    $axis `epsilon` `=` $epsilon attr-dict `:` functional-type(operands, results)
  }];
}

def Fuse_RmsNormOp : Fuse_Op<"rms_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "root-mean-square normalisation";
  let description = [{
    `out = x * rsqrt(mean(x^2) + epsilon) * weight` over the trailing
    dimensions from `axis` on (Llama's RMSNorm). `weight` is optional and
    has the normalised shape and the input's element type.

    Example:

    ```mlir
    %y = fuse.rms_norm %x weight(%g) axis = 2 epsilon = 9.9999999999999995E-7 : (tensor<8x1024x4096xf32>, tensor<4096xf32>) -> tensor<8x1024x4096xf32>
    ```
  }];
  let arguments = (ins Fuse_FloatTensor:$input,
                       Optional<Fuse_FloatTensor>:$weight,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis,
                       F64Attr:$epsilon);
  let results = (outs Fuse_FloatTensor:$output);
  let assemblyFormat = [{
    $input (`weight` `(` $weight^ `)`)? `axis` `=` $axis `epsilon` `=`
    $epsilon attr-dict `:` functional-type(operands, results)
  }];
}

// Attributes and optional operands shared by attention forward and backward.
defvar Fuse_AttentionOptions = (ins
    Optional<Fuse_Tensor>:$mask,
    Optional<Fuse_RngScalar>:$seed,
    Optional<Fuse_RngScalar>:$offset,
    UnitAttr:$causal,
    F64Attr:$scale,
    DefaultValuedAttr<F64Attr, "0.0">:$dropout_p);

defvar Fuse_AttentionOptionsFormat = [{
    (`mask` `(` $mask^ `)`)? (`rng` `(` $seed^ `,` $offset `)`)?
    (`causal` $causal^)? `scale` `=` $scale (`dropout_p` `=` $dropout_p^)?
    attr-dict `:` functional-type(operands, results)
}];

def Fuse_AttentionOp : Fuse_Op<"scaled_dot_product_attention", [Pure,
    InferTypeOpAdaptor, AttrSizedOperandSegments]> {
  let summary = "fused scaled dot-product attention, forward";
  let description = [{
    `out = dropout(softmax(scale * Q K^T + mask)) V` for
    `query: [B, Hq, Tq, D]`, `key: [B, Hkv, Tk, D]`, `value: [B, Hkv, Tk, Dv]`
    with one float element type. `Hq` is a multiple of `Hkv` (grouped-query
    attention: query head `h` reads key/value head `h / (Hq / Hkv)`).

    - `mask` (optional): added to the scores (float, the query's element
      type) or keeping the positions where it is true (`i1`); shape
      `[B|1, Hq|1, Tq|1, Tk]`. Not allowed together with `causal`.
    - `causal`: query `i` sees keys `j <= i` (top-left aligned, as PyTorch).
    - `dropout_p` > 0 needs `rng(%seed, %offset)`, the Philox state of
      fuse.random.

    Returns the output `[B, Hq, Tq, Dv]` and the f32 log-sum-exp of the
    scaled scores `[B, Hq, Tq]`, which the backward reuses.

    Example:

    ```mlir
    %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 1.250000e-01 : (tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>) -> (tensor<8x12x1024x64xbf16>, tensor<8x12x1024xf32>)
    ```
  }];
  let arguments = !con((ins Fuse_FloatTensor:$query, Fuse_FloatTensor:$key,
                            Fuse_FloatTensor:$value), Fuse_AttentionOptions);
  let results = (outs Fuse_FloatTensor:$output,
                      StaticShapeTensorOf<[F32]>:$logsumexp);
  let assemblyFormat = !strconcat("$query `,` $key `,` $value ",
                                  Fuse_AttentionOptionsFormat);
  let hasCanonicalizer = 1;
}

def Fuse_AttentionBackwardOp : Fuse_Op<"scaled_dot_product_attention_backward",
    [Pure, InferTypeOpAdaptor, AttrSizedOperandSegments]> {
  let summary = "fused scaled dot-product attention, backward";
  let description = [{
    Given the gradient of the output, the forward's operands, its output and
    log-sum-exp, and the same mask, causal flag, scale and dropout state as
    the forward, returns the gradients of query, key and value (each with
    its operand's type). Dropout masks are regenerated from `rng`, never
    stored.

    Example:

    ```mlir
    %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %do, %q, %k, %v, %o, %lse causal scale = 1.250000e-01 : (tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>, tensor<8x12x1024xf32>) -> (tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>)
    ```
  }];
  let arguments = !con((ins Fuse_FloatTensor:$grad_output,
                            Fuse_FloatTensor:$query, Fuse_FloatTensor:$key,
                            Fuse_FloatTensor:$value, Fuse_FloatTensor:$output,
                            StaticShapeTensorOf<[F32]>:$logsumexp),
                       Fuse_AttentionOptions);
  let results = (outs Fuse_FloatTensor:$grad_query, Fuse_FloatTensor:$grad_key,
                      Fuse_FloatTensor:$grad_value);
  let assemblyFormat = !strconcat(
    "$grad_output `,` $query `,` $key `,` $value `,` $output `,` $logsumexp ",
    Fuse_AttentionOptionsFormat);
  let hasCanonicalizer = 1;
}

// Attributes shared by cross entropy forward and backward.
defvar Fuse_CrossEntropyOptions = (ins
    DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
    DefaultValuedAttr<Fuse_LossReductionAttr, "LossReduction::Mean">:$reduction);

defvar Fuse_CrossEntropyOptionsFormat = [{
    (`ignore_index` `=` $ignore_index^)? (`reduction` `=` `` $reduction^)?
    attr-dict `:` functional-type(operands, results)
}];

def Fuse_CrossEntropyOp : Fuse_Op<"cross_entropy", [Pure, InferTypeOpAdaptor]> {
  let summary = "softmax cross-entropy loss over the last dimension";
  let description = [{
    `loss[i] = logsumexp(logits[i, :]) - logits[i, labels[i]]` for logits
    `[..., C]` (classes last) and integer labels `[...]`. Positions whose
    label equals `ignore_index` contribute 0 and are not counted. With
    `reduction = mean` (default) the result is the sum over counted
    positions divided by their number (NaN when none is counted, as
    PyTorch); `sum` adds them; `none` returns the per-position losses. The
    result has the logits' element type.

    Example:

    ```mlir
    %loss = fuse.cross_entropy %logits, %labels : (tensor<8x1024x50304xf32>, tensor<8x1024xi64>) -> tensor<f32>
    %each = fuse.cross_entropy %logits, %labels ignore_index = 0 reduction = none : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<4xf32>
    ```
  }];
  let arguments = !con((ins Fuse_FloatTensor:$logits, Fuse_IndexTensor:$labels),
                       Fuse_CrossEntropyOptions);
  let results = (outs Fuse_FloatTensor:$loss);
  let assemblyFormat = !strconcat("$logits `,` $labels ",
                                  Fuse_CrossEntropyOptionsFormat);
}

def Fuse_CrossEntropyBackwardOp : Fuse_Op<"cross_entropy_backward", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "gradient of fuse.cross_entropy with respect to the logits";
  let description = [{
    `grad_logits = (softmax(logits) - onehot(labels)) * g` per position,
    where `g` is the incoming gradient of that position's loss (divided by
    the number of counted positions under `reduction = mean`) and 0 where
    the label is `ignore_index`. `grad_loss` has the shape of the forward's
    loss; the result has the logits' type.

    Example:

    ```mlir
    %dlogits = fuse.cross_entropy_backward %dloss, %logits, %labels : (tensor<f32>, tensor<8x1024x50304xf32>, tensor<8x1024xi64>) -> tensor<8x1024x50304xf32>
    ```
  }];
  let arguments = !con((ins Fuse_FloatTensor:$grad_loss,
                            Fuse_FloatTensor:$logits, Fuse_IndexTensor:$labels),
                       Fuse_CrossEntropyOptions);
  let results = (outs Fuse_FloatTensor:$grad_logits);
  let assemblyFormat = !strconcat("$grad_loss `,` $logits `,` $labels ",
                                  Fuse_CrossEntropyOptionsFormat);
}

//===----------------------------------------------------------------------===//
// Fusion regions.
//===----------------------------------------------------------------------===//

def Fuse_FusionOp : Fuse_Op<"fusion", [IsolatedFromAbove, SingleBlock,
    RecursiveMemoryEffects]> {
  let summary = "a group of ops that becomes one kernel";
  let description = [{
    The body computes the results from the block arguments, which stand for
    `inputs` one to one (same types), and ends with `fuse.yield`. The region
    is isolated from above: everything a kernel reads is an explicit input.
    `kind` names the schedule template the code generator uses.

    Example:

    ```mlir
    %y = fuse.fusion loop (%x, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>, %c: tensor<4x8xf32>):
      %s = fuse.add %a, %c : tensor<4x8xf32>
      %r = fuse.relu %s : tensor<4x8xf32>
      fuse.yield %r : tensor<4x8xf32>
    }
    ```
  }];
  let arguments = (ins Fuse_FusionKindAttr:$kind, Variadic<Fuse_Tensor>:$inputs);
  let results = (outs Variadic<Fuse_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `` $kind ` ` `(` $inputs `)` attr-dict `:` functional-type($inputs, results)
    $body
  }];
  let hasRegionVerifier = 1;
}

def Fuse_YieldOp : Fuse_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"FusionOp">]> {
  let summary = "returns a fusion's results";
  let description = [{
    Ends a `fuse.fusion` body; its operands become the fusion's results.

    Example:

    ```mlir
    fuse.yield %r, %s : tensor<4x8xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<Fuse_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // FUSE_OPS_TD
