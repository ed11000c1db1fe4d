// TopK (see topk.h): per column, a partial sort of (value, index) pairs with a total order, so
// the result is unique (ties by index) and independent of the thread count.
#include "kernels/nn/topk.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

namespace simplecpp::kernels {
namespace {

template <typename T>
bool IsNaN(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// a strictly greater than b, with NaN greater than every number and equal to NaN.
template <typename T>
bool Greater(T a, T b) {
  if (IsNaN(a)) return !IsNaN(b);
  if (IsNaN(b)) return false;
  return a > b;
}

// Columns (o, j) per task: enough work per task, boundaries depend only on the sizes.
constexpr int64_t kTaskElements = 1 << 16;

// x's elements (type T) are ordered by key(x) (type V, exact); values receive the selected
// elements of x unchanged.
template <typename T, typename V, class Key>
void TopKImpl(const T* x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool largest,
              T* values, int64_t* indices, const Parallel& parallel, const Key& key) {
  const int64_t columns = outer * inner;
  if (columns <= 0 || k <= 0) return;
  const int64_t per_task = std::max<int64_t>(1, kTaskElements / std::max<int64_t>(n, 1));
  const int64_t tasks = (columns + per_task - 1) / per_task;
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    std::vector<std::pair<V, int64_t>> items(static_cast<size_t>(n));
    const auto before = [largest](const std::pair<V, int64_t>& a, const std::pair<V, int64_t>& b) {
      const bool gt = Greater(a.first, b.first);
      const bool lt = Greater(b.first, a.first);
      if (gt || lt) return largest ? gt : lt;
      return a.second < b.second;  // equal values: lower index first
    };
    const int64_t end = std::min(columns, t1 * per_task);
    for (int64_t c = t0 * per_task; c < end; ++c) {
      const int64_t o = c / inner;
      const int64_t j = c % inner;
      const T* src = x + o * n * inner + j;
      for (int64_t i = 0; i < n; ++i) items[i] = {key(src[i * inner]), i};
      if (k < n) {
        std::partial_sort(items.begin(), items.begin() + k, items.end(), before);
      } else {
        std::sort(items.begin(), items.end(), before);
      }
      T* vout = values + o * k * inner + j;
      int64_t* iout = indices + o * k * inner + j;
      for (int64_t r = 0; r < k; ++r) {
        vout[r * inner] = src[items[r].second * inner];
        iout[r * inner] = items[r].second;
      }
    }
  });
}

}  // namespace

template <typename T>
void TopK(const T* x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool largest, T* values,
          int64_t* indices, const Parallel& parallel) {
  TopKImpl<T, T>(x, outer, n, inner, k, largest, values, indices, parallel, [](T v) { return v; });
}

void TopK16(Float16Kind kind, const uint16_t* x, int64_t outer, int64_t n, int64_t inner, int64_t k,
            bool largest, uint16_t* values, int64_t* indices, const Parallel& parallel) {
  TopKImpl<uint16_t, float>(x, outer, n, inner, k, largest, values, indices, parallel,
                            [kind](uint16_t v) { return Widen16One(kind, v); });
}

#define SIMPLECPP_TOPK_INSTANTIATE(T)                                                     \
  template void TopK<T>(const T*, int64_t, int64_t, int64_t, int64_t, bool, T*, int64_t*, \
                        const Parallel&);
SIMPLECPP_TOPK_INSTANTIATE(float)
SIMPLECPP_TOPK_INSTANTIATE(double)
SIMPLECPP_TOPK_INSTANTIATE(int8_t)
SIMPLECPP_TOPK_INSTANTIATE(uint8_t)
SIMPLECPP_TOPK_INSTANTIATE(int16_t)
SIMPLECPP_TOPK_INSTANTIATE(uint16_t)
SIMPLECPP_TOPK_INSTANTIATE(int32_t)
SIMPLECPP_TOPK_INSTANTIATE(uint32_t)
SIMPLECPP_TOPK_INSTANTIATE(int64_t)
SIMPLECPP_TOPK_INSTANTIATE(uint64_t)

}  // namespace simplecpp::kernels
