#!/bin/sh
# Copies the built JS API module (simplecpp.mjs + simplecpp.wasm, CMake target simplecpp_wasm)
# from a WebAssembly build folder into this package folder, ready for `npm pack`.
# Usage: simplecpp/js/copy-build.sh [build-dir]   (default: build-wasm at the repository root)
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build-wasm}"
for f in simplecpp.mjs simplecpp.wasm; do
  if [ ! -f "$build/js/$f" ]; then
    echo "missing $build/js/$f: build it with cmake --build $build --target simplecpp_wasm" >&2
    exit 1
  fi
  cp "$build/js/$f" "$here/$f"
done
echo "copied simplecpp.mjs and simplecpp.wasm from $build/js to $here"
