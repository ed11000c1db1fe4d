// Short copies as a few vector moves instead of a libc call: the im2row of integer convolutions
// copies one kernel row of a few pixels' channels at a time, pooling one short output row. GCC
// turns plain copy loops into a memmove call per copy, which cost more than the copy (5900 calls
// per run of the benchmark CNN).
// Included once per target (Highway's toggled include guard).
#if defined(SIMPLECPP_KERNELS_SHORT_COPY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SIMPLECPP_KERNELS_SHORT_COPY_INL_H_
#undef SIMPLECPP_KERNELS_SHORT_COPY_INL_H_
#else
#define SIMPLECPP_KERNELS_SHORT_COPY_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>
#include <cstring>

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {

// Copies n bytes from s to d (not overlapping) with whole (possibly overlapping) vector moves
// from one vector up, 16-byte moves below that, and two overlapping words for 4-15 bytes.
inline void CopyShort(uint8_t* HWY_RESTRICT d, const uint8_t* HWY_RESTRICT s, int64_t n) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::ScalableTag<uint8_t> d8;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d8));
  if (n >= N) {
    const auto last = hn::LoadU(d8, s + n - N);
    for (int64_t i = 0; i + N < n; i += N) hn::StoreU(hn::LoadU(d8, s + i), d8, d + i);
    hn::StoreU(last, d8, d + n - N);
  } else if (n >= 16) {  // only where vectors are wider than 16 bytes
    const hn::CappedTag<uint8_t, 16> d16;
    const auto last = hn::LoadU(d16, s + n - 16);
    for (int64_t i = 0; i + 16 < n; i += 16) hn::StoreU(hn::LoadU(d16, s + i), d16, d + i);
    hn::StoreU(last, d16, d + n - 16);
  } else if (n >= 8) {
    uint64_t a, b;
    std::memcpy(&a, s, 8);
    std::memcpy(&b, s + n - 8, 8);
    std::memcpy(d, &a, 8);
    std::memcpy(d + n - 8, &b, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + n - 4, 4);
    std::memcpy(d, &a, 4);
    std::memcpy(d + n - 4, &b, 4);
  } else if (n > 0) {
    d[0] = s[0];
    d[n / 2] = s[n / 2];
    d[n - 1] = s[n - 1];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#endif  // SIMPLECPP_KERNELS_SHORT_COPY_INL_H_
