//===- ExecutableIO.h - Executables to and from files -----------*- C++ -*-===//
//
// A versioned binary format (magic "FUSEEXE", a format version, then every
// field of Executable) so a plan compiled on one machine runs on another; a
// file of another version or a truncated one is refused with a message, never
// half-read. formatPlan() is the human-readable launch plan that
// `fuse-translate --emit-plan` prints.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_RUNTIME_EXECUTABLEIO_H
#define FUSE_RUNTIME_EXECUTABLEIO_H

#include "fuse/Runtime/Executable.h"
#include "fuse/Runtime/Status.h"

#include <string>
#include <vector>

namespace fuse::runtime {

std::vector<uint8_t> serializeExecutable(const Executable &executable);
/// `origin` names the bytes (a file path) in error messages.
StatusOr<Executable> deserializeExecutable(const std::vector<uint8_t> &bytes,
                                           const std::string &origin);

Status writeExecutableFile(const Executable &executable,
                           const std::string &path);
StatusOr<Executable> readExecutableFile(const std::string &path);

/// "arena+4096", "input 3 (input_ids)", "output 0 (loss)+256", ...
std::string formatBufferRef(const Executable &executable,
                            const BufferRef &ref);
/// The launch plan: signature, arena and workspace sizes, then one line per
/// step (kernel with grid/block/shared bytes and arguments as buffer refs;
/// GEMM descriptor; fill; copy) with its label.
std::string formatPlan(const Executable &executable);

} // namespace fuse::runtime

#endif // FUSE_RUNTIME_EXECUTABLEIO_H
