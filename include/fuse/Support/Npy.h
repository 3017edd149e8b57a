//===- Npy.h - NumPy .npy/.npz reader and writer ----------------*- C++ -*-===//
//
// Reads and writes HostTensors in NumPy's .npy format and .npz archives, so
// that inputs, weights and expected outputs can come from Python.
//
// Format: NPY versions 1.0, 2.0 and 3.0 are read; 1.0 is written (2.0 only
// when the header does not fit 1.0's 16-bit length), with numpy's own header
// layout and 64-byte alignment, so a file numpy wrote is rewritten byte for
// byte. Data must be C-ordered and little-endian.
//
// dtypes (numpy descr -> DType):
//   '<f4' f32, '<f2' f16, '<i8' i64, '<i4' i32, '|b1' i1 (one byte, 0 or 1),
//   '|V2' bf16.
// NumPy has no bfloat16. A bf16 tensor is stored as two bytes of void per
// element holding the little-endian bf16 bit pattern, the layout arrays of
// ml_dtypes.bfloat16 save with (ml_dtypes registers its types as kind 'V', so
// np.save writes them as '<V2'; plain numpy spells a two-byte void '|V2').
// np.load gives a void array: read the bits with `a.view(np.uint16)`, or the
// values with `a.view(ml_dtypes.bfloat16)`; to write such a file, save
// `bits.astype(np.uint16).view(np.dtype('V2'))`. On read, '<V2' and '<u2' are
// accepted as bf16 bit patterns too.
// The byte-order marker '=' (native) is read as little-endian; '|' is
// accepted for one-byte types and void. Everything else is rejected: other
// dtypes (float64 must be cast to float32 first), big-endian data, Fortran
// order with more than one dimension (save with np.ascontiguousarray),
// structured dtypes, and data shorter or longer than the shape needs.
//
// An .npz file is a zip archive with one NAME.npy member per array, stored
// (np.savez) or deflated (np.savez_compressed); writeNpz stores them.
//
// Errors never abort: the readers and writers return false and set `error` to
// a one-line message that names the file (and the archive member) and says
// what is wrong; `out` is left as it was. Malformed input is never read past
// its end, and nothing is allocated for data the input does not hold.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_SUPPORT_NPY_H
#define FUSE_SUPPORT_NPY_H

#include "fuse/Support/HostTensor.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fuse {

/// Arrays of an .npz archive, in archive order, named without ".npy".
using NamedTensors = std::vector<std::pair<std::string, HostTensor>>;

/// Parses a whole .npy file held in memory. `error` does not name a file.
bool parseNpy(const uint8_t *data, size_t size, HostTensor &out,
              std::string &error);
/// The .npy file (version 1.0, or 2.0 for a huge header) for `t`.
std::vector<uint8_t> serializeNpy(const HostTensor &t);

bool readNpy(const std::string &path, HostTensor &out, std::string &error);
bool writeNpy(const std::string &path, const HostTensor &t,
              std::string &error);

/// Reads every member of the archive as an .npy array. Directory entries are
/// skipped; a member whose name lacks ".npy" keeps its full name.
bool readNpz(const std::string &path, NamedTensors &out, std::string &error);
/// Writes an archive of stored NAME.npy members, in order, replacing `path`.
/// Duplicate names are an error and leave `path` untouched.
bool writeNpz(const std::string &path, const NamedTensors &arrays,
              std::string &error);

} // namespace fuse

#endif // FUSE_SUPPORT_NPY_H
