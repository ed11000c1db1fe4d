#!/usr/bin/env bash
# WebAssembly latency: simplecpp's JS package (the simplecpp_wasm target: simplecpp.mjs +
# simplecpp.wasm + index.mjs in WASM_BUILD/js) vs onnxruntime-web 1.30 (wasm execution provider,
# ort.env.wasm.numThreads = 1, SIMD) under node, on the project's generated models: float32 cnn and
# transformer (`simplecpp export-builtin`) and their int8 versions (`simplecpp quantize`: static QDQ
# for cnn, dynamic for transformer). Both runtimes run in the same node process (bench/run_wasm.mjs)
# on the same model bytes and identical inputs, alternating per round.
#
#   bench/run_wasm.sh [WASM_BUILD] [NATIVE_BUILD] [OUT_DIR]
#       defaults: build-wasm, build (its native CLI makes the models), bench/out
# Env: REPEAT (timed runs per round, default 200), ROUNDS (rounds per model, default 5).
# Prints a markdown table and writes it to OUT_DIR/wasm.md. Installs onnxruntime-web into
# bench/node_modules on first use (the npm registry must be reachable then).
# The wasm package: NODE_PATH=/usr/share/nodejs emcmake cmake -S . -B build-wasm
#   -DCMAKE_BUILD_TYPE=Release -DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node
#   && cmake --build build-wasm -j2 --target simplecpp_wasm
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
wasm_build="${1:-$root/build-wasm}"
native_build="${2:-$root/build}"
out="${3:-$here/out}"
REPEAT="${REPEAT:-200}"
ROUNDS="${ROUNDS:-5}"
cli="$native_build/bin/simplecpp"
pkg="$wasm_build/js"
[ -x "$cli" ] || { echo "run_wasm: $cli not built (cmake --build $native_build --target simplecpp_cli)" >&2; exit 1; }
[ -f "$pkg/simplecpp.wasm" ] && [ -f "$pkg/index.mjs" ] || {
  echo "run_wasm: $pkg/simplecpp.wasm missing (cmake --build $wasm_build --target simplecpp_wasm)" >&2; exit 1; }

if [ ! -f "$here/node_modules/onnxruntime-web/package.json" ] ||
   ! grep -q '"version": "1.30' "$here/node_modules/onnxruntime-web/package.json"; then
  (cd "$here" && npm install --no-audit --no-fund --no-save onnxruntime-web@1.30.0 >&2)
fi

dir="$out/wasm_models"
mkdir -p "$dir"
"$cli" export-builtin cnn "$dir/cnn_f32.onnx" > /dev/null
"$cli" export-builtin transformer "$dir/transformer_f32.onnx" > /dev/null
"$cli" quantize --mode qdq "$dir/cnn_f32.onnx" "$dir/cnn_int8.onnx" > "$dir/quantize_cnn.txt"
"$cli" quantize --mode dynamic "$dir/transformer_f32.onnx" "$dir/transformer_int8.onnx" > "$dir/quantize_transformer.txt"

table="$out/wasm.md"
{
  echo "wasm: $(wc -c < "$pkg/simplecpp.wasm") bytes raw, $(gzip -9c "$pkg/simplecpp.wasm" | wc -c) gzip -9 ($pkg/simplecpp.wasm)"
  echo ""
  node "$here/run_wasm.mjs" --package "$pkg" --repeat "$REPEAT" --rounds "$ROUNDS" \
    "cnn f32=$dir/cnn_f32.onnx" "transformer f32=$dir/transformer_f32.onnx" \
    "cnn int8 (QDQ)=$dir/cnn_int8.onnx" "transformer int8 (dynamic)=$dir/transformer_int8.onnx"
  echo ""
  echo "Medians over $ROUNDS rounds (runtimes alternating in one node $(node --version) process), each the median of $REPEAT timed runs after one warm-up. max abs diff: ours vs ORT-web on the same model and inputs."
} > "$table"
cat "$table"
