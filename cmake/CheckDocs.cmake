# Fails when a committed doc in docs/ differs from the one generated from the
# .td files. Usage: cmake -DGENERATED=... -DCOMMITTED=... -P CheckDocs.cmake
if(NOT EXISTS "${GENERATED}")
  message(FATAL_ERROR "${GENERATED} was not generated: build the fuse-doc target")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${GENERATED}" "${COMMITTED}"
                RESULT_VARIABLE differs)
if(differs)
  message(FATAL_ERROR "${COMMITTED} is out of date with the .td files: "
                      "run `cmake --build build --target fuse-update-docs` and commit docs/")
endif()
message(STATUS "${COMMITTED} matches the .td files")
