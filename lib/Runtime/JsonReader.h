//===- JsonReader.h - Minimal JSON parsing ----------------------*- C++ -*-===//
//
// Reads back what JsonWriter writes: the calibration cache, and the tests'
// check that a profile or a trace parses. Objects keep their keys in order;
// numbers are doubles; null is its own kind. Not a general-purpose parser
// (no \u escapes beyond Latin-1, no depth limit beyond the stack).
// Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_RUNTIME_JSONREADER_H
#define FUSE_LIB_RUNTIME_JSONREADER_H

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fuse::runtime::detail {

struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;

  /// The member named `key`, or nullptr.
  const JsonValue *find(const std::string &key) const {
    for (const auto &[name, value] : members)
      if (name == key)
        return &value;
    return nullptr;
  }
};

class JsonParser {
public:
  /// nullopt on malformed text; `error` says where.
  static std::optional<JsonValue> parse(const std::string &text,
                                        std::string *error = nullptr) {
    JsonParser parser(text);
    JsonValue value;
    if (!parser.parseValue(value) || (parser.skip(), parser.pos_ != text.size())) {
      if (error)
        *error = "malformed JSON at byte " + std::to_string(parser.pos_);
      return std::nullopt;
    }
    return value;
  }

private:
  explicit JsonParser(const std::string &text) : text_(text) {}
  void skip() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool literal(const char *word) {
    std::string w(word);
    if (text_.compare(pos_, w.size(), w) != 0)
      return false;
    pos_ += w.size();
    return true;
  }
  bool parseString(std::string &out) {
    if (text_[pos_] != '"')
      return false;
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size())
        return false;
      char e = text_[pos_++];
      switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        if (pos_ + 4 > text_.size())
          return false;
        out += static_cast<char>(std::strtol(text_.substr(pos_, 4).c_str(), nullptr, 16));
        pos_ += 4;
        break;
      }
      default: out += e;
      }
    }
    if (pos_ >= text_.size())
      return false;
    ++pos_;
    return true;
  }
  bool parseValue(JsonValue &value) {
    skip();
    if (pos_ >= text_.size())
      return false;
    char c = text_[pos_];
    if (c == '{') {
      value.kind = JsonValue::Kind::Object;
      ++pos_;
      skip();
      if (pos_ < text_.size() && text_[pos_] == '}')
        return ++pos_, true;
      while (true) {
        skip();
        std::string key;
        if (pos_ >= text_.size() || !parseString(key))
          return false;
        skip();
        if (pos_ >= text_.size() || text_[pos_++] != ':')
          return false;
        JsonValue member;
        if (!parseValue(member))
          return false;
        value.members.emplace_back(std::move(key), std::move(member));
        skip();
        if (pos_ >= text_.size())
          return false;
        if (text_[pos_] == ',') { ++pos_; continue; }
        if (text_[pos_] == '}') return ++pos_, true;
        return false;
      }
    }
    if (c == '[') {
      value.kind = JsonValue::Kind::Array;
      ++pos_;
      skip();
      if (pos_ < text_.size() && text_[pos_] == ']')
        return ++pos_, true;
      while (true) {
        JsonValue item;
        if (!parseValue(item))
          return false;
        value.items.push_back(std::move(item));
        skip();
        if (pos_ >= text_.size())
          return false;
        if (text_[pos_] == ',') { ++pos_; continue; }
        if (text_[pos_] == ']') return ++pos_, true;
        return false;
      }
    }
    if (c == '"') {
      value.kind = JsonValue::Kind::String;
      return parseString(value.string);
    }
    if (literal("null")) { value.kind = JsonValue::Kind::Null; return true; }
    if (literal("true")) { value.kind = JsonValue::Kind::Bool; value.boolean = true; return true; }
    if (literal("false")) { value.kind = JsonValue::Kind::Bool; return true; }
    const char *begin = text_.c_str() + pos_;
    char *end = nullptr;
    value.number = std::strtod(begin, &end);
    if (end == begin)
      return false;
    value.kind = JsonValue::Kind::Number;
    pos_ += static_cast<size_t>(end - begin);
    return true;
  }

  const std::string &text_;
  size_t pos_ = 0;
};

} // namespace fuse::runtime::detail

#endif // FUSE_LIB_RUNTIME_JSONREADER_H
