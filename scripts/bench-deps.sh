#!/usr/bin/env bash
# Installs the benchmark peers (Debian 12 packages) that are not installed yet: Google Benchmark,
# oneDNN, OpenBLAS, XNNPACK. For bench/ only: CI and the unit tests never need these.
# ONNX Runtime (onnxruntime-node) is installed by bench/run_models.sh into bench/node_modules.
set -euo pipefail
# libpthreadpool-dev: xnnpack.h includes <pthreadpool.h>, which libxnnpack-dev does not depend on.
pkgs=(libbenchmark-dev libdnnl-dev libopenblas-dev libxnnpack-dev libpthreadpool-dev)
missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "bench-deps: all installed (${pkgs[*]})"
  exit 0
fi
echo "bench-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
