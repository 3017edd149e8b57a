// Compiled into every library of the runtime-only build (FUSE_RUNTIME_ONLY,
// CMakeLists.txt) with that library's include path: the build fails here if
// an LLVM or MLIR header can be reached from it (through CPATH, CXXFLAGS, a
// stray include directory), so that a runtime source including one could not
// compile there either. That is what makes the runtime-only build the check
// of docs/ARCHITECTURE.md's wall: nothing under it includes MLIR or LLVM.
// It declares nothing.

#if defined(__has_include)
#if __has_include("mlir/IR/MLIRContext.h") || __has_include("mlir-c/IR.h")
#error "FUSE_RUNTIME_ONLY: MLIR headers are on the include path; the runtime-only build must not see them"
#endif
#if __has_include("llvm/Support/raw_ostream.h") || __has_include("llvm/ADT/StringRef.h")
#error "FUSE_RUNTIME_ONLY: LLVM headers are on the include path; the runtime-only build must not see them"
#endif
#endif
