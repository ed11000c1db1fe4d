// Random ops: Bernoulli (15, 22), RandomUniform / RandomNormal (1, 22) and their *Like variants
// (1, 22). They report deterministic() == false, so the executor never constant-folds them.
//
// Generator (counter-based, so results never depend on the thread count or on the order in which
// elements are produced): draw(j) = SplitMix64 finalizer of (key + (j + 1) * 0x9E3779B97F4A7C15),
// i.e. the j-th output of a SplitMix64 stream whose state starts at `key`.
//   - With the `seed` attribute: key = SplitMix64 finalizer of (0x5EED000000000000 | the float
//     seed's 32 bits). The same seed gives the same tensor on every run, session and machine.
//   - Without a seed: key = (a value from std::random_device taken when the op is built) mixed
//     with a process-wide run counter, so every run draws fresh numbers.
// Uniform in [0, 1): the top 53 bits of a draw times 2^-53. RandomUniform: low + u * (high - low).
// RandomNormal: Box-Muller with draws 2i and 2i+1 for element i: mean + scale *
// sqrt(-2 ln(1 - u1)) * cos(2 pi u2). Bernoulli: element i is 1 when u(i) < p_i, else 0.
// Values are computed in double and rounded once to the output dtype.
// These cannot reproduce numpy's Mersenne Twister streams, so ONNX conformance cases that compare
// random outputs against numpy data (test_bernoulli*) cannot match by design.
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>

#include "graph/ops/indexing_internal.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph::indexing {
namespace {

inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
inline uint64_t Draw(uint64_t key, int64_t j) {
  return Mix64(key + static_cast<uint64_t>(j + 1) * 0x9E3779B97F4A7C15ull);
}
inline double Uniform01(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

std::atomic<uint64_t> g_run_counter{0};

// The key source of one op: fixed for a seed, else fresh per run.
class KeySource {
 public:
  explicit KeySource(const OpInit& init) {
    if (init.Has("seed")) {
      const float seed = init.GetFloat("seed", 0.0f);
      uint32_t bits;
      std::memcpy(&bits, &seed, sizeof(bits));
      seeded_ = true;
      base_ = Mix64(0x5EED000000000000ull | bits);
    } else {
      std::random_device rd;
      base_ = (static_cast<uint64_t>(rd()) << 32) ^ rd();
    }
  }
  uint64_t Key() const {
    if (seeded_) return base_;
    return Mix64(base_ ^ Mix64(g_run_counter.fetch_add(1, std::memory_order_relaxed) + 1));
  }

 private:
  bool seeded_ = false;
  uint64_t base_ = 0;
};

// Writes value v (rounded once) as element i of an output of some dtype; chosen at Prepare.
using ValueWriter = void (*)(void* out, int64_t i, double v);
template <typename T>
void WriteAs(void* out, int64_t i, double v) {
  static_cast<T*>(out)[i] = static_cast<T>(v);
}
void WriteHalf(void* out, int64_t i, double v) {
  static_cast<uint16_t*>(out)[i] = kernels::DoubleToHalfBits(v);
}
void WriteBFloat16(void* out, int64_t i, double v) {
  static_cast<uint16_t*>(out)[i] = kernels::DoubleToBFloat16Bits(v);
}
ValueWriter WriterFor(DType dt) {
  if (dt == DType::kFloat16) return &WriteHalf;
  if (dt == DType::kBFloat16) return &WriteBFloat16;
  ValueWriter w = nullptr;
  VisitNumericType(dt, [&](auto tag) { w = &WriteAs<decltype(tag)>; });
  return w;
}

using ValueReader = double (*)(const void* in, int64_t i);
template <typename T>
double ReadAs(const void* in, int64_t i) {
  return static_cast<double>(static_cast<const T*>(in)[i]);
}
double ReadHalf(const void* in, int64_t i) {
  return kernels::HalfBitsToDouble(static_cast<const uint16_t*>(in)[i]);
}
double ReadBFloat16(const void* in, int64_t i) {
  return static_cast<double>(kernels::BFloat16BitsToFloat(static_cast<const uint16_t*>(in)[i]));
}

const std::vector<DType>& FloatDTypes() {
  static const std::vector<DType> kTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                            DType::kBFloat16};
  return kTypes;
}

DType DTypeAttr(const OpInit& init, DType fallback, const std::vector<DType>& allowed) {
  if (!init.Has("dtype")) return fallback;
  const DType dt = static_cast<DType>(init.GetInt("dtype", 0));
  for (DType a : allowed) {
    if (a == dt) return dt;
  }
  init.Unsupported("dtype " + DTypeName(dt) + " is not supported for this random op");
}

// ---- RandomUniform / RandomNormal (shape attribute) and the *Like variants (input's shape) ----
class RandomOp : public Op {
 public:
  RandomOp(const OpInit& init, bool normal, bool like)
      : keys_(std::make_shared<const KeySource>(init)), normal_(normal), like_(like) {
    dtype_ = like ? DTypeAttr(init, DType::kUndefined, FloatDTypes())
                  : DTypeAttr(init, DType::kFloat32, FloatDTypes());
    if (normal) {
      a_ = init.GetFloat("mean", 0.0f);
      b_ = init.GetFloat("scale", 1.0f);
    } else {
      a_ = init.GetFloat("low", 0.0f);
      b_ = init.GetFloat("high", 1.0f);
    }
    if (!like) {
      if (!init.Has("shape")) init.Fail("required attribute 'shape' is missing");
      shape_ = init.GetInts("shape");
      for (int64_t d : shape_) {
        if (d < 0) init.Fail("shape " + IntsToString(shape_) + " has a negative dimension");
      }
    }
  }
  bool deterministic() const override { return false; }
  void InferTypes(TypeContext& ctx) const override {
    DType out = dtype_;
    if (like_) {
      ctx.RequireInput(0);
      if (out == DType::kUndefined) {
        out = ctx.input_dtype(0);
        bool ok = false;
        for (DType d : FloatDTypes()) ok |= d == out;
        if (!ok) {
          ctx.Unsupported("the output dtype defaults to the input's " + DTypeName(out) +
                          ", which is not a float type; set the dtype attribute");
        }
      }
    }
    ctx.set_output_dtype(0, out);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims dims = like_ ? ctx.input_dims(0) : Dims(shape_.begin(), shape_.end());
    const DType out = dtype_ != DType::kUndefined ? dtype_ : ctx.input_dtype(0);
    ctx.set_output(0, out, dims);
    const int64_t n = CheckedNumElements(dims);
    const ValueWriter write = WriterFor(out);
    const double a = a_, b = b_;
    const bool normal = normal_;
    const std::shared_ptr<const KeySource> keys = keys_;
    return [=](RunContext& ctx) {
      const uint64_t key = keys->Key();
      void* y = ctx.output(0).raw_data();
      for (int64_t i = 0; i < n; ++i) {
        double v;
        if (normal) {
          const double u1 = Uniform01(Draw(key, 2 * i)), u2 = Uniform01(Draw(key, 2 * i + 1));
          v = a + b * std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * M_PI * u2);
        } else {
          v = a + Uniform01(Draw(key, i)) * (b - a);
        }
        write(y, i, v);
      }
    };
  }

 private:
  std::shared_ptr<const KeySource> keys_;
  bool normal_, like_;
  DType dtype_ = DType::kUndefined;
  double a_ = 0, b_ = 1;
  std::vector<int64_t> shape_;
};

class RandomUniformOp : public RandomOp {
 public:
  explicit RandomUniformOp(const OpInit& init) : RandomOp(init, false, false) {}
};
class RandomNormalOp : public RandomOp {
 public:
  explicit RandomNormalOp(const OpInit& init) : RandomOp(init, true, false) {}
};
class RandomUniformLikeOp : public RandomOp {
 public:
  explicit RandomUniformLikeOp(const OpInit& init) : RandomOp(init, false, true) {}
};
class RandomNormalLikeOp : public RandomOp {
 public:
  explicit RandomNormalLikeOp(const OpInit& init) : RandomOp(init, true, true) {}
};

// ---- Bernoulli: input probabilities p (float types), output 1 with probability p, else 0 ----
const std::vector<DType>& BernoulliOutDTypes() {
  static const std::vector<DType> kTypes = {
      DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
      DType::kUInt8,   DType::kInt16,   DType::kUInt16,  DType::kInt32,    DType::kUInt32,
      DType::kInt64,   DType::kUInt64,  DType::kBool};
  return kTypes;
}

class BernoulliOp : public Op {
 public:
  explicit BernoulliOp(const OpInit& init)
      : keys_(std::make_shared<const KeySource>(init)), dtype_(DTypeAttr(init, DType::kUndefined, BernoulliOutDTypes())) {}
  bool deterministic() const override { return false; }
  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, FloatDTypes());
    ctx.set_output_dtype(0, dtype_ == DType::kUndefined ? ctx.input_dtype(0) : dtype_);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& dims = ctx.input_dims(0);
    const DType in = ctx.input_dtype(0);
    const DType out = dtype_ == DType::kUndefined ? in : dtype_;
    ctx.set_output(0, out, dims);
    const int64_t n = CheckedNumElements(dims);
    const ValueWriter write = WriterFor(out);
    const ValueReader read = in == DType::kFloat32   ? &ReadAs<float>
                             : in == DType::kFloat64 ? &ReadAs<double>
                             : in == DType::kFloat16 ? &ReadHalf
                                                     : &ReadBFloat16;
    const std::shared_ptr<const KeySource> keys = keys_;
    return [=](RunContext& ctx) {
      const uint64_t key = keys->Key();
      const void* p = ctx.input(0).raw_data();
      void* y = ctx.output(0).raw_data();
      for (int64_t i = 0; i < n; ++i) write(y, i, Uniform01(Draw(key, i)) < read(p, i) ? 1.0 : 0.0);
    };
  }

 private:
  std::shared_ptr<const KeySource> keys_;
  DType dtype_;
};

}  // namespace

void RegisterIndexingRandomOps(OpRegistry& registry) {
  RegisterVersions<BernoulliOp>(registry, "Bernoulli", {15, 22});
  RegisterVersions<RandomUniformOp>(registry, "RandomUniform", {1, 22});
  RegisterVersions<RandomNormalOp>(registry, "RandomNormal", {1, 22});
  RegisterVersions<RandomUniformLikeOp>(registry, "RandomUniformLike", {1, 22});
  RegisterVersions<RandomNormalLikeOp>(registry, "RandomNormalLike", {1, 22});
}

}  // namespace simplecpp::graph::indexing
