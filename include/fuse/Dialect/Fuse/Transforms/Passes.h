//===- Passes.h - Fuse pass entry points ------------------------*- C++ -*-===//

#ifndef FUSE_DIALECT_FUSE_TRANSFORMS_PASSES_H
#define FUSE_DIALECT_FUSE_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::fuse {

#define GEN_PASS_DECL
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"

/// Options of `fuse-pipeline`, the graph passes in the order the compiler
/// runs them.
struct FusePipelineOptions : public PassPipelineOptions<FusePipelineOptions> {
  Option<std::string> amp{
      *this, "amp",
      llvm::cl::desc("Precision of matmul and attention: bf16, f16 (with "
                     "dynamic loss scaling in training steps) or none (f32)"),
      llvm::cl::init("bf16")};
  ListOption<std::string> keep{
      *this, "keep",
      llvm::cl::desc("Composite ops fuse-decompose leaves whole (its `keep`; "
                     "default gelu, which a GEMM epilogue applies; none "
                     "decomposes every composite)"),
      llvm::cl::list_init<std::string>({"gelu"})};
  Option<unsigned> maxInputs{
      *this, "max-inputs",
      llvm::cl::desc("Most inputs a fusion may read (fuse-form-fusions)"),
      llvm::cl::init(24)};
  Option<unsigned> maxOutputs{
      *this, "max-outputs",
      llvm::cl::desc("Most results a fusion may write (fuse-form-fusions)"),
      llvm::cl::init(8)};
  Option<int64_t> rematBudget{
      *this, "remat-budget",
      llvm::cl::desc("Peak bytes of a training step not to exceed "
                     "(fuse-rematerialize's budget; 0: none)"),
      llvm::cl::init(0)};
  Option<double> rematFraction{
      *this, "remat-fraction",
      llvm::cl::desc("Budget as a fraction of the peak without "
                     "rematerialization (fuse-rematerialize's fraction)"),
      llvm::cl::init(0)};
  Option<bool> narrowResults{
      *this, "narrow-results",
      llvm::cl::desc("Return results computed in the amp type in that type, "
                     "as torch.autocast does (fuse-auto-mixed-precision's "
                     "narrow-results; for inference graphs)"),
      llvm::cl::init(false)};
  Option<bool> weightCopies{
      *this, "weight-copies",
      llvm::cl::desc("Keep the amp-type copy of each weight the step updates "
                     "in place as state, written by the update "
                     "(fuse-auto-mixed-precision's weight-copies; for "
                     "training steps with an in-graph optimizer)"),
      llvm::cl::init(false)};
  Option<int64_t> maxArenaBytes{
      *this, "max-arena-bytes",
      llvm::cl::desc("Largest arena the device can hold (fuse-plan-memory; "
                     "0: unlimited)"),
      llvm::cl::init(0)};
};

/// Adds the passes of `fuse-pipeline` to `pm`: fuse-auto-mixed-precision
/// (unless amp=none), fuse-decompose, canonicalize, cse, fuse-form-fusions,
/// fuse-rematerialize, fuse-schedule, fuse-plan-memory.
void buildFusePipeline(OpPassManager &pm, const FusePipelineOptions &options);

/// Registers `fuse-pipeline` for textual pipelines (fuse-opt, --check-pipeline).
void registerFusePipeline();

} // namespace mlir::fuse

#endif // FUSE_DIALECT_FUSE_TRANSFORMS_PASSES_H
