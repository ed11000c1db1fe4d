// Tests for quant/packed_formats.h: the layout ids are append-only, so their values never change.
#include "quant/packed_formats.h"

#include <doctest/doctest.h>

namespace simplecpp::quant {
namespace {

TEST_CASE("QGemmPackFormat ids keep their values") {
  CHECK(static_cast<int32_t>(QGemmPackFormat::kI16RowsPerColumnV1) == 1);
  CHECK(static_cast<int32_t>(QGemmPackFormat::kI8PanelsK4V2) == 2);
}

}  // namespace
}  // namespace simplecpp::quant
