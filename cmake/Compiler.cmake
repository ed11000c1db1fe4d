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
  # Exceptions: the library throws and catches C++ exceptions (simplecpp::Error; the JS API turns
  # them into JS exceptions). "wasm" = native WebAssembly exception handling (-fwasm-exceptions:
  # smaller and faster code, needs node >= 17 / current browsers); "js" = emscripten's JS-emulated
  # exceptions (-fexceptions: every call that may throw goes through a JS invoke_* trampoline).
  set(SIMPLECPP_WASM_EXCEPTIONS "wasm" CACHE STRING "WebAssembly C++ exception handling: wasm or js")
  set_property(CACHE SIMPLECPP_WASM_EXCEPTIONS PROPERTY STRINGS wasm js)
  if(SIMPLECPP_WASM_EXCEPTIONS STREQUAL "wasm")
    set(simplecpp_wasm_eh -fwasm-exceptions)
  elseif(SIMPLECPP_WASM_EXCEPTIONS STREQUAL "js")
    set(simplecpp_wasm_eh -fexceptions)
  else()
    message(FATAL_ERROR "SIMPLECPP_WASM_EXCEPTIONS must be wasm or js, not '${SIMPLECPP_WASM_EXCEPTIONS}'")
  endif()
  # SIMPLECPP_WASM_OPT: how the WebAssembly objects are optimized, for size or for speed.
  #   speed:    the build type's flags (-O3 in Release) for every source;
  #   balanced: -Oz for every source except those on the inference hot path, which keep -O3
  #             (each layer names its hot sources with simplecpp_hot_sources(), below);
  #   size:     -Oz for every source, the smaller forms of code marked SIMPLECPP_OPTIMIZE_FOR_SIZE,
  #             and (simplecpp/js/CMakeLists.txt) binaryen -Oz, emmalloc for the JS package.
  # Default balanced: most of the size of "size" at the latency of "speed", because the time is
  # spent in few sources (bench/README.md, "WebAssembly code size", has the figures). The option
  # comes after CMAKE_CXX_FLAGS_<CONFIG> on the command line and a hot source's -O3 after it, so
  # each wins in turn.
  set(SIMPLECPP_WASM_OPT "balanced" CACHE STRING
      "WebAssembly compile optimization: speed (-O3), balanced (-Oz except hot sources), size (-Oz)")
  set_property(CACHE SIMPLECPP_WASM_OPT PROPERTY STRINGS speed balanced size)
  set(SIMPLECPP_WASM_HOT_OPT "-O3" CACHE STRING
      "WebAssembly, SIMPLECPP_WASM_OPT=balanced: the optimization level of the hot sources")
  if(NOT SIMPLECPP_WASM_OPT MATCHES "^(speed|balanced|size)$")
    message(FATAL_ERROR "SIMPLECPP_WASM_OPT must be speed, balanced or size, not '${SIMPLECPP_WASM_OPT}'")
  endif()
  # SIMD128 selects Highway's WASM target.
  target_compile_options(simplecpp_flags INTERFACE -msimd128 ${simplecpp_wasm_eh})
  # RTTI: off by default on WebAssembly, for every target (library, JS module, tests, CLI): the
  # tests run the objects that ship, and objects built with and without RTTI do not link together
  # (doctest's classes lose their type_info). The type_info objects and mangled names of every
  # polymorphic class and std::function lambda cost about 0.57 MB of the JS package (its data
  # section shrinks from 0.67 to 0.10 MB). Nothing in the project uses dynamic_cast or typeid
  # (Op::AsFusibleUnary/AsFusibleBinary replace the two casts), and exceptions keep working: a
  # throw still emits the thrown type's type_info. Native builds keep RTTI (no size pressure;
  # users of the C++ API may dynamic_cast their own types; UBSan's vptr check needs it).
  option(SIMPLECPP_WASM_RTTI "WebAssembly: keep C++ RTTI (type_info of every polymorphic class)" OFF)
  if(NOT SIMPLECPP_WASM_RTTI)
    target_compile_options(simplecpp_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fno-rtti>)
  endif()
  target_link_options(simplecpp_flags INTERFACE ${simplecpp_wasm_eh} -sALLOW_MEMORY_GROWTH=1
    -sMAXIMUM_MEMORY=2GB)
  if(NOT SIMPLECPP_WASM_OPT STREQUAL "speed")
    target_compile_options(simplecpp_flags INTERFACE -Oz)
  endif()
  if(SIMPLECPP_WASM_OPT STREQUAL "size")
    # Code that has a smaller form for the same results picks it (e.g.
    # kernels/elementwise/elementwise_scalar.h).
    target_compile_definitions(simplecpp_flags INTERFACE SIMPLECPP_OPTIMIZE_FOR_SIZE=1)
  endif()
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

# simplecpp_hot_sources(file...): sources (relative to the calling CMakeLists.txt) whose code runs
# on every inference of common models (the GEMM, convolution, float elementwise, normalization,
# pooling and quantization kernels, the executor and tensors). They keep -O3 when the rest of a
# WebAssembly build is compiled for size (SIMPLECPP_WASM_OPT=balanced); elsewhere this does nothing.
function(simplecpp_hot_sources)
  if(EMSCRIPTEN AND SIMPLECPP_WASM_OPT STREQUAL "balanced")
    # em++ turns -Oz into -fno-inline-functions too (its INLINING_LIMIT setting), which a later -O3
    # does not undo: without INLINING_LIMIT=0 the hot sources would keep -Oz's inlining.
    set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_OPTIONS
                 "${SIMPLECPP_WASM_HOT_OPT};-sINLINING_LIMIT=0")
  endif()
endfunction()
