// Data movement helpers (kernels/memory/copy.h). Every function is written once against a small
// "mover" that copies / repeats / fills elements: typed movers for 1, 2, 4 and 8-byte elements, a
// memcpy mover for other sizes, and a std::string mover. Work is split into tasks whose boundaries
// depend only on the problem size (not on the thread count).
#include "kernels/memory/copy.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace simplecpp::kernels {
namespace {

// Rows per task so that a task moves roughly 16K elements.
int64_t RowsPerTask(int64_t row_len) {
  return std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, row_len));
}

template <typename T>
struct TypedMover {
  const T* in;
  T* out;
  T fill;
  void Copy(int64_t dst, int64_t src, int64_t n) const {
    std::memcpy(out + dst, in + src, static_cast<size_t>(n) * sizeof(T));
  }
  void Repeat(int64_t dst, int64_t src, int64_t n) const {
    const T v = in[src];
    std::fill(out + dst, out + dst + n, v);
  }
  void Strided(int64_t dst, int64_t src, int64_t step, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) out[dst + i] = in[src + i * step];
  }
  void Fill(int64_t dst, int64_t n) const { std::fill(out + dst, out + dst + n, fill); }
  void One(int64_t dst, int64_t src) const { out[dst] = in[src]; }
  void RepeatEach(int64_t dst, int64_t src, int64_t step, int64_t each, int64_t n) const {
    T* o = out + dst;
    const T* s = in + src;
    const int64_t sources = n / each;
    // Nearest upsampling by 2, 4 and 8 (a detector's feature pyramid): fixed-count inner loops
    // the compiler unrolls, where a std::fill per source element cost several times the copy
    // (most for 16-bit elements).
    switch (each) {
      case 2: return RepeatEachOf<2>(o, s, step, sources);
      case 4: return RepeatEachOf<4>(o, s, step, sources);
      case 8: return RepeatEachOf<8>(o, s, step, sources);
      default:
        for (int64_t i = 0; i < sources; ++i) {
          std::fill(o + i * each, o + (i + 1) * each, s[i * step]);
        }
    }
  }
  template <int kEach>
  static void RepeatEachOf(T* o, const T* s, int64_t step, int64_t sources) {
    for (int64_t i = 0; i < sources; ++i) {
      const T v = s[i * step];
      for (int k = 0; k < kEach; ++k) o[kEach * i + k] = v;
    }
  }
};

// RepeatEach for the movers without a typed loop: one Repeat per source element.
template <typename M>
void RepeatEachBy(const M& m, int64_t dst, int64_t src, int64_t step, int64_t each, int64_t n) {
  for (int64_t i = 0; i < n / each; ++i) m.Repeat(dst + i * each, src + i * step, each);
}

struct BytesMover {
  const unsigned char* in;
  unsigned char* out;
  const unsigned char* fill;
  size_t es;
  void Copy(int64_t dst, int64_t src, int64_t n) const {
    std::memcpy(out + static_cast<size_t>(dst) * es, in + static_cast<size_t>(src) * es,
                static_cast<size_t>(n) * es);
  }
  void Repeat(int64_t dst, int64_t src, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) Copy(dst + i, src, 1);
  }
  void Strided(int64_t dst, int64_t src, int64_t step, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) Copy(dst + i, src + i * step, 1);
  }
  void Fill(int64_t dst, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) std::memcpy(out + static_cast<size_t>(dst + i) * es, fill, es);
  }
  void One(int64_t dst, int64_t src) const { Copy(dst, src, 1); }
};

struct StringMover {
  const std::string* in;
  std::string* out;
  const std::string* fill;
  void Copy(int64_t dst, int64_t src, int64_t n) const {
    std::copy(in + src, in + src + n, out + dst);
  }
  void Repeat(int64_t dst, int64_t src, int64_t n) const {
    std::fill(out + dst, out + dst + n, in[src]);
  }
  void Strided(int64_t dst, int64_t src, int64_t step, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) out[dst + i] = in[src + i * step];
  }
  void Fill(int64_t dst, int64_t n) const { std::fill(out + dst, out + dst + n, *fill); }
  void One(int64_t dst, int64_t src) const { out[dst] = in[src]; }
};

// Calls fn(mover) with the fastest mover for elem_size.
template <typename Fn>
void WithByteMover(const void* in, void* out, const void* fill, size_t es, Fn&& fn) {
  auto typed = [&](auto tag) {
    using T = decltype(tag);
    T f{};
    if (fill != nullptr) std::memcpy(&f, fill, sizeof(T));
    fn(TypedMover<T>{static_cast<const T*>(in), static_cast<T*>(out), f});
  };
  switch (es) {
    case 1: typed(uint8_t{}); return;
    case 2: typed(uint16_t{}); return;
    case 4: typed(uint32_t{}); return;
    case 8: typed(uint64_t{}); return;
    default:
      fn(BytesMover{static_cast<const unsigned char*>(in), static_cast<unsigned char*>(out),
                    static_cast<const unsigned char*>(fill), es});
  }
}

template <typename M, typename = void>
constexpr bool kHasRepeatEach = false;
template <typename M>
constexpr bool kHasRepeatEach<M, std::void_t<decltype(&M::RepeatEach)>> = true;

template <typename M>
void AxisGatherRun(const AxisGatherPlan& p, const M& m, const Parallel& parallel) {
  if (p.total == 0) return;
  const int64_t rows_per_task = RowsPerTask(p.inner_len);
  const int64_t tasks = (p.outer_count + rows_per_task - 1) / rows_per_task;
  const int nk = static_cast<int>(p.outer_dims.size());
  parallel.For(tasks, [&](int64_t tb, int64_t te) {
    std::vector<int64_t> idx(static_cast<size_t>(nk));
    for (int64_t t = tb; t < te; ++t) {
      const int64_t row0 = t * rows_per_task;
      const int64_t row1 = std::min(p.outer_count, row0 + rows_per_task);
      int64_t rem = row0;
      for (int k = nk - 1; k >= 0; --k) {
        idx[k] = rem % p.outer_dims[k];
        rem /= p.outer_dims[k];
      }
      for (int64_t row = row0; row < row1; ++row) {
        int64_t base = 0;
        bool fill_row = false;
        for (int k = 0; k < nk; ++k) {
          const int64_t o = p.outer_offsets[k][idx[k]];
          if (o < 0) fill_row = true;
          base += o;
        }
        const int64_t dst = row * p.inner_len;
        if (fill_row) {
          m.Fill(dst, p.inner_len);
        } else {
          for (const AxisGatherPlan::Run& r : p.runs) {
            if (r.each > 1) {
              if constexpr (kHasRepeatEach<M>) {
                m.RepeatEach(dst + r.out_begin, base + r.src, r.step, r.each, r.len);
              } else {
                RepeatEachBy(m, dst + r.out_begin, base + r.src, r.step, r.each, r.len);
              }
            } else if (r.src < 0) {
              m.Fill(dst + r.out_begin, r.len);
            } else if (r.step == 1) {
              m.Copy(dst + r.out_begin, base + r.src, r.len);
            } else if (r.step == 0) {
              m.Repeat(dst + r.out_begin, base + r.src, r.len);
            } else {
              m.Strided(dst + r.out_begin, base + r.src, r.step, r.len);
            }
          }
        }
        for (int k = nk - 1; k >= 0; --k) {  // next row
          if (++idx[k] < p.outer_dims[k]) break;
          idx[k] = 0;
        }
      }
    }
  });
}

template <typename M>
void CopyRowsRun(const M& m, int64_t src_stride, int64_t dst_stride, int64_t rows, int64_t row_len,
                 const Parallel& parallel) {
  if (rows == 0 || row_len == 0) return;
  constexpr int64_t kTaskElements = int64_t{1} << 14;
  if (row_len > 2 * kTaskElements) {
    // Long rows (Concat of whole feature maps) are cut into pieces of a task's size, so that
    // several threads share even a single row.
    const int64_t pieces = (row_len + kTaskElements - 1) / kTaskElements;
    parallel.For(rows * pieces, [&](int64_t tb, int64_t te) {
      for (int64_t t = tb; t < te; ++t) {
        const int64_t r = t / pieces, at = (t % pieces) * kTaskElements;
        const int64_t n = std::min(kTaskElements, row_len - at);
        m.Copy(r * dst_stride + at, r * src_stride + at, n);
      }
    });
    return;
  }
  const int64_t rpt = RowsPerTask(row_len);
  parallel.For((rows + rpt - 1) / rpt, [&](int64_t tb, int64_t te) {
    const int64_t r1 = std::min(rows, te * rpt);
    for (int64_t r = tb * rpt; r < r1; ++r) m.Copy(r * dst_stride, r * src_stride, row_len);
  });
}

template <typename M>
void GatherRun(const M& m, int64_t outer, int64_t axis_dim, int64_t inner, const int64_t* indices,
               int64_t n, const Parallel& parallel) {
  const int64_t rows = outer * n;
  if (rows == 0 || inner == 0) return;
  const int64_t rpt = RowsPerTask(inner);
  parallel.For((rows + rpt - 1) / rpt, [&](int64_t tb, int64_t te) {
    const int64_t r1 = std::min(rows, te * rpt);
    for (int64_t r = tb * rpt; r < r1; ++r) {
      const int64_t o = r / n, k = r % n;
      m.Copy(r * inner, (o * axis_dim + indices[k]) * inner, inner);
    }
  });
}

template <typename M>
void GatherElementsRun(const M& m, const std::vector<int64_t>& data_dims,
                       const std::vector<int64_t>& index_dims, const int64_t* indices, int axis,
                       const Parallel& parallel) {
  const int r = static_cast<int>(index_dims.size());
  int64_t total = 1;
  for (int64_t d : index_dims) total *= d;
  if (total == 0) return;
  if (r == 0) {
    m.One(0, 0);
    return;
  }
  std::vector<int64_t> dstride(r);
  int64_t s = 1;
  for (int k = r - 1; k >= 0; --k) {
    dstride[k] = s;
    s *= data_dims[k];
  }
  const int64_t row_len = index_dims[r - 1];
  const int64_t rows = total / row_len;
  const int64_t rpt = RowsPerTask(row_len);
  parallel.For((rows + rpt - 1) / rpt, [&](int64_t tb, int64_t te) {
    const int64_t r1 = std::min(rows, te * rpt);
    for (int64_t row = tb * rpt; row < r1; ++row) {
      // Base offset of the row's coordinates, except the axis coordinate.
      int64_t base = 0, rem = row;
      for (int k = r - 2; k >= 0; --k) {
        const int64_t i = rem % index_dims[k];
        rem /= index_dims[k];
        if (k != axis) base += i * dstride[k];
      }
      const int64_t* ind = indices + row * row_len;
      const int64_t dst = row * row_len;
      if (axis == r - 1) {
        for (int64_t j = 0; j < row_len; ++j) m.One(dst + j, base + ind[j]);
      } else {
        const int64_t as = dstride[axis];
        for (int64_t j = 0; j < row_len; ++j) m.One(dst + j, base + j + ind[j] * as);
      }
    }
  });
}

template <typename I>
int64_t NormalizeIndices(const I* in, int64_t n, int64_t bound, int64_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = static_cast<int64_t>(in[i]);
    if (v < -bound || v >= bound) return i;
    out[i] = v < 0 ? v + bound : v;
  }
  return -1;
}

}  // namespace

AxisGatherPlan PlanAxisGather(size_t elem_size, const std::vector<int64_t>& out_dims,
                              std::vector<std::vector<int64_t>> offsets) {
  AxisGatherPlan p;
  p.elem_size = elem_size;
  p.total = 1;
  for (int64_t d : out_dims) p.total *= d;
  if (p.total == 0) return p;
  int k = static_cast<int>(out_dims.size()) - 1;
  std::vector<int64_t> inner = {0};  // rank 0: one element at offset 0
  if (k >= 0) {
    inner = std::move(offsets[k]);
    --k;
  }
  // Merge outer axes into the inner one while the inner row is short (fewer, longer runs and
  // less per-row overhead); a merged offset is "fill" when either part is.
  constexpr int64_t kMinInner = 256, kMaxTable = 1 << 16;
  while (k >= 0 && static_cast<int64_t>(inner.size()) < kMinInner &&
         static_cast<int64_t>(inner.size()) * out_dims[k] <= kMaxTable) {
    std::vector<int64_t> merged;
    merged.reserve(inner.size() * static_cast<size_t>(out_dims[k]));
    for (int64_t a : offsets[k]) {
      for (int64_t b : inner) merged.push_back(a < 0 || b < 0 ? -1 : a + b);
    }
    inner = std::move(merged);
    --k;
  }
  for (int j = 0; j <= k; ++j) {
    p.outer_dims.push_back(out_dims[j]);
    p.outer_offsets.push_back(std::move(offsets[j]));
    p.outer_count *= out_dims[j];
  }
  p.inner_len = static_cast<int64_t>(inner.size());
  // Split the inner row into runs.
  const int64_t n = p.inner_len;
  for (int64_t j = 0; j < n;) {
    AxisGatherPlan::Run r{j, 1, inner[j], 1};
    if (inner[j] < 0) {
      while (j + r.len < n && inner[j + r.len] < 0) ++r.len;
    } else if (j + 1 < n && inner[j + 1] >= 0) {
      r.step = inner[j + 1] - inner[j];
      while (j + r.len < n && inner[j + r.len] >= 0 &&
             inner[j + r.len] - inner[j + r.len - 1] == r.step) {
        ++r.len;
      }
    }
    // Equal step-0 runs whose sources advance evenly (x2 nearest upsampling: 0,0,1,1,2,2...)
    // become one run of `each` copies per source element.
    if (r.step == 0 && r.len > 1 && inner[j] >= 0 && !p.runs.empty()) {
      AxisGatherPlan::Run& last = p.runs.back();
      const int64_t last_each = last.each > 1 ? last.each : last.len;
      const bool last_repeats = last.src >= 0 && (last.each > 1 || last.step == 0);
      const int64_t last_src_end = last.src + (last.len / last_each - 1) * last.step;
      const int64_t step = inner[j] - last_src_end;
      if (last_repeats && last_each == r.len && last.out_begin + last.len == j &&
          (last.each == 1 || step == last.step)) {
        last.each = last_each;
        last.step = step;
        last.len += r.len;
        j += r.len;
        continue;
      }
    }
    p.runs.push_back(r);
    j += r.len;
  }
  return p;
}

void AxisGatherBytes(const AxisGatherPlan& plan, const void* in, void* out, const void* fill,
                     const Parallel& parallel) {
  WithByteMover(in, out, fill, plan.elem_size,
                [&](const auto& m) { AxisGatherRun(plan, m, parallel); });
}

void AxisGatherStrings(const AxisGatherPlan& plan, const std::string* in, std::string* out,
                       const std::string* fill, const Parallel& parallel) {
  static const std::string kEmpty;
  AxisGatherRun(plan, StringMover{in, out, fill ? fill : &kEmpty}, parallel);
}

void CopyRowsBytes(const void* src, int64_t src_stride, void* dst, int64_t dst_stride, int64_t rows,
                   int64_t row_len, size_t elem_size, const Parallel& parallel) {
  WithByteMover(src, dst, nullptr, elem_size, [&](const auto& m) {
    CopyRowsRun(m, src_stride, dst_stride, rows, row_len, parallel);
  });
}

void CopyRowsStrings(const std::string* src, int64_t src_stride, std::string* dst,
                     int64_t dst_stride, int64_t rows, int64_t row_len, const Parallel& parallel) {
  CopyRowsRun(StringMover{src, dst, nullptr}, src_stride, dst_stride, rows, row_len, parallel);
}

void GatherBytes(const void* in, void* out, size_t elem_size, int64_t outer, int64_t axis_dim,
                 int64_t inner, const int64_t* indices, int64_t n, const Parallel& parallel) {
  WithByteMover(in, out, nullptr, elem_size, [&](const auto& m) {
    GatherRun(m, outer, axis_dim, inner, indices, n, parallel);
  });
}

void GatherStrings(const std::string* in, std::string* out, int64_t outer, int64_t axis_dim,
                   int64_t inner, const int64_t* indices, int64_t n, const Parallel& parallel) {
  GatherRun(StringMover{in, out, nullptr}, outer, axis_dim, inner, indices, n, parallel);
}

int64_t NormalizeIndicesI64(const int64_t* in, int64_t n, int64_t bound, int64_t* out) {
  return NormalizeIndices(in, n, bound, out);
}
int64_t NormalizeIndicesI32(const int32_t* in, int64_t n, int64_t bound, int64_t* out) {
  return NormalizeIndices(in, n, bound, out);
}

void GatherElementsBytes(const void* in, const std::vector<int64_t>& data_dims, void* out,
                         const std::vector<int64_t>& index_dims, const int64_t* indices, int axis,
                         size_t elem_size, const Parallel& parallel) {
  WithByteMover(in, out, nullptr, elem_size, [&](const auto& m) {
    GatherElementsRun(m, data_dims, index_dims, indices, axis, parallel);
  });
}

void GatherElementsStrings(const std::string* in, const std::vector<int64_t>& data_dims,
                           std::string* out, const std::vector<int64_t>& index_dims,
                           const int64_t* indices, int axis, const Parallel& parallel) {
  GatherElementsRun(StringMover{in, out, nullptr}, data_dims, index_dims, indices, axis, parallel);
}

void FillBytes(void* out, int64_t n, const void* value, size_t elem_size) {
  WithByteMover(nullptr, out, value, elem_size, [&](const auto& m) { m.Fill(0, n); });
}

}  // namespace simplecpp::kernels
