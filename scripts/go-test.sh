#!/usr/bin/env bash
# Runs the Go binding's tests (bindings/go: go vet, then go test) against the C library of a build
# tree. Go's module and build caches go to temp folders, so nothing is written into the repository
# or the user's home; the binding uses the standard library only, so nothing is downloaded.
# Usage: scripts/go-test.sh BUILD_DIR      (BUILD_DIR/lib holds libsimplecpp_c.so)
# GO names the go command (default: go on PATH). Without it the script says so and exits 0, unless
# SIMPLECPP_REQUIRE_GO=1 (then it fails); scripts/install-deps.sh core installs golang-go.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
if [ $# -ne 1 ]; then
  echo "usage: scripts/go-test.sh BUILD_DIR" >&2
  exit 2
fi
case "$1" in /*) BUILD_ABS="$1" ;; *) BUILD_ABS="$ROOT/$1" ;; esac
LIB_DIR="$BUILD_ABS/lib"

GO="${GO:-go}"
if ! command -v "$GO" >/dev/null 2>&1; then
  if [ "${SIMPLECPP_REQUIRE_GO:-0}" = 1 ]; then
    echo "go-test: no go on PATH and SIMPLECPP_REQUIRE_GO=1 (scripts/install-deps.sh core installs golang-go)" >&2
    exit 1
  fi
  echo "go-test: no go on PATH, the Go binding test is skipped (scripts/install-deps.sh core installs golang-go)"
  exit 0
fi
if [ ! -e "$LIB_DIR/libsimplecpp_c.so" ]; then
  echo "go-test: $LIB_DIR/libsimplecpp_c.so not found (build the simplecpp_c target)" >&2
  exit 1
fi

tmp="$(mktemp -d)"
# The module cache is written read-only; chmod lets rm remove it.
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
export GOPATH="$tmp/gopath" GOCACHE="$tmp/gocache"
# No module proxy or checksum database: a download attempt fails instead of reaching out.
export GOPROXY=off GOFLAGS='' GO111MODULE=on
export CGO_ENABLED=1
export CGO_LDFLAGS="-L$LIB_DIR ${CGO_LDFLAGS:-}"
export LD_LIBRARY_PATH="$LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

cd bindings/go
"$GO" version
"$GO" vet ./...
"$GO" test -count=1 ./...
