// Data movement helpers shared by the shape ops (Slice, Pad, Expand, Tile, Concat, Split, Gather,
// GatherElements), generic over the element size in bytes, with std::string twins for string
// tensors. Plans are built at Prepare; the run functions only move memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/parallel.h"

namespace simplecpp::kernels {

// ---- Axis gather: out[i_0, ..., i_{r-1}] = in[sum_k offsets[k][i_k]] ----
// Every output axis k has a table of input element offsets, one per output index; a negative
// entry means "no source": the element gets the fill value (constant Pad). Slice (start + i*step
// times the stride), Expand (stride 0 on broadcast axes), Tile (i % dim), and Pad reflect / edge /
// wrap are all such tables. The plan merges the innermost axes into one longer axis and splits it
// into runs (contiguous copies, repeats of one element, strided reads, fills) so the run loop is
// mostly memcpy.
struct AxisGatherPlan {
  size_t elem_size = 0;
  int64_t total = 0;  // output elements
  // Outer axes (all but the merged innermost one): sizes and offset tables.
  std::vector<int64_t> outer_dims;
  std::vector<std::vector<int64_t>> outer_offsets;
  int64_t outer_count = 1;
  int64_t inner_len = 0;
  struct Run {
    int64_t out_begin;  // within the inner row
    int64_t len;
    int64_t src;        // input offset of the first element; < 0: fill
    int64_t step;       // input offset step between the elements (0: repeat one element)
    // > 1: each source element fills `each` consecutive outputs (len is a multiple of it), and
    // step is between source elements: an integer-factor nearest upsample in one run.
    int64_t each = 1;
  };
  std::vector<Run> runs;
};

// out_dims.size() == offsets.size(), offsets[k].size() == out_dims[k].
AxisGatherPlan PlanAxisGather(size_t elem_size, const std::vector<int64_t>& out_dims,
                              std::vector<std::vector<int64_t>> offsets);
// fill: one element of elem_size bytes (may be null when no offset is negative).
void AxisGatherBytes(const AxisGatherPlan& plan, const void* in, void* out, const void* fill,
                     const Parallel& parallel);
void AxisGatherStrings(const AxisGatherPlan& plan, const std::string* in, std::string* out,
                       const std::string* fill, const Parallel& parallel);

// ---- Row copies (Concat, Split): dst[r*dst_stride + c] = src[r*src_stride + c], c < row_len ----
// Strides and lengths in elements.
void CopyRowsBytes(const void* src, int64_t src_stride, void* dst, int64_t dst_stride, int64_t rows,
                   int64_t row_len, size_t elem_size, const Parallel& parallel);
void CopyRowsStrings(const std::string* src, int64_t src_stride, std::string* dst,
                     int64_t dst_stride, int64_t rows, int64_t row_len, const Parallel& parallel);

// ---- Gather along an axis: in is [outer, axis_dim, inner], out is [outer, n, inner] ----
// out[o, k, :] = in[o, indices[k], :]. indices must already be normalized to [0, axis_dim).
void GatherBytes(const void* in, void* out, size_t elem_size, int64_t outer, int64_t axis_dim,
                 int64_t inner, const int64_t* indices, int64_t n, const Parallel& parallel);
void GatherStrings(const std::string* in, std::string* out, int64_t outer, int64_t axis_dim,
                   int64_t inner, const int64_t* indices, int64_t n, const Parallel& parallel);

// Converts int32/int64 indices to int64 in [0, bound), accepting [-bound, bound). Returns -1 when
// all are valid, else the position of the first invalid one (out is then partly written).
int64_t NormalizeIndicesI64(const int64_t* in, int64_t n, int64_t bound, int64_t* out);
int64_t NormalizeIndicesI32(const int32_t* in, int64_t n, int64_t bound, int64_t* out);

// ---- GatherElements: out has the shape of indices; along `axis` the input index is taken from
// indices (normalized), elsewhere it is the output's own index. data_dims and index_dims have the
// same rank; index_dims[k] <= data_dims[k] for k != axis (checked by the caller).
void GatherElementsBytes(const void* in, const std::vector<int64_t>& data_dims, void* out,
                         const std::vector<int64_t>& index_dims, const int64_t* indices, int axis,
                         size_t elem_size, const Parallel& parallel);
void GatherElementsStrings(const std::string* in, const std::vector<int64_t>& data_dims,
                           std::string* out, const std::vector<int64_t>& index_dims,
                           const int64_t* indices, int axis, const Parallel& parallel);

// Fills n elements of elem_size bytes with one value.
void FillBytes(void* out, int64_t n, const void* value, size_t elem_size);

}  // namespace simplecpp::kernels
