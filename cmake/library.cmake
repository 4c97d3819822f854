# One library per folder, whose headers only the targets that link it see.
#
# The folder is reachable from the build tree as include/<folder>/<folder>
# (a link to the source folder), and include/<folder> is the library's only
# public include directory: `#include "dp/dp.h"` compiles in a target that
# links pase_dp (directly or through a library that does) and fails with
# "No such file" anywhere else, so a wrong-way include cannot build. The
# source root itself is on no include path. docs/architecture.md lists what
# each library may use; tests/scripts/check_layers.py holds the folders, this
# build and that list to each other.
function(pase_expose_folder target folder)
  set(root "${PROJECT_BINARY_DIR}/include/${folder}")
  get_filename_component(name "${folder}" NAME)
  file(MAKE_DIRECTORY "${root}")
  if(NOT EXISTS "${root}/${name}")
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${folder}" "${root}/${name}" SYMBOLIC)
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE "${root}")
  else()
    target_include_directories(${target} PUBLIC "${root}")
  endif()
endfunction()

# pase_library(NAME FOLDER SOURCES... USES targets...): a static library of
# the given folder's sources that may use (links, PUBLIC) the listed targets.
function(pase_library name folder)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "SOURCES;USES")
  add_library(${name} STATIC ${arg_SOURCES})
  pase_expose_folder(${name} ${folder})
  if(arg_USES)
    target_link_libraries(${name} PUBLIC ${arg_USES})
  endif()
  pase_target_defaults(${name})
endfunction()
