#!/usr/bin/env bash
# Golden comparison native vs WebAssembly, on the same model files and the same inputs:
#   - the built-in float models (cnn, transformer, mlp, bert, crnn, vad; inputs from the CLI's
#     seeded generator);
#   - their int8 versions from `simplecpp quantize` (cnn static QDQ, the others dynamic);
#   - one-node models of the integer ops in every zero-point layout, with extreme values
#     (simplecpp/js/test/make_golden_models.mjs).
# Each model runs through the native CLI twice (the best SIMD target of this CPU, and the portable
# 128-bit target: SSE4 on x86-64 with GCC, else EMU128; PORTABLE_TARGET=... overrides) and through
# the wasm CLI under node. Checks:
#   1. wasm vs native portable target: every output identical, bit for bit (same operations in the
#      same order: the WASM target is a 128-bit target too);
#   2. wasm vs native best target: integer outputs identical, float outputs within the conformance
#      tolerance (rtol 1e-3, atol 1e-5); the largest differences are printed.
# Exit 1 if any check fails.
# Usage: scripts/wasm-golden.sh [native-build-dir] [wasm-build-dir]   (default: build build-wasm)
#   Builds the CLI in both folders if it is missing (JOBS=N, default 2). OUT_DIR=... keeps outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
NATIVE_DIR="${1:-build}"
WASM_DIR="${2:-build-wasm}"
JOBS="${JOBS:-2}"
bash scripts/install-deps.sh wasm
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
NATIVE="$ROOT/$NATIVE_DIR/bin/simplecpp"
[ -x "$NATIVE" ] || NATIVE="$NATIVE_DIR/bin/simplecpp"
WASM_CLI="$WASM_DIR/bin/simplecpp.js"
COMPARE="$ROOT/simplecpp/js/test/compare_outputs.mjs"

OUT="${OUT_DIR:-$(mktemp -d)}"
[ -n "${OUT_DIR:-}" ] || trap 'rm -rf "$OUT"' EXIT
mkdir -p "$OUT/models"

# The portable target: the first of these that this build has on this CPU.
PORTABLE="${PORTABLE_TARGET:-}"
if [ -z "$PORTABLE" ]; then
  "$NATIVE" export-builtin cnn "$OUT/models/probe.onnx" > /dev/null
  for t in SSE4 EMU128 NEON; do
    if "$NATIVE" run "$OUT/models/probe.onnx" --target "$t" --output-dir "$OUT/probe" > /dev/null 2>&1; then
      PORTABLE=$t
      break
    fi
  done
fi
[ -n "$PORTABLE" ] || { echo "wasm-golden: no 128-bit portable target in $NATIVE" >&2; exit 1; }
echo "wasm-golden: native $NATIVE (best target, and $PORTABLE), wasm $WASM_CLI under $NODE"

# name -> extra run arguments (the --input files), one per line: NAME<TAB>ARGS...
list="$OUT/models.txt"
: > "$list"
for m in cnn transformer mlp bert crnn vad; do
  "$NATIVE" export-builtin "$m" "$OUT/models/$m.onnx" > /dev/null
  printf '%s\n' "$m" >> "$list"
  if [ "$m" = cnn ]; then
    "$NATIVE" quantize --mode qdq "$OUT/models/$m.onnx" "$OUT/models/$m-int8.onnx" > /dev/null
    printf '%s\n' "$m-int8" >> "$list"
  elif [ "$m" != crnn ] && [ "$m" != vad ]; then
    "$NATIVE" quantize --mode dynamic "$OUT/models/$m.onnx" "$OUT/models/$m-int8.onnx" > /dev/null
    printf '%s\n' "$m-int8" >> "$list"
  fi
done
"$NODE" simplecpp/js/test/make_golden_models.mjs "$OUT/models" >> "$list"

status=0
models=0
exact_outputs=0
while IFS=$'\t' read -r -a fields; do
  name=${fields[0]}
  args=()
  for kv in "${fields[@]:1}"; do args+=(--input "$kv"); done
  model="$OUT/models/$name.onnx"
  "$NATIVE" run "$model" "${args[@]}" --output-dir "$OUT/native/$name" > "$OUT/native-$name.log"
  "$NATIVE" run "$model" "${args[@]}" --target "$PORTABLE" --output-dir "$OUT/portable/$name" \
    > "$OUT/portable-$name.log"
  "$NODE" "$WASM_CLI" run "$model" "${args[@]}" --output-dir "$OUT/wasm/$name" > "$OUT/wasm-$name.log"
  models=$((models + 1))
  echo "== $name: wasm vs native $PORTABLE (bit-identical)"
  if "$NODE" "$COMPARE" "$OUT/portable/$name" "$OUT/wasm/$name" --rtol 0 --atol 0 > "$OUT/cmp-p-$name.txt"; then
    exact_outputs=$((exact_outputs + $(grep -c '^output_' "$OUT/cmp-p-$name.txt")))
    echo "   identical: $(grep -c '^output_' "$OUT/cmp-p-$name.txt") outputs"
  else
    sed 's/^/   /' "$OUT/cmp-p-$name.txt"
    status=1
  fi
  echo "== $name: wasm vs native best target (integers identical, floats rtol 1e-3 atol 1e-5)"
  if ! "$NODE" "$COMPARE" "$OUT/native/$name" "$OUT/wasm/$name" --rtol 1e-3 --atol 1e-5 | sed 's/^/   /'; then
    status=1
  fi
done < "$list"
if [ "$status" = 0 ]; then
  echo "wasm-golden: $models models, $exact_outputs outputs bit-identical to native $PORTABLE, all within tolerance of the native best target"
else
  echo "wasm-golden: FAILED"
fi
exit "$status"
