// Integer GEMM (kernels/qgemm.h): B packing, the Highway int16 dot-product micro-kernel, the
// tiled driver with the zero-point correction epilogue, and the 8-bit im2row for ConvInteger.
//
// The micro-kernel computes an kMR x kNR tile of dot products sum_k a'[m,k]*b'[n,k] with both
// operands stored as int16 rows of Kp elements (K zero-padded to a multiple of 32, so every
// target runs whole vectors and padding adds 0). Each (row, column) pair has its own int32
// accumulator vector fed by ReorderWidenMulAccumulate; the lanes are summed once at the end.
// Integer adds are associative modulo 2^32, so the lane order does not change the result.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/qgemm.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/qgemm.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D16 = hn::ScalableTag<int16_t>;
using D32 = hn::Repartition<int32_t, D16>;

constexpr int kMR = 2;
constexpr int kNR = 4;

// c[i*ldc_tile + j] = sum_k a[i][k] * b[j][k] for i < MR, j < NR (rows of kp int16).
template <int MR, int NR>
HWY_INLINE void DotTile(const int16_t* HWY_RESTRICT a, int64_t kp, const int16_t* HWY_RESTRICT b,
                        int32_t* out /* [MR][kNR] */) {
  const D16 d16;
  const D32 d32;
  const size_t N = hn::Lanes(d16);
  hn::Vec<D32> s0[MR][NR], s1[MR][NR];
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) {
      s0[i][j] = hn::Zero(d32);
      s1[i][j] = hn::Zero(d32);
    }
  }
  for (int64_t k = 0; k < kp; k += static_cast<int64_t>(N)) {
    hn::Vec<D16> va[MR];
    for (int i = 0; i < MR; ++i) va[i] = hn::LoadU(d16, a + i * kp + k);
    for (int j = 0; j < NR; ++j) {
      const hn::Vec<D16> vb = hn::LoadU(d16, b + j * kp + k);
      for (int i = 0; i < MR; ++i) {
        s0[i][j] = hn::ReorderWidenMulAccumulate(d32, va[i], vb, s0[i][j], s1[i][j]);
      }
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) {
      // Horizontal sum in uint32: int32 results wrap (as the ONNX int32 output does), and a
      // signed scalar add of the lanes would be undefined behaviour on overflow.
      HWY_ALIGN int32_t lanes[HWY_MAX_BYTES / sizeof(int32_t)];
      hn::Store(hn::Add(s0[i][j], s1[i][j]), d32, lanes);
      uint32_t sum = 0;
      for (size_t l = 0; l < hn::Lanes(d32); ++l) sum += static_cast<uint32_t>(lanes[l]);
      out[i * kNR + j] = static_cast<int32_t>(sum);
    }
  }
}

template <int MR>
HWY_INLINE void DotTileCols(int nr, const int16_t* a, int64_t kp, const int16_t* b, int32_t* out) {
  switch (nr) {
    case 4: DotTile<MR, 4>(a, kp, b, out); break;
    case 3: DotTile<MR, 3>(a, kp, b, out); break;
    case 2: DotTile<MR, 2>(a, kp, b, out); break;
    default: DotTile<MR, 1>(a, kp, b, out); break;
  }
}

// Dot products of rows [0, rows) of `a` (int16 [rows][kp]) with columns [n0, n1) of the packed B:
// dots[i * ldd + (j - n0)].
void QDotBlockImpl(const int16_t* a, int64_t rows, int64_t kp, const int16_t* b, int64_t n0,
                   int64_t n1, int32_t* dots, int64_t ldd) {
  int32_t tile[kMR * kNR];
  for (int64_t j = n0; j < n1; j += kNR) {
    const int nr = static_cast<int>(std::min<int64_t>(kNR, n1 - j));
    const int16_t* bj = b + j * kp;
    for (int64_t i = 0; i < rows; i += kMR) {
      const int mr = static_cast<int>(std::min<int64_t>(kMR, rows - i));
      if (mr == 2) {
        DotTileCols<2>(nr, a + i * kp, kp, bj, tile);
      } else {
        DotTileCols<1>(nr, a + i * kp, kp, bj, tile);
      }
      for (int ii = 0; ii < mr; ++ii) {
        for (int jj = 0; jj < nr; ++jj) dots[(i + ii) * ldd + (j - n0) + jj] = tile[ii * kNR + jj];
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(QDotBlockImpl);

namespace {

constexpr int64_t kRowBlock = 16;
constexpr int64_t kColBlock = 256;

inline uint32_t U(int32_t v) { return static_cast<uint32_t>(v); }

}  // namespace

PackedQB::PackedQB(bool b_signed, int64_t k, int64_t n)
    : b_signed_(b_signed),
      k_(k),
      n_(n),
      kp_((k + kKAlign - 1) / kKAlign * kKAlign),
      data_(static_cast<size_t>(n * kp_), 0),
      col_sums_(static_cast<size_t>(n), 0) {}

std::shared_ptr<const PackedQB> PackedQB::Pack(bool b_signed, bool trans_b, int64_t k, int64_t n,
                                               const void* b, int64_t ldb) {
  auto p = std::make_shared<PackedQB>(b_signed, k, n);
  const int64_t kp = p->kp_;
  for (int64_t j = 0; j < n; ++j) {
    int16_t* row = p->data_.data() + j * kp;
    int32_t sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      const int64_t idx = trans_b ? j * ldb + kk : kk * ldb + j;
      const int32_t v = b_signed ? static_cast<int32_t>(static_cast<const int8_t*>(b)[idx])
                                 : static_cast<int32_t>(static_cast<const uint8_t*>(b)[idx]) - 128;
      row[kk] = static_cast<int16_t>(v);
      sum += v;  // |sum| <= 128*K: fits int32 for any K below 2^24
    }
    p->col_sums_[j] = sum;
  }
  return p;
}

void QGemmToI32(int64_t m, const void* a, bool a_signed, int64_t lda, const int32_t* a_zp,
                int64_t a_zp_step, const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step,
                int32_t* c, int64_t ldc, const Parallel& parallel) {
  const int64_t n = b.n(), k = b.k(), kp = b.kp();
  if (m <= 0 || n <= 0) return;
  const int64_t row_blocks = (m + kRowBlock - 1) / kRowBlock;
  const int64_t col_blocks = (n + kColBlock - 1) / kColBlock;
  const int32_t a_shift = a_signed ? 128 : 0;
  const int32_t b_shift = b.shift();
  auto task = [&](int64_t t0, int64_t t1) {
    std::vector<int16_t> wa(static_cast<size_t>(kRowBlock * kp), 0);
    std::vector<int32_t> rowsum(static_cast<size_t>(kRowBlock));
    std::vector<int32_t> dots(static_cast<size_t>(kRowBlock * kColBlock));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t rb = t / col_blocks, cb = t % col_blocks;
      const int64_t m0 = rb * kRowBlock, m1 = std::min(m, m0 + kRowBlock);
      const int64_t n0 = cb * kColBlock, n1 = std::min(n, n0 + kColBlock);
      // Widen rows m0..m1 to a' = a + a_shift (int16, zero-padded to kp), with row sums.
      for (int64_t i = m0; i < m1; ++i) {
        int16_t* row = wa.data() + (i - m0) * kp;
        int32_t sum = 0;
        if (a_signed) {
          const int8_t* src = static_cast<const int8_t*>(a) + i * lda;
          for (int64_t kk = 0; kk < k; ++kk) {
            row[kk] = static_cast<int16_t>(src[kk] + 128);
            sum += row[kk];
          }
        } else {
          const uint8_t* src = static_cast<const uint8_t*>(a) + i * lda;
          for (int64_t kk = 0; kk < k; ++kk) {
            row[kk] = static_cast<int16_t>(src[kk]);
            sum += row[kk];
          }
        }
        rowsum[i - m0] = sum;  // <= 255*K: fits int32 for any K below 2^23
      }
      const int64_t ldd = n1 - n0;
      HWY_DYNAMIC_DISPATCH(QDotBlockImpl)(wa.data(), m1 - m0, kp, b.data(), n0, n1, dots.data(),
                                          ldd);
      // Epilogue: sum a'b' - zb'*rowsum - za'*colsum + K*za'*zb', modulo 2^32.
      const uint32_t uk = static_cast<uint32_t>(k);
      for (int64_t i = m0; i < m1; ++i) {
        const int32_t za = (a_zp ? a_zp[a_zp_step * i] : 0) + a_shift;
        const uint32_t rs = U(rowsum[i - m0]);
        const int32_t* drow = dots.data() + (i - m0) * ldd;
        int32_t* crow = c + i * ldc;
        for (int64_t j = n0; j < n1; ++j) {
          const int32_t zb = (b_zp ? b_zp[b_zp_step * j] : 0) + b_shift;
          const uint32_t v = U(drow[j - n0]) - U(zb) * rs - U(za) * U(b.col_sums()[j]) +
                             uk * U(za) * U(zb);
          crow[j] = static_cast<int32_t>(v);
        }
      }
    }
  };
  const int64_t tasks = row_blocks * col_blocks;
  if (tasks == 1) {
    task(0, 1);
  } else {
    parallel.For(tasks, task);
  }
}

void Im2RowBytes(const ConvGeometry& g, const uint8_t* x, int64_t channels, int64_t p_begin,
                 int64_t p_count, uint8_t pad_value, uint8_t* rows, const Parallel& parallel) {
  const int64_t ksize = g.KernelSize();
  const int64_t in_size = g.InSize();
  const int64_t row_len = channels * ksize;
  // Pad unused dims to 1 so the loops below are always 3-D.
  int64_t in[3], out[3], ker[3], str[3], dil[3], pad[3];
  for (int d = 0; d < 3; ++d) {
    const int s = d - (3 - g.rank);  // right-align: the innermost dims are the real ones
    in[d] = s >= 0 ? g.in[s] : 1;
    out[d] = s >= 0 ? g.out[s] : 1;
    ker[d] = s >= 0 ? g.kernel[s] : 1;
    str[d] = s >= 0 ? g.stride[s] : 1;
    dil[d] = s >= 0 ? g.dilation[s] : 1;
    pad[d] = s >= 0 ? g.pad[s] : 0;
  }
  constexpr int64_t kPositionsPerTask = 64;
  const int64_t tasks = (p_count + kPositionsPerTask - 1) / kPositionsPerTask;
  auto body = [&](int64_t t0, int64_t t1) {
    for (int64_t q = t0 * kPositionsPerTask; q < std::min(p_count, t1 * kPositionsPerTask); ++q) {
      const int64_t p = p_begin + q;
      const int64_t o2 = p % out[2], o1 = (p / out[2]) % out[1], o0 = p / (out[2] * out[1]);
      uint8_t* row = rows + q * row_len;
      for (int64_t ch = 0; ch < channels; ++ch) {
        const uint8_t* xc = x + ch * in_size;
        uint8_t* r = row + ch * ksize;
        for (int64_t k0 = 0; k0 < ker[0]; ++k0) {
          const int64_t i0 = o0 * str[0] - pad[0] + k0 * dil[0];
          const bool ok0 = i0 >= 0 && i0 < in[0];
          for (int64_t k1 = 0; k1 < ker[1]; ++k1) {
            const int64_t i1 = o1 * str[1] - pad[1] + k1 * dil[1];
            const bool ok1 = ok0 && i1 >= 0 && i1 < in[1];
            for (int64_t k2 = 0; k2 < ker[2]; ++k2) {
              const int64_t i2 = o2 * str[2] - pad[2] + k2 * dil[2];
              const bool ok = ok1 && i2 >= 0 && i2 < in[2];
              *r++ = ok ? xc[(i0 * in[1] + i1) * in[2] + i2] : pad_value;
            }
          }
        }
      }
    }
  };
  if (tasks <= 1) {
    body(0, tasks);
  } else {
    parallel.For(tasks, body);
  }
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
