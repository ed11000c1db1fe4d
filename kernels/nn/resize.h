// Resampling kernels: the separable one-axis pass of Resize (linear / cubic / antialiased, with
// source indices and weights precomputed by the op), the tf_crop_and_resize extrapolation fill,
// RoiAlign, GridSample and AffineGrid. Nearest-neighbour Resize is a pure gather
// (kernels/memory/copy.h AxisGatherBytes) and needs nothing here.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/parallel.h"

namespace simplecpp::kernels {

// One axis of a separable resize. x is [outer, in_len, inner], y is [outer, out_len, inner]:
//   y[o, j, i] = sum_{t < taps} weight[j*taps + t] * x[o, index[j*taps + t], i]
// index values lie in [0, in_len) (the op clamps them). Taps are summed in order t = 0..taps-1.
void ResizeAxisF32(int64_t outer, int64_t in_len, int64_t inner, int64_t out_len, int64_t taps,
                   const int64_t* index, const float* weight, const float* x, float* y,
                   const Parallel& parallel);
void ResizeAxisF64(int64_t outer, int64_t in_len, int64_t inner, int64_t out_len, int64_t taps,
                   const int64_t* index, const double* weight, const double* x, double* y,
                   const Parallel& parallel);

// y has dims `dims` (row-major). Every element whose index along some axis k is flagged
// (outside[k] non-null and outside[k][i_k] != 0) becomes `value` (tf_crop_and_resize).
void ResizeFillOutsideF32(const std::vector<int64_t>& dims,
                          const std::vector<const uint8_t*>& outside, float value, float* y);
void ResizeFillOutsideF64(const std::vector<int64_t>& dims,
                          const std::vector<const uint8_t*>& outside, double value, double* y);

// RoiAlign. x is [batch, channels, height, width]; rois [num_rois, 4] as (x1, y1, x2, y2) in the
// input's coordinate system before spatial_scale; batch_index [num_rois] already validated to lie
// in [0, batch). y is [num_rois, channels, out_h, out_w].
struct RoiAlignParams {
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  int64_t out_h = 1, out_w = 1;
  int64_t sampling_ratio = 0;  // 0: adaptive, ceil(roi size / output size)
  float spatial_scale = 1.0f;
  bool half_pixel = true;  // coordinate_transformation_mode half_pixel (else output_half_pixel)
  bool max_mode = false;   // mode "max" (else "avg")
};
void RoiAlignF32(const RoiAlignParams& p, const float* x, const float* rois,
                 const int64_t* batch_index, int64_t num_rois, float* y, const Parallel& parallel);
void RoiAlignF64(const RoiAlignParams& p, const double* x, const double* rois,
                 const int64_t* batch_index, int64_t num_rois, double* y, const Parallel& parallel);

// GridSample over `rank` (1..3) spatial dims. x is [N, C, in...], grid [N, out..., rank] with the
// normalized coordinates innermost-dim first (x, y[, z]), y [N, C, out...].
enum class GridSampleMode { kNearest, kLinear, kCubic };
enum class GridSamplePadding { kZeros, kBorder, kReflection };
struct GridSampleParams {
  int rank = 2;
  int64_t batch = 0, channels = 0;
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  GridSampleMode mode = GridSampleMode::kLinear;
  GridSamplePadding padding = GridSamplePadding::kZeros;
  bool align_corners = false;
};
void GridSampleF32(const GridSampleParams& p, const float* x, const float* grid, float* y,
                   const Parallel& parallel);
void GridSampleF64(const GridSampleParams& p, const double* x, const double* grid, double* y,
                   const Parallel& parallel);

// AffineGrid: theta [N, rank, rank+1], grid [N, size..., rank] (x first), size = spatial dims
// (rank 2: H, W; rank 3: D, H, W).
void AffineGridF32(int rank, int64_t batch, const int64_t* size, bool align_corners,
                   const float* theta, float* grid);
void AffineGridF64(int rank, int64_t batch, const int64_t* size, bool align_corners,
                   const double* theta, double* grid);

}  // namespace simplecpp::kernels
