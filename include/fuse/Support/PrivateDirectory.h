//===- PrivateDirectory.h - Directories only their owner can use -*- C++ -*-===//
//
// The cubin cache holds code that is loaded onto the GPU and run: a user who
// could write into someone else's cache directory could plant a kernel
// there. So the cache directories are created readable, writable and
// searchable by their owner only (mode 0700), and a directory that another
// user owns (a fallback under /tmp that someone else created first, or a
// link to one) is refused rather than used.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_SUPPORT_PRIVATEDIRECTORY_H
#define FUSE_SUPPORT_PRIVATEDIRECTORY_H

#include <string>

namespace fuse {

/// Creates `path` and every missing parent with mode 0700. An existing
/// directory (followed through links) is used as it is if this user owns
/// it. False, with `error` naming the path and why, when a component cannot
/// be created, is not a directory, or the directory belongs to another user.
bool makePrivateDirectory(const std::string &path, std::string &error);

} // namespace fuse

#endif // FUSE_SUPPORT_PRIVATEDIRECTORY_H
