// Tests for quant/param_shapes.h: granularity from the scale's shape, the messages of the shape
// checks, and the runs that map each element of x to its scale / zero point.
#include "quant/param_shapes.h"

#include <doctest/doctest.h>

#include <vector>

namespace simplecpp::quant {
namespace {

// The runs as flat tuples (x_offset, length, param_offset, param_step), for comparison.
std::vector<int64_t> Flat(const std::vector<ParamRun>& runs) {
  std::vector<int64_t> out;
  for (const ParamRun& r : runs) {
    out.insert(out.end(), {r.x_offset, r.length, r.param_offset, r.param_step});
  }
  return out;
}

TEST_CASE("IsOneElement and IsPerTensorScale") {
  CHECK(IsOneElement({}));
  CHECK(IsOneElement({1, 1}));
  CHECK_FALSE(IsOneElement({1, 2}));
  CHECK(IsPerTensorScale({}, 0));
  CHECK(IsPerTensorScale({}, 4));
  CHECK(IsPerTensorScale({1}, 0));
  CHECK_FALSE(IsPerTensorScale({1}, 4));  // blocked along an axis of at most 4 elements
  CHECK_FALSE(IsPerTensorScale({3}, 0));
}

TEST_CASE("CheckZeroPointShape") {
  CHECK(CheckZeroPointShape({3}, {3}) == "");
  CHECK(CheckZeroPointShape({}, {1}) == "");
  CHECK(CheckZeroPointShape({1}, {}) == "");
  CHECK(CheckZeroPointShape({3}, {1}) == "zero point shape [1] must equal the scale shape [3]");
  CHECK(CheckZeroPointShape({1, 1}, {}) == "zero point shape [] must equal the scale shape [1,1]");
}

TEST_CASE("ResolveAxisGranularity: per-axis") {
  QuantParams p;
  CHECK(ResolveAxisGranularity({2, 3}, {3}, -1, 0, &p) == "");
  CHECK(p.granularity == Granularity::kPerAxis);
  CHECK(p.axis == 1);
  CHECK(p.block_size == 0);
  CHECK(ResolveAxisGranularity({2, 3}, {2}, 1, 0, &p) ==
        "per-axis scale [2] must be 1-D of length 3 (x [2,3], axis 1)");
  CHECK(ResolveAxisGranularity({2, 3}, {3}, 2, 0, &p) == "axis 2 is out of range for rank 2");
  CHECK(ResolveAxisGranularity({}, {3}, 0, 0, &p) ==
        "per-axis or blocked scale [3] for a scalar input");
}

TEST_CASE("ResolveAxisGranularity: blocked") {
  QuantParams p;
  CHECK(ResolveAxisGranularity({2, 5}, {2, 3}, 1, 2, &p) == "");
  CHECK(p.granularity == Granularity::kBlocked);
  CHECK(p.axis == 1);
  CHECK(p.block_size == 2);
  CHECK(ResolveAxisGranularity({2, 5}, {2, 2}, 1, 2, &p) ==
        "blocked scale [2,2] must have the shape of x [2,5] except ceil(5 / block_size 2) = 3 "
        "along axis 1");
}

TEST_CASE("SplitIntoParamRuns") {
  QuantParams p;  // per tensor
  CHECK(Flat(SplitIntoParamRuns({2, 3}, p)) == std::vector<int64_t>{0, 6, 0, 0});
  CHECK(SplitIntoParamRuns({2, 0}, p).empty());

  p.granularity = Granularity::kPerAxis;
  p.axis = 1;  // last axis: one run per row, one scale per element
  CHECK(Flat(SplitIntoParamRuns({2, 3}, p)) == std::vector<int64_t>{0, 3, 0, 1, 3, 3, 0, 1});
  p.axis = 0;  // first axis: one run per slice, one scale each
  CHECK(Flat(SplitIntoParamRuns({2, 3}, p)) == std::vector<int64_t>{0, 3, 0, 0, 3, 3, 1, 0});

  p.granularity = Granularity::kBlocked;
  p.axis = 1;
  p.block_size = 2;  // x [2,5], scale [2,3]: blocks of 2, 2, 1 per row
  CHECK(Flat(SplitIntoParamRuns({2, 5}, p)) ==
        std::vector<int64_t>{0, 2, 0, 0, 2, 2, 1, 0, 4, 1, 2, 0,
                             5, 2, 3, 0, 7, 2, 4, 0, 9, 1, 5, 0});
  p.axis = 0;  // x [3,2], scale [2,2]: row a uses scale row a / 2, one scale per element
  CHECK(Flat(SplitIntoParamRuns({3, 2}, p)) ==
        std::vector<int64_t>{0, 2, 0, 1, 2, 2, 0, 1, 4, 2, 2, 1});
}

}  // namespace
}  // namespace simplecpp::quant
