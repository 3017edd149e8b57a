# Embeds the device helpers (kernels/*.cuh) into a C++ source file.
# Usage: cmake -DKERNELS_DIR=... -DTEMPLATE=...DeviceLibrary.cpp.in
#              -DOUTPUT=...DeviceLibrary.cpp -P EmbedDeviceLibrary.cmake
#
# Each file's first line names the helpers it uses: `// fuse-depends: a.cuh`.
# The files are put in dependency order here (a broken or cyclic list fails
# the build, naming the file) and their text becomes raw string literals,
# split at line ends into pieces small enough for every compiler (MSVC takes
# at most 16 KB per literal piece and 64 KB per concatenated literal).

cmake_minimum_required(VERSION 3.20) # IN_LIST and quoted-argument policies

set(delimiter "fuse_cuh")
set(piece_bytes 12000)

file(GLOB paths "${KERNELS_DIR}/*.cuh")
list(SORT paths)
set(names)
foreach(path IN LISTS paths)
  get_filename_component(name "${path}" NAME)
  list(APPEND names "${name}")
  file(STRINGS "${path}" first_line LIMIT_COUNT 1)
  if(NOT first_line MATCHES "^// fuse-depends:(.*)$")
    message(FATAL_ERROR "${path}: the first line must be `// fuse-depends:` "
                        "followed by the helper files it uses (possibly none)")
  endif()
  string(STRIP "${CMAKE_MATCH_1}" deps)
  separate_arguments(deps UNIX_COMMAND "${deps}")
  set(deps_${name} "${deps}")
  set(path_${name} "${path}")
endforeach()

foreach(name IN LISTS names)
  foreach(dep IN LISTS deps_${name})
    if(NOT dep IN_LIST names)
      message(FATAL_ERROR "${path_${name}}: fuse-depends names ${dep}, "
                          "which is not a file of ${KERNELS_DIR}")
    endif()
  endforeach()
endforeach()

# Kahn's algorithm, taking the alphabetically first ready file each time, so
# the order is deterministic.
set(ordered)
set(remaining ${names})
while(remaining)
  set(picked "")
  foreach(name IN LISTS remaining)
    set(ready TRUE)
    foreach(dep IN LISTS deps_${name})
      if(NOT dep IN_LIST ordered)
        set(ready FALSE)
      endif()
    endforeach()
    if(ready)
      set(picked "${name}")
      break()
    endif()
  endforeach()
  if(NOT picked)
    message(FATAL_ERROR "kernels/: the fuse-depends lines of ${remaining} form a cycle")
  endif()
  list(APPEND ordered "${picked}")
  list(REMOVE_ITEM remaining "${picked}")
endwhile()

set(entries "")
foreach(name IN LISTS ordered)
  file(READ "${path_${name}}" text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${path_${name}} contains `)${delimiter}\"`, the raw "
                        "string delimiter of EmbedDeviceLibrary.cmake")
  endif()
  set(dep_list "")
  foreach(dep IN LISTS deps_${name})
    string(APPEND dep_list "\"${dep}\", ")
  endforeach()
  string(APPEND entries "  {\n    DeviceLibraryFile file;\n"
                        "    file.name = \"${name}\";\n"
                        "    file.dependsOn = {${dep_list}};\n")
  # Cut after the last newline of each piece_bytes window, so no piece ends
  # inside a multi-byte character.
  string(LENGTH "${text}" remaining_bytes)
  while(remaining_bytes GREATER 0)
    if(remaining_bytes GREATER piece_bytes)
      string(SUBSTRING "${text}" 0 ${piece_bytes} piece)
      string(FIND "${piece}" "\n" last_newline REVERSE)
      if(last_newline GREATER -1)
        math(EXPR cut "${last_newline} + 1")
        string(SUBSTRING "${text}" 0 ${cut} piece)
      endif()
    else()
      set(piece "${text}")
    endif()
    string(LENGTH "${piece}" piece_length)
    string(APPEND entries "    file.text += R\"${delimiter}(${piece})${delimiter}\";\n")
    string(SUBSTRING "${text}" ${piece_length} -1 text)
    math(EXPR remaining_bytes "${remaining_bytes} - ${piece_length}")
  endwhile()
  string(APPEND entries "    files.push_back(std::move(file));\n  }\n")
endforeach()

file(READ "${TEMPLATE}" source)
string(REPLACE "@FUSE_DEVICE_LIBRARY_FILES@" "${entries}" source "${source}")
# Rewrite only on change, so an edit to a comment elsewhere rebuilds nothing.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" previous)
endif()
if(NOT "${previous}" STREQUAL "${source}")
  file(WRITE "${OUTPUT}" "${source}")
endif()
