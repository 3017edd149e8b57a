//===- Decompose.h - fuse-decompose's patterns and their helpers -*- C++ -*-===//
//
// fuse-decompose rewrites composite ops into primitives with one pattern per
// op family, in Decompose<Family>.cpp beside this header. Every pattern
// carries the op's name (without `fuse.`) as its debug label: the pass's
// `keep` option disables patterns by that label, and the set of labels is
// the set of names `keep` accepts.
//
// The helpers build primitives at one location. Result types come from the
// ops' type inference wherever an op has it; broadcast_in_dim, cast, iota and
// constants name theirs.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_DIALECT_FUSE_TRANSFORMS_DECOMPOSE_DECOMPOSE_H
#define FUSE_LIB_DIALECT_FUSE_TRANSFORMS_DECOMPOSE_DECOMPOSE_H

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fuse {

void populateDecomposeActivationPatterns(RewritePatternSet &patterns);
void populateDecomposeNormalizationPatterns(RewritePatternSet &patterns);
void populateDecomposeCrossEntropyPatterns(RewritePatternSet &patterns);
void populateDecomposeArgmaxPatterns(RewritePatternSet &patterns);

namespace decompose {

/// The name `keep` knows `OpTy` by: its mnemonic, "layer_norm" for
/// fuse.layer_norm.
template <typename OpTy> StringRef opLabel() {
  return OpTy::getOperationName().split('.').second;
}

/// A pattern rewriting one composite op, labelled with the op's name.
template <typename OpTy>
struct DecomposePattern : public OpRewritePattern<OpTy> {
  DecomposePattern(MLIRContext *context, StringRef debugName)
      : OpRewritePattern<OpTy>(context) {
    this->setDebugName(debugName);
    this->addDebugLabels(opLabel<OpTy>());
  }
};

/// `[begin, end)` as dims of a reduction or broadcast.
SmallVector<int64_t> dimRange(int64_t begin, int64_t end);

/// `value`'s tensor type.
RankedTensorType tensorType(Value value);

/// `value` with its elements converted to `elementType` (itself if they
/// already are).
Value castTo(ImplicitLocOpBuilder &b, Value value, Type elementType);

/// `value` in f32: f16 and bf16 are cast up, f32 stays.
Value castToF32(ImplicitLocOpBuilder &b, Value value);

/// A splat constant of `type` holding `value` (a float type) ...
Value floatSplat(ImplicitLocOpBuilder &b, RankedTensorType type, double value);
/// ... or an integer (i1 included) type.
Value intSplat(ImplicitLocOpBuilder &b, RankedTensorType type, int64_t value);

/// A splat float constant of `like`'s type.
Value splatLike(ImplicitLocOpBuilder &b, Value like, double value);

/// `fuse.reduce kind` of `value` over `dims`.
Value reduce(ImplicitLocOpBuilder &b, ReduceKind kind, Value value,
             ArrayRef<int64_t> dims, bool keepdim);

/// `value` broadcast to `shape`, operand dimension i going to result
/// dimension `dims[i]`; `value` itself when it already has that shape.
Value broadcast(ImplicitLocOpBuilder &b, Value value, ArrayRef<int64_t> shape,
                ArrayRef<int64_t> dims);

/// `value`, whose reduced dimensions were kept with size 1, broadcast back to
/// `shape` (each dimension to itself).
Value broadcastKept(ImplicitLocOpBuilder &b, Value value,
                    ArrayRef<int64_t> shape);

} // namespace decompose
} // namespace mlir::fuse

#endif // FUSE_LIB_DIALECT_FUSE_TRANSFORMS_DECOMPOSE_DECOMPOSE_H
