// Parameter shapes and runs (quant/param_shapes.h).
#include "quant/param_shapes.h"

#include <algorithm>

namespace simplecpp::quant {

bool IsOneElement(const Dims& dims) {
  for (int64_t d : dims) {
    if (d != 1) return false;
  }
  return true;
}

std::string CheckZeroPointShape(const Dims& scale, const Dims& zero_point) {
  const bool both_one = IsOneElement(scale) && IsOneElement(zero_point) && scale.size() <= 1 &&
                        zero_point.size() <= 1;
  if (both_one || zero_point == scale) return "";
  return "zero point shape " + DimsToString(zero_point) + " must equal the scale shape " +
         DimsToString(scale);
}

bool IsPerTensorScale(const Dims& scale, int64_t block_size) {
  return scale.empty() || (scale.size() == 1 && scale[0] == 1 && block_size == 0);
}

std::string ResolveAxisGranularity(const Dims& x, const Dims& scale, int64_t axis,
                                   int64_t block_size, QuantParams* params) {
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank == 0) return "per-axis or blocked scale " + DimsToString(scale) + " for a scalar input";
  if (axis < -rank || axis > rank - 1) {
    return "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank);
  }
  if (axis < 0) axis += rank;
  const int64_t len = x[axis];
  if (block_size == 0) {
    if (scale.size() != 1 || scale[0] != len) {
      return "per-axis scale " + DimsToString(scale) + " must be 1-D of length " +
             std::to_string(len) + " (x " + DimsToString(x) + ", axis " + std::to_string(axis) +
             ")";
    }
    params->granularity = Granularity::kPerAxis;
  } else {
    const int64_t nb = (len + block_size - 1) / block_size;
    bool ok = static_cast<int64_t>(scale.size()) == rank;
    for (int64_t d = 0; ok && d < rank; ++d) ok = scale[d] == (d == axis ? nb : x[d]);
    if (!ok) {
      return "blocked scale " + DimsToString(scale) + " must have the shape of x " +
             DimsToString(x) + " except ceil(" + std::to_string(len) + " / block_size " +
             std::to_string(block_size) + ") = " + std::to_string(nb) + " along axis " +
             std::to_string(axis);
    }
    params->granularity = Granularity::kBlocked;
  }
  params->axis = axis;
  params->block_size = block_size;
  return "";
}

std::vector<ParamRun> SplitIntoParamRuns(const Dims& x, const QuantParams& params) {
  std::vector<ParamRun> runs;
  int64_t total = 1;
  for (int64_t d : x) total *= d;
  if (total == 0) return runs;
  if (params.granularity == Granularity::kPerTensor) {
    runs.push_back({0, total, 0, 0});
    return runs;
  }
  const int64_t axis = params.axis;
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x[d];
  const int64_t len = x[axis];
  if (params.granularity == Granularity::kPerAxis) {
    if (inner == 1) {
      for (int64_t o = 0; o < outer; ++o) runs.push_back({o * len, len, 0, 1});
    } else {
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t a = 0; a < len; ++a) runs.push_back({(o * len + a) * inner, inner, a, 0});
      }
    }
    return runs;
  }
  const int64_t block_size = params.block_size;
  const int64_t nb = (len + block_size - 1) / block_size;
  if (inner == 1) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t b = 0; b < nb; ++b) {
        runs.push_back({o * len + b * block_size, std::min(block_size, len - b * block_size),
                        o * nb + b, 0});
      }
    }
  } else {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t a = 0; a < len; ++a) {
        runs.push_back({(o * len + a) * inner, inner, (o * nb + a / block_size) * inner, 1});
      }
    }
  }
  return runs;
}

}  // namespace simplecpp::quant
