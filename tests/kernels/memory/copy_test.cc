// AxisGatherBytes / AxisGatherStrings against the plain definition
//   out[i0, ..., ik] = in[offsets[0][i0] + ... + offsets[k][ik]]   (fill where any offset < 0)
// on offset tables of the shapes the ops build: nearest upsampling by integer factors (runs of
// repeated sources, merged into one run per row), reversed and strided axes, fills, and rows
// where the repeat pattern breaks; every element size the movers distinguish.
#include "kernels/memory/copy.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace simplecpp::kernels {
namespace {

std::vector<int64_t> Upsample(int64_t in_len, int64_t factor, int64_t stride) {
  std::vector<int64_t> o;
  for (int64_t i = 0; i < in_len * factor; ++i) o.push_back((i / factor) * stride);
  return o;
}

// Offset tables for a 3-D output [a, b, c] over an input with strides (b_in*c_in, c_in, 1).
std::vector<std::vector<std::vector<int64_t>>> Cases() {
  std::vector<std::vector<std::vector<int64_t>>> cases;
  const int64_t c_in = 70, b_in = 3;
  for (int64_t f : {2, 3, 4, 8}) {
    // Nearest upsample along the last two axes (a row of 70 * f: no outer merging when long).
    cases.push_back({{0, b_in * c_in}, Upsample(b_in, f, c_in), Upsample(c_in, f, 1)});
    // A short row (merged with the axis above) and an upsample that breaks at the end.
    std::vector<int64_t> broken = Upsample(5, f, 1);
    broken.push_back(4);
    cases.push_back({{0}, Upsample(b_in, f, c_in), broken});
  }
  // Reversed, strided, with fills on both ends, and a repeat that changes its length.
  std::vector<int64_t> mixed = {-1, -1, 9, 9, 8, 8, 7, 7, 7, 5, 3, 1, -1, 0, 0, 2, 2, 4, 4};
  cases.push_back({{0, b_in * c_in}, {c_in, 0}, mixed});
  return cases;
}

void CheckBytes(size_t elem_size) {
  std::mt19937 rng(3);
  std::vector<unsigned char> in(2 * 3 * 70 * elem_size);
  for (auto& v : in) v = static_cast<unsigned char>(rng());
  std::vector<unsigned char> fill(elem_size, 0xEE);
  for (const auto& offsets : Cases()) {
    std::vector<int64_t> dims;
    for (const auto& o : offsets) dims.push_back(static_cast<int64_t>(o.size()));
    const AxisGatherPlan plan = PlanAxisGather(elem_size, dims, offsets);
    // At most one run per row of the merged axes (6 of them), not one per repeated element:
    // the merged form is what runs here, not only the plain one.
    if (offsets[2] == Upsample(70, 2, 1)) CHECK(plan.runs.size() <= 6);
    std::vector<unsigned char> out(static_cast<size_t>(plan.total) * elem_size, 0);
    AxisGatherBytes(plan, in.data(), out.data(), fill.data(), SerialParallel());
    int64_t i = 0;
    for (int64_t a : offsets[0]) {
      for (int64_t b : offsets[1]) {
        for (int64_t c : offsets[2]) {
          const bool is_fill = a < 0 || b < 0 || c < 0;
          const unsigned char* want = is_fill ? fill.data() : in.data() + (a + b + c) * elem_size;
          REQUIRE(std::memcmp(out.data() + i * elem_size, want, elem_size) == 0);
          ++i;
        }
      }
    }
  }
}

TEST_CASE("AxisGatherBytes matches the plain gather for every element size") {
  for (size_t es : {size_t{1}, size_t{2}, size_t{4}, size_t{8}, size_t{3}}) {
    CAPTURE(es);
    CheckBytes(es);
  }
}

TEST_CASE("AxisGatherStrings matches the plain gather") {
  std::vector<std::string> in(2 * 3 * 70);
  for (size_t i = 0; i < in.size(); ++i) in[i] = "s" + std::to_string(i);
  const std::string fill = "fill";
  for (const auto& offsets : Cases()) {
    std::vector<int64_t> dims;
    for (const auto& o : offsets) dims.push_back(static_cast<int64_t>(o.size()));
    const AxisGatherPlan plan = PlanAxisGather(0, dims, offsets);
    std::vector<std::string> out(static_cast<size_t>(plan.total));
    AxisGatherStrings(plan, in.data(), out.data(), &fill, SerialParallel());
    int64_t i = 0;
    for (int64_t a : offsets[0]) {
      for (int64_t b : offsets[1]) {
        for (int64_t c : offsets[2]) {
          const bool is_fill = a < 0 || b < 0 || c < 0;
          const std::string& want = is_fill ? fill : in[static_cast<size_t>(a + b + c)];
          REQUIRE(out[static_cast<size_t>(i)] == want);
          ++i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace simplecpp::kernels

namespace {

// Runs tasks in reverse order, one at a time, claiming 3 threads: as a pool might interleave them.
struct ReversedParallel : simplecpp::kernels::Parallel {
  int num_threads() const override { return 3; }
  void For(int64_t n, simplecpp::kernels::TaskFn fn) const override {
    for (int64_t t = n; t-- > 0;) fn(t, t + 1);
  }
};

}  // namespace

TEST_CASE("CopyRowsBytes copies long rows in pieces and short rows whole, any task order") {
  const ReversedParallel reversed;
  for (int64_t row_len : {1, 7, 40000, 100003}) {
    for (int64_t rows : {1, 3}) {
      CAPTURE(row_len);
      CAPTURE(rows);
      const int64_t src_stride = row_len + 5, dst_stride = row_len + 11;
      std::vector<uint16_t> src(static_cast<size_t>(rows * src_stride));
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(i * 2654435761u >> 7);
      std::vector<uint16_t> dst(static_cast<size_t>(rows * dst_stride), 0xBEEF);
      simplecpp::kernels::CopyRowsBytes(src.data(), src_stride, dst.data(), dst_stride, rows,
                                        row_len, sizeof(uint16_t), reversed);
      bool ok = true;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < dst_stride; ++j) {
          const uint16_t want = j < row_len ? src[r * src_stride + j] : 0xBEEF;
          ok = ok && dst[r * dst_stride + j] == want;
        }
      }
      CHECK(ok);
    }
  }
}
