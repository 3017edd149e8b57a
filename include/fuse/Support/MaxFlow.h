//===- MaxFlow.h ---------------------------------------------------*- C++ -*-===//

#ifndef FUSE_SUPPORT_MAXFLOW_H
#define FUSE_SUPPORT_MAXFLOW_H

namespace fuse {} // namespace fuse

#endif // FUSE_SUPPORT_MAXFLOW_H
