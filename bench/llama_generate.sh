#!/usr/bin/env bash
# Greedy decoding of the built-in LLaMA-style decoders (llama, llama-int4, llama-msft; and
# gguf-TYPE: the built-in llama written as a GGUF in TYPE (q4_0, q4_1, q8_0, f16, f32) and
# converted back with `convert --from gguf`), simplecpp
# vs onnxruntime-node on the same exported .onnx file: a 32-token prompt, then 32 decode steps, at
# 1 and 2 threads, each after one untimed warm-up prefill (--warmup). Prints the prefill ms and decode tokens/s of each, and whether both produced
# the same tokens.
#   bash bench/llama_generate.sh [BUILD_DIR] [MODELS...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build}"
shift || true
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(llama llama-int4 llama-msft)
cli="$build/bin/simplecpp"
work="${TMPDIR:-/tmp}/simplecpp-llama-bench"
mkdir -p "$work"
# PROMPT_TOKENS / DECODE_TOKENS: the prompt's length and the decode steps (default 32 each).
prompt=$(seq -s, 1 "${PROMPT_TOKENS:-32}")
tokens="${DECODE_TOKENS:-32}"
for m in "${models[@]}"; do
  file="$work/$m.onnx"
  if [ ! -f "$file" ]; then
    case "$m" in
      gguf-*)
        "$cli" convert --builtin llama --to gguf --type "${m#gguf-}" "$work/$m.gguf" > /dev/null
        "$cli" convert --from gguf "$work/$m.gguf" "$file" > /dev/null ;;
      *) "$cli" export-builtin "$m" "$file" > /dev/null ;;
    esac
  fi
  for t in 1 2; do
    ours=$("$cli" generate "$file" --prompt "$prompt" --tokens "$tokens" --threads "$t" --warmup)
    ort=$(node "$here/ort_generate.mjs" "$file" --prompt "$prompt" --tokens "$tokens" --threads "$t" --warmup)
    same=no
    [ "$(grep '^generated' <<< "$ours")" = "$(grep '^generated' <<< "$ort")" ] && same=yes
    echo "$m threads=$t"
    echo "  simplecpp: $(grep '^prefill' <<< "$ours") | $(grep '^decode' <<< "$ours")"
    echo "  ort:       $(grep '^prefill' <<< "$ort") | $(grep '^decode' <<< "$ort")"
    echo "  same tokens: $same"
  done
done
