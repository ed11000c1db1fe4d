// Plan building and execution: ordering, graph errors, input checks, constant folding, buffer
// reuse and determinism across thread counts.
#include "graph/executor.h"

#include <doctest/doctest.h>

#include "graph/buffer_pool.h"
#include "graph/op_test_util.h"
#include "graph/thread_pool.h"

namespace simplecpp::graph {
namespace {

using simplecpp::testing::F32;

ValueInfo TensorInput(const std::string& name, DType dtype, std::vector<int64_t> dims) {
  ValueInfo v;
  v.name = name;
  v.type.kind = TypeInfo::Kind::kTensor;
  v.type.dtype = dtype;
  v.type.has_shape = true;
  for (int64_t d : dims) v.type.dims.push_back(Dim{d, d < 0 ? "N" : ""});
  return v;
}

ValueInfo Output(const std::string& name) {
  ValueInfo v;
  v.name = name;
  return v;
}

Node MakeNode(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
              const std::string& name = "") {
  Node n;
  n.op_type = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  n.name = name;
  return n;
}

const OpsetMap kOpsets{{"", 17}};

// y = Relu(x + b) with nodes listed out of order.
Graph AddReluGraph() {
  Graph g;
  g.name = "add_relu";
  g.inputs.push_back(TensorInput("x", DType::kFloat32, {2, 3}));
  g.initializers.emplace_back("b", F32({3}, {1.0f, -2.0f, 0.5f}));
  g.nodes.push_back(MakeNode("Relu", {"s"}, {"y"}, "relu"));
  g.nodes.push_back(MakeNode("Add", {"x", "b"}, {"s"}, "add"));
  g.outputs.push_back(Output("y"));
  return g;
}

std::string BuildError(const Graph& g) {
  try {
    Plan::Build(g, kOpsets, PlanOptions{});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("Plan orders nodes topologically and runs them") {
  auto plan = Plan::Build(AddReluGraph(), kOpsets, PlanOptions{});
  REQUIRE(plan->steps().size() == 2);
  CHECK(plan->steps()[0].node.op_type == "Add");
  Executor exec(plan);
  auto out = exec.Run({{"x", F32({2, 3}, {-1, 0, 1, 2, 3, -4})}});
  REQUIRE(out.size() == 1);
  const float expected[] = {0, 0, 1.5f, 3, 1, 0};
  for (int i = 0; i < 6; ++i) CHECK(out[0].data<float>()[i] == expected[i]);
}

TEST_CASE("Plan rejects cycles, dangling names, duplicate producers and unknown ops") {
  Graph cyc;
  cyc.inputs.push_back(TensorInput("x", DType::kFloat32, {1}));
  cyc.nodes.push_back(MakeNode("Add", {"x", "b"}, {"a"}, "n1"));
  cyc.nodes.push_back(MakeNode("Relu", {"a"}, {"b"}, "n2"));
  cyc.outputs.push_back(Output("b"));
  CHECK(BuildError(cyc).find("cycle") != std::string::npos);

  Graph dangling;
  dangling.inputs.push_back(TensorInput("x", DType::kFloat32, {1}));
  dangling.nodes.push_back(MakeNode("Relu", {"nowhere"}, {"y"}, "r"));
  dangling.outputs.push_back(Output("y"));
  const std::string msg = BuildError(dangling);
  CHECK(msg.find("'r'") != std::string::npos);
  CHECK(msg.find("nowhere") != std::string::npos);

  Graph dup;
  dup.inputs.push_back(TensorInput("x", DType::kFloat32, {1}));
  dup.nodes.push_back(MakeNode("Relu", {"x"}, {"y"}, "r1"));
  dup.nodes.push_back(MakeNode("Relu", {"x"}, {"y"}, "r2"));
  dup.outputs.push_back(Output("y"));
  CHECK(BuildError(dup).find("more than one node") != std::string::npos);

  Graph unknown;
  unknown.inputs.push_back(TensorInput("x", DType::kFloat32, {1}));
  unknown.nodes.push_back(MakeNode("NoSuchOp", {"x"}, {"y"}, "mystery"));
  unknown.outputs.push_back(Output("y"));
  try {
    Plan::Build(unknown, kOpsets, PlanOptions{});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kUnsupported);
    CHECK(std::string(e.what()).find("mystery") != std::string::npos);
    CHECK(std::string(e.what()).find("NoSuchOp") != std::string::npos);
  }

  Graph missing_output;
  missing_output.inputs.push_back(TensorInput("x", DType::kFloat32, {1}));
  missing_output.outputs.push_back(Output("ghost"));
  CHECK(BuildError(missing_output).find("ghost") != std::string::npos);
}

TEST_CASE("Plan reports an unsupported dtype combination at load, naming the dtypes") {
  Graph g;
  g.inputs.push_back(TensorInput("x", DType::kFloat32, {2}));
  g.inputs.push_back(TensorInput("s", DType::kString, {2}));
  g.nodes.push_back(MakeNode("Add", {"x", "s"}, {"y"}, "bad_add"));
  g.outputs.push_back(Output("y"));
  const std::string msg = BuildError(g);
  CHECK(msg.find("bad_add") != std::string::npos);
  CHECK(msg.find("string") != std::string::npos);
}

TEST_CASE("Executor checks inputs: missing, unknown, dtype, rank and fixed dims") {
  auto plan = Plan::Build(AddReluGraph(), kOpsets, PlanOptions{});
  Executor exec(plan);
  CHECK_THROWS_WITH_AS(exec.Run({}), doctest::Contains("missing input 'x'"), Error);
  CHECK_THROWS_WITH_AS(exec.Run({{"x", F32({2, 3}, std::vector<float>(6))}, {"zz", F32({1}, {1})}}),
                       doctest::Contains("'zz'"), Error);
  CHECK_THROWS_WITH_AS(exec.Run({{"x", simplecpp::testing::I64({2, 3}, std::vector<int64_t>(6))}}),
                       doctest::Contains("dtype int64"), Error);
  CHECK_THROWS_WITH_AS(exec.Run({{"x", F32({6}, std::vector<float>(6))}}),
                       doctest::Contains("rank"), Error);
  CHECK_THROWS_WITH_AS(exec.Run({{"x", F32({3, 2}, std::vector<float>(6))}}),
                       doctest::Contains("dimension 0"), Error);
}

TEST_CASE("Constant subgraphs are folded at load") {
  Graph g;
  g.inputs.push_back(TensorInput("x", DType::kFloat32, {3}));
  g.initializers.emplace_back("a", F32({3}, {1, 2, 3}));
  g.initializers.emplace_back("b", F32({3}, {10, 20, 30}));
  g.nodes.push_back(MakeNode("Add", {"a", "b"}, {"ab"}, "const_add"));
  g.nodes.push_back(MakeNode("Add", {"x", "ab"}, {"y"}, "live_add"));
  g.outputs.push_back(Output("y"));
  auto plan = Plan::Build(g, kOpsets, PlanOptions{});
  CHECK(plan->folded_nodes() == 1);
  REQUIRE(plan->steps().size() == 1);
  Executor exec(plan);
  auto out = exec.Run({{"x", F32({3}, {1, 1, 1})}});
  CHECK(out[0].data<float>()[2] == 34.0f);

  PlanOptions no_fold;
  no_fold.constant_folding = false;
  CHECK(Plan::Build(g, kOpsets, no_fold)->steps().size() == 2);
}

TEST_CASE("Symbolic dims are resolved at run time and re-prepared when shapes change") {
  Graph g;
  g.inputs.push_back(TensorInput("x", DType::kFloat32, {-1, 2}));
  g.initializers.emplace_back("b", F32({2}, {1, 1}));
  g.nodes.push_back(MakeNode("Add", {"x", "b"}, {"y"}, "add"));
  g.outputs.push_back(Output("y"));
  auto plan = Plan::Build(g, kOpsets, PlanOptions{});
  CHECK(!plan->steps()[0].static_run);
  Executor exec(plan);
  CHECK(exec.Run({{"x", F32({1, 2}, {1, 2})}})[0].dims() == Dims{1, 2});
  auto out = exec.Run({{"x", F32({3, 2}, {1, 2, 3, 4, 5, 6})}});
  CHECK(out[0].dims() == Dims{3, 2});
  CHECK(out[0].data<float>()[5] == 7.0f);
}

TEST_CASE("Buffers are reused by lifetime: steady-state runs allocate nothing new") {
  // A chain of 6 Relus: with release-after-last-use only a few buffers are alive at once.
  Graph g;
  g.inputs.push_back(TensorInput("x", DType::kFloat32, {1024}));
  std::string prev = "x";
  for (int i = 0; i < 6; ++i) {
    const std::string out = i == 5 ? "y" : "t" + std::to_string(i);
    g.nodes.push_back(MakeNode("Relu", {prev}, {out}, "relu" + std::to_string(i)));
    prev = out;
  }
  g.outputs.push_back(Output("y"));
  auto plan = Plan::Build(g, kOpsets, PlanOptions{});
  Executor exec(plan);
  Tensor x = simplecpp::testing::RandomF32({1024}, 7);
  exec.Run({{"x", x}});
  const size_t after_first = exec.buffer_allocations();
  CHECK(after_first <= 3);  // ping-pong between intermediates plus the output
  auto a = exec.Run({{"x", x}});
  a.clear();
  auto b = exec.Run({{"x", x}});
  CHECK(exec.buffer_allocations() <= after_first + 1);
  auto c = exec.Run({{"x", x}});
  CHECK(b[0].BitwiseEquals(c[0]));
}

TEST_CASE("BufferPool hands a released buffer back out") {
  auto pool = std::make_shared<BufferPool>();
  const void* first = nullptr;
  {
    Tensor t = pool->Allocate(DType::kFloat32, {100});
    first = t.raw_data();
  }
  Tensor again = pool->Allocate(DType::kFloat32, {100});
  CHECK(again.raw_data() == first);
  CHECK(pool->allocations() == 1);
  Tensor other = pool->Allocate(DType::kFloat32, {100});
  CHECK(pool->allocations() == 2);
  CHECK_THROWS_AS(pool->Allocate(DType::kFloat32, {int64_t{1} << 62, 8}), Error);
  // Of two free buffers of a size class, the one released last comes back first.
  const void* other_data = other.raw_data();
  again = Tensor();
  other = Tensor();
  Tensor next = pool->Allocate(DType::kFloat32, {100});
  CHECK(next.raw_data() == other_data);
  Tensor after = pool->Allocate(DType::kFloat32, {100});
  CHECK(after.raw_data() == first);
  CHECK(pool->allocations() == 2);
}

TEST_CASE("BufferPool keeps a size class's free buffers apart from another's across runs") {
  // Two size classes, one with two free buffers of which one goes stale: the other class and
  // the kept buffer are still handed out, nothing new is allocated.
  auto pool = std::make_shared<BufferPool>();
  {
    Tensor a = pool->Allocate(DType::kFloat32, {64});
    Tensor b = pool->Allocate(DType::kFloat32, {64});
    Tensor c = pool->Allocate(DType::kFloat32, {1024});
  }
  pool->EndRun();
  CHECK(pool->allocations() == 3);
  {
    Tensor a = pool->Allocate(DType::kFloat32, {64});
    Tensor c = pool->Allocate(DType::kFloat32, {1024});
  }
  pool->EndRun();  // one 64-float buffer sat free for the whole run
  CHECK(pool->bytes_reserved() == 64 * 4 + 4096);
  {
    Tensor a = pool->Allocate(DType::kFloat32, {64});
    Tensor c = pool->Allocate(DType::kFloat32, {1024});
  }
  CHECK(pool->allocations() == 3);
  Tensor a = pool->Allocate(DType::kFloat32, {64});
  Tensor b = pool->Allocate(DType::kFloat32, {64});  // the class is empty now: a new buffer
  CHECK(pool->allocations() == 4);
}

TEST_CASE("BufferPool frees a buffer that stays unused for a whole run, and only such a buffer") {
  auto pool = std::make_shared<BufferPool>();
  const size_t small = 64 * 4, large = 4096;  // size classes of 64 and 1024 floats
  { Tensor a = pool->Allocate(DType::kFloat32, {64}); }
  { Tensor b = pool->Allocate(DType::kFloat32, {1024}); }
  pool->EndRun();  // both were released during this run: kept
  CHECK(pool->bytes_reserved() == small + large);
  // The next run uses the small buffer only (a cache that moved to another size, say).
  { Tensor a = pool->Allocate(DType::kFloat32, {64}); }
  CHECK(pool->allocations() == 2);
  pool->EndRun();  // the large one sat free for this whole run
  CHECK(pool->bytes_reserved() == small);
  // A buffer in use across EndRun, or released after it, is kept.
  Tensor held = pool->Allocate(DType::kFloat32, {64});
  pool->EndRun();
  held = Tensor();
  pool->EndRun();
  CHECK(pool->bytes_reserved() == small);
  { Tensor again = pool->Allocate(DType::kFloat32, {64}); }
  CHECK(pool->allocations() == 2);
}

TEST_CASE("Thread pool runs every task exactly once") {
  for (int threads : {1, 2, 3, 8}) {
    auto pool = MakeThreadPool(threads);
    std::vector<int> hits(1000, 0);
    pool->For(1000, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    for (int h : hits) CHECK(h == 1);
  }
}

}  // namespace
}  // namespace simplecpp::graph
