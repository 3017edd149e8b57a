//===- Status.h - Error results of the runtime ------------------*- C++ -*-===//
//
// The runtime has no MLIR and no LLVM: its errors are plain values. A Status
// is ok or carries one message that already says what failed and where
// (kernel, step, file), ready to print after "error: ".
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_RUNTIME_STATUS_H
#define FUSE_RUNTIME_STATUS_H

#include <optional>
#include <string>
#include <utility>

namespace fuse::runtime {

class Status {
public:
  static Status success() { return Status(); }
  static Status failure(std::string message) {
    Status status;
    status.message_ = std::move(message);
    return status;
  }
  bool ok() const { return !message_.has_value(); }
  explicit operator bool() const { return ok(); }
  /// Empty when ok.
  const std::string &message() const {
    static const std::string empty;
    return message_ ? *message_ : empty;
  }

private:
  std::optional<std::string> message_;
};

/// A value or the Status that explains why there is none.
template <typename T> class StatusOr {
public:
  StatusOr(T value) : value_(std::move(value)) {}
  StatusOr(Status status) : status_(std::move(status)) {}
  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status &status() const { return status_; }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace fuse::runtime

#endif // FUSE_RUNTIME_STATUS_H
