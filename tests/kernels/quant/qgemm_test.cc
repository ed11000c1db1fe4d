// Tests for kernels/quant/qgemm.h: QGemmU8ToI32 / QGemmS8ToI32 bit-exact against a
// straightforward int64 reference (truncated to int32) for all four signedness combinations, every
// zero-point layout, sizes around the vector and tile widths, extreme values with K large enough to
// wrap int32, both B layouts, on every compiled target and independent of the thread count; sizes
// around the micro-kernel's tile edges (rows per tile, 32-column panels, k-quads, K blocks of 512,
// task blocks of 64 rows x 128 columns); plus Im2RowBytes and Im2RowBytesChannelsLast (the same
// taps as Im2RowBytes with the columns permuted to (k..., c), on 1-D/2-D/3-D geometries). Every
// case also runs through QGemmU8ToSink / QGemmS8ToSink: each element delivered once, with the same
// value.
#include "kernels/quant/qgemm.h"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/parallel.h"
#include "reference/threads_parallel.h"
#include "kernels/targets.h"

namespace simplecpp::kernels {
namespace {

using ThreadParallel = test_util::ThreadsParallel;

// The tests keep A as bytes with its signedness as a flag (one case table for both types): the
// typed entry point for that flag.
void QGemmBytes(int64_t m, const uint8_t* a, bool a_signed, int64_t lda, const int32_t* a_zp,
                int64_t a_zp_step, const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step,
                int32_t* c, int64_t ldc, const Parallel& parallel) {
  if (a_signed) {
    QGemmS8ToI32(m, reinterpret_cast<const int8_t*>(a), lda, a_zp, a_zp_step, b, b_zp, b_zp_step, c,
                 ldc, parallel);
  } else {
    QGemmU8ToI32(m, a, lda, a_zp, a_zp_step, b, b_zp, b_zp_step, c, ldc, parallel);
  }
}

// Copies the blocks QGemmU8ToSink / QGemmS8ToSink deliver into a matrix and counts deliveries
// per element.
class RecordingSink final : public QGemmSink {
 public:
  RecordingSink(int64_t m, int64_t n)
      : n_(n), values_(static_cast<size_t>(m * n), 0), counts_(static_cast<size_t>(m * n)) {
    for (auto& c : counts_) c.store(0);
  }
  void Block(int64_t m0, int64_t rows, int64_t n0, int64_t cols, const int32_t* c,
             int64_t ldc) const override {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        const size_t at = static_cast<size_t>((m0 + i) * n_ + n0 + j);
        values_[at] = c[i * ldc + j];
        counts_[at].fetch_add(1);
      }
    }
  }
  const std::vector<int32_t>& values() const { return values_; }
  bool EachOnce() const {
    for (const auto& c : counts_) {
      if (c.load() != 1) return false;
    }
    return true;
  }

 private:
  int64_t n_;
  mutable std::vector<int32_t> values_;
  mutable std::vector<std::atomic<int>> counts_;
};

enum class ZpLayout { kNone, kScalar, kVector };

struct Case {
  int64_t m, n, k;
  bool a_signed, b_signed;
  ZpLayout za, zb;
  bool trans_b = false;
  int extreme = 0;  // 0 random, 1 all max magnitude with opposite zero points, 2 all min
};

int32_t Lo(bool s) { return s ? -128 : 0; }
int32_t Hi(bool s) { return s ? 127 : 255; }

void Check(const Case& c, uint32_t seed, const Parallel& par) {
  std::mt19937 rng(seed);
  auto rnd = [&](bool s) {
    return static_cast<int32_t>(rng() % 256) + Lo(s);
  };
  std::vector<uint8_t> a(static_cast<size_t>(c.m * c.k)), b(static_cast<size_t>(c.k * c.n));
  std::vector<int32_t> av(a.size()), bv(b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    av[i] = c.extreme == 1 ? Hi(c.a_signed) : c.extreme == 2 ? Lo(c.a_signed) : rnd(c.a_signed);
    a[i] = static_cast<uint8_t>(av[i]);
  }
  // b logical (k, n); stored [K,N] or [N,K].
  for (int64_t kk = 0; kk < c.k; ++kk) {
    for (int64_t j = 0; j < c.n; ++j) {
      const int32_t v =
          c.extreme == 1 ? Lo(c.b_signed) : c.extreme == 2 ? Lo(c.b_signed) : rnd(c.b_signed);
      bv[kk * c.n + j] = v;
      b[c.trans_b ? j * c.k + kk : kk * c.n + j] = static_cast<uint8_t>(v);
    }
  }
  std::vector<int32_t> za, zb;
  if (c.za != ZpLayout::kNone) za.resize(c.za == ZpLayout::kScalar ? 1 : std::max<int64_t>(c.m, 1));
  if (c.zb != ZpLayout::kNone) zb.resize(c.zb == ZpLayout::kScalar ? 1 : std::max<int64_t>(c.n, 1));
  for (auto& z : za) z = c.extreme == 1 ? Lo(c.a_signed) : c.extreme == 2 ? Hi(c.a_signed) : rnd(c.a_signed);
  for (auto& z : zb) z = c.extreme ? Hi(c.b_signed) : rnd(c.b_signed);
  const int64_t zas = c.za == ZpLayout::kVector ? 1 : 0;
  const int64_t zbs = c.zb == ZpLayout::kVector ? 1 : 0;

  auto packed = PackedQB::Pack(c.b_signed, c.trans_b, c.k, c.n, b.data(), c.trans_b ? c.k : c.n);
  std::vector<int32_t> out(static_cast<size_t>(c.m * c.n), 12345);
  QGemmBytes(c.m, a.data(), c.a_signed, c.k, za.empty() ? nullptr : za.data(), zas, *packed,
             zb.empty() ? nullptr : zb.data(), zbs, out.data(), c.n, par);
  // The same product through a sink: every element delivered exactly once, the same values.
  RecordingSink sink(c.m, c.n);
  if (c.a_signed) {
    QGemmS8ToSink(c.m, reinterpret_cast<const int8_t*>(a.data()), c.k,
                  za.empty() ? nullptr : za.data(), zas, *packed, zb.empty() ? nullptr : zb.data(),
                  zbs, sink, par);
  } else {
    QGemmU8ToSink(c.m, a.data(), c.k, za.empty() ? nullptr : za.data(), zas, *packed,
                  zb.empty() ? nullptr : zb.data(), zbs, sink, par);
  }
  CHECK(sink.EachOnce());
  CHECK(sink.values() == out);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      int64_t ref = 0;
      const int64_t zai = za.empty() ? 0 : za[zas * i];
      const int64_t zbj = zb.empty() ? 0 : zb[zbs * j];
      for (int64_t kk = 0; kk < c.k; ++kk) {
        ref += (static_cast<int64_t>(av[i * c.k + kk]) - zai) *
               (static_cast<int64_t>(bv[kk * c.n + j]) - zbj);
      }
      const int32_t want = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(ref)));
      if (out[i * c.n + j] != want) {
        CAPTURE(c.m); CAPTURE(c.n); CAPTURE(c.k); CAPTURE(c.a_signed); CAPTURE(c.b_signed);
        CAPTURE(static_cast<int>(c.za)); CAPTURE(static_cast<int>(c.zb)); CAPTURE(c.trans_b);
        CAPTURE(i); CAPTURE(j); CAPTURE(ref);
        REQUIRE(out[i * c.n + j] == want);
      }
    }
  }
}

TEST_CASE("QGemm{U8,S8}ToI32 matches the int64 reference on every target") {
  const std::vector<int64_t> sizes = {0, 1, 3, 16, 17, 31, 32, 33, 65};
  const ZpLayout layouts[] = {ZpLayout::kNone, ZpLayout::kScalar, ZpLayout::kVector};
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    uint32_t seed = 1;
    for (int sa = 0; sa < 2; ++sa) {
      for (int sb = 0; sb < 2; ++sb) {
        for (ZpLayout za : layouts) {
          for (ZpLayout zb : layouts) {
            for (int64_t k : sizes) {
              Check({5, 7, k, sa == 1, sb == 1, za, zb}, seed++, SerialParallel());
            }
            for (int64_t m : {1, 2, 3, 17}) {
              for (int64_t n : {1, 4, 5, 17}) {
                Check({m, n, 19, sa == 1, sb == 1, za, zb, (m + n) % 2 == 0}, seed++,
                      SerialParallel());
              }
            }
          }
        }
      }
    }
    // Zero-sized and multi-task shapes (several row and column blocks).
    Check({0, 5, 3, false, true, ZpLayout::kScalar, ZpLayout::kVector}, 7, SerialParallel());
    Check({4, 0, 3, true, false, ZpLayout::kVector, ZpLayout::kScalar}, 8, SerialParallel());
    Check({37, 300, 70, true, false, ZpLayout::kVector, ZpLayout::kVector}, 9, SerialParallel());
    // Row counts that split into pair tiles of equal height (8: 4 + 4; 14: 5 + 5 + 4; 72: a
    // block of 64 and one of 8) over whole panel pairs.
    Check({8, 128, 12, false, true, ZpLayout::kScalar, ZpLayout::kScalar}, 10, SerialParallel());
    Check({14, 192, 9, true, true, ZpLayout::kVector, ZpLayout::kScalar}, 11, SerialParallel());
    Check({72, 64, 33, false, false, ZpLayout::kScalar, ZpLayout::kVector}, 12, SerialParallel());
  }
}

TEST_CASE("QGemm{U8,S8}ToI32 extreme values and int32 wrap-around for large K") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int sa = 0; sa < 2; ++sa) {
      for (int sb = 0; sb < 2; ++sb) {
        // 255 * 255 * 70000 > 2^32: the result wraps exactly like int32.
        Check({2, 3, 70000, sa == 1, sb == 1, ZpLayout::kScalar, ZpLayout::kScalar, false, 1}, 1,
              SerialParallel());
        Check({3, 2, 70001, sa == 1, sb == 1, ZpLayout::kVector, ZpLayout::kVector, true, 2}, 2,
              SerialParallel());
        Check({1, 1, 1000, sa == 1, sb == 1, ZpLayout::kNone, ZpLayout::kNone, false, 1}, 3,
              SerialParallel());
      }
    }
  }
}

TEST_CASE("QGemm{U8,S8}ToI32 is independent of the thread count") {
  const ThreadParallel par3(3);
  Check({70, 600, 45, false, true, ZpLayout::kVector, ZpLayout::kVector}, 11, par3);
  Check({70, 600, 45, true, false, ZpLayout::kScalar, ZpLayout::kVector}, 12, par3);
}

TEST_CASE("PackedQB stores b' in k-quad interleaved panels with column sums") {
  const std::vector<uint8_t> b = {0, 255, 128, 1, 2, 3};  // uint8 [K=2, N=3]
  auto p = PackedQB::Pack(false, false, 2, 3, b.data(), 3);
  CHECK(p->kp() == 4);
  CHECK(p->panels() == 1);
  CHECK(p->shift() == -128);
  // b'[k,n] at (n * 4 + k) inside the first panel's first quad.
  CHECK(p->data()[0 * 4 + 0] == -128);
  CHECK(p->data()[1 * 4 + 0] == 127);
  CHECK(p->data()[0 * 4 + 1] == 1 - 128);
  CHECK(p->data()[2 * 4 + 1] == 3 - 128);
  CHECK(p->data()[0 * 4 + 2] == 0);  // K padding
  CHECK(p->data()[5 * 4 + 0] == 0);  // N padding
  CHECK(p->col_sums()[2] == (128 - 128) + (3 - 128));
  // Second panel, second quad: n = 33, k = 5 of an int8 [K=6, N=40] stored [N,K].
  std::vector<uint8_t> bt(40 * 6);
  for (size_t i = 0; i < bt.size(); ++i) bt[i] = static_cast<uint8_t>(i * 7);
  auto q = PackedQB::Pack(true, true, 6, 40, bt.data(), 6);
  CHECK(q->kp() == 8);
  CHECK(q->panels() == 2);
  const int64_t quads = q->kp() / 4;
  CHECK(q->data()[((1 * quads + 1) * PackedQB::kNR + 1) * 4 + 1] ==
        static_cast<int8_t>(bt[33 * 6 + 5]));
}

// The panels and column sums of PackedQB::Pack by its layout's formula, one byte at a time.
void ReferencePack(bool b_signed, int64_t k, int64_t n, const std::vector<uint8_t>& b,
                   std::vector<int8_t>* data, std::vector<int32_t>* sums) {
  const int64_t kp = (k + 3) / 4 * 4, quads = kp / 4, nr = PackedQB::kNR;
  data->assign(static_cast<size_t>((n + nr - 1) / nr * nr * kp), 0);
  sums->assign(static_cast<size_t>(n), 0);
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t j = 0; j < n; ++j) {
      const int32_t v = b_signed ? static_cast<int8_t>(b[kk * n + j]) : b[kk * n + j] - 128;
      (*data)[((j / nr * quads + kk / 4) * nr + j % nr) * 4 + kk % 4] = static_cast<int8_t>(v);
      (*sums)[j] += v;
    }
  }
}

TEST_CASE("PackedQB: B stored [K,N] or [N,K] packs to the reference panels on every target") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (bool sgn : {false, true}) {
      for (int64_t k : {1, 3, 4, 15, 16, 17, 27, 64, 65, 131, 257, 600}) {
        for (int64_t n : {1, 3, 4, 5, 15, 16, 17, 31, 32, 33, 64, 70, 130}) {
          CAPTURE(sgn);
          CAPTURE(k);
          CAPTURE(n);
          // [K, N] and its transpose [N, K] (both with a wider row stride), extreme bytes
          // included; K = 600 holds enough 255s to overflow 16-bit column sums.
          const int64_t ldb = n + 3, ldt = k + 5;
          std::vector<uint8_t> dense(static_cast<size_t>(k * n));
          std::vector<uint8_t> b(static_cast<size_t>(k * ldb), 77);
          std::vector<uint8_t> bt(static_cast<size_t>(n * ldt), 77);
          for (int64_t kk = 0; kk < k; ++kk) {
            for (int64_t j = 0; j < n; ++j) {
              const uint8_t v = static_cast<uint8_t>(
                  (kk * 31 + j * 17) % 7 == 0 ? 255 * ((kk + j) & 1) : kk * 13 + j * 7 + 1);
              dense[kk * n + j] = v;
              b[kk * ldb + j] = v;
              bt[j * ldt + kk] = v;
            }
          }
          std::vector<int8_t> want;
          std::vector<int32_t> want_sums;
          ReferencePack(sgn, k, n, dense, &want, &want_sums);
          const auto p = PackedQB::Pack(sgn, false, k, n, b.data(), ldb);
          const auto q = PackedQB::Pack(sgn, true, k, n, bt.data(), ldt);
          CHECK(std::equal(want.begin(), want.end(), p->data()));
          CHECK(std::equal(want.begin(), want.end(), q->data()));
          CHECK(std::equal(want_sums.begin(), want_sums.end(), p->col_sums()));
          CHECK(std::equal(want_sums.begin(), want_sums.end(), q->col_sums()));
          // Packed again into an object that held a larger B of other bytes (its storage is
          // reused): the same panels, padding zero again, and the same sums.
          PackedQB reused(false, 0, 0);
          const std::vector<uint8_t> other(static_cast<size_t>((k + 7) * (n + 40)), 0xE7);
          reused.Repack(!sgn, false, k + 7, n + 40, other.data(), n + 40);
          reused.Repack(sgn, true, k, n, bt.data(), ldt);
          CHECK(reused.k() == k);
          CHECK(reused.n() == n);
          CHECK(reused.b_signed() == sgn);
          CHECK(std::equal(want.begin(), want.end(), reused.data()));
          CHECK(std::equal(want_sums.begin(), want_sums.end(), reused.col_sums()));
          // The same from B stored [K, N], over storage that held other bytes of the same
          // size (K a multiple of 4 and N of 32: no padding, nothing zeroed first).
          reused.Repack(!sgn, false, k, n, other.data(), n);
          reused.Repack(sgn, false, k, n, b.data(), ldb);
          CHECK(std::equal(want.begin(), want.end(), reused.data()));
          CHECK(std::equal(want_sums.begin(), want_sums.end(), reused.col_sums()));
        }
      }
    }
  }
}

TEST_CASE("QGemm{U8,S8}ToI32 tile edges on every target") {
  const int64_t sizes[] = {1, 3, 4, 5, 15, 16, 17, 33, 64, 65};
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    uint32_t seed = 100;
    for (int64_t m : sizes) {
      for (int64_t n : sizes) {
        for (int64_t k : sizes) {
          const int combo = static_cast<int>(seed % 4);
          const ZpLayout za = seed % 3 == 0 ? ZpLayout::kVector : ZpLayout::kScalar;
          const ZpLayout zb = seed % 5 < 2 ? ZpLayout::kVector : ZpLayout::kScalar;
          Check({m, n, k, (combo & 1) != 0, (combo & 2) != 0, za, zb, seed % 2 == 0}, seed,
                SerialParallel());
          ++seed;
        }
      }
    }
    // Partial panels of 17 to 24 columns (the narrow tile's 256-bit half, finished straight to
    // C with masked stores), after full panels and alone.
    for (int64_t n : {20, 24, 56, 152}) {
      for (int64_t m : {1, 7, 9, 65}) {
        for (int64_t k : {3, 64, 517}) {
          const int combo = static_cast<int>(seed % 4);
          const ZpLayout zb = seed % 3 == 0 ? ZpLayout::kVector : ZpLayout::kScalar;
          Check({m, n, k, (combo & 1) != 0, (combo & 2) != 0, ZpLayout::kScalar, zb,
                 seed % 2 == 0},
                seed, SerialParallel());
          ++seed;
        }
      }
    }
    // Every signedness combination and zero-point layout on shapes with tails in every dim,
    // several K blocks (K > 512) and several task blocks.
    const ZpLayout layouts[] = {ZpLayout::kNone, ZpLayout::kScalar, ZpLayout::kVector};
    for (int combo = 0; combo < 4; ++combo) {
      for (ZpLayout za : layouts) {
        for (ZpLayout zb : layouts) {
          Check({65, 33, 1031, (combo & 1) != 0, (combo & 2) != 0, za, zb, combo >= 2}, seed++,
                SerialParallel());
          Check({9, 161, 517, (combo & 1) != 0, (combo & 2) != 0, za, zb, combo < 2}, seed++,
                SerialParallel());
        }
      }
    }
  }
}

TEST_CASE("QGemm{U8,S8}ToI32 extreme values with K = 4096 on tile edges") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int combo = 0; combo < 4; ++combo) {
      for (int extreme = 1; extreme <= 2; ++extreme) {
        for (int64_t k : {4093, 4096}) {
          Check({17, 33, k, (combo & 1) != 0, (combo & 2) != 0, ZpLayout::kVector,
                 ZpLayout::kVector, extreme == 2, extreme},
                static_cast<uint32_t>(combo), SerialParallel());
          Check({5, 3, k, (combo & 1) != 0, (combo & 2) != 0, ZpLayout::kNone, ZpLayout::kScalar,
                 extreme == 1, extreme},
                static_cast<uint32_t>(combo), SerialParallel());
        }
      }
    }
  }
}

TEST_CASE("QGemm{U8,S8}ToI32 gives identical results for 1, 2, 3 and 8 threads") {
  // Several row and column task blocks with tails; compared bit for bit across thread counts.
  const int64_t m = 131, n = 290, k = 600;
  std::mt19937 rng(5);
  std::vector<uint8_t> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
  for (auto& v : a) v = static_cast<uint8_t>(rng());
  for (auto& v : b) v = static_cast<uint8_t>(rng());
  std::vector<int32_t> za(static_cast<size_t>(m)), zb(static_cast<size_t>(n));
  for (auto& z : za) z = static_cast<int32_t>(rng() % 256) - 128;
  for (auto& z : zb) z = static_cast<int32_t>(rng() % 256);
  auto packed = PackedQB::Pack(false, false, k, n, b.data(), n);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    std::vector<int32_t> first;
    for (int threads : {1, 2, 3, 8}) {
      CAPTURE(threads);
      const ThreadParallel par(threads);
      std::vector<int32_t> out(static_cast<size_t>(m * n), 0);
      QGemmS8ToI32(m, reinterpret_cast<const int8_t*>(a.data()), k, za.data(), 1, *packed,
                   zb.data(), 1, out.data(), n, par);
      if (first.empty()) {
        first = out;
      } else {
        CHECK(out == first);
      }
    }
    Check({m, n, k, true, false, ZpLayout::kVector, ZpLayout::kVector}, 21, ThreadParallel(3));
  }
}

TEST_CASE("Im2RowBytes fills padding with the zero point") {
  ConvGeometry g;
  g.rank = 2;
  g.in[0] = 2; g.in[1] = 3;
  g.out[0] = 2; g.out[1] = 3;
  g.kernel[0] = 3; g.kernel[1] = 3;
  g.pad[0] = 1; g.pad[1] = 1;
  const std::vector<uint8_t> x = {1, 2, 3, 4, 5, 6};  // one channel [2,3]
  std::vector<uint8_t> rows(6 * 9);
  Im2RowBytes(g, x.data(), 1, 0, 6, 77, rows.data(), SerialParallel());
  // Position (0,0): taps (-1,-1..1) pad, (0,-1) pad, (0,0)=1, (0,1)=2, (1,-1) pad, (1,0)=4, (1,1)=5.
  const std::vector<uint8_t> want0 = {77, 77, 77, 77, 1, 2, 77, 4, 5};
  for (int i = 0; i < 9; ++i) CHECK(rows[i] == want0[i]);
  // Position (1,2): taps rows 0..2, cols 1..3 -> (0,1)=2,(0,2)=3,pad,(1,1)=5,(1,2)=6,pad, pad x3.
  const std::vector<uint8_t> want5 = {2, 3, 77, 5, 6, 77, 77, 77, 77};
  for (int i = 0; i < 9; ++i) CHECK(rows[5 * 9 + i] == want5[i]);
}

TEST_CASE("QGemm{U8,S8}ToI32 with a row stride past K: the bytes between do not matter") {
  // lda >= K rounded up to 4: uint8 A is read in place, Kp bytes per row, and the bytes past K
  // (random here) must not change the product; int8 A and narrower strides as a control.
  std::mt19937 rng(77);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t k : {1, 5, 27, 30, 64, 301}) {
      for (int64_t extra : {0, 3}) {
        for (bool a_signed : {false, true}) {
          const int64_t m = 13, n = 70, kp = (k + 3) / 4 * 4, lda = kp + extra;
          CAPTURE(k);
          CAPTURE(extra);
          CAPTURE(a_signed);
          std::vector<uint8_t> a(static_cast<size_t>(m * lda)), b(static_cast<size_t>(k * n));
          for (auto& v : a) v = static_cast<uint8_t>(rng());
          for (auto& v : b) v = static_cast<uint8_t>(rng());
          const int32_t za = a_signed ? -3 : 131, zb = 7;
          auto packed = PackedQB::Pack(true, false, k, n, b.data(), n);
          std::vector<int32_t> out(static_cast<size_t>(m * n));
          QGemmBytes(m, a.data(), a_signed, lda, &za, 0, *packed, &zb, 0, out.data(), n,
                     SerialParallel());
          int64_t wrong = 0;
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              int64_t ref = 0;
              for (int64_t kk = 0; kk < k; ++kk) {
                const int64_t av =
                    a_signed ? static_cast<int8_t>(a[i * lda + kk]) : a[i * lda + kk];
                ref += (av - za) * (static_cast<int8_t>(b[kk * n + j]) - zb);
              }
              wrong += out[i * n + j] != static_cast<int32_t>(ref);
            }
          }
          CHECK(wrong == 0);
        }
      }
    }
  }
}

// A convolution geometry with every spatial dim alike (rank, input size, kernel, stride,
// dilation, padding at both ends).
struct SquareConv {
  int rank;
  int64_t in, k, s, d, pb;
};
ConvGeometry SquareGeometry(const SquareConv& cs) {
  ConvGeometry g;
  g.rank = cs.rank;
  for (int i = 0; i < cs.rank; ++i) {
    g.in[i] = cs.in;
    g.kernel[i] = cs.k;
    g.stride[i] = cs.s;
    g.dilation[i] = cs.d;
    g.pad[i] = cs.pb;
    g.out[i] = (cs.in + 2 * cs.pb - ((cs.k - 1) * cs.d + 1)) / cs.s + 1;
  }
  return g;
}
std::string Describe(const SquareConv& cs) {
  return "rank " + std::to_string(cs.rank) + " in " + std::to_string(cs.in) + " k " +
         std::to_string(cs.k) + " s " + std::to_string(cs.s) + " d " + std::to_string(cs.d) +
         " pad " + std::to_string(cs.pb);
}

TEST_CASE("Im2ColBytes is the transpose of Im2RowBytes, on every target") {
  // Strides 1 (copies), 2 (even bytes of vector pairs) and 3 (a byte loop), dilations, pads
  // beyond the kernel's reach, rows long enough for several vectors and their tails, position
  // windows starting mid-row. x is exactly as long as it must be: a read past it shows under
  // AddressSanitizer.
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::vector<SquareConv> cases = {
      {1, 9, 3, 1, 1, 1},
      {1, 300, 3, 2, 1, 1},
      {1, 301, 4, 2, 1, 0},
      {2, 7, 3, 2, 1, 1},
      {2, 70, 3, 2, 1, 1},
      {2, 129, 3, 2, 1, 1},
      {2, 66, 5, 2, 2, 2},
      {2, 40, 3, 1, 1, 1},
      {2, 31, 2, 3, 1, 3},
      {3, 9, 3, 2, 1, 1},
      {2, 5, 5, 1, 1, 2},
      // Stride-2 runs of 64, 65 and 95-96 bytes: a whole 64-byte vector and none, one or 31
      // bytes after it (the last vector overlaps the one before).
      {1, 129, 3, 2, 1, 0},
      {1, 131, 3, 2, 1, 0},
      {1, 192, 3, 2, 1, 1},
      {2, 192, 3, 2, 1, 1}};
  for (const SquareConv& cs : cases) {
    for (int64_t channels : {1, 3, 4}) {
      const std::string shape = Describe(cs);
      CAPTURE(shape);
      CAPTURE(channels);
      const ConvGeometry g = SquareGeometry(cs);
      const int64_t in_size = g.InSize(), ksize = g.KernelSize(), p = g.OutSize();
      const int64_t kdim = channels * ksize;
      std::vector<uint8_t> x(static_cast<size_t>(channels * in_size));
      for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
      for (int64_t p0 : {int64_t{0}, p / 3 + 1}) {
        const int64_t pc = p - p0 - (p0 > 0 ? p / 5 : 0);
        if (pc <= 0) continue;
        std::vector<uint8_t> ref(static_cast<size_t>(pc * kdim));
        Im2RowBytes(g, x.data(), channels, p0, pc, 201, ref.data(), SerialParallel());
        for (const auto& t : CompiledTargets()) {
          ScopedTarget st(t);
          CAPTURE(t.name);
          const int64_t ldc = pc + 5;
          std::vector<uint8_t> got(static_cast<size_t>(kdim * ldc), 0xEE);
          Im2ColBytes(g, x.data(), channels, p0, pc, 201, got.data(), ldc);
          int64_t wrong = 0;
          for (int64_t r = 0; r < kdim; ++r) {
            for (int64_t q = 0; q < pc; ++q) wrong += got[r * ldc + q] != ref[q * kdim + r];
            for (int64_t q = pc; q < ldc; ++q) wrong += got[r * ldc + q] != 0xEE;
          }
          CHECK(wrong == 0);
        }
      }
    }
  }
}

// A 2-D (h > 0) or 1-D geometry without dilation, padded by ph / pw before and after.
ConvGeometry RectGeometry(int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                          int64_t ph, int64_t pw) {
  ConvGeometry g;
  const int64_t in[2] = {h, w}, k[2] = {kh, kw}, st[2] = {sh, sw}, pad[2] = {ph, pw};
  g.rank = h > 0 ? 2 : 1;
  for (int i = 0; i < g.rank; ++i) {
    const int d = g.rank == 2 ? i : i + 1;
    g.in[i] = in[d];
    g.kernel[i] = k[d];
    g.stride[i] = st[d];
    g.pad[i] = pad[d];
    g.out[i] = (in[d] + 2 * pad[d] - k[d]) / st[d] + 1;
  }
  return g;
}

TEST_CASE("PackedQB::RepackIm2Col equals Im2ColBytes then Repack, on every target") {
  // The direct packer's cases: strides 1 and 2 along the row (and others: the two steps),
  // kernels whose k-quads lie on one, two, three or four input rows (1x1, 1x5, 2x2, 3x3, 5x5,
  // 7x7), pads that put whole windows outside the image, output rows shorter and longer than
  // 16 positions (16 positions spanning two rows), position windows starting mid-row and
  // ending in a partial panel, 1 to 5 channels (5 x 7 rows: more input rows than the direct
  // packer keeps), both signednesses. x is exactly as long as it must be.
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> byte(0, 255);
  struct Case {
    int64_t h, w, kh, kw, sh, sw, ph, pw;
  };
  const std::vector<Case> cases = {
      {48, 192, 3, 3, 2, 2, 1, 1}, {24, 96, 3, 3, 1, 1, 1, 1}, {9, 40, 5, 5, 2, 2, 2, 2},
      {5, 21, 3, 3, 2, 1, 1, 1},   {7, 33, 2, 2, 2, 2, 0, 0},  {6, 17, 1, 1, 1, 1, 0, 0},
      {4, 50, 1, 5, 1, 2, 0, 2},   {12, 30, 7, 7, 2, 2, 3, 3}, {3, 9, 3, 3, 1, 1, 2, 2},
      {5, 70, 3, 3, 1, 3, 1, 1},   {0, 100, 1, 3, 1, 2, 0, 1}, {0, 37, 1, 8, 1, 1, 0, 3}};
  for (const Case& c : cases) {
    const ConvGeometry g = RectGeometry(c.h, c.w, c.kh, c.kw, c.sh, c.sw, c.ph, c.pw);
    for (int64_t channels : {1, 3, 4, 5}) {
      for (bool is_signed : {false, true}) {
        CAPTURE(c.h);
        CAPTURE(c.w);
        CAPTURE(c.kh);
        CAPTURE(c.kw);
        CAPTURE(c.sh);
        CAPTURE(c.sw);
        CAPTURE(channels);
        CAPTURE(is_signed);
        const int64_t p = g.OutSize(), kdim = channels * g.KernelSize();
        std::vector<uint8_t> x(static_cast<size_t>(channels * g.InSize()));
        for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
        const uint8_t pad = is_signed ? 0xF3 : 131;
        for (int64_t p0 : {int64_t{0}, p / 3 + 1}) {
          const int64_t pc = p - p0 - (p0 > 0 ? p / 5 : 0);
          if (pc <= 0) continue;
          std::vector<uint8_t> cols(static_cast<size_t>(kdim * pc));
          Im2ColBytes(g, x.data(), channels, p0, pc, pad, cols.data(), pc);
          auto want = PackedQB::Pack(is_signed, false, kdim, pc, cols.data(), pc);
          for (const auto& t : CompiledTargets()) {
            ScopedTarget st(t);
            CAPTURE(t.name);
            PackedQB got(false, 0, 0);
            got.RepackIm2Col(is_signed, g, x.data(), channels, p0, pc, pad);
            REQUIRE(got.k() == want->k());
            REQUIRE(got.n() == want->n());
            CHECK(got.b_signed() == want->b_signed());
            const int64_t bytes = got.panels() * PackedQB::kNR * got.kp();
            int64_t wrong = 0;
            for (int64_t i = 0; i < bytes; ++i) wrong += got.data()[i] != want->data()[i];
            for (int64_t j = 0; j < pc; ++j) wrong += got.col_sums()[j] != want->col_sums()[j];
            CHECK(wrong == 0);
          }
        }
      }
    }
  }
}

TEST_CASE("Im2RowBytesChannelsLast equals Im2RowBytes with (k..., c) columns, on every target") {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> byte(0, 255);
  // Square geometries (every spatial dim alike): interior and border taps, strides, dilations,
  // pads larger than the kernel reach, kernels as wide as the padded input.
  const std::vector<SquareConv> cases = {{1, 9, 3, 1, 1, 1}, {1, 7, 1, 2, 1, 0}, {2, 6, 3, 1, 1, 1},
                                         {2, 7, 3, 2, 1, 1}, {2, 8, 3, 1, 2, 2}, {2, 5, 5, 1, 1, 2},
                                         {2, 4, 2, 3, 1, 3}, {3, 4, 3, 1, 1, 1}, {3, 5, 2, 2, 2, 1},
                                         {2, 9, 4, 1, 1, 0}, {2, 3, 3, 1, 1, 0}};
  for (const SquareConv& cs : cases) {
    for (int64_t channels : {1, 2, 3, 5, 16, 19}) {
      const std::string shape = Describe(cs);
      CAPTURE(shape);
      CAPTURE(channels);
      const ConvGeometry g = SquareGeometry(cs);
      const int64_t in_size = g.InSize(), ksize = g.KernelSize(), p = g.OutSize();
      const int64_t kdim = channels * ksize;
      std::vector<uint8_t> x(static_cast<size_t>(channels * in_size)), xt(x.size());
      for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
      for (int64_t c = 0; c < channels; ++c) {
        for (int64_t i = 0; i < in_size; ++i) xt[i * channels + c] = x[c * in_size + i];
      }
      // A few position windows (all, and a middle part starting mid-row), row strides (packed,
      // rounded up to 4 as the convolution uses, wider) and every target.
      for (int64_t p0 : {int64_t{0}, p / 3}) {
        const int64_t pc = p - p0 - (p0 > 0 ? p / 5 : 0);
        if (pc <= 0) continue;
        std::vector<uint8_t> ref(static_cast<size_t>(pc * kdim));
        Im2RowBytes(g, x.data(), channels, p0, pc, 201, ref.data(), SerialParallel());
        for (const auto& t : CompiledTargets()) {
          ScopedTarget st(t);
          for (int64_t stride : {kdim, (kdim + 3) / 4 * 4, kdim + 37}) {
            CAPTURE(t.name);
            CAPTURE(stride);
            std::vector<uint8_t> got(static_cast<size_t>(pc * stride), 0xEE);
            Im2RowBytesChannelsLast(g, xt.data(), channels, p0, pc, 201, got.data(), stride,
                                    ThreadParallel(2));
            int64_t wrong = 0;
            for (int64_t q = 0; q < pc; ++q) {
              for (int64_t c = 0; c < channels; ++c) {
                for (int64_t k = 0; k < ksize; ++k) {
                  wrong += got[q * stride + k * channels + c] != ref[q * kdim + c * ksize + k];
                }
              }
              for (int64_t j = kdim; j < stride; ++j) wrong += got[q * stride + j] != 201;
            }
            CHECK(wrong == 0);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace simplecpp::kernels
