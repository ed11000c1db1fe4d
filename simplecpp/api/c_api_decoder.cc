// The C API of simplecpp::Decoder (sc_decoder_*, simplecpp/simplecpp_c.h).
#include <vector>

#include "simplecpp/api/c_api_handles.h"

using simplecpp::capi::Guard;
using simplecpp::capi::MakeStatus;
using simplecpp::capi::NullArgument;

extern "C" {

sc_status* sc_decoder_create(const sc_model* model, int32_t threads, sc_decoder** out_decoder) {
  if (!model || !out_decoder) return NullArgument("model or out_decoder");
  *out_decoder = nullptr;
  return Guard([&] {
    simplecpp::SessionOptions options;
    options.threads = threads;
    *out_decoder = new sc_decoder{simplecpp::Decoder(model->model, options)};
  });
}

void sc_decoder_free(sc_decoder* decoder) { delete decoder; }

sc_status* sc_decoder_vocab_size(const sc_decoder* decoder, int64_t* out_vocab_size) {
  if (!decoder || !out_vocab_size) return NullArgument("decoder or out_vocab_size");
  *out_vocab_size = decoder->decoder.vocab_size();
  return nullptr;
}

sc_status* sc_decoder_generate(sc_decoder* decoder, const int64_t* prompt, int64_t prompt_length,
                               int64_t max_tokens, int64_t stop_token, int32_t warmup,
                               int64_t* out_tokens, int64_t* out_count, double* out_prefill_ms,
                               double* out_decode_ms) {
  if (!decoder || !out_count) return NullArgument("decoder or out_count");
  *out_count = 0;
  if (prompt_length < 1 || !prompt) {
    return MakeStatus(SC_ERR_INVALID_ARGUMENT, "the prompt needs at least one token");
  }
  if (max_tokens < 0) return MakeStatus(SC_ERR_INVALID_ARGUMENT, "max_tokens must be >= 0");
  if (max_tokens > 0 && !out_tokens) return NullArgument("out_tokens");
  return Guard([&] {
    simplecpp::GenerateOptions options;
    options.max_tokens = max_tokens;
    options.stop_token = stop_token;
    options.warmup = warmup != 0;
    const simplecpp::GenerateResult r = decoder->decoder.Generate(
        std::vector<int64_t>(prompt, prompt + prompt_length), options);
    for (size_t i = 0; i < r.tokens.size(); ++i) out_tokens[i] = r.tokens[i];
    *out_count = static_cast<int64_t>(r.tokens.size());
    if (out_prefill_ms) *out_prefill_ms = r.prefill_ms;
    if (out_decode_ms) *out_decode_ms = r.decode_ms;
  });
}

}  // extern "C"
