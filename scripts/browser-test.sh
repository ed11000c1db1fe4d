#!/usr/bin/env bash
# The JS package in a browser: assembles the npm package folder from a WebAssembly build (as
# scripts/wasm-test.sh does: index.mjs, package.json and the built simplecpp.mjs + simplecpp.wasm)
# and runs simplecpp/js/test/browser_test.mjs, which serves examples/web, drives Debian's chromium
# headless through playwright-core and compares the page's CNN outputs with node's.
# Usage: scripts/browser-test.sh [BUILD_WASM_DIR]   (default: build-wasm; needs its
#   js/simplecpp.mjs + .wasm, from the simplecpp_wasm target)
# Environment: NATIVE_CLI=PATH, the CLI that exports the CNN when the module has no built-in models
#   (default: BUILD_WASM_DIR/bin/simplecpp.js under node, else build/bin/simplecpp);
#   SCREENSHOT=FILE keeps a screenshot of the page; CHROMIUM=PATH (default /usr/bin/chromium).
# playwright-core (pinned below) is installed once into a cache folder outside the repository
# (SIMPLECPP_CACHE, default ~/.cache/simplecpp); it drives the system chromium and downloads no
# browser.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
BUILD_DIR="${1:-build-wasm}"
case "$BUILD_DIR" in /*) BUILD_ABS="$BUILD_DIR" ;; *) BUILD_ABS="$ROOT/$BUILD_DIR" ;; esac
PLAYWRIGHT_VERSION=1.65.2

# node, npm and chromium, each only when missing.
bash scripts/install-deps.sh wasm
NODE="$(command -v node)"

CACHE="${SIMPLECPP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/simplecpp}"
PW_DIR="$CACHE/playwright-core-$PLAYWRIGHT_VERSION"
if [ ! -f "$PW_DIR/node_modules/playwright-core/package.json" ]; then
  echo "browser-test: installing playwright-core@$PLAYWRIGHT_VERSION into $PW_DIR"
  mkdir -p "$PW_DIR"
  npm install --no-save --no-audit --no-fund --silent --prefix "$PW_DIR" "playwright-core@$PLAYWRIGHT_VERSION"
fi

PKG_TMP="$(mktemp -d)"
trap 'rm -rf "$PKG_TMP"' EXIT
cp simplecpp/js/package.json simplecpp/js/index.mjs simplecpp/js/README.md simplecpp/js/copy-build.sh "$PKG_TMP/"
sh "$PKG_TMP/copy-build.sh" "$BUILD_ABS"

CLI="${NATIVE_CLI:-}"
if [ -n "$CLI" ] && [ ! -x "$CLI" ]; then
  echo "browser-test: NATIVE_CLI=$CLI is not an executable: looking for another CLI"
  CLI=""
fi
if [ -z "$CLI" ] && [ -f "$BUILD_ABS/bin/simplecpp.js" ]; then CLI="$BUILD_ABS/bin/simplecpp.js"; fi
if [ -z "$CLI" ] && [ -x build/bin/simplecpp ]; then CLI="$ROOT/build/bin/simplecpp"; fi
test_args=(--package "$PKG_TMP" --playwright "$PW_DIR" --chromium "${CHROMIUM:-/usr/bin/chromium}")
if [ -n "$CLI" ]; then test_args+=(--cli "$CLI"); fi
if [ -n "${SCREENSHOT:-}" ]; then test_args+=(--screenshot "$SCREENSHOT"); fi
"$NODE" simplecpp/js/test/browser_test.mjs "${test_args[@]}"
