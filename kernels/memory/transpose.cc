// Transpose by bytes (kernels/memory/transpose.h). Pure data movement: the cost is memory traffic,
// so the work goes into the plan (fewer, longer axes) and into tiling the 2-D core so that both the
// reads and the writes of a tile stay within a few cache lines per row. Scalar code on purpose:
// it works for every element size and the compiler unrolls the fixed-size tiles; single bytes
// (the integer ops' layouts) go through the vector TransposeByteMatrix per tile.
#include "kernels/memory/transpose.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace simplecpp::kernels {
namespace {

// Tile edge in elements: a tile row covers 64 bytes (one cache line) for small elements.
constexpr int64_t TileFor(size_t elem_size) {
  return elem_size >= 8 ? 8 : static_cast<int64_t>(64 / elem_size);
}

// out[j*out_stride_b + i] = in[i*in_stride_a + j] over the tile [i0,i1) x [j0,j1).
template <typename T>
void Tile2D(const T* in, T* out, int64_t in_stride_a, int64_t out_stride_b, int64_t i0, int64_t i1,
            int64_t j0, int64_t j1) {
  for (int64_t j = j0; j < j1; ++j) {
    T* o = out + j * out_stride_b;
    const T* src = in + j;
    for (int64_t i = i0; i < i1; ++i) o[i] = src[i * in_stride_a];
  }
}

void Tile2DBytes(const unsigned char* in, unsigned char* out, size_t es, int64_t in_stride_a,
                 int64_t out_stride_b, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  for (int64_t j = j0; j < j1; ++j) {
    unsigned char* o = out + static_cast<size_t>(j * out_stride_b) * es;
    const unsigned char* src = in + static_cast<size_t>(j) * es;
    for (int64_t i = i0; i < i1; ++i) {
      std::memcpy(o + static_cast<size_t>(i) * es, src + static_cast<size_t>(i * in_stride_a) * es, es);
    }
  }
}

// One task: one outer index and one block of tile rows along b.
template <typename T>
void RunTask(const TransposePlan& p, const unsigned char* in, unsigned char* out, int64_t outer,
             int64_t b_block, int64_t tile) {
  int64_t in_off = 0, out_off = 0;
  for (int k = static_cast<int>(p.outer_dims.size()) - 1; k >= 0; --k) {
    const int64_t idx = outer % p.outer_dims[k];
    outer /= p.outer_dims[k];
    in_off += idx * p.outer_in_strides[k];
    out_off += idx * p.outer_out_strides[k];
  }
  const int64_t j0 = b_block * tile;
  const int64_t j1 = std::min(p.dim_b, j0 + tile);
  const size_t es = p.elem_size;
  for (int64_t i0 = 0; i0 < p.dim_a; i0 += tile) {
    const int64_t i1 = std::min(p.dim_a, i0 + tile);
    if constexpr (std::is_same_v<T, uint8_t>) {
      // Single bytes: the vector 16 x 16 blocks (the tile is [i0,i1) x [j0,j1) of the matrix
      // in[i*in_stride_a + j], written to out[j*out_stride_b + i]).
      TransposeByteMatrix(in + in_off + i0 * p.in_stride_a + j0, p.in_stride_a,
                          out + out_off + j0 * p.out_stride_b + i0, p.out_stride_b, i1 - i0,
                          j1 - j0);
    } else if constexpr (std::is_same_v<T, void>) {
      Tile2DBytes(in + static_cast<size_t>(in_off) * es, out + static_cast<size_t>(out_off) * es,
                  es, p.in_stride_a, p.out_stride_b, i0, i1, j0, j1);
    } else {
      Tile2D(reinterpret_cast<const T*>(in) + in_off, reinterpret_cast<T*>(out) + out_off,
             p.in_stride_a, p.out_stride_b, i0, i1, j0, j1);
    }
  }
}

template <typename T>
void RunAll(const TransposePlan& p, const void* in, void* out, const Parallel& parallel) {
  const int64_t tile = TileFor(p.elem_size);
  const int64_t b_blocks = (p.dim_b + tile - 1) / tile;
  const auto* src = static_cast<const unsigned char*>(in);
  auto* dst = static_cast<unsigned char*>(out);
  parallel.For(p.outer_count * b_blocks, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) RunTask<T>(p, src, dst, t / b_blocks, t % b_blocks, tile);
  });
}

}  // namespace

TransposePlan PlanTranspose(size_t elem_size, const std::vector<int64_t>& in_dims,
                            const std::vector<int64_t>& perm) {
  TransposePlan p;
  p.elem_size = elem_size;
  p.total = 1;
  for (int64_t d : in_dims) p.total *= d;
  if (p.total == 0) {
    p.is_copy = true;
    return p;
  }
  const int rank = static_cast<int>(in_dims.size());
  // 1. Drop size-1 axes: renumber the remaining input axes.
  std::vector<int64_t> new_index(rank, -1);
  std::vector<int64_t> dims;
  for (int a = 0; a < rank; ++a) {
    if (in_dims[a] != 1) {
      new_index[a] = static_cast<int64_t>(dims.size());
      dims.push_back(in_dims[a]);
    }
  }
  std::vector<int64_t> q;  // permutation over the kept axes, in output order
  for (int i = 0; i < rank; ++i) {
    if (new_index[perm[i]] >= 0) q.push_back(new_index[perm[i]]);
  }
  // 2. Merge output-adjacent axes that are also input-adjacent (q[i+1] == q[i] + 1).
  std::vector<std::vector<int64_t>> groups;  // input axes per merged axis, in output order
  for (size_t i = 0; i < q.size(); ++i) {
    if (!groups.empty() && groups.back().back() + 1 == q[i]) {
      groups.back().push_back(q[i]);
    } else {
      groups.push_back({q[i]});
    }
  }
  // Merged input axes, numbered by their first original input axis.
  std::vector<std::pair<int64_t, int64_t>> by_input;  // (first input axis, group index)
  for (size_t g = 0; g < groups.size(); ++g) by_input.push_back({groups[g].front(), static_cast<int64_t>(g)});
  std::sort(by_input.begin(), by_input.end());
  const int r = static_cast<int>(groups.size());
  std::vector<int64_t> mdims(r);       // merged dims in input order
  std::vector<int64_t> mperm(r);       // output position -> merged input axis
  std::vector<int64_t> input_pos(r);   // group index -> merged input axis
  for (int k = 0; k < r; ++k) input_pos[by_input[k].second] = k;
  for (int g = 0; g < r; ++g) {
    int64_t d = 1;
    for (int64_t a : groups[g]) d *= dims[a];
    mdims[input_pos[g]] = d;
    mperm[g] = input_pos[g];
  }
  if (r <= 1) {
    p.is_copy = true;
    return p;
  }
  // 3. An innermost axis that stays innermost becomes part of the element.
  int rr = r;
  if (mperm[r - 1] == r - 1) {
    p.elem_size *= static_cast<size_t>(mdims[r - 1]);
    p.total /= mdims[r - 1];
    rr = r - 1;
    // rr >= 2 here: with two axes in order, step 2 would have merged them into one.
  }
  std::vector<int64_t> in_strides(rr);
  int64_t s = 1;
  for (int a = rr - 1; a >= 0; --a) {
    in_strides[a] = s;
    s *= mdims[a];
  }
  std::vector<int64_t> out_dims(rr), out_strides(rr);
  for (int i = 0; i < rr; ++i) out_dims[i] = mdims[mperm[i]];
  s = 1;
  for (int i = rr - 1; i >= 0; --i) {
    out_strides[i] = s;
    s *= out_dims[i];
  }
  const int64_t a_axis = mperm[rr - 1];  // innermost in output
  const int64_t b_axis = rr - 1;         // innermost in input
  p.dim_a = mdims[a_axis];
  p.in_stride_a = in_strides[a_axis];
  p.dim_b = mdims[b_axis];
  for (int i = 0; i < rr; ++i) {
    if (mperm[i] == b_axis) p.out_stride_b = out_strides[i];
  }
  for (int i = 0; i < rr; ++i) {
    if (mperm[i] == a_axis || mperm[i] == b_axis) continue;
    p.outer_dims.push_back(out_dims[i]);
    p.outer_in_strides.push_back(in_strides[mperm[i]]);
    p.outer_out_strides.push_back(out_strides[i]);
    p.outer_count *= out_dims[i];
  }
  return p;
}

void TransposeBytes(const TransposePlan& p, const void* in, void* out, const Parallel& parallel) {
  if (p.total == 0) return;
  if (p.is_copy) {
    std::memcpy(out, in, static_cast<size_t>(p.total) * p.elem_size);
    return;
  }
  // Typed copies need pointers aligned to the element size (initializers borrowed from a
  // mapped model file may not be); otherwise copy element bytes.
  const uintptr_t misalignment =
      (reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out)) % p.elem_size;
  if (misalignment != 0) {
    RunAll<void>(p, in, out, parallel);
    return;
  }
  switch (p.elem_size) {
    case 1: RunAll<uint8_t>(p, in, out, parallel); break;
    case 2: RunAll<uint16_t>(p, in, out, parallel); break;
    case 4: RunAll<uint32_t>(p, in, out, parallel); break;
    case 8: RunAll<uint64_t>(p, in, out, parallel); break;
    default: RunAll<void>(p, in, out, parallel); break;
  }
}

}  // namespace simplecpp::kernels
