#!/usr/bin/env bash
# Builds the library, unit tests and CLI for WebAssembly with Debian's emscripten and runs the
# tests under node through ctest (see ../shared/TOOLCHAIN.md, "WebAssembly").
# Usage: scripts/wasm-test.sh [build-dir]   (default: build-wasm; JOBS=N to change -j2)
# The ONNX conformance ctest runs when SIMPLECPP_ONNX_TESTS points at the ONNX test data.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build-wasm}"
JOBS="${JOBS:-2}"

if ! command -v emcmake >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends emscripten nodejs
fi

# emcc needs acorn and friends from Debian's node modules.
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
NODE="$(command -v node)"

emcmake cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CROSSCOMPILING_EMULATOR="$NODE"
cmake --build "$BUILD_DIR" -j"$JOBS" --target simplecpp_tests simplecpp_cli

cd "$BUILD_DIR"
if [ -n "${SIMPLECPP_ONNX_TESTS:-}" ]; then
  ctest --output-on-failure -R 'unit_tests|cli_run|onnx_conformance'
else
  ctest --output-on-failure -R 'unit_tests|cli_run'
fi
