//===- GraphParsingTest.cpp - The nesting check before MLIR's parser ------===//
//
// findGraphTextProblem (GraphParsing.h) counts bracket nesting the way the
// parser will recurse: strings, comments and the operators `->`, `<=`, `>=`
// do not count, aliases count as deep as what they stand for, and chains of
// aliases that double at each step are stopped by their expanded size.
//
//===----------------------------------------------------------------------===//

#include "fuse/Dialect/Fuse/IR/GraphParsing.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir::fuse;

namespace {

std::string nested(unsigned depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

TEST(GraphParsing, DepthUpToTheLimitPasses) {
  EXPECT_FALSE(findGraphTextProblem(nested(kMaxGraphNesting)));
  EXPECT_FALSE(findGraphTextProblem(nested(kMaxGraphNesting, '<', '>')));
  // Siblings do not add up.
  EXPECT_FALSE(findGraphTextProblem(nested(200) + nested(200)));
}

TEST(GraphParsing, OneLevelMoreIsRefusedAtItsBracket) {
  std::string text = "x\n  " + nested(kMaxGraphNesting + 1, '{', '}');
  std::optional<GraphTextProblem> problem = findGraphTextProblem(text);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->line, 2u);
  EXPECT_EQ(problem->column, 3u + kMaxGraphNesting);
  EXPECT_EQ(problem->offset, 4u + kMaxGraphNesting);
  EXPECT_NE(problem->message.find("deeper than 256 levels"), std::string::npos);
  // Every kind of bracket counts, mixed.
  std::string mixed;
  for (unsigned i = 0; i <= kMaxGraphNesting; ++i)
    mixed += "([{<"[i % 4];
  EXPECT_TRUE(findGraphTextProblem(mixed));
}

TEST(GraphParsing, StringsCommentsAndOperatorsAreNotBrackets) {
  std::string deep(1000, '[');
  EXPECT_FALSE(findGraphTextProblem("\"" + deep + "\""));
  EXPECT_FALSE(findGraphTextProblem("x = \"a\\\"" + deep + "\" // " + deep));
  // An unterminated string ends at its line.
  EXPECT_TRUE(findGraphTextProblem("\"abc\n" + deep));
  // `->` closes nothing: 300 arrows inside 200 brackets leave them open.
  std::string arrows;
  for (int i = 0; i < 300; ++i)
    arrows += "(->";
  EXPECT_TRUE(findGraphTextProblem(arrows));
  std::string compares;
  for (int i = 0; i < 300; ++i)
    compares += "<=>=";
  EXPECT_FALSE(findGraphTextProblem(compares));
}

TEST(GraphParsing, AliasesNestAsDeepAsWhatTheyStandFor) {
  std::string text = "!t0 = tuple<f32>\n";
  for (unsigned i = 1; i < 300; ++i)
    text += "!t" + std::to_string(i) + " = tuple<!t" + std::to_string(i - 1) + ">\n";
  std::optional<GraphTextProblem> problem = findGraphTextProblem(text);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->line, 257u);
  EXPECT_NE(problem->message.find("counting through aliases"), std::string::npos);
  // Attribute aliases too; and a reference outside any definition.
  std::string attrs = "#a = " + nested(200) + "\nfunc.func @f() attributes {x = " +
                      nested(60, '[', ' ') + "#a";
  EXPECT_TRUE(findGraphTextProblem(attrs));
  // Dialect attributes are not aliases.
  EXPECT_FALSE(findGraphTextProblem("#fuse.buffer<offset = 0>\n!fuse.x<f32>"));
}

TEST(GraphParsing, DoublingAliasesAreStoppedByTheirSize) {
  std::string text = "#a0 = [1]\n";
  for (int i = 1; i < 40; ++i)
    text += "#a" + std::to_string(i) + " = [#a" + std::to_string(i - 1) +
            ", #a" + std::to_string(i - 1) + "]\n";
  std::optional<GraphTextProblem> problem = findGraphTextProblem(text);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->message, "alias '#a21' stands for more than 16 MiB of "
                              "text once the aliases it names are expanded");
}

TEST(GraphParsing, AffineMapsAreRefused) {
  std::optional<GraphTextProblem> problem =
      findGraphTextProblem("#map = affine_map<(d0) -> (d0 + d0)>");
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->column, 8u);
  EXPECT_TRUE(findGraphTextProblem("x = affine_set<(d0) : (d0 >= 0)>"));
  // Only the keyword, not a name that contains it.
  EXPECT_FALSE(findGraphTextProblem("%my_affine_map = fuse.neg %x"));
  EXPECT_FALSE(findGraphTextProblem("\"affine_map\""));
}

} // namespace
