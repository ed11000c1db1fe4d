// Tests for graph/ops/einsum.cc against a brute-force reference: every assignment of the labels
// is enumerated and the product of the operands is added to the output element (size-1 dims
// broadcast). Ellipsis equations are checked against the same equation spelled with letters.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "simplecpp/error.h"

namespace simplecpp {
namespace {

using testing::AttrString;
using testing::RandomF32;
using testing::RunNode;
using testing::RunNodeOptions;

// Options without designated initializers (C++17).
RunNodeOptions Opts(int64_t opset, int num_outputs = 1, int threads = 1,
                    std::vector<int> constant_inputs = {}) {
  RunNodeOptions o;
  o.opset = opset;
  o.num_outputs = num_outputs;
  o.threads = threads;
  o.constant_inputs = std::move(constant_inputs);
  return o;
}

// Reference einsum for letter-only explicit equations ("ij,jk->ik").
std::vector<double> RefEinsum(const std::string& eq, const std::vector<Tensor>& ops,
                              Dims* out_dims) {
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow), rhs = eq.substr(arrow + 2);
  std::vector<std::string> terms;
  size_t start = 0;
  for (;;) {
    const size_t c = lhs.find(',', start);
    terms.push_back(lhs.substr(start, c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size(); ++i) {
    for (size_t a = 0; a < terms[i].size(); ++a) {
      const int64_t d = ops[i].dim(static_cast<int64_t>(a));
      if (!size.count(terms[i][a]) || size[terms[i][a]] == 1) size[terms[i][a]] = d;
    }
  }
  std::vector<char> labels;
  for (const auto& [l, s] : size) labels.push_back(l);
  out_dims->clear();
  int64_t out_count = 1;
  for (char l : rhs) {
    out_dims->push_back(size[l]);
    out_count *= size[l];
  }
  std::vector<double> out(static_cast<size_t>(out_count), 0.0);
  std::map<char, int64_t> idx;
  for (char l : labels) idx[l] = 0;
  const auto value = [&](size_t i) {
    int64_t flat = 0;
    for (size_t a = 0; a < terms[i].size(); ++a) {
      const int64_t d = ops[i].dim(static_cast<int64_t>(a));
      flat = flat * d + (d == 1 ? 0 : idx[terms[i][a]]);
    }
    return ops[i].dtype() == DType::kFloat64 ? ops[i].data<double>()[flat]
                                             : static_cast<double>(ops[i].data<float>()[flat]);
  };
  for (;;) {
    bool empty = false;
    for (char l : labels) empty = empty || size[l] == 0;
    if (empty) break;
    double p = 1.0;
    for (size_t i = 0; i < terms.size(); ++i) p *= value(i);
    int64_t o = 0;
    for (char l : rhs) o = o * size[l] + idx[l];
    out[o] += p;
    int k = static_cast<int>(labels.size()) - 1;
    for (; k >= 0; --k) {
      if (++idx[labels[k]] < size[labels[k]]) break;
      idx[labels[k]] = 0;
    }
    if (k < 0) break;
  }
  return out;
}

void CheckEinsum(const std::string& eq, const std::vector<Tensor>& ops, const std::string& ref_eq,
                 const Dims& want_dims) {
  CAPTURE(eq);
  const auto out = RunNode("Einsum", ops, {AttrString("equation", eq)}, Opts(12));
  Dims ref_dims;
  const auto want = RefEinsum(ref_eq, ops, &ref_dims);
  CHECK(out[0].dims() == want_dims);
  REQUIRE(out[0].num_elements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const double g =
        out[0].dtype() == DType::kFloat64 ? out[0].data<double>()[i] : out[0].data<float>()[i];
    CHECK_MESSAGE(std::fabs(g - want[i]) <= 1e-4 * std::max(1.0, std::fabs(want[i])), "i=", i,
                  " got=", g, " want=", want[i]);
  }
}

void CheckEinsum(const std::string& eq, const std::vector<Tensor>& ops, const Dims& want_dims) {
  CheckEinsum(eq, ops, eq, want_dims);
}

Tensor R(Dims dims, uint32_t seed) { return RandomF32(std::move(dims), seed); }

TEST_CASE("Einsum: matmul, batch matmul, transpose, sums, outer and inner products") {
  CheckEinsum("ij,jk->ik", {R({3, 17}, 1), R({17, 5}, 2)}, {3, 5});
  CheckEinsum("ij,kj->ik", {R({9, 7}, 1), R({4, 7}, 2)}, {9, 4});  // B transposed
  CheckEinsum("ji,jk->ik", {R({7, 9}, 1), R({7, 4}, 2)}, {9, 4});  // A transposed
  CheckEinsum("ij,jk->ki", {R({3, 8}, 1), R({8, 5}, 2)}, {5, 3});  // permuted result
  CheckEinsum("bij,bjk->bik", {R({4, 3, 5}, 3), R({4, 5, 2}, 4)}, {4, 3, 2});
  CheckEinsum("bij,bkj->bki", {R({2, 3, 5}, 3), R({2, 4, 5}, 4)}, {2, 4, 3});
  CheckEinsum("ij->ji", {R({3, 17}, 5)}, {17, 3});
  CheckEinsum("ijk->kij", {R({2, 3, 4}, 5)}, {4, 2, 3});
  CheckEinsum("ij->i", {R({5, 6}, 6)}, {5});
  CheckEinsum("ij->j", {R({5, 6}, 6)}, {6});
  CheckEinsum("ijk->", {R({2, 3, 4}, 6)}, {});
  CheckEinsum("i,i->", {R({17}, 7), R({17}, 8)}, {});
  CheckEinsum("i,j->ij", {R({3}, 7), R({5}, 8)}, {3, 5});
  CheckEinsum("ij,k->ikj", {R({2, 3}, 7), R({4}, 8)}, {2, 4, 3});
  CheckEinsum("ij,ij->ij", {R({3, 4}, 7), R({3, 4}, 8)}, {3, 4});  // Hadamard (batch only)
  CheckEinsum("ij,ij->", {R({3, 4}, 7), R({3, 4}, 8)}, {});
  CheckEinsum("ij,jk,kl->il", {R({2, 3}, 1), R({3, 4}, 2), R({4, 5}, 3)}, {2, 5});
  // Bilinear: y[b, o] = sum x1[b, i] W[o, i, j] x2[b, j].
  CheckEinsum("bi,oij,bj->bo", {R({3, 4}, 1), R({2, 4, 5}, 2), R({3, 5}, 3)}, {3, 2});
  // Sizes large enough for the GemmF32 path (M*N*K > 512), plain and transposed layouts.
  CheckEinsum("ij,jk->ik", {R({20, 33}, 1), R({33, 17}, 2)}, {20, 17});
  CheckEinsum("ji,kj->ik", {R({33, 20}, 1), R({17, 33}, 2)}, {20, 17});
  CheckEinsum("bij,bjk->bik", {R({3, 16, 20}, 3), R({3, 20, 9}, 4)}, {3, 16, 9});
  CheckEinsum("bij,jk->bik", {R({3, 16, 20}, 3), R({20, 9}, 4)}, {3, 16, 9});
  // A label summed inside one operand while contracting another.
  CheckEinsum("ijk,jl->il", {R({2, 3, 4}, 1), R({3, 5}, 2)}, {2, 5});
}

TEST_CASE("Einsum: diagonals and traces") {
  CheckEinsum("ii->i", {R({4, 4}, 1)}, {4});
  CheckEinsum("ii->", {R({5, 5}, 1)}, {});
  CheckEinsum("iji->ij", {R({3, 2, 3}, 1)}, {3, 2});
  CheckEinsum("bii->bi", {R({2, 3, 3}, 1)}, {2, 3});
  CheckEinsum("ii,ij->j", {R({3, 3}, 1), R({3, 4}, 2)}, {4});
  CheckEinsum("...ii->...i", {R({2, 3, 4, 4}, 1)}, "abii->abi", {2, 3, 4});
}

TEST_CASE("Einsum: implicit output, ellipsis broadcasting, spaces, scalars") {
  CheckEinsum("ij,jk", {R({3, 4}, 1), R({4, 5}, 2)}, "ij,jk->ik", {3, 5});
  CheckEinsum("ba", {R({3, 4}, 1)}, "ba->ab", {4, 3});  // implicit output is sorted
  CheckEinsum("i,i", {R({6}, 1), R({6}, 2)}, "i,i->", {});
  CheckEinsum("Ba,aB", {R({2, 3}, 1), R({3, 2}, 2)}, "Ba,aB->", {});
  CheckEinsum("bAc,cd", {R({2, 3, 4}, 1), R({4, 5}, 2)}, "bAc,cd->Abd", {3, 2, 5});  // ASCII order
  CheckEinsum(" bij , bjk -> bik ", {R({2, 3, 4}, 1), R({2, 4, 5}, 2)}, "bij,bjk->bik", {2, 3, 5});
  CheckEinsum("...ij,...jk->...ik", {R({2, 1, 3, 4}, 1), R({5, 4, 2}, 2)}, "xyij,yjk->xyik",
              {2, 5, 3, 2});
  CheckEinsum("...ij,...jk", {R({2, 3, 4}, 1), R({4, 5}, 2)}, "xij,jk->xik", {2, 3, 5});
  CheckEinsum("i...->...", {R({3, 2, 4}, 1)}, "iab->ab", {2, 4});
  CheckEinsum("...->...", {R({2, 3}, 1)}, "ab->ab", {2, 3});
  CheckEinsum("...i->i", {R({2, 3}, 1)}, "ai->i", {3});  // ellipsis summed when not in output
  // Size-1 broadcasting of a letter.
  CheckEinsum("ij,ij->ij", {R({1, 4}, 1), R({3, 4}, 2)}, {3, 4});
  // Scalars.
  const Tensor s = testing::F32({}, {2.5f});
  CheckEinsum("->", {s}, {});
  CheckEinsum(",i->i", {s, R({3}, 1)}, {3});
}

TEST_CASE("Einsum: float64 and int64, empty dims") {
  Tensor a(DType::kFloat64, {3, 4});
  Tensor b(DType::kFloat64, {4, 2});
  for (int i = 0; i < 12; ++i) a.data<double>()[i] = 0.5 * i - 2;
  for (int i = 0; i < 8; ++i) b.data<double>()[i] = 1.0 / (i + 1);
  CheckEinsum("ij,jk->ik", {a, b}, {3, 2});
  CheckEinsum("ij->", {a}, {});
  const Tensor x = Tensor::FromVector<int64_t>(DType::kInt64, {2, 2}, {1, 2, 3, 4});
  const auto out = RunNode("Einsum", {x, x}, {AttrString("equation", "ij,jk->ik")}, Opts(12));
  CHECK(std::vector<int64_t>(out[0].data<int64_t>(), out[0].data<int64_t>() + 4) ==
        std::vector<int64_t>{7, 10, 15, 22});
  const auto tr = RunNode("Einsum", {x}, {AttrString("equation", "ii")}, Opts(12));
  CHECK(tr[0].data<int64_t>()[0] == 5);
  // Contraction over an empty label gives zeros; an empty output is fine.
  const auto z =
      RunNode("Einsum", {Tensor(DType::kFloat32, {2, 0}), Tensor(DType::kFloat32, {0, 3})},
              {AttrString("equation", "ij,jk->ik")}, Opts(12));
  CHECK(z[0].dims() == Dims{2, 3});
  for (int i = 0; i < 6; ++i) CHECK(z[0].data<float>()[i] == 0.0f);
  const auto e = RunNode("Einsum", {Tensor(DType::kFloat32, {0, 4}), R({4, 3}, 1)},
                         {AttrString("equation", "ij,jk->ik")}, Opts(12));
  CHECK(e[0].dims() == Dims{0, 3});
  const auto zs = RunNode("Einsum", {Tensor(DType::kFloat32, {0, 3})},
                          {AttrString("equation", "ij->j")}, Opts(12));
  CHECK(zs[0].dims() == Dims{3});
  CHECK(zs[0].data<float>()[2] == 0.0f);
}

TEST_CASE("Einsum: invalid equations and shapes are errors") {
  const Tensor a = R({2, 3}, 1), b = R({4, 5}, 2);
  const auto run = [](const std::string& eq, const std::vector<Tensor>& ops) {
    return RunNode("Einsum", ops, {AttrString("equation", eq)}, Opts(12));
  };
  CHECK_THROWS_AS(run("ij,jk->ik", {a, b}), Error);              // j: 3 vs 4
  CHECK_THROWS_AS(run("ij,jk->ik", {a}), Error);                 // two terms, one input
  CHECK_THROWS_AS(run("ijk->i", {a}), Error);                    // rank mismatch
  CHECK_THROWS_AS(run("ij->iz", {a}), Error);                    // output label not in the inputs
  CHECK_THROWS_AS(run("ij->ii", {a}), Error);                    // repeated output label
  CHECK_THROWS_AS(run("i.j->i", {a}), Error);                    // bad ellipsis
  CHECK_THROWS_AS(run("i1->i", {a}), Error);                     // bad character
  CHECK_THROWS_AS(run("ii->i", {a}), Error);                     // diagonal of a non-square pair
  CHECK_THROWS_AS(RunNode("Einsum", {a}, {}, Opts(12)), Error);  // no equation
}

}  // namespace
}  // namespace simplecpp
