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
  # SIMD128 selects Highway's WASM target; the library throws and catches C++ exceptions.
  target_compile_options(simplecpp_flags INTERFACE -msimd128 -fexceptions)
  target_link_options(simplecpp_flags INTERFACE -fexceptions -sALLOW_MEMORY_GROWTH=1
    -sMAXIMUM_MEMORY=2GB)
  # Node programs (tests, CLI) need synchronous compilation (else node tries fetch() on the .wasm
  # path), host file access for tests and model files, exit codes, and getenv() that sees the
  # host environment (SIMPLECPP_ONNX_TESTS, --from-env). A target that sets the property
  # SIMPLECPP_WASM_WEB (the JS API module, simplecpp/js) runs in browsers too and gets none of them.
  set(SIMPLECPP_WASM_NODE_ONLY "$<NOT:$<BOOL:$<TARGET_PROPERTY:SIMPLECPP_WASM_WEB>>>")
  foreach(flag -sWASM_ASYNC_COMPILATION=0 -sNODERAWFS=1 -sENVIRONMENT=node -sEXIT_RUNTIME=1
          "SHELL:--pre-js ${PROJECT_SOURCE_DIR}/cmake/wasm-node-env.js")
    target_link_options(simplecpp_flags INTERFACE "$<${SIMPLECPP_WASM_NODE_ONLY}:${flag}>")
  endforeach()
endif()
# SIMPLECPP_SANITIZE: ON (or "address") = AddressSanitizer + UndefinedBehaviorSanitizer;
# "thread" = ThreadSanitizer (scripts/tsan-test.sh; TSan cannot be combined with ASan).
string(TOLOWER "${SIMPLECPP_SANITIZE}" SIMPLECPP_SANITIZE_KIND)
if(SIMPLECPP_SANITIZE_KIND STREQUAL "thread")
  target_compile_options(simplecpp_flags INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(simplecpp_flags INTERFACE -fsanitize=thread)
elseif(SIMPLECPP_SANITIZE)
  target_compile_options(simplecpp_flags INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                         -fno-sanitize-recover=undefined)
  target_link_options(simplecpp_flags INTERFACE -fsanitize=address,undefined)
endif()
if(SIMPLECPP_FEW_HWY_TARGETS AND NOT EMSCRIPTEN)
  target_compile_definitions(simplecpp_flags INTERFACE
    "HWY_DISABLED_TARGETS=(HWY_SSSE3|HWY_SCALAR|HWY_EMU128|HWY_AVX2|HWY_AVX3)")
endif()
