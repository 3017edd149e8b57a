//===- ExecutableIO.cpp - The Executable file format ----------------------===//
//
// Layout (all integers little-endian, strings and vectors prefixed by a u64
// length):
//
//   "FUSEEXE\0"  u32 version
//   entry arch inputs outputs constants arenaBytes workspaceBytes
//   kernels launches gemms fills copies steps helperSources
//   SHA-256 of every byte before it (32 bytes)
//
// in exactly the order of the fields of Executable (a launch: kernel, grid,
// block, shared bytes, args, tensor maps, persistent blocks, guard terms;
// an argument:
// buffer, dtype, bytes, written); enums are one byte, floats their bit
// pattern. Bump kFormatVersion whenever anything here changes: an old file is
// then refused with a message instead of misread (version 2 added the
// launches' tensor maps, 3 their persistent blocks, 4 the arguments' dtype,
// extent and direction and the checksum, 5 the tensors' arena offsets, 6
// the launches' guard terms).
//
// Reading checks, in order: the magic, the version, the checksum (so a bit
// flipped anywhere, or a cut, is reported as such before any field is
// trusted), every field and enum value, then validateExecutable checks
// indices, extents and that the steps agree with the signature, so what
// comes out is safe to run. Writing checks the bytes with the same reader
// before the file is created: a file this build writes, this build reads.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/ExecutableIO.h"

#include "ByteStream.h"
#include "Sha256.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include <unistd.h>

namespace fuse::runtime {

using detail::ByteReader;
using detail::ByteWriter;

namespace {

constexpr char kMagic[8] = {'F', 'U', 'S', 'E', 'E', 'X', 'E', '\0'};
constexpr uint32_t kFormatVersion = 6;
constexpr size_t kChecksumBytes = 32;

std::array<uint8_t, kChecksumBytes> checksumOf(const uint8_t *data,
                                               size_t size) {
  detail::Sha256 sha;
  sha.update(data, size);
  return sha.digest();
}

//===-------------------------------- Writing -----------------------------===//

void writeSpec(ByteWriter &w, const TensorSpec &spec) {
  w.str(spec.name);
  w.u8(static_cast<uint8_t>(spec.dtype));
  w.u64(spec.shape.size());
  for (int64_t dim : spec.shape)
    w.i64(dim);  w.i64(spec.arenaOffset);
}

void writeRef(ByteWriter &w, const BufferRef &ref) {
  w.u8(static_cast<uint8_t>(ref.kind));
  w.i64(ref.index);
  w.i64(ref.offset);
}

void writeGuardTerm(ByteWriter &w, const LaunchGuardTerm &term) {
  writeRef(w, term.flag);
  w.u8(static_cast<uint8_t>(term.dtype));
  w.u8(static_cast<uint8_t>(term.compare));
  w.u8(term.negate);
  w.f64(term.constant);
}

void writeArg(ByteWriter &w, const KernelArg &arg) {
  writeRef(w, arg.ref);
  w.u8(static_cast<uint8_t>(arg.dtype));
  w.i64(arg.bytes);
  w.u8(arg.written);
}

/// Every entry of dims, strides and box, those past the rank included, so
/// that a round trip gives back an equal TensorMapArg.
void writeTensorMap(ByteWriter &w, const TensorMapArg &map) {
  writeRef(w, map.base);
  w.u8(static_cast<uint8_t>(map.dtype));
  w.u32(map.rank);
  for (uint64_t v : map.dims)
    w.u64(v);
  for (uint64_t v : map.strides)
    w.u64(v);
  for (uint32_t v : map.box)
    w.u32(v);
  w.u8(static_cast<uint8_t>(map.swizzle));
}

void writeGemm(ByteWriter &w, const GemmStep &g) {
  w.u8(static_cast<uint8_t>(g.abType));
  w.u8(static_cast<uint8_t>(g.cdType));
  w.u8(g.transA);
  w.u8(g.transB);
  for (int64_t v : {g.m, g.n, g.k, g.batch, g.lda, g.ldb, g.ldc, g.ldd,
                    g.strideA, g.strideB, g.strideC, g.strideD})
    w.i64(v);
  w.f32(g.alpha);
  w.f32(g.beta);
  w.u8(static_cast<uint8_t>(g.epilogue));
  w.u8(static_cast<uint8_t>(g.biasType));
  for (const BufferRef *ref : {&g.a, &g.b, &g.c, &g.d, &g.bias})
    writeRef(w, *ref);
}

//===-------------------------------- Reading -----------------------------===//

/// Reads an enum stored as one byte, refusing values past `last`.
template <typename Enum>
Enum readEnum(ByteReader &r, const char *field, Enum last) {
  uint8_t value = r.u8(field);
  if (r.ok() && value > static_cast<uint8_t>(last))
    r.fail(std::string("invalid ") + field + " " + std::to_string(value) +
           " (at most " + std::to_string(static_cast<int>(last)) + ")");
  return r.ok() ? static_cast<Enum>(value) : Enum{};
}

bool readBool(ByteReader &r, const char *field) {
  uint8_t value = r.u8(field);
  if (r.ok() && value > 1)
    r.fail(std::string("invalid ") + field + " " + std::to_string(value) +
           " (a flag is 0 or 1)");
  return value == 1;
}

DType readDType(ByteReader &r, const char *field) {
  return readEnum(r, field, DType::I1);
}

TensorSpec readSpec(ByteReader &r) {
  TensorSpec spec;
  spec.name = r.str("tensor name");
  spec.dtype = readDType(r, "dtype");
  uint64_t rank = r.count("rank", 8);
  for (uint64_t i = 0; i < rank && r.ok(); ++i)
    spec.shape.push_back(r.i64("dimension"));
  spec.arenaOffset = r.i64("arena offset");
  return spec;
}

BufferRef readRef(ByteReader &r) {
  BufferRef ref;
  ref.kind = readEnum(r, "buffer kind", BufferRef::Kind::Constant);
  ref.index = r.i64("buffer index");
  ref.offset = r.i64("buffer offset");
  return ref;
}

/// Bytes of one kernel argument in the file.
constexpr size_t kArgBytes = 17 + 1 + 8 + 1;

KernelArg readArg(ByteReader &r) {
  KernelArg arg;
  arg.ref = readRef(r);
  arg.dtype = readDType(r, "argument dtype");
  arg.bytes = r.i64("argument bytes");
  arg.written = readBool(r, "argument written");
  return arg;
}

/// Bytes of one guard term in the file.
constexpr size_t kGuardTermBytes = 17 + 1 + 1 + 1 + 8;

LaunchGuardTerm readGuardTerm(ByteReader &r) {
  LaunchGuardTerm term;
  term.flag = readRef(r);
  term.dtype = readDType(r, "guard term dtype");
  term.compare = readEnum(r, "guard term comparison", LaunchGuardTerm::Compare::Ge);
  term.negate = readBool(r, "guard term negation");
  term.constant = r.f64("guard term constant");
  return term;
}

/// Bytes of one tensor map in the file (bounds the count read for them).
constexpr size_t kTensorMapBytes = 17 + 1 + 4 + 5 * 8 + 4 * 8 + 5 * 4 + 1;

TensorMapArg readTensorMap(ByteReader &r) {
  TensorMapArg map;
  map.base = readRef(r);
  map.dtype = readDType(r, "tensor map dtype");
  map.rank = r.u32("tensor map rank");
  for (uint64_t &v : map.dims)
    v = r.u64("tensor map dims");
  for (uint64_t &v : map.strides)
    v = r.u64("tensor map strides");
  for (uint32_t &v : map.box)
    v = r.u32("tensor map box");
  map.swizzle =
      readEnum(r, "tensor map swizzle", TensorMapArg::Swizzle::B128);
  return map;
}

GemmStep readGemm(ByteReader &r) {
  GemmStep g;
  g.abType = readDType(r, "gemm A/B dtype");
  g.cdType = readDType(r, "gemm C/D dtype");
  g.transA = readBool(r, "gemm transA");
  g.transB = readBool(r, "gemm transB");
  for (int64_t *v : {&g.m, &g.n, &g.k, &g.batch, &g.lda, &g.ldb, &g.ldc,
                     &g.ldd, &g.strideA, &g.strideB, &g.strideC, &g.strideD})
    *v = r.i64("gemm shape");
  g.alpha = r.f32("gemm alpha");
  g.beta = r.f32("gemm beta");
  g.epilogue = readEnum(r, "gemm epilogue", GemmStep::Epilogue::GeluBias);
  g.biasType = readDType(r, "gemm bias dtype");
  for (BufferRef *ref : {&g.a, &g.b, &g.c, &g.d, &g.bias})
    *ref = readRef(r);
  return g;
}

/// Reads a u64 count then that many items with `readItem`, stopping at the
/// first error. `minItemBytes` bounds the count by what is left.
template <typename T, typename ReadItem>
void readVector(ByteReader &r, const char *field, size_t minItemBytes,
                std::vector<T> &out, ReadItem readItem) {
  uint64_t n = r.count(field, minItemBytes);
  out.clear();
  for (uint64_t i = 0; i < n && r.ok(); ++i)
    out.push_back(readItem());
}

} // namespace

std::vector<uint8_t> serializeExecutable(const Executable &exe) {
  ByteWriter w;
  w.raw(kMagic, sizeof kMagic);
  w.u32(kFormatVersion);
  w.str(exe.entry);
  w.str(exe.arch);
  for (const auto *specs : {&exe.inputs, &exe.outputs}) {
    w.u64(specs->size());
    for (const TensorSpec &spec : *specs)
      writeSpec(w, spec);
  }
  w.u64(exe.constants.size());
  for (const ConstantData &constant : exe.constants) {
    writeSpec(w, constant.spec);
    w.u64(constant.bytes.size());
    w.raw(constant.bytes.data(), constant.bytes.size());
  }
  w.i64(exe.arenaBytes);
  w.i64(exe.workspaceBytes);
  w.u64(exe.kernels.size());
  for (const Kernel &kernel : exe.kernels) {
    w.str(kernel.name);
    w.str(kernel.body);
    w.u64(kernel.helpers.size());
    for (const std::string &helper : kernel.helpers)
      w.str(helper);
  }
  w.u64(exe.launches.size());
  for (const KernelLaunch &launch : exe.launches) {
    w.i64(launch.kernel);
    for (uint32_t v : launch.grid)
      w.u32(v);
    for (uint32_t v : launch.block)
      w.u32(v);
    w.u32(launch.sharedBytes);
    w.u64(launch.args.size());
    for (const KernelArg &arg : launch.args)
      writeArg(w, arg);
    w.u64(launch.tensorMaps.size());
    for (const TensorMapArg &map : launch.tensorMaps)
      writeTensorMap(w, map);
    w.u32(launch.persistentBlocksPerMultiprocessor);
    w.u64(launch.changesOnlyWhen.size());
    for (const LaunchGuardTerm &term : launch.changesOnlyWhen)
      writeGuardTerm(w, term);
  }
  w.u64(exe.gemms.size());
  for (const GemmStep &gemm : exe.gemms)
    writeGemm(w, gemm);
  w.u64(exe.fills.size());
  for (const FillStep &fill : exe.fills) {
    writeRef(w, fill.dst);
    w.i64(fill.bytes);
  }
  w.u64(exe.copies.size());
  for (const CopyStep &copy : exe.copies) {
    writeRef(w, copy.src);
    writeRef(w, copy.dst);
    w.i64(copy.bytes);
  }
  w.u64(exe.steps.size());
  for (const Step &step : exe.steps) {
    w.u8(static_cast<uint8_t>(step.kind));
    w.i64(step.index);
    w.str(step.label);
    w.f64(step.flops);
    w.f64(step.bytes);
  }
  w.u64(exe.helperSources.size());
  for (const auto &[name, text] : exe.helperSources) {
    w.str(name);
    w.str(text);
  }
  std::vector<uint8_t> bytes = w.take();
  std::array<uint8_t, kChecksumBytes> sum =
      checksumOf(bytes.data(), bytes.size());
  bytes.insert(bytes.end(), sum.begin(), sum.end());
  return bytes;
}

StatusOr<Executable> deserializeExecutable(const std::vector<uint8_t> &bytes,
                                           const std::string &origin) {
  if (bytes.size() < sizeof kMagic ||
      std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return Status::failure(origin +
                           ": not a Fuse executable (the file does not start "
                           "with \"FUSEEXE\")");
  ByteReader header(bytes, sizeof kMagic);
  uint32_t version = header.u32("format version");
  if (!header.ok())
    return Status::failure(origin + ": " + header.error());
  if (version != kFormatVersion)
    return Status::failure(
        origin + ": executable format version " + std::to_string(version) +
        ", but this build of Fuse reads version " +
        std::to_string(kFormatVersion) +
        " (compile the graph again; a file of this build's own version that "
        "reads so is corrupt)");
  // The checksum covers the magic and the version too; fields are read
  // only from bytes it vouches for.
  const size_t headerBytes = sizeof kMagic + 4;
  if (bytes.size() < headerBytes + kChecksumBytes)
    return Status::failure(origin + ": truncated: " +
                           std::to_string(bytes.size()) +
                           " bytes, too short for a version " +
                           std::to_string(kFormatVersion) +
                           " executable and its checksum");
  const size_t bodyEnd = bytes.size() - kChecksumBytes;
  if (std::memcmp(checksumOf(bytes.data(), bodyEnd).data(),
                  bytes.data() + bodyEnd, kChecksumBytes) != 0)
    return Status::failure(
        origin + ": checksum mismatch: the file is corrupt (changed or cut "
                 "after it was written; its last " +
        std::to_string(kChecksumBytes) +
        " bytes are the SHA-256 of the rest): compile the graph again");
  ByteReader r(bytes, headerBytes, bodyEnd);

  Executable exe;
  exe.entry = r.str("entry");
  exe.arch = r.str("arch");
  readVector(r, "inputs", 17, exe.inputs, [&] { return readSpec(r); });
  readVector(r, "outputs", 17, exe.outputs, [&] { return readSpec(r); });
  readVector(r, "constants", 25, exe.constants, [&] {
    ConstantData constant;
    constant.spec = readSpec(r);
    constant.bytes = r.blob("constant data");
    return constant;
  });
  exe.arenaBytes = r.i64("arena bytes");
  exe.workspaceBytes = r.i64("workspace bytes");
  readVector(r, "kernels", 24, exe.kernels, [&] {
    Kernel kernel;
    kernel.name = r.str("kernel name");
    kernel.body = r.str("kernel body");
    readVector(r, "kernel helpers", 8, kernel.helpers,
               [&] { return r.str("helper name"); });
    return kernel;
  });
  readVector(r, "launches", 64, exe.launches, [&] {
    KernelLaunch launch;
    launch.kernel = r.i64("launch kernel");
    for (uint32_t &v : launch.grid)
      v = r.u32("launch grid");
    for (uint32_t &v : launch.block)
      v = r.u32("launch block");
    launch.sharedBytes = r.u32("launch shared bytes");
    readVector(r, "launch arguments", kArgBytes, launch.args,
               [&] { return readArg(r); });
    readVector(r, "launch tensor maps", kTensorMapBytes, launch.tensorMaps,
               [&] { return readTensorMap(r); });
    launch.persistentBlocksPerMultiprocessor = r.u32("launch persistent blocks");
    readVector(r, "launch guard terms", kGuardTermBytes, launch.changesOnlyWhen,
               [&] { return readGuardTerm(r); });
    return launch;
  });
  readVector(r, "gemms", 195, exe.gemms, [&] { return readGemm(r); });
  readVector(r, "fills", 25, exe.fills, [&] {
    FillStep fill;
    fill.dst = readRef(r);
    fill.bytes = r.i64("fill bytes");
    return fill;
  });
  readVector(r, "copies", 42, exe.copies, [&] {
    CopyStep copy;
    copy.src = readRef(r);
    copy.dst = readRef(r);
    copy.bytes = r.i64("copy bytes");
    return copy;
  });
  readVector(r, "steps", 33, exe.steps, [&] {
    Step step;
    step.kind = readEnum(r, "step kind", Step::Kind::Copy);
    step.index = r.i64("step index");
    step.label = r.str("step label");
    step.flops = r.f64("step flops");
    step.bytes = r.f64("step bytes");
    return step;
  });
  readVector(r, "helper sources", 16, exe.helperSources, [&] {
    std::pair<std::string, std::string> helper;
    helper.first = r.str("helper name");
    helper.second = r.str("helper text");
    return helper;
  });
  if (r.ok() && r.remaining() != 0)
    r.fail(std::to_string(r.remaining()) +
           " unexpected bytes after the last field");
  if (!r.ok())
    return Status::failure(origin + ": " + r.error());
  if (Status status = validateExecutable(exe, origin); !status.ok())
    return status;
  return exe;
}

Status writeExecutableFile(const Executable &exe, const std::string &path) {
  std::vector<uint8_t> bytes = serializeExecutable(exe);
  // What this build writes, this build must read: the bytes go through the
  // reader (and so validateExecutable) before any file is touched, and a
  // refusal names what is wrong instead of leaving a file that fails later.
  if (StatusOr<Executable> back = deserializeExecutable(bytes, path); !back)
    return Status::failure("refusing to write an invalid executable: " +
                           back.status().message());
  // A temporary file in the same directory renamed over `path`: a reader
  // sees the old file or the whole new one, never half of one.
  static std::atomic<uint64_t> counter{0};
  std::string temp = path + "." + std::to_string(getpid()) + "." +
                     std::to_string(counter++) + ".tmp";
  std::ofstream stream(temp, std::ios::binary | std::ios::trunc);
  if (!stream)
    return Status::failure("cannot write " + path + ": " +
                           std::strerror(errno));
  stream.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  stream.close();
  if (!stream) {
    int error = errno;
    std::remove(temp.c_str());
    return Status::failure("cannot write " + path + ": " +
                           std::strerror(error));
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    int error = errno;
    std::remove(temp.c_str());
    return Status::failure("cannot write " + path + ": " +
                           std::strerror(error));
  }
  return Status::success();
}

StatusOr<Executable> readExecutableFile(const std::string &path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream)
    return Status::failure("cannot open " + path + ": " +
                           std::strerror(errno));
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(stream), {}};
  if (stream.bad())
    return Status::failure("cannot read " + path + ": " +
                           std::strerror(errno));
  return deserializeExecutable(bytes, path);
}

} // namespace fuse::runtime
