//===- ArenaPacking.h ---------------------------------------------------*- C++ -*-===//

#ifndef FUSE_SUPPORT_ARENAPACKING_H
#define FUSE_SUPPORT_ARENAPACKING_H

namespace fuse {} // namespace fuse

#endif // FUSE_SUPPORT_ARENAPACKING_H
