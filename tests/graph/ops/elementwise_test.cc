// Tests for the elementwise op family (graph/ops/elementwise*.cc) through the real executor, and
// for the broadcast plan (graph/ops/broadcast.h): broadcasting patterns, legacy opset < 7
// broadcast attributes, dtypes, attributes, integer edge cases, errors, thread-count determinism.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "graph/ops/broadcast.h"
#include "graph/op_test_util.h"
#include "simplecpp/error.h"

namespace simplecpp {
namespace {

using testing::AttrFloat;
using testing::AttrInt;
using testing::AttrString;
using testing::Bool;
using testing::F32;
using testing::I32;
using testing::I64;
using testing::RandomF32;
using testing::RunNode;
using testing::RunNodeOptions;

RunNodeOptions Opset(int64_t v) {
  RunNodeOptions o;
  o.opset = v;
  return o;
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}
template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

// Naive numpy broadcast reference for two float tensors.
std::vector<float> NaiveBroadcastAdd(const Tensor& a, const Tensor& b, const Dims& out) {
  const size_t rank = out.size();
  std::vector<float> result(static_cast<size_t>(CheckedNumElements(out)));
  std::vector<int64_t> idx(rank, 0);
  auto offset = [&](const Tensor& t) {
    int64_t off = 0;
    const size_t lead = rank - t.dims().size();
    for (size_t k = lead; k < rank; ++k) {
      const int64_t d = t.dims()[k - lead];
      off = off * d + (d == 1 ? 0 : idx[k]);
    }
    return off;
  };
  for (size_t i = 0; i < result.size(); ++i) {
    result[i] = a.data<float>()[offset(a)] + b.data<float>()[offset(b)];
    for (size_t k = rank; k-- > 0;) {
      if (++idx[k] < out[k]) break;
      idx[k] = 0;
    }
  }
  return result;
}

TEST_CASE("Add broadcasting patterns match a naive reference") {
  struct Case {
    Dims a, b, out;
  };
  const Case cases[] = {
      {{3, 1}, {1, 4}, {3, 4}},       {{}, {2, 3}, {2, 3}},          {{2, 3}, {}, {2, 3}},
      {{2, 3, 4}, {4}, {2, 3, 4}},    {{2, 1, 4}, {3, 1}, {2, 3, 4}}, {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
      {{2, 3, 4}, {2, 3, 1}, {2, 3, 4}}, {{1, 3, 1}, {2, 1, 5}, {2, 3, 5}}, {{0, 3}, {3}, {0, 3}},
      {{5, 1, 1, 7}, {1, 6, 1}, {5, 1, 6, 7}}, {{1}, {1}, {1}},    {{1000, 1}, {1, 70}, {1000, 70}},
  };
  for (const Case& c : cases) {
    CAPTURE(DimsToString(c.a));
    CAPTURE(DimsToString(c.b));
    const Tensor a = RandomF32(c.a, 1);
    const Tensor b = RandomF32(c.b, 2);
    for (int threads : {1, 3}) {
      RunNodeOptions opt;
      opt.threads = threads;
      const auto out = RunNode("Add", {a, b}, {}, opt);
      CHECK(out[0].dims() == c.out);
      CHECK(Floats(out[0]) == NaiveBroadcastAdd(a, b, c.out));
    }
  }
}

TEST_CASE("Broadcast errors and BroadcastPlan structure") {
  CHECK_THROWS_AS(RunNode("Add", {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({2}, {1, 2})}), Error);
  Dims out;
  std::string why;
  CHECK_FALSE(graph::BroadcastShape({{2, 3}, {4, 3}}, &out, &why));
  CHECK(why.find("[2,3]") != std::string::npos);
  CHECK(graph::BroadcastShape({{2, 1}, {0}}, &out, &why));
  CHECK(out == Dims{2, 0});

  // [2,3,4] x [2,3,1]: dims merge into [6,4]: 6 runs of 4 with b repeated.
  graph::BroadcastPlan plan({{2, 3, 4}, {2, 3, 1}}, {2, 3, 4});
  CHECK(plan.num_runs() == 6);
  CHECK(plan.run_length() == 4);
  CHECK(plan.step(0) == 1);
  CHECK(plan.step(1) == 0);
  std::vector<int64_t> b_offsets;
  plan.ForEachRun(0, plan.num_runs(), [&](int64_t o, const int64_t* in, int64_t n) {
    CHECK(in[0] == o);
    b_offsets.push_back(in[1]);
  });
  CHECK(b_offsets == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
  // Equal shapes: a single run.
  graph::BroadcastPlan same({{7, 9}, {7, 9}}, {7, 9});
  CHECK(same.num_runs() == 1);
  CHECK(same.run_length() == 63);
}

TEST_CASE("Large broadcast is identical for any thread count") {
  const Tensor a = RandomF32({300, 1, 200}, 5);
  const Tensor b = RandomF32({1, 7, 200}, 6);
  const Tensor c = RandomF32({100000}, 7);
  RunNodeOptions one, four;
  four.threads = 4;
  CHECK(RunNode("Mul", {a, b}, {}, one)[0].BitwiseEquals(RunNode("Mul", {a, b}, {}, four)[0]));
  CHECK(RunNode("Tanh", {c}, {}, one)[0].BitwiseEquals(RunNode("Tanh", {c}, {}, four)[0]));
  CHECK(RunNode("Sub", {c, c}, {}, four)[0].BitwiseEquals(Tensor(DType::kFloat32, {100000})));
}

TEST_CASE("Legacy opset 6 broadcast attributes") {
  RunNodeOptions o6;
  o6.opset = 6;
  const Tensor a = F32({2, 3, 2}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  const Tensor b = F32({3}, {1, 2, 3});
  auto out = RunNode("Add", {a, b}, {AttrInt("broadcast", 1), AttrInt("axis", 1)}, o6);
  CHECK(out[0].dims() == Dims{2, 3, 2});
  CHECK(Floats(out[0]) == std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  const Tensor b2 = F32({2}, {10, 20});
  out = RunNode("Mul", {F32({2, 2}, {1, 2, 3, 4}), b2}, {AttrInt("broadcast", 1)}, o6);
  CHECK(Floats(out[0]) == std::vector<float>{10, 40, 30, 80});
  // broadcast=0 requires equal shapes.
  CHECK_THROWS_AS(RunNode("Add", {a, b}, {}, o6), Error);
}

TEST_CASE("Integer arithmetic: truncating division, division by zero, Python mod") {
  RunNodeOptions o13;
  o13.opset = 13;
  const Tensor a = I32({6}, {7, -7, 7, -7, 5, std::numeric_limits<int32_t>::min()});
  const Tensor b = I32({6}, {2, 2, -2, 0, 0, -1});
  CHECK(Values<int32_t>(RunNode("Div", {a, b})[0]) ==
        std::vector<int32_t>{3, -3, -3, 0, 0, std::numeric_limits<int32_t>::min()});
  CHECK(Values<int32_t>(RunNode("Mod", {a, b}, {}, o13)[0]) ==
        std::vector<int32_t>{1, 1, -1, 0, 0, 0});
  CHECK(Values<int32_t>(RunNode("Mod", {a, b}, {AttrInt("fmod", 1)}, o13)[0]) ==
        std::vector<int32_t>{1, -1, 1, 0, 0, 0});
  const Tensor x = I64({3}, {1, 2, 3});
  CHECK(Values<int64_t>(RunNode("Add", {x, I64({}, {10})})[0]) == std::vector<int64_t>{11, 12, 13});
  CHECK(Values<int64_t>(RunNode("Max", {x, I64({1}, {2})})[0]) == std::vector<int64_t>{2, 2, 3});
}

TEST_CASE("Pow type combinations") {
  auto out = RunNode("Pow", {I32({3}, {2, 3, 4}), F32({3}, {2.0f, 0.5f, -1.0f})}, {}, Opset(15));
  CHECK(out[0].dtype() == DType::kInt32);
  CHECK(Values<int32_t>(out[0]) == std::vector<int32_t>{4, 1, 0});
  out = RunNode("Pow", {F32({3}, {2, -2, 9}), I64({1}, {3})}, {}, Opset(15));
  CHECK(Floats(out[0]) == std::vector<float>{8, -8, 729});
  out = RunNode("Pow", {F32({2}, {4, 9}), F32({}, {0.5f})});
  CHECK(Floats(out[0]) == std::vector<float>{2, 3});
  // Before opset 12 the exponent must have the base's dtype.
  CHECK_THROWS_AS(RunNode("Pow", {F32({1}, {2}), I64({1}, {3})}, {}, Opset(7)), Error);
}

TEST_CASE("Comparisons and logic give bool") {
  const Tensor a = F32({2, 2}, {1, 2, 3, 4});
  const Tensor b = F32({2}, {2, 3});
  auto lt = RunNode("Less", {a, b});
  CHECK(lt[0].dtype() == DType::kBool);
  CHECK(Values<uint8_t>(lt[0]) == std::vector<uint8_t>{1, 1, 0, 0});
  CHECK(Values<uint8_t>(RunNode("GreaterOrEqual", {a, b})[0]) == std::vector<uint8_t>{0, 0, 1, 1});
  CHECK(Values<uint8_t>(RunNode("Equal", {I32({3}, {1, 2, 3}), I32({1}, {2})})[0]) ==
        std::vector<uint8_t>{0, 1, 0});
  const Tensor p = Bool({4}, {false, false, true, true});
  const Tensor q = Bool({4}, {false, true, false, true});
  CHECK(Values<uint8_t>(RunNode("And", {p, q})[0]) == std::vector<uint8_t>{0, 0, 0, 1});
  CHECK(Values<uint8_t>(RunNode("Or", {p, q})[0]) == std::vector<uint8_t>{0, 1, 1, 1});
  CHECK(Values<uint8_t>(RunNode("Xor", {p, q})[0]) == std::vector<uint8_t>{0, 1, 1, 0});
  CHECK(Values<uint8_t>(RunNode("Not", {p})[0]) == std::vector<uint8_t>{1, 1, 0, 0});
  // Less is not defined on bool.
  CHECK_THROWS_AS(RunNode("Less", {p, q}), Error);

  Tensor s1(DType::kString, {3});
  s1.strings() = {"a", "b", "c"};
  Tensor s2(DType::kString, {1});
  s2.strings() = {"b"};
  CHECK(Values<uint8_t>(RunNode("Equal", {s1, s2}, {}, Opset(19))[0]) ==
        std::vector<uint8_t>{0, 1, 0});
}

TEST_CASE("Bitwise ops and BitShift") {
  Tensor x = Tensor::FromVector<uint8_t>(DType::kUInt8, {3}, {1, 16, 255});
  Tensor s = Tensor::FromVector<uint8_t>(DType::kUInt8, {3}, {2, 1, 8});
  auto out = RunNode("BitShift", {x, s}, {AttrString("direction", "LEFT")}, Opset(11));
  CHECK(Values<uint8_t>(out[0]) == std::vector<uint8_t>{4, 32, 0});
  out = RunNode("BitShift", {x, s}, {AttrString("direction", "RIGHT")}, Opset(11));
  CHECK(Values<uint8_t>(out[0]) == std::vector<uint8_t>{0, 8, 0});
  CHECK_THROWS_AS(RunNode("BitShift", {x, s}, {AttrString("direction", "UP")}, Opset(11)),
                  Error);
  CHECK(Values<int32_t>(RunNode("BitwiseAnd", {I32({2}, {12, -1}), I32({2}, {10, 7})})[0]) ==
        std::vector<int32_t>{8, 7});
  CHECK(Values<int32_t>(RunNode("BitwiseNot", {I32({2}, {0, -1})})[0]) ==
        std::vector<int32_t>{-1, 0});
}

TEST_CASE("Variadic Max Min Sum Mean with broadcasting") {
  const Tensor a = F32({3}, {1, 5, 3});
  const Tensor b = F32({2, 1}, {2, 4});
  const Tensor c = F32({}, {3});
  auto sum = RunNode("Sum", {a, b, c});
  CHECK(sum[0].dims() == Dims{2, 3});
  CHECK(Floats(sum[0]) == std::vector<float>{6, 10, 8, 8, 12, 10});
  CHECK(Floats(RunNode("Mean", {a, b, c})[0]) == std::vector<float>{2, 10.0f / 3, 8.0f / 3, 8.0f / 3, 4, 10.0f / 3});
  CHECK(Floats(RunNode("Max", {a, b, c})[0]) == std::vector<float>{3, 5, 3, 4, 5, 4});
  CHECK(Floats(RunNode("Min", {a, b})[0]) == std::vector<float>{1, 2, 2, 1, 4, 3});
  CHECK(Floats(RunNode("Max", {a})[0]) == std::vector<float>{1, 5, 3});
  CHECK(std::isnan(Floats(RunNode("Max", {F32({1}, {NAN}), F32({1}, {1})})[0])[0]));
}

TEST_CASE("Where broadcasts condition, X and Y") {
  const Tensor cond = Bool({2, 1}, {true, false});
  auto out = RunNode("Where", {cond, F32({3}, {1, 2, 3}), F32({}, {-1})});
  CHECK(out[0].dims() == Dims{2, 3});
  CHECK(Floats(out[0]) == std::vector<float>{1, 2, 3, -1, -1, -1});
  out = RunNode("Where", {Bool({2}, {false, true}), I64({2}, {1, 2}), I64({2}, {10, 20})});
  CHECK(Values<int64_t>(out[0]) == std::vector<int64_t>{10, 2});
  Tensor sx(DType::kString, {2});
  sx.strings() = {"x0", "x1"};
  Tensor sy(DType::kString, {});
  sy.strings() = {"y"};
  out = RunNode("Where", {Bool({2, 1}, {true, false}), sx, sy});
  CHECK(out[0].strings() == std::vector<std::string>{"x0", "x1", "y", "y"});
}

TEST_CASE("Clip: attributes before 11, optional inputs after, integers") {
  const Tensor x = F32({5}, {-3, -1, 0, 1, 3});
  CHECK(Floats(RunNode("Clip", {x}, {AttrFloat("min", -1.5f), AttrFloat("max", 2)}, Opset(6))[0]) ==
        std::vector<float>{-1.5f, -1, 0, 1, 2});
  CHECK(Floats(RunNode("Clip", {x, F32({}, {-1}), F32({}, {1})}, {}, Opset(13))[0]) ==
        std::vector<float>{-1, -1, 0, 1, 1});
  CHECK(Floats(RunNode("Clip", {x, Tensor(), F32({}, {0})}, {}, Opset(13))[0]) ==
        std::vector<float>{-3, -1, 0, 0, 0});
  CHECK(Floats(RunNode("Clip", {x}, {}, Opset(13))[0]) == Floats(x));
  Tensor xi = Tensor::FromVector<int8_t>(DType::kInt8, {3}, {-100, 5, 100});
  Tensor lo = Tensor::FromVector<int8_t>(DType::kInt8, {}, {-10});
  CHECK(Values<int8_t>(RunNode("Clip", {xi, lo}, {}, Opset(13))[0]) ==
        std::vector<int8_t>{-10, 5, 100});
  CHECK_THROWS_AS(RunNode("Clip", {x, F32({2}, {0, 1})}, {}, Opset(13)), Error);
}

TEST_CASE("Unary ops: attributes, dtypes, versions") {
  const Tensor x = F32({4}, {-2, -0.5f, 0.5f, 2});
  CHECK(Floats(RunNode("Relu", {x})[0]) == std::vector<float>{0, 0, 0.5f, 2});
  CHECK(Floats(RunNode("LeakyRelu", {x}, {AttrFloat("alpha", 0.5f)})[0]) ==
        std::vector<float>{-1, -0.25f, 0.5f, 2});
  CHECK(Values<int32_t>(RunNode("Relu", {I32({2}, {-3, 3})}, {}, Opset(14))[0]) ==
        std::vector<int32_t>{0, 3});
  CHECK(Values<int32_t>(RunNode("Abs", {I32({2}, {-3, 3})})[0]) == std::vector<int32_t>{3, 3});
  const auto gelu = Floats(RunNode("Gelu", {x}, {}, Opset(20))[0]);
  const auto gelu_tanh = Floats(RunNode("Gelu", {x}, {AttrString("approximate", "tanh")}, Opset(20))[0]);
  for (int i = 0; i < 4; ++i) {
    const double v = x.data<float>()[i];
    CHECK(gelu[i] == doctest::Approx(0.5 * v * std::erfc(-v / std::sqrt(2.0))).epsilon(1e-6));
    CHECK(gelu_tanh[i] ==
          doctest::Approx(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))))
              .epsilon(1e-5));
  }
  CHECK_THROWS_AS(RunNode("Gelu", {x}, {AttrString("approximate", "exact")}, Opset(20)), Error);
  // Float-only ops refuse integers with Unsupported.
  try {
    RunNode("Exp", {I32({1}, {1})});
    FAIL("Exp on int32 should be refused");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kUnsupported);
  }
  const Tensor d = Tensor::FromVector<double>(DType::kFloat64, {3}, {-1.0, 0.0, 2.5});
  CHECK(Values<double>(RunNode("Round", {d}, {}, Opset(22))[0]) == std::vector<double>{-1, 0, 2});
  CHECK(Values<double>(RunNode("Sigmoid", {d})[0])[1] == 0.5);
  const Tensor inf = F32({4}, {INFINITY, -INFINITY, NAN, 1});
  CHECK(Values<uint8_t>(RunNode("IsInf", {inf}, {AttrInt("detect_negative", 0)}, Opset(20))[0]) ==
        std::vector<uint8_t>{1, 0, 0, 0});
  CHECK(Values<uint8_t>(RunNode("IsNaN", {inf}, {}, Opset(20))[0]) ==
        std::vector<uint8_t>{0, 0, 1, 0});
  CHECK(Floats(RunNode("Swish", {F32({1}, {1})}, {AttrFloat("alpha", 2)}, Opset(24))[0])[0] ==
        doctest::Approx(1 / (1 + std::exp(-2.0))));
  CHECK(Floats(RunNode("Shrink", {x}, {AttrFloat("lambd", 1), AttrFloat("bias", 0.5f)}, Opset(9))[0]) ==
        std::vector<float>{-1.5f, 0, 0, 1.5f});
  CHECK(Floats(RunNode("Celu", {F32({1}, {-1})}, {AttrFloat("alpha", 2)}, Opset(12))[0])[0] ==
        doctest::Approx(2 * std::expm1(-0.5)));
  // Opset 1 Relu with the legacy consumed_inputs attribute still runs.
  CHECK(Floats(RunNode("Relu", {x}, {testing::AttrInts("consumed_inputs", {0})}, Opset(1))[0]) ==
        std::vector<float>{0, 0, 0.5f, 2});
}

TEST_CASE("PRelu broadcasts the slope to X only") {
  const Tensor x = F32({2, 3}, {-1, -2, 3, -4, 5, -6});
  auto out = RunNode("PRelu", {x, F32({3}, {0.1f, 0.2f, 0.3f})});
  CHECK(Floats(out[0]) == std::vector<float>{-0.1f, -0.4f, 3, -4 * 0.1f, 5, -6 * 0.3f});
  CHECK_THROWS_AS(RunNode("PRelu", {F32({3}, {1, 2, 3}), F32({2, 3}, {1, 2, 3, 4, 5, 6})}), Error);
}

}  // namespace
}  // namespace simplecpp
