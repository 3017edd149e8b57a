//===- ScalarEmitter.cpp - One element of a fusion as CUDA C++ ------------===//

#include "ScalarEmitter.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::fuse;

namespace fuse::codegen {

void CodeBuffer::line(const std::string &text) {
  text_.append(static_cast<size_t>(depth_) * 2, ' ');
  text_ += text;
  text_ += '\n';
}

DType dtypeOf(Type elementType) {
  if (elementType.isF32())
    return DType::F32;
  if (elementType.isBF16())
    return DType::BF16;
  if (elementType.isF16())
    return DType::F16;
  if (elementType.isInteger(64))
    return DType::I64;
  if (elementType.isInteger(32))
    return DType::I32;
  return DType::I1;
}

DType dtypeOf(Value value) {
  return dtypeOf(cast<ShapedType>(value.getType()).getElementType());
}

std::string storageType(DType dtype) {
  switch (dtype) {
  case DType::F32: return "float";
  case DType::BF16: return "fuse::bf16";
  case DType::F16: return "fuse::f16";
  case DType::I64: return "long long";
  case DType::I32: return "int";
  case DType::I1: return "unsigned char";
  }
  return "float";
}

std::string registerType(DType dtype) {
  if (isFloat(dtype))
    return "float";
  return dtype == DType::I1 ? "bool" : "long long";
}

std::vector<int64_t> shapeOf(Value value) {
  auto shape = cast<ShapedType>(value.getType()).getShape();
  return std::vector<int64_t>(shape.begin(), shape.end());
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string floatLiteral(double value) {
  float f = static_cast<float>(value);
  if (std::isnan(f))
    return "__int_as_float(0x7fc00000)";
  if (std::isinf(f))
    return f > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%af", static_cast<double>(f));
  return buffer;
}

ScalarEmitter::ScalarEmitter(Block &body, std::vector<InputBinding> inputs,
                             std::string indexType)
    : body_(body), inputs_(std::move(inputs)),
      indexType_(std::move(indexType)) {
  memo_.emplace_back();
  unflattenMemo_.emplace_back();
  requireHelper("common.cuh");
}

void ScalarEmitter::requireHelper(const std::string &name) {
  if (!llvm::is_contained(helpers_, name))
    helpers_.push_back(name);
}

std::string ScalarEmitter::fresh(const std::string &prefix) {
  return prefix + std::to_string(counter_++);
}

void ScalarEmitter::pushScope() {
  memo_.emplace_back();
  unflattenMemo_.emplace_back();
}

void ScalarEmitter::popScope() {
  memo_.pop_back();
  unflattenMemo_.pop_back();
}

void ScalarEmitter::forgetIndices() {
  for (auto &scope : unflattenMemo_)
    scope.clear();
}

void ScalarEmitter::forgetElements() {
  for (auto &scope : memo_)
    scope.clear();
  for (auto &scope : unflattenMemo_)
    scope.clear();
}

std::string ScalarEmitter::key(Value value, const Index &index) const {
  std::string k = std::to_string(
      reinterpret_cast<uintptr_t>(value.getAsOpaquePointer()));
  for (const std::string &i : index)
    k += "," + i;
  return k;
}

static std::string indexKey(const std::vector<int64_t> &shape,
                            const Index &index) {
  std::string k;
  for (int64_t d : shape)
    k += std::to_string(d) + "x";
  k += ":";
  for (const std::string &i : index)
    k += i + ",";
  return k;
}

Index ScalarEmitter::unflatten(const std::vector<int64_t> &shape,
                               const std::string &linear) {
  std::string k = indexKey(shape, {linear});
  for (auto it = unflattenMemo_.rbegin(); it != unflattenMemo_.rend(); ++it)
    if (auto found = it->find(k); found != it->end())
      return found->second;
  Index index(shape.size(), "0");
  int64_t outermost = -1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) {
      outermost = static_cast<int64_t>(d);
      break;
    }
  auto named = indexNames_.try_emplace(k, static_cast<int>(indexNames_.size()));
  std::string prefix = "ix" + std::to_string(named.first->second) + "_";
  auto split = splits_.find(linear);
  int64_t inner = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] == 1)
      continue;
    // From the known split where this dimension lies wholly within the
    // remainder or the quotient; else from the linear position itself.
    std::string source = linear;
    int64_t below = inner;
    bool wrapsAtTop = d != outermost;
    if (split != splits_.end()) {
      int64_t divisor = split->second.divisor;
      if (divisor % (inner * shape[d]) == 0) {
        source = split->second.remainder;
        wrapsAtTop = inner * shape[d] != divisor;
      } else if (inner % divisor == 0) {
        source = split->second.quotient;
        below = inner / divisor;
      }
    }
    std::string expr = "(" + source + ")";
    if (below != 1)
      expr = "(" + expr + " / " + std::to_string(below) + ")";
    // The outermost non-unit dimension needs no modulo.
    if (wrapsAtTop)
      expr += " % " + std::to_string(shape[d]);
    std::string name = prefix + std::to_string(d);
    code().line("const " + indexType_ + " " + name + " = " + expr + ";");
    index[d] = name;
    inner *= shape[d];
  }
  unflattenMemo_.back()[k] = index;
  linearOf_[indexKey(shape, index)] = linear;
  return index;
}

std::string ScalarEmitter::linearize(const std::vector<int64_t> &shape,
                                     const Index &index) {
  if (auto found = linearOf_.find(indexKey(shape, index));
      found != linearOf_.end())
    return found->second;
  std::string expr;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    if (expr.empty())
      expr = index[d];
    else
      expr = "(" + expr + ") * " + std::to_string(shape[d]) + " + " + index[d];
  }
  return expr.empty() ? "0" : expr;
}

std::string ScalarEmitter::roundTo(DType dtype, const std::string &expr) {
  if (dtype == DType::BF16)
    return "fuse::toFloat(fuse::fromFloat<fuse::bf16>(" + expr + "))";
  if (dtype == DType::F16)
    return "fuse::toFloat(fuse::fromFloat<fuse::f16>(" + expr + "))";
  return expr;
}

std::string ScalarEmitter::fromStorage(DType dtype, const std::string &expr) {
  if (isFloat(dtype))
    return "fuse::toFloat(" + expr + ")";
  if (dtype == DType::I1)
    return "(" + expr + " != 0)";
  return "(long long)(" + expr + ")";
}

std::string ScalarEmitter::toStorage(DType dtype, const std::string &expr) {
  switch (dtype) {
  case DType::F32: return expr;
  case DType::BF16: return "fuse::fromFloat<fuse::bf16>(" + expr + ")";
  case DType::F16: return "fuse::fromFloat<fuse::f16>(" + expr + ")";
  case DType::I64: return "(long long)(" + expr + ")";
  case DType::I32: return "(int)(" + expr + ")";
  case DType::I1: return "(unsigned char)((" + expr + ") ? 1 : 0)";
  }
  return expr;
}

std::string ScalarEmitter::convert(DType from, DType to,
                                   const std::string &expr) {
  bool fromFloat = isFloat(from), toFloat = isFloat(to);
  if (fromFloat && toFloat)
    return roundTo(to, expr);
  if (fromFloat) {
    if (to == DType::I1)
      return "(" + expr + " != 0.0f)";
    // Truncation toward zero, then wrapping to the integer width.
    std::string value = "(long long)(" + expr + ")";
    return to == DType::I32 ? "(long long)(int)" + value : value;
  }
  if (toFloat) {
    std::string value =
        from == DType::I1 ? "(" + expr + " ? 1.0f : 0.0f)" : "(float)(" + expr + ")";
    return roundTo(to, value);
  }
  if (to == DType::I1)
    return "(" + expr + " != 0)";
  if (from == DType::I1)
    return "(long long)(" + expr + ")";
  return to == DType::I32 ? "(long long)(int)(" + expr + ")" : expr;
}

std::string ScalarEmitter::define(DType dtype, const std::string &expr) {
  std::string type = registerType(dtype);
  if (cacheSlot_) {
    std::string array = fresh("c");
    cacheDeclarations_.push_back(type + " " + array + "[" +
                                 std::to_string(cacheSlots_) + "];");
    code().line(array + "[" + *cacheSlot_ + "] = " + expr + ";");
    return array + "[" + *cacheSlot_ + "]";
  }
  std::string name = fresh("v");
  code().line("const " + type + " " + name + " = " + expr + ";");
  return name;
}

std::string ScalarEmitter::load(const std::string &pointer, DType dtype,
                                const std::string &linear) {
  return define(dtype, fromStorage(dtype, pointer + "[" + linear + "]"));
}

std::string ScalarEmitter::fail(Operation *op, const std::string &message) {
  if (!failed_)
    op->emitError() << message;
  failed_ = true;
  return "0";
}

const std::string *ScalarEmitter::memoised(Value value,
                                           const Index &index) const {
  std::string k = key(value, index);
  for (auto it = memo_.rbegin(); it != memo_.rend(); ++it)
    if (auto found = it->find(k); found != it->end())
      return &found->second;
  return nullptr;
}

/// The operands an op reads at its own result's index: those of
/// elementwise ops, casts, compares and selects. Shape ops (broadcast,
/// reshape, transpose, slice, concat, gather) read others.
static OperandRange sameIndexOperands(Value value) {
  Operation *op = value.getDefiningOp();
  if (op && op->hasTrait<OpTrait::Elementwise>())
    return op->getOperands();
  return OperandRange(nullptr, 0);
}

std::string ScalarEmitter::emit(Value value, const Index &index) {
  if (const std::string *found = memoised(value, index))
    return *found;
  // A value is computed after its operands. Recursion through same-index
  // operands would be as deep as the longest elementwise chain (10,000
  // fuse.neg overflowed the stack), so those are emitted first from an
  // explicit stack, in the order recursion would visit them (operands left
  // to right, each after its own), which leaves the code unchanged; the
  // emitOne calls below then find every operand memoised. Values a template
  // provides are leaves.
  struct Pending {
    Value value;
    unsigned next = 0;
  };
  SmallVector<Pending> stack{{value}};
  llvm::DenseSet<Value> seen{value};
  while (!stack.empty()) {
    Pending &top = stack.back();
    OperandRange operands = provided_.count(top.value)
                                ? OperandRange(nullptr, 0)
                                : sameIndexOperands(top.value);
    if (top.next < operands.size()) {
      Value operand = operands[top.next++];
      if (seen.insert(operand).second && !memoised(operand, index))
        stack.push_back({operand});
      continue;
    }
    Value done = top.value;
    stack.pop_back();
    if (done != value && !memoised(done, index))
      emitOne(done, index);
  }
  // What is left recursive are index changes: one level per shape op on
  // the path from this value to the fusion's inputs. Bounded, so that a
  // graph built to be deep gets an error rather than a stack overflow.
  if (depth_ >= kMaxIndexChangeDepth) {
    Operation *op = value.getDefiningOp();
    return fail(op ? op : body_.getParentOp(),
                "reaching an input of this fusion from here takes more than " +
                    std::to_string(kMaxIndexChangeDepth) +
                    " nested broadcasts, reshapes, transposes, slices, "
                    "concats and gathers: the CUDA code generator stops "
                    "rather than overflow its stack (split the fusion)");
  }
  ++depth_;
  std::string result = emitOne(value, index);
  --depth_;
  return result;
}

std::string ScalarEmitter::emitOne(Value value, const Index &index) {
  std::string k = key(value, index);
  std::string result;
  if (auto found = provided_.find(value); found != provided_.end())
    result = found->second;
  if (result.empty() && override_)
    if (std::optional<std::string> supplied = override_(value, index))
      result = *supplied;
  if (result.empty()) {
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      const InputBinding &binding = inputs_[argument.getArgNumber()];
      if (binding.literal) {
        result = *binding.literal;
      } else {
        std::string linear = linearize(shapeOf(value), index);
        std::optional<std::string> vector;
        if (loadHook_)
          vector = loadHook_(argument.getArgNumber(), linear);
        result = vector ? define(dtypeOf(value), fromStorage(dtypeOf(value), *vector))
                        : load(binding.param, dtypeOf(value), linear);
      }
    } else {
      auto opResult = cast<OpResult>(value);
      result = emitOp(opResult.getOwner(), opResult, index);
    }
  }
  memo_.back()[k] = result;
  return result;
}

namespace {

std::string binaryFloat(Operation *op, const std::string &a,
                        const std::string &b) {
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case<AddOp>([&](auto) { return a + " + " + b; })
      .Case<SubOp>([&](auto) { return a + " - " + b; })
      .Case<MulOp>([&](auto) { return a + " * " + b; })
      .Case<DivOp>([&](auto) { return a + " / " + b; })
      .Case<MaximumOp>([&](auto) { return "fuse::maximum(" + a + ", " + b + ")"; })
      .Case<MinimumOp>([&](auto) { return "fuse::minimum(" + a + ", " + b + ")"; })
      .Case<PowOp>([&](auto) { return "fuse::power(" + a + ", " + b + ")"; })
      .Default([](Operation *) { return std::string(); });
}

std::string binaryInt(Operation *op, const std::string &a,
                      const std::string &b) {
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case<AddOp>([&](auto) { return a + " + " + b; })
      .Case<SubOp>([&](auto) { return a + " - " + b; })
      .Case<MulOp>([&](auto) { return a + " * " + b; })
      .Case<DivOp>([&](auto) { return "(" + b + " == 0 ? 0LL : " + a + " / " + b + ")"; })
      .Case<MaximumOp>([&](auto) { return "max(" + a + ", " + b + ")"; })
      .Case<MinimumOp>([&](auto) { return "min(" + a + ", " + b + ")"; })
      .Case<AndOp>([&](auto) { return a + " && " + b; })
      .Case<OrOp>([&](auto) { return a + " || " + b; })
      .Default([](Operation *) { return std::string(); });
}

/// Whether `op`'s result is stored in 16 bits: what it computes in f32 is
/// rounded to 8 or 11 significant bits, far coarser than a fast
/// intrinsic's error (__expf: within 2 + 1.16|x| ulp of f32, under 1.1e-5
/// relative for |x| <= 88, where a bf16 rounding step is 3.9e-3).
bool roundedTo16Bits(Operation *op) {
  DType dtype = dtypeOf(op->getResult(0));
  return dtype == DType::BF16 || dtype == DType::F16;
}

std::string unaryFloat(Operation *op, const std::string &x) {
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case<NegOp>([&](auto) { return "-" + x; })
      .Case<AbsOp>([&](auto) { return "fabsf(" + x + ")"; })
      .Case<ReluOp>([&](auto) { return "fuse::relu(" + x + ")"; })
      .Case<ExpOp>([&](auto) {
        return (roundedTo16Bits(op) ? "__expf(" : "expf(") + x + ")";
      })
      .Case<LogOp>([&](auto) { return "logf(" + x + ")"; })
      .Case<TanhOp>([&](auto) { return "tanhf(" + x + ")"; })
      // The accurate sinf/cosf (no fast math): rotary tables take them of
      // positions times frequencies, thousands of radians.
      .Case<SinOp>([&](auto) { return "sinf(" + x + ")"; })
      .Case<CosOp>([&](auto) { return "cosf(" + x + ")"; })
      .Case<ErfOp>([&](auto) { return "erff(" + x + ")"; })
      .Case<SqrtOp>([&](auto) { return "sqrtf(" + x + ")"; })
      .Case<RsqrtOp>([&](auto) { return "fuse::rsqrt(" + x + ")"; })
      .Case<ReciprocalOp>([&](auto) { return "fuse::reciprocal(" + x + ")"; })
      .Case<SigmoidOp>([&](auto) { return "fuse::sigmoid(" + x + ")"; })
      .Case<SiluOp>([&](auto) { return "fuse::silu(" + x + ")"; })
      .Case<GeluOp>([&](GeluOp gelu) {
        return gelu.getApproximate() == GeluApproximation::Tanh
                   ? "fuse::geluTanh(" + x + ")"
                   : "fuse::geluErf(" + x + ")";
      })
      .Default([](Operation *) { return std::string(); });
}

std::string unaryInt(Operation *op, const std::string &x) {
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case<NegOp>([&](auto) { return "-" + x; })
      .Case<AbsOp>([&](auto) { return "(" + x + " < 0 ? -" + x + " : " + x + ")"; })
      .Case<ReluOp>([&](auto) { return "(" + x + " < 0 ? 0LL : " + x + ")"; })
      .Case<NotOp>([&](auto) { return "!" + x; })
      .Default([](Operation *) { return std::string(); });
}

const char *comparison(CompareDirection direction) {
  switch (direction) {
  case CompareDirection::EQ: return " == ";
  case CompareDirection::NE: return " != ";
  case CompareDirection::LT: return " < ";
  case CompareDirection::LE: return " <= ";
  case CompareDirection::GT: return " > ";
  case CompareDirection::GE: return " >= ";
  }
  return " == ";
}

} // namespace

std::string ScalarEmitter::emitOp(Operation *op, OpResult result,
                                  const Index &index) {
  DType dtype = dtypeOf(Value(result));
  std::vector<int64_t> shape = shapeOf(result);

  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto elements = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (elements && elements.isSplat()) {
      if (isFloat(dtype))
        return floatLiteral(elements.getSplatValue<APFloat>().convertToDouble());
      int64_t v = elements.getSplatValue<APInt>().getSExtValue();
      return dtype == DType::I1 ? (v ? "true" : "false")
                                : "(" + std::to_string(v) + "LL)";
    }
    auto position = llvm::find(denseConstants_, op);
    if (position == denseConstants_.end()) {
      denseConstants_.push_back(op);
      position = denseConstants_.end() - 1;
    }
    std::string name = "const" + std::to_string(position - denseConstants_.begin());
    return load(name, dtype, linearize(shape, index));
  }
  if (op->hasTrait<OpTrait::Elementwise>() && !isa<CastOp, CompareOp, SelectOp>(op)) {
    std::vector<std::string> operands;
    for (Value operand : op->getOperands())
      operands.push_back(emit(operand, index));
    bool floating = isFloat(dtypeOf(op->getOperand(0)));
    std::string expr;
    if (operands.size() == 1)
      expr = floating ? unaryFloat(op, operands[0]) : unaryInt(op, operands[0]);
    else if (operands.size() == 2)
      expr = floating ? binaryFloat(op, operands[0], operands[1])
                      : binaryInt(op, operands[0], operands[1]);
    if (expr.empty())
      return fail(op, "the CUDA code generator has no formula for this op on " +
                          std::string(dtypeName(dtypeOf(op->getOperand(0)))));
    if (isa<MaximumOp, MinimumOp, PowOp, ReluOp, RsqrtOp, ReciprocalOp,
            SigmoidOp, SiluOp, GeluOp>(op))
      requireHelper("math.cuh");
    if (floating)
      return define(dtype, roundTo(dtype, expr));
    if (dtype == DType::I32)
      expr = "(long long)(int)(" + expr + ")";
    return define(dtype, expr);
  }
  if (auto castOp = dyn_cast<CastOp>(op)) {
    DType from = dtypeOf(castOp.getOperand());
    std::string x = emit(castOp.getOperand(), index);
    if (from == dtype)
      return x;
    return define(dtype, convert(from, dtype, x));
  }
  if (auto compare = dyn_cast<CompareOp>(op)) {
    std::string a = emit(compare.getLhs(), index), b = emit(compare.getRhs(), index);
    return define(DType::I1, a + comparison(compare.getDirection()) + b);
  }
  if (auto select = dyn_cast<SelectOp>(op)) {
    std::string c = emit(op->getOperand(0), index);
    std::string a = emit(op->getOperand(1), index);
    std::string b = emit(op->getOperand(2), index);
    return define(dtype, c + " ? " + a + " : " + b);
  }
  if (auto broadcast = dyn_cast<BroadcastInDimOp>(op)) {
    std::vector<int64_t> operandShape = shapeOf(broadcast.getOperand());
    Index operandIndex(operandShape.size(), "0");
    for (auto [i, dim] : llvm::enumerate(broadcast.getDims()))
      if (operandShape[i] != 1 || shape[dim] == 1)
        operandIndex[i] = index[dim];
    return emit(broadcast.getOperand(), operandIndex);
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    std::string linear = linearize(shape, index);
    return emit(reshape.getOperand(),
                unflatten(shapeOf(reshape.getOperand()), linear));
  }
  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    Index operandIndex(index.size());
    for (auto [i, dim] : llvm::enumerate(transpose.getPermutation()))
      operandIndex[dim] = index[i];
    return emit(transpose.getOperand(), operandIndex);
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    Index operandIndex(index.size());
    for (size_t d = 0; d < index.size(); ++d) {
      int64_t start = slice.getStart()[d], stride = slice.getStride()[d];
      std::string expr = index[d];
      if (stride != 1)
        expr = "(" + expr + ") * " + std::to_string(stride);
      if (start != 0)
        expr = "(" + expr + " + " + std::to_string(start) + ")";
      operandIndex[d] = expr;
    }
    return emit(slice.getOperand(), operandIndex);
  }
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    int64_t dim = concat.getDim();
    std::string name = fresh("v");
    code().line(registerType(dtype) + " " + name + ";");
    int64_t start = 0;
    auto inputs = concat.getInputs();
    for (auto [i, input] : llvm::enumerate(inputs)) {
      int64_t size = shapeOf(input)[dim];
      std::string condition = index[dim] + " < " + std::to_string(start + size);
      if (i + 1 == inputs.size())
        code().line(i == 0 ? "{" : "} else {");
      else
        code().line((i == 0 ? "if (" : "} else if (") + condition + ") {");
      code().indent();
      pushScope();
      Index inputIndex = index;
      if (start != 0)
        inputIndex[dim] = "(" + index[dim] + " - " + std::to_string(start) + ")";
      // Keep the register cache out of branches: a slot written in one
      // branch only is not a value of every element.
      std::optional<std::string> slot = cacheSlot_;
      cacheSlot_.reset();
      code().line(name + " = " + emit(input, inputIndex) + ";");
      cacheSlot_ = slot;
      popScope();
      code().dedent();
      start += size;
    }
    code().line("}");
    return define(dtype, name);
  }
  if (auto gather = dyn_cast<GatherOp>(op)) {
    int64_t dim = gather.getDim();
    int64_t indexRank = cast<ShapedType>(gather.getIndices().getType()).getRank();
    Index indicesIndex(index.begin() + dim, index.begin() + dim + indexRank);
    std::string position = emit(gather.getIndices(), indicesIndex);
    Index operandIndex(index.begin(), index.begin() + dim);
    operandIndex.push_back("(" + indexType_ + ")(" + position + ")");
    operandIndex.insert(operandIndex.end(), index.begin() + dim + indexRank,
                        index.end());
    return emit(gather.getOperand(), operandIndex);
  }
  if (auto iota = dyn_cast<IotaOp>(op)) {
    std::string position = "(long long)(" + index[iota.getDim()] + ")";
    return define(dtype, convert(DType::I64, dtype, position));
  }
  if (auto random = dyn_cast<RandomOp>(op)) {
    requireHelper("philox.cuh");
    std::string seed = emit(random.getSeed(), {});
    std::string offset = emit(random.getOffset(), {});
    std::string element = "(unsigned long long)(" + linearize(shape, index) + ")";
    std::string args = "(unsigned long long)" + seed + ", (unsigned long long)" +
                       offset + ", " + element;
    switch (random.getDistribution()) {
    case RandomDistribution::Uniform: {
      int bits = dtype == DType::BF16 ? 8 : dtype == DType::F16 ? 11 : 24;
      return define(dtype, "fuse::philox::uniformBitsAt(" + args + ", " +
                               std::to_string(bits) + ")");
    }
    case RandomDistribution::Normal:
      return define(dtype, roundTo(dtype, "fuse::philox::normalAt(" + args + ")"));
    case RandomDistribution::Bernoulli: {
      float p = static_cast<float>(random.getPAttr().getValueAsDouble());
      std::string draw = "fuse::philox::bernoulliAt(" + args + ", " +
                         floatLiteral(p) + ")";
      return define(dtype, dtype == DType::I1 ? draw : "(" + draw + " ? 1.0f : 0.0f)");
    }
    }
  }
  return fail(op, "the CUDA code generator cannot compute this op inside a "
                  "fusion of this kind");
}

} // namespace fuse::codegen
