// The indexing op family: ops that pick, place or generate elements by index. This file registers
// the family and holds the pure data movement ops:
//   GatherND (11, 12 batch_dims, 13), Trilu (14), ReverseSequence (10), EyeLike (9, 22),
//   DepthToSpace (1, 11 mode, 13), SpaceToDepth (1, 13), OneHot (9, 11).
// Other files of the family:
//   indexing_scatter.cc  ScatterND, ScatterElements, Scatter
//   indexing_set.cc      NonZero, Compress, Unique (outputs with data-dependent shapes)
//   indexing_math.cc     CumProd, Det, MaxUnpool, NonMaxSuppression
//   indexing_random.cc   Bernoulli, RandomNormal(Like), RandomUniform(Like)
// Every index read from a tensor at run time is range-checked (RunContext::Fail names the index,
// its position and the valid range) before any memory is touched through it.
#include <algorithm>
#include <cmath>
#include <memory>

#include "graph/ops/families.h"
#include "graph/ops/indexing_internal.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph {
namespace indexing {
namespace {

std::vector<int64_t> Iota(int64_t n, int64_t step) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = i * step;
  return v;
}

// ---- GatherND ----
// data [d_0..d_{r-1}], indices [i_0..i_{q-2}, k], batch_dims b: the first b dims of both agree.
// out = indices.shape[:q-1] + data.shape[b+k:]; each index tuple (k entries, negative allowed)
// selects a slice of data within its batch.
class GatherNDOp : public Op {
 public:
  explicit GatherNDOp(const OpInit& init)
      : batch_dims_(init.opset() >= 12 ? init.GetInt("batch_dims", 0) : 0) {
    if (batch_dims_ < 0) init.Fail("batch_dims must be >= 0, got " + std::to_string(batch_dims_));
  }
  void InferTypes(TypeContext& ctx) const override { InferMoveByIndexTypes(ctx, "indices"); }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& data = ctx.input_dims(0);
    const Dims& idx = ctx.input_dims(1);
    const int64_t r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(idx.size());
    const int64_t b = batch_dims_;
    if (r < 1 || q < 1) ctx.Fail("data and indices must have rank >= 1");
    if (b >= std::min(r, q)) {
      ctx.Fail("batch_dims " + std::to_string(b) + " must be less than the ranks of data (" +
               std::to_string(r) + ") and indices (" + std::to_string(q) + ")");
    }
    for (int64_t k = 0; k < b; ++k) {
      if (data[k] != idx[k]) {
        ctx.Fail("the first " + std::to_string(b) + " dims of data " + DimsToString(data) +
                 " and indices " + DimsToString(idx) + " differ (batch_dims)");
      }
    }
    const int64_t k = idx[q - 1];
    if (k < 1 || k > r - b) {
      ctx.Fail("the last dim of indices is " + std::to_string(k) + ", it must be in [1, " +
               std::to_string(r - b) + "] (rank of data minus batch_dims)");
    }
    Dims out(idx.begin(), idx.end() - 1);
    out.insert(out.end(), data.begin() + b + k, data.end());
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, out);
    const int64_t batches = Product(data, 0, b);
    const int64_t tuples = Product(idx, b, q - 1);
    const int64_t slice = Product(data, b + k, r);
    const int64_t batch_stride = Product(data, b, r);
    const std::vector<int64_t> strides = Strides(data);
    const std::vector<int64_t> dims(data.begin() + b, data.begin() + b + k);
    const std::vector<int64_t> tstrides(strides.begin() + b, strides.begin() + b + k);
    const IndexReader read = IndexReaderFor(ctx.input_dtype(1));
    return VisitMovable(dtype, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      return [=](RunContext& ctx) {
        const T* in = DataOf<T>(ctx.input(0));
        const void* ind = ctx.input(1).raw_data();
        T* o = DataOf<T>(ctx.output(0));
        for (int64_t bi = 0; bi < batches; ++bi) {
          for (int64_t j = 0; j < tuples; ++j) {
            const int64_t t = bi * tuples + j;
            int64_t offset = bi * batch_stride;
            for (int64_t e = 0; e < k; ++e) {
              const int64_t pos = t * k + e;
              offset += CheckIndex(ctx, read(ind, pos), dims[e], "index", pos) * tstrides[e];
            }
            CopyElements(in + offset, o + t * slice, slice);
          }
        }
      };
    });
  }

 private:
  int64_t batch_dims_;
};

// ---- Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims ----
class TriluOp : public Op {
 public:
  explicit TriluOp(const OpInit& init) : upper_(init.GetInt("upper", 1) != 0) {}
  void InferTypes(TypeContext& ctx) const override {
    RequireMovable(ctx, 0);
    if (ctx.has_input(1)) RequireIntegerIndex(ctx, 1, "k");
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  std::vector<int> ValueInputs() const override { return {1}; }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(in.size());
    if (r < 2) ctx.Fail("input must have rank >= 2");
    int64_t k = 0;
    if (ctx.has_input(1)) {
      const std::vector<int64_t> kv = ReadInts(ctx, 1);
      if (kv.size() != 1) ctx.Fail("k must be a scalar, got " + std::to_string(kv.size()) + " values");
      k = kv[0];
    }
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, in);
    const int64_t rows = in[r - 2], cols = in[r - 1];
    const int64_t mats = Product(in, 0, static_cast<size_t>(r - 2));
    const bool upper = upper_;
    return VisitMovable(dtype, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      return [=](RunContext& ctx) {
        const T* x = DataOf<T>(ctx.input(0));
        T* y = DataOf<T>(ctx.output(0));
        for (int64_t m = 0; m < mats; ++m) {
          for (int64_t i = 0; i < rows; ++i) {
            const int64_t base = (m * rows + i) * cols;
            for (int64_t j = 0; j < cols; ++j) {
              const int64_t d = j - i;
              const bool keep = upper ? d >= k : d <= k;
              y[base + j] = keep ? x[base + j] : T{};
            }
          }
        }
      };
    });
  }

 private:
  bool upper_;
};

// ---- ReverseSequence: reverses the first sequence_lens[b] steps along time_axis per batch ----
class ReverseSequenceOp : public Op {
 public:
  explicit ReverseSequenceOp(const OpInit& init)
      : batch_axis_(init.GetInt("batch_axis", 1)), time_axis_(init.GetInt("time_axis", 0)) {
    if (!((batch_axis_ == 0 && time_axis_ == 1) || (batch_axis_ == 1 && time_axis_ == 0))) {
      init.Fail("batch_axis and time_axis must be 0 and 1 (either order), got " +
                std::to_string(batch_axis_) + " and " + std::to_string(time_axis_));
    }
  }
  void InferTypes(TypeContext& ctx) const override {
    InferMoveByIndexTypes(ctx, "sequence_lens");
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    if (in.size() < 2) ctx.Fail("input must have rank >= 2");
    const int64_t batch = in[batch_axis_], time = in[time_axis_];
    if (ctx.input_dims(1) != Dims{batch}) {
      ctx.Fail("sequence_lens has shape " + DimsToString(ctx.input_dims(1)) + ", expected [" +
               std::to_string(batch) + "] (the batch size)");
    }
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, in);
    const int64_t inner = Product(in, 2, in.size());
    // Element (b, t) starts at b * bstride + t * tstride.
    const int64_t bstride = (batch_axis_ == 0 ? in[1] : 1) * inner;
    const int64_t tstride = (time_axis_ == 0 ? in[1] : 1) * inner;
    const IndexReader read = IndexReaderFor(ctx.input_dtype(1));
    return VisitMovable(dtype, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      return [=](RunContext& ctx) {
        const T* x = DataOf<T>(ctx.input(0));
        const void* lens = ctx.input(1).raw_data();
        T* y = DataOf<T>(ctx.output(0));
        for (int64_t b = 0; b < batch; ++b) {
          const int64_t len = read(lens, b);
          if (len < 0 || len > time) {
            ctx.Fail("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) +
                     " is out of range [0, " + std::to_string(time) + "] (the time dimension)");
          }
          for (int64_t t = 0; t < time; ++t) {
            const int64_t src = t < len ? len - 1 - t : t;
            CopyElements(x + b * bstride + src * tstride, y + b * bstride + t * tstride, inner);
          }
        }
      };
    });
  }

 private:
  int64_t batch_axis_, time_axis_;
};

// ---- EyeLike: a 2-D tensor shaped like the input with ones on diagonal k ----
const std::vector<DType>& EyeDTypes() {
  static const std::vector<DType> kTypes = {
      DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
      DType::kUInt8,   DType::kInt16,   DType::kUInt16,  DType::kInt32,    DType::kUInt32,
      DType::kInt64,   DType::kUInt64,  DType::kBool};
  return kTypes;
}

class EyeLikeOp : public Op {
 public:
  explicit EyeLikeOp(const OpInit& init)
      : k_(init.GetInt("k", 0)), dtype_(static_cast<DType>(init.GetInt("dtype", 0))) {
    if (init.Has("dtype")) {
      const auto& t = EyeDTypes();
      if (std::find(t.begin(), t.end(), dtype_) == t.end()) {
        init.Unsupported("dtype " + DTypeName(dtype_) + " is not supported by EyeLike");
      }
    }
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, EyeDTypes());
    ctx.set_output_dtype(0, dtype_ == DType::kUndefined ? ctx.input_dtype(0) : dtype_);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    if (in.size() != 2) ctx.Fail("input must be 2-D");
    const DType dtype = dtype_ == DType::kUndefined ? ctx.input_dtype(0) : dtype_;
    ctx.set_output(0, dtype, in);
    // The bytes of "one" in the output dtype.
    uint64_t one = 0;
    if (dtype == DType::kFloat16) {
      one = 0x3C00;
    } else if (dtype == DType::kBFloat16) {
      one = 0x3F80;
    } else {
      VisitNumericType(dtype, [&](auto tag) {
        using T = decltype(tag);
        const T v = static_cast<T>(1);
        std::memcpy(&one, &v, sizeof(T));
      });
    }
    const int64_t rows = in[0], cols = in[1], k = k_;
    return VisitMovable(dtype, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, Bytes16>) {
        ctx.Unsupported("dtype " + DTypeName(dtype));
      } else {
        T one_t;
        std::memcpy(&one_t, &one, sizeof(T));
        return [=](RunContext& ctx) {
          T* y = DataOf<T>(ctx.output(0));
          for (int64_t i = 0; i < rows; ++i) {
            for (int64_t j = 0; j < cols; ++j) y[i * cols + j] = j - i == k ? one_t : T{};
          }
        };
      }
    });
  }

 private:
  int64_t k_;
  DType dtype_;
};

// ---- DepthToSpace / SpaceToDepth: [N,C,H,W] rearrangements expressed as a 6-D axis gather ----
class DepthToSpaceOp : public Op {
 public:
  explicit DepthToSpaceOp(const OpInit& init)
      : blocksize_(init.RequireInt("blocksize")),
        crd_(init.opset() >= 11 && init.GetString("mode", "DCR") == "CRD") {
    if (blocksize_ < 1) init.Fail("blocksize must be >= 1, got " + std::to_string(blocksize_));
    if (init.opset() >= 11) {
      const std::string mode = init.GetString("mode", "DCR");
      if (mode != "DCR" && mode != "CRD") init.Fail("mode must be DCR or CRD, got '" + mode + "'");
    }
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireMovable(ctx, 0);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    if (in.size() != 4) ctx.Fail("input must be 4-D [N,C,H,W]");
    const int64_t b = blocksize_, n = in[0], c = in[1], h = in[2], w = in[3];
    if (c % (b * b) != 0) {
      ctx.Fail("channels " + std::to_string(c) + " are not divisible by blocksize^2 = " +
               std::to_string(b * b));
    }
    const int64_t co = c / (b * b);
    ctx.set_output(0, ctx.input_dtype(0), {n, co, h * b, w * b});
    const std::vector<int64_t> s = Strides(in);
    // Output viewed as [N, C', H, b1, W, b2]; input channel is (b1*b + b2)*C' + c (DCR) or
    // c*b*b + b1*b + b2 (CRD).
    std::vector<std::vector<int64_t>> off = {
        Iota(n, s[0]),
        Iota(co, crd_ ? b * b * s[1] : s[1]),
        Iota(h, s[2]),
        Iota(b, crd_ ? b * s[1] : b * co * s[1]),
        Iota(w, s[3]),
        Iota(b, crd_ ? s[1] : co * s[1])};
    return AxisGatherRunFn(ctx.input_dtype(0), {n, co, h, b, w, b}, std::move(off));
  }

 private:
  int64_t blocksize_;
  bool crd_;
};

class SpaceToDepthOp : public Op {
 public:
  explicit SpaceToDepthOp(const OpInit& init) : blocksize_(init.RequireInt("blocksize")) {
    if (blocksize_ < 1) init.Fail("blocksize must be >= 1, got " + std::to_string(blocksize_));
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireMovable(ctx, 0);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    if (in.size() != 4) ctx.Fail("input must be 4-D [N,C,H,W]");
    const int64_t b = blocksize_, n = in[0], c = in[1], h = in[2], w = in[3];
    if (h % b != 0 || w % b != 0) {
      ctx.Fail("height " + std::to_string(h) + " and width " + std::to_string(w) +
               " must be divisible by blocksize " + std::to_string(b));
    }
    const int64_t ho = h / b, wo = w / b;
    ctx.set_output(0, ctx.input_dtype(0), {n, c * b * b, ho, wo});
    const std::vector<int64_t> s = Strides(in);
    // Output viewed as [N, b1, b2, C, H', W']; input element is [n, c, h'*b + b1, w'*b + b2].
    std::vector<std::vector<int64_t>> off = {Iota(n, s[0]),      Iota(b, s[2]),
                                             Iota(b, s[3]),      Iota(c, s[1]),
                                             Iota(ho, b * s[2]), Iota(wo, b * s[3])};
    return AxisGatherRunFn(ctx.input_dtype(0), {n, b, b, c, ho, wo}, std::move(off));
  }

 private:
  int64_t blocksize_;
};

// ---- OneHot ----
// indices (any numeric; floats are truncated), depth (numeric, one element), values [off, on].
// Output: indices.shape with a new axis of size depth inserted at `axis`. Indices outside
// [-depth, depth) (opset 11; [0, depth) in opset 9) give an all-off row, as the spec says: this
// is defined behavior, not an error.
template <typename T>
int64_t ReadAsIndex(const void* d, int64_t i) {
  const T v = static_cast<const T*>(d)[i];
  if constexpr (std::is_floating_point_v<T>) {
    if (!(v > -9.0e18 && v < 9.0e18)) return INT64_MIN;  // NaN / huge: out of every range
  }
  if constexpr (std::is_same_v<T, uint64_t>) {
    if (v > static_cast<uint64_t>(INT64_MAX)) return INT64_MIN;
  }
  return static_cast<int64_t>(v);
}

// float16 index (OneHot-11's T1 / T2 include it): the exact float32 value, then as above.
int64_t ReadHalfAsIndex(const void* d, int64_t i) {
  const float v = kernels::HalfBitsToFloat(static_cast<const uint16_t*>(d)[i]);
  return ReadAsIndex<float>(&v, 0);
}

const std::vector<DType>& OneHotIndexDTypes() {
  static const std::vector<DType> kTypes = {DType::kFloat32, DType::kFloat64, DType::kInt8,
                                            DType::kUInt8,   DType::kInt16,   DType::kUInt16,
                                            DType::kInt32,   DType::kUInt32,  DType::kInt64,
                                            DType::kUInt64,  DType::kFloat16};
  return kTypes;
}

IndexReader NumericIndexReader(DType dt) {
  if (dt == DType::kFloat16) return &ReadHalfAsIndex;
  IndexReader r = nullptr;
  VisitNumericType(dt, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) r = &ReadAsIndex<T>;
  });
  return r;
}

class OneHotOp : public Op {
 public:
  explicit OneHotOp(const OpInit& init)
      : wrap_negative_(init.opset() >= 11), axis_(init.GetInt("axis", -1)) {}
  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, OneHotIndexDTypes());
    RequireOneOf(ctx, 1, OneHotIndexDTypes());
    RequireMovable(ctx, 2);
    ctx.set_output_dtype(0, ctx.input_dtype(2));
  }
  std::vector<int> ValueInputs() const override { return {1}; }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& idx = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(idx.size());
    const Tensor& dt = ctx.RequireValue(1);
    if (dt.num_elements() != 1 || dt.rank() > 1) {
      ctx.Fail("depth must be a scalar or have one element, got shape " + DimsToString(dt.dims()));
    }
    const double dv = TensorElementAsDouble(dt, 0);
    if (!(dv >= 1 && dv < 9.0e18)) ctx.Fail("depth must be >= 1, got " + std::to_string(dv));
    const int64_t depth = static_cast<int64_t>(dv);
    if (ctx.input_dims(2).size() != 1 || ctx.input_dims(2)[0] != 2) {
      ctx.Fail("values must have shape [2] ([off_value, on_value]), got " +
               DimsToString(ctx.input_dims(2)));
    }
    if (axis_ < -r - 1 || axis_ > r) {
      ctx.Fail("axis " + std::to_string(axis_) + " is out of range [" + std::to_string(-r - 1) +
               ", " + std::to_string(r) + "]");
    }
    const int64_t axis = axis_ < 0 ? axis_ + r + 1 : axis_;
    Dims out(idx.begin(), idx.begin() + axis);
    out.push_back(depth);
    out.insert(out.end(), idx.begin() + axis, idx.end());
    const DType dtype = ctx.input_dtype(2);
    ctx.set_output(0, dtype, out);
    const int64_t outer = Product(idx, 0, static_cast<size_t>(axis));
    const int64_t inner = Product(idx, static_cast<size_t>(axis), idx.size());
    const IndexReader read = NumericIndexReader(ctx.input_dtype(0));
    const bool wrap_negative = wrap_negative_;
    return VisitMovable(dtype, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      return [=](RunContext& ctx) {
        const void* ind = ctx.input(0).raw_data();
        const T* values = DataOf<T>(ctx.input(2));
        T* y = DataOf<T>(ctx.output(0));
        const int64_t total = outer * depth * inner;
        for (int64_t i = 0; i < total; ++i) y[i] = values[0];
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t i = 0; i < inner; ++i) {
            int64_t v = read(ind, o * inner + i);
            if (v < 0 && wrap_negative && v >= -depth) v += depth;
            if (v >= 0 && v < depth) y[(o * depth + v) * inner + i] = values[1];
          }
        }
      };
    });
  }

 private:
  bool wrap_negative_;  // negative indices count from the end from opset 11 on
  int64_t axis_;
};

}  // namespace

void RegisterIndexingMoveOps(OpRegistry& registry) {
  RegisterVersions<GatherNDOp>(registry, "GatherND", {11, 12, 13});
  RegisterVersions<TriluOp>(registry, "Trilu", {14});
  RegisterVersions<ReverseSequenceOp>(registry, "ReverseSequence", {10});
  RegisterVersions<EyeLikeOp>(registry, "EyeLike", {9, 22});
  RegisterVersions<DepthToSpaceOp>(registry, "DepthToSpace", {1, 11, 13});
  RegisterVersions<SpaceToDepthOp>(registry, "SpaceToDepth", {1, 13});
  RegisterVersions<OneHotOp>(registry, "OneHot", {9, 11});
}

}  // namespace indexing

void RegisterIndexingOps(OpRegistry& registry) {
  indexing::RegisterIndexingMoveOps(registry);
  indexing::RegisterIndexingScatterOps(registry);
  indexing::RegisterIndexingSetOps(registry);
  indexing::RegisterIndexingMathOps(registry);
  indexing::RegisterIndexingRandomOps(registry);
}

}  // namespace simplecpp::graph
