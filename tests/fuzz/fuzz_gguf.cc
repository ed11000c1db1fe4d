// libFuzzer target: bytes -> the GGUF reader (simplecpp/io/gguf.h), and, for files it accepts,
// the LLaMA import (simplecpp/convert/gguf_llama.h). Every failure must be a simplecpp::Error:
// truncation, huge counts and offsets, overlapping tensors, inconsistent LLaMA metadata.
#include <cstddef>
#include <cstdint>

#include "simplecpp/convert/gguf_llama.h"
#include "simplecpp/error.h"
#include "simplecpp/io/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace simplecpp;
  try {
    const io::GgufFile f = io::ParseGguf(data, size);
    const builtin::LlamaConfig c = convert::LlamaConfigFromGguf(f);
    // The graph's rotary caches hold max_positions x head size floats however small the file:
    // import only headers whose caches stay small, so one input cannot use up the fuzzer's memory.
    if (c.max_positions * (c.hidden / c.q_heads) <= (int64_t{1} << 20)) convert::ImportLlamaGguf(f);
  } catch (const Error&) {
  }
  return 0;
}
