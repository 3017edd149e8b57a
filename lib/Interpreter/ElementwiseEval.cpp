//===- ElementwiseEval.cpp - Elementwise ops in the interpreter -----------===//
//
// Float math runs in f32 and is rounded once to the result dtype when stored;
// integers compute in i64 and wrap to the result dtype.
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::interp;

namespace {

using FloatUnary = std::function<float(float)>;
using IntUnary = std::function<int64_t(int64_t)>;
using FloatBinary = std::function<float(float, float)>;
using IntBinary = std::function<int64_t(int64_t, int64_t)>;

void applyUnary(const HostTensor &in, HostTensor &out, const FloatUnary &f,
                const IntUnary &g) {
  for (int64_t i = 0, e = in.numElements(); i < e; ++i) {
    if (in.isFloat())
      out.set(i, f(in.floats()[i]));
    else
      out.setInt(i, g(in.ints()[i]));
  }
}

void applyBinary(const HostTensor &lhs, const HostTensor &rhs, HostTensor &out,
                 const FloatBinary &f, const IntBinary &g) {
  for (int64_t i = 0, e = lhs.numElements(); i < e; ++i) {
    if (lhs.isFloat())
      out.set(i, f(lhs.floats()[i], rhs.floats()[i]));
    else
      out.setInt(i, g(lhs.ints()[i], rhs.ints()[i]));
  }
}

float nanMax(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
float nanMin(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

float geluErf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
float geluTanh(float x) {
  const float kAlpha = 0.79788456080286536f; // sqrt(2 / pi)
  return 0.5f * x * (1.0f + std::tanh(kAlpha * (x + 0.044715f * x * x * x)));
}
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

/// Unary float ops; integer-capable ones also get an integer form. An op (or
/// dtype) without a formula here is unsupported, never passed through.
EvalResult evalUnary(Operation *op, const HostTensor &in, HostTensor &out) {
  FloatUnary f;
  IntUnary g;
  llvm::TypeSwitch<Operation *>(op)
      .Case<NegOp>([&](auto) {
        f = [](float x) { return -x; };
        g = [](int64_t x) { return -x; };
      })
      .Case<AbsOp>([&](auto) {
        f = [](float x) { return std::fabs(x); };
        g = [](int64_t x) { return x < 0 ? -x : x; };
      })
      .Case<ReluOp>([&](auto) {
        f = [](float x) { return std::isnan(x) ? x : std::max(x, 0.0f); };
        g = [](int64_t x) { return std::max<int64_t>(x, 0); };
      })
      .Case<NotOp>([&](auto) { g = [](int64_t x) -> int64_t { return !x; }; })
      .Case<ExpOp>([&](auto) { f = [](float x) { return std::exp(x); }; })
      .Case<LogOp>([&](auto) { f = [](float x) { return std::log(x); }; })
      .Case<TanhOp>([&](auto) { f = [](float x) { return std::tanh(x); }; })
      .Case<SinOp>([&](auto) { f = [](float x) { return std::sin(x); }; })
      .Case<CosOp>([&](auto) { f = [](float x) { return std::cos(x); }; })
      .Case<ErfOp>([&](auto) { f = [](float x) { return std::erf(x); }; })
      .Case<SqrtOp>([&](auto) { f = [](float x) { return std::sqrt(x); }; })
      .Case<RsqrtOp>([&](auto) { f = [](float x) { return 1.0f / std::sqrt(x); }; })
      .Case<ReciprocalOp>([&](auto) { f = [](float x) { return 1.0f / x; }; })
      .Case<SigmoidOp>([&](auto) { f = sigmoid; })
      .Case<SiluOp>([&](auto) { f = [](float x) { return x * sigmoid(x); }; })
      .Case<GeluOp>([&](GeluOp gelu) {
        f = gelu.getApproximate() == GeluApproximation::Tanh ? geluTanh : geluErf;
      });
  if (in.isFloat() ? !f : !g)
    return std::nullopt;
  applyUnary(in, out, f, g);
  return success();
}

EvalResult evalBinary(Operation *op, const HostTensor &lhs,
                         const HostTensor &rhs, HostTensor &out) {
  FloatBinary f;
  IntBinary g;
  bool divisionByZero = false;
  llvm::TypeSwitch<Operation *>(op)
      .Case<AddOp>([&](auto) { f = std::plus<float>(); g = std::plus<int64_t>(); })
      .Case<OrOp>([&](auto) { g = [](int64_t a, int64_t b) -> int64_t { return a || b; }; })
      .Case<SubOp>([&](auto) { f = std::minus<float>(); g = std::minus<int64_t>(); })
      .Case<MulOp>([&](auto) { f = std::multiplies<float>(); g = std::multiplies<int64_t>(); })
      .Case<AndOp>([&](auto) { g = [](int64_t a, int64_t b) -> int64_t { return a && b; }; })
      .Case<DivOp>([&](auto) {
        f = std::divides<float>();
        g = [&](int64_t a, int64_t b) -> int64_t {
          if (b == 0) {
            divisionByZero = true;
            return 0;
          }
          return a / b; // C++ truncates toward zero, as the GPU does
        };
      })
      .Case<MaximumOp>([&](auto) {
        f = nanMax;
        g = [](int64_t a, int64_t b) { return std::max(a, b); };
      })
      .Case<MinimumOp>([&](auto) {
        f = nanMin;
        g = [](int64_t a, int64_t b) { return std::min(a, b); };
      })
      .Case<PowOp>([&](auto) { f = [](float a, float b) { return std::pow(a, b); }; });
  if (lhs.isFloat() ? !f : !g)
    return std::nullopt;
  applyBinary(lhs, rhs, out, f, g);
  if (divisionByZero)
    return op->emitError() << "integer division by zero";
  return success();
}

template <typename T> bool compare(CompareDirection direction, T a, T b) {
  switch (direction) {
  case CompareDirection::EQ: return a == b;
  case CompareDirection::NE: return a != b;
  case CompareDirection::LT: return a < b;
  case CompareDirection::LE: return a <= b;
  case CompareDirection::GT: return a > b;
  case CompareDirection::GE: return a >= b;
  }
  return false;
}

} // namespace

EvalResult mlir::fuse::interp::evalElementwise(Operation *op, Operands operands,
                                               Results results) {
  if (auto cmp = llvm::dyn_cast<CompareOp>(op)) {
    const HostTensor &lhs = *operands[0], &rhs = *operands[1];
    for (int64_t i = 0, e = lhs.numElements(); i < e; ++i) {
      // Integers compare as integers: exact for all of i64.
      bool value =
          lhs.isFloat()
              ? compare(cmp.getDirection(), lhs.floats()[i], rhs.floats()[i])
              : compare(cmp.getDirection(), lhs.ints()[i], rhs.ints()[i]);
      results[0].setInt(i, value);
    }
    return success();
  }
  if (llvm::isa<SelectOp>(op)) {
    const HostTensor &cond = *operands[0], &a = *operands[1], &b = *operands[2];
    HostTensor &out = results[0];
    for (int64_t i = 0, e = cond.numElements(); i < e; ++i) {
      const HostTensor &chosen = cond.ints()[i] ? a : b;
      if (out.isFloat())
        out.floats()[i] = chosen.floats()[i];
      else
        out.ints()[i] = chosen.ints()[i];
    }
    return success();
  }
  if (llvm::isa<CastOp>(op)) {
    const HostTensor &in = *operands[0];
    for (int64_t i = 0, e = in.numElements(); i < e; ++i) {
      if (in.isFloat())
        results[0].set(i, in.floats()[i]);
      else
        results[0].setInt(i, in.ints()[i]);
    }
    return success();
  }
  if (!op->hasTrait<OpTrait::Elementwise>())
    return std::nullopt;
  if (operands.size() == 1)
    return evalUnary(op, *operands[0], results[0]);
  if (operands.size() == 2)
    return evalBinary(op, *operands[0], *operands[1], results[0]);
  return std::nullopt;
}
