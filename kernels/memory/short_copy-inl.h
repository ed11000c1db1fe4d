// Short copies and fills as a few vector moves instead of a libc call: the im2row of integer
// convolutions copies one kernel row of a few pixels' channels at a time, pooling one short output
// row. GCC turns plain copy loops into a memmove call per copy, and for copies this short the call
// costs more than the copy. Included once per target (Highway's toggled include guard).
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

// n >= Lanes(d) bytes from s to d (not overlapping) as whole vectors, the last one overlapping
// the one before it when n is not a multiple of the vector.
template <class D>
HWY_INLINE void CopyVectors(D d, uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src,
                            int64_t n) {
  namespace hn = hwy::HWY_NAMESPACE;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto last = hn::LoadU(d, src + n - N);
  for (int64_t i = 0; i + N < n; i += N) hn::StoreU(hn::LoadU(d, src + i), d, dst + i);
  hn::StoreU(last, d, dst + n - N);
}

// n >= Lanes(d) bytes of value v at dst, the same way.
template <class D>
HWY_INLINE void FillVectors(D d, uint8_t* HWY_RESTRICT dst, uint8_t v, int64_t n) {
  namespace hn = hwy::HWY_NAMESPACE;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto vv = hn::Set(d, v);
  for (int64_t i = 0; i + N < n; i += N) hn::StoreU(vv, d, dst + i);
  hn::StoreU(vv, d, dst + n - N);
}

// sizeof(Word) <= n <= 2 * sizeof(Word) bytes as two overlapping words.
template <typename Word>
HWY_INLINE void CopyTwoWords(uint8_t* HWY_RESTRICT d, const uint8_t* HWY_RESTRICT s, int64_t n) {
  constexpr int64_t w = sizeof(Word);
  Word first, last;
  std::memcpy(&first, s, w);
  std::memcpy(&last, s + n - w, w);
  std::memcpy(d, &first, w);
  std::memcpy(d + n - w, &last, w);
}

// Copies n bytes from s to d (not overlapping): whole vectors from one vector up, 16-byte
// vectors below that, two overlapping words for 4-15 bytes.
inline void CopyShort(uint8_t* HWY_RESTRICT d, const uint8_t* HWY_RESTRICT s, int64_t n) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::ScalableTag<uint8_t> d8;
  if (n >= static_cast<int64_t>(hn::Lanes(d8))) {
    CopyVectors(d8, d, s, n);
  } else if (n >= 16) {  // only where vectors are wider than 16 bytes
    CopyVectors(hn::CappedTag<uint8_t, 16>(), d, s, n);
  } else if (n >= 8) {
    CopyTwoWords<uint64_t>(d, s, n);
  } else if (n >= 4) {
    CopyTwoWords<uint32_t>(d, s, n);
  } else if (n > 0) {
    d[0] = s[0];
    d[n / 2] = s[n / 2];
    d[n - 1] = s[n - 1];
  }
}

// n bytes of value v at d, the same way (a byte loop below 16 bytes).
inline void FillShort(uint8_t* HWY_RESTRICT d, uint8_t v, int64_t n) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::ScalableTag<uint8_t> d8;
  if (n >= static_cast<int64_t>(hn::Lanes(d8))) {
    FillVectors(d8, d, v, n);
  } else if (n >= 16) {
    FillVectors(hn::CappedTag<uint8_t, 16>(), d, v, n);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = v;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#endif  // SIMPLECPP_KERNELS_SHORT_COPY_INL_H_
