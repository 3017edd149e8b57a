//===- LossScaling.cpp - Dynamic loss scaling inside an f16 training step -===//
//
// f16 has a narrow range: small gradients flush to zero in the f16 matmuls
// and attention of the backward. PyTorch's GradScaler scales the loss up so
// they stay representable and divides the gradients back before the
// optimizer uses them; here the whole scheme lives in the graph, so a
// compiled step needs no host round trip:
//
//   - arguments `loss_scale` and `loss_scale.growth_tracker` (f32 scalars)
//     carry the scaler's state in, results of those names carry it out;
//   - the gradient of the loss, grad_loss of each cross_entropy_backward, is
//     multiplied by the scale;
//   - every gradient is multiplied by 1/scale where it leaves the part of the
//     graph that is linear in the scaled seed (LinearBackward.cpp), right
//     after its definition, for those uses only;
//   - `found_inf` (i1) says whether any unscaled gradient holds an inf or a
//     NaN: sum(g·0) is 0 if every element is finite and NaN otherwise, and
//     NaN != 0;
//   - each result that updates an argument of the same `fuse.name`
//     (parameters, optimizer state, step count) returns the argument when
//     found_inf, so an overflowing step changes nothing; results named
//     `grad.*` of a step without an optimizer are returned unscaled and the
//     caller reads found_inf;
//   - the scale is halved on found_inf (growth tracker reset), else doubled
//     after `growth-interval` finite steps in a row, as
//     torch._amp_update_scale_ does (backoff 0.5, growth 2, no doubling to
//     inf).
//
// New ops carry NameLocs (`loss_scale`, `loss_scale.unscale`, `found_inf`,
// `loss_scale.skip_update`, `loss_scale.update`) so diagnostics and cost
// tables say what they are.
//
//===----------------------------------------------------------------------===//

#include "AutoMixedPrecision.h"
#include "Decompose/Decompose.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-auto-mixed-precision"

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::decompose;

namespace {

constexpr StringLiteral kScaleName = "loss_scale";
constexpr StringLiteral kTrackerName = "loss_scale.growth_tracker";
constexpr StringLiteral kFoundInfName = "found_inf";

/// The `fuse.name` of argument (or result) `index`, or "".
StringRef argumentName(func::FuncOp func, unsigned index) {
  auto name = func.getArgAttrOfType<StringAttr>(index, FuseDialect::kNameAttr);
  return name ? name.getValue() : StringRef();
}
StringRef resultName(func::FuncOp func, unsigned index) {
  auto name =
      func.getResultAttrOfType<StringAttr>(index, FuseDialect::kNameAttr);
  return name ? name.getValue() : StringRef();
}

/// `{fuse.name = name}`.
DictionaryAttr nameAttrs(MLIRContext *context, StringRef name) {
  Builder builder(context);
  return builder.getDictionaryAttr(builder.getNamedAttr(
      FuseDialect::kNameAttr, builder.getStringAttr(name)));
}

/// What makes `func` a training step, for the error when it has no loss
/// gradient to scale; empty for an inference graph.
std::string backwardEvidence(func::FuncOp func) {
  bool attention = false;
  func.walk([&](AttentionBackwardOp) { attention = true; });
  if (attention)
    return "fuse.scaled_dot_product_attention_backward";
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (resultName(func, i).starts_with("grad."))
      return ("a result named '" + resultName(func, i) + "'").str();
  return "";
}

/// Fails, naming the clash, if `func` already has an argument or result of a
/// name loss scaling adds.
LogicalResult checkNamesAreFree(func::FuncOp func) {
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (llvm::is_contained({kScaleName, kTrackerName}, argumentName(func, i)))
      return func.emitError()
             << "cannot add dynamic loss scaling: argument #" << i
             << " is already named '" << argumentName(func, i)
             << "' (was fuse-auto-mixed-precision run twice?)";
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (llvm::is_contained({kScaleName, kTrackerName, kFoundInfName},
                           resultName(func, i)))
      return func.emitError()
             << "cannot add dynamic loss scaling: result #" << i
             << " is already named '" << resultName(func, i)
             << "' (was fuse-auto-mixed-precision run twice?)";
  return success();
}

/// `value` times the f32 scalar `factor`, computed in f32 and returned in
/// `value`'s type.
Value multiplyBy(ImplicitLocOpBuilder &b, Value value, Value factor) {
  Value wide = castToF32(b, value);
  Value product = MulOp::create(
      b, wide, broadcast(b, factor, tensorType(wide).getShape(), {}));
  return castTo(b, product, tensorType(value).getElementType());
}

/// A gradient at the edge of the linear part and the uses of it outside.
struct Gradient {
  Value value;
  SmallVector<OpOperand *> usesOutside;
};

/// The members of `linear` that something outside it reads, in op order.
SmallVector<Gradient> findGradients(Block &body,
                                    const llvm::DenseSet<Value> &linear) {
  SmallVector<Gradient> gradients;
  for (Operation &op : body) {
    for (Value result : op.getResults()) {
      if (!linear.contains(result))
        continue;
      Gradient gradient{result, {}};
      for (OpOperand &use : result.getUses())
        if (llvm::none_of(use.getOwner()->getResults(),
                          [&](Value v) { return linear.contains(v); }))
          gradient.usesOutside.push_back(&use);
      if (!gradient.usesOutside.empty())
        gradients.push_back(std::move(gradient));
    }
  }
  return gradients;
}

/// sum(value·0) in f32 over every dimension: 0 if `value` is finite, else
/// NaN.
Value nonFiniteProbe(ImplicitLocOpBuilder &b, Value value) {
  Value wide = castToF32(b, value);
  Value product = MulOp::create(b, wide, splatLike(b, wide, 0.0));
  int64_t rank = tensorType(product).getRank();
  if (rank == 0)
    return product;
  return reduce(b, ReduceKind::Sum, product, dimRange(0, rank),
                /*keepdim=*/false);
}

/// GradScaler's update of the scale and growth tracker: (new scale, new
/// tracker).
std::pair<Value, Value> updateScale(ImplicitLocOpBuilder &b, Value scale,
                                    Value tracker, Value foundInf,
                                    int64_t growthInterval) {
  RankedTensorType scalar = tensorType(scale);
  Value zero = floatSplat(b, scalar, 0.0);
  Value counted = AddOp::create(b, tracker, floatSplat(b, scalar, 1.0));
  Value grows = CompareOp::create(
      b, CompareDirection::EQ, counted,
      floatSplat(b, scalar, static_cast<double>(growthInterval)));
  Value grown = MulOp::create(b, scale, floatSplat(b, scalar, 2.0));
  // A doubling that overflows f32 is skipped (inf - inf is NaN, not 0).
  Value grownIsFinite = CompareOp::create(b, CompareDirection::EQ,
                                          SubOp::create(b, grown, grown), zero);
  Value finiteScale = SelectOp::create(
      b, AndOp::create(b, grows, grownIsFinite), grown, scale);
  Value finiteTracker = SelectOp::create(b, grows, zero, counted);
  Value backedOff = MulOp::create(b, scale, floatSplat(b, scalar, 0.5));
  return {SelectOp::create(b, foundInf, backedOff, finiteScale),
          SelectOp::create(b, foundInf, zero, finiteTracker)};
}

/// Makes every result that updates the argument of its `fuse.name` return
/// that argument instead when `foundInf`.
LogicalResult skipUpdatesOnInf(ImplicitLocOpBuilder &b, func::FuncOp func,
                               func::ReturnOp ret, Value foundInf) {
  llvm::StringMap<unsigned> argumentsByName;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (!argumentName(func, i).empty())
      argumentsByName[argumentName(func, i)] = i;
  // One broadcast of found_inf per shape.
  DenseMap<Type, Value> conditions;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto found = argumentsByName.find(resultName(func, i));
    if (resultName(func, i).empty() || found == argumentsByName.end())
      continue;
    Value argument = func.getArgument(found->second);
    Value updated = ret.getOperand(i);
    if (updated == argument)
      continue;
    if (updated.getType() != argument.getType())
      return func.emitError()
             << "cannot skip the update of '" << resultName(func, i)
             << "' when a gradient overflows: result #" << i << " has type "
             << updated.getType() << " but argument #" << found->second
             << " of that name has type " << argument.getType();
    ArrayRef<int64_t> shape = tensorType(updated).getShape();
    Value &condition = conditions[tensorType(updated).clone(b.getI1Type())];
    if (!condition)
      condition = broadcast(b, foundInf, shape, {});
    ret.setOperand(i, SelectOp::create(b, condition, argument, updated));
  }
  return success();
}

} // namespace

LogicalResult amp::addDynamicLossScaling(func::FuncOp func,
                                         int64_t growthInterval) {
  MLIRContext *context = func.getContext();
  SmallVector<CrossEntropyBackwardOp> lossGradients;
  WalkResult nested = func.walk([&](CrossEntropyBackwardOp op) {
    if (op->getParentOp() != func) {
      op.emitError() << "dynamic loss scaling needs the loss gradient at the "
                        "top level of the function, not inside "
                     << op->getParentOp()->getName()
                     << " (run fuse-auto-mixed-precision before "
                        "fuse-form-fusions)";
      return WalkResult::interrupt();
    }
    lossGradients.push_back(op);
    return WalkResult::advance();
  });
  if (nested.wasInterrupted())
    return failure();
  if (lossGradients.empty()) {
    std::string evidence = backwardEvidence(func);
    if (evidence.empty())
      return success(); // inference: no gradient, nothing to scale
    return func.emitError()
           << "dtype=f16 training step without a loss gradient: dynamic loss "
              "scaling needs the loss gradient, fuse.cross_entropy_backward, "
              "but the function has none (it has "
           << evidence << "); use dtype=bf16, which needs no loss scaling";
  }
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "dynamic loss scaling needs a function body "
                               "of one block";
  if (failed(checkNamesAreFree(func)))
    return failure();

  // The scaler's state comes in as two f32 scalars.
  auto scalar = RankedTensorType::get({}, Float32Type::get(context));
  unsigned numArguments = func.getNumArguments();
  Location scaleLoc = NameLoc::get(StringAttr::get(context, kScaleName));
  Location trackerLoc = NameLoc::get(StringAttr::get(context, kTrackerName));
  if (failed(func.insertArguments(
          {numArguments, numArguments}, {scalar, scalar},
          {nameAttrs(context, kScaleName), nameAttrs(context, kTrackerName)},
          {scaleLoc, trackerLoc})))
    return func.emitError() << "cannot add the loss scale arguments";
  Value scale = func.getArgument(numArguments);
  Value tracker = func.getArgument(numArguments + 1);
  Block &body = func.getBody().front();

  // Scale the seeds.
  ImplicitLocOpBuilder b(scaleLoc, context);
  SmallVector<Value> seeds;
  for (CrossEntropyBackwardOp lossGradient : lossGradients) {
    b.setInsertionPoint(lossGradient);
    Value scaled = multiplyBy(b, lossGradient.getGradLoss(), scale);
    lossGradient.getGradLossMutable().assign(scaled);
    seeds.push_back(scaled);
  }

  // Unscale each gradient where it leaves the linear part, and probe it.
  SmallVector<Gradient> gradients =
      findGradients(body, findLinearValues(body, seeds));
  LLVM_DEBUG(llvm::dbgs() << "loss scaling: " << gradients.size()
                          << " gradients to unscale in @" << func.getSymName()
                          << "\n");
  b.setInsertionPointToStart(&body);
  b.setLoc(NameLoc::get(StringAttr::get(context, "loss_scale.unscale")));
  Value inverse = ReciprocalOp::create(b, scale);
  SmallVector<Value> probes;
  for (Gradient &gradient : gradients) {
    Location at = gradient.value.getLoc();
    b.setInsertionPointAfterValue(gradient.value);
    b.setLoc(NameLoc::get(StringAttr::get(context, "loss_scale.unscale"), at));
    Value unscaled = multiplyBy(b, gradient.value, inverse);
    for (OpOperand *use : gradient.usesOutside)
      use->set(unscaled);
    b.setLoc(NameLoc::get(StringAttr::get(context, kFoundInfName), at));
    probes.push_back(nonFiniteProbe(b, unscaled));
  }

  // found_inf, the skipped update and the scale's update, before the return.
  auto ret = llvm::cast<func::ReturnOp>(body.getTerminator());
  b.setInsertionPoint(ret);
  b.setLoc(NameLoc::get(StringAttr::get(context, kFoundInfName)));
  Value zero = floatSplat(b, scalar, 0.0);
  Value total = zero;
  for (auto [index, probe] : llvm::enumerate(probes))
    total = index == 0 ? probe : AddOp::create(b, total, probe).getResult();
  Value foundInf = CompareOp::create(b, CompareDirection::NE, total, zero);
  b.setLoc(NameLoc::get(StringAttr::get(context, "loss_scale.skip_update")));
  if (failed(skipUpdatesOnInf(b, func, ret, foundInf)))
    return failure();
  b.setLoc(NameLoc::get(StringAttr::get(context, "loss_scale.update")));
  auto [newScale, newTracker] =
      updateScale(b, scale, tracker, foundInf, growthInterval);

  unsigned numResults = func.getNumResults();
  ret->insertOperands(ret->getNumOperands(), {newScale, newTracker, foundInf});
  if (failed(func.insertResults(
          {numResults, numResults, numResults},
          {scalar, scalar, foundInf.getType()},
          {nameAttrs(context, kScaleName), nameAttrs(context, kTrackerName),
           nameAttrs(context, kFoundInfName)})))
    return func.emitError() << "cannot add the loss scale results";
  return success();
}
