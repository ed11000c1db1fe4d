// im2col for the GEMM-based convolution (see kernels/conv/conv.h). Plain C++: it is a strided copy,
// bound by memory, and a contiguous run (stride 1) becomes a memcpy (a SIMD widening for 16-bit
// input, so a 16-bit image is converted one im2col chunk at a time).
#include "kernels/conv/conv.h"

#include <algorithm>
#include <cstring>

#include "kernels/conv/conv_geometry_internal.h"
#include "kernels/float16/float16.h"

namespace simplecpp::kernels {

int64_t ConvGeometry::InSize() const {
  int64_t s = 1;
  for (int d = 0; d < rank; ++d) s *= in[d];
  return s;
}

int64_t ConvGeometry::OutSize() const {
  int64_t s = 1;
  for (int d = 0; d < rank; ++d) s *= out[d];
  return s;
}

int64_t ConvGeometry::KernelSize() const {
  int64_t s = 1;
  for (int d = 0; d < rank; ++d) s *= kernel[d];
  return s;
}

namespace {

// Copies n contiguous elements of x into float32 (widening 16-bit storage).
inline void CopyRun(const float* src, float* dst, int64_t n, Float16Kind) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}
inline void CopyRun(const uint16_t* src, float* dst, int64_t n, Float16Kind kind) {
  Widen16(kind, src, dst, static_cast<size_t>(n));
}
inline float LoadOne(const float* p, Float16Kind) { return *p; }
inline float LoadOne(const uint16_t* p, Float16Kind kind) { return Widen16One(kind, *p); }

template <typename T>
void Im2ColImpl(const ConvGeometry& geometry, const T* x, Float16Kind kind, int64_t channels,
                int64_t p_begin, int64_t p_count, float* col, const Parallel& parallel) {
  const ConvGeometry3 g = WidenTo3(geometry);
  const int64_t ksize = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t rows = channels * ksize;
  const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
  const int64_t p_end = p_begin + p_count;
  if (rows == 0 || p_count == 0) return;
  // Tasks of whole rows, sized by the amount of data only.
  const int64_t rows_per_task = std::max<int64_t>(1, 16384 / p_count);
  const int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    const int64_t r_end = std::min(rows, t1 * rows_per_task);
    for (int64_t r = t0 * rows_per_task; r < r_end; ++r) {
      const ColRowTap t = ColRowTapAt(g, r);
      const int64_t c = t.channel, kz = t.kz, ky = t.ky, kx = t.kx;
      const int64_t off_x = kx * g.dilation[2] - g.pad[2];
      int64_t x_lo, x_hi;
      ValidOutputRange(off_x, g.stride[2], g.in[2], g.out[2], &x_lo, &x_hi);
      const T* xc = x + c * in_size;
      float* dst = col + r * p_count;
      int64_t p = p_begin;
      while (p < p_end) {
        // One run along the innermost output dimension.
        const OutputRun o = OutputRunAt(g, p, p_end);
        const int64_t oz = o.o0, oy = o.o1, ox0 = o.o2;
        const int64_t run = o.end - p;
        const int64_t iz = oz * g.stride[0] + kz * g.dilation[0] - g.pad[0];
        const int64_t iy = oy * g.stride[1] + ky * g.dilation[1] - g.pad[1];
        if (iz < 0 || iz >= g.in[0] || iy < 0 || iy >= g.in[1]) {
          std::fill(dst, dst + run, 0.0f);
        } else {
          const T* src = xc + (iz * g.in[1] + iy) * g.in[2];
          const int64_t lo = std::min(std::max(x_lo, ox0), ox0 + run);
          const int64_t hi = std::max(std::min(x_hi, ox0 + run), lo);
          std::fill(dst, dst + (lo - ox0), 0.0f);
          if (g.stride[2] == 1) {
            CopyRun(src + lo + off_x, dst + (lo - ox0), hi - lo, kind);
          } else {
            for (int64_t ox = lo; ox < hi; ++ox) {
              dst[ox - ox0] = LoadOne(src + ox * g.stride[2] + off_x, kind);
            }
          }
          std::fill(dst + (hi - ox0), dst + run, 0.0f);
        }
        dst += run;
        p += run;
      }
    }
  });
}

// Below this many col elements, Im2ColPackedF32 runs every task on the calling thread.
constexpr int64_t kSerialColFloats = int64_t{1} << 16;

}  // namespace

void Im2RowF32(const ConvGeometry& geometry, const float* x, int64_t channels, int64_t p_begin,
               int64_t p_count, float* rows) {
  const ConvGeometry3 g = WidenTo3(geometry);
  const int64_t kx_count = g.kernel[2];
  const int64_t row_len = channels * g.kernel[0] * g.kernel[1] * kx_count;
  const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
  for (int64_t q = 0; q < p_count; ++q) {
    const int64_t p = p_begin + q;
    const int64_t ox = p % g.out[2], oy = (p / g.out[2]) % g.out[1];
    const int64_t oz = p / (g.out[2] * g.out[1]);
    float* dst = rows + q * row_len;
    for (int64_t c = 0; c < channels; ++c) {
      const float* xc = x + c * in_size;
      for (int64_t kz = 0; kz < g.kernel[0]; ++kz) {
        const int64_t iz = oz * g.stride[0] + kz * g.dilation[0] - g.pad[0];
        for (int64_t ky = 0; ky < g.kernel[1]; ++ky, dst += kx_count) {
          const int64_t iy = oy * g.stride[1] + ky * g.dilation[1] - g.pad[1];
          if (iz < 0 || iz >= g.in[0] || iy < 0 || iy >= g.in[1]) {
            std::fill(dst, dst + kx_count, 0.0f);
            continue;
          }
          const float* src = xc + (iz * g.in[1] + iy) * g.in[2];
          const int64_t ix0 = ox * g.stride[2] - g.pad[2];
          if (g.dilation[2] == 1 && kx_count > 16) {
            // Taps kx in [lo, hi) read src[ix0 + kx], inside the row.
            const int64_t lo = std::min(std::max<int64_t>(-ix0, 0), kx_count);
            const int64_t hi = std::max(std::min(g.in[2] - ix0, kx_count), lo);
            std::fill(dst, dst + lo, 0.0f);
            std::copy(src + (ix0 + lo), src + (ix0 + hi), dst + lo);
            std::fill(dst + hi, dst + kx_count, 0.0f);
          } else {
            // Short kernel rows (or dilated ones) element by element: a library call per piece
            // would cost more than the copy.
            for (int64_t kx = 0; kx < kx_count; ++kx) {
              const int64_t ix = ix0 + kx * g.dilation[2];
              dst[kx] = ix >= 0 && ix < g.in[2] ? src[ix] : 0.0f;
            }
          }
        }
      }
    }
  }
}

void Im2ColPackedF32(const ConvGeometry& geometry, const float* x, int64_t channels,
                     int64_t p_begin, int64_t p_count, int64_t nr, float* out,
                     const Parallel& parallel) {
  const ConvGeometry3 g = WidenTo3(geometry);
  const int64_t ksize = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t rows = channels * ksize;
  const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
  if (rows == 0 || p_count == 0 || nr <= 0) return;
  const int64_t panels = (p_count + nr - 1) / nr;
  const int64_t pad_cols = panels * nr - p_count;
  const int64_t panel_stride = rows * nr;
  // Where the first position of the chunk lies (positions are row-major over out).
  const OutputRun first = OutputRunAt(g, p_begin, p_begin + p_count);
  const int64_t ox_begin = first.o2, oy_begin = first.o1, oz_begin = first.o0;
  const int64_t rows_per_task = std::max<int64_t>(1, 16384 / p_count);
  const int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  const Parallel& par = rows * p_count < kSerialColFloats ? SerialParallel() : parallel;
  par.For(tasks, [&](int64_t t0, int64_t t1) {
    const int64_t r_end = std::min(rows, t1 * rows_per_task);
    for (int64_t r = t0 * rows_per_task; r < r_end; ++r) {
      const ColRowTap t = ColRowTapAt(g, r);
      const int64_t c = t.channel, kz = t.kz, ky = t.ky, kx = t.kx;
      const int64_t off_x = kx * g.dilation[2] - g.pad[2];
      int64_t x_lo, x_hi;
      ValidOutputRange(off_x, g.stride[2], g.in[2], g.out[2], &x_lo, &x_hi);
      const float* xc = x + c * in_size;
      float* row = out + r * nr;  // column q of this row: row + (q / nr) * panel_stride + q % nr
      // Column cursor: panel pointer and the offset in it.
      float* dst = row;
      int64_t off = 0;
      auto zeros = [&](int64_t n) {
        while (n > 0) {
          const int64_t len = std::min(nr - off, n);
          for (int64_t i = 0; i < len; ++i) dst[off + i] = 0.0f;
          n -= len;
          off += len;
          if (off == nr) {
            off = 0;
            dst += panel_stride;
          }
        }
      };
      // n elements src[0], src[step], ... (step = the stride along x).
      auto copy = [&](const float* src, int64_t step, int64_t n) {
        while (n > 0) {
          const int64_t len = std::min(nr - off, n);
          float* d = dst + off;
          if (step == 1) {
            for (int64_t i = 0; i < len; ++i) d[i] = src[i];
          } else {
            for (int64_t i = 0; i < len; ++i) d[i] = src[i * step];
          }
          src += len * step;
          n -= len;
          off += len;
          if (off == nr) {
            off = 0;
            dst += panel_stride;
          }
        }
      };
      int64_t ox0 = ox_begin, oy = oy_begin, oz = oz_begin;
      for (int64_t q = 0; q < p_count;) {
        // One run along the innermost output dimension.
        const int64_t run = std::min(g.out[2] - ox0, p_count - q);
        const int64_t iz = oz * g.stride[0] + kz * g.dilation[0] - g.pad[0];
        const int64_t iy = oy * g.stride[1] + ky * g.dilation[1] - g.pad[1];
        if (iz < 0 || iz >= g.in[0] || iy < 0 || iy >= g.in[1]) {
          zeros(run);
        } else {
          const float* src = xc + (iz * g.in[1] + iy) * g.in[2];
          const int64_t lo = std::min(std::max(x_lo, ox0), ox0 + run);
          const int64_t hi = std::max(std::min(x_hi, ox0 + run), lo);
          zeros(lo - ox0);
          copy(src + lo * g.stride[2] + off_x, g.stride[2], hi - lo);
          zeros(ox0 + run - hi);
        }
        q += run;
        ox0 = 0;
        if (++oy == g.out[1]) {
          oy = 0;
          ++oz;
        }
      }
      zeros(pad_cols);
    }
  });
}

void Im2ColF32(const ConvGeometry& g, const float* x, int64_t channels, int64_t p_begin,
               int64_t p_count, float* col, const Parallel& parallel) {
  Im2ColImpl(g, x, Float16Kind::kHalf, channels, p_begin, p_count, col, parallel);
}

void Im2Col16(Float16Kind kind, const ConvGeometry& g, const uint16_t* x, int64_t channels,
              int64_t p_begin, int64_t p_count, float* col, const Parallel& parallel) {
  Im2ColImpl(g, x, kind, channels, p_begin, p_count, col, parallel);
}

}  // namespace simplecpp::kernels
