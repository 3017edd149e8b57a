//===- KernelCompiler.cpp - CUDA C++ to cubin with NVRTC ------------------===//
//
// NVRTC needs no GPU, so this runs in CI as well as in the executor. The
// ptxas verbose log (NVRTC 13 prints it in the program log) looks like
//
//   ptxas info    : Compiling entry function 'scale' for 'sm_90a'
//   ptxas info    : Function properties for scale
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 10 registers, used 1 barriers, 512 bytes smem
//
// (older ptxas: "Used 10 registers, 512 bytes smem, 352 bytes cmem[0]"); the
// parser keys on the phrases, not the column layout, so it reads both.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/KernelCompiler.h"

#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fuse::runtime {

namespace fs = std::filesystem;

namespace {

/// The integer that ends just before `text[end]` (skipping spaces), or -1.
int numberBefore(const std::string &text, size_t end) {
  while (end > 0 && text[end - 1] == ' ')
    --end;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(text[begin - 1])))
    --begin;
  if (begin == end)
    return -1;
  return std::atoi(text.substr(begin, end - begin).c_str());
}

/// The number in front of `phrase` in `line` ("236 bytes spill stores"), or
/// -1 when the phrase is absent.
int numberBeforePhrase(const std::string &line, const char *phrase) {
  size_t at = line.find(phrase);
  return at == std::string::npos ? -1 : numberBefore(line, at);
}

/// The text between the first pair of single quotes after `marker`.
std::string quotedAfter(const std::string &line, const char *marker) {
  size_t at = line.find(marker);
  if (at == std::string::npos)
    return {};
  size_t open = line.find('\'', at);
  size_t close = open == std::string::npos ? open : line.find('\'', open + 1);
  if (close == std::string::npos)
    return {};
  return line.substr(open + 1, close - open - 1);
}

/// "scale" for extern "C" symbols; "tk<128>" for "_Z2tkILi128EEvPf".
std::string readableName(const std::string &symbol) {
  if (symbol.rfind("_Z", 0) != 0)
    return symbol;
  int status = 0;
  char *demangled = abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr,
                                        &status);
  if (status != 0 || !demangled)
    return symbol;
  std::string full = demangled;
  std::free(demangled);
  // Cut the parameter list (the first '(' outside template arguments) and a
  // template function's return type (text before the last top-level space).
  int depth = 0;
  size_t paren = full.size(), space = std::string::npos;
  for (size_t i = 0; i < full.size(); ++i) {
    char c = full[i];
    if (c == '<')
      ++depth;
    else if (c == '>')
      --depth;
    else if (depth == 0 && c == '(') {
      paren = i;
      break;
    } else if (depth == 0 && c == ' ')
      space = i;
  }
  size_t begin = space == std::string::npos ? 0 : space + 1;
  return full.substr(begin, paren - begin);
}

std::string sanitizeFileName(const std::string &name) {
  std::string out;
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
                   c == '-' || c == '.'
               ? c
               : '_';
  return out.empty() ? "module" : out;
}

/// The first few errors of an NVRTC log, each followed by the source line
/// and caret NVRTC prints under it; empty when the log names no error.
std::vector<std::string> firstErrors(const std::string &log) {
  std::istringstream stream(log);
  std::string line;
  std::vector<std::string> lines;
  int errors = 0, context = 0;
  while (std::getline(stream, line)) {
    if (line.find("error") != std::string::npos) {
      if (++errors > 3)
        break;
      lines.push_back(line);
      context = 2;
    } else if (context > 0 && !line.empty()) {
      lines.push_back(line);
      --context;
    } else {
      context = 0;
    }
  }
  return lines;
}

/// options.failureDir (created), else a fresh directory under the system
/// temp directory; empty if neither can be made.
std::string failureDirectory(const NvrtcOptions &options) {
  std::error_code error;
  if (!options.failureDir.empty()) {
    fs::create_directories(options.failureDir, error);
    return error ? std::string() : options.failureDir;
  }
  std::string pattern =
      (fs::temp_directory_path(error) / "fuse-nvrtc-XXXXXX").string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  return mkdtemp(buffer.data()) ? std::string(buffer.data()) : std::string();
}

bool writeText(const std::string &path, const std::string &text) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream << text;
  stream.close();
  return static_cast<bool>(stream);
}

std::string programLog(nvrtcProgram program) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size == 0)
    return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(program, &log[0]) != NVRTC_SUCCESS)
    return {};
  while (!log.empty() && log.back() == '\0')
    log.pop_back();
  return log;
}

/// The failure message, with the source and log saved where it says.
Status compileFailure(const std::string &source, const std::string &name,
                      const std::string &log, const std::string &reason,
                      const NvrtcOptions &options) {
  // "NVRTC failed to compile m: m.cu(2): error: ...", then the source line
  // and caret, further errors, and where the source and log were saved.
  std::vector<std::string> errors = firstErrors(log);
  std::string message = "NVRTC failed to compile " + name + ": ";
  if (errors.empty()) {
    message += reason + "\n";
    if (!log.empty())
      message += "  " + log.substr(0, log.find('\n')) + "\n";
  } else {
    message += errors.front() + "\n";
    for (size_t i = 1; i < errors.size(); ++i)
      message += "  " + errors[i] + "\n";
  }
  std::string dir = failureDirectory(options);
  std::string base = (fs::path(dir) / sanitizeFileName(name)).string();
  std::string sourcePath = base + ".cu", logPath = base + ".log";
  if (!dir.empty() && writeText(sourcePath, source) && writeText(logPath, log))
    message += "  source: " + sourcePath + "\n  log: " + logPath;
  else
    message += "  (could not save the source and log under '" + dir + "')";
  return Status::failure(message);
}

/// Destroys the program on every path out of compileWithNvrtc.
struct ProgramGuard {
  nvrtcProgram program = nullptr;
  ~ProgramGuard() {
    if (program)
      nvrtcDestroyProgram(&program);
  }
};

} // namespace

std::vector<KernelResources> parsePtxasResources(const std::string &log) {
  std::vector<KernelResources> kernels;
  std::istringstream lines(log);
  std::string line, propertiesFor;
  while (std::getline(lines, line)) {
    if (line.find("ptxas") == std::string::npos)
      continue;
    if (line.find("Compiling entry function") != std::string::npos) {
      KernelResources kernel;
      kernel.symbol = quotedAfter(line, "Compiling entry function");
      kernel.name = readableName(kernel.symbol);
      kernels.push_back(kernel);
      propertiesFor.clear();
      continue;
    }
    if (size_t at = line.find("Function properties for ");
        at != std::string::npos) {
      // Device functions that were not inlined get properties too; only the
      // entry function's own ones describe the kernel.
      propertiesFor = line.substr(at + std::strlen("Function properties for "));
      while (!propertiesFor.empty() &&
             std::isspace(static_cast<unsigned char>(propertiesFor.back())))
        propertiesFor.pop_back();
      continue;
    }
    if (kernels.empty())
      continue;
    KernelResources &kernel = kernels.back();
    if (line.find("bytes spill stores") != std::string::npos) {
      if (propertiesFor == kernel.symbol) {
        kernel.spillStoreBytes =
            std::max(0, numberBeforePhrase(line, "bytes spill stores"));
        kernel.spillLoadBytes =
            std::max(0, numberBeforePhrase(line, "bytes spill loads"));
      }
      continue;
    }
    if (line.find("Used ") != std::string::npos &&
        line.find(" registers") != std::string::npos) {
      kernel.registers = std::max(0, numberBeforePhrase(line, " registers"));
      kernel.staticSharedBytes =
          std::max(0, numberBeforePhrase(line, " bytes smem"));
    }
  }
  return kernels;
}

std::string nvrtcVersion() {
  int major = 0, minor = 0;
  if (::nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<std::string> nvrtcCompileOptions(const NvrtcOptions &options) {
  return {"--gpu-architecture=" + options.arch,
          "-std=c++17",
          "--fmad=true",
          "-default-device",
          "--ptxas-options=-v",
          "-lineinfo"};
}

StatusOr<CompiledModule> compileWithNvrtc(const std::string &source,
                                          const std::string &name,
                                          const NvrtcOptions &options) {
  ProgramGuard guard;
  std::string fileName = sanitizeFileName(name) + ".cu";
  nvrtcResult result = nvrtcCreateProgram(&guard.program, source.c_str(),
                                          fileName.c_str(), 0, nullptr,
                                          nullptr);
  if (result != NVRTC_SUCCESS)
    return compileFailure(source, name, "",
                          std::string("nvrtcCreateProgram: ") +
                              nvrtcGetErrorString(result),
                          options);

  std::vector<std::string> optionStrings = nvrtcCompileOptions(options);
  std::vector<const char *> optionPointers;
  for (const std::string &option : optionStrings)
    optionPointers.push_back(option.c_str());
  result = nvrtcCompileProgram(guard.program, (int)optionPointers.size(),
                               optionPointers.data());
  std::string log = programLog(guard.program);
  if (result != NVRTC_SUCCESS)
    return compileFailure(source, name, log, nvrtcGetErrorString(result),
                          options);

  size_t cubinSize = 0;
  result = nvrtcGetCUBINSize(guard.program, &cubinSize);
  if (result != NVRTC_SUCCESS || cubinSize == 0)
    return compileFailure(source, name, log,
                          std::string("no cubin for ") + options.arch +
                              " (is it a real architecture such as sm_90a?)",
                          options);
  CompiledModule module;
  module.cubin.resize(cubinSize);
  result = nvrtcGetCUBIN(guard.program, module.cubin.data());
  if (result != NVRTC_SUCCESS)
    return compileFailure(source, name, log,
                          std::string("nvrtcGetCUBIN: ") +
                              nvrtcGetErrorString(result),
                          options);
  module.log = log;
  module.kernels = parsePtxasResources(log);
  return module;
}

} // namespace fuse::runtime
