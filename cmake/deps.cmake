# One place that finds every dependency; all come from Debian packages
# (see scripts/install-deps.sh).
find_package(Boost 1.74 REQUIRED)               # header-only Boost.Graph
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(TBB REQUIRED COMPONENTS tbb)
find_package(Threads REQUIRED)
if(PASE_BUILD_TESTS)
  find_package(doctest REQUIRED)
endif()

# Optional ONNX importer (PASE_WITH_ONNX): Protobuf first, because ONNX's
# exported targets link protobuf::libprotobuf. Sets PASE_HAVE_ONNX.
set(PASE_HAVE_ONNX OFF)
if(NOT PASE_WITH_ONNX STREQUAL "OFF")
  if(PASE_WITH_ONNX STREQUAL "ON")
    find_package(Protobuf REQUIRED)
    find_package(ONNX REQUIRED)
  else()
    find_package(Protobuf QUIET)
    if(Protobuf_FOUND)
      find_package(ONNX QUIET)
    endif()
  endif()
  if(Protobuf_FOUND AND ONNX_FOUND)
    set(PASE_HAVE_ONNX ON)
  endif()
endif()
message(STATUS "pase: ONNX importer ${PASE_HAVE_ONNX} (PASE_WITH_ONNX=${PASE_WITH_ONNX})")
