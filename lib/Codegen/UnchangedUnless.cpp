//===- UnchangedUnless.cpp - Kernels that may change nothing --------------===//
//
// A training step that accumulates gradients runs its optimizer's update in
// the one graph every micro-batch calls: an input says whether this call
// updates, and each updated tensor is `select(apply, new, old)` with `old`
// the tensor itself, planned in place (so is a loss-scaled step that skips
// an overflow). On the calls that do not update, such a kernel reads
// parameters and optimizer state and writes them back unchanged: 12.8 ms of
// HF-defaults BERT-large's 100 ms step, three quarters of it for nothing.
// Where every output of a kernel is of that form, each under a condition
// that depends on scalars alone, the kernel evaluates the conditions first
// and returns when all keep the old values: exact, and the CUDA graph stays
// one. Where the conditions are one-element inputs, read as they are or
// compared with a constant, they also become the launch's guard terms
// (guardTerms): the executor then captures a run of such launches into a
// CUDA graph conditional node (GraphGuard.h), so those calls launch none of
// them.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

using namespace mlir;
using namespace mlir::fuse;

namespace fuse::codegen {

namespace {

/// `value` through broadcasts and reshapes, while they only add or drop
/// dimensions around one element: the scalar it repeats, or null.
Value scalarSource(Value value) {
  while (numElements(shapeOf(value)) != 1) {
    Operation *def = value.getDefiningOp();
    if (!def || !isa<BroadcastInDimOp, ReshapeOp>(def))
      return nullptr;
    value = def->getOperand(0);
  }
  return value;
}

/// Whether `value` is computed from fusion inputs of one element and
/// constants only.
bool readsScalarsOnly(Value value) {
  BodySlice slice = bodySlice(value);
  return llvm::none_of(slice.ops, [](Operation *op) { return isa<ReduceOp>(op); }) &&
         llvm::all_of(slice.arguments,
                      [](BlockArgument argument) { return numElements(shapeOf(argument)) == 1; });
}

/// The value of a splat constant `value` (in the body, or a fusion input
/// that is one), or none.
std::optional<double> splatValue(FusionOp fusion, Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value))
    value = fusion.getOperand(argument.getArgNumber());
  auto constant = value.getDefiningOp<ConstantOp>();
  auto elements = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                           : DenseElementsAttr();
  if (!elements || !elements.isSplat())
    return std::nullopt;
  if (isa<FloatType>(elements.getElementType()))
    return elements.getSplatValue<APFloat>().convertToDouble();
  if (elements.getElementType().isInteger(1))
    return elements.getSplatValue<APInt>().isZero() ? 0.0 : 1.0;
  return static_cast<double>(elements.getSplatValue<APInt>().getSExtValue());
}

/// The buffer of the one-element fusion input `value` (through broadcasts
/// and reshapes) when the guard kernel can read its type, or none.
std::optional<std::pair<runtime::BufferRef, DType>>
flagBuffer(FusionOp fusion, Value value, CodegenContext &context) {
  auto argument = dyn_cast_or_null<BlockArgument>(scalarSource(value));
  if (!argument)
    return std::nullopt;
  DType dtype = dtypeOf(argument);
  if (dtype != DType::I1 && dtype != DType::I32 && dtype != DType::I64 &&
      dtype != DType::F32)
    return std::nullopt;
  const ValueLocation &where = context.location(fusion.getOperand(argument.getArgNumber()));
  if (!where.buffer)
    return std::nullopt;
  return std::make_pair(*where.buffer, dtype);
}

CompareDirection mirrored(CompareDirection direction) {
  switch (direction) {
  case CompareDirection::LT: return CompareDirection::GT;
  case CompareDirection::LE: return CompareDirection::GE;
  case CompareDirection::GT: return CompareDirection::LT;
  case CompareDirection::GE: return CompareDirection::LE;
  default: return direction;
  }
}

} // namespace

std::vector<runtime::LaunchGuardTerm>
guardTerms(FusionOp fusion, const std::vector<KeptUnless> &kept, CodegenContext &context) {
  using Compare = runtime::LaunchGuardTerm::Compare;
  std::vector<runtime::LaunchGuardTerm> terms;
  for (const KeptUnless &output : kept) {
    runtime::LaunchGuardTerm term;
    // The output changes when its condition equals changesWhen.
    term.negate = !output.changesWhen;
    if (auto flag = flagBuffer(fusion, output.condition, context)) {
      std::tie(term.flag, term.dtype) = *flag;
      term.compare = Compare::Ne; // an i1 read as it is
    } else if (auto compare = output.condition.getDefiningOp<CompareOp>()) {
      CompareDirection direction = compare.getDirection();
      auto lhs = flagBuffer(fusion, compare.getLhs(), context);
      std::optional<double> constant = splatValue(fusion, scalarSource(compare.getRhs()));
      if (!lhs || !constant) {
        lhs = flagBuffer(fusion, compare.getRhs(), context);
        constant = splatValue(fusion, scalarSource(compare.getLhs()));
        direction = mirrored(direction);
      }
      if (!lhs || !constant)
        return {};
      std::tie(term.flag, term.dtype) = *lhs;
      term.compare = static_cast<Compare>(static_cast<uint32_t>(direction));
      term.constant = *constant;
    } else {
      return {};
    }
    if (llvm::find(terms, term) == terms.end())
      terms.push_back(term);
  }
  return terms;
}

std::vector<KeptUnless> keptUnless(FusionOp fusion, CodegenContext &context) {
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  std::vector<KeptUnless> kept;
  for (auto [k, value] : llvm::enumerate(yield.getOperands())) {
    auto select = value.getDefiningOp<SelectOp>();
    if (!select)
      return {};
    Value result = fusion.getResult(k);
    // The choice that is the output's own buffer, read at the element the
    // thread writes.
    auto isOwn = [&](Value choice) {
      auto argument = dyn_cast<BlockArgument>(choice);
      if (!argument || shapeOf(argument) != shapeOf(result))
        return false;
      const ValueLocation &where = context.location(fusion.getOperand(argument.getArgNumber()));
      return where.buffer && *where.buffer == context.buffer(result);
    };
    bool keptWhenFalse = isOwn(select.getOnFalse());
    if (!keptWhenFalse && !isOwn(select.getOnTrue()))
      return {};
    Value condition = scalarSource(select.getCondition());
    if (!condition || !readsScalarsOnly(condition))
      return {};
    // Fusion copies scalar ops into each reader: the outputs' conditions
    // are often equal but not one value, so each is kept with its own.
    kept.push_back(KeptUnless{condition, keptWhenFalse});
  }
  return kept;
}

} // namespace fuse::codegen
