#!/usr/bin/env bash
# ThreadSanitizer check of concurrent use: configures build-tsan (Release with debug info,
# -DSIMPLECPP_SANITIZE=thread, SSE4 + AVX3_DL Highway targets only), builds only the libraries and
# simplecpp_concurrency_test (tests/concurrency/: one Model shared by 8 threads, each with its own
# Session and input, serial and with 2 intra-op Eigen threads per session) and runs it.
# Any TSan report fails the run (halt_on_error=1, exitcode=66); no suppressions are used.
# Prints the build and run times; exits non-zero on a build failure, a test failure or a report.
# SIMPLECPP_JOBS overrides the build parallelism (default 2).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${SIMPLECPP_JOBS:-2}
dir=build-tsan
start=$SECONDS

# Line tables only (-g1): reports keep file and line; full debug info would double the build.
if ! cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIMPLECPP_SANITIZE=thread \
       -DSIMPLECPP_FEW_HWY_TARGETS=ON -DSIMPLECPP_BUILD_TOOLS=OFF \
       -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null ||
   ! cmake --build "$dir" -j"$jobs" --target simplecpp_concurrency_test; then
  echo "tsan-test.sh: build of $dir FAILED" >&2
  exit 1
fi
build_s=$((SECONDS - start))

run_start=$SECONDS
log=$(mktemp)
TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}" \
  "$dir/bin/simplecpp_concurrency_test" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
reports=$(grep -c "WARNING: ThreadSanitizer" "$log")
rm -f "$log"
echo "tsan-test.sh: build ${build_s} s, run $((SECONDS - run_start)) s, exit code $rc," \
     "$reports ThreadSanitizer warnings"
[ "$rc" -eq 0 ] && [ "$reports" -eq 0 ]
