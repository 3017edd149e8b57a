//===- GraphParsing.cpp - Graph text to a module, guarded -----------------===//

#include "fuse/Dialect/Fuse/IR/GraphParsing.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cctype>

using namespace mlir;
using namespace mlir::fuse;

namespace {

bool isIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '.';
}

/// What an alias (`#name = ...`, `!name = ...`) stands for, once every
/// alias it names is expanded: the nesting inside it, and its size.
struct AliasExtent {
  unsigned depth = 0;
  uint64_t bytes = 0;
};

/// One pass over the text, keeping a bracket depth. Aliases are followed:
/// a reference adds the depth and size of what it names, so a chain of
/// aliases each naming the one before nests (and, naming it twice, grows)
/// as if written out.
class TextScanner {
public:
  explicit TextScanner(llvm::StringRef text) : text(text) {}
  std::optional<GraphTextProblem> run();

private:
  std::optional<GraphTextProblem> problemAt(size_t offset, std::string message) {
    return GraphTextProblem{offset, line,
                            static_cast<unsigned>(offset - lineStart + 1),
                            std::move(message)};
  }
  std::optional<GraphTextProblem> tooDeep(size_t offset) {
    return problemAt(offset, "brackets nest deeper than " +
                                 std::to_string(kMaxGraphNesting) +
                                 " levels here (counting through aliases), "
                                 "more than a Fuse graph may (the parser would "
                                 "run out of stack)");
  }
  /// The identifier after text[at] (a '#' or '!'), possibly empty.
  llvm::StringRef nameAfter(size_t at) const {
    size_t end = at + 1;
    while (end < text.size() && isIdentifierChar(text[end]))
      ++end;
    return text.substr(at + 1, end - at - 1);
  }
  /// Whether `#name` / `!name` at `at` starts an alias definition: at the
  /// top level, followed by '=' (not '==').
  bool isDefinition(size_t at, llvm::StringRef name) const {
    if (depth != 0 || defining || name.empty())
      return false;
    size_t next = at + 1 + name.size();
    while (next < text.size() && (text[next] == ' ' || text[next] == '\t'))
      ++next;
    return next < text.size() && text[next] == '=' &&
           (next + 1 == text.size() || text[next + 1] != '=');
  }
  void endDefinition() {
    aliases[definingName] = current;
    defining = false;
  }

  llvm::StringRef text;
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  llvm::StringMap<AliasExtent> aliases;
  bool defining = false;
  std::string definingName;
  AliasExtent current;
};

/// Bytes of text that aliases in one definition may stand for beyond its
/// own: a chain of aliases naming the one before twice doubles at each.
constexpr uint64_t kMaxAliasExpansion = uint64_t(16) << 20;

std::optional<GraphTextProblem> TextScanner::run() {
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (defining && c != '\n')
      ++current.bytes;
    switch (c) {
    case '\n':
      if (defining && depth == 0)
        endDefinition();
      ++line;
      lineStart = i + 1;
      break;
    case '"':
      // A string ends at its closing quote or, unterminated, at the line's
      // end (the parser's error then); escapes skip the next character.
      for (++i; i < e && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\' && i + 1 < e && text[i + 1] != '\n')
          ++i;
      if (i < e && text[i] == '\n')
        --i; // counted as a line break in the next round
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        while (i + 1 < e && text[i + 1] != '\n')
          ++i;
      break;
    case '#':
    case '!': {
      llvm::StringRef name = nameAfter(i);
      if (isDefinition(i, name)) {
        defining = true;
        definingName = name.str();
        current = AliasExtent();
      } else if (auto found = aliases.find(name); found != aliases.end()) {
        unsigned through = depth + found->second.depth;
        if (through > kMaxGraphNesting)
          return tooDeep(i);
        if (defining) {
          current.depth = std::max(current.depth, through);
          current.bytes += found->second.bytes;
          if (current.bytes > kMaxAliasExpansion)
            return problemAt(
                i, "alias '" + text.substr(i, 1).str() + definingName +
                       "' stands for more than " +
                       std::to_string(kMaxAliasExpansion >> 20) +
                       " MiB of text once the aliases it names are expanded");
        }
      }
      i += name.size();
      break;
    }
    case '-':
    case '<':
    case '>':
      // `->`, `<=`, `>=` are operators, not brackets.
      if (i + 1 < e && ((c == '-' && text[i + 1] == '>') ||
                        (c != '-' && text[i + 1] == '='))) {
        ++i;
        break;
      }
      if (c == '-')
        break;
      if (c == '>') {
        depth -= depth > 0;
        break;
      }
      [[fallthrough]];
    case '(':
    case '[':
    case '{':
      if (++depth > kMaxGraphNesting)
        return tooDeep(i);
      if (defining)
        current.depth = std::max(current.depth, depth);
      break;
    case ')':
    case ']':
    case '}':
      depth -= depth > 0;
      break;
    default:
      if (c == 'a' && (i == 0 || !isIdentifierChar(text[i - 1]))) {
        for (llvm::StringRef word : {"affine_map", "affine_set"})
          if (text.substr(i).starts_with(word) &&
              (i + word.size() == e || !isIdentifierChar(text[i + word.size()])))
            return problemAt(i, "'" + word.str() +
                                    "' is not part of a Fuse graph (its "
                                    "expressions nest without brackets, "
                                    "past the parser's stack)");
      }
      break;
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<GraphTextProblem>
mlir::fuse::findGraphTextProblem(llvm::StringRef text) {
  return TextScanner(text).run();
}

LogicalResult mlir::fuse::checkGraphText(const llvm::SourceMgr &sourceMgr,
                                         unsigned bufferId,
                                         llvm::raw_ostream &os) {
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(bufferId);
  std::optional<GraphTextProblem> problem =
      findGraphTextProblem(buffer->getBuffer());
  if (!problem)
    return success();
  sourceMgr.PrintMessage(
      os, llvm::SMLoc::getFromPointer(buffer->getBufferStart() + problem->offset),
      llvm::SourceMgr::DK_Error, problem->message);
  return failure();
}

OwningOpRef<ModuleOp> mlir::fuse::parseGraph(llvm::SourceMgr &sourceMgr,
                                             MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  if (std::optional<GraphTextProblem> problem =
          findGraphTextProblem(buffer->getBuffer())) {
    emitError(FileLineColLoc::get(context, buffer->getBufferIdentifier(),
                                  problem->line, problem->column))
        << problem->message;
    return nullptr;
  }
  return parseSourceFile<ModuleOp>(sourceMgr, context);
}
