#!/usr/bin/env bash
# Weight-only block quantization (`simplecpp quantize --mode weights`) on the built-in models and
# any ONNX files given: the quantizer's accuracy report (SQNR, output error on its seeded input),
# file sizes, and latency of the float32 model against its int4 / int8 versions, simplecpp vs
# onnxruntime-node 1.30 on the same files and the same inputs (bench/ort_run.mjs).
#
#   bench/quantize_weights.sh [BUILD_DIR] [OUT_DIR] [MODEL.onnx[:KIND]]...   (defaults: build, bench/out)
# A model file may name a bench/real_inputs.mjs KIND (det, rec, cls, silero) for realistic
# inputs; otherwise bench/ort_run.mjs generates them (uniform floats, unknown dims 1).
# Env: MODELS (built-in names, default "mlp transformer-base"), REPEAT (timed runs, default 20),
# THREADS (default 1), BLOCK (default 32), VARIANTS (default "f32 int4 int8 int4-msft").
# Prints a markdown table and writes it to OUT_DIR/quantize_weights.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${1:-$root/build}"
out="${2:-$here/out}"
shift $(( $# > 2 ? 2 : $# ))
MODELS="${MODELS:-mlp transformer-base}"
REPEAT="${REPEAT:-20}"
THREADS="${THREADS:-1}"
BLOCK="${BLOCK:-32}"
VARIANTS="${VARIANTS:-f32 int4 int8 int4-msft}"
cli="$build/bin/simplecpp"
[ -x "$cli" ] || { echo "quantize_weights: $cli not built" >&2; exit 1; }
mkdir -p "$out/wquant"
table="$out/quantize_weights.md"
{
  echo "| model | variant | file MB | SQNR min/median/mean dB | out max abs err | out mean abs err | threads | simplecpp ms | ORT ms | ours/ORT |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} > "$table"

sources=()
for m in $MODELS; do sources+=("builtin:$m"); done
for f in "$@"; do sources+=("$f"); done
for src in "${sources[@]}"; do
  if [[ "$src" == builtin:* ]]; then
    name="${src#builtin:}"
    dir="$out/wquant/$name"
    mkdir -p "$dir"
    "$cli" export-builtin "$name" "$dir/f32.onnx" > /dev/null
  else
    file="${src%%:*}"
    kind=""
    [ "$file" != "$src" ] && kind="${src#*:}"
    name="$(basename "$file" .onnx)"
    dir="$out/wquant/$name"
    mkdir -p "$dir"
    cp "$file" "$dir/f32.onnx"
  fi
  mkdir -p "$dir/inputs"
  in_args=()
  ort_inputs=("$dir/inputs")
  if [ -n "${kind:-}" ]; then
    mapfile -t names < <(node "$here/real_inputs.mjs" "$kind" "$dir/inputs")
    ort_inputs=(-)
    for n in "${names[@]}"; do
      in_args+=(--input "$n=$dir/inputs/$n.npy")
      ort_inputs+=(--input "$n=$dir/inputs/$n.npy")
    done
  else
    mapfile -t inputs < <(node "$here/ort_run.mjs" inputs "$dir/f32.onnx" "$dir/inputs")
    for i in "${inputs[@]}"; do in_args+=(--input "$i"); done
  fi
  kind=""
  for variant in $VARIANTS; do
    sqnr="-"; maxerr="-"; meanerr="-"
    case "$variant" in
      f32) ;;
      int4) "$cli" quantize --mode weights --bits 4 --block "$BLOCK" "${in_args[@]}" "$dir/f32.onnx" "$dir/$variant.onnx" > "$dir/$variant.txt" ;;
      int8) "$cli" quantize --mode weights --bits 8 --block "$BLOCK" "${in_args[@]}" "$dir/f32.onnx" "$dir/$variant.onnx" > "$dir/$variant.txt" ;;
      int4-msft) "$cli" quantize --mode weights --bits 4 --block "$BLOCK" --format msft "${in_args[@]}" "$dir/f32.onnx" "$dir/$variant.onnx" > "$dir/$variant.txt" ;;
      *) echo "quantize_weights: unknown variant $variant" >&2; exit 1 ;;
    esac
    if [ "$variant" != f32 ]; then
      sqnr=$(awk '/SQNR min/ {print $8 "/" $11 "/" $14}' "$dir/$variant.txt")
      maxerr=$(awk '/^output vs float model/ {for (i = 1; i <= NF; ++i) if ($i == "max" && $(i+1) == "abs") {v = $(i+3); sub(/,$/, "", v); print v}}' "$dir/$variant.txt")
      meanerr=$(awk '/^output vs float model/ {for (i = 1; i <= NF; ++i) if ($i == "mean" && $(i+1) == "abs") print $(i+3)}' "$dir/$variant.txt")
    fi
    mb=$(awk -v b="$(stat -c %s "$dir/$variant.onnx")" 'BEGIN {printf "%.2f", b / 1048576}')
    for threads in $THREADS; do
      "$cli" run "$dir/$variant.onnx" "${in_args[@]}" --output-dir "$dir/out-$variant" --threads "$threads" \
        --repeat "$REPEAT" > "$dir/$variant-t$threads-ours.txt"
      ours=$(awk '/^median/ {print $2}' "$dir/$variant-t$threads-ours.txt")
      node "$here/ort_run.mjs" run "$dir/$variant.onnx" "${ort_inputs[@]}" --threads "$threads" --repeat "$REPEAT" > "$dir/$variant-t$threads-ort.txt"
      ort=$(awk '/^median/ {print $2}' "$dir/$variant-t$threads-ort.txt")
      ratio=$(awk -v a="$ours" -v b="$ort" 'BEGIN {printf "%.2f", a / b}')
      echo "| $name | $variant | $mb | $sqnr | $maxerr | $meanerr | $threads | $ours | $ort | $ratio |" >> "$table"
    done
  done
done
cat "$table"
