#!/usr/bin/env bash
# Real models vs ONNX Runtime: runs each real model that npm packages ship (PP-OCRv4 detector and
# recognizer, PP-OCR direction classifier, Silero VAD v5; pins in bench/real_models_pins.sh) on
# the seeded realistic inputs of bench/real_inputs.mjs through `simplecpp run` and through
# onnxruntime-node (bench/ort_run.mjs), and checks every float32 output within ATOL (default 1e-4)
# absolute of ORT's. Prints the largest difference per model.
# float16: each CNN converted by `simplecpp convert --to float16` runs in both runtimes on the
# same inputs rounded to half; against ORT's outputs of the float32 model, ours must be within
# twice ORT's own float16 error plus a float16-sized slack, both in the largest absolute
# difference (+ F16_ATOL, default 1e-3) and in the mean (+ F16_MEAN, default 1e-5): float16 runs
# round differently in every op, so the bar is ORT's float16 accuracy, not ORT's bits.
#
#   tests/models/real_models_check.sh [BUILD_DIR]      (default: build)
# Env: MODELS (default "det rec cls silero"), VARIANTS (default "f32 f16"; Silero is f32 only),
# ATOL, F16_ATOL, F16_MEAN, THREADS (default 1, both runtimes), ORT_OPT (ORT graph optimization
# level, default all), SIMPLECPP_MODEL_CACHE.
#
# Opt-in and offline: it never downloads. It prints "skipped" and exits 0 unless the models are
# in the cache (bench/real_models.sh fetches them), node is on PATH and onnxruntime-node is
# installed under bench/node_modules. Exit 1 when an output differs by more than ATOL, a model
# fails to run, or a cached model does not match its sha256 pin. Not part of scripts/test.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-$root/build}"
MODELS="${MODELS:-det rec cls silero}"
VARIANTS="${VARIANTS:-f32 f16}"
ATOL="${ATOL:-1e-4}"
F16_ATOL="${F16_ATOL:-1e-3}"
F16_MEAN="${F16_MEAN:-1e-5}"
THREADS="${THREADS:-1}"
ORT_OPT="${ORT_OPT:-all}"
cli="$build/bin/simplecpp"
[ -x "$cli" ] || { echo "real_models_check: $cli not built" >&2; exit 1; }
command -v node > /dev/null || { echo "real_models_check: skipped (node not found)"; exit 0; }
[ -f "$root/bench/node_modules/onnxruntime-node/package.json" ] || {
  echo "real_models_check: skipped (onnxruntime-node not installed under bench/node_modules; bench/real_models.sh installs it)"
  exit 0; }

# shellcheck source=bench/real_models_pins.sh
source "$root/bench/real_models_pins.sh"
for id in $MODELS; do
  rc=0; real_model_verify "$id" || rc=$?
  if [ "$rc" = 1 ]; then
    echo "real_models_check: skipped (model '$id' not in $REAL_MODELS_CACHE; bench/real_models.sh fetches it)"
    exit 0
  fi
  [ "$rc" = 0 ] || exit 1
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=0
for id in $MODELS; do
  model="$(real_model_path "$id")"
  node "$root/bench/real_inputs.mjs" "$id" "$work/$id/inputs" > /dev/null
  args=()
  for name in ${REAL_MODEL_INPUTS[$id]}; do args+=(--input "$name=$work/$id/inputs/$name.npy"); done
  if ! "$cli" run "$model" "${args[@]}" --threads "$THREADS" --output-dir "$work/$id/ours" \
       > "$work/$id/ours.txt" 2> "$work/$id/ours.err"; then
    echo "FAIL $id: simplecpp run failed: $(head -n 1 "$work/$id/ours.err")"
    failed=1; continue
  fi
  if ! node "$root/bench/ort_run.mjs" run "$model" - "${args[@]}" --threads "$THREADS" --repeat 0 \
       --opt "$ORT_OPT" --compare "$work/$id/ours" --save "$work/$id/ref" \
       > "$work/$id/ort.txt" 2> "$work/$id/ort.err"; then
    echo "FAIL $id: onnxruntime-node failed: $(head -n 1 "$work/$id/ort.err")"
    failed=1; continue
  fi
  # max_abs_diff NAME VALUE TYPE, one line per output
  verdict=$(awk -v atol="$ATOL" '
    /^max_abs_diff/ {
      n++
      if ($4 != "float32") { skipped = skipped " " $2 "(" $4 ")"; next }
      if ($3 == "SIZE-MISMATCH" || $3 ~ /nan|NaN/) { bad = bad " " $2 ":" $3; next }
      v = $3 + 0
      if (v > max) { max = v; at = $2 }
      if (v > atol + 0) bad = bad " " $2 ":" $3
    }
    END {
      if (n == 0) { print "FAIL no outputs compared"; exit }
      printf "%s max abs diff %.2e (%s)", (bad == "" ? "PASS" : "FAIL"), max, at
      if (bad != "") printf "; over %s:%s", atol, bad
      if (skipped != "") printf "; not float32, not checked:%s", skipped
      printf "\n"
    }' "$work/$id/ort.txt")
  echo "${verdict%% *} $id: ${verdict#* }"
  [ "${verdict%% *}" = PASS ] || failed=1
  case " $VARIANTS " in *" f16 "*) ;; *) continue ;; esac
  [ "$id" = silero ] && continue
  f16="$work/$id/f16.onnx"
  if ! "$cli" convert --to float16 "$model" "$f16" > "$work/$id/f16.txt" \
       2> "$work/$id/f16.err"; then
    echo "FAIL $id f16: convert failed: $(head -n 1 "$work/$id/f16.err")"
    failed=1; continue
  fi
  args16=()
  for name in ${REAL_MODEL_INPUTS[$id]}; do
    file="$work/$id/inputs/$name.npy"
    [ -f "$work/$id/inputs/$name.f16.npy" ] && file="$work/$id/inputs/$name.f16.npy"
    args16+=(--input "$name=$file")
  done
  if ! "$cli" run "$f16" "${args16[@]}" --threads "$THREADS" --output-dir "$work/$id/ours16" \
       > "$work/$id/ours16.txt" 2> "$work/$id/ours16.err"; then
    echo "FAIL $id f16: simplecpp run failed: $(head -n 1 "$work/$id/ours16.err")"
    failed=1; continue
  fi
  if ! node "$root/bench/ort_run.mjs" run "$f16" - "${args16[@]}" --threads "$THREADS" --repeat 0 \
       --opt "$ORT_OPT" --compare "$work/$id/ours16" --reference "$work/$id/ref" \
       > "$work/$id/ort16.txt" 2> "$work/$id/ort16.err"; then
    echo "FAIL $id f16: onnxruntime-node failed: $(head -n 1 "$work/$id/ort16.err")"
    failed=1; continue
  fi
  # ref_abs_diff ort|ours NAME MAX MEAN, one line per output and runtime
  verdict=$(awk -v atol="$F16_ATOL" -v mtol="$F16_MEAN" '
    /^ref_abs_diff ort/ { omax[$3] = $4; omean[$3] = $5 }
    /^ref_abs_diff ours/ { smax[$3] = $4; smean[$3] = $5 }
    END {
      n = 0
      for (k in smax) {
        n++
        if (!(k in omax)) { bad = bad " " k ":no-ort"; continue }
        lim = 2 * omax[k] + atol; mlim = 2 * omean[k] + mtol
        if (smax[k] ~ /nan|NaN/ || smax[k] + 0 > lim || smean[k] + 0 > mlim) bad = bad " " k
        line = line sprintf(" %s max %.2e (ORT %.2e) mean %.2e (ORT %.2e);", k, smax[k],
                            omax[k], smean[k], omean[k])
      }
      if (n == 0) { print "FAIL no outputs compared"; exit }
      printf "%s vs ORT float32 outputs:%s", (bad == "" ? "PASS" : "FAIL"), line
      if (bad != "") printf " over the float16 bar:%s", bad
      printf "\n"
    }' "$work/$id/ort16.txt")
  echo "${verdict%% *} $id f16: ${verdict#* }"
  [ "${verdict%% *}" = PASS ] || failed=1
done
if [ "$failed" = 0 ]; then
  echo "real_models_check: all passed (atol $ATOL; float16: 2x ORT's error + $F16_ATOL / $F16_MEAN)"
else
  echo "real_models_check: FAILED"
fi
exit "$failed"
