// Packing for the float32 GEMM (layouts in kernels/gemm/gemm_internal.h) and the
// PackedAF32/PackedBF32 objects. Plain C++: packing is memory-bound copying, SIMD would gain little
// here.
#include <algorithm>
#include <cstring>
#include <new>

#include "core/aligned_buffer.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_internal.h"

namespace simplecpp::kernels {

float* AllocateFloats(int64_t count) {
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(float);
  float* p = static_cast<float*>(core::AllocateBuffer(bytes));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void FreeFloats(float* p) {
  core::FreeBuffer(p);
}

float* ThreadScratch::Get(int64_t count) {
  if (count > capacity_) {
    FreeFloats(data_);
    data_ = nullptr;
    capacity_ = 0;
    data_ = AllocateFloats(count);
    capacity_ = count;
  }
  return data_;
}

void PackBPanels(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb, int64_t nr,
                 int64_t panel_begin, int64_t panel_end, float* out) {
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    const int64_t j0 = p * nr;
    const int64_t w = std::min(nr, n - j0);
    float* dst = out + p * k * nr;
    if (!trans_b) {
      // op(B) row k is contiguous: copy w floats, zero the padding.
      for (int64_t kk = 0; kk < k; ++kk) {
        std::memcpy(dst + kk * nr, b + kk * ldb + j0, static_cast<size_t>(w) * sizeof(float));
        std::fill(dst + kk * nr + w, dst + kk * nr + nr, 0.0f);
      }
    } else {
      // B is stored [N,K]: column j of op(B) is row j of B. Blocks of kKB rows of the panel:
      // the w source rows advance together (w cache lines, each used kKB times) and every
      // panel row is written whole, instead of one column of the whole panel per pass.
      constexpr int64_t kKB = 16;
      for (int64_t k0 = 0; k0 < k; k0 += kKB) {
        const int64_t kb = std::min(kKB, k - k0);
        for (int64_t kk = k0; kk < k0 + kb; ++kk) {
          std::fill(dst + kk * nr + w, dst + kk * nr + nr, 0.0f);
        }
        for (int64_t jj = 0; jj < w; ++jj) {
          const float* src = b + (j0 + jj) * ldb + k0;
          float* d = dst + k0 * nr + jj;
          for (int64_t kk = 0; kk < kb; ++kk) d[kk * nr] = src[kk];
        }
      }
    }
  }
}

void PackABlock(bool trans_a, const float* a, int64_t lda, int64_t i0, int64_t rows, int64_t k0,
                int64_t kc, int64_t mr, float* out) {
  const int64_t strips = (rows + mr - 1) / mr;
  for (int64_t s = 0; s < strips; ++s) {
    const int64_t r0 = i0 + s * mr;
    const int64_t h = std::min(mr, i0 + rows - r0);
    float* dst = out + s * kc * mr;
    if (trans_a) {
      // A is stored [K,M]: op(A) column k is contiguous.
      for (int64_t kk = 0; kk < kc; ++kk) {
        std::memcpy(dst + kk * mr, a + (k0 + kk) * lda + r0,
                    static_cast<size_t>(h) * sizeof(float));
        std::fill(dst + kk * mr + h, dst + kk * mr + mr, 0.0f);
      }
    } else {
      for (int64_t r = 0; r < h; ++r) {
        const float* src = a + (r0 + r) * lda + k0;
        for (int64_t kk = 0; kk < kc; ++kk) dst[kk * mr + r] = src[kk];
      }
      for (int64_t r = h; r < mr; ++r) {
        for (int64_t kk = 0; kk < kc; ++kk) dst[kk * mr + r] = 0.0f;
      }
    }
  }
}

void PackBPanels16(Float16Kind kind, bool trans_b, int64_t k, int64_t n, const uint16_t* b,
                   int64_t ldb, int64_t nr, int64_t panel_begin, int64_t panel_end, float* out) {
  constexpr int64_t kPiece = 256;
  float tmp[kPiece];
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    const int64_t j0 = p * nr;
    const int64_t w = std::min(nr, n - j0);
    float* dst = out + p * k * nr;
    if (!trans_b) {
      for (int64_t kk = 0; kk < k; ++kk) {
        Widen16(kind, b + kk * ldb + j0, dst + kk * nr, static_cast<size_t>(w));
        std::fill(dst + kk * nr + w, dst + kk * nr + nr, 0.0f);
      }
    } else {
      for (int64_t kk = 0; kk < k; ++kk) std::fill(dst + kk * nr + w, dst + kk * nr + nr, 0.0f);
      for (int64_t jj = 0; jj < w; ++jj) {
        const uint16_t* src = b + (j0 + jj) * ldb;
        for (int64_t k0 = 0; k0 < k; k0 += kPiece) {
          const int64_t len = std::min(kPiece, k - k0);
          Widen16(kind, src + k0, tmp, static_cast<size_t>(len));
          for (int64_t kk = 0; kk < len; ++kk) dst[(k0 + kk) * nr + jj] = tmp[kk];
        }
      }
    }
  }
}

void PackABlock16(Float16Kind kind, bool trans_a, const uint16_t* a, int64_t lda, int64_t i0,
                  int64_t rows, int64_t k0, int64_t kc, int64_t mr, float* out) {
  constexpr int64_t kPiece = 256;
  float tmp[kPiece];
  const int64_t strips = (rows + mr - 1) / mr;
  for (int64_t s = 0; s < strips; ++s) {
    const int64_t r0 = i0 + s * mr;
    const int64_t h = std::min(mr, i0 + rows - r0);
    float* dst = out + s * kc * mr;
    if (trans_a) {
      for (int64_t kk = 0; kk < kc; ++kk) {
        Widen16(kind, a + (k0 + kk) * lda + r0, dst + kk * mr, static_cast<size_t>(h));
        std::fill(dst + kk * mr + h, dst + kk * mr + mr, 0.0f);
      }
    } else {
      for (int64_t r = 0; r < h; ++r) {
        const uint16_t* src = a + (r0 + r) * lda + k0;
        for (int64_t q = 0; q < kc; q += kPiece) {
          const int64_t len = std::min(kPiece, kc - q);
          Widen16(kind, src + q, tmp, static_cast<size_t>(len));
          for (int64_t kk = 0; kk < len; ++kk) dst[(q + kk) * mr + r] = tmp[kk];
        }
      }
      for (int64_t r = h; r < mr; ++r) {
        for (int64_t kk = 0; kk < kc; ++kk) dst[kk * mr + r] = 0.0f;
      }
    }
  }
}

namespace {
void DeleteFloats(float* p) { FreeFloats(p); }
}  // namespace

PackedBF32::PackedBF32(int64_t k, int64_t n, int64_t nr)
    : k_(k), n_(n), nr_(nr), data_(nullptr, &DeleteFloats) {
  const int64_t count = (n + nr - 1) / nr * nr * k;
  data_.reset(AllocateFloats(count));
  std::fill(data_.get(), data_.get() + count, 0.0f);
}

float PackedBF32::At(int64_t kk, int64_t j) const {
  const int64_t p = j / nr_;
  return data_[p * k_ * nr_ + kk * nr_ + (j - p * nr_)];
}

std::shared_ptr<const PackedBF32> PackedBF32::Pack(bool trans_b, int64_t k, int64_t n,
                                                   const float* b, int64_t ldb) {
  const int64_t nr = CurrentGemmTileShape().nr;
  auto packed = std::make_shared<PackedBF32>(k, n, nr);
  PackBPanels(trans_b, k, n, b, ldb, nr, 0, (n + nr - 1) / nr, packed->data_.get());
  return packed;
}

std::shared_ptr<const PackedBF32> PackedBF32::Pack16(Float16Kind kind, bool trans_b, int64_t k,
                                                     int64_t n, const uint16_t* b, int64_t ldb) {
  const int64_t nr = CurrentGemmTileShape().nr;
  auto packed = std::make_shared<PackedBF32>(k, n, nr);
  PackBPanels16(kind, trans_b, k, n, b, ldb, nr, 0, (n + nr - 1) / nr, packed->data_.get());
  return packed;
}

PackedAF32::PackedAF32(int64_t m, int64_t k, int64_t mr)
    : m_(m), k_(k), mr_(mr), data_(nullptr, &DeleteFloats) {
  const int64_t count = (m + mr - 1) / mr * mr * k;
  data_.reset(AllocateFloats(count));
  std::fill(data_.get(), data_.get() + count, 0.0f);
}

float PackedAF32::At(int64_t i, int64_t kk) const {
  const int64_t s = i / mr_;
  return data_[s * k_ * mr_ + kk * mr_ + (i - s * mr_)];
}

std::shared_ptr<const PackedAF32> PackedAF32::Pack(bool trans_a, int64_t m, int64_t k,
                                                   const float* a, int64_t lda) {
  const int64_t mr = CurrentGemmTileShape().mr;
  auto packed = std::make_shared<PackedAF32>(m, k, mr);
  if (m > 0) PackABlock(trans_a, a, lda, 0, m, 0, k, mr, packed->data_.get());
  return packed;
}

std::shared_ptr<const PackedAF32> PackedAF32::Pack16(Float16Kind kind, bool trans_a, int64_t m,
                                                     int64_t k, const uint16_t* a, int64_t lda) {
  const int64_t mr = CurrentGemmTileShape().mr;
  auto packed = std::make_shared<PackedAF32>(m, k, mr);
  if (m > 0) PackABlock16(kind, trans_a, a, lda, 0, m, 0, k, mr, packed->data_.get());
  return packed;
}

}  // namespace simplecpp::kernels
