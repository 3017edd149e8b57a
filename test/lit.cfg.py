# -*- Python -*-
# lit configuration for the Fuse tests: FileCheck/not from LLVM 22, Fuse tools
# from the build tree.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "Fuse"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unittests", "lib", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fuse_obj_root, "test")

# Captured variables do not leak across CHECK-LABELs.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.use_default_substitutions()
config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%fuse_src_root", config.fuse_src_root))

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.fuse_tools_dir, append_path=True)

tool_dirs = [config.fuse_tools_dir, config.llvm_tools_dir]
tools = ["fuse-opt", "fuse-run"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
