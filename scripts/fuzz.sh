#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan + coverage, RelWithDebInfo) and runs each one
# for SECONDS (default 60) on a temporary copy of its seed corpus (tests/fuzz/corpus/<target>), one
# process at a time. Fails on any crash, leak, timeout, out-of-memory or sanitizer report; prints
# libFuzzer's executions and executions per second per target, and the total.
#   scripts/fuzz.sh [seconds-per-target] [target...]
# Environment:
#   JOBS               build parallelism (default 2)
#   FUZZ_BUILD_DIR     build directory (default build-fuzz)
#   FUZZ_CONFIGURE=0   do not configure/build: use the targets already built in FUZZ_BUILD_DIR
#                      (scripts/test.sh stage 2 reuses its build-asan, which is configured with
#                      -DSIMPLECPP_FUZZ=ON)
#   FUZZ_KEEP_CORPUS=DIR  start from DIR/<target> as well as the seeds when it exists, and keep the
#                      grown corpora there (so that successive runs continue where they left off)
#   FUZZ_ARGS          extra libFuzzer flags (e.g. "-dict=..." or "-max_len=4096")
#   FUZZ_NICE          run the fuzzers under `nice -n FUZZ_NICE` (default: not niced)
# Reproducers of failures are copied to FUZZ_BUILD_DIR/fuzz-artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-60}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then TARGETS=(fuzz_model_load fuzz_model_run fuzz_tensor_readers fuzz_graph_builder fuzz_gguf); fi
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
JOBS=${JOBS:-2}

if [ "${FUZZ_CONFIGURE:-1}" != "0" ]; then
  launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIMPLECPP_FUZZ=ON \
    -DSIMPLECPP_FEW_HWY_TARGETS=ON -DSIMPLECPP_BUILD_TESTS=OFF -DSIMPLECPP_BUILD_TOOLS=OFF \
    "${launcher[@]}" >/dev/null
  cmake --build "$BUILD" -j"$JOBS" --target "${TARGETS[@]}"
fi
for target in "${TARGETS[@]}"; do
  if [ ! -x "$BUILD/bin/$target" ]; then
    echo "fuzz.sh: $BUILD/bin/$target is missing (configure with -DSIMPLECPP_FUZZ=ON and clang)" >&2
    exit 1
  fi
done
nice_cmd=()
if [ -n "${FUZZ_NICE:-}" ]; then nice_cmd=(nice -n "$FUZZ_NICE"); fi
read -r -a extra_args <<<"${FUZZ_ARGS:-}"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
total=0
status=0
for target in "${TARGETS[@]}"; do
  corpus="$WORK/$target"
  mkdir -p "$corpus" "$WORK/artifacts-$target"
  cp tests/fuzz/corpus/"$target"/* "$corpus"/ 2>/dev/null || true
  if [ -n "${FUZZ_KEEP_CORPUS:-}" ] && [ -d "$FUZZ_KEEP_CORPUS/$target" ]; then
    cp "$FUZZ_KEEP_CORPUS/$target"/* "$corpus"/ 2>/dev/null || true
  fi
  log="$WORK/$target.log"
  echo "== $target: ${SECONDS_PER_TARGET}s, $(ls "$corpus" | wc -l) corpus files"
  set +e
  "${nice_cmd[@]}" "$BUILD/bin/$target" -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 \
    -max_len=16384 -timeout=30 -rss_limit_mb=3072 -artifact_prefix="$WORK/artifacts-$target/" \
    "${extra_args[@]}" "$corpus" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  execs=${execs:-0}
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  total=$((total + execs))
  echo "   executions: $execs (${rate:-0}/s), corpus: $(ls "$corpus" | wc -l) files, exit $rc"
  if [ $rc -ne 0 ] || grep -qE "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:" "$log"; then
    echo "   FAILED: $target; log tail:"
    tail -60 "$log"
    for a in "$WORK/artifacts-$target"/*; do
      [ -e "$a" ] || continue
      mkdir -p "$BUILD/fuzz-artifacts"
      cp "$a" "$BUILD/fuzz-artifacts/" && echo "   reproducer: $BUILD/fuzz-artifacts/$(basename "$a")"
    done
    status=1
  fi
  if [ -n "${FUZZ_KEEP_CORPUS:-}" ]; then
    mkdir -p "$FUZZ_KEEP_CORPUS/$target" && cp "$corpus"/* "$FUZZ_KEEP_CORPUS/$target"/ 2>/dev/null || true
  fi
done
echo "total executions: $total"
exit $status
