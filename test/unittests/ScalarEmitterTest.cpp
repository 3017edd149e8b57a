//===- ScalarEmitterTest.cpp - Pieces of the CUDA scalar emitter ----------===//

#include "ScalarEmitter.h"

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

using namespace fuse::codegen;

namespace {

TEST(ScalarEmitter, FloatLiteralsAreExact) {
  for (float value : {0.1f, 1.0f, -3.5f, 1e-30f, 65504.0f, 0.044715f}) {
    std::string literal = floatLiteral(value);
    ASSERT_EQ(literal.back(), 'f') << literal;
    // Hex floats parse back to the same float.
    float parsed = std::strtof(literal.c_str(), nullptr);
    EXPECT_EQ(parsed, value) << literal;
  }
  EXPECT_EQ(floatLiteral(INFINITY), "__int_as_float(0x7f800000)");
  EXPECT_EQ(floatLiteral(-INFINITY), "__int_as_float(0xff800000)");
  EXPECT_EQ(floatLiteral(NAN), "__int_as_float(0x7fc00000)");
}

TEST(ScalarEmitter, UnflattenThenLinearizeGivesBackTheLinearName) {
  mlir::Block block;
  ScalarEmitter emitter(block, {}, "int");
  CodeBuffer code;
  emitter.setCode(code);
  Index index = emitter.unflatten({2, 3, 4}, "p");
  ASSERT_EQ(index.size(), 3u);
  EXPECT_EQ(emitter.linearize({2, 3, 4}, index), "p");
  // Each dimension is one variable: the innermost a modulo, the outermost a
  // division without modulo.
  EXPECT_NE(code.text().find("= (p) % 4;"), std::string::npos) << code.text();
  EXPECT_NE(code.text().find("= ((p) / 12);"), std::string::npos) << code.text();
  // Asking again emits nothing new.
  std::string before = code.text();
  EXPECT_EQ(emitter.unflatten({2, 3, 4}, "p"), index);
  EXPECT_EQ(code.text(), before);
}

TEST(ScalarEmitter, UnitDimensionsIndexZeroAndDropOutOfTheLinearIndex) {
  mlir::Block block;
  ScalarEmitter emitter(block, {}, "int");
  CodeBuffer code;
  emitter.setCode(code);
  Index index = emitter.unflatten({1, 5, 1}, "q");
  EXPECT_EQ(index[0], "0");
  EXPECT_EQ(index[2], "0");
  EXPECT_EQ(emitter.linearize({1, 5, 1}, {"0", "k", "0"}), "k");
  EXPECT_EQ(emitter.linearize({3, 5}, {"a", "b"}), "(a) * 5 + b");
  EXPECT_EQ(emitter.linearize({1}, {"0"}), "0");
}

TEST(ScalarEmitter, ConversionsRoundThroughTheStorageType) {
  EXPECT_EQ(ScalarEmitter::roundTo(fuse::DType::F32, "x"), "x");
  EXPECT_EQ(ScalarEmitter::roundTo(fuse::DType::BF16, "x"),
            "fuse::toFloat(fuse::fromFloat<fuse::bf16>(x))");
  EXPECT_EQ(ScalarEmitter::convert(fuse::DType::F32, fuse::DType::I1, "x"),
            "(x != 0.0f)");
  // Float to integer truncates toward zero and wraps to i32.
  EXPECT_EQ(ScalarEmitter::convert(fuse::DType::F32, fuse::DType::I32, "x"),
            "(long long)(int)(long long)(x)");
  EXPECT_EQ(ScalarEmitter::toStorage(fuse::DType::I1, "b"),
            "(unsigned char)((b) ? 1 : 0)");
  EXPECT_EQ(ScalarEmitter::fromStorage(fuse::DType::I64, "p[i]"),
            "(long long)(p[i])");
}

} // namespace
