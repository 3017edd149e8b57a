//===- CApiTest.cpp - The C API (include/fuse-c/Fuse.h) -------------------===//
//
// What a ctypes caller relies on: a graph compiles into an executable whose
// signature JSON is right, executables round-trip through a file, and every
// failure (malformed graph, bad pipeline, missing file, NULL handles, no
// GPU, wrong argument counts) comes back as NULL or non-zero with a message
// that names what and where, never as a crash.
//
//===----------------------------------------------------------------------===//

#include "fuse-c/Fuse.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <memory>
#include <algorithm>
#include <string>

using ::testing::HasSubstr;

namespace {

const char *kGraph = R"mlir(func.func @scale(%x: tensor<4x8xf32> {fuse.name = "x"}, %w: tensor<4x8xf32> {fuse.name = "w", fuse.donated}) -> (tensor<4x8xf32> {fuse.name = "y"}, tensor<4x8xf32> {fuse.name = "w"}) {
  %y = fuse.mul %x, %w : tensor<4x8xf32>
  %e = fuse.exp %y : tensor<4x8xf32>
  %w2 = fuse.sub %w, %x : tensor<4x8xf32>
  return %e, %w2 : tensor<4x8xf32>, tensor<4x8xf32>
}
)mlir";

struct StringDeleter {
  void operator()(char *text) const { fuseFreeString(text); }
};
using OwnedString = std::unique_ptr<char, StringDeleter>;
struct ExecutableDeleter {
  void operator()(FuseExecutable *executable) const { fuseFreeExecutable(executable); }
};
using OwnedExecutable = std::unique_ptr<FuseExecutable, ExecutableDeleter>;

OwnedExecutable compile(const std::string &text, const char *pipeline = nullptr,
                        const char *entry = nullptr) {
  FuseCompileOptions options{};
  options.pipeline = pipeline;
  options.entry = entry;
  options.arch = "sm_90a";
  options.source_name = "scale.mlir";
  return OwnedExecutable(fuseCompile(text.data(), text.size(), &options));
}

llvm::json::Object describe(const FuseExecutable *executable) {
  OwnedString text(fuseDescribeExecutable(executable));
  EXPECT_TRUE(text) << fuseLastError();
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text.get());
  EXPECT_TRUE(static_cast<bool>(value));
  return *value->getAsObject();
}

TEST(CApi, CompilesAGraphAndDescribesItsSignature) {
  OwnedExecutable executable = compile(kGraph);
  ASSERT_TRUE(executable) << fuseLastError();
  EXPECT_STREQ(fuseLastError(), "");
  llvm::json::Object json = describe(executable.get());
  EXPECT_EQ(*json.getString("entry"), "scale");
  EXPECT_EQ(*json.getString("arch"), "sm_90a");
  const llvm::json::Array &inputs = *json.getArray("inputs");
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(*inputs[0].getAsObject()->getString("name"), "x");
  EXPECT_EQ(*inputs[0].getAsObject()->getString("dtype"), "f32");
  EXPECT_EQ(*inputs[0].getAsObject()->getInteger("bytes"), 4 * 8 * 4);
  const llvm::json::Array &shape = *inputs[0].getAsObject()->getArray("shape");
  ASSERT_EQ(shape.size(), 2u);
  EXPECT_EQ(*shape[0].getAsInteger(), 4);
  EXPECT_EQ(*shape[1].getAsInteger(), 8);
  const llvm::json::Array &outputs = *json.getArray("outputs");
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(*outputs[1].getAsObject()->getString("name"), "w");
  // The update of the donated `w` is planned in w's memory: output #1
  // comes out of input #1 and may be bound to it.
  const llvm::json::Array &donated = *json.getArray("donated");
  ASSERT_EQ(donated.size(), 1u);
  EXPECT_EQ(*(*donated[0].getAsArray())[0].getAsInteger(), 1);
  EXPECT_EQ(*(*donated[0].getAsArray())[1].getAsInteger(), 1);
  EXPECT_GE(*json.getInteger("launches"), 1);
  // Each output's last step: within the step, and the one kernel that
  // computes both (or their own kernels) comes last for at least one.
  const llvm::json::Array &lastUse = *json.getArray("output_last_use");
  ASSERT_EQ(lastUse.size(), 2u);
  int64_t steps = *json.getInteger("steps");
  int64_t latest = -1;
  for (const llvm::json::Value &step : lastUse) {
    EXPECT_GE(*step.getAsInteger(), 0);
    EXPECT_LT(*step.getAsInteger(), steps);
    latest = std::max(latest, *step.getAsInteger());
  }
  EXPECT_EQ(latest, steps - 1);

  OwnedString plan(fusePlanText(executable.get()));
  ASSERT_TRUE(plan);
  EXPECT_THAT(plan.get(), HasSubstr("scale"));
}

TEST(CApi, ExecutablesRoundTripThroughAFile) {
  OwnedExecutable executable = compile(kGraph);
  ASSERT_TRUE(executable) << fuseLastError();
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("capi", "fuseexe", path));
  ASSERT_EQ(fuseSaveExecutable(executable.get(), path.c_str()), 0) << fuseLastError();
  OwnedExecutable loaded(fuseLoadExecutable(path.c_str()));
  ASSERT_TRUE(loaded) << fuseLastError();
  EXPECT_EQ(llvm::json::Value(describe(loaded.get())),
            llvm::json::Value(describe(executable.get())));
  llvm::sys::fs::remove(path);
}

TEST(CApi, CompilePhasesNameParsingEachPassAndCodeGeneration) {
  OwnedExecutable executable = compile(kGraph);
  ASSERT_TRUE(executable) << fuseLastError();
  OwnedString text(fuseExecutableCompilePhases(executable.get()));
  ASSERT_TRUE(text) << fuseLastError();
  llvm::Expected<llvm::json::Value> phases = llvm::json::parse(text.get());
  ASSERT_TRUE(static_cast<bool>(phases)) << llvm::toString(phases.takeError());
  const llvm::json::Array *list = phases->getAsArray();
  ASSERT_TRUE(list && list->size() >= 3);
  std::vector<std::string> names;
  for (const llvm::json::Value &phase : *list) {
    const llvm::json::Array *pair = phase.getAsArray();
    ASSERT_TRUE(pair && pair->size() == 2);
    names.push_back(pair->front().getAsString()->str());
    EXPECT_GE(*pair->back().getAsNumber(), 0.0);
  }
  EXPECT_EQ(names.front(), "parse and verify");
  EXPECT_EQ(names.back(), "code generation");
  EXPECT_NE(std::find(names.begin(), names.end(), "fuse-form-fusions"), names.end());

  // A loaded executable was not compiled here: no phases.
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("capi", "fuseexe", path));
  ASSERT_EQ(fuseSaveExecutable(executable.get(), path.c_str()), 0) << fuseLastError();
  OwnedExecutable loaded(fuseLoadExecutable(path.c_str()));
  ASSERT_TRUE(loaded) << fuseLastError();
  OwnedString none(fuseExecutableCompilePhases(loaded.get()));
  EXPECT_STREQ(none.get(), "[]");
  llvm::sys::fs::remove(path);
  EXPECT_EQ(fuseExecutableCompilePhases(nullptr), nullptr);
  EXPECT_THAT(fuseLastError(), HasSubstr("NULL"));
}

TEST(CApi, MalformedGraphNamesLineAndColumn) {
  std::string text = "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                     "  %b = fuse.bogus %a : tensor<2xf32>\n"
                     "  return %b : tensor<2xf32>\n}\n";
  EXPECT_FALSE(compile(text));
  EXPECT_THAT(fuseLastError(), HasSubstr("scale.mlir:2:8"));
  EXPECT_THAT(fuseLastError(), HasSubstr("'fuse.bogus' is unknown"));
}

// What no op verifier sees (a dynamic argument returned as it is) is
// rejected on load with the graph type check's diagnostic, not compiled into
// a plan of -2^63 elements.
TEST(CApi, DynamicAndOversizedGraphsAreRefused) {
  std::string dynamic = "func.func @f(%i: tensor<?xi64>) -> tensor<?xi64> {\n"
                        "  return %i : tensor<?xi64>\n}\n";
  EXPECT_FALSE(compile(dynamic));
  EXPECT_THAT(fuseLastError(), HasSubstr("unsupported types in scale.mlir"));
  EXPECT_THAT(fuseLastError(),
              HasSubstr("scale.mlir:1:14: error: argument #0 of @f has type "
                        "'tensor<?xi64>': dynamic shapes are not supported"));
  std::string huge = "func.func @f(%x: tensor<268435456x1099511627776xf32>) -> "
                     "tensor<268435456x1099511627776xf32> {\n"
                     "  return %x : tensor<268435456x1099511627776xf32>\n}\n";
  EXPECT_FALSE(compile(huge));
  EXPECT_THAT(fuseLastError(), HasSubstr("too large (over 2^48 bytes"));
}

// Text nested past what MLIR's recursive parser survives is refused before
// it parses (GraphParsing.h): an error with line, column and the limit, not
// a stack overflow in the caller's process.
TEST(CApi, DeeplyNestedTextIsRefusedBeforeParsing) {
  std::string dense = "func.func @f() -> tensor<1xf32> {\n"
                      "  %c = fuse.constant dense<" + std::string(30000, '[') +
                      "1.0" + std::string(30000, ']') +
                      "> : tensor<1xf32>\n  return %c : tensor<1xf32>\n}\n";
  EXPECT_FALSE(compile(dense));
  EXPECT_THAT(fuseLastError(), HasSubstr("cannot parse scale.mlir"));
  EXPECT_THAT(fuseLastError(),
              HasSubstr("scale.mlir:2:282: error: brackets nest deeper than "
                        "256 levels here"));
  std::string aliases = "!t0 = tuple<f32>\n";
  for (int i = 1; i < 40; ++i)
    aliases += "!t" + std::to_string(i) + " = tuple<!t" + std::to_string(i - 1) +
               ", !t" + std::to_string(i - 1) + ">\n";
  aliases += "func.func @f(%x: !t39) {\n  return\n}\n";
  EXPECT_FALSE(compile(aliases));
  EXPECT_THAT(fuseLastError(), HasSubstr("alias '!t20' stands for more than 16 "
                                         "MiB of text"));
}

TEST(CApi, BadPipelineAndEntryAreNamed) {
  EXPECT_FALSE(compile(kGraph, "fuse-pipeline{amp=f8}"));
  EXPECT_THAT(fuseLastError(), HasSubstr("fuse-pipeline{amp=f8}"));
  EXPECT_THAT(fuseLastError(), HasSubstr("unknown dtype 'f8'"));
  EXPECT_FALSE(compile(kGraph, "no-such-pass"));
  EXPECT_THAT(fuseLastError(), HasSubstr("bad pipeline 'no-such-pass'"));
  EXPECT_FALSE(compile(kGraph, nullptr, "missing"));
  EXPECT_THAT(fuseLastError(), HasSubstr("no function @missing"));
  EXPECT_THAT(fuseLastError(), HasSubstr("@scale"));
  // A success clears the last error.
  EXPECT_TRUE(compile(kGraph));
  EXPECT_STREQ(fuseLastError(), "");
}

TEST(CApi, MissingFilesAndNullHandlesAreErrors) {
  EXPECT_EQ(fuseLoadExecutable("/nonexistent/step.fuseexe"), nullptr);
  EXPECT_THAT(fuseLastError(), HasSubstr("/nonexistent/step.fuseexe"));
  EXPECT_EQ(fuseLoadExecutable(nullptr), nullptr);
  EXPECT_THAT(fuseLastError(), HasSubstr("NULL"));
  EXPECT_EQ(fuseCompile(nullptr, 0, nullptr), nullptr);
  EXPECT_THAT(fuseLastError(), HasSubstr("NULL"));
  EXPECT_EQ(fuseDescribeExecutable(nullptr), nullptr);
  EXPECT_NE(fuseSaveExecutable(nullptr, "x"), 0);
  EXPECT_EQ(fuseCreateSession(nullptr, nullptr), nullptr);
  EXPECT_NE(fuseRun(nullptr, nullptr, 0, nullptr, 0, nullptr), 0);
  EXPECT_THAT(fuseLastError(), HasSubstr("session is NULL"));
  int64_t step = 0;
  EXPECT_NE(fuseSessionSetSignals(nullptr, &step, 1), 0);
  EXPECT_THAT(fuseLastError(), HasSubstr("fuseSessionSetSignals: the session is NULL"));
  EXPECT_NE(fuseSessionWaitSignal(nullptr, 0, nullptr), 0);
  EXPECT_THAT(fuseLastError(), HasSubstr("fuseSessionWaitSignal: the session is NULL"));
  fuseFreeExecutable(nullptr);
  fuseFreeSession(nullptr);
  fuseFreeString(nullptr);
}

// With no GPU, a session fails with the reason; with one, it loads and a
// step given the wrong number of pointers is refused before any launch.
TEST(CApi, SessionsNeedAGpuAndTheRightPointers) {
  OwnedExecutable executable = compile(kGraph);
  ASSERT_TRUE(executable) << fuseLastError();
  OwnedString device(fuseDeviceInfo());
  FuseSession *session = fuseCreateSession(executable.get(), nullptr);
  if (!device) {
    EXPECT_EQ(session, nullptr);
    EXPECT_THAT(fuseLastError(), HasSubstr("no CUDA device"));
    return;
  }
  if (!session && std::string(fuseLastError()).find("sm_90a") != std::string::npos)
    GTEST_SKIP() << "the GPU is not sm_90a: " << fuseLastError();
  ASSERT_NE(session, nullptr) << fuseLastError();
  void *one[1] = {nullptr};
  EXPECT_NE(fuseRun(session, one, 1, one, 1, nullptr), 0);
  EXPECT_THAT(fuseLastError(), HasSubstr("takes 2 inputs, 1 were given"));
  int64_t pastTheEnd = 1000;
  EXPECT_NE(fuseSessionSetSignals(session, &pastTheEnd, 1), 0);
  EXPECT_THAT(fuseLastError(), HasSubstr("placed after step 1000"));
  EXPECT_NE(fuseSessionSetSignals(session, nullptr, 1), 0);
  EXPECT_THAT(fuseLastError(), HasSubstr("the step array is NULL"));
  EXPECT_EQ(fuseSessionSetSignals(session, nullptr, 0), 0) << fuseLastError();
  fuseFreeSession(session);
}

} // namespace
