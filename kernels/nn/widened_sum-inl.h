// Sums of float32 vectors in float64 whose order of operations is the same on every target of a
// given vector width, whether or not the target has float64 vectors.
//
// The kernels that sum a row in double (softmax, layer normalization, global average pooling) add
// each vector's lower half of lanes into one double accumulator vector (`lo`) and its upper half
// into another (`hi`), then reduce lo + hi. Highway 1.0.3's WASM target has no float64 vectors
// (HWY_HAVE_FLOAT64 is 0), so there the same lane-by-lane additions run on scalars: the WebAssembly
// build then gives the same bits as the native 128-bit targets (SSE4, EMU128), which
// scripts/wasm-golden.sh checks. Summing each vector in float first (the obvious fallback) would
// round differently and move some softmax rows by an ulp.
// Included once per target (Highway's toggled include guard).
#if defined(SIMPLECPP_KERNELS_WIDENED_SUM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SIMPLECPP_KERNELS_WIDENED_SUM_INL_H_
#undef SIMPLECPP_KERNELS_WIDENED_SUM_INL_H_
#else
#define SIMPLECPP_KERNELS_WIDENED_SUM_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace widened_sum {

namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;

#if HWY_HAVE_FLOAT64

// Adds the lanes of v, widened to double, into (lo, hi): lo gets the lower half of v's lanes.
// (WidenedSum's step; softmax's column sums keep their (lo, hi) pairs per column in memory.)
HWY_INLINE void AddWidened(hn::Vec<DF> v, hn::Vec<hn::Repartition<double, DF>>& lo,
                           hn::Vec<hn::Repartition<double, DF>>& hi) {
  const hn::Repartition<double, DF> dd;
  const hn::Half<DF> dh;
  lo = hn::Add(lo, hn::PromoteTo(dd, hn::LowerHalf(dh, v)));
  hi = hn::Add(hi, hn::PromoteTo(dd, hn::UpperHalf(dh, v)));
}

class WidenedSum {
 public:
  // Defined here, not defaulted: an implicit constructor would lack the target's attributes.
  HWY_INLINE WidenedSum() : lo_(hn::Zero(dd_)), hi_(hn::Zero(dd_)) {}
  // Adds the lanes of v.
  HWY_INLINE void Add(hn::Vec<DF> v) { AddWidened(v, lo_, hi_); }
  // Adds (lane - mean)^2 of every lane of v (Highway's MulAdd: fused where the target has FMA).
  HWY_INLINE void AddSquaredDeviations(hn::Vec<DF> v, double mean) {
    const auto vm = hn::Set(dd_, mean);
    const auto a = hn::Sub(hn::PromoteTo(dd_, hn::LowerHalf(dh_, v)), vm);
    const auto b = hn::Sub(hn::PromoteTo(dd_, hn::UpperHalf(dh_, v)), vm);
    lo_ = hn::MulAdd(a, a, lo_);
    hi_ = hn::MulAdd(b, b, hi_);
  }
  HWY_INLINE double Total() const { return hn::GetLane(hn::SumOfLanes(dd_, hn::Add(lo_, hi_))); }

 private:
  hn::Repartition<double, DF> dd_;
  hn::Half<DF> dh_;
  hn::Vec<decltype(dd_)> lo_, hi_;
};

#else  // no float64 vectors: the same additions, lane by lane

class WidenedSum {
 public:
  static constexpr size_t kMaxHalf = HWY_MAX_BYTES / sizeof(double);

  HWY_INLINE void Add(hn::Vec<DF> v) {
    alignas(64) float buf[HWY_MAX_BYTES / sizeof(float)];
    hn::Store(v, DF(), buf);
    const size_t half = hn::Lanes(DF()) / 2;
    for (size_t j = 0; j < half; ++j) {
      lo_[j] += static_cast<double>(buf[j]);
      hi_[j] += static_cast<double>(buf[half + j]);
    }
  }
  // No FMA on these targets: the square and the sum round separately, as Highway's MulAdd
  // does without FMA (separate statements, so the compiler does not contract them either).
  HWY_INLINE void AddSquaredDeviations(hn::Vec<DF> v, double mean) {
    alignas(64) float buf[HWY_MAX_BYTES / sizeof(float)];
    hn::Store(v, DF(), buf);
    const size_t half = hn::Lanes(DF()) / 2;
    for (size_t j = 0; j < half; ++j) {
      const double a = static_cast<double>(buf[j]) - mean;
      const double b = static_cast<double>(buf[half + j]) - mean;
      const double a2 = a * a;
      const double b2 = b * b;
      lo_[j] += a2;
      hi_[j] += b2;
    }
  }
  // SumOfLanes of the two-lane vector lo + hi: (lo0 + hi0) + (lo1 + hi1); wider vectors (none of
  // Highway's targets without float64 has them) reduce left to right.
  HWY_INLINE double Total() const {
    const size_t half = hn::Lanes(DF()) / 2;
    double s = 0.0;
    for (size_t j = 0; j < half; ++j) s += lo_[j] + hi_[j];
    return s;
  }

 private:
  double lo_[kMaxHalf] = {};
  double hi_[kMaxHalf] = {};
};

#endif  // HWY_HAVE_FLOAT64

}  // namespace widened_sum
}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#endif  // SIMPLECPP_KERNELS_WIDENED_SUM_INL_H_
