#!/usr/bin/env bash
# Model latency and peak memory: simplecpp vs ONNX Runtime (onnxruntime-node 1.30, CPU EP) on
# every built-in model of the CLI, at 1 and 2 intra-op threads, identical inputs.
#
#   bench/run_models.sh [BUILD_DIR] [OUT_DIR]     (defaults: build-gemm, bench/out)
# Env: REPEAT (timed runs per process, default 200), ROUNDS (processes per configuration,
# alternating the two runtimes; the reported median is the median over rounds, default 3).
# Prints a markdown table and writes it to OUT_DIR/models.md. Installs onnxruntime-node into
# bench/node_modules on first use (the npm registry must be reachable then).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${1:-$root/build-gemm}"
out="${2:-$here/out}"
REPEAT="${REPEAT:-200}"
ROUNDS="${ROUNDS:-3}"
cli="$build/bin/simplecpp"
[ -x "$cli" ] || { echo "run_models: $cli not built (cmake --build $build --target simplecpp_cli)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "run_models: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }

ort_bin="$here/node_modules/onnxruntime-node/bin/napi-v6/linux/x64"
if [ ! -f "$ort_bin/onnxruntime_binding.node" ]; then
  # The install script would download GPU providers; the CPU binary ships inside the package.
  (cd "$here" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --no-save \
     onnxruntime-node@1.30.0 >&2)
fi
[ -f "$ort_bin/onnxruntime_binding.node" ] && [ -f "$ort_bin/libonnxruntime.so.1" ] || {
  echo "run_models: onnxruntime-node native binary missing under $ort_bin" >&2; exit 1; }

# Built-in model names, as the CLI lists them: "Writes the built-in model NAME (cnn, transformer)".
models=$("$cli" help | sed -n 's/.*built-in model NAME (\([^)]*\)).*/\1/p' | tr -d ' ' | tr ',' ' ')
[ -n "$models" ] || { echo "run_models: could not read the built-in model names from '$cli help'" >&2; exit 1; }

mkdir -p "$out"
median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else printf "%.4f\n", (v[NR/2]+v[NR/2+1])/2}'; }
rss_mb() { awk '/Maximum resident set size/ {printf "%.1f", $NF/1024}' "$1"; }

node_base=$( { /usr/bin/time -v node -e '0' ; } 2>&1 | awk '/Maximum resident set size/ {printf "%.1f", $NF/1024}')
table="$out/models.md"
{
  echo "| model | threads | simplecpp median ms | ORT-node median ms | ratio (ours/ORT) | simplecpp peak RSS MB | ORT-node peak RSS MB | max abs diff |"
  echo "|---|---|---|---|---|---|---|---|"
} > "$table"

for model in $models; do
  dir="$out/models/$model"
  mkdir -p "$dir/inputs" "$dir/ours"
  "$cli" export-builtin "$model" "$dir/$model.onnx" > /dev/null
  mapfile -t inputs < <(node "$here/ort_run.mjs" inputs "$dir/$model.onnx" "$dir/inputs")
  in_args=()
  for i in "${inputs[@]}"; do in_args+=(--input "$i"); done
  for threads in 1 2; do
    ours=(); theirs=(); ours_rss=(); theirs_rss=(); diff=""
    for round in $(seq "$ROUNDS"); do
      /usr/bin/time -v -o "$dir/time_ours.txt" "$cli" run "$dir/$model.onnx" "${in_args[@]}" \
        --output-dir "$dir/ours" --threads "$threads" --repeat "$REPEAT" > "$dir/ours.txt"
      ours+=("$(awk '/^median/ {print $2}' "$dir/ours.txt")")
      ours_rss+=("$(rss_mb "$dir/time_ours.txt")")
      /usr/bin/time -v -o "$dir/time_ort.txt" node "$here/ort_run.mjs" run "$dir/$model.onnx" \
        "$dir/inputs" --threads "$threads" --repeat "$REPEAT" --compare "$dir/ours" > "$dir/ort.txt"
      theirs+=("$(awk '/^median/ {print $2}' "$dir/ort.txt")")
      theirs_rss+=("$(rss_mb "$dir/time_ort.txt")")
      diff=$(awk '/^max_abs_diff/ {print $3}' "$dir/ort.txt" | sort -g | tail -1)
    done
    m_ours=$(printf '%s\n' "${ours[@]}" | median)
    m_ort=$(printf '%s\n' "${theirs[@]}" | median)
    r_ours=$(printf '%s\n' "${ours_rss[@]}" | sort -g | tail -1)
    r_ort=$(printf '%s\n' "${theirs_rss[@]}" | sort -g | tail -1)
    ratio=$(awk -v a="$m_ours" -v b="$m_ort" 'BEGIN {printf "%.2f", a / b}')
    echo "| $model | $threads | $m_ours | $m_ort | $ratio | $r_ours | $r_ort | $diff |" >> "$table"
  done
done
echo "" >> "$table"
echo "Medians over $ROUNDS processes per cell, each the median of $REPEAT timed runs after one warm-up. Peak RSS: the largest 'Maximum resident set size' of /usr/bin/time -v over those processes; the ORT-node figure includes Node.js itself (a bare \`node -e 0\` peaks at $node_base MB)." >> "$table"
cat "$table"
