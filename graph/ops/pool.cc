// Pooling ops: MaxPool (1, 8, 10, 11, 12, 22), AveragePool (1, 7, 10, 11, 19, 22), LpPool (1, 2,
// 11, 18, 22), GlobalAveragePool / GlobalMaxPool (1, 22), GlobalLpPool (1, 2, 22).
//
// One PoolOp class serves every windowed pool: it reads the attributes its version defines,
// computes the output geometry at Prepare (auto_pad, pads, ceil_mode with the rule that the last
// window must start inside the input or the begin padding) and hands kernels/nn/pool.h a
// PoolGeometry with the spatial dims right-aligned in three slots. float32 and double (and
// int8/uint8 MaxPool from opset 12); float16 / bfloat16 through kernels::Pool16 (one plane at a
// time widened to float32, one rounding per output).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "graph/ops/window_attributes.h"
#include "graph/registry.h"
#include "kernels/nn/pool.h"

namespace simplecpp::graph {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

// Reads the `p` attribute: a float in LpPool-1 / GlobalLpPool-1, an int from version 2.
float ReadP(const OpInit& init) {
  const Attribute* a = init.node().FindAttribute("p");
  if (a == nullptr) return 2.0f;
  if (a->kind == AttrKind::kFloat) return a->f;
  if (a->kind == AttrKind::kInt) return static_cast<float>(a->i);
  init.Fail("attribute 'p' must be an int (or a float in version 1)");
}

class PoolOp final : public Op {
 public:
  PoolOp(const OpInit& init, PoolKind kind)
      // MaxPool's T took int8 and uint8 in opset 12; the other pools stay floating-point.
      : kind_(kind), int8_allowed_(kind == PoolKind::kMax && init.opset() >= 12) {
    window_ = WindowAttributes::Read(init, /*kernel_shape_required=*/true);
    const int rank = static_cast<int>(window_.kernel_shape.size());
    window_.CheckRank(init, rank);
    ceil_mode_ = init.GetInt("ceil_mode", 0) != 0;
    if (kind == PoolKind::kAverage) count_include_pad_ = init.GetInt("count_include_pad", 0) != 0;
    if (kind == PoolKind::kMax) {
      storage_order_ = init.GetInt("storage_order", 0);
      if (storage_order_ != 0 && storage_order_ != 1) {
        init.Fail("storage_order must be 0 or 1, got " + std::to_string(storage_order_));
      }
    }
    if (kind == PoolKind::kLp) {
      p_ = ReadP(init);
      if (!(p_ > 0.0f)) init.Fail("p must be > 0, got " + std::to_string(p_));
    }
    if (rank > 3) init.Unsupported("pooling over more than 3 spatial dims");
    with_indices_ = kind == PoolKind::kMax && init.has_output(1);
  }

  void InferTypes(TypeContext& ctx) const override {
    if (int8_allowed_) {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                           DType::kInt8, DType::kUInt8});
    } else {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    }
    ctx.set_output_dtype(0, ctx.input_dtype(0));
    if (with_indices_) ctx.set_output_dtype(1, DType::kInt64);
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const int rank = static_cast<int>(window_.kernel_shape.size());
    if (static_cast<int>(xd.size()) != rank + 2) {
      ctx.Fail("X must have rank " + std::to_string(rank + 2) + " (N, C and the " +
               std::to_string(rank) + " spatial dims of kernel_shape " + DimsToString(window_.kernel_shape) +
               "), got " + DimsToString(xd));
    }
    kernels::PoolGeometry g;
    g.planes = xd[0] * xd[1];
    Dims out_dims = {xd[0], xd[1]};
    for (int a = 0; a < rank; ++a) {
      const int slot = 3 - rank + a;
      const int64_t in = xd[2 + a], k = window_.kernel_shape[a];
      const int64_t s = window_.stride(a), dil = window_.dilation(a);
      const int64_t ext = (k - 1) * dil + 1;
      const WindowAttributes::Axis axis = window_.ResolveAxis(a, rank, in, ext);
      const int64_t pb = axis.pad_begin, pe = axis.pad_end;
      int64_t out = axis.out;
      if (!window_.same()) {
        if (pb >= ext || pe >= ext) {
          ctx.Fail("pads " + DimsToString(window_.pads) + " must be smaller than the kernel extent " +
                   std::to_string(ext) + " in spatial dim " + std::to_string(a));
        }
        const int64_t span = in + pb + pe - ext;
        if (span < 0) {
          ctx.Fail("kernel extent " + std::to_string(ext) + " (kernel " + std::to_string(k) +
                   ", dilation " + std::to_string(dil) + ") is larger than the padded input " +
                   std::to_string(in + pb + pe) + " in spatial dim " + std::to_string(a));
        }
        out = (ceil_mode_ ? (span + s - 1) / s : span / s) + 1;
        // ceil_mode: a last window that would start in the end padding is dropped.
        if (ceil_mode_ && (out - 1) * s >= in + pb) --out;
      }
      if (out < 1) ctx.Fail("empty output in spatial dim " + std::to_string(a));
      g.in[slot] = in;
      g.out[slot] = out;
      g.kernel[slot] = k;
      g.stride[slot] = s;
      g.dilation[slot] = dil;
      g.pad_begin[slot] = pb;
      g.pad_end[slot] = pe;
      out_dims.push_back(out);
    }
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, out_dims);
    if (with_indices_) ctx.set_output(1, DType::kInt64, out_dims);
    if (CheckedNumElements(out_dims) == 0) return [](RunContext&) {};

    if (dt == DType::kFloat16 || dt == DType::kBFloat16) {
      // 16-bit storage: one plane at a time in float32 (kernels::Pool16).
      const kernels::Float16Kind k16 = Float16KindOf(dt);
      const kernels::Pool16Op op = kind_ == PoolKind::kMax       ? kernels::Pool16Op::kMax
                                   : kind_ == PoolKind::kAverage ? kernels::Pool16Op::kAverage
                                                                 : kernels::Pool16Op::kLp;
      const bool cip = count_include_pad_, idx = with_indices_, col = storage_order_ == 1;
      const float p = p_;
      return [k16, op, g, cip, p, rank, idx, col](RunContext& rc) {
        kernels::Pool16(k16, op, rc.input(0).data<uint16_t>(), rc.output(0).data<uint16_t>(),
                        idx ? rc.output(1).data<int64_t>() : nullptr, g, cip, p, rank, col,
                        rc.parallel());
      };
    }

    if (with_indices_) {
      const bool col = storage_order_ == 1;
      switch (dt) {
        case DType::kFloat32: return MakeIndexed<float>(kernels::MaxPoolWithIndicesF32, g, rank, col);
        case DType::kFloat64: return MakeIndexed<double>(kernels::MaxPoolWithIndicesF64, g, rank, col);
        case DType::kUInt8: return MakeIndexed<uint8_t>(kernels::MaxPoolWithIndicesU8, g, rank, col);
        case DType::kInt8: return MakeIndexed<int8_t>(kernels::MaxPoolWithIndicesI8, g, rank, col);
        default: break;
      }
    } else if (kind_ == PoolKind::kMax) {
      switch (dt) {
        case DType::kFloat32: return MakePlain<float>(kernels::MaxPoolF32, g);
        case DType::kFloat64: return MakePlain<double>(kernels::MaxPoolF64, g);
        case DType::kUInt8: return MakePlain<uint8_t>(kernels::MaxPoolU8, g);
        case DType::kInt8: return MakePlain<int8_t>(kernels::MaxPoolI8, g);
        default: break;
      }
    } else if (kind_ == PoolKind::kAverage) {
      const bool cip = count_include_pad_;
      if (dt == DType::kFloat32) {
        return [g, cip](RunContext& rc) {
          kernels::AveragePoolF32(rc.input(0).data<float>(), rc.output(0).data<float>(), g, cip,
                                  rc.parallel());
        };
      }
      if (dt == DType::kFloat64) {
        return [g, cip](RunContext& rc) {
          kernels::AveragePoolF64(rc.input(0).data<double>(), rc.output(0).data<double>(), g, cip,
                                  rc.parallel());
        };
      }
    } else {
      const float p = p_;
      if (dt == DType::kFloat32) {
        return [g, p](RunContext& rc) {
          kernels::LpPoolF32(rc.input(0).data<float>(), rc.output(0).data<float>(), g, p,
                             rc.parallel());
        };
      }
      if (dt == DType::kFloat64) {
        return [g, p](RunContext& rc) {
          kernels::LpPoolF64(rc.input(0).data<double>(), rc.output(0).data<double>(), g, p,
                             rc.parallel());
        };
      }
    }
    ctx.Unsupported("dtype " + DTypeName(dt));
  }

 private:
  template <typename T>
  static RunFn MakePlain(void (*fn)(const T*, T*, const kernels::PoolGeometry&,
                                    const kernels::Parallel&),
                         const kernels::PoolGeometry& g) {
    return [fn, g](RunContext& rc) {
      fn(rc.input(0).data<T>(), rc.output(0).data<T>(), g, rc.parallel());
    };
  }
  template <typename T>
  static RunFn MakeIndexed(void (*fn)(const T*, T*, int64_t*, const kernels::PoolGeometry&, int,
                                      bool, const kernels::Parallel&),
                           const kernels::PoolGeometry& g, int rank, bool col) {
    return [fn, g, rank, col](RunContext& rc) {
      fn(rc.input(0).data<T>(), rc.output(0).data<T>(), rc.output(1).data<int64_t>(), g, rank,
         col, rc.parallel());
    };
  }

  PoolKind kind_;
  bool int8_allowed_;  // X may be int8/uint8 (MaxPool from opset 12)
  WindowAttributes window_;
  bool ceil_mode_ = false;
  bool count_include_pad_ = false;
  int64_t storage_order_ = 0;
  float p_ = 2.0f;
  bool with_indices_ = false;
};

class MaxPoolOp final : public Op {
 public:
  explicit MaxPoolOp(const OpInit& init) : impl_(init, PoolKind::kMax) {}
  void InferTypes(TypeContext& ctx) const override { impl_.InferTypes(ctx); }
  RunFn Prepare(PrepareContext& ctx) const override { return impl_.Prepare(ctx); }

 private:
  PoolOp impl_;
};

class AveragePoolOp final : public Op {
 public:
  explicit AveragePoolOp(const OpInit& init) : impl_(init, PoolKind::kAverage) {}
  void InferTypes(TypeContext& ctx) const override { impl_.InferTypes(ctx); }
  RunFn Prepare(PrepareContext& ctx) const override { return impl_.Prepare(ctx); }

 private:
  PoolOp impl_;
};

class LpPoolOp final : public Op {
 public:
  explicit LpPoolOp(const OpInit& init) : impl_(init, PoolKind::kLp) {}
  void InferTypes(TypeContext& ctx) const override { impl_.InferTypes(ctx); }
  RunFn Prepare(PrepareContext& ctx) const override { return impl_.Prepare(ctx); }

 private:
  PoolOp impl_;
};

// GlobalAveragePool / GlobalMaxPool / GlobalLpPool: X [N, C, spatial...] -> [N, C, 1, ...].
class GlobalPoolOp final : public Op {
 public:
  GlobalPoolOp(const OpInit& init, PoolKind kind) : kind_(kind) {
    if (kind == PoolKind::kLp) {
      p_ = ReadP(init);
      if (!(p_ > 0.0f)) init.Fail("p must be > 0, got " + std::to_string(p_));
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    if (xd.size() < 2) ctx.Fail("X must be [N, C, spatial...] (rank >= 2), got " + DimsToString(xd));
    Dims out_dims = {xd[0], xd[1]};
    int64_t size = 1;
    for (size_t i = 2; i < xd.size(); ++i) {
      size *= xd[i];
      out_dims.push_back(1);
    }
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, out_dims);
    const int64_t planes = xd[0] * xd[1];
    if (planes == 0) return [](RunContext&) {};
    if (size == 0) ctx.Fail("X " + DimsToString(xd) + " has an empty spatial dim");
    if (dt == DType::kFloat16 || dt == DType::kBFloat16) {
      const kernels::Float16Kind k16 = Float16KindOf(dt);
      const kernels::Pool16Op op = kind_ == PoolKind::kMax       ? kernels::Pool16Op::kGlobalMax
                                   : kind_ == PoolKind::kAverage ? kernels::Pool16Op::kGlobalAverage
                                                                 : kernels::Pool16Op::kLp;
      kernels::PoolGeometry g;  // the whole plane as one window
      g.planes = planes;
      g.in[2] = size;
      g.kernel[2] = size;
      const float p = p_;
      return [k16, op, g, p](RunContext& rc) {
        kernels::Pool16(k16, op, rc.input(0).data<uint16_t>(), rc.output(0).data<uint16_t>(),
                        nullptr, g, false, p, 1, false, rc.parallel());
      };
    }
    const bool f32 = dt == DType::kFloat32;
    switch (kind_) {
      case PoolKind::kAverage:
        if (f32) {
          return [planes, size](RunContext& rc) {
            kernels::GlobalAveragePoolF32(rc.input(0).data<float>(), rc.output(0).data<float>(),
                                          planes, size, rc.parallel());
          };
        }
        return [planes, size](RunContext& rc) {
          kernels::GlobalAveragePoolF64(rc.input(0).data<double>(), rc.output(0).data<double>(),
                                        planes, size, rc.parallel());
        };
      case PoolKind::kMax:
        if (f32) {
          return [planes, size](RunContext& rc) {
            kernels::GlobalMaxPoolF32(rc.input(0).data<float>(), rc.output(0).data<float>(),
                                      planes, size, rc.parallel());
          };
        }
        return [planes, size](RunContext& rc) {
          kernels::GlobalMaxPoolF64(rc.input(0).data<double>(), rc.output(0).data<double>(),
                                    planes, size, rc.parallel());
        };
      case PoolKind::kLp: {
        // One window covering the flattened spatial dims.
        kernels::PoolGeometry g;
        g.planes = planes;
        g.in[2] = size;
        g.kernel[2] = size;
        const float p = p_;
        if (f32) {
          return [g, p](RunContext& rc) {
            kernels::LpPoolF32(rc.input(0).data<float>(), rc.output(0).data<float>(), g, p,
                               rc.parallel());
          };
        }
        return [g, p](RunContext& rc) {
          kernels::LpPoolF64(rc.input(0).data<double>(), rc.output(0).data<double>(), g, p,
                             rc.parallel());
        };
      }
    }
    ctx.Unsupported("pool kind");
  }

 private:
  PoolKind kind_;
  float p_ = 2.0f;
};

template <PoolKind kKind>
OpFactory GlobalFactory() {
  return [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<GlobalPoolOp>(init, kKind);
  };
}

}  // namespace

void RegisterPoolOps(OpRegistry& registry) {
  for (int v : {1, 8, 10, 11, 12, 22}) registry.Register("", "MaxPool", v, MakeFactory<MaxPoolOp>());
  for (int v : {1, 7, 10, 11, 19, 22}) {
    registry.Register("", "AveragePool", v, MakeFactory<AveragePoolOp>());
  }
  for (int v : {1, 2, 11, 18, 22}) registry.Register("", "LpPool", v, MakeFactory<LpPoolOp>());
  for (int v : {1, 22}) {
    registry.Register("", "GlobalAveragePool", v, GlobalFactory<PoolKind::kAverage>());
    registry.Register("", "GlobalMaxPool", v, GlobalFactory<PoolKind::kMax>());
  }
  for (int v : {1, 2, 22}) registry.Register("", "GlobalLpPool", v, GlobalFactory<PoolKind::kLp>());
}

}  // namespace simplecpp::graph
