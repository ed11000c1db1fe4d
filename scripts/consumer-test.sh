#!/usr/bin/env bash
# Checks that other projects can use simplecpp the four supported ways (examples/): installs an
# existing Release build into a temporary prefix, then configures, builds and runs
#   find_package      examples/cmake/find_package     against the installed CMake package
#   add_subdirectory  examples/cmake/add_subdirectory against this source tree
#   fetchcontent      examples/cmake/fetchcontent     FetchContent of this source tree (no network)
#   pkg-config        examples/pkg-config/main.c      C, against the installed simplecpp.pc
# Each consumer runs a one-node model and exits 0 only on the expected output. Prints each one's
# name and time; exits non-zero on any failure.
# Usage: scripts/consumer-test.sh [release-build-dir]   (default build/; JOBS=N to change -j2;
#   CONSUMERS="find_package pkg-config" runs a subset)
# add_subdirectory and fetchcontent compile the library again inside the consumer's build: only
# what `consumer` needs, with two Highway targets (SIMPLECPP_FEW_HWY_TARGETS) and no optimization
# (an empty CMAKE_BUILD_TYPE; they check the build integration, not speed) to keep that short.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
build_dir=${1:-build}
jobs=${JOBS:-2}
consumers=${CONSUMERS:-find_package add_subdirectory fetchcontent pkg-config}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

echo "consumer-test: installing $build_dir into a temporary prefix"
if ! cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log" 2>&1; then
  cat "$work/install.log"
  echo "consumer-test: install FAILED" >&2
  exit 1
fi

# cmake_consumer NAME [configure args...]: configure, build and run examples/cmake/NAME.
cmake_consumer() {
  local name=$1
  shift
  cmake -S "examples/cmake/$name" -B "$work/$name" "$@" &&
    cmake --build "$work/$name" -j"$jobs" --target consumer &&
    "$work/$name/consumer"
}

pkg_config_consumer() {
  local flags libs
  flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags simplecpp) &&
    libs=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --libs simplecpp) &&
    mkdir -p "$work/pkg-config" &&
    # shellcheck disable=SC2086
    cc -std=c11 -Wall -Werror -c examples/pkg-config/main.c $flags -o "$work/pkg-config/main.o" &&
    # shellcheck disable=SC2086
    c++ "$work/pkg-config/main.o" $libs -o "$work/pkg-config/consumer" &&
    "$work/pkg-config/consumer"
}

run_consumer() {
  case $1 in
    find_package) cmake_consumer find_package -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" ;;
    add_subdirectory)
      cmake_consumer add_subdirectory -DCMAKE_BUILD_TYPE= -DSIMPLECPP_FEW_HWY_TARGETS=ON \
        -DSIMPLECPP_SOURCE_DIR="$root" ;;
    fetchcontent)
      cmake_consumer fetchcontent -DCMAKE_BUILD_TYPE= -DSIMPLECPP_FEW_HWY_TARGETS=ON \
        -DSIMPLECPP_URL="$root" ;;
    pkg-config) pkg_config_consumer ;;
    *) echo "consumer-test: unknown consumer $1" >&2; return 1 ;;
  esac
}

failures=0
summary=()
for consumer in $consumers; do
  start=$SECONDS
  if run_consumer "$consumer" >"$work/$consumer.log" 2>&1; then
    result=ok
  else
    result=FAILED
    failures=$((failures + 1))
    cat "$work/$consumer.log"
  fi
  tail -n 1 "$work/$consumer.log"
  summary+=("$(printf '%-16s %-6s %4d s' "$consumer" "$result" $((SECONDS - start)))")
  echo "consumer-test: ${summary[-1]}"
done
printf 'consumer-test: %s\n' "${summary[@]}"
[ "$failures" -eq 0 ]
