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
// readNpz inflates a member lazily: it reads the member's .npy header first
// and hands the array's name, dtype and shape to the caller's check, which
// says whether the data is wanted before any of it is inflated. A reader
// that knows what each array must be (fuse-run: the graph's argument types)
// refuses an oversized or unexpected array at its header, so a small archive
// that would inflate to gigabytes grows no memory. Data is then read in
// chunks, never more than the header and the member's declared size allow,
// and the member's CRC is checked at its end. Two members that name one
// array ("x.npy" twice, or "x.npy" and "x") are an error.
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
#include <functional>
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

/// An array of an .npz archive as its .npy header describes it, before its
/// data is read.
struct NpzArrayHeader {
  /// The array's name (the member's without ".npy") and the member's.
  std::string name, member;
  DType dtype;
  std::vector<int64_t> shape;
};

/// What readNpz does with an array, decided from its header alone.
enum class NpzVerdict {
  Read,   ///< inflate and return it
  Skip,   ///< leave it out, uninflated
  Refuse, ///< fail the read with the check's message
};
using NpzArrayCheck =
    std::function<NpzVerdict(const NpzArrayHeader &header, std::string &error)>;

/// Reads the members of the archive as .npy arrays. Directory entries are
/// skipped; a member whose name lacks ".npy" keeps its full name. `check`
/// (if given) sees each array's header before its data is inflated; when it
/// refuses one, `error` is its message as it set it.
bool readNpz(const std::string &path, NamedTensors &out, std::string &error,
             const NpzArrayCheck &check = nullptr);
/// Writes an archive of stored NAME.npy members, in order, replacing `path`.
/// Duplicate names are an error and leave `path` untouched.
bool writeNpz(const std::string &path, const NamedTensors &arrays,
              std::string &error);

} // namespace fuse

#endif // FUSE_SUPPORT_NPY_H
