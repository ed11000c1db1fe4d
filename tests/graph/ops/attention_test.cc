// Tests for graph/ops/attention.cc through the executor: Attention (4-D and 3-D layouts, GQA,
// float / bool / short masks, causal with and without past, softcap, scale, the qk output
// modes, nonpad_kv_seqlen, float16 / bfloat16, thread-count independence, errors),
// RotaryEmbedding (4-D / 3-D, interleaved, partial rotation, with and without position_ids)
// and RMSNormalization (axes, broadcast scale, mixed dtypes). The references are plain scalar
// loops in double, written from the ONNX operator descriptions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "graph/op_test_util.h"
#include "kernels/float16/float16.h"

namespace simplecpp::testing {
namespace {

using kernels::Float16Kind;
constexpr double kInf = std::numeric_limits<double>::infinity();

RunNodeOptions Opts(int64_t opset, int num_outputs = 1, int threads = 1) {
  RunNodeOptions o;
  o.opset = opset;
  o.num_outputs = num_outputs;
  o.threads = threads;
  return o;
}

Float16Kind KindOf(DType dt) {
  return dt == DType::kBFloat16 ? Float16Kind::kBFloat16 : Float16Kind::kHalf;
}
// float32 tensor -> 16-bit tensor (rounded).
Tensor To16(const Tensor& f, DType dt) {
  Tensor t(dt, f.dims());
  for (int64_t i = 0; i < f.num_elements(); ++i) {
    t.data<uint16_t>()[i] = kernels::Narrow16One(KindOf(dt), f.data<float>()[i]);
  }
  return t;
}
// Any float tensor -> double values.
std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (t.dtype() == DType::kFloat32) {
      v[i] = t.data<float>()[i];
    } else {
      v[i] = kernels::Widen16One(KindOf(t.dtype()), t.data<uint16_t>()[i]);
    }
  }
  return v;
}
// A 16-bit tensor rounded back to float32 (so the reference sees the values the op sees).
Tensor Rounded(const Tensor& f, DType dt) {
  if (dt == DType::kFloat32) return f;
  const Tensor h = To16(f, dt);
  Tensor t(DType::kFloat32, f.dims());
  for (int64_t i = 0; i < f.num_elements(); ++i) {
    t.data<float>()[i] = kernels::Widen16One(KindOf(dt), h.data<uint16_t>()[i]);
  }
  return t;
}
Tensor As(const Tensor& f, DType dt) { return dt == DType::kFloat32 ? f : To16(f, dt); }

void CheckClose(const Tensor& got, const Dims& dims, const std::vector<double>& want, double tol) {
  REQUIRE(got.dims() == dims);
  const auto g = Values(got);
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    const bool both_nan = std::isnan(g[i]) && std::isnan(want[i]);
    const bool same_inf = std::isinf(want[i]) && g[i] == want[i];
    if (!both_nan && !same_inf && !(std::fabs(g[i] - want[i]) <= tol * (1 + std::fabs(want[i])))) {
      FAIL_CHECK("index " << i << ": got " << g[i] << ", want " << want[i]);
      return;
    }
  }
}

// [B, S, H, D] <-> [B, H, S, D] (the 3-D layout is [B, S, H*D]).
Tensor SwapHeadSeq(const Tensor& t, int64_t b, int64_t a1, int64_t a2, int64_t d, Dims out_dims) {
  Tensor o(DType::kFloat32, std::move(out_dims));
  for (int64_t i = 0; i < b; ++i)
    for (int64_t x = 0; x < a1; ++x)
      for (int64_t y = 0; y < a2; ++y)
        for (int64_t e = 0; e < d; ++e)
          o.data<float>()[((i * a2 + y) * a1 + x) * d + e] =
              t.data<float>()[((i * a1 + x) * a2 + y) * d + e];
  return o;
}

// ---- Attention reference (4-D layout, double) ----
struct AttnCase {
  int64_t b = 1, hq = 1, hkv = 1, sq = 1, skv = 1, past = 0, d = 4, dv = 4;
  double scale = 0;  // 0: 1/sqrt(d)
  double softcap = 0;
  bool causal = false;
  // Bias for (b, h, i, j) from the mask (0 when no mask); may be -inf.
  std::function<double(int64_t, int64_t, int64_t, int64_t)> mask;
  std::vector<int64_t> nonpad;  // empty: none
  int qk_mode = 0;
};
struct AttnRef {
  std::vector<double> y, present_k, present_v, qk;
};

// A case of these sizes; the other fields keep their defaults.
AttnCase Sizes(int64_t b, int64_t hq, int64_t hkv, int64_t sq, int64_t skv, int64_t d, int64_t dv,
               int64_t past = 0) {
  AttnCase c;
  c.b = b;
  c.hq = hq;
  c.hkv = hkv;
  c.sq = sq;
  c.skv = skv;
  c.past = past;
  c.d = d;
  c.dv = dv;
  return c;
}

AttnRef RefAttention(const AttnCase& c, const Tensor& q, const Tensor& k, const Tensor& v,
                     const Tensor* pk, const Tensor* pv) {
  const int64_t T = c.past + c.skv, group = c.hq / c.hkv;
  AttnRef r;
  r.present_k.resize(static_cast<size_t>(c.b * c.hkv * T * c.d));
  r.present_v.resize(static_cast<size_t>(c.b * c.hkv * T * c.dv));
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t g = 0; g < c.hkv; ++g)
      for (int64_t j = 0; j < T; ++j) {
        for (int64_t e = 0; e < c.d; ++e) {
          r.present_k[((b * c.hkv + g) * T + j) * c.d + e] =
              j < c.past ? pk->data<float>()[((b * c.hkv + g) * c.past + j) * c.d + e]
                         : k.data<float>()[((b * c.hkv + g) * c.skv + j - c.past) * c.d + e];
        }
        for (int64_t e = 0; e < c.dv; ++e) {
          r.present_v[((b * c.hkv + g) * T + j) * c.dv + e] =
              j < c.past ? pv->data<float>()[((b * c.hkv + g) * c.past + j) * c.dv + e]
                         : v.data<float>()[((b * c.hkv + g) * c.skv + j - c.past) * c.dv + e];
        }
      }
  const double scale = c.scale != 0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(c.d));
  r.y.assign(static_cast<size_t>(c.b * c.hq * c.sq * c.dv), 0.0);
  r.qk.assign(static_cast<size_t>(c.b * c.hq * c.sq * T), 0.0);
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t h = 0; h < c.hq; ++h)
      for (int64_t i = 0; i < c.sq; ++i) {
        const int64_t g = h / group;
        std::vector<double> s(static_cast<size_t>(T));
        double* qk = &r.qk[static_cast<size_t>(((b * c.hq + h) * c.sq + i) * T)];
        for (int64_t j = 0; j < T; ++j) {
          double acc = 0;
          for (int64_t e = 0; e < c.d; ++e) {
            acc += static_cast<double>(q.data<float>()[((b * c.hq + h) * c.sq + i) * c.d + e]) *
                   r.present_k[((b * c.hkv + g) * T + j) * c.d + e];
          }
          s[j] = acc * scale;
          if (c.qk_mode == 0) qk[j] = s[j];
          if (c.softcap > 0) s[j] = c.softcap * std::tanh(s[j] / c.softcap);
          if (c.qk_mode == 1) qk[j] = s[j];
          if (c.mask) s[j] += c.mask(b, h, i, j);
          if (c.causal) {
            const int64_t off = c.past > 0 || c.nonpad.empty() ? c.past : c.nonpad[b] - c.sq;
            if (j > i + off) s[j] += -kInf;
          }
          if (!c.nonpad.empty() && j >= c.nonpad[b]) s[j] += -kInf;
          if (c.qk_mode == 2) qk[j] = s[j];
        }
        double m = -kInf;
        for (double x : s) m = std::max(m, x);
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - m));
        for (double& x : s) x /= sum;
        for (int64_t j = 0; j < T; ++j) {
          if (c.qk_mode == 3) qk[j] = s[j];
        }
        for (int64_t e = 0; e < c.dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < T; ++j) acc += s[j] * r.present_v[((b * c.hkv + g) * T + j) * c.dv + e];
          r.y[((b * c.hq + h) * c.sq + i) * c.dv + e] = acc;
        }
      }
  return r;
}

struct AttnInputs {
  Tensor q, k, v, pk, pv;
};
AttnInputs MakeInputs(const AttnCase& c, uint32_t seed, DType dt = DType::kFloat32) {
  AttnInputs in;
  in.q = Rounded(RandomF32({c.b, c.hq, c.sq, c.d}, seed, -2, 2), dt);
  in.k = Rounded(RandomF32({c.b, c.hkv, c.skv, c.d}, seed + 1, -2, 2), dt);
  in.v = Rounded(RandomF32({c.b, c.hkv, c.skv, c.dv}, seed + 2), dt);
  if (c.past > 0) {
    in.pk = Rounded(RandomF32({c.b, c.hkv, c.past, c.d}, seed + 3, -2, 2), dt);
    in.pv = Rounded(RandomF32({c.b, c.hkv, c.past, c.dv}, seed + 4), dt);
  }
  return in;
}

std::vector<graph::Attribute> AttnAttrs(const AttnCase& c, bool three_d) {
  std::vector<graph::Attribute> a;
  if (c.causal) a.push_back(AttrInt("is_causal", 1));
  if (c.scale != 0) a.push_back(AttrFloat("scale", static_cast<float>(c.scale)));
  if (c.softcap != 0) a.push_back(AttrFloat("softcap", static_cast<float>(c.softcap)));
  if (c.qk_mode != 0) a.push_back(AttrInt("qk_matmul_output_mode", c.qk_mode));
  if (three_d) {
    a.push_back(AttrInt("q_num_heads", c.hq));
    a.push_back(AttrInt("kv_num_heads", c.hkv));
  }
  return a;
}

TEST_CASE("Attention 4-D matches the reference over odd shapes and GQA") {
  for (int64_t sq : {1, 3, 17}) {
    for (int64_t skv : {1, 3, 17}) {
      for (auto heads : {std::pair<int64_t, int64_t>{2, 2}, {6, 2}, {3, 1}}) {
        AttnCase c = Sizes(2, heads.first, heads.second, sq, skv, 5, 7);
        CAPTURE(sq);
        CAPTURE(skv);
        CAPTURE(c.hq);
        const AttnInputs in = MakeInputs(c, static_cast<uint32_t>(sq * 100 + skv));
        const AttnRef ref = RefAttention(c, in.q, in.k, in.v, nullptr, nullptr);
        const auto out = RunNode("Attention", {in.q, in.k, in.v}, AttnAttrs(c, false), Opts(23));
        CheckClose(out[0], {c.b, c.hq, c.sq, c.dv}, ref.y, 1e-5);
      }
    }
  }
}

TEST_CASE("Attention 3-D layout with GQA, scale and softcap") {
  AttnCase c = Sizes(2, 4, 2, 3, 17, 8, 3);
  c.scale = 0.3;
  c.softcap = 2.5;
  const AttnInputs in = MakeInputs(c, 7);
  const AttnRef ref = RefAttention(c, in.q, in.k, in.v, nullptr, nullptr);
  const Tensor q3 = SwapHeadSeq(in.q, c.b, c.hq, c.sq, c.d, {c.b, c.sq, c.hq * c.d});
  const Tensor k3 = SwapHeadSeq(in.k, c.b, c.hkv, c.skv, c.d, {c.b, c.skv, c.hkv * c.d});
  const Tensor v3 = SwapHeadSeq(in.v, c.b, c.hkv, c.skv, c.dv, {c.b, c.skv, c.hkv * c.dv});
  const auto out = RunNode("Attention", {q3, k3, v3}, AttnAttrs(c, true), Opts(23, 3));
  // Y back to [B, H, S, Dv] for the comparison.
  Tensor y4 = SwapHeadSeq(out[0], c.b, c.sq, c.hq, c.dv, {c.b, c.hq, c.sq, c.dv});
  CheckClose(y4, {c.b, c.hq, c.sq, c.dv}, ref.y, 1e-5);
  // present_key / present_value are [B, kv_heads, S, D] even for 3-D inputs.
  CheckClose(out[1], {c.b, c.hkv, c.skv, c.d}, ref.present_k, 0);
  CheckClose(out[2], {c.b, c.hkv, c.skv, c.dv}, ref.present_v, 0);
}

TEST_CASE("Attention masks: float 2-D, bool 4-D broadcast, short mask padded with -inf") {
  AttnCase c = Sizes(2, 3, 3, 3, 5, 4, 4);
  const AttnInputs in = MakeInputs(c, 21);
  SUBCASE("float [Sq, T]") {
    const Tensor m = RandomF32({c.sq, c.skv}, 5, -3, 1);
    c.mask = [&](int64_t, int64_t, int64_t i, int64_t j) {
      return static_cast<double>(m.data<float>()[i * c.skv + j]);
    };
    const AttnRef ref = RefAttention(c, in.q, in.k, in.v, nullptr, nullptr);
    const auto out = RunNode("Attention", {in.q, in.k, in.v, m}, {}, Opts(23));
    CheckClose(out[0], {c.b, c.hq, c.sq, c.dv}, ref.y, 1e-5);
  }
  SUBCASE("bool [B, 1, Sq, T]") {
    std::vector<bool> mv;
    for (int64_t i = 0; i < c.b * c.sq * c.skv; ++i) mv.push_back(i % 3 != 1 || i % 5 == 0);
    // Keep key 0 attended everywhere so no row is fully masked.
    for (int64_t r = 0; r < c.b * c.sq; ++r) mv[r * c.skv] = true;
    const Tensor m = Bool({c.b, 1, c.sq, c.skv}, mv);
    c.mask = [&](int64_t b, int64_t, int64_t i, int64_t j) {
      return mv[(b * c.sq + i) * c.skv + j] ? 0.0 : -kInf;
    };
    const AttnRef ref = RefAttention(c, in.q, in.k, in.v, nullptr, nullptr);
    const auto out = RunNode("Attention", {in.q, in.k, in.v, m}, {}, Opts(23));
    CheckClose(out[0], {c.b, c.hq, c.sq, c.dv}, ref.y, 1e-5);
  }
  SUBCASE("float [H, Sq, 3] (short: keys 3, 4 masked)") {
    const Tensor m = RandomF32({c.hq, c.sq, 3}, 9, -1, 1);
    c.mask = [&](int64_t, int64_t h, int64_t i, int64_t j) {
      return j < 3 ? static_cast<double>(m.data<float>()[(h * c.sq + i) * 3 + j]) : -kInf;
    };
    const AttnRef ref = RefAttention(c, in.q, in.k, in.v, nullptr, nullptr);
    const auto out = RunNode("Attention", {in.q, in.k, in.v, m}, {}, Opts(23));
    CheckClose(out[0], {c.b, c.hq, c.sq, c.dv}, ref.y, 1e-5);
  }
}

TEST_CASE("Attention causal with past cache, present outputs and every qk output mode") {
  for (int mode = 0; mode < 4; ++mode) {
    for (bool three_d : {false, true}) {
      AttnCase c = Sizes(2, 4, 2, 3, 3, 6, 5, 4);
      c.causal = true;
      c.softcap = 1.5;
      c.qk_mode = mode;
      CAPTURE(mode);
      CAPTURE(three_d);
      const int64_t T = c.past + c.skv;
      const Tensor m = RandomF32({c.sq, T}, 77, -1, 1);
      c.mask = [&](int64_t, int64_t, int64_t i, int64_t j) {
        return static_cast<double>(m.data<float>()[i * T + j]);
      };
      const AttnInputs in = MakeInputs(c, 31 + static_cast<uint32_t>(mode));
      const AttnRef ref = RefAttention(c, in.q, in.k, in.v, &in.pk, &in.pv);
      Tensor q = in.q, k = in.k, v = in.v;
      if (three_d) {
        q = SwapHeadSeq(in.q, c.b, c.hq, c.sq, c.d, {c.b, c.sq, c.hq * c.d});
        k = SwapHeadSeq(in.k, c.b, c.hkv, c.skv, c.d, {c.b, c.skv, c.hkv * c.d});
        v = SwapHeadSeq(in.v, c.b, c.hkv, c.skv, c.dv, {c.b, c.skv, c.hkv * c.dv});
      }
      const auto out =
          RunNode("Attention", {q, k, v, m, in.pk, in.pv}, AttnAttrs(c, three_d), Opts(23, 4));
      Tensor y = out[0];
      if (three_d) y = SwapHeadSeq(out[0], c.b, c.sq, c.hq, c.dv, {c.b, c.hq, c.sq, c.dv});
      CheckClose(y, {c.b, c.hq, c.sq, c.dv}, ref.y, 1e-5);
      CheckClose(out[1], {c.b, c.hkv, T, c.d}, ref.present_k, 0);
      CheckClose(out[2], {c.b, c.hkv, T, c.dv}, ref.present_v, 0);
      CheckClose(out[3], {c.b, c.hq, c.sq, T}, ref.qk, 1e-5);
    }
  }
}

TEST_CASE("Attention past without present outputs, S=1 decode step") {
  AttnCase c = Sizes(1, 8, 1, 1, 1, 16, 16, 17);
  c.causal = true;
  const AttnInputs in = MakeInputs(c, 41);
  const AttnRef ref = RefAttention(c, in.q, in.k, in.v, &in.pk, &in.pv);
  const auto out = RunNode("Attention", {in.q, in.k, in.v, Tensor(), in.pk, in.pv},
                           AttnAttrs(c, false), Opts(23));
  CheckClose(out[0], {c.b, c.hq, c.sq, c.dv}, ref.y, 1e-5);
}

TEST_CASE("Attention opset 24 nonpad_kv_seqlen, with and without causal") {
  for (bool causal : {false, true}) {
    AttnCase c = Sizes(3, 2, 2, 2, 6, 4, 4);
    c.causal = causal;
    c.nonpad = {6, 4, 2};
    CAPTURE(causal);
    const AttnInputs in = MakeInputs(c, 51);
    const AttnRef ref = RefAttention(c, in.q, in.k, in.v, nullptr, nullptr);
    const Tensor np = I64({3}, c.nonpad);
    const auto out = RunNode("Attention", {in.q, in.k, in.v, Tensor(), Tensor(), Tensor(), np},
                             AttnAttrs(c, false), Opts(24));
    CheckClose(out[0], {c.b, c.hq, c.sq, c.dv}, ref.y, 1e-5);
  }
  // Opset 23 has no 7th input.
  AttnCase c;
  const AttnInputs in = MakeInputs(c, 3);
  CHECK_THROWS(RunNode("Attention", {in.q, in.k, in.v, Tensor(), Tensor(), Tensor(), I64({1}, {1})},
                       {}, Opts(23)));
}

TEST_CASE("Attention float16 / bfloat16 storage") {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    CAPTURE(DTypeName(dt));
    AttnCase c = Sizes(2, 4, 2, 3, 5, 8, 8, 2);
    c.causal = true;
    const AttnInputs in = MakeInputs(c, 61, dt);
    const Tensor m = Rounded(RandomF32({c.sq, c.past + c.skv}, 62, -1, 0), dt);
    c.mask = [&](int64_t, int64_t, int64_t i, int64_t j) {
      return static_cast<double>(m.data<float>()[i * (c.past + c.skv) + j]);
    };
    const AttnRef ref = RefAttention(c, in.q, in.k, in.v, &in.pk, &in.pv);
    const auto out = RunNode(
        "Attention", {As(in.q, dt), As(in.k, dt), As(in.v, dt), As(m, dt), As(in.pk, dt), As(in.pv, dt)},
        AttnAttrs(c, false), Opts(23, 3));
    REQUIRE(out[0].dtype() == dt);
    CheckClose(out[0], {c.b, c.hq, c.sq, c.dv}, ref.y, dt == DType::kFloat16 ? 2e-3 : 1.6e-2);
    CheckClose(out[1], {c.b, c.hkv, c.past + c.skv, c.d}, ref.present_k, 0);
  }
}

TEST_CASE("Attention result does not depend on the thread count") {
  AttnCase c = Sizes(2, 4, 4, 70, 70, 16, 16);  // sq 70: several query-row blocks
  c.causal = true;
  const AttnInputs in = MakeInputs(c, 71);
  const auto one = RunNode("Attention", {in.q, in.k, in.v}, AttnAttrs(c, false), Opts(23, 1, 1));
  const auto three = RunNode("Attention", {in.q, in.k, in.v}, AttnAttrs(c, false), Opts(23, 1, 3));
  CHECK(one[0].BitwiseEquals(three[0]));
  const AttnRef ref = RefAttention(c, in.q, in.k, in.v, nullptr, nullptr);
  CheckClose(one[0], {c.b, c.hq, c.sq, c.dv}, ref.y, 1e-5);
}

TEST_CASE("Attention rejects bad shapes and attributes") {
  const Tensor q4 = RandomF32({1, 4, 3, 8}, 1), k4 = RandomF32({1, 3, 3, 8}, 2);
  // 4 query heads are not a multiple of 3 kv heads.
  CHECK_THROWS(RunNode("Attention", {q4, k4, k4}, {}, Opts(23)));
  // 3-D inputs without head counts.
  const Tensor q3 = RandomF32({1, 3, 8}, 3);
  CHECK_THROWS(RunNode("Attention", {q3, q3, q3}, {}, Opts(23)));
  // Mask longer than the key count / not broadcastable.
  const Tensor q = RandomF32({1, 2, 3, 4}, 4);
  CHECK_THROWS(RunNode("Attention", {q, q, q, RandomF32({3, 4}, 5)}, {}, Opts(23)));
  CHECK_THROWS(RunNode("Attention", {q, q, q, RandomF32({2, 3}, 5)}, {}, Opts(23)));
  CHECK_THROWS(RunNode("Attention", {q, q, q}, {AttrInt("qk_matmul_output_mode", 4)}, Opts(23)));
  // past_key without past_value.
  CHECK_THROWS(RunNode("Attention", {q, q, q, Tensor(), q}, {}, Opts(23)));
}

// ---- RotaryEmbedding reference ----
// x in 4-D layout [B, H, S, D]; cos/sin rows chosen by row(b, s).
std::vector<double> RefRotary(const Tensor& x, const Tensor& cosc, const Tensor& sinc,
                              const std::function<int64_t(int64_t, int64_t)>& row, int64_t rd,
                              bool interleaved) {
  const int64_t B = x.dim(0), H = x.dim(1), S = x.dim(2), D = x.dim(3), half = rd / 2;
  std::vector<double> y(static_cast<size_t>(x.num_elements()));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s) {
        const float* xr = x.data<float>() + ((b * H + h) * S + s) * D;
        double* yr = y.data() + ((b * H + h) * S + s) * D;
        const int64_t r = row(b, s);
        for (int64_t t = 0; t < half; ++t) {
          const double c = cosc.data<float>()[r * half + t], sn = sinc.data<float>()[r * half + t];
          const int64_t i1 = interleaved ? 2 * t : t, i2 = interleaved ? 2 * t + 1 : t + half;
          yr[i1] = c * xr[i1] - sn * xr[i2];
          yr[i2] = sn * xr[i1] + c * xr[i2];
        }
        for (int64_t d = rd; d < D; ++d) yr[d] = xr[d];
      }
  return y;
}

TEST_CASE("RotaryEmbedding 4-D / 3-D, interleaved, partial, with and without position_ids") {
  const int64_t B = 2, H = 3, S = 5, D = 10;
  const Tensor x = RandomF32({B, H, S, D}, 81);
  for (bool interleaved : {false, true}) {
    for (int64_t rd : {int64_t{0}, int64_t{6}}) {
      for (bool with_pos : {true, false}) {
        for (bool three_d : {false, true}) {
          CAPTURE(interleaved);
          CAPTURE(rd);
          CAPTURE(with_pos);
          CAPTURE(three_d);
          const int64_t rdim = rd == 0 ? D : rd, half = rdim / 2;
          const int64_t max_pos = 9;
          Tensor cosc, sinc, pos;
          std::vector<int64_t> pv;
          for (int64_t i = 0; i < B * S; ++i) pv.push_back((i * 7 + 3) % max_pos);
          if (with_pos) {
            cosc = RandomF32({max_pos, half}, 82);
            sinc = RandomF32({max_pos, half}, 83);
            pos = I64({B, S}, pv);
          } else {
            cosc = RandomF32({B, S, half}, 84);
            sinc = RandomF32({B, S, half}, 85);
          }
          auto row = [&](int64_t b, int64_t s) { return with_pos ? pv[b * S + s] : b * S + s; };
          const auto want = RefRotary(x, cosc, sinc, row, rdim, interleaved);
          std::vector<graph::Attribute> attrs = {AttrInt("interleaved", interleaved ? 1 : 0)};
          if (rd) attrs.push_back(AttrInt("rotary_embedding_dim", rd));
          std::vector<Tensor> inputs = {x, cosc, sinc};
          if (three_d) {
            inputs[0] = SwapHeadSeq(x, B, H, S, D, {B, S, H * D});
            attrs.push_back(AttrInt("num_heads", H));
          }
          if (with_pos) inputs.push_back(pos);
          const auto out = RunNode("RotaryEmbedding", inputs, attrs, Opts(23));
          Tensor y = out[0];
          if (three_d) {
            REQUIRE(y.dims() == Dims{B, S, H * D});
            y = SwapHeadSeq(y, B, S, H, D, {B, H, S, D});
          }
          CheckClose(y, {B, H, S, D}, want, 1e-6);
        }
      }
    }
  }
}

TEST_CASE("RotaryEmbedding float16 / bfloat16 and bad position ids") {
  const int64_t B = 1, H = 2, S = 3, D = 8;
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const Tensor x = Rounded(RandomF32({B, H, S, D}, 91), dt);
    const Tensor cosc = Rounded(RandomF32({4, D / 2}, 92), dt);
    const Tensor sinc = Rounded(RandomF32({4, D / 2}, 93), dt);
    const std::vector<int64_t> pv = {3, 0, 2};
    const auto want = RefRotary(x, cosc, sinc, [&](int64_t, int64_t s) { return pv[s]; }, D, false);
    const auto out = RunNode("RotaryEmbedding", {As(x, dt), As(cosc, dt), As(sinc, dt), I64({B, S}, pv)},
                             {}, Opts(23));
    REQUIRE(out[0].dtype() == dt);
    CheckClose(out[0], {B, H, S, D}, want, dt == DType::kFloat16 ? 2e-3 : 1.6e-2);
  }
  const Tensor x = RandomF32({B, H, S, D}, 94), cosc = RandomF32({4, D / 2}, 95);
  CHECK_THROWS(RunNode("RotaryEmbedding", {x, cosc, cosc, I64({B, S}, {0, 4, 1})}, {}, Opts(23)));
  CHECK_THROWS(RunNode("RotaryEmbedding", {x, cosc, cosc, I64({B, S}, {0, -1, 1})}, {}, Opts(23)));
  // Odd rotary dim, rotary dim beyond head size, 3-D without num_heads.
  CHECK_THROWS(RunNode("RotaryEmbedding", {x, cosc, cosc, I64({B, S}, {0, 1, 1})},
                       {AttrInt("rotary_embedding_dim", 7)}, Opts(23)));
  CHECK_THROWS(RunNode("RotaryEmbedding", {x, cosc, cosc, I64({B, S}, {0, 1, 1})},
                       {AttrInt("rotary_embedding_dim", 10)}, Opts(23)));
  CHECK_THROWS(RunNode("RotaryEmbedding", {RandomF32({B, S, H * D}, 96), cosc, cosc,
                                           I64({B, S}, {0, 1, 1})},
                       {}, Opts(23)));
}

// ---- RMSNormalization reference ----
std::vector<double> RefRms(const Tensor& x, const std::vector<double>& scale, int64_t axis,
                           double eps) {
  int64_t rows = 1, n = 1;
  for (int64_t i = 0; i < x.rank(); ++i) (i < axis ? rows : n) *= x.dim(i);
  const auto xv = Values(x);
  std::vector<double> y(xv.size());
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t j = 0; j < n; ++j) ss += xv[r * n + j] * xv[r * n + j];
    const double inv = 1.0 / std::sqrt(ss / n + eps);
    for (int64_t j = 0; j < n; ++j) y[r * n + j] = xv[r * n + j] * inv * scale[j];
  }
  return y;
}

TEST_CASE("RMSNormalization axes, epsilon and broadcast scale") {
  const Dims xd = {2, 3, 17};
  const Tensor x = RandomF32(xd, 101, -3, 3);
  for (int64_t axis : {-1, 1, 0, -3}) {
    CAPTURE(axis);
    const int64_t a = axis < 0 ? axis + 3 : axis;
    const Dims nd(xd.begin() + a, xd.end());
    const Tensor scale = RandomF32(nd, 102);
    const auto sv = Values(scale);
    const auto out = RunNode("RMSNormalization", {x, scale},
                             {AttrInt("axis", axis), AttrFloat("epsilon", 1e-3f)}, Opts(23));
    CheckClose(out[0], xd, RefRms(x, sv, a, 1e-3), 1e-5);
  }
  // Scale [17] broadcast over the normalized shape [3, 17] (axis 1).
  const Tensor s1 = RandomF32({17}, 103);
  std::vector<double> sv;
  for (int i = 0; i < 3; ++i)
    for (double v : Values(s1)) sv.push_back(v);
  const auto out = RunNode("RMSNormalization", {x, s1}, {AttrInt("axis", 1)}, Opts(23));
  CheckClose(out[0], xd, RefRms(x, sv, 1, 1e-5), 1e-5);
  // Default axis with a single-element row length and a 1-D input.
  const Tensor x1 = RandomF32({1}, 104);
  const auto o1 = RunNode("RMSNormalization", {x1, F32({1}, {2.0f})}, {}, Opts(23));
  CheckClose(o1[0], {1}, RefRms(x1, {2.0}, 0, 1e-5), 1e-5);
  // Errors: scale that does not broadcast, stash_type other than 1.
  CHECK_THROWS(RunNode("RMSNormalization", {x, RandomF32({4}, 1)}, {}, Opts(23)));
  CHECK_THROWS(RunNode("RMSNormalization", {x, s1}, {AttrInt("stash_type", 10)}, Opts(23)));
}

TEST_CASE("RMSNormalization float16 / bfloat16 X and scale (Y takes the scale's type)") {
  const Dims xd = {3, 33};
  const Tensor x32 = RandomF32(xd, 111, -2, 2);
  const Tensor s32 = RandomF32({33}, 112);
  for (DType xt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (DType st : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      CAPTURE(DTypeName(xt));
      CAPTURE(DTypeName(st));
      const Tensor xr = Rounded(x32, xt), sr = Rounded(s32, st);
      const auto out = RunNode("RMSNormalization", {As(xr, xt), As(sr, st)}, {}, Opts(23));
      REQUIRE(out[0].dtype() == st);
      const double tol = st == DType::kFloat32 ? 1e-5 : st == DType::kFloat16 ? 2e-3 : 1.6e-2;
      CheckClose(out[0], xd, RefRms(xr, Values(sr), 1, 1e-5), tol);
    }
  }
}

}  // namespace
}  // namespace simplecpp::testing
