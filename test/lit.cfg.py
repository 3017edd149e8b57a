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
tools = ["fuse-opt", "fuse-run", "fuse-translate"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# NVRTC compiles kernels without a GPU: tests that compile the emitted CUDA
# REQUIRE nvrtc, which a build with the CUDA toolkit provides.
if config.fuse_enable_cuda.upper() in ("ON", "TRUE", "1"):
    config.available_features.add("nvrtc")
else:
    lit_config.note("built without the CUDA toolkit: tests that REQUIRE nvrtc "
                    "are UNSUPPORTED")

# NumPy cross-checks of the reference interpreter (test/Interpreter) run under
# Debian's python3, where python3-numpy installs; %python names it (it replaces
# lit's default, the Python that runs lit). Without NumPy there, tests that
# REQUIRE numpy are UNSUPPORTED.
import subprocess

fuse_test_python = "/usr/bin/python3"
config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
config.substitutions.append(("%python", fuse_test_python))
try:
    numpy_found = (
        subprocess.run(
            [fuse_test_python, "-c", "import numpy"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
        ).returncode
        == 0
    )
except (OSError, subprocess.SubprocessError):
    numpy_found = False
if numpy_found:
    config.available_features.add("numpy")
else:
    lit_config.note(
        "NumPy is not importable by %s: tests that REQUIRE numpy are "
        "UNSUPPORTED (apt-get install python3-numpy)" % fuse_test_python
    )
# FUSE_TEST_SEED reproduces the random inputs of the NumPy cross-checks.
if "FUSE_TEST_SEED" in os.environ:
    config.environment["FUSE_TEST_SEED"] = os.environ["FUSE_TEST_SEED"]
