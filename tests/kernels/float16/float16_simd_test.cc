// The SIMD bulk float16 / bfloat16 conversions (kernels/float16/float16.h: HalfToFloat,
// FloatToHalf, BFloat16ToFloat, FloatToBFloat16) against the scalar reference functions, bit for
// bit, on every compiled Highway target: all 65536 16-bit patterns widened; for narrowing, every
// float32 that is a 16-bit value, its neighbours (+-1 ulp), every midpoint between consecutive
// 16-bit values and its neighbours, plus a sweep of float32 patterns (NaNs with payloads,
// subnormals, overflow).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/float16/float16.h"
#include "kernels/targets.h"

namespace {

using namespace simplecpp::kernels;

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Float32 inputs for the narrowing tests, for one format (widen = the exact 16 -> 32 map).
std::vector<float> NarrowInputs(float (*widen)(uint16_t)) {
  std::vector<uint32_t> u;
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const uint32_t b = Bits(widen(static_cast<uint16_t>(h)));
    u.push_back(b);
    u.push_back(b + 1);
    u.push_back(b - 1);
    const uint16_t next = static_cast<uint16_t>(h + 1);
    if ((h & 0x7FFFu) < 0x7FFFu) {
      // Midpoint between h and its upper neighbour (same sign): exact in float32 for both formats.
      const uint32_t nb = Bits(widen(next));
      const uint32_t mid = b + (nb - b) / 2;
      u.push_back(mid);
      u.push_back(mid + 1);
      u.push_back(mid - 1);
    }
  }
  for (uint64_t x = 0; x <= 0xFFFFFFFFull; x += 65521) u.push_back(static_cast<uint32_t>(x));
  const uint32_t edges[] = {0x7F800001u, 0x7FBFFFFFu, 0x7FC00000u, 0x7FFFFFFFu, 0x7F7FFFFFu,
                            0x477FF000u, 0x477FEFFFu, 0x33000000u, 0x33000001u, 0x00000001u};
  for (uint32_t e : edges) {
    u.push_back(e);
    u.push_back(e | 0x80000000u);
  }
  std::vector<float> f;
  f.reserve(u.size());
  for (uint32_t b : u) f.push_back(FromBits(b));
  return f;
}

// Runs the bulk conversion at several offsets and lengths so the vector body and the tails are
// both exercised.
template <typename In, typename Out, typename Fn>
void CheckBulk(const std::vector<In>& in, const std::vector<Out>& want, Fn fn) {
  std::vector<Out> got(in.size());
  fn(in.data(), got.data(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(Out)) != 0) {
      uint32_t in_bits = 0, got_bits = 0, want_bits = 0;
      std::memcpy(&in_bits, &in[i], sizeof(In));
      std::memcpy(&got_bits, &got[i], sizeof(Out));
      std::memcpy(&want_bits, &want[i], sizeof(Out));
      CAPTURE(i);
      CAPTURE(in_bits);
      CAPTURE(got_bits);
      CHECK(want_bits == got_bits);
      return;
    }
  }
  for (size_t off : {size_t{1}, size_t{3}}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{7}, size_t{15}, size_t{17}, size_t{33}}) {
      std::vector<Out> part(n + 1, Out{});
      fn(in.data() + off, part.data(), n);
      for (size_t i = 0; i < n; ++i) CHECK(std::memcmp(&part[i], &want[off + i], sizeof(Out)) == 0);
      CHECK(part[n] == Out{});  // no write past n
    }
  }
}

TEST_CASE("Float16 SIMD: all 65536 patterns widen like the scalar reference on every target") {
  std::vector<uint16_t> all(0x10000);
  for (uint32_t h = 0; h < 0x10000u; ++h) all[h] = static_cast<uint16_t>(h);
  std::vector<float> want_half(all.size()), want_bf(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    want_half[i] = HalfBitsToFloat(all[i]);
    want_bf[i] = BFloat16BitsToFloat(all[i]);
  }
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    CheckBulk(all, want_half, [](const uint16_t* i, float* o, size_t n) { HalfToFloat(i, o, n); });
    CheckBulk(all, want_bf, [](const uint16_t* i, float* o, size_t n) { BFloat16ToFloat(i, o, n); });
    CheckBulk(all, want_half, [](const uint16_t* i, float* o, size_t n) {
      Widen16(Float16Kind::kHalf, i, o, n);
    });
  }
}

TEST_CASE("Float16 SIMD: narrowing matches the scalar reference on every target") {
  const std::vector<float> in_half = NarrowInputs(&HalfBitsToFloat);
  const std::vector<float> in_bf = NarrowInputs(&BFloat16BitsToFloat);
  std::vector<uint16_t> want_half(in_half.size()), want_bf(in_bf.size());
  for (size_t i = 0; i < in_half.size(); ++i) want_half[i] = FloatToHalfBits(in_half[i]);
  for (size_t i = 0; i < in_bf.size(); ++i) want_bf[i] = FloatToBFloat16Bits(in_bf[i]);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    CheckBulk(in_half, want_half, [](const float* i, uint16_t* o, size_t n) { FloatToHalf(i, o, n); });
    CheckBulk(in_bf, want_bf, [](const float* i, uint16_t* o, size_t n) { FloatToBFloat16(i, o, n); });
    CheckBulk(in_bf, want_bf, [](const float* i, uint16_t* o, size_t n) {
      Narrow16(Float16Kind::kBFloat16, i, o, n);
    });
  }
}

TEST_CASE("Float16 SIMD: specials (Inf, NaN, overflow, smallest subnormal) on every target") {
  const float inf = FromBits(0x7F800000u);
  const std::vector<float> in = {inf, -inf, FromBits(0x7FC00000u), 1e6f, -1e6f, 65504.0f, 65520.0f,
                                 FromBits(0x33800000u) /* 2^-24 */, FromBits(0x33000001u), 0.0f, -0.0f};
  const std::vector<uint16_t> want = {0x7C00, 0xFC00, 0x7E00, 0x7C00, 0xFC00, 0x7BFF, 0x7C00,
                                      0x0001, 0x0001, 0x0000, 0x8000};
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    std::vector<uint16_t> got(in.size());
    FloatToHalf(in.data(), got.data(), in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      CAPTURE(i);
      CHECK(got[i] == want[i]);
    }
    std::vector<float> back(in.size());
    HalfToFloat(want.data(), back.data(), want.size());
    CHECK(back[0] == inf);
    CHECK(back[1] == -inf);
    CHECK(back[2] != back[2]);
    CHECK(back[7] == FromBits(0x33800000u));
  }
}

}  // namespace
