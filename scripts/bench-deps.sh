#!/usr/bin/env bash
# Installs the benchmark peers that are not installed yet (Google Benchmark, oneDNN, OpenBLAS,
# XNNPACK, time; scripts/install-deps.sh, stage bench). For bench/ only: CI and the unit tests
# never need these. ONNX Runtime (onnxruntime-node) is installed by the bench scripts with npm.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/install-deps.sh" bench
