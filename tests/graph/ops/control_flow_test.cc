// Control-flow ops (graph/ops/control_flow.cc): Scan-8, the batch-major form with sequence_lens,
// checked against a scalar reference, plus its shape and sequence_lens errors.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "simplecpp/error.h"

namespace simplecpp::graph {
namespace {

using simplecpp::testing::AttrInt;
using simplecpp::testing::AttrInts;
using simplecpp::testing::F32;
using simplecpp::testing::I64;
using simplecpp::testing::RandomF32;
using simplecpp::testing::RunNode;
using simplecpp::testing::RunNodeOptions;

// Body with one state s and one scan input x (both float [d]): s' = s + x, y = s' + x.
Attribute SumBody() {
  auto body = std::make_shared<Graph>();
  body->name = "scan_body";
  ValueInfo s, x, s_out, y;
  s.name = "s";
  x.name = "x";
  s.type = x.type = TypeInfoOf(ValueType::TensorOf(DType::kFloat32));
  body->inputs = {s, x};
  Node add;
  add.op_type = "Add";
  add.inputs = {"s", "x"};
  add.outputs = {"s_out"};
  Node add2;
  add2.op_type = "Add";
  add2.inputs = {"s_out", "x"};
  add2.outputs = {"y"};
  body->nodes = {add, add2};
  s_out.name = "s_out";
  y.name = "y";
  body->outputs = {s_out, y};
  Attribute a;
  a.name = "body";
  a.kind = AttrKind::kGraph;
  a.g = body;
  return a;
}

// Scalar reference of SumBody under Scan-8: s0 [batch, d], x [batch, seq, d].
void ReferenceScan8(const Tensor& s0, const Tensor& x, const std::vector<int64_t>& lens, bool reverse,
                    std::vector<float>* final_s, std::vector<float>* ys) {
  const int64_t batch = x.dim(0), seq = x.dim(1), d = x.dim(2);
  final_s->assign(static_cast<size_t>(batch * d), 0.0f);
  ys->assign(static_cast<size_t>(batch * seq * d), 0.0f);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t e = 0; e < d; ++e) {
      float s = s0.data<float>()[b * d + e];
      for (int64_t t = 0; t < lens[b]; ++t) {
        const int64_t pos = reverse ? lens[b] - 1 - t : t;
        const float xv = x.data<float>()[(b * seq + pos) * d + e];
        s += xv;
        (*ys)[(b * seq + t) * d + e] = s + xv;
      }
      (*final_s)[b * d + e] = s;
    }
  }
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

RunNodeOptions Opset8() {
  RunNodeOptions o;
  o.opset = 8;
  o.num_outputs = 2;
  return o;
}

TEST_CASE("Scan-8 batch-major with sequence_lens and directions") {
  const int64_t batch = 2, seq = 4, d = 3;
  const Tensor s0 = RandomF32({batch, d}, 1);
  const Tensor x = RandomF32({batch, seq, d}, 2);
  struct Case {
    const char* name;
    bool has_lens;
    std::vector<int64_t> lens;
    bool reverse;
  };
  const std::vector<Case> cases = {
      {"no sequence_lens, forward", false, {seq, seq}, false},
      {"no sequence_lens, reverse", false, {seq, seq}, true},
      {"sequence_lens 4,2 forward", true, {4, 2}, false},
      {"sequence_lens 1,3 reverse", true, {1, 3}, true},
      {"sequence_lens 0,4 reverse", true, {0, 4}, true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    std::vector<Attribute> attrs = {SumBody(), AttrInt("num_scan_inputs", 1)};
    if (c.reverse) attrs.push_back(AttrInts("directions", {1}));
    const Tensor lens = c.has_lens ? I64({batch}, c.lens) : Tensor();
    auto out = RunNode("Scan", {lens, s0, x}, attrs, Opset8());
    std::vector<float> want_s, want_y;
    ReferenceScan8(s0, x, c.lens, c.reverse, &want_s, &want_y);
    REQUIRE(out.size() == 2);
    CHECK(out[0].dims() == Dims{batch, d});
    CHECK(out[1].dims() == Dims{batch, seq, d});
    CHECK(Floats(out[0]) == want_s);
    CHECK(Floats(out[1]) == want_y);
  }
}

TEST_CASE("Scan-8 errors: sequence_lens out of range, batch mismatch, bad directions") {
  const Tensor s0 = F32({2, 1}, {0, 0});
  const Tensor x = F32({2, 3, 1}, {1, 2, 3, 4, 5, 6});
  const std::vector<Attribute> attrs = {SumBody(), AttrInt("num_scan_inputs", 1)};
  CHECK_THROWS_AS(RunNode("Scan", {I64({2}, {3, 4}), s0, x}, attrs, Opset8()), Error);
  CHECK_THROWS_AS(RunNode("Scan", {I64({2}, {-1, 1}), s0, x}, attrs, Opset8()), Error);
  CHECK_THROWS_AS(RunNode("Scan", {I64({3}, {1, 1, 1}), s0, x}, attrs, Opset8()), Error);
  CHECK_THROWS_AS(RunNode("Scan", {Tensor(), F32({3, 1}, {0, 0, 0}), x}, attrs, Opset8()), Error);
  CHECK_THROWS_AS(RunNode("Scan", {Tensor(), s0, F32({2}, {1, 2})}, attrs, Opset8()), Error);  // no seq axis
  std::vector<Attribute> bad_dirs = attrs;
  bad_dirs.push_back(AttrInts("directions", {2}));
  CHECK_THROWS_AS(RunNode("Scan", {Tensor(), s0, x}, bad_dirs, Opset8()), Error);
  try {
    RunNode("Scan", {I64({2}, {3, 4}), s0, x}, attrs, Opset8());
  } catch (const Error& e) {
    const std::string msg = e.what();
    CAPTURE(msg);
    CHECK(msg.find("Scan") != std::string::npos);
    CHECK(msg.find("sequence_lens[1] = 4") != std::string::npos);
  }
}

}  // namespace
}  // namespace simplecpp::graph
