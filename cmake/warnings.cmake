# Warnings and sanitizers apply PRIVATE to our own targets only; no global flags.
function(pase_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
  # __FILE__ relative to the source tree: PASE_ASSERT messages name
  # "dp/dp.cc", not the path of the machine that built them.
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fmacro-prefix-map=${PROJECT_SOURCE_DIR}/=>)
  if(PASE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(PASE_SANITIZE)
    string(REPLACE "," ";" _sans "${PASE_SANITIZE}")
    foreach(_san IN LISTS _sans)
      target_compile_options(${target} PUBLIC -fsanitize=${_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
      target_link_options(${target} PUBLIC -fsanitize=${_san})
    endforeach()
    # Instrumented loops do not vectorize; clang would warn at each `omp simd`.
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      target_compile_options(${target} PRIVATE -Wno-pass-failed)
    endif()
  endif()
  if(PASE_FUZZ)
    # Coverage feedback for libFuzzer in every library a harness links; the
    # harnesses add -fsanitize=fuzzer (fuzz/CMakeLists.txt) for its main.
    target_compile_options(${target} PUBLIC -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                                            -fno-sanitize-recover=all)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
    # Instrumented loops do not vectorize; clang would warn at each `omp simd`.
    target_compile_options(${target} PRIVATE -Wno-pass-failed)
  endif()
  if(PASE_CLANG_TIDY)
    set_target_properties(${target} PROPERTIES CXX_CLANG_TIDY "clang-tidy")
  endif()
endfunction()
