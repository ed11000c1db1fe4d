// Tests for graph/ops/msft_rotary.cc (com.microsoft RotaryEmbedding) through the executor against
// a float64 reference written from the operator definition: [B, S, hidden] with and without
// num_heads, [B, N, S, H], interleaved or not, a partial rotary dimension, position_ids [B, S] or
// one start position; float16 / bfloat16 within one 16-bit ulp of the rounded float32 result;
// and the errors. float32 tolerance: |got - ref| <= 1e-5 * max(1, |ref|).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "graph/ops/float16_compare.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

RunNodeOptions Ms(std::vector<int> constant_inputs = {}, int threads = 1) {
  RunNodeOptions o;
  o.opset = 1;
  o.domain = "com.microsoft";
  o.constant_inputs = std::move(constant_inputs);
  o.threads = threads;
  return o;
}

struct Layout {
  int64_t b, s, n, h;
  bool four_d;  // [B, N, S, H], else [B, S, N*H]
  int64_t Index(int64_t bi, int64_t si, int64_t ni, int64_t d) const {
    return four_d ? ((bi * n + ni) * s + si) * h + d : ((bi * s + si) * n + ni) * h + d;
  }
};

// The rotation of every head as the operator defines it, in float64.
std::vector<double> Reference(const Layout& l, const Tensor& x, const std::vector<int64_t>& pos,
                              const Tensor& cos, const Tensor& sin, int64_t rd, bool interleaved) {
  std::vector<double> y(static_cast<size_t>(x.num_elements()));
  const int64_t half = rd / 2;
  for (int64_t b = 0; b < l.b; ++b) {
    for (int64_t s = 0; s < l.s; ++s) {
      const int64_t p = pos[b * l.s + s];
      for (int64_t n = 0; n < l.n; ++n) {
        auto X = [&](int64_t d) {
          return static_cast<double>(x.data<float>()[l.Index(b, s, n, d)]);
        };
        for (int64_t d = 0; d < l.h; ++d) {
          double v = X(d);
          if (d < rd) {
            const int64_t t = interleaved ? d / 2 : d % half;
            const double c = cos.data<float>()[p * half + t], sn = sin.data<float>()[p * half + t];
            const bool first = interleaved ? d % 2 == 0 : d < half;
            const int64_t partner =
                interleaved ? (first ? d + 1 : d - 1) : (first ? d + half : d - half);
            v = first ? X(d) * c - X(partner) * sn : X(d) * c + X(partner) * sn;
          }
          y[static_cast<size_t>(l.Index(b, s, n, d))] = v;
        }
      }
    }
  }
  return y;
}

void CheckClose(const Tensor& got, const std::vector<double>& ref) {
  REQUIRE(got.num_elements() == static_cast<int64_t>(ref.size()));
  int bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = got.data<float>()[i];
    if (!(std::fabs(g - ref[i]) <= 1e-5 * std::max(1.0, std::fabs(ref[i]))) && bad++ < 3) {
      CHECK_MESSAGE(false, "y[" << i << "] = " << g << ", reference " << ref[i]);
    }
  }
  CHECK(bad == 0);
}

void CheckErrorNames(const std::function<void()>& fn, const std::string& what) {
  try {
    fn();
    FAIL("expected an error");
  } catch (const Error& e) {
    const std::string msg = e.what();
    CHECK_MESSAGE(msg.find("RotaryEmbedding_under_test") != std::string::npos, msg);
    CHECK_MESSAGE(msg.find(what) != std::string::npos, msg);
  }
}

TEST_CASE("com.microsoft RotaryEmbedding: float32 matches a float64 reference") {
  uint32_t seed = 1;
  const int64_t max_pos = 16;
  for (bool four_d : {false, true}) {
    for (bool interleaved : {false, true}) {
      for (int64_t rd_attr : {0, 4}) {  // whole head (8) or a partial rotation
        const Layout l{2, 3, 2, 8, four_d};
        const int64_t rd = rd_attr > 0 ? rd_attr : l.h;
        const Dims xd = four_d ? Dims{l.b, l.n, l.s, l.h} : Dims{l.b, l.s, l.n * l.h};
        const Tensor x = RandomF32(xd, seed++, -2.0f, 2.0f);
        const Tensor cos = RandomF32({max_pos, rd / 2}, seed++);
        const Tensor sin = RandomF32({max_pos, rd / 2}, seed++);
        const std::vector<int64_t> ids = {3, 0, 15, 7, 7, 1};
        std::vector<graph::Attribute> attrs = {AttrInt("interleaved", interleaved ? 1 : 0)};
        if (rd_attr > 0 || !four_d) attrs.push_back(AttrInt("num_heads", l.n));
        if (rd_attr > 0) attrs.push_back(AttrInt("rotary_embedding_dim", rd_attr));
        INFO("4-D " << four_d << " interleaved " << interleaved << " rd " << rd);
        const auto y =
            RunNode("RotaryEmbedding", {x, I64({l.b, l.s}, ids), cos, sin}, attrs, Ms({2, 3}, 2));
        CHECK(y[0].dims() == xd);
        CheckClose(y[0], Reference(l, x, ids, cos, sin, rd, interleaved));
        // One start position (shape [1] and a scalar): positions 5 + s in every batch row.
        const std::vector<int64_t> from5 = {5, 6, 7, 5, 6, 7};
        CheckClose(RunNode("RotaryEmbedding", {x, I64({1}, {5}), cos, sin}, attrs, Ms())[0],
                   Reference(l, x, from5, cos, sin, rd, interleaved));
        CheckClose(RunNode("RotaryEmbedding", {x, I64({}, {5}), cos, sin}, attrs, Ms())[0],
                   Reference(l, x, from5, cos, sin, rd, interleaved));
      }
    }
  }
  // 3-D without num_heads: the head size is 2 * cos_cache's last dim.
  const Layout l{1, 4, 3, 6, false};
  const Tensor x = RandomF32({1, 4, 18}, 50);
  const Tensor cos = RandomF32({8, 3}, 51), sin = RandomF32({8, 3}, 52);
  const std::vector<int64_t> ids = {0, 1, 2, 3};
  CheckClose(RunNode("RotaryEmbedding", {x, I64({1, 4}, ids), cos, sin}, {}, Ms())[0],
             Reference(l, x, ids, cos, sin, 6, false));
}

TEST_CASE("com.microsoft RotaryEmbedding: float16 and bfloat16 round the float32 result once") {
  const Tensor x = RandomF32({2, 3, 32}, 60, -2.0f, 2.0f);
  const Tensor cos = RandomF32({10, 4}, 61), sin = RandomF32({10, 4}, 62);
  const Tensor ids = I64({2, 3}, {0, 4, 9, 2, 2, 8});
  for (int il : {0, 1}) {
    f16::Check16Both("RotaryEmbedding", {x, ids, cos, sin},
                     {AttrInt("num_heads", 4), AttrInt("interleaved", il)}, Ms({2, 3}));
  }
}

TEST_CASE("com.microsoft RotaryEmbedding: errors name node, op and what is wrong") {
  const Tensor x = RandomF32({1, 2, 16}, 1);
  const Tensor cos = RandomF32({4, 4}, 2), sin = RandomF32({4, 4}, 3);
  const Tensor ids = I64({1, 2}, {0, 1});
  const std::vector<graph::Attribute> heads = {AttrInt("num_heads", 2)};
  auto run = [&](const Tensor& xi, const Tensor& p, const Tensor& c, const Tensor& s,
                 const std::vector<graph::Attribute>& a) {
    RunNode("RotaryEmbedding", {xi, p, c, s}, a, Ms());
  };
  CheckErrorNames(
      [&] {
        run(x, ids, RandomF32({4, 3}, 4), RandomF32({4, 3}, 5), heads);
      },
      "cos_cache");
  CheckErrorNames([&] { run(x, ids, cos, RandomF32({5, 4}, 4), heads); }, "sin_cache");
  CheckErrorNames([&] { run(x, I64({1, 2}, {0, 4}), cos, sin, heads); }, "outside the cache");
  CheckErrorNames([&] { run(x, I64({2, 1}, {0, 1}), cos, sin, heads); }, "position_ids");
  CheckErrorNames(
      [&] {
        run(RandomF32({1, 2, 2, 8}, 6), ids, cos, sin, {AttrInt("num_heads", 3)});
      },
      "num_heads");
  CheckErrorNames(
      [&] {
        run(x, ids, cos, sin, {AttrInt("num_heads", 2), AttrInt("is_packed_batching", 1)});
      },
      "is_packed_batching");
  CheckErrorNames([&] { run(x, ids, cos, sin, {AttrInt("rotary_embedding_dim", 8)}); },
                  "num_heads must be given");
  CheckErrorNames([&] { run(RandomF32({2, 16}, 7), ids, cos, sin, heads); }, "input must be");
  CheckErrorNames(
      [&] {
        run(x, ids, RandomF32({4, 8}, 8), RandomF32({4, 8}, 9),
            {AttrInt("num_heads", 2), AttrInt("rotary_embedding_dim", 16)});
      },
      "exceeds the head size");
}

}  // namespace
}  // namespace simplecpp::testing
