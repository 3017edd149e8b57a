# Link LLVM statically.
#
# Debian's LLVM is configured with LLVM_LINK_LLVM_DYLIB=ON, so every imported
# MLIR archive lists the target `LLVM` (the 150 MB libLLVM.so) as its LLVM
# dependency. MLIR itself only needs a handful of LLVM components, all of which
# Debian also ships as static archives. Re-point the `LLVM` target at those
# archives so tools depend on nothing but libc/libstdc++ and can be copied to a
# machine that has no LLVM installed (the GPU machine).
if(NOT TARGET LLVM)
  message(FATAL_ERROR "The LLVM CMake package did not define the LLVM target")
endif()

set(_fuse_llvm_libdir "${LLVM_LIBRARY_DIR}")
set(_fuse_llvm_components Remarks BitstreamReader Support Demangle)
foreach(_component IN LISTS _fuse_llvm_components)
  set(_archive "${_fuse_llvm_libdir}/libLLVM${_component}.a")
  if(NOT EXISTS "${_archive}")
    message(FATAL_ERROR "Static LLVM archive not found: ${_archive} (install llvm-22-dev)")
  endif()
  list(APPEND _fuse_llvm_archives "${_archive}")
endforeach()
list(POP_FRONT _fuse_llvm_archives _fuse_llvm_primary)

set_target_properties(LLVM PROPERTIES
  IMPORTED_LOCATION "${_fuse_llvm_primary}"
  IMPORTED_LOCATION_RELEASE "${_fuse_llvm_primary}"
  IMPORTED_LOCATION_RELWITHDEBINFO "${_fuse_llvm_primary}"
  IMPORTED_LOCATION_DEBUG "${_fuse_llvm_primary}"
  IMPORTED_LOCATION_MINSIZEREL "${_fuse_llvm_primary}"
  IMPORTED_SONAME ""
  IMPORTED_SONAME_RELWITHDEBINFO ""
  INTERFACE_LINK_LIBRARIES "${_fuse_llvm_archives};pthread;rt;dl;m")
message(STATUS "Linking LLVM statically: ${_fuse_llvm_primary} ${_fuse_llvm_archives}")
