# Compiler flags shared by every layer.
add_library(simplecpp_flags INTERFACE)
target_compile_options(simplecpp_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter -Wno-sign-compare>)
if(NOT EMSCRIPTEN AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  # SSE4 becomes Highway's baseline target: with GCC 12.2 the fallback would otherwise be
  # HWY_SCALAR, which cannot narrow lanes (../shared/TOOLCHAIN.md). No global -march: Highway's
  # dynamic dispatch picks AVX2 / AVX3 / AVX3_DL at run time.
  target_compile_options(simplecpp_flags INTERFACE -msse4.2 -mpclmul -maes)
endif()
if(EMSCRIPTEN)
  # SIMD128 selects Highway's WASM target. Node needs synchronous compilation (else it tries
  # fetch() on the .wasm path), host file access for tests and model files, and exit codes.
  target_compile_options(simplecpp_flags INTERFACE -msimd128 -fexceptions)
  target_link_options(simplecpp_flags INTERFACE -fexceptions -sWASM_ASYNC_COMPILATION=0
    -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=2GB -sNODERAWFS=1 -sENVIRONMENT=node -sEXIT_RUNTIME=1
    # getenv() must see the host environment (SIMPLECPP_ONNX_TESTS, --from-env).
    "SHELL:--pre-js ${PROJECT_SOURCE_DIR}/cmake/wasm-node-env.js")
endif()
if(SIMPLECPP_SANITIZE)
  target_compile_options(simplecpp_flags INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                         -fno-sanitize-recover=undefined)
  target_link_options(simplecpp_flags INTERFACE -fsanitize=address,undefined)
endif()
if(SIMPLECPP_FEW_HWY_TARGETS AND NOT EMSCRIPTEN)
  target_compile_definitions(simplecpp_flags INTERFACE
    "HWY_DISABLED_TARGETS=(HWY_SSSE3|HWY_SCALAR|HWY_EMU128|HWY_AVX2|HWY_AVX3)")
endif()
