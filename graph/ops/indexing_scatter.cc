// Scatter ops of the indexing family: ScatterND (11, 13, 16 reduction add/mul, 18 max/min),
// ScatterElements (11, 13, 16, 18 likewise) and Scatter (9, the deprecated alias of
// ScatterElements without reduction; also registered at 11 for old exporters).
//
// The output starts as a copy of data; updates are then applied in index order. With reduction
// "none" the spec leaves duplicate indices undefined: here they are applied in order, so the last
// update (in row-major order of indices) wins. With add/mul/max/min every update is combined, in
// order, with what the output holds. Reductions need a numeric dtype (bool: add and max act as
// "or", mul and min as "and"; float16/bfloat16 combine in float32 and round the result once per
// update; strings scatter only with reduction "none").
// Indices may be negative (counted from the end); every index is range-checked before use.
#include <algorithm>
#include <string>
#include <type_traits>

#include "graph/ops/indexing_internal.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph::indexing {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction ParseReduction(const OpInit& init) {
  if (init.opset() < 16 || !init.Has("reduction")) return Reduction::kNone;
  const std::string s = init.GetString("reduction", "none");
  if (s == "none") return Reduction::kNone;
  if (s == "add") return Reduction::kAdd;
  if (s == "mul") return Reduction::kMul;
  if (init.opset() >= 18) {
    if (s == "max") return Reduction::kMax;
    if (s == "min") return Reduction::kMin;
  }
  init.Fail("reduction '" + s + "' is not valid at this opset (none, add, mul" +
            std::string(init.opset() >= 18 ? ", max, min)" : ")"));
}

// A float16 / bfloat16 element (storage only) for the reductions: combined in float32.
template <kernels::Float16Kind K>
struct Float16Elem {
  static constexpr kernels::Float16Kind kKind = K;
  uint16_t bits;
};
template <typename T>
struct IsFloat16Elem : std::false_type {};
template <kernels::Float16Kind K>
struct IsFloat16Elem<Float16Elem<K>> : std::true_type {};

template <typename T, Reduction R>
inline void Combine(T& y, const T& u) {
  if constexpr (IsFloat16Elem<T>::value) {
    float a = kernels::Widen16One(T::kKind, y.bits);
    Combine<float, R>(a, kernels::Widen16One(T::kKind, u.bits));
    y.bits = kernels::Narrow16One(T::kKind, a);
  } else if constexpr (R == Reduction::kNone) {
    y = u;
  } else if constexpr (R == Reduction::kAdd) {
    y = static_cast<T>(y + u);
  } else if constexpr (R == Reduction::kMul) {
    y = static_cast<T>(y * u);
  } else if constexpr (R == Reduction::kMax) {
    y = std::max(y, u);
  } else {
    y = std::min(y, u);
  }
}

// Calls f(T{}, std::integral_constant<Reduction, R>{}) for the storage type T and reduction R.
// kNone moves bytes (any movable dtype); the others dispatch on the numeric type.
template <typename F>
RunFn VisitScatter(const PrepareContext& ctx, DType dtype, Reduction red, F&& f) {
  if (red == Reduction::kNone) {
    return VisitMovable(dtype, [&](auto tag) -> RunFn {
      return f(tag, std::integral_constant<Reduction, Reduction::kNone>{});
    });
  }
  RunFn run;
  const auto visit = [&](auto tag) {
    switch (red) {
      case Reduction::kAdd: run = f(tag, std::integral_constant<Reduction, Reduction::kAdd>{}); break;
      case Reduction::kMul: run = f(tag, std::integral_constant<Reduction, Reduction::kMul>{}); break;
      case Reduction::kMax: run = f(tag, std::integral_constant<Reduction, Reduction::kMax>{}); break;
      default: run = f(tag, std::integral_constant<Reduction, Reduction::kMin>{}); break;
    }
  };
  bool ok = true;
  if (dtype == DType::kFloat16) {
    visit(Float16Elem<kernels::Float16Kind::kHalf>{});
  } else if (dtype == DType::kBFloat16) {
    visit(Float16Elem<kernels::Float16Kind::kBFloat16>{});
  } else {
    ok = VisitNumericType(dtype, visit);
  }
  if (!ok) ctx.Unsupported("a scatter reduction on dtype " + DTypeName(dtype) + " is not supported");
  return run;
}

// ScatterND and ScatterElements: data (input 0), indices (input 1), updates (input 2, data's
// dtype); the output has data's shape.
class ScatterOp : public Op {
 public:
  explicit ScatterOp(const OpInit& init) : reduction_(ParseReduction(init)) {}
  void InferTypes(TypeContext& ctx) const override {
    RequireMovable(ctx, 0);
    RequireIntegerIndex(ctx, 1, "indices");
    ctx.RequireSameDType(0, 2);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

 protected:
  // RunFn: the output is a copy of data (`total` elements) with update slice t (`slice`
  // elements, row-major from updates) combined in at output offset offsets[t], where
  // `offsets(ctx)` computes (and range-checks) every offset before any write, so a failing run
  // leaves no half-scattered output.
  template <typename OffsetsFn>
  RunFn MakeRun(const PrepareContext& ctx, int64_t total, int64_t slice, OffsetsFn offsets) const {
    return VisitScatter(ctx, ctx.input_dtype(0), reduction_, [&](auto tag, auto red) -> RunFn {
      using T = decltype(tag);
      constexpr Reduction R = decltype(red)::value;
      return [=](RunContext& ctx) {
        const T* x = DataOf<T>(ctx.input(0));
        const T* u = DataOf<T>(ctx.input(2));
        T* y = DataOf<T>(ctx.output(0));
        const std::vector<int64_t> off = offsets(ctx);
        if (x != y) CopyElements(x, y, total);
        for (size_t t = 0; t < off.size(); ++t) {
          T* dst = y + off[t];
          const T* src = u + static_cast<int64_t>(t) * slice;
          for (int64_t i = 0; i < slice; ++i) Combine<T, R>(dst[i], src[i]);
        }
      };
    });
  }

  Reduction reduction_;
};

// ---- ScatterND ----
// data [d_0..d_{r-1}], indices [i_0..i_{q-2}, k], updates = indices.shape[:q-1] + data.shape[k:].
class ScatterNDOp : public ScatterOp {
 public:
  using ScatterOp::ScatterOp;
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& data = ctx.input_dims(0);
    const Dims& idx = ctx.input_dims(1);
    const Dims& upd = ctx.input_dims(2);
    const int64_t r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(idx.size());
    if (r < 1 || q < 1) ctx.Fail("data and indices must have rank >= 1");
    const int64_t k = idx[q - 1];
    if (k < 1 || k > r) {
      ctx.Fail("the last dim of indices is " + std::to_string(k) + ", it must be in [1, " +
               std::to_string(r) + "] (rank of data)");
    }
    Dims want(idx.begin(), idx.end() - 1);
    want.insert(want.end(), data.begin() + k, data.end());
    if (upd != want) {
      ctx.Fail("updates have shape " + DimsToString(upd) + ", expected " + DimsToString(want) +
               " (indices.shape[:-1] + data.shape[k:])");
    }
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, data);
    const int64_t tuples = Product(idx, 0, static_cast<size_t>(q - 1));
    const int64_t slice = Product(data, static_cast<size_t>(k), data.size());
    const int64_t total = Product(data, 0, data.size());
    const std::vector<int64_t> strides = Strides(data);
    const std::vector<int64_t> dims(data.begin(), data.begin() + k);
    const std::vector<int64_t> tstrides(strides.begin(), strides.begin() + k);
    const IndexReader read = IndexReaderFor(ctx.input_dtype(1));
    return MakeRun(ctx, total, slice, [=](const RunContext& ctx) {
      const void* ind = ctx.input(1).raw_data();
      std::vector<int64_t> offsets(static_cast<size_t>(tuples));
      for (int64_t t = 0; t < tuples; ++t) {
        int64_t offset = 0;
        for (int64_t e = 0; e < k; ++e) {
          const int64_t pos = t * k + e;
          offset += CheckIndex(ctx, read(ind, pos), dims[e], "index", pos) * tstrides[e];
        }
        offsets[t] = offset;
      }
      return offsets;
    });
  }
};

// ---- ScatterElements / Scatter ----
// data, indices and updates have the same rank; updates has the shape of indices, and
// indices.shape[k] <= data.shape[k] for k != axis. output[p with p[axis] = indices[p]] = updates[p].
class ScatterElementsOp : public ScatterOp {
 public:
  explicit ScatterElementsOp(const OpInit& init) : ScatterOp(init), axis_(init.GetInt("axis", 0)) {}
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& data = ctx.input_dims(0);
    const Dims& idx = ctx.input_dims(1);
    const Dims& upd = ctx.input_dims(2);
    const int64_t r = static_cast<int64_t>(data.size());
    if (r < 1) ctx.Fail("data must have rank >= 1");
    if (static_cast<int64_t>(idx.size()) != r) {
      ctx.Fail("indices have rank " + std::to_string(idx.size()) + ", data has rank " +
               std::to_string(r));
    }
    if (upd != idx) {
      ctx.Fail("updates have shape " + DimsToString(upd) + ", indices have shape " +
               DimsToString(idx) + "; they must be equal");
    }
    const int64_t axis = NormalizeAxis(axis_, r, [&](const std::string& m) { ctx.Fail(m); });
    for (int64_t k = 0; k < r; ++k) {
      if (k != axis && idx[k] > data[k]) {
        ctx.Fail("indices shape " + DimsToString(idx) + " exceeds data shape " +
                 DimsToString(data) + " on axis " + std::to_string(k));
      }
    }
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, data);
    const int64_t total = Product(data, 0, data.size());
    const int64_t n = Product(idx, 0, idx.size());
    const std::vector<int64_t> dstrides = Strides(data);
    const Dims index_dims = idx;
    const int64_t bound = data[axis];
    const IndexReader read = IndexReaderFor(ctx.input_dtype(1));
    // Each update is a slice of one element.
    return MakeRun(ctx, total, 1, [=](const RunContext& ctx) {
      const void* ind = ctx.input(1).raw_data();
      std::vector<int64_t> offsets(static_cast<size_t>(n));
      std::vector<int64_t> pos(index_dims.size(), 0);
      for (int64_t i = 0; i < n; ++i) {
        int64_t o = 0;
        for (int64_t k = 0; k < r; ++k) {
          o += (k == axis ? CheckIndex(ctx, read(ind, i), bound, "index", i) : pos[k]) *
               dstrides[k];
        }
        offsets[i] = o;
        for (int64_t k = r - 1; k >= 0; --k) {  // odometer over the indices shape
          if (++pos[k] < index_dims[k]) break;
          pos[k] = 0;
        }
      }
      return offsets;
    });
  }

 private:
  int64_t axis_;
};

}  // namespace

void RegisterIndexingScatterOps(OpRegistry& registry) {
  RegisterVersions<ScatterNDOp>(registry, "ScatterND", {11, 13, 16, 18});
  RegisterVersions<ScatterElementsOp>(registry, "ScatterElements", {11, 13, 16, 18});
  RegisterVersions<ScatterElementsOp>(registry, "Scatter", {9, 11});
}

}  // namespace simplecpp::graph::indexing
