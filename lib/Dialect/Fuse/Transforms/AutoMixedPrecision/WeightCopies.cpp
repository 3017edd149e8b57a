//===- WeightCopies.cpp - A training step keeps its 16-bit weights --------===//
//
// The precision policy casts every f32 weight a matmul reads to the 16-bit
// type at the start of the step. In a step that also updates the weight
// (an in-graph optimizer), that cast reads 4 bytes and writes 2 per
// parameter on every call, though the weight changes only at the update:
// with accumulation over N micro-batches, N times per change. Here the
// step keeps the 16-bit copy as state instead:
//
//   - a new donated argument `amp_weight.<name>` (the copy, in the 16-bit
//     type) replaces the cast of the f32 argument `<name>`;
//   - a new result of the same name returns the copy of the updated
//     weight, the cast of the result `<name>`. Where that result keeps the
//     argument under a condition (`select(apply, new, weight)` on a
//     micro-batch that only accumulates, or an overflowing f16 step), the
//     copy keeps the copy argument under the same condition, so the kernel
//     that writes it writes nothing on those calls (UnchangedUnless.cpp).
//
// The caller fills each copy from its weight before the first call and
// whenever it changes the weight itself; the step keeps them equal after.
// Only weights the function updates in place (a donated argument and a
// result of the same `fuse.name`) get a copy: a weight the step does not
// update could change between calls without the step knowing.
//
//===----------------------------------------------------------------------===//

#include "AutoMixedPrecision.h"
#include "Decompose/Decompose.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::decompose;

namespace {

StringRef nameOf(DictionaryAttr attrs) {
  auto name = attrs ? attrs.getAs<StringAttr>(FuseDialect::kNameAttr)
                    : StringAttr();
  return name ? name.getValue() : StringRef();
}

/// A weight that gets a copy: its argument, the casts that read it and the
/// result that updates it.
struct CopiedWeight {
  BlockArgument weight;
  SmallVector<CastOp> casts;
  unsigned result;
};

/// Whether `value` is `weight` or a select (nested, any side) that can
/// return it: a result that keeps the weight under a condition.
bool mayKeep(Value value, Value weight) {
  if (value == weight)
    return true;
  auto select = value.getDefiningOp<SelectOp>();
  return select && (mayKeep(select.getOnTrue(), weight) ||
                    mayKeep(select.getOnFalse(), weight));
}

/// The 16-bit copy of `value`, the updated weight: `copy` where it keeps
/// `weight`, the same selects around the casts of what it changes to.
Value copyOfUpdate(ImplicitLocOpBuilder &b, Value value, Value weight,
                   Value copy, Type lowType) {
  if (value == weight)
    return copy;
  if (auto select = value.getDefiningOp<SelectOp>();
      select && mayKeep(value, weight))
    return SelectOp::create(
        b, select.getCondition(),
        copyOfUpdate(b, select.getOnTrue(), weight, copy, lowType),
        copyOfUpdate(b, select.getOnFalse(), weight, copy, lowType));
  return castTo(b, value, lowType);
}

} // namespace

LogicalResult amp::keepWeightCopies(func::FuncOp func, FloatType lowType) {
  if (!func.getBody().hasOneBlock())
    return success();
  Block &body = func.getBody().front();
  auto ret = llvm::cast<func::ReturnOp>(body.getTerminator());
  MLIRContext *context = func.getContext();

  llvm::StringMap<unsigned> resultsByName;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (StringRef name = nameOf(func.getResultAttrDict(i)); !name.empty())
      resultsByName[name] = i;
  llvm::StringMap<unsigned> argumentsByName;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (StringRef name = nameOf(func.getArgAttrDict(i)); !name.empty())
      argumentsByName[name] = i;

  SmallVector<CopiedWeight> weights;
  for (BlockArgument argument : func.getArguments()) {
    unsigned index = argument.getArgNumber();
    StringRef name = nameOf(func.getArgAttrDict(index));
    auto result = resultsByName.find(name);
    if (name.empty() || result == resultsByName.end() ||
        !func.getArgAttr(index, FuseDialect::kDonatedAttr) ||
        !tensorType(argument).getElementType().isF32() ||
        ret.getOperand(result->second) == argument)
      continue;
    CopiedWeight weight{argument, {}, result->second};
    for (Operation *user : argument.getUsers())
      if (auto cast = llvm::dyn_cast<CastOp>(user);
          cast && cast->getParentOp() == func.getOperation() &&
          tensorType(cast.getResult()).getElementType() == lowType)
        weight.casts.push_back(cast);
    if (weight.casts.empty())
      continue;
    std::string copyName = ("amp_weight." + name).str();
    if (argumentsByName.count(copyName) || resultsByName.count(copyName))
      return func.emitError()
             << "cannot keep a " << lowType << " copy of '" << name
             << "': the function already has an argument or result named '"
             << copyName << "' (was fuse-auto-mixed-precision run twice?)";
    weights.push_back(std::move(weight));
  }
  if (weights.empty())
    return success();

  // The copies come in as donated arguments after the others.
  Builder builder(context);
  SmallVector<unsigned> positions;
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  SmallVector<Location> locs;
  SmallVector<std::string> names;
  for (CopiedWeight &weight : weights) {
    names.push_back(
        ("amp_weight." + nameOf(func.getArgAttrDict(weight.weight.getArgNumber())))
            .str());
    positions.push_back(func.getNumArguments());
    types.push_back(tensorType(weight.weight).clone(lowType));
    attrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr(FuseDialect::kNameAttr,
                              builder.getStringAttr(names.back())),
         builder.getNamedAttr(FuseDialect::kDonatedAttr,
                              builder.getUnitAttr())}));
    locs.push_back(weight.weight.getLoc());
  }
  unsigned first = func.getNumArguments();
  if (failed(func.insertArguments(positions, types, attrs, locs)))
    return func.emitError() << "cannot add the weights' " << lowType
                            << " copies as arguments";

  // Every cast of a weight reads its copy; the copies of the updated weights
  // go out as results after the others.
  ImplicitLocOpBuilder b(func.getLoc(), context);
  b.setInsertionPoint(ret);
  SmallVector<Value> updates;
  SmallVector<unsigned> resultPositions;
  SmallVector<Type> resultTypes;
  SmallVector<DictionaryAttr> resultAttrs;
  for (auto [k, weight] : llvm::enumerate(weights)) {
    Value copy = func.getArgument(first + k);
    for (CastOp cast : weight.casts) {
      cast.getResult().replaceAllUsesWith(copy);
      cast.erase();
    }
    b.setLoc(NameLoc::get(StringAttr::get(context, names[k]),
                          ret.getOperand(weight.result).getLoc()));
    updates.push_back(copyOfUpdate(b, ret.getOperand(weight.result),
                                   weight.weight, copy, lowType));
    resultPositions.push_back(func.getNumResults());
    resultTypes.push_back(copy.getType());
    resultAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
        FuseDialect::kNameAttr, builder.getStringAttr(names[k]))));
  }
  ret->insertOperands(ret->getNumOperands(), updates);
  if (failed(func.insertResults(resultPositions, resultTypes, resultAttrs)))
    return func.emitError() << "cannot add the weights' " << lowType
                            << " copies as results";
  return success();
}
