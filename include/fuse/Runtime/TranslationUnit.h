//===- TranslationUnit.h - Kernels as one CUDA source -----------*- C++ -*-===//
//
// Puts an executable's kernels and the kernels/ helpers they use together
// into CUDA C++ that NVRTC compiles as it is. Plain C++: fuse-translate
// prints it on machines without the CUDA toolkit too.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_RUNTIME_TRANSLATIONUNIT_H
#define FUSE_RUNTIME_TRANSLATIONUNIT_H

#include "fuse/Runtime/Executable.h"

#include <string>
#include <vector>

namespace fuse::runtime {

/// One self-contained CUDA translation unit: the helper files the chosen
/// kernels use (each once, in a fixed order), then their bodies. Compiles with
/// NVRTC as it is, no include paths needed.
std::string translationUnit(const Executable &executable,
                            const std::vector<int64_t> &kernelIndices);
/// All kernels.
std::string translationUnit(const Executable &executable);

} // namespace fuse::runtime

#endif // FUSE_RUNTIME_TRANSLATIONUNIT_H
