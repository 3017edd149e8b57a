//===- ScalarEmitter.h - One element of a fusion as CUDA C++ ----*- C++ -*-===//
//
// The core of every kernel template: given a fusion body and the index of an
// element of one of its values, writes the C++ statements that compute that
// element and returns the expression that holds it. Index arithmetic follows
// the shape ops backwards (broadcast, reshape, transpose, slice, concat,
// gather) to loads from the kernel's inputs, so no intermediate tensor is
// ever materialised: the same approach as Inductor's and XLA's loop emitters.
//
// Float values are f32 in registers, rounded to their dtype where an op
// produces a narrower one, as the reference interpreter stores them; integer
// values are `long long`, i1 values `bool`. Elements already computed at the
// same index are reused (memoised per scope).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_CODEGEN_SCALAREMITTER_H
#define FUSE_LIB_CODEGEN_SCALAREMITTER_H

#include "fuse/Support/HostTensor.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fuse::codegen {

/// One C++ integer expression per dimension.
using Index = std::vector<std::string>;

/// Statements with indentation.
class CodeBuffer {
public:
  void line(const std::string &text);
  void indent() { depth_ += 1; }
  void dedent() { depth_ -= 1; }
  const std::string &text() const { return text_; }
  void append(const CodeBuffer &other) { text_ += other.text_; }
  int depth() const { return depth_; }
  void setDepth(int depth) { depth_ = depth; }

private:
  std::string text_;
  int depth_ = 1;
};

DType dtypeOf(mlir::Type elementType);
DType dtypeOf(mlir::Value value);
/// "float", "fuse::bf16", "fuse::f16", "long long", "int", "unsigned char".
std::string storageType(DType dtype);
/// "float", "long long" or "bool": how the emitter keeps an element.
std::string registerType(DType dtype);
std::vector<int64_t> shapeOf(mlir::Value value);
int64_t numElements(const std::vector<int64_t> &shape);
/// An exact C++ literal for a float (hex float, or an inf/nan expression).
std::string floatLiteral(double value);

/// How a block argument (a fusion input) is read.
struct InputBinding {
  /// The kernel parameter's name, or empty when `literal` is used.
  std::string param;
  /// Its position in the kernel's parameters (-1 with `literal`).
  int paramIndex = -1;
  /// A splat constant's value, inlined instead of a load.
  std::optional<std::string> literal;
};

class ScalarEmitter {
public:
  ScalarEmitter(mlir::Block &body, std::vector<InputBinding> inputs,
                std::string indexType);

  /// The expression holding `value`'s element at `index` (one entry per
  /// dimension of `value`), emitting statements into code() as needed.
  std::string emit(mlir::Value value, const Index &index);

  /// Index variables for the element at row-major position `linear` of a
  /// tensor of `shape` (emitted once per shape and linear expression).
  Index unflatten(const std::vector<int64_t> &shape, const std::string &linear);
  /// Tells unflatten() that `linear` equals `quotient` * `divisor` +
  /// `remainder` with 0 <= `remainder` < `divisor` (a row kernel's `lin` is
  /// row * length + j): dimensions that fall within one side are then
  /// derived from it, not by dividing `linear` again per element (in a
  /// 50304-long row reduction, the divisions and modulos were most of its
  /// instructions).
  void knowSplit(const std::string &linear, int64_t divisor,
                 std::string quotient, std::string remainder) {
    splits_[linear] = {divisor, std::move(quotient), std::move(remainder)};
  }
  /// The row-major position of `index` in `shape`; the original linear
  /// expression when `index` came from unflatten().
  std::string linearize(const std::vector<int64_t> &shape, const Index &index);

  /// Statement sink; templates swap it to emit into branches and loops.
  CodeBuffer &code() { return *code_; }
  void setCode(CodeBuffer &code) { code_ = &code; }

  /// Elements computed inside a scope are forgotten when it is popped (code
  /// in a loop body or branch is not visible after it).
  void pushScope();
  void popScope();
  /// Forgets every memoised element (code after the loops of a row kernel,
  /// where the loops' register-cache slots are out of scope).
  void forgetElements();
  /// Forgets the index variables only (the end of a loop body whose
  /// elements stay in the register cache).
  void forgetIndices();

  /// A value the template has computed itself, the same at every index the
  /// emitter asks for (a reduction's result for the current row or column).
  void provide(mlir::Value value, std::string expression) {
    provided_[value] = std::move(expression);
  }

  /// Lets a template supply values that depend on the index (a GEMM's
  /// result read from the workspace).
  using Override =
      std::function<std::optional<std::string>(mlir::Value, const Index &)>;
  void setOverride(Override override) { override_ = std::move(override); }

  /// Where a load of input `argument` at linear position `linear` can come
  /// from a vector register instead (the loop template's 16-byte loads).
  using LoadHook = std::function<std::optional<std::string>(
      unsigned argument, const std::string &linear)>;
  void setLoadHook(LoadHook hook) { loadHook_ = std::move(hook); }

  /// Arrays that keep a value's elements across the passes of a row kernel:
  /// when set, every computed element is also stored to `name[slot]` and
  /// memoised so (see RowReductionKernel).
  void setRegisterCache(std::optional<std::string> slot, int slots = 0) {
    cacheSlot_ = std::move(slot);
    cacheSlots_ = slots;
  }
  /// Declarations the register cache needs at the top of the kernel.
  const std::vector<std::string> &cacheDeclarations() const {
    return cacheDeclarations_;
  }

  /// A new variable name with `prefix`.
  std::string fresh(const std::string &prefix);
  /// `expr` converted from f32 to `dtype` and back: the rounding a store in
  /// `dtype` does.
  static std::string roundTo(DType dtype, const std::string &expr);
  /// `expr` (a register value of `from`) as a register value of `to`.
  static std::string convert(DType from, DType to, const std::string &expr);
  /// `expr` read from storage of `dtype` as a register value.
  static std::string fromStorage(DType dtype, const std::string &expr);
  /// A register value of `dtype` converted for storage.
  static std::string toStorage(DType dtype, const std::string &expr);

  /// Set when an op cannot be emitted (a diagnostic was reported on it).
  bool failed() const { return failed_; }
  /// Non-splat constants inside the body, to be passed as kernel inputs:
  /// the emitter names them `constN` in order of first use.
  const std::vector<mlir::Operation *> &denseConstants() const {
    return denseConstants_;
  }
  /// The kernels/ helpers the emitted code calls.
  const std::vector<std::string> &helpers() const { return helpers_; }
  void requireHelper(const std::string &name);

  /// Most shape ops (broadcast, reshape, transpose, slice, concat, gather)
  /// nested on one path from a value to the fusion's inputs: each is a
  /// level of recursion in emit(). Elementwise chains are not counted (they
  /// are walked with an explicit stack); real fusions nest a few, and 256
  /// levels take about 400 KB of stack.
  static constexpr int kMaxIndexChangeDepth = 256;

private:
  /// emit() once the operands `value` reads at `index` are memoised.
  std::string emitOne(mlir::Value value, const Index &index);
  /// The memoised expression of `value` at `index`, or null.
  const std::string *memoised(mlir::Value value, const Index &index) const;
  std::string emitOp(mlir::Operation *op, mlir::OpResult result,
                     const Index &index);
  std::string define(DType dtype, const std::string &expr);
  std::string load(const std::string &pointer, DType dtype,
                   const std::string &linear);
  std::string fail(mlir::Operation *op, const std::string &message);
  std::string key(mlir::Value value, const Index &index) const;

  mlir::Block &body_;
  std::vector<InputBinding> inputs_;
  std::string indexType_;
  CodeBuffer rootCode_;
  CodeBuffer *code_ = &rootCode_;
  std::vector<std::map<std::string, std::string>> memo_;
  std::vector<std::map<std::string, Index>> unflattenMemo_;
  std::map<std::string, std::string> linearOf_;
  struct Split {
    int64_t divisor;
    std::string quotient, remainder;
  };
  std::map<std::string, Split> splits_;
  /// Index variables are named after their (shape, linear) key, so a second
  /// loop over the same positions declares the same names and finds the
  /// elements memoised by the first (the row kernel's register cache).
  std::map<std::string, int> indexNames_;
  llvm::DenseMap<mlir::Value, std::string> provided_;
  Override override_;
  LoadHook loadHook_;
  std::optional<std::string> cacheSlot_;
  int cacheSlots_ = 0;
  std::vector<std::string> cacheDeclarations_;
  std::vector<mlir::Operation *> denseConstants_;
  std::vector<std::string> helpers_;
  int counter_ = 0;
  /// Nesting of emit() calls (see kMaxIndexChangeDepth).
  int depth_ = 0;
  bool failed_ = false;
};

} // namespace fuse::codegen

#endif // FUSE_LIB_CODEGEN_SCALAREMITTER_H
