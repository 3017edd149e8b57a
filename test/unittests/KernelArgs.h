//===- KernelArgs.h - Launch arguments for hand-built executables -*- C++ -*-===//
//
// The code generator records with every launch argument its dtype, the bytes
// from there to the end of its buffer and whether the kernel writes it
// (runtime::KernelArg); the GPU tests that build executables by hand record
// the same from the executable's own signature.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_TEST_UNITTESTS_KERNELARGS_H
#define FUSE_TEST_UNITTESTS_KERNELARGS_H

#include "fuse/Runtime/Executable.h"

#include <initializer_list>
#include <vector>

namespace fuse::runtime::testing {

/// `ref` over the rest of its buffer: an input, output or constant in its
/// own dtype, the arena and the workspace as `dtype`. Outputs are written,
/// everything else read.
inline KernelArg argOf(const Executable &exe, const BufferRef &ref,
                       DType dtype = DType::F32) {
  const TensorSpec *spec = nullptr;
  int64_t region = 0;
  switch (ref.kind) {
  case BufferRef::Kind::Arena: region = exe.arenaBytes; break;
  case BufferRef::Kind::Workspace: region = exe.workspaceBytes; break;
  case BufferRef::Kind::Input: spec = &exe.inputs.at(ref.index); break;
  case BufferRef::Kind::Output: spec = &exe.outputs.at(ref.index); break;
  case BufferRef::Kind::Constant:
    spec = &exe.constants.at(ref.index).spec;
    break;
  }
  if (spec) {
    region = spec->bytes();
    dtype = spec->dtype;
  }
  return {ref, dtype, region - ref.offset,
          ref.kind == BufferRef::Kind::Output};
}

/// argOf for each of `refs`, in order.
inline std::vector<KernelArg> argsOf(const Executable &exe,
                                     const std::vector<BufferRef> &refs,
                                     DType dtype = DType::F32) {
  std::vector<KernelArg> args;
  for (const BufferRef &ref : refs)
    args.push_back(argOf(exe, ref, dtype));
  return args;
}

} // namespace fuse::runtime::testing

#endif // FUSE_TEST_UNITTESTS_KERNELARGS_H
