// QuantizeLinear and DequantizeLinear (ai.onnx opsets 10, 13, 19, 21, 23, 24, 25) and
// DynamicQuantizeLinear (11); RegisterQuantizationOps also registers the rest of the family
// (qlinear.cc, matmul_integer.cc, conv_integer.cc).
//
// Granularity comes from the scale's shape: a scalar (or one-element 1-D) scale is per-tensor;
// from opset 13 a 1-D scale of length x.dims[axis] is per-axis; from opset 21 with block_size
// B > 0 the scale has x's rank and shape except ceil(x.dims[axis] / B) along axis (blocked).
// The zero point, when present, must have the scale's shape and gives the quantized dtype;
// without it the dtype is `output_dtype` (21+) or uint8.
//
// Types: quantized uint8/int8 (all opsets), uint16/int16/uint4/int4 (21+), uint2/int2 (25+),
// DequantizeLinear also int32 input. Scales float32, float16/bfloat16 (19+). float8e4m3fn,
// float8e4m3fnuz, float8e5m2, float8e5m2fnuz (19+) and float4e2m1 (23+, packed two per byte like
// int4) are "float-quantized" types: QuantizeLinear computes v = x / scale (in the precision
// type), adds the decoded zero point when one is given (the spec's formula; -0 + 0 is +0, which
// ONNX's float4e2m1 test expects) and encodes v with kernels/float16/float8.h, honouring the
// `saturate` attribute (float4e2m1 always saturates: it has no Inf / NaN). DequantizeLinear
// computes (decode(q) - decode(zp)) * scale in float32. float8e8m0 is not a Q/DQ type: Unsupported.
//
// Precision (QuantizeLinear): the division x / scale is done in the `precision` attribute's type
// (23+), else in the scale's type, as the spec says: float32 uses the SIMD kernel; float16 and
// bfloat16 round x, the scale and the quotient to that type (a float32 division of two 16-bit
// floats rounded to 16 bits is the correctly rounded 16-bit quotient). Rounding is half to even,
// then + zero point and saturation. DequantizeLinear computes (q - zp) * scale in float32 and
// converts to the output type (output_dtype from 23, else the scale's type).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/quant/quant_ops_internal.h"
#include "graph/registry.h"
#include "kernels/float16/float16.h"
#include "kernels/float16/float8.h"
#include "kernels/quant/quantize.h"
#include "quant/int4.h"
#include "quant/param_readers.h"
#include "quant/quant_params.h"

namespace simplecpp::graph {
namespace quant_ops {

quant::DynamicQuantParams DynamicQuantizeU8(const kernels::Parallel& par, const float* x, int64_t n,
                                            uint8_t* y) {
  // Chunks of 32 K elements: below that a second thread costs more than it saves.
  constexpr int64_t kChunk = int64_t{1} << 15;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<float> lo(static_cast<size_t>(std::max<int64_t>(chunks, 1)), 0.0f);
  std::vector<float> hi(lo.size(), 0.0f);
  auto run = [&](auto&& fn) {
    if (chunks <= 1) {
      fn(int64_t{0}, int64_t{1});
    } else {
      par.For(chunks, fn);
    }
  };
  run([&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t * kChunk;
      kernels::MinMaxF32(x + b, std::min(kChunk, n - b), &lo[t], &hi[t]);
    }
  });
  // A chunk of NaNs reports (0, 0): harmless, the range is widened to include 0 anyway.
  const float mn = *std::min_element(lo.begin(), lo.end());
  const float mx = *std::max_element(hi.begin(), hi.end());
  const quant::DynamicQuantParams p = quant::ComputeDynamicQuantParams(mn, mx);
  run([&](int64_t t0, int64_t t1) {
    const int64_t b = t0 * kChunk, e = std::min(n, t1 * kChunk);
    kernels::QuantizeF32ToU8(x + b, e - b, &p.scale, 0, &p.zero_point, 0, 0, 255, y + b);
  });
  return p;
}

}  // namespace quant_ops

namespace {

// The float8 / float4 types QuantizeLinear / DequantizeLinear produce and consume (e8m0 is not one).
bool IsFloatQuantDType(DType t) {
  return t == DType::kFloat8E4M3FN || t == DType::kFloat8E4M3FNUZ || t == DType::kFloat8E5M2 ||
         t == DType::kFloat8E5M2FNUZ || t == DType::kFloat4E2M1;
}

kernels::Float8Format Float8FormatOf(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FNUZ: return kernels::Float8Format::kE4M3FNUZ;
    case DType::kFloat8E5M2: return kernels::Float8Format::kE5M2;
    case DType::kFloat8E5M2FNUZ: return kernels::Float8Format::kE5M2FNUZ;
    default: return kernels::Float8Format::kE4M3FN;
  }
}

// Element i of a float8 / float4e2m1 tensor's storage, decoded to float32.
float FloatQuantElement(const uint8_t* data, int64_t i, DType t) {
  if (t == DType::kFloat4E2M1) {
    return kernels::Float4E2M1ToFloat(static_cast<uint8_t>(quant::GetSubByte(data, i, 4, false)));
  }
  return kernels::Float8ToFloat(data[i], Float8FormatOf(t));
}

// A whole float8 / float4e2m1 tensor decoded to float32.
std::vector<float> FloatQuantAsF32(const Tensor& t) {
  const int64_t n = t.num_elements();
  std::vector<float> out(static_cast<size_t>(n));
  const uint8_t* d = static_cast<const uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < n; ++i) out[i] = FloatQuantElement(d, i, t.dtype());
  return out;
}

using quant_ops::IsFloat8DType;
using quant_ops::ScalesAsF32;
using quant_ops::ZeroPointsAsI32;

// The scale and zero-point values of a QuantizeLinear / DequantizeLinear to an integer type:
// read once at Prepare when both are load-time constants (quantized models store them as
// initializers), else from each run's inputs.
class IntParamSource {
 public:
  IntParamSource(const PrepareContext& ctx, bool has_zp) : has_zp_(has_zp) {
    const Tensor* scale = ctx.input_value(1);
    const Tensor* zp = has_zp ? ctx.input_value(2) : nullptr;
    if (scale != nullptr && (!has_zp || zp != nullptr)) {
      constant_ = std::make_shared<const quant::QuantParams>(
          quant::ReadQuantParams(*scale, zp, /*constant=*/true));
    }
  }

  // This run's values: the constant ones, or read into *storage.
  const quant::QuantParams& Get(RunContext& rc, quant::QuantParams* storage) const {
    if (constant_) return *constant_;
    *storage = quant::ReadQuantParams(rc.input(1), has_zp_ ? &rc.input(2) : nullptr,
                                      /*constant=*/false);
    return *storage;
  }

 private:
  bool has_zp_;
  std::shared_ptr<const quant::QuantParams> constant_;
};

// A stretch of x whose scale / zero point is one value (step 0) or one per element (step 1).
using QRun = quant::ParamRun;
using QRuns = std::shared_ptr<const std::vector<QRun>>;

// Validates the scale / zero-point shapes against x (quant/param_shapes.h; per_axis_allowed:
// opset 13+) and cuts x into runs (see the file comment), failing with the node's name.
QRuns PlanRuns(const PrepareContext& ctx, const Dims& xd, int64_t axis_attr, int64_t block_size,
               bool per_axis_allowed) {
  const Dims& sd = ctx.input_dims(1);
  if (ctx.has_input(2)) {
    const std::string error = quant::CheckZeroPointShape(sd, ctx.input_dims(2));
    if (!error.empty()) ctx.Fail(error);
  }
  CheckedNumElements(xd);  // throws when x's element count overflows int64
  quant::QuantParams params;
  if (!quant::IsPerTensorScale(sd, block_size)) {
    if (!per_axis_allowed) {
      ctx.Fail("the scale must be a scalar before opset 13, got " + DimsToString(sd));
    }
    const std::string error =
        quant::ResolveAxisGranularity(xd, sd, axis_attr, block_size, &params);
    if (!error.empty()) ctx.Fail(error);
  }
  return std::make_shared<const std::vector<QRun>>(quant::SplitIntoParamRuns(xd, params));
}

// What QuantizeLinear / DequantizeLinear accept at one opset, decided when the node's attributes
// are read (the op's constructor), so that InferTypes and Prepare only consult it.
struct QdqOpsetRules {
  int64_t opset = 0;             // named in the Unsupported messages
  bool per_axis_scales = false;  // 13+: per-axis (and, from 21, blocked) scales
  bool float16_scales = false;   // 19+: float16 / bfloat16 scales (QuantizeLinear: also int32)
  bool float8 = false;           // 19+: the float8 types
  bool float4 = false;           // 23+: float4e2m1
  bool wide_ints = false;        // 21+: uint16, int16, uint4, int4
  bool two_bit_ints = false;     // 25+: uint2, int2

  explicit QdqOpsetRules(int64_t v)
      : opset(v), per_axis_scales(v >= 13), float16_scales(v >= 19), float8(v >= 19),
        float4(v >= 23), wide_ints(v >= 21), two_bit_ints(v >= 25) {}

  // Whether float-quantized type t (IsFloat8DType) is a Q/DQ type at this opset.
  bool FloatQuantAllowed(DType t) const {
    return IsFloatQuantDType(t) && float8 && (t != DType::kFloat4E2M1 || float4);
  }
  // Whether integer type t is a quantized type at this opset (uint8 / int8 at every opset).
  bool IntQuantAllowed(DType t) const {
    bool ok = t == DType::kUInt8 || t == DType::kInt8;
    if (wide_ints) {
      ok = ok || t == DType::kUInt16 || t == DType::kInt16 || t == DType::kUInt4 ||
           t == DType::kInt4;
    }
    if (two_bit_ints) ok = ok || t == DType::kUInt2 || t == DType::kInt2;
    return ok;
  }
};

// Runs fn(run) for every run, in parallel tasks whose boundaries depend only on the runs.
template <typename Fn>
void ForEachRun(const std::vector<QRun>& runs, int64_t total, const kernels::Parallel& par,
                Fn&& fn) {
  constexpr int64_t kTaskElements = 1 << 15;
  const int64_t nruns = static_cast<int64_t>(runs.size());
  if (nruns == 0) return;
  const int64_t avg = std::max<int64_t>(1, total / nruns);
  if (avg > 2 * kTaskElements) {
    // Long runs (one per tensor, per channel of a large image): pieces of kTaskElements are the
    // tasks, so that even a single run uses every thread. Pieces are elementwise-independent.
    std::vector<std::pair<int64_t, int64_t>> pieces;  // (run, first element)
    for (int64_t r = 0; r < nruns; ++r) {
      for (int64_t at = 0; at < runs[r].length; at += kTaskElements) pieces.push_back({r, at});
    }
    par.For(static_cast<int64_t>(pieces.size()), [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        QRun q = runs[pieces[t].first];
        const int64_t at = pieces[t].second;
        q.x_offset += at;
        q.param_offset += at * q.param_step;
        q.length = std::min(kTaskElements, q.length - at);
        fn(q);
      }
    });
    return;
  }
  const int64_t per_task = std::max<int64_t>(1, kTaskElements / avg);
  const int64_t tasks = (nruns + per_task - 1) / per_task;
  auto body = [&](int64_t t0, int64_t t1) {
    for (int64_t r = t0 * per_task; r < std::min(nruns, t1 * per_task); ++r) fn(runs[r]);
  };
  if (tasks == 1) {
    body(0, 1);
  } else {
    par.For(tasks, body);
  }
}

// x converted to float32 (for float16 / bfloat16 / int32 inputs).
using ToF32Fn = void (*)(const void* in, float* out, int64_t n);
void HalfToF32(const void* in, float* out, int64_t n) {
  kernels::HalfToFloat(static_cast<const uint16_t*>(in), out, static_cast<size_t>(n));
}
void BF16ToF32(const void* in, float* out, int64_t n) {
  kernels::BFloat16ToFloat(static_cast<const uint16_t*>(in), out, static_cast<size_t>(n));
}
void I32ToF32(const void* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<const int32_t*>(in)[i]);
}

// One run of QuantizeLinear into the output (element offset `off`).
using QuantRunFn = void (*)(const float* x, int64_t n, const float* s, int64_t ss, const int32_t* z,
                            int64_t zs, int32_t lo, int32_t hi, void* out, int64_t off);
template <typename T, void (*K)(const float*, int64_t, const float*, int64_t, const int32_t*,
                                int64_t, int32_t, int32_t, T*)>
void QuantRun(const float* x, int64_t n, const float* s, int64_t ss, const int32_t* z, int64_t zs,
              int32_t lo, int32_t hi, void* out, int64_t off) {
  K(x, n, s, ss, z, zs, lo, hi, static_cast<T*>(out) + off);
}
// 16-bit precision: x, scale and the quotient rounded to float16 / bfloat16; writes int32.
template <bool kHalf>
void QuantRun16(const float* x, int64_t n, const float* s, int64_t ss, const int32_t* z, int64_t zs,
                int32_t lo, int32_t hi, void* out, int64_t off) {
  auto round16 = [](float v) {
    return kHalf ? kernels::HalfBitsToFloat(kernels::FloatToHalfBits(v))
                 : kernels::BFloat16BitsToFloat(kernels::FloatToBFloat16Bits(v));
  };
  int32_t* o = static_cast<int32_t*>(out) + off;
  for (int64_t i = 0; i < n; ++i) {
    const float q = round16(round16(x[i]) / round16(s[i * ss]));
    o[i] = quant::QuantizeValue(q, 1.0f, z ? z[i * zs] : 0, lo, hi);
  }
}

class QuantizeLinearOp final : public Op {
 public:
  explicit QuantizeLinearOp(const OpInit& init) : rules_(init.opset()) {
    if (init.num_inputs() < 2 || init.num_inputs() > 3)
      init.Fail("QuantizeLinear takes 2 or 3 inputs, got " + std::to_string(init.num_inputs()));
    axis_ = init.GetInt("axis", 1);
    block_size_ = init.opset() >= 21 ? init.GetInt("block_size", 0) : 0;
    if (block_size_ < 0) init.Fail("block_size must be >= 0, got " + std::to_string(block_size_));
    output_dtype_ = init.opset() >= 21 ? init.GetInt("output_dtype", 0) : 0;
    precision_ = init.opset() >= 23 ? init.GetInt("precision", 0) : 0;
    const int64_t saturate = init.opset() >= 19 ? init.GetInt("saturate", 1) : 1;
    if (saturate != 0 && saturate != 1)
      init.Fail("saturate must be 0 or 1, got " + std::to_string(saturate));
    saturate_ = saturate == 1;
    if (output_dtype_ != 0 && !IsKnownDType(static_cast<int32_t>(output_dtype_)))
      init.Fail("output_dtype " + std::to_string(output_dtype_) + " is not a dtype");
    if (precision_ != 0 && !IsKnownDType(static_cast<int32_t>(precision_)))
      init.Fail("precision " + std::to_string(precision_) + " is not a dtype");
  }

  void InferTypes(TypeContext& ctx) const override {
    if (rules_.float16_scales) {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt32});
      ctx.RequireDType(1, {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt32});
    } else {
      ctx.RequireDType(0, {DType::kFloat32, DType::kInt32});
      ctx.RequireDType(1, {DType::kFloat32});
    }
    DType out = output_dtype_ != 0 ? static_cast<DType>(output_dtype_) : DType::kUInt8;
    if (ctx.has_input(2)) {
      const DType zt = ctx.input_dtype(2);
      if (output_dtype_ != 0 && zt != out) {
        ctx.Fail("output_dtype " + DTypeName(out) + " differs from the zero point's dtype " +
                 DTypeName(zt));
      }
      out = zt;
    }
    CheckQuantizedType(ctx, out);
    ctx.set_output_dtype(0, out);
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const DType out = ctx.has_input(2) ? ctx.input_dtype(2)
                                       : (output_dtype_ ? static_cast<DType>(output_dtype_)
                                                        : DType::kUInt8);
    ctx.set_output(0, out, xd);
    QRuns runs = PlanRuns(ctx, xd, axis_, block_size_, rules_.per_axis_scales);
    const int64_t total = CheckedNumElements(xd);
    if (total == 0) return [](RunContext&) {};
    int32_t lo = 0, hi = 0;
    quant::QuantizedRange(out, &lo, &hi);
    const DType xt = ctx.input_dtype(0);
    ToF32Fn to_f32 = xt == DType::kFloat16    ? HalfToF32
                     : xt == DType::kBFloat16 ? BF16ToF32
                     : xt == DType::kInt32    ? I32ToF32
                                              : nullptr;
    const DType precision =
        precision_ != 0 ? static_cast<DType>(precision_) : ctx.input_dtype(1);
    if (IsFloatQuantDType(out)) return PrepareFloatQuant(ctx, runs, total, to_f32, precision, out);
    const bool sub_byte = DTypeBits(out) < 8;
    QuantRunFn fn = nullptr;
    if (precision == DType::kFloat16) {
      fn = QuantRun16<true>;
    } else if (precision == DType::kBFloat16) {
      fn = QuantRun16<false>;
    } else if (precision == DType::kFloat32 || precision == DType::kInt32) {
      if (sub_byte) {
        fn = QuantRun<int32_t, kernels::QuantizeF32ToI32>;
      } else {
        switch (out) {
          case DType::kUInt8: fn = QuantRun<uint8_t, kernels::QuantizeF32ToU8>; break;
          case DType::kInt8: fn = QuantRun<int8_t, kernels::QuantizeF32ToI8>; break;
          case DType::kUInt16: fn = QuantRun<uint16_t, kernels::QuantizeF32ToU16>; break;
          case DType::kInt16: fn = QuantRun<int16_t, kernels::QuantizeF32ToI16>; break;
          default: ctx.Unsupported("QuantizeLinear to " + DTypeName(out));
        }
      }
    } else {
      ctx.Unsupported("QuantizeLinear with precision " + DTypeName(precision) +
                      " (supported: float32, float16, bfloat16)");
    }
    // The 16-bit precision paths write int32 and are narrowed afterwards like sub-byte outputs.
    const bool via_i32 = sub_byte || precision == DType::kFloat16 || precision == DType::kBFloat16;
    const bool has_zp = ctx.has_input(2);
    const int bits = DTypeBits(out);
    const IntParamSource params(ctx, has_zp);
    return [runs, total, to_f32, fn, via_i32, has_zp, lo, hi, out, bits, params](RunContext& rc) {
      const float* x = rc.input(0).data<float>();
      Tensor xf;
      if (to_f32 != nullptr) {
        xf = rc.Scratch(DType::kFloat32, {total});
        to_f32(rc.input(0).raw_data(), xf.data<float>(), total);
        x = xf.data<float>();
      }
      quant::QuantParams read;
      const quant::QuantParams& values = params.Get(rc, &read);
      const std::vector<float>& scales = values.scales;
      const std::vector<int32_t>& zps = values.zero_points;
      Tensor tmp;
      void* dst = rc.output(0).raw_data();
      if (via_i32) {
        tmp = rc.Scratch(DType::kInt32, {total});
        dst = tmp.raw_data();
      }
      ForEachRun(*runs, total, rc.parallel(), [&](const QRun& r) {
        fn(x + r.x_offset, r.length, scales.data() + r.param_offset, r.param_step,
           has_zp ? zps.data() + r.param_offset : nullptr, r.param_step, lo, hi, dst, r.x_offset);
      });
      if (via_i32) {
        const int32_t* v = tmp.data<int32_t>();
        void* o = rc.output(0).raw_data();
        switch (out) {
          case DType::kUInt8: for (int64_t i = 0; i < total; ++i) static_cast<uint8_t*>(o)[i] = static_cast<uint8_t>(v[i]); break;
          case DType::kInt8: for (int64_t i = 0; i < total; ++i) static_cast<int8_t*>(o)[i] = static_cast<int8_t>(v[i]); break;
          case DType::kUInt16: for (int64_t i = 0; i < total; ++i) static_cast<uint16_t*>(o)[i] = static_cast<uint16_t>(v[i]); break;
          case DType::kInt16: for (int64_t i = 0; i < total; ++i) static_cast<int16_t*>(o)[i] = static_cast<int16_t>(v[i]); break;
          default: quant::PackSubByte(v, 0, total, bits, static_cast<uint8_t*>(o)); break;
        }
      }
    };
  }

  // The float8 / float4e2m1 output path: v = x / scale in `precision` (+ zero point where it is
  // non-zero), encoded per element; float4e2m1 codes are packed two per byte.
  RunFn PrepareFloatQuant(PrepareContext& ctx, QRuns runs, int64_t total, ToF32Fn to_f32,
                          DType precision, DType out) const {
    int round16 = 0;  // 0: float32 division, 1: float16, 2: bfloat16
    if (precision == DType::kFloat16) {
      round16 = 1;
    } else if (precision == DType::kBFloat16) {
      round16 = 2;
    } else if (precision != DType::kFloat32 && precision != DType::kInt32) {
      ctx.Unsupported("QuantizeLinear with precision " + DTypeName(precision) +
                      " (supported: float32, float16, bfloat16)");
    }
    const bool has_zp = ctx.has_input(2);
    const bool saturate = saturate_;
    return [runs, total, to_f32, round16, has_zp, saturate, out](RunContext& rc) {
      const float* x = rc.input(0).data<float>();
      Tensor xf;
      if (to_f32 != nullptr) {
        xf = rc.Scratch(DType::kFloat32, {total});
        to_f32(rc.input(0).raw_data(), xf.data<float>(), total);
        x = xf.data<float>();
      }
      const std::vector<float> scales = ScalesAsF32(rc.input(1));
      const std::vector<float> zps = has_zp ? FloatQuantAsF32(rc.input(2)) : std::vector<float>();
      auto r16 = [round16](float v) {
        if (round16 == 1) return kernels::HalfBitsToFloat(kernels::FloatToHalfBits(v));
        if (round16 == 2) return kernels::BFloat16BitsToFloat(kernels::FloatToBFloat16Bits(v));
        return v;
      };
      uint8_t* o = static_cast<uint8_t*>(rc.output(0).raw_data());
      const bool is_f4 = out == DType::kFloat4E2M1;
      const kernels::Float8Format fmt = Float8FormatOf(out);
      Tensor codes;
      int32_t* c4 = nullptr;
      if (is_f4) {
        codes = rc.Scratch(DType::kInt32, {total});
        c4 = codes.data<int32_t>();
      }
      ForEachRun(*runs, total, rc.parallel(), [&](const QRun& r) {
        for (int64_t i = 0; i < r.length; ++i) {
          const int64_t p = r.param_offset + i * r.param_step;
          float v = r16(r16(x[r.x_offset + i]) / r16(scales[p]));
          if (has_zp) v += zps[p];
          if (is_f4) {
            c4[r.x_offset + i] = kernels::FloatToFloat4E2M1(v);
          } else {
            o[r.x_offset + i] = kernels::FloatToFloat8(v, fmt, saturate);
          }
        }
      });
      if (is_f4) quant::PackSubByte(c4, 0, total, 4, o);
    };
  }

  // Throws Unsupported for a quantized type this op (at this opset) does not produce.
  void CheckQuantizedType(const TypeContext& ctx, DType t) const {
    if (IsFloat8DType(t)) {
      if (!rules_.FloatQuantAllowed(t)) {
        ctx.Unsupported("quantization to " + DTypeName(t) + " at opset " +
                        std::to_string(rules_.opset));
      }
      return;
    }
    if (!rules_.IntQuantAllowed(t)) {
      ctx.Unsupported("quantized type " + DTypeName(t) + " at this opset");
    }
  }

 private:
  QdqOpsetRules rules_;
  int64_t axis_ = 1;
  int64_t block_size_ = 0;
  int64_t output_dtype_ = 0;
  int64_t precision_ = 0;
  bool saturate_ = true;
};

// One run of DequantizeLinear: q (element offset off) -> y float32 (same offset).
using DequantRunFn = void (*)(const void* q, int64_t off, int64_t n, const float* s, int64_t ss,
                              const int32_t* z, int64_t zs, float* y);
template <typename T, void (*K)(const T*, int64_t, const float*, int64_t, const int32_t*, int64_t,
                                float*)>
void DequantRun(const void* q, int64_t off, int64_t n, const float* s, int64_t ss, const int32_t* z,
                int64_t zs, float* y) {
  K(static_cast<const T*>(q) + off, n, s, ss, z, zs, y + off);
}

class DequantizeLinearOp final : public Op {
 public:
  explicit DequantizeLinearOp(const OpInit& init) : rules_(init.opset()) {
    if (init.num_inputs() < 2 || init.num_inputs() > 3)
      init.Fail("DequantizeLinear takes 2 or 3 inputs, got " + std::to_string(init.num_inputs()));
    axis_ = init.GetInt("axis", 1);
    block_size_ = init.opset() >= 21 ? init.GetInt("block_size", 0) : 0;
    if (block_size_ < 0) init.Fail("block_size must be >= 0, got " + std::to_string(block_size_));
    output_dtype_ = init.opset() >= 23 ? init.GetInt("output_dtype", 0) : 0;
    if (output_dtype_ != 0 && !IsKnownDType(static_cast<int32_t>(output_dtype_)))
      init.Fail("output_dtype " + std::to_string(output_dtype_) + " is not a dtype");
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    const DType xt = ctx.input_dtype(0);
    if (IsFloat8DType(xt) && !rules_.FloatQuantAllowed(xt)) {
      ctx.Unsupported("dequantization of " + DTypeName(xt) + " at opset " +
                      std::to_string(rules_.opset));
    }
    const bool ok = xt == DType::kInt32 || IsFloatQuantDType(xt) || rules_.IntQuantAllowed(xt);
    if (!ok) ctx.Unsupported("DequantizeLinear of " + DTypeName(xt) + " at this opset");
    if (rules_.float16_scales) {
      ctx.RequireDType(1, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    } else {
      ctx.RequireDType(1, {DType::kFloat32});
    }
    if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
    const DType out = output_dtype_ != 0 ? static_cast<DType>(output_dtype_) : ctx.input_dtype(1);
    if (out != DType::kFloat32 && out != DType::kFloat16 && out != DType::kBFloat16) {
      ctx.Unsupported("DequantizeLinear output dtype " + DTypeName(out) +
                      " (supported: float32, float16, bfloat16)");
    }
    ctx.set_output_dtype(0, out);
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const DType out = output_dtype_ != 0 ? static_cast<DType>(output_dtype_) : ctx.input_dtype(1);
    ctx.set_output(0, out, xd);
    QRuns runs = PlanRuns(ctx, xd, axis_, block_size_, rules_.per_axis_scales);
    const int64_t total = CheckedNumElements(xd);
    if (total == 0) return [](RunContext&) {};
    const DType xt = ctx.input_dtype(0);
    if (IsFloatQuantDType(xt)) return PrepareFloatDequant(ctx, runs, total, xt, out);
    const bool sub_byte = DTypeBits(xt) < 8;
    DequantRunFn fn = nullptr;
    switch (xt) {
      case DType::kUInt8: fn = DequantRun<uint8_t, kernels::DequantizeU8ToF32>; break;
      case DType::kInt8: fn = DequantRun<int8_t, kernels::DequantizeI8ToF32>; break;
      case DType::kUInt16: fn = DequantRun<uint16_t, kernels::DequantizeU16ToF32>; break;
      case DType::kInt16: fn = DequantRun<int16_t, kernels::DequantizeI16ToF32>; break;
      default: fn = DequantRun<int32_t, kernels::DequantizeI32ToF32>; break;  // int32, sub-byte
    }
    const bool has_zp = ctx.has_input(2);
    const int bits = DTypeBits(xt);
    const bool is_signed = IsSignedDType(xt);
    const IntParamSource params(ctx, has_zp);
    return [runs, total, fn, sub_byte, has_zp, out, bits, is_signed, params](RunContext& rc) {
      const void* q = rc.input(0).raw_data();
      Tensor unpacked, yf;
      if (sub_byte) {
        unpacked = rc.Scratch(DType::kInt32, {total});
        quant::UnpackSubByte(static_cast<const uint8_t*>(q), 0, total, bits, is_signed,
                             unpacked.data<int32_t>());
        q = unpacked.raw_data();
      }
      float* y = rc.output(0).data<float>();
      if (out != DType::kFloat32) {
        yf = rc.Scratch(DType::kFloat32, {total});
        y = yf.data<float>();
      }
      quant::QuantParams read;
      const quant::QuantParams& values = params.Get(rc, &read);
      const std::vector<float>& scales = values.scales;
      const std::vector<int32_t>& zps = values.zero_points;
      ForEachRun(*runs, total, rc.parallel(), [&](const QRun& r) {
        fn(q, r.x_offset, r.length, scales.data() + r.param_offset, r.param_step,
           has_zp ? zps.data() + r.param_offset : nullptr, r.param_step, y);
      });
      if (out == DType::kFloat16) {
        kernels::FloatToHalf(y, rc.output(0).data<uint16_t>(), static_cast<size_t>(total));
      } else if (out == DType::kBFloat16) {
        kernels::FloatToBFloat16(y, rc.output(0).data<uint16_t>(), static_cast<size_t>(total));
      }
    };
  }

 private:
  // float8 / float4e2m1 input: y = (decode(q) - decode(zp)) * scale in float32.
  static RunFn PrepareFloatDequant(PrepareContext& ctx, QRuns runs, int64_t total, DType xt,
                                   DType out) {
    const bool has_zp = ctx.has_input(2);
    return [runs, total, has_zp, xt, out](RunContext& rc) {
      const uint8_t* q = static_cast<const uint8_t*>(rc.input(0).raw_data());
      Tensor yf;
      float* y = rc.output(0).data<float>();
      if (out != DType::kFloat32) {
        yf = rc.Scratch(DType::kFloat32, {total});
        y = yf.data<float>();
      }
      const std::vector<float> scales = ScalesAsF32(rc.input(1));
      const std::vector<float> zps = has_zp ? FloatQuantAsF32(rc.input(2)) : std::vector<float>();
      ForEachRun(*runs, total, rc.parallel(), [&](const QRun& r) {
        for (int64_t i = 0; i < r.length; ++i) {
          const int64_t p = r.param_offset + i * r.param_step;
          const float v = FloatQuantElement(q, r.x_offset + i, xt);
          y[r.x_offset + i] = (has_zp ? v - zps[p] : v) * scales[p];
        }
      });
      if (out == DType::kFloat16) {
        kernels::FloatToHalf(y, rc.output(0).data<uint16_t>(), static_cast<size_t>(total));
      } else if (out == DType::kBFloat16) {
        kernels::FloatToBFloat16(y, rc.output(0).data<uint16_t>(), static_cast<size_t>(total));
      }
    };
  }

  QdqOpsetRules rules_;
  int64_t axis_ = 1;
  int64_t block_size_ = 0;
  int64_t output_dtype_ = 0;
};

// DynamicQuantizeLinear (11): y (uint8), y_scale (float32 scalar), y_zero_point (uint8 scalar)
// from quant::ComputeDynamicQuantParams over the whole of x. NaNs in x are skipped by the range
// (and quantize to the zero point).
class DynamicQuantizeLinearOp final : public Op {
 public:
  explicit DynamicQuantizeLinearOp(const OpInit& init) {
    if (init.num_inputs() != 1)
      init.Fail("DynamicQuantizeLinear takes 1 input, got " + std::to_string(init.num_inputs()));
  }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32});
    ctx.set_output_dtype(0, DType::kUInt8);
    if (ctx.has_output(1)) ctx.set_output_dtype(1, DType::kFloat32);
    if (ctx.has_output(2)) ctx.set_output_dtype(2, DType::kUInt8);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const int64_t total = CheckedNumElements(xd);
    ctx.set_output(0, DType::kUInt8, xd);
    const bool has_scale = ctx.has_output(1), has_zp = ctx.has_output(2);
    if (has_scale) ctx.set_output(1, DType::kFloat32, {});
    if (has_zp) ctx.set_output(2, DType::kUInt8, {});
    return [total, has_scale, has_zp](RunContext& rc) {
      const quant::DynamicQuantParams p = quant_ops::DynamicQuantizeU8(
          rc.parallel(), rc.input(0).data<float>(), total, rc.output(0).data<uint8_t>());
      if (has_scale) rc.output(1).data<float>()[0] = p.scale;
      if (has_zp) {
        rc.output(2).data<uint8_t>()[0] = static_cast<uint8_t>(p.zero_point);
      }
    };
  }
};

}  // namespace

void RegisterQuantizationOps(OpRegistry& registry) {
  for (int v : {10, 13, 19, 21, 23, 24, 25}) {
    registry.Register("", "QuantizeLinear", v, MakeFactory<QuantizeLinearOp>());
    registry.Register("", "DequantizeLinear", v, MakeFactory<DequantizeLinearOp>());
  }
  registry.Register("", "DynamicQuantizeLinear", 11, MakeFactory<DynamicQuantizeLinearOp>());
  quant_ops::RegisterQLinearOps(registry);
  quant_ops::RegisterMatMulIntegerOps(registry);
  quant_ops::RegisterConvIntegerOps(registry);
}

}  // namespace simplecpp::graph
