//===- CodegenContext.cpp - State shared by the lowerings -----------------===//

#include "CodegenContext.h"

#include "fuse/Analysis/CostModel.h"
#include "fuse/Dialect/Fuse/IR/FuseOps.h"
#include "fuse/Dialect/Fuse/IR/LocationLabels.h"
#include "fuse/Runtime/GraphGuard.h"

#include "mlir/Analysis/SliceAnalysis.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::runtime::BufferRef;

namespace fuse::codegen {

std::string KernelParams::add(const std::string &prefix, DType dtype,
                              bool isConst, const BufferRef &ref) {
  std::string name = prefix + std::to_string(args.size());
  declarations.push_back(std::string(isConst ? "const " : "") +
                         storageType(dtype) + " *" +
                         (isConst ? " __restrict__ " : " ") + name);
  args.push_back(isConst ? runtime::KernelArg::read(ref, dtype, 0)
                         : runtime::KernelArg::write(ref, dtype, 0));
  return name;
}

void KernelParams::markAliased(int index, DType dtype) {
  std::string name = "in" + std::to_string(index);
  declarations[index] = "const " + storageType(dtype) + " *" + name;
}

std::string KernelParams::addTensorMap(const std::string &prefix,
                                       const runtime::TensorMapArg &map) {
  std::string name = prefix + std::to_string(tensorMaps.size());
  tensorMapDeclarations.push_back("const __grid_constant__ fuse::TensorMap " +
                                  name);
  tensorMaps.push_back(map);
  return name;
}

std::string kernelSignature(const KernelParams &params, int threadsPerBlock,
                            int minBlocksPerMultiprocessor) {
  std::string bounds = std::to_string(threadsPerBlock);
  if (minBlocksPerMultiprocessor > 0)
    bounds += ", " + std::to_string(minBlocksPerMultiprocessor);
  std::string text = "extern \"C\" __global__ void __launch_bounds__(" +
                     bounds + ") @KERNEL@(";
  // The runtime passes the pointers of KernelLaunch::args, then the maps.
  size_t count = 0;
  for (const std::string &declaration : params.declarations)
    text += (count++ ? ", " : "") + declaration;
  for (const std::string &declaration : params.tensorMapDeclarations)
    text += (count++ ? ", " : "") + declaration;
  return text + ") {\n";
}

void CodegenContext::setLocation(Value value, ValueLocation location) {
  locations_[value] = std::move(location);
}

const ValueLocation &CodegenContext::location(Value value) const {
  auto found = locations_.find(value);
  assert(found != locations_.end() && "value without a location");
  return found->second;
}

BufferRef CodegenContext::buffer(Value value) const {
  const ValueLocation &where = location(value);
  assert(where.buffer && "splat constant used as a buffer");
  return *where.buffer;
}

BufferRef CodegenContext::constant(Operation *constantOp) {
  auto found = constants_.find(constantOp);
  if (found != constants_.end())
    return BufferRef::constant(found->second);
  auto constant = cast<ConstantOp>(constantOp);
  runtime::ConstantData data;
  Value result = constant.getResult();
  data.spec.name = "constant" + std::to_string(executable_.constants.size());
  data.spec.dtype = dtypeOf(result);
  data.spec.shape = shapeOf(result);
  auto elements = cast<DenseElementsAttr>(constant.getValue());
  DType dtype = data.spec.dtype;
  HostTensor tensor(dtype, data.spec.shape);
  int64_t i = 0;
  if (isFloat(dtype)) {
    for (APFloat v : elements.getValues<APFloat>())
      tensor.set(i++, v.convertToDouble());
  } else {
    for (APInt v : elements.getValues<APInt>())
      tensor.setInt(i++, dtype == DType::I1 ? v.getZExtValue() : v.getSExtValue());
  }
  data.bytes = tensor.toBytes();
  int64_t index = static_cast<int64_t>(executable_.constants.size());
  executable_.constants.push_back(std::move(data));
  constants_[constantOp] = index;
  return BufferRef::constant(index);
}

BufferRef CodegenContext::workspace(int64_t bytes) {
  int64_t offset = workspaceUsed_;
  workspaceUsed_ += (bytes + 255) / 256 * 256;
  executable_.workspaceBytes =
      std::max(executable_.workspaceBytes, workspaceUsed_);
  return BufferRef::workspace(offset);
}

namespace {

/// `value` with the reshapes it comes through peeled off: reshapes are
/// views, so every reshape of one value is the same memory.
mlir::Value viewedValue(mlir::Value value) {
  while (auto reshape = value.getDefiningOp<mlir::fuse::ReshapeOp>())
    value = reshape.getOperand();
  return value;
}

/// The last top-level op after `current` that runs a GEMM (a matmul or a
/// gemm_epilogue fusion) on `root` or a reshape of it; null if none.
mlir::Operation *lastGemmReaderAfter(mlir::Value root, mlir::Operation *current) {
  mlir::Operation *last = nullptr;
  llvm::SmallVector<mlir::Value> views{root};
  while (!views.empty()) {
    mlir::Value view = views.pop_back_val();
    for (mlir::Operation *user : view.getUsers()) {
      if (auto reshape = llvm::dyn_cast<mlir::fuse::ReshapeOp>(user)) {
        views.push_back(reshape.getResult());
        continue;
      }
      auto fusion = llvm::dyn_cast<mlir::fuse::FusionOp>(user);
      bool gemm = llvm::isa<mlir::fuse::MatmulOp>(user) ||
                  (fusion && fusion.getKind() == mlir::fuse::FusionKind::GemmEpilogue);
      if (!gemm || user->getBlock() != current->getBlock() ||
          !current->isBeforeInBlock(user))
        continue;
      if (!last || last->isBeforeInBlock(user))
        last = user;
    }
  }
  return last;
}

} // namespace

void CodegenContext::beginStep(mlir::Operation *op) {
  currentStep_ = op;
  llvm::erase_if(keptCopies_, [&](const KeptCopy &kept) {
    return kept.lastReader->isBeforeInBlock(op);
  });
  workspaceUsed_ = 0;
  for (const KeptCopy &kept : keptCopies_)
    workspaceUsed_ = std::max(workspaceUsed_, kept.end);
}

CodegenContext::StagedCopy CodegenContext::stagedCopy(mlir::Value source,
                                                      const StagedLayout &layout) {
  mlir::Value root = source ? viewedValue(source) : mlir::Value();
  if (root)
    for (const KeptCopy &kept : keptCopies_)
      if (kept.source == root && kept.layout == layout)
        return {kept.copy, true};
  BufferRef copy = workspace(layout.matrices * layout.toRows * layout.toCols *
                             static_cast<int64_t>(dtypeSize(layout.dtype)));
  if (root && currentStep_)
    if (mlir::Operation *last = lastGemmReaderAfter(root, currentStep_))
      keptCopies_.push_back({root, layout, copy, workspaceUsed_, last});
  return {copy, false};
}

int64_t CodegenContext::extentFrom(const BufferRef &ref) const {
  auto specBytes = [&](const auto &specs, auto bytesOf) -> int64_t {
    if (ref.index < 0 || ref.index >= static_cast<int64_t>(specs.size()))
      return 0; // validateExecutable names the bad index
    return bytesOf(specs[ref.index]);
  };
  auto ofSpec = [](const runtime::TensorSpec &spec) { return spec.bytes(); };
  int64_t region = 0;
  switch (ref.kind) {
  case BufferRef::Kind::Arena: region = executable_.arenaBytes; break;
  case BufferRef::Kind::Workspace: region = executable_.workspaceBytes; break;
  case BufferRef::Kind::Input:
    region = specBytes(executable_.inputs, ofSpec);
    break;
  case BufferRef::Kind::Output:
    region = specBytes(executable_.outputs, ofSpec);
    break;
  case BufferRef::Kind::Constant:
    region = specBytes(executable_.constants,
                       [](const runtime::ConstantData &c) { return c.spec.bytes(); });
    break;
  }
  return std::max<int64_t>(region - ref.offset, 0);
}

std::string CodegenContext::kernelName(const std::string &kind) {
  return "fuse_" + kind + "_" + std::to_string(kindCounts_[kind]++);
}

void CodegenContext::addLaunch(const KernelSpec &spec, const std::string &label,
                               const std::string &kernelComment, double flops,
                               double bytes) {
  int64_t kernelIndex;
  auto found = kernelByBody_.find(spec.body);
  if (found != kernelByBody_.end()) {
    kernelIndex = found->second;
  } else {
    runtime::Kernel kernel;
    kernel.name = kernelName(spec.kind);
    std::string body = spec.body;
    size_t at = body.find("@KERNEL@");
    body.replace(at, 8, kernel.name);
    kernel.body = "// " + kernel.name + ": " + kernelComment + "\n" + body;
    kernel.helpers = spec.helpers;
    // The signature names fuse::TensorMap.
    if (!spec.tensorMaps.empty() &&
        !llvm::is_contained(kernel.helpers, "tensor_map.cuh"))
      kernel.helpers.push_back("tensor_map.cuh");
    kernelIndex = static_cast<int64_t>(executable_.kernels.size());
    executable_.kernels.push_back(std::move(kernel));
    kernelByBody_[spec.body] = kernelIndex;
  }
  runtime::KernelLaunch launch;
  launch.kernel = kernelIndex;
  launch.grid = spec.grid;
  launch.block = spec.block;
  launch.sharedBytes = spec.sharedBytes;
  launch.args = spec.args;
  for (runtime::KernelArg &arg : launch.args)
    arg.bytes = extentFrom(arg.ref);
  launch.tensorMaps = spec.tensorMaps;
  launch.persistentBlocksPerMultiprocessor = spec.persistentBlocksPerMultiprocessor;
  launch.changesOnlyWhen = spec.changesOnlyWhen;
  if (!spec.changesOnlyWhen.empty() &&
      llvm::none_of(executable_.kernels, [](const runtime::Kernel &k) {
        return k.name == runtime::kGraphGuardKernel;
      }))
    executable_.kernels.push_back(runtime::graphGuardKernel());
  runtime::Step step;
  step.kind = runtime::Step::Kind::Launch;
  step.index = static_cast<int64_t>(executable_.launches.size());
  step.label = label;
  step.flops = flops;
  step.bytes = bytes;
  executable_.launches.push_back(std::move(launch));
  executable_.steps.push_back(std::move(step));
}

void CodegenContext::addGemm(const runtime::GemmStep &gemm,
                             const std::string &label, double flops,
                             double bytes) {
  runtime::Step step;
  step.kind = runtime::Step::Kind::Gemm;
  step.index = static_cast<int64_t>(executable_.gemms.size());
  step.label = label;
  step.flops = flops;
  step.bytes = bytes;
  executable_.gemms.push_back(gemm);
  executable_.steps.push_back(std::move(step));
}

void CodegenContext::addFill(const runtime::FillStep &fill,
                             const std::string &label) {
  runtime::Step step;
  step.kind = runtime::Step::Kind::Fill;
  step.index = static_cast<int64_t>(executable_.fills.size());
  step.label = label;
  step.bytes = static_cast<double>(fill.bytes);
  executable_.fills.push_back(fill);
  executable_.steps.push_back(std::move(step));
}

void CodegenContext::addCopy(const runtime::CopyStep &copy,
                             const std::string &label) {
  runtime::Step step;
  step.kind = runtime::Step::Kind::Copy;
  step.index = static_cast<int64_t>(executable_.copies.size());
  step.label = label;
  step.bytes = 2.0 * static_cast<double>(copy.bytes);
  executable_.copies.push_back(copy);
  executable_.steps.push_back(std::move(step));
}

std::vector<InputBinding> CodegenContext::bindInputs(Operation *fusion,
                                                     KernelParams &params) {
  std::vector<InputBinding> bindings;
  for (Value input : fusion->getOperands()) {
    const ValueLocation &where = location(input);
    InputBinding binding;
    if (where.literal)
      binding.literal = where.literal;
    else {
      binding.paramIndex = static_cast<int>(params.args.size());
      binding.param = params.add("in", dtypeOf(input), true, *where.buffer);
    }
    bindings.push_back(binding);
  }
  return bindings;
}

std::set<unsigned>
CodegenContext::markInPlaceInputs(mlir::Operation *fusion,
                                  const std::vector<InputBinding> &inputs,
                                  KernelParams &params) const {
  std::set<unsigned> inPlace;
  for (unsigned i = 0; i < fusion->getNumOperands(); ++i) {
    int index = inputs[i].paramIndex;
    if (index < 0)
      continue;
    for (mlir::Value result : fusion->getResults())
      if (buffer(result) == params.args[index].ref) {
        inPlace.insert(i);
        params.markAliased(index, dtypeOf(fusion->getOperand(i)));
      }
  }
  return inPlace;
}

void CodegenContext::bindDenseConstants(const ScalarEmitter &emitter,
                                        KernelParams &params) {
  // The emitter calls them const0, const1, ...: declare them under those
  // names, after the inputs and outputs.
  for (auto [i, op] : llvm::enumerate(emitter.denseConstants())) {
    Value result = op->getResult(0);
    params.declarations.push_back("const " + storageType(dtypeOf(result)) +
                                  " * __restrict__ const" + std::to_string(i));
    params.args.push_back(
        runtime::KernelArg::read(constant(op), dtypeOf(result), 0));
  }
}

BodySlice bodySlice(Value value) {
  BodySlice slice;
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    slice.arguments.push_back(argument);
    return slice;
  }
  BackwardSliceOptions options;
  options.inclusive = true;
  // Stop at the body's arguments: not through them to the fusion op.
  options.omitBlockArguments = true;
  (void)getBackwardSlice(value, &slice.ops, options);
  for (Operation *op : slice.ops)
    for (Value operand : op->getOperands())
      if (auto argument = dyn_cast<BlockArgument>(operand))
        slice.arguments.push_back(argument);
  return slice;
}

std::string describeOp(Operation *op) {
  std::vector<std::string> names, sources;
  auto note = [&](Operation *inner) {
    if (isa<YieldOp>(inner))
      return;
    std::string name = inner->getName().stripDialect().str();
    if (!llvm::is_contained(names, name))
      names.push_back(name);
    std::string source = sourceLabel(inner->getLoc());
    if (!source.empty() && !llvm::is_contained(sources, source))
      sources.push_back(source);
  };
  std::string text;
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    text = stringifyFusionKind(fusion.getKind()).str() + ":";
    for (Operation &inner : fusion.getBody().front())
      note(&inner);
  } else {
    text = op->getName().stripDialect().str() + ":";
    note(op);
  }
  for (auto [i, name] : llvm::enumerate(names))
    text += (i ? ", " : " ") + name;
  if (!sources.empty()) {
    text += " (";
    for (size_t i = 0; i < sources.size() && i < 3; ++i)
      text += (i ? "; " : "") + sources[i];
    if (sources.size() > 3)
      text += "; ...";
    text += ")";
  }
  return text;
}

std::pair<double, double> stepCost(Operation *op) {
  FailureOr<::fuse::OpCost> cost = computeOpCost(op);
  if (failed(cost))
    return {0.0, 0.0};
  return {static_cast<double>(cost->flops),
          static_cast<double>(cost->bytesRead + cost->bytesWritten)};
}

std::string indexTypeFor(Operation *op) {
  int64_t largest = 0;
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (auto shaped = dyn_cast<ShapedType>(v.getType()))
        largest = std::max(largest, shaped.getNumElements());
    for (Value v : inner->getResults())
      if (auto shaped = dyn_cast<ShapedType>(v.getType()))
        largest = std::max(largest, shaped.getNumElements());
  });
  return largest < (int64_t(1) << 31) ? "int" : "long long";
}

} // namespace fuse::codegen
