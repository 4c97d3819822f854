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
