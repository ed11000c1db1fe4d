#!/usr/bin/env bash
# Installs the Debian packages simplecpp builds with, only those that are missing: the compilers,
# CMake, clang's sanitizer/libFuzzer runtimes (libclang-rt-14-dev: only a Recommends of clang-14,
# which --no-install-recommends skips), and the libraries (Highway, Eigen, doctest, protozero).
# Runs `apt-get update` once, and only when something is missing. Works as root (CI) and through sudo otherwise.
set -euo pipefail

packages=(cmake g++ clang libclang-rt-14-dev libhwy-dev libeigen3-dev doctest-dev libprotozero-dev)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg -s "$p" >/dev/null 2>&1; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all packages present (${packages[*]})"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps: missing packages: ${missing[*]}; run as root or install sudo" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
"${as_root[@]}" apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
