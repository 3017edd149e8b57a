//===- FuseBase.td - The fuse dialect and its type constraints -*- tablegen -*-===//
//
// The dialect definition and the tensor type constraints every op uses. Ops
// live in FuseOps.td, attributes in FuseAttrs.td.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_BASE_TD
#define FUSE_BASE_TD

include "mlir/IR/OpBase.td"

def Fuse_Dialect : Dialect {
  let name = "fuse";
  let cppNamespace = "::mlir::fuse";
  let summary = "Tensor-level transformer graphs for the Fuse compiler";
  let description = [{
    The `fuse` dialect holds transformer training and inference graphs as
    exported from PyTorch: value-semantic operations on ranked tensors with
    static shapes, with the element types `f32`, `f16`, `bf16`, `i64`, `i32`
    and `i1`. It covers what graphs contain after PyTorch's core ATen
    decompositions (elementwise math, shape manipulation, reductions,
    matmul), a few composite ops that a hand-written kernel does better than
    a generic fusion (softmax, normalisation, attention, cross entropy), and
    `fuse.fusion`, the region op whose body becomes one GPU kernel.

    Graphs are `func.func` operations in a module. Broadcasting is always
    explicit (`fuse.broadcast_in_dim`): elementwise ops take operands of one
    shape. Function arguments may carry the PyTorch name of the parameter or
    input they stand for, and results the name of the output they return:

    ```mlir
    func.func @step(%w: tensor<768x768xf32> {fuse.name = "h.0.attn.c_proj.weight"},
                    %ids: tensor<8x1024xi64> {fuse.name = "input_ids", fuse.index_bound = 50257 : i64})
        -> (tensor<f32> {fuse.name = "loss"}, tensor<768x768xf32> {fuse.name = "h.0.attn.c_proj.weight.grad"})
    ```

    `fuse.name` is a string, unique among a function's arguments and unique
    among its results; tools name arrays of inputs and outputs by it
    (unnamed ones are `arg<N>` and `out<N>`). `fuse.index_bound = N` on an
    integer argument says its values lie in `[0, N)` (token ids, labels):
    tools that make random inputs use it. `fuse.donated` (a unit attribute)
    on an argument gives its memory to the function: the caller does not
    read it afterwards, so memory planning may write a result over it in
    place (an optimizer's updated parameter over the parameter).
    `fuse.arena_offset = N` (i64, a multiple of 256) on an argument says the
    caller leaves its value in the function's arena at byte N instead of in
    memory of its own: a backward reads what its forward saved where the
    forward left it, and memory planning may reuse those bytes once they are
    read for the last time. On a result it says where the function leaves
    that result in the arena. `fuse.in_arena` (a unit attribute) on a result
    asks memory planning to choose that offset; the plan records it as
    `fuse.arena_offset` (an argument or a constant returned stays in the
    caller's memory, with no offset). Arguments at one offset are one value
    passed several times. A function with either runs in an arena its
    caller gives each run.

    Memory planning (`fuse-plan-memory`) records its plan as attributes:
    `fuse.buffers`, an array of `#fuse.buffer` with one entry per result, on
    every op directly in a function body that has a buffer, and
    `fuse.arena_size` and `fuse.arena_lower_bound` (bytes, i64) on each
    function and on the module:

    ```mlir
    module attributes {fuse.arena_lower_bound = 1024 : i64, fuse.arena_size = 1024 : i64} {
      func.func @f(%x: tensor<16x16xf32>) -> tensor<16x16xf32>
          attributes {fuse.arena_lower_bound = 1024 : i64, fuse.arena_size = 1024 : i64} {
        %e = fuse.exp %x {fuse.buffers = [#fuse.buffer<offset = 0, size = 1024, live = [0, 1]>]} : tensor<16x16xf32>
        %y = fuse.neg %e {fuse.buffers = [#fuse.buffer<external, size = 1024, live = [1, 1]>]} : tensor<16x16xf32>
        return %y : tensor<16x16xf32>
      }
    }
    ```

    A function or module may also bound the workspace that a GEMM's padded
    result takes at once (lib/Codegen/GemmAlignment.cpp), in bytes (i64,
    positive; 256 MiB where absent): `fuse.gemm_staging_bytes`.

    No other `fuse.*` attribute is allowed on arguments, results or
    operations.
  }];
  let useDefaultAttributePrinterParser = 1;
  // Rewrites of ops over empty tensors (EmptyTensorCanonicalization.cpp).
  let hasCanonicalizer = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Argument and result attribute: the PyTorch name of a graph input or
    /// output.
    static constexpr ::llvm::StringLiteral kNameAttr = "fuse.name";
    /// Argument attribute: an integer argument's values lie in [0, bound).
    static constexpr ::llvm::StringLiteral kIndexBoundAttr = "fuse.index_bound";
    /// Argument attribute (unit): the caller gives the argument's memory
    /// away; a result may be planned over it in place.
    static constexpr ::llvm::StringLiteral kDonatedAttr = "fuse.donated";
    /// Argument and result attribute (i64 bytes): the value is in the
    /// arena at this offset when the function starts (argument) or ends
    /// (result).
    static constexpr ::llvm::StringLiteral kArenaOffsetAttr =
        "fuse.arena_offset";
    /// Result attribute (unit): leave the result in the arena, at an offset
    /// memory planning chooses (and records as kArenaOffsetAttr).
    static constexpr ::llvm::StringLiteral kInArenaAttr = "fuse.in_arena";
    /// Operation attribute: one #fuse.buffer per result (memory planning).
    static constexpr ::llvm::StringLiteral kBuffersAttr = "fuse.buffers";
    /// Function and module attributes (i64 bytes): the planned arena's size
    /// and the lower bound any packing of its buffers needs.
    static constexpr ::llvm::StringLiteral kArenaSizeAttr = "fuse.arena_size";
    static constexpr ::llvm::StringLiteral kArenaLowerBoundAttr =
        "fuse.arena_lower_bound";
    /// Function and module attribute (i64 bytes, positive): the most
    /// workspace a GEMM's padded result takes at once; a larger one is
    /// made a block of rows at a time (code generation).
    static constexpr ::llvm::StringLiteral kGemmStagingBytesAttr =
        "fuse.gemm_staging_bytes";
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints. Static shapes only: every buffer is planned ahead of time.
//===----------------------------------------------------------------------===//

def Fuse_Tensor : StaticShapeTensorOf<[F32, F16, BF16, I64, I32, I1]>;
def Fuse_NumericTensor : StaticShapeTensorOf<[F32, F16, BF16, I64, I32]>;
def Fuse_FloatTensor : StaticShapeTensorOf<[F32, F16, BF16]>;
def Fuse_IndexTensor : StaticShapeTensorOf<[I64, I32]>;
def Fuse_BoolTensor : StaticShapeTensorOf<[I1]>;
// Philox seeds and offsets are 0-d i64 tensors so a step can be replayed with
// new random numbers without recompiling.
def Fuse_RngScalar : 0DTensorOf<[I64]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getI64Type())">;

class Fuse_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fuse_Dialect, mnemonic, traits>;

#endif // FUSE_BASE_TD
