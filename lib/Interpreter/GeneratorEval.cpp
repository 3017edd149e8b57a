//===- GeneratorEval.cpp - constant, iota and random ----------------------===//

#include "Evaluators.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "philox.cuh"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::interp;

static LogicalResult evalConstant(ConstantOp op, HostTensor &out) {
  auto dense = llvm::dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError() << "the reference interpreter reads dense constants "
                             "only, not "
                          << op.getValue();
  int64_t count = out.numElements();
  if (out.isFloat()) {
    auto values = dense.getValues<APFloat>();
    for (int64_t i = 0; i < count; ++i) {
      APFloat value = dense.isSplat() ? values[0] : values[i];
      bool losesInfo = false;
      value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
      out.set(i, value.convertToFloat());
    }
    return success();
  }
  bool isBool = out.dtype() == DType::I1;
  auto values = dense.getValues<APInt>();
  for (int64_t i = 0; i < count; ++i) {
    APInt value = dense.isSplat() ? values[0] : values[i];
    out.setInt(i, isBool ? value.getZExtValue() : value.getSExtValue());
  }
  return success();
}

static void evalIota(IotaOp op, HostTensor &out) {
  int64_t dim = op.getDim();
  for (int64_t i = 0, e = out.numElements(); i < e; ++i)
    out.setInt(i, unravel(i, out.shape())[dim]);
}

/// Significand bits (with the implicit one) of a float dtype.
static int significandBits(DType dtype) {
  switch (dtype) {
  case DType::BF16: return 8;
  case DType::F16: return 11;
  default: return 24;
  }
}

static LogicalResult evalRandom(RandomOp op, const HostTensor &seedTensor,
                                const HostTensor &offsetTensor,
                                HostTensor &out) {
  auto seed = static_cast<uint64_t>(seedTensor.ints()[0]);
  auto offset = static_cast<uint64_t>(offsetTensor.ints()[0]);
  for (int64_t i = 0, e = out.numElements(); i < e; ++i) {
    auto index = static_cast<uint64_t>(i);
    switch (op.getDistribution()) {
    case RandomDistribution::Uniform:
      // As many random bits as the dtype holds, so no draw rounds up to 1.
      out.set(i, ::fuse::philox::uniformBitsAt(seed, offset, index,
                                                significandBits(out.dtype())));
      break;
    case RandomDistribution::Normal:
      out.set(i, ::fuse::philox::normalAt(seed, offset, index));
      break;
    case RandomDistribution::Bernoulli: {
      float p = static_cast<float>(op.getPAttr().getValueAsDouble());
      out.setInt(i, ::fuse::philox::bernoulliAt(seed, offset, index, p));
      break;
    }
    }
  }
  return success();
}

EvalResult mlir::fuse::interp::evalGenerator(Operation *op, Operands operands,
                                             Results results) {
  if (auto constant = llvm::dyn_cast<ConstantOp>(op))
    return evalConstant(constant, results[0]);
  if (auto iota = llvm::dyn_cast<IotaOp>(op)) {
    evalIota(iota, results[0]);
    return success();
  }
  if (auto random = llvm::dyn_cast<RandomOp>(op))
    return evalRandom(random, *operands[0], *operands[1], results[0]);
  return std::nullopt;
}
