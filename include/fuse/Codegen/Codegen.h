//===- Codegen.h - A planned graph to an Executable -------------*- C++ -*-===//
//
// Turns a function that went through fuse-pipeline (fusions formed, memory
// planned: every op carries #fuse.buffer placements) into a
// runtime::Executable: one CUDA kernel per fusion from the template of its
// kind, cuBLASLt GEMM steps for matmuls (epilogue folded where cuBLASLt has
// it), attention as GEMMs around fused softmax kernels.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_CODEGEN_CODEGEN_H
#define FUSE_CODEGEN_CODEGEN_H

#include "fuse/Runtime/Executable.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace fuse::codegen {

struct CodegenOptions {
  std::string arch = "sm_90a";
};

/// Errors are emitted as diagnostics on the op that cannot be lowered.
mlir::FailureOr<runtime::Executable>
buildExecutable(mlir::func::FuncOp func, const CodegenOptions &options = {});

} // namespace fuse::codegen

#endif // FUSE_CODEGEN_CODEGEN_H
