// TransposeBytes (kernels/memory/transpose.h) against a naive index-mapping loop: every permutation
// of ranks 1..4 over odd shapes (with size-1 and size-0 axes), element sizes 1, 2, 4, 8 and odd
// sizes (3, 12), misaligned pointers, and larger 2-D / batched cases that span several tiles.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "kernels/memory/transpose.h"
#include "kernels/parallel.h"
#include "kernels/targets.h"

namespace {

using simplecpp::kernels::PlanTranspose;
using simplecpp::kernels::SerialParallel;
using simplecpp::kernels::TransposeByteMatrix;
using simplecpp::kernels::TransposeBytes;

std::vector<unsigned char> NaiveTranspose(const std::vector<unsigned char>& in, size_t es,
                                          const std::vector<int64_t>& dims,
                                          const std::vector<int64_t>& perm) {
  const size_t r = dims.size();
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  std::vector<int64_t> in_strides(r, 1), out_dims(r);
  for (size_t k = r; k-- > 1;) in_strides[k - 1] = in_strides[k] * dims[k];
  for (size_t k = 0; k < r; ++k) out_dims[k] = dims[perm[k]];
  std::vector<unsigned char> out(static_cast<size_t>(total) * es);
  std::vector<int64_t> idx(r, 0);
  for (int64_t o = 0; o < total; ++o) {
    int64_t rem = o, src = 0;
    for (size_t k = r; k-- > 0;) {
      const int64_t i = rem % out_dims[k];
      rem /= out_dims[k];
      src += i * in_strides[perm[k]];
    }
    std::memcpy(&out[o * es], &in[src * es], es);
  }
  return out;
}

void Check(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm, size_t es,
           size_t misalign) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  std::vector<unsigned char> in(static_cast<size_t>(total) * es + misalign);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 131 + 7);
  std::vector<unsigned char> src(in.begin() + misalign, in.end());
  const auto want = NaiveTranspose(src, es, dims, perm);
  std::vector<unsigned char> out(want.size() + misalign + 1, 0xEE);
  const auto plan = PlanTranspose(es, dims, perm);
  TransposeBytes(plan, in.data() + misalign, out.data() + misalign, SerialParallel());
  CAPTURE(es);
  CAPTURE(misalign);
  REQUIRE(std::equal(want.begin(), want.end(), out.begin() + misalign));
  CHECK(out.back() == 0xEE);  // nothing written past the end
}

TEST_CASE("TransposeBytes: every permutation of small odd shapes") {
  const std::vector<std::vector<int64_t>> shapes = {
      {5}, {3, 7}, {1, 5}, {4, 1}, {2, 3, 5}, {3, 1, 4}, {0, 3, 2}, {2, 3, 4, 5}, {3, 1, 17, 2}, {1, 1, 1}};
  for (const auto& t : simplecpp::kernels::CompiledTargets()) {
    simplecpp::kernels::ScopedTarget st(t);
    CAPTURE(t.name);
    for (const auto& dims : shapes) {
      std::vector<int64_t> perm(dims.size());
      std::iota(perm.begin(), perm.end(), 0);
      do {
        CAPTURE(dims.size());
        for (size_t es : {1, 2, 4, 8, 3, 12}) Check(dims, perm, es, es == 4 ? 1 : 0);
      } while (std::next_permutation(perm.begin(), perm.end()));
    }
  }
}

TEST_CASE("TransposeBytes: multi-tile 2-D and batched cases") {
  Check({67, 131}, {1, 0}, 4, 0);
  Check({129, 65}, {1, 0}, 1, 3);
  Check({33, 17}, {1, 0}, 2, 0);
  Check({17, 33}, {1, 0}, 8, 0);
  Check({3, 40, 70}, {0, 2, 1}, 4, 0);
  Check({5, 6, 7, 8}, {0, 2, 3, 1}, 4, 0);
  Check({6, 7, 8, 9}, {3, 1, 0, 2}, 2, 0);
  Check({2, 3, 4, 5, 6}, {4, 2, 0, 3, 1}, 1, 0);
}

TEST_CASE("TransposeByteMatrix: strided blocks and edges on every target") {
  for (const auto& t : simplecpp::kernels::CompiledTargets()) {
    simplecpp::kernels::ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t rows : {1, 2, 3, 4, 15, 16, 17, 33, 48}) {
      for (int64_t cols : {1, 5, 16, 31, 32, 49, 64, 80, 130, 131, 200}) {
        CAPTURE(rows);
        CAPTURE(cols);
        // Strides wider than the matrix, and (odd cols) a dense output: 2-4 rows interleave.
        const int64_t ldi = cols + 3, ldo = rows + (cols % 2 ? 0 : 5);
        std::vector<uint8_t> in(static_cast<size_t>(rows * ldi));
        for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 37 + 11);
        std::vector<uint8_t> out(static_cast<size_t>(cols * ldo), 0xEE);
        TransposeByteMatrix(in.data(), ldi, out.data(), ldo, rows, cols);
        bool ok = true;
        for (int64_t j = 0; j < cols; ++j) {
          for (int64_t i = 0; i < ldo; ++i) {
            const uint8_t want = i < rows ? in[i * ldi + j] : 0xEE;  // the stride gap untouched
            ok = ok && out[j * ldo + i] == want;
          }
        }
        CHECK(ok);
      }
    }
    // Dense matrices (ldi == cols), as a convolution's [positions, channels] tile: the last
    // row's loads must stay inside the matrix.
    for (int64_t rows : {5, 16, 64, 70}) {
      for (int64_t cols : {8, 12, 18, 24, 36, 72, 96, 144}) {
        CAPTURE(rows);
        CAPTURE(cols);
        std::vector<uint8_t> in(static_cast<size_t>(rows * cols));
        for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 53 + 7);
        std::vector<uint8_t> out(static_cast<size_t>(cols * rows), 0xEE);
        TransposeByteMatrix(in.data(), cols, out.data(), rows, rows, cols);
        bool ok = true;
        for (int64_t j = 0; j < cols; ++j) {
          for (int64_t i = 0; i < rows; ++i) ok = ok && out[j * rows + i] == in[i * cols + j];
        }
        CHECK(ok);
      }
    }
  }
}

TEST_CASE("TransposeBytes: results do not depend on the thread count") {
  // A Parallel that runs tasks out of order, one at a time, as a pool might.
  struct Reversed : simplecpp::kernels::Parallel {
    int num_threads() const override { return 4; }
    void For(int64_t n, simplecpp::kernels::TaskFn fn) const override {
      for (int64_t t = n; t-- > 0;) fn(t, t + 1);
    }
  } reversed;
  const std::vector<int64_t> dims = {7, 45, 33};
  const std::vector<int64_t> perm = {2, 0, 1};
  std::vector<float> in(7 * 45 * 33);
  std::iota(in.begin(), in.end(), 0.0f);
  std::vector<float> a(in.size()), b(in.size());
  const auto plan = PlanTranspose(4, dims, perm);
  TransposeBytes(plan, in.data(), a.data(), SerialParallel());
  TransposeBytes(plan, in.data(), b.data(), reversed);
  CHECK(a == b);
}

}  // namespace
