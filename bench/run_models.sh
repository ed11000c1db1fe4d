#!/usr/bin/env bash
# Model latency and peak memory: simplecpp vs ONNX Runtime (onnxruntime-node 1.30, CPU EP) on the
# project's generated models (built-in cnn, transformer, mlp; the benchmark-sized cnn-base and
# transformer-base) in float32, float16 (converted with `simplecpp convert --to float16`) and int8
# (`simplecpp quantize`: dynamic for the transformers and mlp, static QDQ for the CNNs, calibrated
# on the benchmark input), at 1 thread and all cores, identical inputs for both runtimes.
#
#   bench/run_models.sh [BUILD_DIR] [OUT_DIR]     (defaults: build-gemm, bench/out)
# Env: REPEAT (timed runs per process, default 200), ROUNDS (processes per configuration,
# alternating the two runtimes; the reported median is the median over rounds, default 3),
# MODELS (default "cnn transformer mlp"), VARIANTS (default "f32 f16 int8"), THREADS (default
# "1 $(nproc)").
# Prints a markdown table and writes it to OUT_DIR/models.md. Installs onnxruntime-node into
# bench/node_modules on first use (the npm registry must be reachable then).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${1:-$root/build-gemm}"
out="${2:-$here/out}"
REPEAT="${REPEAT:-200}"
ROUNDS="${ROUNDS:-3}"
MODELS="${MODELS:-cnn transformer mlp}"
VARIANTS="${VARIANTS:-f32 f16 int8}"
THREADS="${THREADS:-1 $(nproc)}"
cli="$build/bin/simplecpp"
[ -x "$cli" ] || { echo "run_models: $cli not built (cmake --build $build --target simplecpp_cli)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "run_models: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }

ort_bin="$here/node_modules/onnxruntime-node/bin/napi-v6/linux/x64"
if [ ! -f "$ort_bin/onnxruntime_binding.node" ]; then
  # The install script would download GPU providers; the CPU binary ships inside the package.
  # @huggingface/gguf goes with it for tests/models/gguf_node_test.cc (a --no-save install drops
  # every package it does not name).
  (cd "$here" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --no-save \
     onnxruntime-node@1.30.0 @huggingface/gguf@0.4.6 >&2)
fi
[ -f "$ort_bin/onnxruntime_binding.node" ] && [ -f "$ort_bin/libonnxruntime.so.1" ] || {
  echo "run_models: onnxruntime-node native binary missing under $ort_bin" >&2; exit 1; }

mkdir -p "$out"
median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else printf "%.4f\n", (v[NR/2]+v[NR/2+1])/2}'; }
rss_mb() { awk '/Maximum resident set size/ {printf "%.1f", $NF/1024}' "$1"; }

node_base=$( { /usr/bin/time -v node -e '0' ; } 2>&1 | awk '/Maximum resident set size/ {printf "%.1f", $NF/1024}')
table="$out/models.md"
{
  echo "| model | variant | threads | simplecpp median ms | ORT-node median ms | ratio (ours/ORT) | ours int8 speedup vs ours f32 | simplecpp peak RSS MB | ORT-node peak RSS MB | max abs diff |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} > "$table"

declare -A ours_median  # "model variant threads" -> our median, for the int8 speedup column
for model in $MODELS; do
  dir="$out/models/$model"
  mkdir -p "$dir"
  "$cli" export-builtin "$model" "$dir/f32.onnx" > /dev/null
  mkdir -p "$dir/inputs_f32"
  mapfile -t f32_inputs < <(node "$here/ort_run.mjs" inputs "$dir/f32.onnx" "$dir/inputs_f32")
  for variant in $VARIANTS; do
    case "$variant" in
      f32) ;;
      f16) "$cli" convert --to float16 "$dir/f32.onnx" "$dir/f16.onnx" > "$dir/convert_f16.txt" ;;
      int8)
        if [ "${model%%-*}" = cnn ]; then
          calib=()
          for i in "${f32_inputs[@]}"; do calib+=(--input "$i"); done
          "$cli" quantize --mode qdq "${calib[@]}" "$dir/f32.onnx" "$dir/int8.onnx" > "$dir/quantize.txt"
        else
          "$cli" quantize --mode dynamic "$dir/f32.onnx" "$dir/int8.onnx" > "$dir/quantize.txt"
        fi ;;
      *) echo "run_models: unknown variant $variant" >&2; exit 1 ;;
    esac
    onnx="$dir/$variant.onnx"
    # float16 models take float16 inputs (the same generated values, rounded); the others float32.
    if [ "$variant" = f16 ]; then
      inputs_dir="$dir/inputs_f16"
      mkdir -p "$inputs_dir"
      mapfile -t inputs < <(node "$here/ort_run.mjs" inputs "$onnx" "$inputs_dir")
    else
      inputs_dir="$dir/inputs_f32"
      inputs=("${f32_inputs[@]}")
    fi
    in_args=()
    for i in "${inputs[@]}"; do in_args+=(--input "$i"); done
    for threads in $THREADS; do
      cell="$dir/$variant-t$threads"
      mkdir -p "$cell/ours"
      ours=(); theirs=(); ours_rss=(); theirs_rss=(); diff=""
      for round in $(seq "$ROUNDS"); do
        /usr/bin/time -v -o "$cell/time_ours.txt" "$cli" run "$onnx" "${in_args[@]}" \
          --output-dir "$cell/ours" --threads "$threads" --repeat "$REPEAT" > "$cell/ours.txt"
        ours+=("$(awk '/^median/ {print $2}' "$cell/ours.txt")")
        ours_rss+=("$(rss_mb "$cell/time_ours.txt")")
        /usr/bin/time -v -o "$cell/time_ort.txt" node "$here/ort_run.mjs" run "$onnx" \
          "$inputs_dir" --threads "$threads" --repeat "$REPEAT" --compare "$cell/ours" > "$cell/ort.txt"
        theirs+=("$(awk '/^median/ {print $2}' "$cell/ort.txt")")
        theirs_rss+=("$(rss_mb "$cell/time_ort.txt")")
        diff=$(awk '/^max_abs_diff/ {print $3}' "$cell/ort.txt" | sort -g | tail -1)
      done
      m_ours=$(printf '%s\n' "${ours[@]}" | median)
      m_ort=$(printf '%s\n' "${theirs[@]}" | median)
      ours_median["$model $variant $threads"]=$m_ours
      r_ours=$(printf '%s\n' "${ours_rss[@]}" | sort -g | tail -1)
      r_ort=$(printf '%s\n' "${theirs_rss[@]}" | sort -g | tail -1)
      ratio=$(awk -v a="$m_ours" -v b="$m_ort" 'BEGIN {printf "%.2f", a / b}')
      speedup="-"
      if [ "$variant" = int8 ] && [ -n "${ours_median["$model f32 $threads"]:-}" ]; then
        speedup=$(awk -v f="${ours_median["$model f32 $threads"]}" -v q="$m_ours" 'BEGIN {printf "%.2fx", f / q}')
      fi
      echo "| $model | $variant | $threads | $m_ours | $m_ort | $ratio | $speedup | $r_ours | $r_ort | $diff |" >> "$table"
    done
  done
done
echo "" >> "$table"
echo "Medians over $ROUNDS processes per cell, each the median of $REPEAT timed runs after one warm-up. int8: QDQ (static, uint8 activations, int8 per-channel weights) for cnn, dynamic (DynamicQuantizeLinear + MatMulInteger, int8 per-tensor weights) for transformer and mlp. max abs diff: ours vs ORT on the same model file. Peak RSS: the largest 'Maximum resident set size' of /usr/bin/time -v over those processes; the ORT-node figure includes Node.js itself (a bare \`node -e 0\` peaks at $node_base MB)." >> "$table"
cat "$table"
