#!/usr/bin/env bash
# README command 2: install dependencies, then
#   1. Release build in build/: every ctest (unit tests, the C API test, the ONNX conformance run
#      against tests/conformance/expected_pass.txt), then the install and consumer projects
#      (scripts/consumer-test.sh, counted as one test);
#   2. AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/ with clang and the
#      libFuzzer targets (-DSIMPLECPP_FUZZ=ON instruments every layer): the same ctests, then each
#      fuzz target for SIMPLECPP_FUZZ_SECONDS (default 30) from its seed corpus (scripts/fuzz.sh,
#      counted as one test). Without clang's runtimes it falls back to a g++ -DSIMPLECPP_SANITIZE=ON
#      build without fuzzing. Set SIMPLECPP_ASAN_CONFORMANCE=0 to leave the conformance run out;
#   3. ThreadSanitizer build of the concurrency test (scripts/tsan-test.sh, counted as one test);
#   4. WebAssembly build in build-wasm/ with emscripten, tested under node (scripts/wasm-test.sh and
#      scripts/wasm-golden.sh, one test each) and in headless chromium (scripts/browser-test.sh, one
#      test), and the size-optimized package in build-wasm-size/ (one test); SIMPLECPP_WASM=0 leaves
#      this stage out.
# The conformance data is $SIMPLECPP_ONNX_TESTS (default: ../shared/onnx-tests when present);
# without it that test reports "skipping" and passes. Prints "N passed, N failed" (ctest tests of
# both builds) last and exits non-zero on any build or test failure (a failed Release build stops
# before the sanitizer build). SIMPLECPP_JOBS overrides the parallelism (default 2).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
jobs=${SIMPLECPP_JOBS:-2}

# Everything the stages below need, each tool only when missing (scripts/install-deps.sh).
deps_stages=(core)
if [ "${SIMPLECPP_WASM:-1}" != 0 ]; then deps_stages+=(wasm); fi
bash scripts/install-deps.sh "${deps_stages[@]}" || exit 1

if [ -z "${SIMPLECPP_ONNX_TESTS:-}" ] && [ -d "$root/../shared/onnx-tests" ]; then
  SIMPLECPP_ONNX_TESTS=$(cd "$root/../shared/onnx-tests" && pwd)
fi
if [ -n "${SIMPLECPP_ONNX_TESTS:-}" ]; then
  export SIMPLECPP_ONNX_TESTS
  echo "test.sh: conformance data: $SIMPLECPP_ONNX_TESTS"
else
  echo "test.sh: no conformance data (set SIMPLECPP_ONNX_TESTS); the conformance test will skip"
fi

total_passed=0
total_failed=0
start=$SECONDS

# run_ctest DIR [ctest args...]: runs ctest and adds its counts to the totals.
run_ctest() {
  local dir=$1
  shift
  local log
  log=$(mktemp)
  (cd "$dir" && ctest --output-on-failure -j"$jobs" "$@") 2>&1 | tee "$log"
  local line failed total
  line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
  rm -f "$log"
  if [ -z "$line" ]; then
    echo "test.sh: ctest in $dir produced no summary" >&2
    total_failed=$((total_failed + 1))
    return
  fi
  failed=$(echo "$line" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/')
  total=$(echo "$line" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/')
  total_passed=$((total_passed + total - failed))
  total_failed=$((total_failed + failed))
}

# build DIR [cmake args...]: configure and build; a failed build counts as one failure.
build() {
  local dir=$1
  shift
  echo "test.sh: building $dir ($*)"
  if ! cmake -S . -B "$dir" "$@" || ! cmake --build "$dir" -j"$jobs"; then
    echo "test.sh: build of $dir FAILED" >&2
    return 1
  fi
}

if build build -DCMAKE_BUILD_TYPE=Release; then
  run_ctest build
else
  total_failed=$((total_failed + 1))
  echo "test.sh: skipping the sanitizer build"
  echo "$total_passed passed, $total_failed failed"
  exit 1
fi
echo "test.sh: Release build and tests took $((SECONDS - start)) s"

# The Release build as a dependency of other projects (scripts/consumer-test.sh: install, then
# find_package, add_subdirectory, FetchContent and pkg-config consumers), counted as one test.
# The consumers run on this machine, so a cross-compiled build (a toolchain file) skips it.
# SIMPLECPP_CONSUMERS="find_package pkg-config" leaves out the two that compile the library again.
if grep -qE '^CMAKE_TOOLCHAIN_FILE:[A-Z]+=.+' build/CMakeCache.txt; then
  echo "test.sh: cross-compiled Release build: skipping the consumer test"
else
  consumer_start=$SECONDS
  if JOBS=$jobs CONSUMERS=${SIMPLECPP_CONSUMERS:-} bash scripts/consumer-test.sh build; then
    total_passed=$((total_passed + 1))
  else
    total_failed=$((total_failed + 1))
  fi
  echo "test.sh: consumer test took $((SECONDS - consumer_start)) s (total $((SECONDS - start)) s)"
fi

asan_start=$SECONDS
asan_args=()
if [ "${SIMPLECPP_ASAN_CONFORMANCE:-1}" = "0" ]; then
  asan_args=(-E onnx_conformance)
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# clang with libFuzzer's runtime (libclang-rt-14-dev) builds the sanitizer stage and the fuzz
# targets in one go; the flags come from cmake/Fuzz.cmake.
have_clang_fuzzer=0
if command -v clang++ >/dev/null 2>&1 &&
   echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
   clang++ -x c++ -fsanitize=fuzzer,address,undefined -o /dev/null - >/dev/null 2>&1; then
  have_clang_fuzzer=1
fi
# -O1 with line tables only (libFuzzer's recommended flags): sanitizer reports still give file
# and line, and the build, the longest of the stage, compiles much faster than with full -g.
sanitizer_flags="-O1 -gline-tables-only -DNDEBUG"
if [ "$have_clang_fuzzer" = 1 ]; then
  if CC=clang CXX=clang++ build build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIMPLECPP_FUZZ=ON \
       -DSIMPLECPP_FEW_HWY_TARGETS=ON -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$sanitizer_flags" \
       -DCMAKE_C_FLAGS_RELWITHDEBINFO="$sanitizer_flags"; then
    run_ctest build-asan "${asan_args[@]}"
    # Highway 1.0.3's AVX3_DL target string enables the VEX AVX-VNNI encoding, which clang uses
    # for 128/256-bit vpdpwssd / vpdpbusd; CPUs with AVX512-VNNI but without AVX-VNNI (Zen 4,
    # Ice Lake) fault on it, and a test only catches it on such a CPU. None may be in the kernels.
    if command -v objdump >/dev/null 2>&1; then
      kernels_lib=build-asan/lib/libsimplecpp_kernels.a
      if objdump -d --no-show-raw-insn "$kernels_lib" | grep -q '{vex} vpdp'; then
        echo "test.sh: clang emitted VEX-encoded VNNI instructions in $kernels_lib:"
        objdump -d --no-show-raw-insn "$kernels_lib" |
          awk '/^[0-9a-f]+ <.*>:$/ {fn = $2} /\{vex\} vpdp/ {print "  " fn}' | sort -u
        total_failed=$((total_failed + 1))
      else
        total_passed=$((total_passed + 1))
      fi
    fi
    fuzz_start=$SECONDS
    # A fixed seed keeps a CI failure reproducible with the same command.
    # fuzz.sh's own sanitizer options (allocator_may_return_null: a huge allocation must reach
    # the library as std::bad_alloc, not stop the fuzzer), not the ctest ones exported above.
    if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 FUZZ_CONFIGURE=0 FUZZ_BUILD_DIR=build-asan \
         FUZZ_ARGS="-seed=1 ${FUZZ_ARGS:-}" \
         bash scripts/fuzz.sh "${SIMPLECPP_FUZZ_SECONDS:-30}"; then
      total_passed=$((total_passed + 1))
    else
      total_failed=$((total_failed + 1))
    fi
    echo "test.sh: fuzzing took $((SECONDS - fuzz_start)) s"
  else
    total_failed=$((total_failed + 1))
  fi
else
  echo "test.sh: clang's libFuzzer runtime is missing: g++ sanitizer build, no fuzzing"
  if build build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIMPLECPP_SANITIZE=ON -DSIMPLECPP_FEW_HWY_TARGETS=ON \
       -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"; then
    run_ctest build-asan "${asan_args[@]}"
  else
    total_failed=$((total_failed + 1))
  fi
fi
echo "test.sh: sanitizer build and tests took $((SECONDS - asan_start)) s (total $((SECONDS - start)) s)"

# 3. ThreadSanitizer: one Model shared by 8 threads with their own Sessions (scripts/tsan-test.sh
#    builds only the libraries and simplecpp_concurrency_test in build-tsan/).
tsan_start=$SECONDS
if SIMPLECPP_JOBS=$jobs bash scripts/tsan-test.sh; then
  total_passed=$((total_passed + 1))
else
  total_failed=$((total_failed + 1))
fi
echo "test.sh: ThreadSanitizer stage took $((SECONDS - tsan_start)) s (total $((SECONDS - start)) s)"

# 4. WebAssembly (emscripten 3.1.6, run under node): scripts/wasm-test.sh builds build-wasm/ and
#    runs its ctests (the whole unit-test suite, the CLI, the conformance run against the same
#    expected-pass list, the JS API test) and checks the npm package; then scripts/wasm-golden.sh
#    compares the wasm CLI with the Release build's on the same models and inputs (bit-identical
#    to the native 128-bit target), and scripts/browser-test.sh runs the package's example page in
#    headless chromium against node's results. Each script counts as one test. SIMPLECPP_WASM=0
#    skips them.
if [ "${SIMPLECPP_WASM:-1}" != 0 ]; then
  wasm_start=$SECONDS
  if NATIVE_CLI="$root/build/bin/simplecpp" JOBS=$jobs bash scripts/wasm-test.sh build-wasm; then
    total_passed=$((total_passed + 1))
  else
    total_failed=$((total_failed + 1))
  fi
  if JOBS=$jobs bash scripts/wasm-golden.sh build build-wasm; then
    total_passed=$((total_passed + 1))
  else
    total_failed=$((total_failed + 1))
  fi
  browser_start=$SECONDS
  if NATIVE_CLI="$root/build/bin/simplecpp" bash scripts/browser-test.sh build-wasm; then
    total_passed=$((total_passed + 1))
  else
    total_failed=$((total_failed + 1))
  fi
  echo "test.sh: browser test took $((SECONDS - browser_start)) s (total $((SECONDS - start)) s)"
  # The size-optimized package (SIMPLECPP_WASM_OPT=size, build-wasm-size/): its own objects and
  # code paths (strided generic loops, emmalloc), checked by the CLI, conformance and JS API
  # ctests, the npm package and the golden comparison (the unit-test binary is left out for time).
  if NATIVE_CLI="$root/build/bin/simplecpp" JOBS=$jobs WASM_CMAKE_ARGS="-DSIMPLECPP_WASM_OPT=size" \
       WASM_TARGETS="simplecpp_cli simplecpp_wasm" WASM_CTESTS="cli_run|js_api" \
       bash scripts/wasm-test.sh build-wasm-size &&
     JOBS=$jobs bash scripts/wasm-golden.sh build build-wasm-size; then
    total_passed=$((total_passed + 1))
  else
    total_failed=$((total_failed + 1))
  fi
  echo "test.sh: WebAssembly stage took $((SECONDS - wasm_start)) s (total $((SECONDS - start)) s)"
fi

echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
