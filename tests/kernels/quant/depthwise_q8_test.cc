// kernels/quant/depthwise_q8.h against a scalar int64 reference written here: every kernel size
// the byte kernel takes (up to 8 columns), strides 1 and 2, widths around the 16-lane vector and
// the 64-column block, the extreme products 255 * -128; on every compiled target that has the
// kernel (elsewhere DepthwiseQ8Available says no and the callers keep their float32 path).
#include "kernels/quant/depthwise_q8.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/quant/quantize.h"
#include "kernels/targets.h"

namespace simplecpp::kernels {
namespace {

TEST_CASE("DepthwiseQ8Sums equals the int64 sums of uint8 x int8") {
  std::mt19937 rng(41);
  std::uniform_int_distribution<int> byte(0, 255);
  int checked = 0;
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t kh : {1, 3, 5}) {
      for (int64_t kw : {1, 2, 3, 4, 5, 7, 8}) {
        for (int64_t sw : {1, 2}) {
          for (int64_t ow : {1, 15, 16, 17, 40, 64, 65, 130}) {
            DepthwiseQ8Shape s;
            s.KH = kh;
            s.KW = kw;
            s.SW = sw;
            // Heights of 1 to 4 rows (the kernel takes output rows in pairs) and row strides
            // of 1 to 3 (windows of neighbouring rows overlapping, touching or apart).
            s.SH = 1 + (ow + kh) % 3;
            s.OH = 1 + (ow + kw + kh) % 4;
            s.OW = ow;
            s.H = (s.OH - 1) * s.SH + kh;
            s.W = (ow - 1) * sw + kw + static_cast<int64_t>(ow % 3);  // sometimes wider
            if (!DepthwiseQ8Available(s)) continue;
            CAPTURE(kh);
            CAPTURE(kw);
            CAPTURE(sw);
            CAPTURE(ow);
            // Exactly the bytes the kernel may read: an overread shows under AddressSanitizer.
            std::vector<uint8_t> plane(static_cast<size_t>(s.H * s.W + kDepthwiseQ8Slack));
            for (auto& b : plane) b = static_cast<uint8_t>(byte(rng));
            std::vector<int8_t> w(static_cast<size_t>(kh * kw));
            for (auto& v : w) v = static_cast<int8_t>(byte(rng) - 128);
            if (ow == 16) {  // the extremes everywhere: 255 * -128 per tap
              for (int64_t i = 0; i < s.H * s.W; ++i) plane[i] = 255;
              for (auto& v : w) v = -128;
            }
            std::vector<int32_t> got(static_cast<size_t>(s.OH * ow + 1), 0x5EED);
            DepthwiseQ8Sums(s, plane.data(), w.data(), got.data());
            bool ok = true;
            for (int64_t oy = 0; oy < s.OH; ++oy) {
              for (int64_t ox = 0; ox < ow; ++ox) {
                int64_t want = 0;
                for (int64_t ky = 0; ky < kh; ++ky) {
                  for (int64_t kx = 0; kx < kw; ++kx) {
                    want += int64_t{plane[(oy * s.SH + ky) * s.W + ox * sw + kx]} * w[ky * kw + kx];
                  }
                }
                ok = ok && got[oy * ow + ox] == want;
              }
            }
            CHECK(ok);
            CHECK(got[s.OH * ow] == 0x5EED);  // nothing written past the output
            ++checked;
          }
        }
      }
    }
  }
  MESSAGE("shapes checked on targets with the byte kernel: " << checked);
}

// Border rows given as rows_begin / rows_end / pad are not read: they must hold `pad`, and the
// sums are those of the whole plane. Short planes under tall kernels (1 to 3 image rows, 5x5 and
// 7x1), every split of the border between top and bottom, pad bytes 0, 128 and 255; and a tall
// plane of over 256 output rows (the kernel's per-call table of each output row's kernel rows
// on image rows covers the first 256, the rest are computed per channel).
TEST_CASE("DepthwiseQ8Sums with border rows equals the sums over the whole plane") {
  std::mt19937 rng(43);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t kh : {3, 5, 7}) {
      for (int64_t image_rows : {1, 2, 3, 530}) {
        for (int64_t top = 0; top < kh; ++top) {
          for (const int pad : {0, 128, 255}) {
            DepthwiseQ8Shape s;
            s.KH = kh;
            s.KW = kh == 7 ? 1 : kh;
            s.SW = s.SH = image_rows == 3 ? 2 : 1;
            const int64_t bottom = kh - 1 - top;
            s.H = top + image_rows + bottom;
            s.OH = (s.H - kh) / s.SH + 1;
            s.OW = 37;
            s.W = (s.OW - 1) * s.SW + s.KW;
            if (!DepthwiseQ8Available(s)) continue;
            CAPTURE(kh);
            CAPTURE(image_rows);
            CAPTURE(top);
            CAPTURE(pad);
            std::vector<uint8_t> plane(static_cast<size_t>(s.H * s.W + kDepthwiseQ8Slack),
                                       static_cast<uint8_t>(pad));
            for (int64_t i = top * s.W; i < (top + image_rows) * s.W; ++i) {
              plane[i] = static_cast<uint8_t>(byte(rng));
            }
            std::vector<int8_t> w(static_cast<size_t>(s.KH * s.KW));
            for (auto& v : w) v = static_cast<int8_t>(byte(rng) - 128);
            std::vector<int32_t> whole(static_cast<size_t>(s.OH * s.OW));
            DepthwiseQ8Sums(s, plane.data(), w.data(), whole.data());
            DepthwiseQ8Shape bordered = s;
            bordered.rows_begin = top;
            bordered.rows_end = top + image_rows;
            bordered.pad = static_cast<uint8_t>(pad);
            // The border rows are not read, nor the slack but for taps of weight zero: poison
            // them.
            std::vector<uint8_t> poisoned = plane;
            for (int64_t i = 0; i < s.H * s.W + kDepthwiseQ8Slack; ++i) {
              const int64_t r = i / s.W;
              if (r < top || r >= top + image_rows) poisoned[i] = static_cast<uint8_t>(pad ^ 0x5A);
            }
            std::vector<int32_t> got(whole.size(), 0x5EED);
            DepthwiseQ8Sums(bordered, poisoned.data(), w.data(), got.data());
            CHECK(got == whole);
          }
        }
      }
    }
  }
}

TEST_CASE("DepthwiseQ8Sums over bands of output rows equals the whole channel's sums") {
  // Bands of 1 to 4 rows (odd ones split the kernel's row pairs) over a bordered plane: each
  // band's sums are written from the buffer's start, and nothing past the band is touched.
  std::mt19937 rng(47);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t k : {3, 5}) {
      for (int64_t stride : {1, 2}) {
        DepthwiseQ8Shape s;
        s.KH = s.KW = k;
        s.SH = s.SW = stride;
        s.OH = 9;
        s.OW = 23;
        s.H = (s.OH - 1) * stride + k;
        s.W = (s.OW - 1) * stride + k;
        s.rows_begin = 1;
        s.rows_end = s.H - 1;
        s.pad = 77;
        if (!DepthwiseQ8Available(s)) continue;
        CAPTURE(k);
        CAPTURE(stride);
        std::vector<uint8_t> plane(static_cast<size_t>(s.H * s.W + kDepthwiseQ8Slack), 77);
        for (int64_t i = s.W; i < (s.H - 1) * s.W; ++i) plane[i] = static_cast<uint8_t>(byte(rng));
        std::vector<int8_t> w(static_cast<size_t>(k * k));
        for (auto& v : w) v = static_cast<int8_t>(byte(rng) - 128);
        std::vector<int32_t> whole(static_cast<size_t>(s.OH * s.OW));
        DepthwiseQ8Sums(s, plane.data(), w.data(), whole.data());
        for (int64_t rows : {1, 2, 3, 4}) {
          CAPTURE(rows);
          std::vector<int32_t> banded(whole.size(), 0);
          for (int64_t oy = 0; oy < s.OH; oy += rows) {
            DepthwiseQ8Shape band = s;
            band.oy_begin = oy;
            band.oy_end = std::min(s.OH, oy + rows);
            const int64_t n = (band.oy_end - oy) * s.OW;
            std::vector<int32_t> buf(static_cast<size_t>(n + 16), 0x5EED);
            DepthwiseQ8Sums(band, plane.data(), w.data(), buf.data());
            for (int64_t i = n; i < n + 16; ++i) CHECK(buf[i] == 0x5EED);
            std::copy(buf.begin(), buf.begin() + n, banded.begin() + oy * s.OW);
          }
          CHECK(banded == whole);
        }
      }
    }
  }
}

TEST_CASE("DepthwiseQ8Planes and DepthwiseQ8SumsChannels equal their one-channel calls") {
  // Several channels per call (prepared weights, from a channel other than the first): 1 to 3
  // output channels per plane (the channel multiplier), planes and sums at strides wider than
  // they need, a band of output rows, bordered planes; each channel's plane and sums must be
  // the one-channel functions' bytes, and nothing between the channels' sums is written.
  std::mt19937 rng(53);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t k : {3, 5}) {
      for (int64_t mult : {1, 2, 3}) {
        for (int64_t planes_n : {1, 4, 7}) {
          DepthwiseQ8Shape s;
          s.KH = s.KW = k;
          s.SH = s.SW = k == 3 ? 2 : 1;
          s.OH = 5;
          s.OW = 21;
          const int64_t h = (s.OH - 1) * s.SH + 1, w = (s.OW - 1) * s.SW + 1;
          const int64_t pad = k / 2;
          s.H = std::max(h + pad, (s.OH - 1) * s.SH + k);
          s.W = std::max(w + pad, (s.OW - 1) * s.SW + k);
          s.rows_begin = pad;
          s.rows_end = pad + h;
          s.pad = 99;
          s.oy_begin = 1;
          s.oy_end = 4;
          if (!DepthwiseQ8Available(s)) continue;
          CAPTURE(k);
          CAPTURE(mult);
          CAPTURE(planes_n);
          const int64_t x_stride = h * w + 3, plane_stride = s.H * s.W + kDepthwiseQ8Slack + 5;
          std::vector<uint8_t> x(static_cast<size_t>(planes_n * x_stride));
          for (auto& b : x) b = static_cast<uint8_t>(byte(rng));
          std::vector<uint8_t> planes(static_cast<size_t>(planes_n * plane_stride), 0);
          DepthwiseQ8Planes(s, x.data(), x_stride, w, pad, 0x80, planes_n, planes.data(),
                            plane_stride);
          // Weights prepared for 2 more channels than the call takes: it starts at channel 2.
          const int64_t count = planes_n * mult, ksize = k * k, first = 2;
          std::vector<int8_t> wt(static_cast<size_t>((first + count) * ksize));
          for (auto& v : wt) v = static_cast<int8_t>(byte(rng) - 128);
          const DepthwiseQ8Weights prepared =
              PrepareDepthwiseQ8Weights(k, k, wt.data(), first + count);
          const int64_t n_out = (s.oy_end - s.oy_begin) * s.OW, sums_stride = n_out + 2;
          std::vector<int32_t> sums(static_cast<size_t>(count * sums_stride), 0x5EED);
          DepthwiseQ8Channels ch;
          ch.count = count;
          ch.mult = mult;
          ch.plane_stride = plane_stride;
          ch.sums_stride = sums_stride;
          ch.first = first;
          DepthwiseQ8SumsChannels(s, ch, planes.data(), prepared, sums.data());
          for (int64_t c = 0; c < planes_n; ++c) {
            std::vector<uint8_t> one(static_cast<size_t>(s.H * s.W + kDepthwiseQ8Slack), 0);
            DepthwiseQ8Plane(s, x.data() + c * x_stride, w, pad, 0x80, one.data());
            // The image rows (the border rows and the slack are not written by either).
            CHECK(std::equal(one.begin() + s.rows_begin * s.W, one.begin() + s.rows_end * s.W,
                             planes.begin() + c * plane_stride + s.rows_begin * s.W));
          }
          for (int64_t j = 0; j < count; ++j) {
            CAPTURE(j);
            std::vector<int32_t> want(static_cast<size_t>(n_out));
            DepthwiseQ8Sums(s, planes.data() + j / mult * plane_stride,
                            wt.data() + (first + j) * ksize, want.data());
            CHECK(std::equal(want.begin(), want.end(), sums.begin() + j * sums_stride));
            CHECK(sums[j * sums_stride + n_out] == 0x5EED);
            CHECK(sums[j * sums_stride + n_out + 1] == 0x5EED);
          }
        }
      }
    }
  }
}

TEST_CASE("DepthwiseQ8RequantChannels: the requantization of DepthwiseQ8SumsChannels' sums") {
  // The kernel's own requantization against RequantizePerRow (the graph's path through int32
  // sums): uint8 and int8 bytes, clamped ranges narrower than the type's, odd zero points,
  // power-of-two multipliers on small sums (exact .5 ties) and 0.1 (products float32 rounds onto
  // a tie, which the scalar reference decides), arbitrary ones, biases near the int32 limits (the
  // wrapping addition), a channel multiplier, rows of 21-100 outputs (whole, half and partial
  // 32-byte steps), a band of output rows with an odd count; the bytes around each channel's output
  // stay as they were.
  std::mt19937 rng(61);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t k : {3, 5}) {
      for (int64_t ow : {21, 32, 33, 96, 100}) {
        for (int variant = 0; variant < 4; ++variant) {
          const bool out_signed = variant & 1, ties = variant & 2;
          DepthwiseQ8Shape s;
          s.KH = s.KW = k;
          s.SH = k == 3 ? 2 : 1;
          s.SW = 1;
          s.OH = 5;
          s.OW = ow;
          const int64_t h = (s.OH - 1) * s.SH + 1, w = s.OW, pad = k / 2;
          s.H = std::max(h + pad, (s.OH - 1) * s.SH + k);
          s.W = std::max(w + pad, (s.OW - 1) * s.SW + k);
          s.rows_begin = pad;
          s.rows_end = pad + h;
          s.pad = ties ? 128 : 37;
          s.oy_begin = 1;
          s.oy_end = 4;
          const int64_t mult = 2, planes_n = 3, count = planes_n * mult, ksize = k * k;
          QGemmRequant rq;
          rq.per_row = true;
          rq.out_signed = out_signed;
          rq.zp = out_signed ? -3 : 121;
          rq.lo = out_signed ? -100 : 5;
          rq.hi = out_signed ? 127 : 250;
          std::vector<float> mults(static_cast<size_t>(count));
          std::vector<int32_t> bias(static_cast<size_t>(count));
          for (int64_t j = 0; j < count; ++j) {
            // 0.1f: 5 * 0.1f rounds to 0.5f in float32 (round: 0) where the exact product is
            // above 0.5 (1): lanes the scalar reference must decide.
            mults[j] = ties ? (j % 3 == 0 ? 0.1f : std::ldexp(1.0f, -static_cast<int>(j % 3)))
                            : 0.0007f * static_cast<float>(j + 1) + 0.00013f;
            bias[j] = ties ? static_cast<int32_t>(j) - 3
                           : (j % 2 ? 2147483000 : -2147483000) + static_cast<int32_t>(j);
          }
          rq.bias = bias.data();
          rq.mult = mults.data();
          rq.mult_step = 1;
          if (!DepthwiseQ8FusesRequant(s, rq, count)) continue;
          CAPTURE(k);
          CAPTURE(ow);
          CAPTURE(out_signed);
          CAPTURE(ties);
          const int64_t plane_stride = s.H * s.W + kDepthwiseQ8Slack;
          std::vector<uint8_t> x(static_cast<size_t>(planes_n * h * w));
          // Tie-laden: bytes next to the pad byte, so that sums stay small.
          for (auto& b : x) b = static_cast<uint8_t>(ties ? 128 + byte(rng) % 5 - 2 : byte(rng));
          std::vector<uint8_t> planes(static_cast<size_t>(planes_n * plane_stride), 0);
          DepthwiseQ8Planes(s, x.data(), h * w, w, pad, 0, planes_n, planes.data(), plane_stride);
          std::vector<int8_t> wt(static_cast<size_t>(count * ksize));
          for (auto& v : wt) v = static_cast<int8_t>(ties ? byte(rng) % 7 - 3 : byte(rng) - 128);
          const DepthwiseQ8Weights prepared = PrepareDepthwiseQ8Weights(k, k, wt.data(), count);
          DepthwiseQ8Channels ch;
          ch.count = count;
          ch.mult = mult;
          ch.plane_stride = plane_stride;
          const int64_t n_out = (s.oy_end - s.oy_begin) * s.OW, out_stride = n_out + 3;
          ch.sums_stride = n_out;
          std::vector<int32_t> sums(static_cast<size_t>(count * n_out));
          DepthwiseQ8SumsChannels(s, ch, planes.data(), prepared, sums.data());
          std::vector<uint8_t> want(static_cast<size_t>(count * out_stride), 0xA5);
          if (out_signed) {
            RequantizePerRowI32ToI8(sums.data(), n_out, count, n_out, bias.data(), mults.data(), 1,
                                    rq.zp, rq.lo, rq.hi, reinterpret_cast<int8_t*>(want.data()),
                                    out_stride);
          } else {
            RequantizePerRowI32ToU8(sums.data(), n_out, count, n_out, bias.data(), mults.data(), 1,
                                    rq.zp, rq.lo, rq.hi, want.data(), out_stride);
          }
          std::vector<uint8_t> got(static_cast<size_t>(count * out_stride), 0xA5);
          rq.out = got.data();
          rq.ldo = out_stride;
          DepthwiseQ8RequantChannels(s, ch, planes.data(), prepared, rq);
          CHECK(got == want);
        }
      }
    }
  }
}

TEST_CASE("DepthwiseQ8Plane lays out x's rows between zero-point borders on every target") {
  // Rows of 1 to 200 bytes (around the 64-byte vector), left borders 0-3, right borders so that
  // a row is 0-70 bytes longer than x's, border rows above and below (never written), int8 x
  // (flip 0x80) and uint8 x; the bytes the plan says it leaves alone keep a marker.
  std::mt19937 rng(43);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t w : {1, 5, 16, 63, 64, 65, 127, 128, 130, 200}) {
      for (int64_t pad_left : {0, 1, 3}) {
        for (int64_t extra : {0, 2, 61, 70}) {
          for (const uint8_t flip : {uint8_t{0}, uint8_t{0x80}}) {
            CAPTURE(w);
            CAPTURE(pad_left);
            CAPTURE(extra);
            CAPTURE(static_cast<int>(flip));
            DepthwiseQ8Shape s;
            const int64_t h = 3, top = 2, bottom = 1;
            s.W = pad_left + w + extra;
            s.H = top + h + bottom;
            s.rows_begin = top;
            s.rows_end = top + h;
            s.pad = static_cast<uint8_t>(rng());
            std::vector<uint8_t> x(static_cast<size_t>(h * w));
            for (auto& b : x) b = static_cast<uint8_t>(rng());
            const uint8_t marker = static_cast<uint8_t>(s.pad ^ 0x5A);
            std::vector<uint8_t> plane(static_cast<size_t>(s.H * s.W + kDepthwiseQ8Slack), marker);
            DepthwiseQ8Plane(s, x.data(), w, pad_left, flip, plane.data());
            int bad = 0;
            for (int64_t r = 0; r < s.H; ++r) {
              for (int64_t c = 0; c < s.W; ++c) {
                const int64_t col = c - pad_left;
                uint8_t want = marker;  // border rows: not written
                if (r >= top && r < top + h) {
                  want = col >= 0 && col < w ? static_cast<uint8_t>(x[(r - top) * w + col] ^ flip)
                                             : s.pad;
                }
                if (r >= top + h && want == marker) continue;  // below: a row's overflow
                if (plane[r * s.W + c] != want && bad++ < 3) {
                  FAIL_CHECK("row " << r << " column " << c);
                }
              }
            }
            CHECK(bad == 0);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace simplecpp::kernels
