# libFuzzer build (-DSIMPLECPP_FUZZ=ON, clang only): every layer is compiled with coverage
# instrumentation plus AddressSanitizer and UndefinedBehaviorSanitizer; the fuzz targets in
# tests/fuzz link libFuzzer's main (-fsanitize=fuzzer). Use scripts/fuzz.sh to build and run.
option(SIMPLECPP_FUZZ "Build the libFuzzer targets in tests/fuzz (clang; instruments everything)" OFF)
if(SIMPLECPP_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang" OR NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "SIMPLECPP_FUZZ needs clang (configure with CC=clang CXX=clang++)")
  endif()
  # Directory-wide so that every library added after this include is instrumented. UB aborts
  # (no recover) so that libFuzzer records it as a crash.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  # The fuzz targets turn every simplecpp::Error into "input rejected"; other exceptions
  # (std::bad_alloc, std::length_error, ...) escape and count as crashes.
endif()
