//===- HumanSize.h - Byte counts for people ---------------------*- C++ -*-===//

#ifndef FUSE_LIB_RUNTIME_HUMANSIZE_H
#define FUSE_LIB_RUNTIME_HUMANSIZE_H

#include <cstdint>
#include <cstdio>
#include <string>

namespace fuse::runtime::detail {

/// "512 B", "4.0 KiB", "1.50 GiB": three significant digits at most.
inline std::string humanBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while ((value >= 1024 || value <= -1024) && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(text, sizeof text, value < 10 ? "%.2f %s" : "%.1f %s", value,
                  units[unit]);
  return text;
}

} // namespace fuse::runtime::detail

#endif // FUSE_LIB_RUNTIME_HUMANSIZE_H
