#!/usr/bin/env bash
# README command 1: install dependencies, build Release into build/, and run the built-in default
# model (a small CNN, generated and written as a real .onnx file) 20 times after a warm-up.
# Outputs (output_K.pb / .npy and the model file) land in build/demo/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2 --target simplecpp_cli
build/bin/simplecpp run default --repeat 20 --output-dir build/demo
