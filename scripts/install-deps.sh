#!/usr/bin/env bash
# The one place that installs what simplecpp's scripts need, from Debian 12's packages. Every other
# script calls it with the stages it needs; it decides per tool and installs only what is missing,
# saying what it installs and why.
#
# Usage: scripts/install-deps.sh [--simulate] [STAGE...]     (default stage: core)
#   core   compilers, CMake, clang's sanitizer/libFuzzer runtimes (libclang-rt-14-dev: only a
#          Recommends of clang-14, which --no-install-recommends skips), Highway, Eigen, doctest,
#          protozero, and for the bindings' tests python3-numpy and golang-go;
#   wasm   emscripten (when emcmake is absent), node (when absent), npm (when absent and Debian's
#          npm can go beside the node that is there), chromium (when absent: the browser test);
#   bench  the benchmark peers (Google Benchmark, oneDNN, OpenBLAS, XNNPACK + pthreadpool) and time;
#   all    every stage above.
# --simulate runs `apt-get -s install` (installs nothing) over the whole package list of the stages
# as this machine would need it on a fresh start (a tool already provided from outside Debian, such
# as a node that bundles its own npm, keeps its Debian package off the list), and fails when apt
# reports a conflict or an unknown package. SIMPLECPP_APT_EXTRA="pkg ..." adds packages to that
# simulated list (to see the check fail on a conflict).
#
# Why per tool and not one apt-get line: apt refuses a whole install line when one package on it
# conflicts with something already installed (nodejs from NodeSource bundles npm and conflicts with
# Debian's npm), so one optional package could stop emscripten from being installed at all.
# Runs `apt-get update` once, and only when something is missing. Works as root (CI) and through
# sudo otherwise.
set -euo pipefail

simulate=0
stages=()
for arg in "$@"; do
  case "$arg" in
    --simulate) simulate=1 ;;
    core | wasm | bench) stages+=("$arg") ;;
    all) stages+=(core wasm bench) ;;
    *)
      echo "install-deps: unknown argument '$arg' (stages: core wasm bench all; --simulate)" >&2
      exit 2
      ;;
  esac
done
[ "${#stages[@]}" -gt 0 ] || stages=(core)

have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pkg() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]; }

# Two lists: `wanted` is every Debian package the stages use on this machine (what --simulate
# checks), `missing` the part of it not present now (what an install run installs).
wanted=()
missing=()
reasons=()

# want PKG PRESENT REASON: PRESENT is 1 when the tool or package is already there.
want() {
  wanted+=("$1")
  if [ "$2" = 0 ]; then
    missing+=("$1")
    reasons+=("$1 ($3)")
  fi
}
want_pkg() { if have_pkg "$1"; then want "$1" 1 ""; else want "$1" 0 "${2:-not installed}"; fi; }
want_cmd() { if have_cmd "$2"; then want "$1" 1 ""; else want "$1" 0 "no $2 on PATH${3:+: $3}"; fi; }

stage_core() {
  want_cmd cmake cmake
  want_cmd g++ g++
  want_cmd clang clang++
  want_pkg libclang-rt-14-dev "clang's ASan/UBSan/libFuzzer runtimes"
  local p
  for p in libhwy-dev libeigen3-dev doctest-dev libprotozero-dev; do want_pkg "$p"; done
  want_pkg python3-numpy "the Python binding's test (bindings/python)"
  want_cmd golang-go go "the Go binding's test (bindings/go)"
}

stage_wasm() {
  want_cmd emscripten emcmake
  if have_cmd node; then
    # A node from outside Debian (NodeSource) owns its npm; Debian's npm would conflict with it.
    if have_pkg nodejs && [[ "$(dpkg-query -W -f='${Version}' nodejs)" != *nodesource* ]]; then
      want nodejs 1 ""
    fi
    if have_cmd npm; then
      if have_pkg npm; then want npm 1 ""; fi
    elif apt-get -s install --no-install-recommends npm >/dev/null 2>&1; then
      want npm 0 "no npm on PATH"
    else
      echo "install-deps: npm is missing and Debian's npm cannot be installed beside this node" \
           "($(command -v node)); the npm package checks of the wasm stage will be skipped"
    fi
  else
    want nodejs 0 "no node on PATH"
    want npm 0 "no node on PATH"
  fi
  # Debian's own build: playwright-core drives it, so no browser download is needed.
  want_cmd chromium chromium "the JS package's browser test (scripts/browser-test.sh)"
}

stage_bench() {
  local p
  # libpthreadpool-dev: xnnpack.h includes <pthreadpool.h>, which libxnnpack-dev does not depend on.
  for p in libbenchmark-dev libdnnl-dev libopenblas-dev libxnnpack-dev libpthreadpool-dev; do
    want_pkg "$p"
  done
  if [ -x /usr/bin/time ]; then want time 1 ""; else want time 0 "no /usr/bin/time"; fi
}

for s in "${stages[@]}"; do "stage_$s"; done
# One package once, in first-seen order.
dedup() { printf '%s\n' "$@" | awk 'NF && !seen[$0]++'; }
mapfile -t wanted < <(dedup "${wanted[@]}")
mapfile -t missing < <(dedup "${missing[@]+"${missing[@]}"}")

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif have_cmd sudo; then
  as_root=(sudo)
else
  as_root=(false)
fi

# Package lists are empty on a fresh image: apt then knows no package at all.
lists_known() {
  local policy
  policy=$(apt-cache policy cmake 2>/dev/null || true)
  [[ "$policy" =~ Candidate:\ [^\(] ]]
}
update_lists() {
  echo "install-deps: apt-get update"
  "${as_root[@]}" apt-get update
}

if [ "$simulate" = 1 ]; then
  # shellcheck disable=SC2206
  extra=(${SIMPLECPP_APT_EXTRA:-})
  list=("${wanted[@]}" "${extra[@]+"${extra[@]}"}")
  lists_known || update_lists || true
  echo "install-deps: simulating apt-get install of ${#list[@]} packages (${stages[*]}): ${list[*]}"
  log=$(mktemp)
  if apt-get -s install --no-install-recommends "${list[@]}" >"$log" 2>&1; then
    echo "install-deps: simulated install OK ($(grep -c '^Inst ' "$log") to install on this machine)"
    rm -f "$log"
    exit 0
  fi
  echo "install-deps: the simulated install FAILED: these packages cannot be installed together" >&2
  cat "$log" >&2
  rm -f "$log"
  exit 1
fi

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: nothing to install for ${stages[*]} (${wanted[*]})"
  exit 0
fi
if [ "${as_root[0]:-}" = false ]; then
  echo "install-deps: missing: ${reasons[*]}; run as root or install sudo" >&2
  exit 1
fi
echo "install-deps: installing ${reasons[*]}"
update_lists
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
