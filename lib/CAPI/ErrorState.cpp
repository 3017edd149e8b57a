//===- ErrorState.cpp - The C API's last error and owned strings ----------===//

#include "Handles.h"

#include <cstdlib>
#include <cstring>

namespace {
// One per thread: a caller reads the message of its own last failure.
thread_local std::string lastError;
} // namespace

void fuse::capi::setLastError(std::string message) {
  lastError = std::move(message);
}

void fuse::capi::clearLastError() { lastError.clear(); }

char *fuse::capi::copyString(const std::string &text) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  if (!copy)
    throw std::bad_alloc();
  std::memcpy(copy, text.data(), text.size());
  copy[text.size()] = '\0';
  return copy;
}

extern "C" {

const char *fuseApiVersion(void) { return "fuse-c/3"; }

const char *fuseLastError(void) { return lastError.c_str(); }

void fuseFreeString(char *string) { std::free(string); }

} // extern "C"
