#!/usr/bin/env bash
# Builds the library, unit tests, CLI and the JavaScript API module (simplecpp/js) for WebAssembly
# with Debian's emscripten and runs the tests under node through ctest (see ../shared/TOOLCHAIN.md,
# "WebAssembly"), then packs the npm package (simplecpp/js) in a temp folder, installs the tarball
# there and runs the JS API test against the installed package.
# Usage: scripts/wasm-test.sh [build-dir]   (default: build-wasm; JOBS=N to change -j2;
#   WASM_CMAKE_ARGS="..." adds configure options)
# The ONNX conformance ctest runs when SIMPLECPP_ONNX_TESTS points at the ONNX test data.
# The JS API test compares against the native CLI when NATIVE_CLI names one (default:
# build/bin/simplecpp if it exists), else against the wasm CLI under node.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
BUILD_DIR="${1:-build-wasm}"
case "$BUILD_DIR" in /*) BUILD_ABS="$BUILD_DIR" ;; *) BUILD_ABS="$ROOT/$BUILD_DIR" ;; esac
JOBS="${JOBS:-2}"

# emscripten, node and npm, each only when missing (scripts/install-deps.sh decides per tool).
bash scripts/install-deps.sh wasm

# emcc needs acorn and friends from Debian's node modules.
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
NODE="$(command -v node)"
NATIVE_CLI="${NATIVE_CLI:-}"
if [ -z "$NATIVE_CLI" ] && [ -x build/bin/simplecpp ]; then NATIVE_CLI="$ROOT/build/bin/simplecpp"; fi

# WASM_CMAKE_ARGS: extra configure options, e.g. "-DSIMPLECPP_WASM_EXCEPTIONS=js" or
# "-DSIMPLECPP_WASM_OPT=speed" (cmake/Compiler.cmake, emscripten part).
# shellcheck disable=SC2086
emcmake cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CROSSCOMPILING_EMULATOR="$NODE" -DSIMPLECPP_NATIVE_CLI="$NATIVE_CLI" ${WASM_CMAKE_ARGS:-}
# WASM_TARGETS / WASM_CTESTS: what to build and which ctests to run (default: everything; the
# size-build check of scripts/test.sh leaves the unit-test binary out).
WASM_TARGETS="${WASM_TARGETS:-simplecpp_quant_tests simplecpp_kernels_tests simplecpp_tests simplecpp_cli simplecpp_wasm}"
WASM_CTESTS="${WASM_CTESTS:-unit_tests|cli_run|js_api}"
# shellcheck disable=SC2086
cmake --build "$BUILD_DIR" -j"$JOBS" --target $WASM_TARGETS
WASM_FILE="$BUILD_DIR/js/simplecpp.wasm"
echo "JS package module: $WASM_FILE $(wc -c < "$WASM_FILE") bytes, $(gzip -9c "$WASM_FILE" | wc -c) gzip -9"

(
  cd "$BUILD_DIR"
  if [ -n "${SIMPLECPP_ONNX_TESTS:-}" ]; then
    ctest --output-on-failure -R "$WASM_CTESTS|onnx_conformance"
  else
    ctest --output-on-failure -R "$WASM_CTESTS"
  fi
)

# The npm package: pack it in a temp folder (nothing built lands in the source tree), install the
# tarball and test the installed copy.
if command -v npm >/dev/null 2>&1; then
  PKG_TMP="$(mktemp -d)"
  trap 'rm -rf "$PKG_TMP"' EXIT
  mkdir -p "$PKG_TMP/src" "$PKG_TMP/app"
  cp simplecpp/js/package.json simplecpp/js/index.mjs simplecpp/js/README.md simplecpp/js/copy-build.sh \
     "$PKG_TMP/src/"
  sh "$PKG_TMP/src/copy-build.sh" "$BUILD_ABS"
  (cd "$PKG_TMP/src" && npm pack --silent --pack-destination "$PKG_TMP")
  TARBALL="$(ls "$PKG_TMP"/simplecpp-wasm-*.tgz)"
  echo "npm pack: $(basename "$TARBALL"), $(wc -c < "$TARBALL") bytes"
  tar -tzf "$TARBALL"
  (cd "$PKG_TMP/app" && npm init -y >/dev/null && npm install --silent --offline --no-audit --no-fund "$TARBALL")
  # The golden CLI: the package has no built-in models by default, the test takes them from it.
  GOLDEN_CLI="${NATIVE_CLI:-$BUILD_ABS/bin/simplecpp.js}"
  "$NODE" simplecpp/js/test/js_api_test.mjs --package "$PKG_TMP/app/node_modules/simplecpp-wasm" \
    --cli "$GOLDEN_CLI" --work-dir "$PKG_TMP/work"
else
  echo "npm not found: skipping the npm package check"
fi
