//===- Handles.h - What the C API's opaque handles hold ---------*- C++ -*-===//
//
// The structs behind FuseExecutable and FuseSession, and the error state
// every entry point goes through (ErrorState.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_CAPI_HANDLES_H
#define FUSE_LIB_CAPI_HANDLES_H

#include "fuse-c/Fuse.h"
#include "fuse/Runtime/Executable.h"
#include "fuse/Runtime/Status.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fuse::runtime {
class Executor;
class ScratchMemory;
} // namespace fuse::runtime

struct FuseExecutable {
  fuse::runtime::Executable executable;
  /// Where fuseCompile's time went (parse and verify, each pass, code
  /// generation), in order; empty for an executable read from a file.
  std::vector<std::pair<std::string, double>> compilePhases;
};

struct FuseScratch {
  std::shared_ptr<fuse::runtime::ScratchMemory> memory;
};

struct FuseSession {
  std::unique_ptr<fuse::runtime::Executor> executor;
  ~FuseSession();
};

namespace fuse::capi {

/// Records `message` as this thread's last error.
void setLastError(std::string message);
/// Forgets the last error (every entry point starts with it cleared).
void clearLastError();

/// Runs `body` with the last error cleared; an exception that escapes it
/// (out of host memory, a bug) becomes the last error instead of crossing
/// the C boundary. `failed` is what the entry point returns then.
template <typename T>
T guarded(const char *function, T failed, const std::function<T()> &body) {
  clearLastError();
  try {
    return body();
  } catch (const std::exception &error) {
    setLastError(std::string(function) + ": " + error.what());
  } catch (...) {
    setLastError(std::string(function) + ": unexpected C++ exception");
  }
  return failed;
}

/// A malloc'd copy the caller frees with fuseFreeString.
char *copyString(const std::string &text);

/// Records a failed Status and returns `failed`.
template <typename T> T fail(const runtime::Status &status, T failed) {
  setLastError(status.message());
  return failed;
}

} // namespace fuse::capi

#endif // FUSE_LIB_CAPI_HANDLES_H
