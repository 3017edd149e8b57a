//===- JsonWriter.h - Minimal JSON text output ------------------*- C++ -*-===//
//
// The profile, the trace and the calibration cache are small JSON documents;
// a dozen lines of writer beat a new dependency. Values are appended with
// their keys; commas are placed by the writer. NaN and infinities (figures
// not known) are written as null. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_RUNTIME_JSONWRITER_H
#define FUSE_LIB_RUNTIME_JSONWRITER_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace fuse::runtime::detail {

inline std::string jsonQuote(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    default:
      if (c < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
        out += escaped;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  return out + "\"";
}

/// Shortest text that reads back to the same double (%.17g would too, but
/// %.10g keeps the files readable; profile figures have far fewer digits).
inline std::string jsonNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  char text[40];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

class JsonWriter {
public:
  JsonWriter &beginObject(const char *key = nullptr) { return open(key, '{'); }
  JsonWriter &endObject() { return close('}'); }
  JsonWriter &beginArray(const char *key = nullptr) { return open(key, '['); }
  JsonWriter &endArray() { return close(']'); }
  JsonWriter &value(const char *key, const std::string &text) {
    return raw(key, jsonQuote(text));
  }
  JsonWriter &value(const char *key, const char *text) {
    return raw(key, jsonQuote(text));
  }
  JsonWriter &value(const char *key, double number) {
    return raw(key, jsonNumber(number));
  }
  JsonWriter &value(const char *key, int64_t number) {
    return raw(key, std::to_string(number));
  }
  JsonWriter &value(const char *key, int number) {
    return raw(key, std::to_string(number));
  }
  JsonWriter &value(const char *key, bool flag) {
    return raw(key, flag ? "true" : "false");
  }
  /// `json` is already JSON text.
  JsonWriter &raw(const char *key, const std::string &json) {
    separate(key);
    text_ += json;
    return *this;
  }
  const std::string &str() const { return text_; }

private:
  JsonWriter &open(const char *key, char bracket) {
    separate(key);
    text_ += bracket;
    first_.push_back(true);
    return *this;
  }
  JsonWriter &close(char bracket) {
    first_.pop_back();
    text_ += '\n' + std::string(2 * first_.size(), ' ') + bracket;
    return *this;
  }
  void separate(const char *key) {
    if (!first_.empty()) {
      text_ += first_.back() ? "\n" : ",\n";
      first_.back() = false;
      text_ += std::string(2 * first_.size(), ' ');
    }
    if (key)
      text_ += jsonQuote(key) + ": ";
  }
  std::string text_;
  std::vector<bool> first_;
};

} // namespace fuse::runtime::detail

#endif // FUSE_LIB_RUNTIME_JSONWRITER_H
