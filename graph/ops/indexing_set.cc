// Indexing ops whose output shape depends on the data (declared with set_output_dynamic and
// allocated by the RunFn): NonZero (9, 13), Compress (9, 11 negative axis), Unique (11; float16
// items compare by their exact float32 value).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "graph/ops/indexing_internal.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph::indexing {
namespace {

// ---- NonZero: int64 [rank, nnz] coordinates of the nonzero elements in row-major order ----
// A scalar input gives [1, nnz] (coordinate 0), as numpy's nonzero did for 0-d arrays.
// float16 / bfloat16 are tested on their bits (any nonzero magnitude, NaN included); strings
// count as nonzero when not empty.
template <typename T>
bool IsNonZero(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return !v.empty();
  } else {
    return v != T{};
  }
}
bool IsNonZeroHalf(const uint16_t& v) { return (v & 0x7FFF) != 0; }

class NonZeroOp : public Op {
 public:
  explicit NonZeroOp(const OpInit&) {}
  void InferTypes(TypeContext& ctx) const override {
    RequireMovable(ctx, 0);
    const DType dt = ctx.input_dtype(0);
    if (DTypeSize(dt) > 8 || (!IsFloatDType(dt) && !IsIntegerDType(dt) && dt != DType::kBool &&
                              dt != DType::kString)) {
      ctx.Unsupported("NonZero does not support dtype " + DTypeName(dt));
    }
    ctx.set_output_dtype(0, DType::kInt64);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims dims = ctx.input_dims(0);
    ctx.set_output_dynamic(0, DType::kInt64);
    const DType dt = ctx.input_dtype(0);
    if (dt == DType::kFloat16 || dt == DType::kBFloat16) return MakeRun<uint16_t>(dims, true);
    if (dt == DType::kString) return MakeRun<std::string>(dims, false);
    RunFn run;
    VisitNumericType(dt, [&](auto tag) { run = MakeRun<decltype(tag)>(dims, false); });
    return run;
  }

 private:
  template <typename T>
  static RunFn MakeRun(const Dims& dims, bool half) {
    const int64_t r = static_cast<int64_t>(dims.size());
    const int64_t n = Product(dims, 0, dims.size());
    return [dims, r, n, half](RunContext& ctx) {
      (void)half;  // read only by the 16-bit instantiation
      const T* x = DataOf<T>(ctx.input(0));
      std::vector<int64_t> hits;
      for (int64_t i = 0; i < n; ++i) {
        bool nz;
        if constexpr (std::is_same_v<T, uint16_t>) {
          nz = half ? IsNonZeroHalf(x[i]) : x[i] != 0;
        } else {
          nz = IsNonZero(x[i]);
        }
        if (nz) hits.push_back(i);
      }
      const int64_t nnz = static_cast<int64_t>(hits.size());
      const int64_t rows = r == 0 ? 1 : r;
      Tensor& out = ctx.allocate_output(0, DType::kInt64, {rows, nnz});
      int64_t* y = out.data<int64_t>();
      if (r == 0) {
        std::fill(y, y + nnz, 0);
        return;
      }
      for (int64_t j = 0; j < nnz; ++j) {
        int64_t i = hits[j];
        for (int64_t k = r - 1; k >= 0; --k) {
          y[k * nnz + j] = i % dims[k];
          i /= dims[k];
        }
      }
    };
  }
};

// ---- Compress: keeps the slices along `axis` (or the flattened elements) whose condition is
// true. A condition shorter than the axis drops the remaining slices; a longer one may only hold
// false beyond the axis (a true there would select a slice that does not exist: error).
class CompressOp : public Op {
 public:
  explicit CompressOp(const OpInit& init) : has_axis_(init.Has("axis")), axis_(init.GetInt("axis", 0)) {
    if (init.opset() < 11 && axis_ < 0) init.Fail("axis must be >= 0 before opset 11");
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireMovable(ctx, 0);
    RequireOneOf(ctx, 1, {DType::kBool});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims in = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(in.size());
    if (ctx.input_dims(1).size() != 1) {
      ctx.Fail("condition must be 1-D, got shape " + DimsToString(ctx.input_dims(1)));
    }
    int64_t axis = -1;
    if (has_axis_) axis = NormalizeAxis(axis_, r, [&](const std::string& m) { ctx.Fail(m); });
    if (has_axis_ && r == 0) ctx.Fail("axis given for a scalar input");
    const int64_t outer = has_axis_ ? Product(in, 0, static_cast<size_t>(axis)) : 1;
    const int64_t dim = has_axis_ ? in[axis] : Product(in, 0, in.size());
    const int64_t inner = has_axis_ ? Product(in, static_cast<size_t>(axis) + 1, in.size()) : 1;
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output_dynamic(0, dtype);
    return VisitMovable(dtype, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      return [=](RunContext& ctx) {
        const T* x = DataOf<T>(ctx.input(0));
        const Tensor& ct = ctx.input(1);
        const bool* cond = ct.data<bool>();
        const int64_t len = ct.num_elements();
        std::vector<int64_t> keep;
        for (int64_t i = 0; i < len; ++i) {
          if (!cond[i]) continue;
          if (i >= dim) {
            ctx.Fail("condition[" + std::to_string(i) + "] is true but the " +
                     (axis >= 0 ? "axis has size " : "input has ") + std::to_string(dim) +
                     (axis >= 0 ? "" : " elements"));
          }
          keep.push_back(i);
        }
        const int64_t m = static_cast<int64_t>(keep.size());
        Dims od;
        if (axis < 0) {
          od = {m};
        } else {
          od = in;
          od[axis] = m;
        }
        T* y = DataOf<T>(ctx.allocate_output(0, ctx.input(0).dtype(), od));
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t j = 0; j < m; ++j) {
            CopyElements(x + (o * dim + keep[j]) * inner, y + (o * m + j) * inner, inner);
          }
        }
      };
    });
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

// ---- Unique ----
// Without axis the input is flattened and each element is an item; with axis each slice
// x[..., j, ...] (j along axis) is an item, compared element by element in row-major order of the
// remaining dims. sorted=1 orders the unique items ascending (NaNs last and equal to each other);
// sorted=0 keeps the order of first occurrence. Outputs: Y (the unique items), indices (first
// occurrence of each), inverse_indices (item -> its unique position), counts.
template <typename T>
bool ElemLess(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) {
    return !std::isnan(a) && (std::isnan(b) || a < b);
  } else {
    return a < b;
  }
}
template <typename T>
bool ElemEqual(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a == b || (std::isnan(a) && std::isnan(b));
  } else {
    return a == b;
  }
}

// A float16 element (Unique-11's T includes float16): compared by its exact float32 value, copied
// as bits.
struct HalfItem {
  uint16_t bits;
};
inline bool ElemLess(const HalfItem& a, const HalfItem& b) {
  return ElemLess(kernels::HalfBitsToFloat(a.bits), kernels::HalfBitsToFloat(b.bits));
}
inline bool ElemEqual(const HalfItem& a, const HalfItem& b) {
  return ElemEqual(kernels::HalfBitsToFloat(a.bits), kernels::HalfBitsToFloat(b.bits));
}

// Unique's items (slices along the axis, or single elements) compared by value, behind one
// interface so that the sorting and grouping below is compiled once, not once per dtype (it was
// about 90 KB of the WebAssembly package for the 13 dtypes).
class UniqueItems {
 public:
  virtual ~UniqueItems() = default;
  virtual bool Less(int64_t a, int64_t b) const = 0;
  virtual bool Equal(int64_t a, int64_t b) const = 0;
};

// Item j of x is the elements x[(o * items + j) * inner + i] for o < outer, i < inner, compared
// lexicographically.
template <typename T>
class TypedUniqueItems final : public UniqueItems {
 public:
  TypedUniqueItems(const T* x, int64_t outer, int64_t items, int64_t inner)
      : x_(x), outer_(outer), items_(items), inner_(inner) {}
  bool Less(int64_t a, int64_t b) const override {
    for (int64_t o = 0; o < outer_; ++o) {
      const T* pa = x_ + (o * items_ + a) * inner_;
      const T* pb = x_ + (o * items_ + b) * inner_;
      for (int64_t i = 0; i < inner_; ++i) {
        if (ElemLess(pa[i], pb[i])) return true;
        if (ElemLess(pb[i], pa[i])) return false;
      }
    }
    return false;
  }
  bool Equal(int64_t a, int64_t b) const override {
    for (int64_t o = 0; o < outer_; ++o) {
      const T* pa = x_ + (o * items_ + a) * inner_;
      const T* pb = x_ + (o * items_ + b) * inner_;
      for (int64_t i = 0; i < inner_; ++i) {
        if (!ElemEqual(pa[i], pb[i])) return false;
      }
    }
    return true;
  }

 private:
  const T* x_;
  int64_t outer_, items_, inner_;
};

// Groups of equal items: first[g] (the first occurrence), count[g], group_of[item], and rank[g],
// the output position of group g (ascending item order when sorted, else order of first
// occurrence).
struct UniqueGroups {
  std::vector<int64_t> first, count, group_of, rank;
};

UniqueGroups GroupUniqueItems(const UniqueItems& items_cmp, int64_t items, bool sorted) {
  std::vector<int64_t> order(static_cast<size_t>(items));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return items_cmp.Less(a, b); });
  // Groups of equal items in sorted order; the first of each group is its first occurrence.
  UniqueGroups g;
  g.group_of.resize(static_cast<size_t>(items));
  for (int64_t p = 0; p < items; ++p) {
    if (p == 0 || !items_cmp.Equal(order[p - 1], order[p])) {
      g.first.push_back(order[p]);
      g.count.push_back(0);
    }
    g.group_of[order[p]] = static_cast<int64_t>(g.first.size()) - 1;
    ++g.count.back();
  }
  const int64_t u = static_cast<int64_t>(g.first.size());
  g.rank.resize(static_cast<size_t>(u));
  std::iota(g.rank.begin(), g.rank.end(), 0);
  if (!sorted) {
    std::vector<int64_t> by_first(static_cast<size_t>(u));
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t a, int64_t b) { return g.first[a] < g.first[b]; });
    for (int64_t p = 0; p < u; ++p) g.rank[by_first[p]] = p;
  }
  return g;
}

class UniqueOp : public Op {
 public:
  explicit UniqueOp(const OpInit& init)
      : has_axis_(init.Has("axis")), axis_(init.GetInt("axis", 0)), sorted_(init.GetInt("sorted", 1) != 0) {}
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    const DType dt = ctx.input_dtype(0);
    bool ok = dt == DType::kString || dt == DType::kFloat16;
    VisitNumericType(dt, [&](auto) { ok = true; });
    if (!ok) ctx.Unsupported("Unique does not support dtype " + DTypeName(dt) + " yet");
    ctx.set_output_dtype(0, dt);
    for (int i = 1; i < 4; ++i) ctx.set_output_dtype(i, DType::kInt64);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims in = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(in.size());
    int64_t axis = -1;
    if (has_axis_) {
      if (r == 0) ctx.Fail("axis given for a scalar input");
      axis = NormalizeAxis(axis_, r, [&](const std::string& m) { ctx.Fail(m); });
    }
    const int64_t outer = axis >= 0 ? Product(in, 0, static_cast<size_t>(axis)) : 1;
    const int64_t items = axis >= 0 ? in[axis] : Product(in, 0, in.size());
    const int64_t inner = axis >= 0 ? Product(in, static_cast<size_t>(axis) + 1, in.size()) : 1;
    const DType dtype = ctx.input_dtype(0);
    for (int i = 0; i < 4; ++i) {
      if (i == 2) {
        ctx.set_output(2, DType::kInt64, {items});
      } else {
        ctx.set_output_dynamic(i, i == 0 ? dtype : DType::kInt64);
      }
    }
    const bool sorted = sorted_;
    auto make = [&](auto tag) -> RunFn {
      using T = decltype(tag);
      return [=](RunContext& ctx) {
        const T* x = DataOf<T>(ctx.input(0));
        const UniqueGroups g =
            GroupUniqueItems(TypedUniqueItems<T>(x, outer, items, inner), items, sorted);
        const std::vector<int64_t>& first = g.first;
        const std::vector<int64_t>& count = g.count;
        const std::vector<int64_t>& rank = g.rank;
        const std::vector<int64_t>& group_of = g.group_of;
        const int64_t u = static_cast<int64_t>(first.size());
        Dims yd = {u};
        if (axis >= 0) {
          yd = in;
          yd[axis] = u;
        }
        T* y = DataOf<T>(ctx.allocate_output(0, ctx.input(0).dtype(), yd));
        int64_t* idx = nullptr;
        int64_t* cnt = nullptr;
        if (ctx.num_outputs() > 1) idx = ctx.allocate_output(1, DType::kInt64, {u}).data<int64_t>();
        if (ctx.num_outputs() > 3) cnt = ctx.allocate_output(3, DType::kInt64, {u}).data<int64_t>();
        for (int64_t g = 0; g < u; ++g) {
          const int64_t p = rank[g];
          for (int64_t o = 0; o < outer; ++o) {
            CopyElements(x + (o * items + first[g]) * inner, y + (o * u + p) * inner, inner);
          }
          if (idx) idx[p] = first[g];
          if (cnt) cnt[p] = count[g];
        }
        if (ctx.num_outputs() > 2 && ctx.output(2).defined()) {
          int64_t* inv = ctx.output(2).data<int64_t>();
          for (int64_t j = 0; j < items; ++j) inv[j] = rank[group_of[j]];
        }
      };
    };
    if (dtype == DType::kString) return make(std::string{});
    if (dtype == DType::kFloat16) return make(HalfItem{});
    RunFn run;
    VisitNumericType(dtype, [&](auto tag) { run = make(tag); });
    return run;
  }

 private:
  bool has_axis_;
  int64_t axis_;
  bool sorted_;
};

}  // namespace

void RegisterIndexingSetOps(OpRegistry& registry) {
  RegisterVersions<NonZeroOp>(registry, "NonZero", {9, 13});
  RegisterVersions<CompressOp>(registry, "Compress", {9, 11});
  RegisterVersions<UniqueOp>(registry, "Unique", {11});
}

}  // namespace simplecpp::graph::indexing
