// The optimizer ops of ai.onnx.preview.training (version 1): Adagrad, Momentum, Adam. Each
// updates n tensors at once: inputs R (learning rate, scalar), T (update count, int64 scalar),
// then n tensors of each group below; outputs n tensors of each output group. Tensor i of every
// group must have the same shape. Types: float32 or float64 (R may differ from the tensors).
//
//   Adagrad  in X, G, H     out X_new, H_new
//     r = R / (1 + T * decay_factor); g = norm_coefficient * X + G; H_new = H + g * g;
//     X_new = X - r * g / (sqrt(H_new) + epsilon)
//   Momentum in X, G, V     out X_new, V_new
//     g = norm_coefficient * X + G; b = T > 0 ? beta : 1; V_new = alpha * V + b * g;
//     standard: X_new = X - R * V_new;  nesterov: X_new = X - R * (g + alpha * V_new)
//   Adam     in X, G, V, H  out X_new, V_new, H_new
//     g = norm_coefficient * X + G; V_new = alpha * V + (1 - alpha) * g;
//     H_new = beta * H + (1 - beta) * g * g;
//     r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R;
//     X_new = (1 - norm_coefficient_post) * (X - r * V_new / (sqrt(H_new) + epsilon))
// The per-run scalars (r, b) are computed in float64; elementwise math is in the tensors' type
// with the attributes rounded to it (as ONNX's numpy reference does).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/registry.h"

namespace simplecpp::graph {
namespace {

enum class Optimizer { kAdagrad, kMomentum, kAdam };

struct OptimizerAttrs {
  Optimizer kind;
  double decay_factor = 0.0, epsilon = 1e-6, norm_coefficient = 0.0, norm_coefficient_post = 0.0;
  double alpha = 0.0, beta = 0.0;
  bool nesterov = false;
};

// Number of tensor input / output groups per optimizer.
int InGroups(Optimizer k) { return k == Optimizer::kAdam ? 4 : 3; }
int OutGroups(Optimizer k) { return k == Optimizer::kAdam ? 3 : 2; }

template <typename T>
void UpdateOne(const OptimizerAttrs& a, double r_scalar, int64_t t, const T* x, const T* g,
               const T* s1, const T* s2, T* x_new, T* o1, T* o2, int64_t n) {
  const T norm = static_cast<T>(a.norm_coefficient), eps = static_cast<T>(a.epsilon);
  switch (a.kind) {
    case Optimizer::kAdagrad: {
      // s1 = H; o1 = H_new.
      const T r = static_cast<T>(r_scalar / (1.0 + static_cast<double>(t) * a.decay_factor));
      for (int64_t i = 0; i < n; ++i) {
        const T gr = norm * x[i] + g[i];
        const T h = s1[i] + gr * gr;
        if (o1) o1[i] = h;
        if (x_new) x_new[i] = x[i] - r * gr / (std::sqrt(h) + eps);
      }
      break;
    }
    case Optimizer::kMomentum: {
      // s1 = V; o1 = V_new.
      const T alpha = static_cast<T>(a.alpha);
      const T beta = t > 0 ? static_cast<T>(a.beta) : T(1);
      const T r = static_cast<T>(r_scalar);
      for (int64_t i = 0; i < n; ++i) {
        const T gr = norm * x[i] + g[i];
        const T v = alpha * s1[i] + beta * gr;
        if (o1) o1[i] = v;
        if (x_new) x_new[i] = a.nesterov ? x[i] - r * (gr + alpha * v) : x[i] - r * v;
      }
      break;
    }
    case Optimizer::kAdam: {
      // s1 = V, s2 = H; o1 = V_new, o2 = H_new.
      const T alpha = static_cast<T>(a.alpha), beta = static_cast<T>(a.beta);
      const T one = T(1);
      double rd = r_scalar;
      if (t > 0) {
        const double td = static_cast<double>(t);
        rd = r_scalar * std::sqrt(1.0 - std::pow(a.beta, td)) / (1.0 - std::pow(a.alpha, td));
      }
      const T r = static_cast<T>(rd);
      const T post = static_cast<T>(1.0 - a.norm_coefficient_post);
      for (int64_t i = 0; i < n; ++i) {
        const T gr = norm * x[i] + g[i];
        const T v = alpha * s1[i] + (one - alpha) * gr;
        const T h = beta * s2[i] + (one - beta) * gr * gr;
        if (o1) o1[i] = v;
        if (o2) o2[i] = h;
        if (x_new) x_new[i] = post * (x[i] - r * v / (std::sqrt(h) + eps));
      }
      break;
    }
  }
}

// Updates all n tensors of a node (inputs from index 2, grouped; outputs grouped likewise).
template <typename T>
void RunAll(RunContext& rc, const OptimizerAttrs& a, double r, int64_t t, int64_t n, int groups,
            const std::vector<int64_t>& sizes, const std::vector<bool>& has_out) {
  const int out_groups = static_cast<int>(has_out.size() / n);
  auto in = [&](int gi, int64_t i) -> const T* {
    return gi < groups ? rc.input(static_cast<int>(2 + gi * n + i)).template data<T>() : nullptr;
  };
  auto out = [&](int go, int64_t i) -> T* {
    const int64_t o = go * n + i;
    if (go >= out_groups || !has_out[o]) return nullptr;
    return rc.output(static_cast<int>(o)).template data<T>();
  };
  for (int64_t i = 0; i < n; ++i) {
    UpdateOne<T>(a, r, t, in(0, i), in(1, i), in(2, i), in(3, i), out(0, i), out(1, i), out(2, i),
                 sizes[i]);
  }
}

class OptimizerOp final : public Op {
 public:
  OptimizerOp(const OpInit& init, Optimizer kind) {
    a_.kind = kind;
    const int groups = InGroups(kind);
    const int tensors = init.num_inputs() - 2;
    if (tensors < groups || tensors % groups != 0) {
      init.Fail("takes R, T and " + std::to_string(groups) +
                " groups of n >= 1 tensors, got " + std::to_string(init.num_inputs()) + " inputs");
    }
    n_ = tensors / groups;
    if (init.num_outputs() > OutGroups(kind) * n_) {
      init.Fail("has " + std::to_string(OutGroups(kind) * n_) + " outputs for " +
                std::to_string(n_) + " tensors, got " + std::to_string(init.num_outputs()));
    }
    switch (kind) {
      case Optimizer::kAdagrad:
        a_.decay_factor = init.GetFloat("decay_factor", 0.0f);
        a_.epsilon = init.GetFloat("epsilon", 1e-6f);
        a_.norm_coefficient = init.GetFloat("norm_coefficient", 0.0f);
        break;
      case Optimizer::kMomentum: {
        for (const char* name : {"alpha", "beta", "mode", "norm_coefficient"}) {
          if (!init.Has(name)) init.Fail(std::string("attribute '") + name + "' is required");
        }
        a_.alpha = init.GetFloat("alpha", 0.0f);
        a_.beta = init.GetFloat("beta", 0.0f);
        a_.norm_coefficient = init.GetFloat("norm_coefficient", 0.0f);
        const std::string mode = init.GetString("mode", "");
        if (mode != "standard" && mode != "nesterov") {
          init.Fail("mode must be 'standard' or 'nesterov', got '" + mode + "'");
        }
        a_.nesterov = mode == "nesterov";
        break;
      }
      case Optimizer::kAdam:
        a_.alpha = init.GetFloat("alpha", 0.9f);
        a_.beta = init.GetFloat("beta", 0.999f);
        a_.epsilon = init.GetFloat("epsilon", 1e-6f);
        a_.norm_coefficient = init.GetFloat("norm_coefficient", 0.0f);
        a_.norm_coefficient_post = init.GetFloat("norm_coefficient_post", 0.0f);
        break;
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64});
    ctx.RequireDType(1, {DType::kInt64});
    ctx.RequireDType(2, {DType::kFloat32, DType::kFloat64});
    const int tensors = InGroups(a_.kind) * static_cast<int>(n_);
    for (int i = 3; i < 2 + tensors; ++i) ctx.RequireSameDType(2, i);
    for (int o = 0; o < ctx.num_outputs(); ++o) {
      if (ctx.has_output(o)) ctx.set_output_dtype(o, ctx.input_dtype(2));
    }
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    if (CheckedNumElements(ctx.input_dims(0)) != 1)
      ctx.Fail("R must be a scalar, got shape " + DimsToString(ctx.input_dims(0)));
    if (CheckedNumElements(ctx.input_dims(1)) != 1)
      ctx.Fail("T must be a scalar, got shape " + DimsToString(ctx.input_dims(1)));
    const int groups = InGroups(a_.kind), out_groups = OutGroups(a_.kind);
    const int64_t n = n_;
    std::vector<int64_t> sizes(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const Dims& xd = ctx.input_dims(static_cast<int>(2 + i));
      for (int gi = 1; gi < groups; ++gi) {
        const int idx = static_cast<int>(2 + gi * n + i);
        if (ctx.input_dims(idx) != xd) {
          ctx.Fail("input " + std::to_string(idx) + " has shape " +
                   DimsToString(ctx.input_dims(idx)) + " but the tensor it updates (input " +
                   std::to_string(2 + i) + ") is " + DimsToString(xd));
        }
      }
      sizes[i] = CheckedNumElements(xd);
      for (int go = 0; go < out_groups; ++go) {
        const int o = static_cast<int>(go * n + i);
        if (ctx.has_output(o)) ctx.set_output(o, ctx.input_dtype(2), xd);
      }
    }
    const bool f64 = ctx.input_dtype(2) == DType::kFloat64;
    const bool r64 = ctx.input_dtype(0) == DType::kFloat64;
    const OptimizerAttrs a = a_;
    std::vector<bool> has_out(static_cast<size_t>(out_groups * n));
    for (int64_t o = 0; o < out_groups * n; ++o) has_out[o] = ctx.has_output(static_cast<int>(o));
    auto fn = f64 ? RunAll<double> : RunAll<float>;
    return [a, n, sizes, r64, groups, has_out, fn](RunContext& rc) {
      const double r = r64 ? rc.input(0).data<double>()[0]
                           : static_cast<double>(rc.input(0).data<float>()[0]);
      const int64_t t = rc.input(1).data<int64_t>()[0];
      fn(rc, a, r, t, n, groups, sizes, has_out);
    };
  }

 private:
  OptimizerAttrs a_;
  int64_t n_ = 1;
};

template <Optimizer kKind>
OpFactory MakeOptimizerFactory() {
  return [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<OptimizerOp>(init, kKind);
  };
}

}  // namespace

void RegisterTrainingOps(OpRegistry& registry) {
  const std::string d = "ai.onnx.preview.training";
  registry.Register(d, "Adagrad", 1, MakeOptimizerFactory<Optimizer::kAdagrad>());
  registry.Register(d, "Momentum", 1, MakeOptimizerFactory<Optimizer::kMomentum>());
  registry.Register(d, "Adam", 1, MakeOptimizerFactory<Optimizer::kAdam>());
}

}  // namespace simplecpp::graph
