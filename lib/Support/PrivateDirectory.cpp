//===- PrivateDirectory.cpp - Directories only their owner can use --------===//

#include "fuse/Support/PrivateDirectory.h"

#include <cerrno>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

namespace fuse {

bool makePrivateDirectory(const std::string &path, std::string &error) {
  if (path.empty()) {
    error = "empty directory path";
    return false;
  }
  // Each prefix ending before a '/', then the whole path: mkdir(2) creates
  // one level at a time, each with mode 0700 (std::filesystem's
  // create_directories would give 0777 less the umask).
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    std::string prefix = path.substr(0, end);
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      error = "cannot create directory " + prefix + ": " + std::strerror(errno);
      return false;
    }
    if (end == std::string::npos)
      break;
  }
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    error = "cannot use directory " + path + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISDIR(info.st_mode)) {
    error = path + " is not a directory";
    return false;
  }
  if (info.st_uid != geteuid()) {
    error = "directory " + path + " belongs to user " +
            std::to_string(info.st_uid) + ", not to this user (" +
            std::to_string(geteuid()) +
            "): another user could replace what is cached there";
    return false;
  }
  return true;
}

} // namespace fuse
