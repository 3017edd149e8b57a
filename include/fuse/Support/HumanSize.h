//===- HumanSize.h - Byte counts for people ---------------------*- C++ -*-===//
//
// The one byte formatter, in binary units (KiB, MiB, GiB: powers of 1024,
// as device memory and allocations are counted). Used by the runtime (plan
// text, profiler tables, allocation errors) and by the passes' messages and
// printers (fuse-print-cost, fuse-print-memory, fuse-plan-memory,
// fuse-rematerialize), so the same size reads the same everywhere; and its
// inverse for sizes given on a command line (fuse-run --max-memory). Plain
// C++, header-only, so every layer may include it.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_SUPPORT_HUMANSIZE_H
#define FUSE_SUPPORT_HUMANSIZE_H

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <optional>
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

/// The other way, for command-line sizes: a whole number of bytes,
/// optionally followed by K, M, G or T (powers of 1024, as humanBytes
/// prints them; "KiB", "KB" and lower case mean the same): "4096", "512M",
/// "16GiB". Nullopt for anything else, for 0 and for more than int64 holds.
inline std::optional<int64_t> parseHumanBytes(const std::string &text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
    ++digits;
  if (digits == 0 || digits > 19)
    return std::nullopt;
  std::string unit = text.substr(digits);
  int shift = 0;
  if (!unit.empty()) {
    const std::string letters = "KMGT";
    size_t at = letters.find(static_cast<char>(std::toupper(unit[0])));
    std::string rest = unit.substr(1);
    for (char &c : rest)
      c = static_cast<char>(std::tolower(c));
    if (at == std::string::npos || !(rest.empty() || rest == "b" || rest == "ib"))
      return std::nullopt;
    shift = 10 * static_cast<int>(at + 1);
  }
  uint64_t value = std::stoull(text.substr(0, digits));
  if (value == 0 || value > (uint64_t(INT64_MAX) >> shift))
    return std::nullopt;
  return static_cast<int64_t>(value << shift);
}

} // namespace fuse

#endif // FUSE_SUPPORT_HUMANSIZE_H
