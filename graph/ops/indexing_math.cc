// Indexing-family ops that compute a little besides moving data: CumProd (26), Det (11, 22),
// MaxUnpool (9, 11, 22) and NonMaxSuppression (10, 11).
// float16 / bfloat16: CumProd keeps a float32 running product and rounds each output once;
// Det widens to double and rounds each determinant once to 16 bits; MaxUnpool
// only moves elements, so 16-bit values are moved bit-exactly.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "graph/ops/float16_kind.h"
#include "graph/ops/indexing_internal.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph::indexing {
namespace {

// ---- CumProd: running product along `axis` (input 1), with exclusive / reverse ----
class CumProdOp : public Op {
 public:
  explicit CumProdOp(const OpInit& init)
      : exclusive_(init.GetInt("exclusive", 0) != 0), reverse_(init.GetInt("reverse", 0) != 0) {}
  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                          DType::kUInt32, DType::kUInt64, DType::kFloat16, DType::kBFloat16});
    RequireIntegerIndex(ctx, 1, "axis");
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  std::vector<int> ValueInputs() const override { return {1}; }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& dims = ctx.input_dims(0);
    const int64_t rank = static_cast<int64_t>(dims.size());
    if (rank == 0) ctx.Fail("input must have rank >= 1");
    const std::vector<int64_t> av = ReadInts(ctx, 1);
    if (av.size() != 1 || ctx.input_rank(1) > 1) ctx.Fail("axis must be a scalar");
    const int64_t axis = NormalizeAxis(av[0], rank, [&](const std::string& m) { ctx.Fail(m); });
    const int64_t outer = Product(dims, 0, static_cast<size_t>(axis));
    const int64_t n = dims[axis];
    const int64_t inner = Product(dims, static_cast<size_t>(axis) + 1, dims.size());
    ctx.set_output(0, ctx.input_dtype(0), dims);
    const bool exclusive = exclusive_, reverse = reverse_;
    const DType dt = ctx.input_dtype(0);
    if (dt == DType::kFloat16 || dt == DType::kBFloat16) {
      const kernels::Float16Kind kind = Float16KindOf(dt);
      return [=](RunContext& ctx) {
        const uint16_t* x = ctx.input(0).data<uint16_t>();
        uint16_t* y = ctx.output(0).data<uint16_t>();
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t i = 0; i < inner; ++i) {
            float acc = 1.0f;
            for (int64_t s = 0; s < n; ++s) {
              const int64_t j = reverse ? n - 1 - s : s;
              const int64_t p = (o * n + j) * inner + i;
              const float v = kernels::Widen16One(kind, x[p]);
              if (exclusive) {
                y[p] = kernels::Narrow16One(kind, acc);
                acc *= v;
              } else {
                acc *= v;
                y[p] = kernels::Narrow16One(kind, acc);
              }
            }
          }
        }
      };
    }
    RunFn run;
    VisitNumericType(ctx.input_dtype(0), [&](auto tag) {
      using T = decltype(tag);
      run = [=](RunContext& ctx) {
        const T* x = DataOf<T>(ctx.input(0));
        T* y = DataOf<T>(ctx.output(0));
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t i = 0; i < inner; ++i) {
            T acc = static_cast<T>(1);
            for (int64_t s = 0; s < n; ++s) {
              const int64_t j = reverse ? n - 1 - s : s;
              const int64_t p = (o * n + j) * inner + i;
              if (exclusive) {
                y[p] = acc;
                acc = static_cast<T>(acc * x[p]);
              } else {
                acc = static_cast<T>(acc * x[p]);
                y[p] = acc;
              }
            }
          }
        }
      };
    });
    return run;
  }

 private:
  bool exclusive_, reverse_;
};

// ---- Det: determinant of [..., M, M] by LU decomposition with partial pivoting ----
// Each matrix is factored in double precision (also for float / 16-bit input) in a scratch copy.
// Determinant of the m x m row-major matrix in `a` (destroyed).
double LuDeterminant(std::vector<double>& a, int64_t m) {
  double det = 1.0;
  for (int64_t c = 0; c < m && det != 0.0; ++c) {
    int64_t piv = c;
    for (int64_t i = c + 1; i < m; ++i) {
      if (std::fabs(a[i * m + c]) > std::fabs(a[piv * m + c])) piv = i;
    }
    if (a[piv * m + c] == 0.0) return 0.0;
    if (piv != c) {
      for (int64_t j = 0; j < m; ++j) std::swap(a[c * m + j], a[piv * m + j]);
      det = -det;
    }
    const double d = a[c * m + c];
    det *= d;
    for (int64_t i = c + 1; i < m; ++i) {
      const double f = a[i * m + c] / d;
      if (f == 0.0) continue;
      for (int64_t j = c + 1; j < m; ++j) a[i * m + j] -= f * a[c * m + j];
    }
  }
  return det;
}

class DetOp : public Op {
 public:
  // T: float16, float, double; bfloat16 from opset 22.
  explicit DetOp(const OpInit& init) : bfloat16_allowed_(init.opset() >= 22) {}
  void InferTypes(TypeContext& ctx) const override {
    if (bfloat16_allowed_) {
      RequireOneOf(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    } else {
      RequireOneOf(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16});
    }
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const size_t r = in.size();
    if (r < 2 || in[r - 1] != in[r - 2]) {
      ctx.Fail("input must be [..., M, M] (square matrices in the last two dims)");
    }
    const Dims out(in.begin(), in.end() - 2);
    ctx.set_output(0, ctx.input_dtype(0), out);
    const int64_t m = in[r - 1];
    const int64_t batch = Product(in, 0, r - 2);
    const DType dt = ctx.input_dtype(0);
    if (Is16BitFloat(dt)) {
      // Widening to double is exact; each determinant is rounded once, straight from double.
      const kernels::Float16Kind kind = Float16KindOf(dt);
      return [=](RunContext& ctx) {
        const uint16_t* x = ctx.input(0).data<uint16_t>();
        uint16_t* y = ctx.output(0).data<uint16_t>();
        std::vector<double> a(static_cast<size_t>(m * m));
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t i = 0; i < m * m; ++i) {
            a[i] = static_cast<double>(kernels::Widen16One(kind, x[b * m * m + i]));
          }
          const double det = LuDeterminant(a, m);
          y[b] = kind == kernels::Float16Kind::kBFloat16 ? kernels::DoubleToBFloat16Bits(det)
                                                         : kernels::DoubleToHalfBits(det);
        }
      };
    }
    RunFn run;
    VisitNumericType(ctx.input_dtype(0), [&](auto tag) {
      using T = decltype(tag);
      run = [=](RunContext& ctx) {
        const T* x = DataOf<T>(ctx.input(0));
        T* y = DataOf<T>(ctx.output(0));
        std::vector<double> a(static_cast<size_t>(m * m));
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t i = 0; i < m * m; ++i) a[i] = static_cast<double>(x[b * m * m + i]);
          y[b] = static_cast<T>(LuDeterminant(a, m));
        }
      };
    });
    return run;
  }

 private:
  bool bfloat16_allowed_;
};

// ---- MaxUnpool ----
// X [N, C, D_1..D_n], I (int64, shape of X) holding flat indices into the whole unpooled tensor
// (as MaxPool's Indices output gives them), optional output_shape. The output is zero except at
// the indexed positions, which get X's values (a repeated index: the last one in row-major
// order of X wins). Default output dims: (D_i - 1) * stride_i - pad_begin_i - pad_end_i + kernel_i.
// With output_shape (same N and C), I still indexes the default layout and every value keeps its
// coordinates in the larger output (this is what ONNX's test_maxunpool_export_with_output_shape
// expects; it differs from runtimes that read I as flat positions in output_shape).
class MaxUnpoolOp : public Op {
 public:
  explicit MaxUnpoolOp(const OpInit& init)
      : kernel_(init.GetInts("kernel_shape")), pads_(init.GetInts("pads")), strides_(init.GetInts("strides")) {
    if (!init.Has("kernel_shape")) init.Fail("required attribute 'kernel_shape' is missing");
    const size_t n = kernel_.size();
    if (n == 0) init.Fail("kernel_shape must not be empty");
    if (pads_.empty()) pads_.assign(2 * n, 0);
    if (strides_.empty()) strides_.assign(n, 1);
    if (pads_.size() != 2 * n || strides_.size() != n) {
      init.Fail("kernel_shape " + IntsToString(kernel_) + ", pads " + IntsToString(pads_) +
                " and strides " + IntsToString(strides_) + " do not agree in length");
    }
    for (size_t i = 0; i < n; ++i) {
      if (kernel_[i] < 1 || strides_[i] < 1 || pads_[i] < 0 || pads_[i + n] < 0) {
        init.Fail("kernel_shape and strides must be >= 1, pads >= 0");
      }
    }
    // T1: float16, float, double; bfloat16 from opset 22 (moved bit-exactly, no arithmetic).
    bfloat16_allowed_ = init.opset() >= 22;
  }
  void InferTypes(TypeContext& ctx) const override {
    if (bfloat16_allowed_) {
      RequireOneOf(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    } else {
      RequireOneOf(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16});
    }
    RequireOneOf(ctx, 1, {DType::kInt64});
    if (ctx.has_input(2)) RequireOneOf(ctx, 2, {DType::kInt64});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  std::vector<int> ValueInputs() const override { return {2}; }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const size_t n = kernel_.size();
    if (in.size() != n + 2) {
      ctx.Fail("X must have rank " + std::to_string(n + 2) + " ([N, C] + " + std::to_string(n) +
               " spatial dims of kernel_shape)");
    }
    if (ctx.input_dims(1) != in) {
      ctx.Fail("I has shape " + DimsToString(ctx.input_dims(1)) + ", X has shape " + DimsToString(in));
    }
    Dims inferred = {in[0], in[1]};
    for (size_t i = 0; i < n; ++i) {
      inferred.push_back((in[i + 2] - 1) * strides_[i] - pads_[i] - pads_[i + n] + kernel_[i]);
      if (inferred.back() < 0) ctx.Fail("the default output shape has a negative dimension");
    }
    Dims out = inferred;
    if (ctx.has_input(2)) {
      const std::vector<int64_t> shape = ReadInts(ctx, 2);
      if (shape.size() != in.size()) {
        ctx.Fail("output_shape " + IntsToString(shape) + " must have rank " + std::to_string(in.size()));
      }
      for (int64_t d : shape) {
        if (d < 0) ctx.Fail("output_shape " + IntsToString(shape) + " has a negative dimension");
      }
      if (shape[0] != in[0] || shape[1] != in[1]) {
        ctx.Fail("output_shape " + IntsToString(shape) + " must keep N and C of X " + DimsToString(in));
      }
      out = shape;
    }
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, out);
    // Indices are flat positions in the default (inferred) layout; with an explicit output_shape
    // each position keeps its coordinates (the extra rows/columns stay zero), as the ONNX
    // conformance data for output_shape expects.
    const int64_t total = Product(inferred, 0, inferred.size());
    const int64_t out_total = Product(out, 0, out.size());
    const int64_t count = Product(in, 0, in.size());
    const bool remap = out != inferred;
    return VisitMovable(dtype, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      return [=](RunContext& ctx) {
        const T* x = DataOf<T>(ctx.input(0));
        const int64_t* ind = ctx.input(1).data<int64_t>();
        std::vector<int64_t> pos(static_cast<size_t>(count));
        for (int64_t i = 0; i < count; ++i) {
          if (ind[i] < 0 || ind[i] >= total) {
            ctx.Fail("index " + std::to_string(ind[i]) + " at position " + std::to_string(i) +
                     " of I is out of range for the unpooled shape " + DimsToString(inferred) +
                     " (valid: [0, " + std::to_string(total - 1) + "])");
          }
          pos[i] = ind[i];
          if (remap) {
            int64_t rest = ind[i], o = 0, scale = 1;
            for (size_t k = inferred.size(); k-- > 0;) {
              const int64_t c = rest % inferred[k];
              rest /= inferred[k];
              if (c >= out[k]) {
                ctx.Fail("index " + std::to_string(ind[i]) + " at position " + std::to_string(i) +
                         " of I falls outside output_shape " + DimsToString(out));
              }
              o += c * scale;
              scale *= out[k];
            }
            pos[i] = o;
          }
        }
        T* y = DataOf<T>(ctx.output(0));
        std::fill(y, y + out_total, T{});
        for (int64_t i = 0; i < count; ++i) y[pos[i]] = x[i];
      };
    });
  }

 private:
  std::vector<int64_t> kernel_, pads_, strides_;
  bool bfloat16_allowed_ = false;
};

// ---- NonMaxSuppression ----
// boxes [B, N, 4], scores [B, C, N]; optional scalars max_output_boxes_per_class (int64, default
// 0: nothing selected), iou_threshold (float, default 0), score_threshold (float, default: no
// filter). Per (batch, class): candidates with score > score_threshold, by descending score (ties:
// lower box index first); a candidate is kept unless its IoU with a kept box is > iou_threshold.
// Output selected_indices [num, 3] = (batch, class, box), ordered by batch, class, then selection.
struct Box {
  float y1, x1, y2, x2;
};

float IoU(const Box& a, const Box& b) {
  const float area_a = (a.y2 - a.y1) * (a.x2 - a.x1);
  const float area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  if (area_a <= 0.0f || area_b <= 0.0f) return 0.0f;
  const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0.0f || iw <= 0.0f) return 0.0f;
  const float inter = ih * iw;
  return inter / (area_a + area_b - inter);
}

class NonMaxSuppressionOp : public Op {
 public:
  explicit NonMaxSuppressionOp(const OpInit& init) : center_(init.GetInt("center_point_box", 0)) {
    if (center_ != 0 && center_ != 1) init.Fail("center_point_box must be 0 or 1");
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, {DType::kFloat32});
    RequireOneOf(ctx, 1, {DType::kFloat32});
    if (ctx.has_input(2)) RequireOneOf(ctx, 2, {DType::kInt64});
    if (ctx.has_input(3)) RequireOneOf(ctx, 3, {DType::kFloat32});
    if (ctx.has_input(4)) RequireOneOf(ctx, 4, {DType::kFloat32});
    ctx.set_output_dtype(0, DType::kInt64);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& bd = ctx.input_dims(0);
    const Dims& sd = ctx.input_dims(1);
    if (bd.size() != 3 || bd[2] != 4) ctx.Fail("boxes must be [num_batches, num_boxes, 4]");
    if (sd.size() != 3 || sd[0] != bd[0] || sd[2] != bd[1]) {
      ctx.Fail("scores must be [num_batches, num_classes, num_boxes] = [" + std::to_string(bd[0]) +
               ", C, " + std::to_string(bd[1]) + "]");
    }
    for (int i = 2; i <= 4; ++i) {
      if (ctx.has_input(i) && CheckedNumElements(ctx.input_dims(i)) != 1) {
        ctx.Fail("input " + std::to_string(i) + " must be a scalar (one element), got shape " +
                 DimsToString(ctx.input_dims(i)));
      }
    }
    ctx.set_output_dynamic(0, DType::kInt64);
    const int64_t batches = bd[0], nb = bd[1], classes = sd[1];
    const bool center = center_ == 1;
    return [=](RunContext& ctx) {
      const int64_t max_out = ctx.has_input(2) ? ctx.input(2).data<int64_t>()[0] : 0;
      const float iou_th = ctx.has_input(3) ? ctx.input(3).data<float>()[0] : 0.0f;
      const bool has_score_th = ctx.has_input(4);
      const float score_th = has_score_th ? ctx.input(4).data<float>()[0] : 0.0f;
      const float* braw = ctx.input(0).data<float>();
      const float* scores = ctx.input(1).data<float>();
      std::vector<int64_t> sel;
      std::vector<Box> boxes(static_cast<size_t>(nb));
      std::vector<int64_t> cand, kept;
      for (int64_t b = 0; b < batches && max_out > 0; ++b) {
        for (int64_t i = 0; i < nb; ++i) {
          const float* p = braw + (b * nb + i) * 4;
          Box& box = boxes[i];
          if (center) {
            box = {p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
          } else {
            box = {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]),
                   std::max(p[1], p[3])};
          }
        }
        for (int64_t c = 0; c < classes; ++c) {
          const float* s = scores + (b * classes + c) * nb;
          cand.clear();
          for (int64_t i = 0; i < nb; ++i) {
            if (std::isnan(s[i])) continue;  // never selected (and keeps the sort well-defined)
            if (!has_score_th || s[i] > score_th) cand.push_back(i);
          }
          std::stable_sort(cand.begin(), cand.end(), [&](int64_t a, int64_t d) { return s[a] > s[d]; });
          kept.clear();
          for (int64_t i : cand) {
            if (static_cast<int64_t>(kept.size()) >= max_out) break;
            bool keep = true;
            for (int64_t k : kept) {
              if (IoU(boxes[i], boxes[k]) > iou_th) {
                keep = false;
                break;
              }
            }
            if (keep) kept.push_back(i);
          }
          for (int64_t k : kept) sel.insert(sel.end(), {b, c, k});
        }
      }
      const int64_t num = static_cast<int64_t>(sel.size()) / 3;
      Tensor& out = ctx.allocate_output(0, DType::kInt64, {num, 3});
      std::copy(sel.begin(), sel.end(), out.data<int64_t>());
    };
  }

 private:
  int64_t center_;
};

}  // namespace

void RegisterIndexingMathOps(OpRegistry& registry) {
  RegisterVersions<CumProdOp>(registry, "CumProd", {26});
  RegisterVersions<DetOp>(registry, "Det", {11, 22});
  RegisterVersions<MaxUnpoolOp>(registry, "MaxUnpool", {9, 11, 22});
  RegisterVersions<NonMaxSuppressionOp>(registry, "NonMaxSuppression", {10, 11});
}

}  // namespace simplecpp::graph::indexing
