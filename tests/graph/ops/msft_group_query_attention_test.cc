// Tests for graph/ops/msft_group_query_attention.cc (com.microsoft GroupQueryAttention) through
// the executor against a float64 reference written from the operator's semantics: a first prompt
// with right padding, token generation after a cache, packed QKV, rotary, local window, softcap;
// float16 / bfloat16 against the float32 op; the refused features and shape errors.
// float32 tolerance: |got - ref| <= 1e-5 * max(1, |ref|).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "graph/ops/float16_compare.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

RunNodeOptions Ms(int num_outputs = 3) {
  RunNodeOptions o;
  o.opset = 1;
  o.domain = "com.microsoft";
  o.num_outputs = num_outputs;
  o.constant_inputs = {6};  // total_sequence_length
  return o;
}

struct Gqa {
  int64_t b, s, n, g, h, past;
  std::vector<int32_t> seqlens;
  int64_t total;
  bool packed = false, rotary = false, interleaved = false;
  int64_t window = -1;
  float softcap = 0.0f;
};

struct Inputs {
  Tensor q, k, v, past_k, past_v, cos, sin;
};

Inputs MakeInputs(const Gqa& c, uint32_t seed) {
  Inputs in;
  const int64_t width = c.packed ? (c.n + 2 * c.g) * c.h : c.n * c.h;
  in.q = RandomF32({c.b, c.s, width}, seed, -1.0f, 1.0f);
  if (!c.packed) {
    in.k = RandomF32({c.b, c.s, c.g * c.h}, seed + 1);
    in.v = RandomF32({c.b, c.s, c.g * c.h}, seed + 2);
  }
  if (c.past > 0) {
    in.past_k = RandomF32({c.b, c.g, c.past, c.h}, seed + 3);
    in.past_v = RandomF32({c.b, c.g, c.past, c.h}, seed + 4);
  }
  if (c.rotary) {
    in.cos = RandomF32({16, c.h / 2}, seed + 5);
    in.sin = RandomF32({16, c.h / 2}, seed + 6);
  }
  return in;
}

std::vector<Tensor> Run(const Gqa& c, const Inputs& in, int num_outputs = 3) {
  std::vector<graph::Attribute> attrs = {AttrInt("num_heads", c.n), AttrInt("kv_num_heads", c.g)};
  if (c.rotary) attrs.push_back(AttrInt("do_rotary", 1));
  if (c.interleaved) attrs.push_back(AttrInt("rotary_interleaved", 1));
  if (c.window > 0) attrs.push_back(AttrInt("local_window_size", c.window));
  if (c.softcap > 0) attrs.push_back(AttrFloat("softcap", c.softcap));
  std::vector<Tensor> inputs = {in.q,
                                in.k,
                                in.v,
                                in.past_k,
                                in.past_v,
                                I32({c.b}, c.seqlens),
                                I32({}, {static_cast<int32_t>(c.total)})};
  if (c.rotary) {
    inputs.push_back(in.cos);
    inputs.push_back(in.sin);
  }
  return RunNode("GroupQueryAttention", inputs, attrs, Ms(num_outputs));
}

// Output [B, S, N*H] and present K [B, G, L, H] (valid rows only; others NaN) in float64.
void Reference(const Gqa& c, const Inputs& in, std::vector<double>* y, std::vector<double>* pk) {
  const int64_t L = std::max(c.past, c.total), width = c.packed ? (c.n + 2 * c.g) * c.h : c.n * c.h;
  const bool first = c.s == c.total;
  auto rot = [&](std::vector<double> x, int64_t pos) {
    if (!c.rotary) return x;
    const int64_t half = c.h / 2;
    std::vector<double> out = x;
    for (int64_t t = 0; t < half; ++t) {
      const double cs = in.cos.data<float>()[pos * half + t],
                   sn = in.sin.data<float>()[pos * half + t];
      const int64_t i1 = c.interleaved ? 2 * t : t, i2 = c.interleaved ? 2 * t + 1 : t + half;
      out[i1] = x[i1] * cs - x[i2] * sn;
      out[i2] = x[i2] * cs + x[i1] * sn;
    }
    return out;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> K(static_cast<size_t>(c.b * c.g * L * c.h), nan), V = K;
  y->assign(static_cast<size_t>(c.b * c.s * c.n * c.h), 0.0);
  for (int64_t b = 0; b < c.b; ++b) {
    const int64_t lb = c.seqlens[b] + 1, pb = first ? 0 : lb - c.s;
    for (int64_t g = 0; g < c.g; ++g) {
      for (int64_t j = 0; j < pb; ++j) {
        for (int64_t d = 0; d < c.h; ++d) {
          const int64_t src = ((b * c.g + g) * c.past + j) * c.h + d;
          K[((b * c.g + g) * L + j) * c.h + d] = in.past_k.data<float>()[src];
          V[((b * c.g + g) * L + j) * c.h + d] = in.past_v.data<float>()[src];
        }
      }
      for (int64_t s = 0; s < c.s; ++s) {
        std::vector<double> kr(c.h), vr(c.h);
        for (int64_t d = 0; d < c.h; ++d) {
          const int64_t off = c.packed ? (b * c.s + s) * width + c.n * c.h + g * c.h + d
                                       : (b * c.s + s) * c.g * c.h + g * c.h + d;
          const int64_t voff = c.packed ? off + c.g * c.h : off;
          kr[d] = c.packed ? in.q.data<float>()[off] : in.k.data<float>()[off];
          vr[d] = c.packed ? in.q.data<float>()[voff] : in.v.data<float>()[voff];
        }
        kr = rot(kr, pb + s);
        for (int64_t d = 0; d < c.h; ++d) {
          K[((b * c.g + g) * L + pb + s) * c.h + d] = kr[d];
          V[((b * c.g + g) * L + pb + s) * c.h + d] = vr[d];
        }
      }
    }
    for (int64_t s = 0; s < c.s; ++s) {
      const int64_t p = pb + s;
      const int64_t lo = c.window > 0 ? std::max<int64_t>(0, p - c.window + 1) : 0;
      const int64_t hi = std::min(p, lb - 1);
      for (int64_t n = 0; n < c.n; ++n) {
        const int64_t g = n / (c.n / c.g);
        std::vector<double> q(c.h);
        for (int64_t d = 0; d < c.h; ++d)
          q[d] = in.q.data<float>()[(b * c.s + s) * width + n * c.h + d];
        q = rot(q, p);
        std::vector<double> sc;
        double mx = -INFINITY;
        for (int64_t j = lo; j <= hi; ++j) {
          double dot = 0.0;
          for (int64_t d = 0; d < c.h; ++d) dot += q[d] * K[((b * c.g + g) * L + j) * c.h + d];
          dot /= std::sqrt(static_cast<double>(c.h));
          if (c.softcap > 0) dot = c.softcap * std::tanh(dot / c.softcap);
          sc.push_back(dot);
          mx = std::max(mx, dot);
        }
        double sum = 0.0;
        for (double& v : sc) sum += (v = std::exp(v - mx));
        for (int64_t j = lo; j <= hi; ++j) {
          for (int64_t d = 0; d < c.h; ++d) {
            (*y)[((b * c.s + s) * c.n + n) * c.h + d] +=
                sc[j - lo] / sum * V[((b * c.g + g) * L + j) * c.h + d];
          }
        }
      }
    }
  }
  *pk = K;
}

void CheckClose(const Tensor& got, const std::vector<double>& ref, const char* what) {
  REQUIRE(got.num_elements() == static_cast<int64_t>(ref.size()));
  int bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(ref[i])) continue;  // unspecified cache rows
    const double g = got.data<float>()[i];
    if (!(std::fabs(g - ref[i]) <= 1e-5 * std::max(1.0, std::fabs(ref[i]))) && bad++ < 3) {
      CHECK_MESSAGE(false, what << "[" << i << "] = " << g << ", reference " << ref[i]);
    }
  }
  CHECK(bad == 0);
}

TEST_CASE("com.microsoft GroupQueryAttention: float32 matches a float64 reference") {
  std::vector<Gqa> cases = {
      {2, 5, 4, 2, 8, 0, {4, 2}, 5},                          // first prompt, batch 1 padded
      {2, 1, 4, 2, 8, 6, {3, 5}, 6},                          // token generation, shared buffer
      {1, 3, 6, 3, 8, 4, {6}, 7},                             // continued prompt after a cache
      {2, 1, 4, 1, 16, 5, {5, 2}, 6, true},                   // packed QKV, MQA
      {2, 4, 4, 2, 8, 0, {3, 3}, 4, false, true},             // rotary
      {1, 1, 4, 2, 8, 9, {9}, 10, false, true, true, 3, 30},  // rotary interleaved, window, softcap
      {1, 6, 2, 2, 8, 0, {5}, 6, true, true, false, 2},       // packed, rotary, window, prompt
  };
  uint32_t seed = 1;
  for (const Gqa& c : cases) {
    CAPTURE(seed);
    const Inputs in = MakeInputs(c, seed);
    seed += 10;
    std::vector<double> y, pk;
    Reference(c, in, &y, &pk);
    const auto out = Run(c, in);
    CHECK(out[0].dims() == Dims{c.b, c.s, c.n * c.h});
    CHECK(out[1].dims() == Dims{c.b, c.g, std::max(c.past, c.total), c.h});
    CheckClose(out[0], y, "output");
    CheckClose(out[1], pk, "present_key");
    // Without the present outputs.
    CheckClose(Run(c, in, 1)[0], y, "output alone");
  }
}

TEST_CASE("com.microsoft GroupQueryAttention: float16 / bfloat16 within a few 16-bit ulps") {
  const Gqa c{2, 3, 4, 2, 8, 4, {4, 6}, 7, false, true};
  const Inputs in = MakeInputs(c, 77);
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    Inputs h;
    h.q = f16::To16(in.q, dt);
    h.k = f16::To16(in.k, dt);
    h.v = f16::To16(in.v, dt);
    h.past_k = f16::To16(in.past_k, dt);
    h.past_v = f16::To16(in.past_v, dt);
    h.cos = f16::To16(in.cos, dt);
    h.sin = f16::To16(in.sin, dt);
    Inputs w{f16::To32(h.q),      f16::To32(h.k),   f16::To32(h.v),  f16::To32(h.past_k),
             f16::To32(h.past_v), f16::To32(h.cos), f16::To32(h.sin)};
    const Tensor y32 = Run(c, w, 1)[0];
    const Tensor y16 = f16::To32(Run(c, h, 1)[0]);
    // Rotated Q and K are stored in 16 bits before the products: a few ulps of |y| <= 1.
    const double tol = 4 * (dt == DType::kBFloat16 ? 1.0 / 128 : 1.0 / 1024);
    for (int64_t i = 0; i < y32.num_elements(); ++i) {
      CHECK(std::fabs(y16.data<float>()[i] - y32.data<float>()[i]) <= tol);
    }
  }
}

void CheckErrorNames(const std::function<void()>& fn, const std::string& what) {
  try {
    fn();
    FAIL("expected an error");
  } catch (const Error& e) {
    const std::string msg = e.what();
    CHECK_MESSAGE(msg.find("GroupQueryAttention_under_test") != std::string::npos, msg);
    CHECK_MESSAGE(msg.find(what) != std::string::npos, msg);
  }
}

TEST_CASE("com.microsoft GroupQueryAttention: refused features and shape errors") {
  const Gqa c{1, 2, 4, 2, 8, 0, {1}, 2};
  const Inputs in = MakeInputs(c, 5);
  const std::vector<Tensor> base = {in.q,     in.k,          in.v,        Tensor(),
                                    Tensor(), I32({1}, {1}), I32({}, {2})};
  auto run = [&](std::vector<Tensor> inputs, std::vector<graph::Attribute> extra) {
    std::vector<graph::Attribute> attrs = {AttrInt("num_heads", 4), AttrInt("kv_num_heads", 2)};
    for (auto& a : extra) attrs.push_back(a);
    RunNode("GroupQueryAttention", inputs, attrs, Ms(1));
  };
  CheckErrorNames([&] { run(base, {AttrInt("causal", 0)}); }, "causal = 0");
  CheckErrorNames([&] { run(base, {AttrInt("smooth_softmax", 1)}); }, "smooth_softmax");
  CheckErrorNames([&] { run(base, {AttrInt("sliding_window_cache", 1)}); }, "sliding_window_cache");
  CheckErrorNames([&] { run(base, {AttrString("k_quant_type", "PER_TENSOR")}); }, "quantized");
  std::vector<Tensor> with_pos = base;
  with_pos.resize(10);
  with_pos[9] = I64({1, 2}, {0, 1});
  CheckErrorNames([&] { run(with_pos, {}); }, "position_ids");
  std::vector<Tensor> bad_k = base;
  bad_k[1] = RandomF32({1, 2, 8}, 9);
  CheckErrorNames([&] { run(bad_k, {}); }, "key");
  std::vector<Tensor> bad_seq = base;
  bad_seq[5] = I32({1}, {5});
  CheckErrorNames([&] { run(bad_seq, {}); }, "seqlens_k");
  CheckErrorNames([&] { run(base, {AttrInt("do_rotary", 1)}); }, "cos_cache");
}

}  // namespace
}  // namespace simplecpp::testing
