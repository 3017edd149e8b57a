//===- FuseDialect.cpp - The fuse dialect ----------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"

#include "fuse/Dialect/Fuse/IR/FuseAttrs.h"
#include "fuse/Dialect/Fuse/IR/FuseOps.h"
#include "fuse/Support/ArenaPacking.h"
#include "fuse/Support/CheckedMath.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fuse;

#include "fuse/Dialect/Fuse/IR/FuseDialect.cpp.inc"
#include "fuse/Dialect/Fuse/IR/FuseEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fuse/Dialect/Fuse/IR/FuseAttrs.cpp.inc"

//===----------------------------------------------------------------------===//
// #fuse.buffer<offset = N | argument = N | external, size = S, live = [A, B]>
//===----------------------------------------------------------------------===//

Attribute BufferAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  std::optional<int64_t> offset, argument;
  StringRef where;
  if (parser.parseLess() || parser.parseKeyword(&where))
    return {};
  if (where == "offset" || where == "argument") {
    int64_t value;
    if (parser.parseEqual() || parser.parseInteger(value))
      return {};
    (where == "offset" ? offset : argument) = value;
  } else if (where != "external") {
    parser.emitError(loc) << "expected 'offset', 'argument' or 'external', "
                             "got '"
                          << where << "'";
    return {};
  }
  int64_t size, liveStart, liveEnd;
  if (parser.parseComma() || parser.parseKeyword("size") ||
      parser.parseEqual() || parser.parseInteger(size) ||
      parser.parseComma() || parser.parseKeyword("live") ||
      parser.parseEqual() || parser.parseLSquare() ||
      parser.parseInteger(liveStart) || parser.parseComma() ||
      parser.parseInteger(liveEnd) || parser.parseRSquare() ||
      parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), offset, argument, size, liveStart,
                    liveEnd);
}

void BufferAttr::print(AsmPrinter &printer) const {
  printer << "<";
  if (std::optional<int64_t> offset = getOffset())
    printer << "offset = " << *offset;
  else if (std::optional<int64_t> argument = getArgument())
    printer << "argument = " << *argument;
  else
    printer << "external";
  printer << ", size = " << getSize() << ", live = [" << getLiveStart()
          << ", " << getLiveEnd() << "]>";
}

LogicalResult
BufferAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                   std::optional<int64_t> offset,
                   std::optional<int64_t> argument, int64_t size,
                   int64_t liveStart, int64_t liveEnd) {
  if (offset && argument)
    return emitError() << "a buffer is in the arena or in an argument, not "
                          "both";
  if (offset && (*offset < 0 || *offset % ::fuse::kArenaAlignment != 0))
    return emitError() << "buffer offset " << *offset
                       << " is not a non-negative multiple of "
                       << ::fuse::kArenaAlignment;
  if (argument && *argument < 0)
    return emitError() << "buffer argument index " << *argument
                       << " is negative";
  if (size < 0)
    return emitError() << "buffer size " << size << " is negative";
  if (liveStart < 0 || liveStart > liveEnd)
    return emitError() << "buffer live range [" << liveStart << ", "
                       << liveEnd << "] is empty or negative";
  return success();
}

namespace {
/// Every fuse op is pure and has no region that refers to what surrounds
/// it, so calls into functions of fuse ops can be inlined (`--inline`):
/// the pipeline takes one function's ops only.
struct FuseInlinerInterface : DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void FuseDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fuse/Dialect/Fuse/IR/FuseAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "fuse/Dialect/Fuse/IR/FuseOps.cpp.inc"
      >();
  addInterfaces<FuseInlinerInterface>();
}

/// Checks a `fuse.name` on argument or result #`index` (`what` says which):
/// a string, and unique among the function's arguments (results). Uniqueness
/// is checked once, in one pass, at the first named argument (result).
static LogicalResult verifyName(Operation *op, StringRef what, unsigned index,
                                Attribute value) {
  if (!llvm::isa<StringAttr>(value))
    return op->emitError() << "'" << FuseDialect::kNameAttr << "' on " << what
                           << " #" << index << " must be a string, got "
                           << value;
  auto function = llvm::dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return success();
  bool isResult = what == "result";
  auto nameOf = [&](unsigned i) {
    return isResult ? function.getResultAttr(i, FuseDialect::kNameAttr)
                    : function.getArgAttr(i, FuseDialect::kNameAttr);
  };
  for (unsigned earlier = 0; earlier < index; ++earlier)
    if (nameOf(earlier))
      return success();
  unsigned count =
      isResult ? function.getNumResults() : function.getNumArguments();
  llvm::DenseMap<Attribute, unsigned> first;
  for (unsigned later = index; later < count; ++later) {
    Attribute name = nameOf(later);
    if (!name)
      continue;
    auto [found, inserted] = first.try_emplace(name, later);
    if (!inserted)
      return op->emitError() << what << "s #" << found->second << " and #"
                             << later << " are both named " << name << " ('"
                             << FuseDialect::kNameAttr << "' must be unique)";
  }
  return success();
}

/// `fuse.arena_offset` on argument or result #`index`: a non-negative i64
/// multiple of the arena's alignment.
static LogicalResult verifyArenaOffset(Operation *op, StringRef what,
                                       unsigned index, Attribute value) {
  auto offset = llvm::dyn_cast<IntegerAttr>(value);
  if (!offset || !offset.getType().isInteger(64) ||
      offset.getValue().isNegative() ||
      offset.getInt() % ::fuse::kArenaAlignment != 0)
    return op->emitError() << "'" << FuseDialect::kArenaOffsetAttr << "' on "
                           << what << " #" << index
                           << " must be a non-negative i64 multiple of "
                           << ::fuse::kArenaAlignment << ", got " << value;
  return success();
}

// `fuse.*` attributes on function arguments: `fuse.name`, `fuse.index_bound`,
// `fuse.donated` and `fuse.arena_offset`. Any other `fuse.` name is a typo that would otherwise be
// carried silently.
LogicalResult FuseDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attribute) {
  if (attribute.getName() == kNameAttr)
    return verifyName(op, "argument", argIndex, attribute.getValue());
  if (attribute.getName() == kIndexBoundAttr) {
    auto bound = llvm::dyn_cast<IntegerAttr>(attribute.getValue());
    if (!bound || bound.getValue().getSExtValue() <= 0)
      return op->emitError() << "'" << kIndexBoundAttr << "' on argument #"
                             << argIndex << " must be a positive integer, got "
                             << attribute.getValue();
    auto function = llvm::dyn_cast<FunctionOpInterface>(op);
    Type type = function ? function.getArgumentTypes()[argIndex] : Type();
    auto tensor = llvm::dyn_cast_or_null<ShapedType>(type);
    if (tensor && !llvm::isa<IntegerType>(tensor.getElementType()))
      return op->emitError() << "'" << kIndexBoundAttr << "' on argument #"
                             << argIndex << " needs an integer tensor, not "
                             << type;
    return success();
  }
  if (attribute.getName() == kDonatedAttr) {
    if (!llvm::isa<UnitAttr>(attribute.getValue()))
      return op->emitError() << "'" << kDonatedAttr << "' on argument #"
                             << argIndex << " takes no value, got "
                             << attribute.getValue();
    return success();
  }
  if (attribute.getName() == kArenaOffsetAttr)
    return verifyArenaOffset(op, "argument", argIndex, attribute.getValue());
  return op->emitError() << "unknown fuse argument attribute '"
                         << attribute.getName().getValue() << "' on argument #"
                         << argIndex << " (known: '" << kNameAttr << "', '"
                         << kIndexBoundAttr << "', '" << kDonatedAttr << "', '"
                         << kArenaOffsetAttr << "')";
}

// On function results: `fuse.name`, the name of a graph output, and where a
// result is left in the arena (`fuse.arena_offset`, `fuse.in_arena`). Any
// other `fuse.` name there is a typo or a misplaced argument attribute.
LogicalResult FuseDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned resultIndex,
                                                       NamedAttribute attribute) {
  if (attribute.getName() == kNameAttr)
    return verifyName(op, "result", resultIndex, attribute.getValue());
  if (attribute.getName() == kArenaOffsetAttr)
    return verifyArenaOffset(op, "result", resultIndex, attribute.getValue());
  if (attribute.getName() == kInArenaAttr) {
    if (!llvm::isa<UnitAttr>(attribute.getValue()))
      return op->emitError() << "'" << kInArenaAttr << "' on result #"
                             << resultIndex << " takes no value, got "
                             << attribute.getValue();
    return success();
  }
  return op->emitError() << "unknown fuse result attribute '"
                         << attribute.getName().getValue() << "' on result #"
                         << resultIndex << " (known: '" << kNameAttr << "', '"
                         << kArenaOffsetAttr << "', '" << kInArenaAttr << "')";
}

/// `fuse.buffers` on `op`: an op directly in a function body, one
/// #fuse.buffer per result, each of its result's size, and one in an
/// argument only in an existing argument that is donated (or viewed by a
/// reshape).
static LogicalResult verifyBuffers(Operation *op, Attribute value) {
  StringRef name = FuseDialect::kBuffersAttr;
  auto function = dyn_cast_or_null<FunctionOpInterface>(op->getParentOp());
  if (!function)
    return op->emitError() << "'" << name
                           << "' belongs only on ops directly in a function "
                              "body";
  auto buffers = dyn_cast<ArrayAttr>(value);
  if (!buffers)
    return op->emitError() << "'" << name
                           << "' must be an array of #fuse.buffer, got "
                           << value;
  if (buffers.size() != op->getNumResults())
    return op->emitError() << "'" << name << "' has " << buffers.size()
                           << " entries for " << op->getNumResults()
                           << " results";
  for (auto [index, entry] : llvm::enumerate(buffers)) {
    auto buffer = dyn_cast<BufferAttr>(entry);
    if (!buffer)
      return op->emitError() << "'" << name << "' entry #" << index
                             << " must be a #fuse.buffer, got " << entry;
    // Dialect attributes are verified before the op's own constraints, so
    // the result may be of any type here: only a static int or float tensor
    // of a representable size has a byte size to compare (an index tensor
    // has no bit width; the op or the graph type check rejects the others).
    auto type = dyn_cast<ShapedType>(op->getResult(index).getType());
    std::optional<int64_t> bytes;
    if (type && type.hasStaticShape() && type.getElementType().isIntOrFloat())
      bytes = ::fuse::checkedByteSize(
          type.getShape(), ::fuse::elementBytes(type.getElementTypeBitWidth()));
    if (bytes) {
      if (buffer.getSize() != *bytes)
        return op->emitError()
               << "'" << name << "' entry #" << index << " has size "
               << buffer.getSize() << ", but result #" << index << " ("
               << type << ") takes " << *bytes << " bytes";
    }
    std::optional<int64_t> argument = buffer.getArgument();
    if (!argument)
      continue;
    if (*argument >= static_cast<int64_t>(function.getNumArguments()))
      return op->emitError() << "'" << name << "' entry #" << index
                             << " is in argument #" << *argument
                             << ", but the function has "
                             << function.getNumArguments() << " arguments";
    if (!isa<ReshapeOp>(op) &&
        !function.getArgAttr(*argument, FuseDialect::kDonatedAttr))
      return op->emitError()
             << "'" << name << "' entry #" << index << " writes over argument #"
             << *argument << ", which is not donated ('"
             << FuseDialect::kDonatedAttr << "')";
  }
  return success();
}

/// `fuse.arena_size`, `fuse.arena_lower_bound` and `fuse.gemm_staging_bytes`
/// on a module or function: non-negative i64 bytes (the staging bound
/// positive), the size a multiple of the arena's alignment and not below
/// the bound.
static LogicalResult verifyBytesAttr(Operation *op, StringRef name,
                                     Attribute value) {
  if (!isa<ModuleOp, FunctionOpInterface>(op))
    return op->emitError() << "'" << name
                           << "' belongs on a module or a function";
  auto bytes = dyn_cast<IntegerAttr>(value);
  if (!bytes || !bytes.getType().isInteger(64) ||
      bytes.getValue().isNegative())
    return op->emitError() << "'" << name
                           << "' must be a non-negative i64, got " << value;
  if (name == FuseDialect::kGemmStagingBytesAttr && bytes.getInt() == 0)
    return op->emitError() << "'" << name << "' must be positive";
  if (name != FuseDialect::kArenaSizeAttr)
    return success();
  int64_t size = bytes.getInt();
  if (size % ::fuse::kArenaAlignment != 0)
    return op->emitError() << "'" << name << "' (" << size
                           << ") is not a multiple of "
                           << ::fuse::kArenaAlignment;
  auto bound =
      op->getAttrOfType<IntegerAttr>(FuseDialect::kArenaLowerBoundAttr);
  if (bound && bound.getType().isInteger(64) && bound.getInt() > size)
    return op->emitError() << "'" << name << "' (" << size
                           << ") is below '"
                           << FuseDialect::kArenaLowerBoundAttr << "' ("
                           << bound.getInt() << ")";
  return success();
}

// On operations: the memory plan and the staging bound. Any other `fuse.`
// name is a typo or a misplaced argument or result attribute.
LogicalResult FuseDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (name == kBuffersAttr)
    return verifyBuffers(op, attribute.getValue());
  if (name == kArenaSizeAttr || name == kArenaLowerBoundAttr ||
      name == kGemmStagingBytesAttr)
    return verifyBytesAttr(op, name, attribute.getValue());
  return op->emitError() << "unknown fuse attribute '" << name
                         << "' on an operation (known: '" << kBuffersAttr
                         << "', '" << kArenaSizeAttr << "', '"
                         << kArenaLowerBoundAttr << "', '"
                         << kGemmStagingBytesAttr << "'; '" << kNameAttr
                         << "', '" << kIndexBoundAttr << "' and '"
                         << kDonatedAttr << "' belong on function arguments, '"
                         << kNameAttr << "' on results)";
}
