// The byte lookup op (graph/ops/quant/byte_lookup.h).
#include "graph/ops/quant/byte_lookup.h"

#include <string>
#include <utility>

#include "graph/ops/elementwise_common.h"
#include "kernels/quant/byte_lookup.h"

namespace simplecpp::graph {
namespace {

class ByteLookupOp final : public Op {
 public:
  ByteLookupOp(std::shared_ptr<const std::array<uint8_t, 256>> table, DType out_dtype,
               int min_rank)
      : table_(std::move(table)), out_dtype_(out_dtype), min_rank_(min_rank) {}

  void InferTypes(TypeContext& ctx) const override {
    elementwise::RequireOneOf(ctx, 0, {DType::kUInt8, DType::kInt8});
    ctx.set_output_dtype(0, out_dtype_);
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    Dims dims = ctx.input_dims(0);
    while (static_cast<int>(dims.size()) < min_rank_) dims.insert(dims.begin(), 1);
    ctx.set_output(0, out_dtype_, dims);
    auto table = table_;
    return [table](RunContext& c) {
      const auto* x = static_cast<const uint8_t*>(c.input(0).raw_data());
      auto* y = static_cast<uint8_t*>(c.output(0).raw_data());
      elementwise::ForChunks(c.parallel(), c.input(0).num_elements(), [&](int64_t b, int64_t e) {
        kernels::LookupBytes(table->data(), x + b, y + b, e - b);
      });
    };
  }

 private:
  std::shared_ptr<const std::array<uint8_t, 256>> table_;
  DType out_dtype_;
  int min_rank_;
};

}  // namespace

std::unique_ptr<Op> MakeByteLookupOp(std::shared_ptr<const std::array<uint8_t, 256>> table,
                                     DType out_dtype, int min_rank) {
  return std::make_unique<ByteLookupOp>(std::move(table), out_dtype, min_rank);
}

}  // namespace simplecpp::graph
