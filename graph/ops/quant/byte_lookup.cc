// The byte lookup op (graph/ops/quant/byte_lookup.h).
#include "graph/ops/quant/byte_lookup.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "graph/ops/elementwise_common.h"
#include "graph/ops/tensor_ops_internal.h"
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

class FloatLookupOp final : public Op {
 public:
  FloatLookupOp(std::shared_ptr<const FloatTable> table, int min_rank)
      : table_(std::move(table)), min_rank_(min_rank) {}

  void InferTypes(TypeContext& ctx) const override {
    elementwise::RequireOneOf(ctx, 0, {DType::kUInt8, DType::kInt8});
    ctx.set_output_dtype(0, DType::kFloat32);
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    Dims dims = ctx.input_dims(0);
    while (static_cast<int>(dims.size()) < min_rank_) dims.insert(dims.begin(), 1);
    ctx.set_output(0, DType::kFloat32, dims);
    auto table = table_;
    return [table](RunContext& c) {
      const auto* x = static_cast<const uint8_t*>(c.input(0).raw_data());
      float* y = c.output(0).data<float>();
      // Five bytes moved per element (one read, four written).
      elementwise::ForChunks(c.parallel(), c.input(0).num_elements(), [&](int64_t b, int64_t e) {
        kernels::LookupBytesToF32(table->data(), x + b, y + b, e - b);
      });
    };
  }

 private:
  std::shared_ptr<const FloatTable> table_;
  int min_rank_;
};

class ByteConcatLookupOp final : public Op {
 public:
  ByteConcatLookupOp(std::vector<std::shared_ptr<const ByteTable>> tables, int64_t axis,
                     DType out_dtype)
      : tables_(std::move(tables)), axis_(axis), out_dtype_(out_dtype) {}

  void InferTypes(TypeContext& ctx) const override {
    if (ctx.num_inputs() != static_cast<int>(tables_.size())) {
      ctx.Fail("takes " + std::to_string(tables_.size()) + " inputs, got " +
               std::to_string(ctx.num_inputs()));
    }
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      elementwise::RequireOneOf(ctx, i, {DType::kUInt8, DType::kInt8});
    }
    ctx.set_output_dtype(0, out_dtype_);
  }

  // The shapes are checked as Concat checks them.
  RunFn Prepare(PrepareContext& ctx) const override {
    const tensor_ops::ConcatShape shape = tensor_ops::ResolveConcatShape(ctx, axis_);
    ctx.set_output(0, out_dtype_, shape.out);
    const std::vector<int64_t> rows = shape.rows;  // bytes per outer index, per input
    const int64_t outer = shape.outer;
    int64_t out_row = 0;
    for (int64_t row : rows) out_row += row;
    auto tables = tables_;
    return [tables, rows, outer, out_row](RunContext& c) {
      auto* y = static_cast<uint8_t*>(c.output(0).raw_data());
      int64_t offset = 0;
      for (size_t i = 0; i < rows.size(); ++i) {
        const auto* x = static_cast<const uint8_t*>(c.input(static_cast<int>(i)).raw_data());
        const uint8_t* table = tables[i]->data();
        const int64_t row = rows[i];
        if (row == 0 || outer == 0) continue;
        // One lookup run per (outer index, input): chunks of the flattened runs.
        elementwise::ForChunks(c.parallel(), outer * row, [&](int64_t b, int64_t e) {
          while (b < e) {
            const int64_t o = b / row, at = b % row, n = std::min(row - at, e - b);
            kernels::LookupBytes(table, x + o * row + at, y + o * out_row + offset + at, n);
            b += n;
          }
        });
        offset += row;
      }
    };
  }

 private:
  std::vector<std::shared_ptr<const ByteTable>> tables_;
  int64_t axis_;
  DType out_dtype_;
};

}  // namespace

std::unique_ptr<Op> MakeByteConcatLookupOp(std::vector<std::shared_ptr<const ByteTable>> tables,
                                           int64_t axis, DType out_dtype) {
  return std::make_unique<ByteConcatLookupOp>(std::move(tables), axis, out_dtype);
}

std::unique_ptr<Op> MakeFloatLookupOp(std::shared_ptr<const FloatTable> table, int min_rank) {
  return std::make_unique<FloatLookupOp>(std::move(table), min_rank);
}

std::unique_ptr<Op> MakeByteLookupOp(std::shared_ptr<const std::array<uint8_t, 256>> table,
                                     DType out_dtype, int min_rank) {
  return std::make_unique<ByteLookupOp>(std::move(table), out_dtype, min_rank);
}

}  // namespace simplecpp::graph
