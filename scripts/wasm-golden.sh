#!/usr/bin/env bash
# Golden comparison native vs WebAssembly: runs every built-in model (cnn, transformer) through the
# native CLI and through the wasm CLI under node (same generated inputs: the CLI's seeded
# generator), then compares output_K.pb: integer outputs must be identical, float outputs within the
# conformance tolerance (rtol 1e-3, atol 1e-5). Prints the max abs/rel differences; exit 1 if any
# output is outside the tolerance.
# Usage: scripts/wasm-golden.sh [native-build-dir] [wasm-build-dir]   (default: build build-wasm)
#   Builds the CLI in both folders if it is missing (JOBS=N, default 2). OUT_DIR=... keeps outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
NATIVE_DIR="${1:-build}"
WASM_DIR="${2:-build-wasm}"
JOBS="${JOBS:-2}"
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
NODE="$(command -v node)"

if [ ! -x "$NATIVE_DIR/bin/simplecpp" ]; then
  cmake -S . -B "$NATIVE_DIR" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$NATIVE_DIR" -j"$JOBS" --target simplecpp_cli
fi
if [ ! -f "$WASM_DIR/bin/simplecpp.js" ]; then
  emcmake cmake -S . -B "$WASM_DIR" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CROSSCOMPILING_EMULATOR="$NODE"
  cmake --build "$WASM_DIR" -j"$JOBS" --target simplecpp_cli
fi

OUT="${OUT_DIR:-$(mktemp -d)}"
[ -n "${OUT_DIR:-}" ] || trap 'rm -rf "$OUT"' EXIT
status=0
for model in cnn transformer; do
  "$NATIVE_DIR/bin/simplecpp" run --builtin "$model" --output-dir "$OUT/native/$model" > "$OUT/native-$model.log"
  "$NODE" "$WASM_DIR/bin/simplecpp.js" run --builtin "$model" --output-dir "$OUT/wasm/$model" > "$OUT/wasm-$model.log"
  echo "== $model: native ($NATIVE_DIR) vs wasm ($WASM_DIR)"
  if ! "$NODE" simplecpp/js/test/compare_outputs.mjs "$OUT/native/$model" "$OUT/wasm/$model" \
       --rtol 1e-3 --atol 1e-5; then
    status=1
  fi
done
if [ "$status" = 0 ]; then echo "wasm-golden: all outputs within tolerance"; else echo "wasm-golden: FAILED"; fi
exit "$status"
