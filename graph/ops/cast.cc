// Cast (opsets 1, 6, 9, 13, 19, 21, 23, 24, 25) and CastLike (15, 19, 21, 23, 24, 25).
// The conversions and their rules (float -> int truncates and saturates, NaN -> 0; float8
// `saturate`; string formatting and parsing) are documented in kernels/float16/cast.h.
//   Cast-1: `to` is a string ("FLOAT", "INT64", ...); from 6 it is the TensorProto number.
//   `saturate` (19+) applies to float8 targets; `round_mode` (up/down/nearest) to float8e8m0.
#include <algorithm>
#include <map>

#include "graph/ops/families.h"
#include "graph/registry.h"
#include "kernels/float16/cast.h"

namespace simplecpp::graph {
namespace {

DType DTypeFromCast1Name(const std::string& name) {
  static const std::map<std::string, DType> kNames = {
      {"FLOAT", DType::kFloat32},  {"UINT8", DType::kUInt8},     {"INT8", DType::kInt8},
      {"UINT16", DType::kUInt16},  {"INT16", DType::kInt16},     {"INT32", DType::kInt32},
      {"INT64", DType::kInt64},    {"STRING", DType::kString},   {"BOOL", DType::kBool},
      {"FLOAT16", DType::kFloat16}, {"DOUBLE", DType::kFloat64}, {"UINT32", DType::kUInt32},
      {"UINT64", DType::kUInt64}};
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  auto it = kNames.find(upper);
  return it == kNames.end() ? DType::kUndefined : it->second;
}

bool CastSupports(DType t) { return t == DType::kString || kernels::IsCastableDType(t); }

// Elements per parallel task: a multiple of 8 so packed 4-bit / 2-bit outputs split on bytes.
constexpr int64_t kCastChunk = 1 << 14;

class CastOp : public Op {
 public:
  // like == true: CastLike (the target dtype is input 1's).
  CastOp(const OpInit& init, bool like) : like_(like) {
    if (!like) {
      const Attribute* a = init.node().FindAttribute("to");
      if (a == nullptr) init.Fail("required attribute 'to' is missing");
      if (a->kind == AttrKind::kString) {
        to_ = DTypeFromCast1Name(a->s);
        if (to_ == DType::kUndefined) init.Fail("unknown 'to' type '" + a->s + "'");
      } else {
        const int64_t n = init.RequireInt("to");
        if (!IsKnownDType(static_cast<int32_t>(n))) init.Fail("'to' = " + std::to_string(n) + " is not a dtype");
        to_ = static_cast<DType>(n);
      }
    }
    options_.saturate = init.GetInt("saturate", 1) != 0;
    const std::string round_mode = init.GetString("round_mode", "up");
    if (round_mode == "up") {
      options_.e8m0_rounding = kernels::E8M0Rounding::kUp;
    } else if (round_mode == "down") {
      options_.e8m0_rounding = kernels::E8M0Rounding::kDown;
    } else if (round_mode == "nearest") {
      options_.e8m0_rounding = kernels::E8M0Rounding::kNearest;
    } else {
      init.Fail("round_mode must be up, down or nearest, got '" + round_mode + "'");
    }
  }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    if (like_) ctx.RequireInput(1);
    const DType from = ctx.input_dtype(0);
    const DType to = like_ ? ctx.input_dtype(1) : to_;
    if (!CastSupports(from) || !CastSupports(to)) {
      ctx.Unsupported("cast from " + DTypeName(from) + " to " + DTypeName(to));
    }
    ctx.set_output_dtype(0, to);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const DType from = ctx.input_dtype(0);
    const DType to = like_ ? ctx.input_dtype(1) : to_;
    const Dims& dims = ctx.input_dims(0);
    ctx.set_output(0, to, dims);
    if (from == to) {
      return [](RunContext& ctx) { ctx.set_output(0, ctx.input(0)); };
    }
    const kernels::CastOptions options = options_;
    if (to == DType::kString) {
      return [from](RunContext& ctx) {
        const Tensor& in = ctx.input(0);
        kernels::CastToStrings(from, in.raw_data(), ctx.output(0).strings().data(),
                               in.num_elements());
      };
    }
    if (from == DType::kString) {
      return [to, options](RunContext& ctx) {
        const Tensor& in = ctx.input(0);
        const int64_t bad = kernels::CastFromStrings(in.strings().data(), to,
                                                     ctx.output(0).raw_data(), in.num_elements(),
                                                     options);
        if (bad >= 0) {
          ctx.Fail("element " + std::to_string(bad) + " (\"" + in.strings()[bad] +
                   "\") is not a number");
        }
      };
    }
    kernels::CastFn fn = kernels::FindCastFn(from, to);
    if (fn == nullptr) ctx.Unsupported("cast from " + DTypeName(from) + " to " + DTypeName(to));
    const int in_bits = DTypeBits(from), out_bits = DTypeBits(to);
    return [fn, options, in_bits, out_bits](RunContext& ctx) {
      const Tensor& in = ctx.input(0);
      const int64_t n = in.num_elements();
      const auto* src = static_cast<const unsigned char*>(in.raw_data());
      auto* dst = static_cast<unsigned char*>(ctx.output(0).raw_data());
      ctx.parallel().For((n + kCastChunk - 1) / kCastChunk, [&](int64_t tb, int64_t te) {
        for (int64_t t = tb; t < te; ++t) {
          const int64_t begin = t * kCastChunk;
          const int64_t count = std::min(kCastChunk, n - begin);
          fn(src + begin * in_bits / 8, dst + begin * out_bits / 8, count, options);
        }
      });
    };
  }

 private:
  bool like_;
  DType to_ = DType::kUndefined;
  kernels::CastOptions options_;
};

}  // namespace

void RegisterCastOps(OpRegistry& registry) {
  auto cast = [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<CastOp>(init, false);
  };
  auto cast_like = [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<CastOp>(init, true);
  };
  for (int v : {1, 6, 9, 13, 19, 21, 23, 24, 25}) registry.Register("", "Cast", v, cast);
  for (int v : {15, 19, 21, 23, 24, 25}) registry.Register("", "CastLike", v, cast_like);
}

}  // namespace simplecpp::graph
