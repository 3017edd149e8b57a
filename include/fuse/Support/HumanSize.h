//===- HumanSize.h - Byte counts for people ---------------------*- C++ -*-===//
//
// The one byte formatter, in binary units (KiB, MiB, GiB: powers of 1024,
// as device memory and allocations are counted). Used by the runtime (plan
// text, profiler tables, allocation errors) and by the passes' messages and
// printers (fuse-print-cost, fuse-print-memory, fuse-plan-memory,
// fuse-rematerialize), so the same size reads the same everywhere. Plain
// C++, header-only, so every layer may include it.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_SUPPORT_HUMANSIZE_H
#define FUSE_SUPPORT_HUMANSIZE_H

#include <cstdint>
#include <cstdio>
#include <string>

namespace fuse {

/// "512 B", "4.00 KiB", "1.50 GiB", "96.0 KiB": three significant digits at
/// most.
inline std::string humanBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  constexpr int lastUnit = 6;
  double value = static_cast<double>(bytes);
  int unit = 0;
  while ((value >= 1024 || value <= -1024) && unit < lastUnit) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(text, sizeof text,
                  (value < 10 && value > -10) ? "%.2f %s" : "%.1f %s", value,
                  units[unit]);
  return text;
}

} // namespace fuse

#endif // FUSE_SUPPORT_HUMANSIZE_H
