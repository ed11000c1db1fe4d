// Signal ops: DFT (17, 20), STFT (17), HannWindow / HammingWindow / BlackmanWindow (17).
//
// DFT: input [..., L, ..., 1 | 2] with the last dim holding real (1) or (re, im) (2); the transform
// runs along `axis` (an attribute before 20, default 1; an optional scalar input from 20, default
// -2), whose length is zero-padded / truncated to dft_length (optional input, default L). Output
// has the same dims with the last dim 2 and, along axis, dft_length values, or dft_length / 2 + 1
// with onesided = 1 (the leading half). inverse = 1 takes the inverse transform (scaled by
// 1 / dft_length); with onesided = 1 too it is the complex-to-real inverse (irfft): the input
// holds the leading bins of a Hermitian spectrum and the output is real (last dim 1).
// STFT: signal [batch, signal_length, 1 | 2], frame_step, optional window [frame_length] and
// frame_length (default: the window's length, else signal_length; window default: all ones). Output [batch, frames, bins, 2], frames = (signal_length - frame_length) /
// frame_step + 1, bins = frame_length / 2 + 1 when onesided (the default; real signals only), else
// frame_length. Frame f is signal[f * frame_step + n] * window[n], n < frame_length.
// Windows: size (scalar), periodic (default 1: denominator size, else size - 1) and
// output_datatype (default float32); computed in double at Prepare, stored once.
//
// All transforms run in double (kernels/nn/signal.h) with one rounding per output element; each
// signal is an independent task, so results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/ops/families.h"
#include "graph/registry.h"
#include "kernels/float16/float16.h"
#include "kernels/nn/signal.h"

namespace simplecpp::graph {
namespace {

// Element conversions to / from double, chosen once at Prepare.
using ToDoubleFn = void (*)(const void* in, int64_t offset, int64_t count, int64_t stride,
                            double* out, int64_t out_stride);
using FromDoubleFn = void (*)(const double* in, void* out, int64_t offset, int64_t count);

template <typename T>
void ToDouble(const void* in, int64_t offset, int64_t count, int64_t stride, double* out,
              int64_t out_stride) {
  const T* p = static_cast<const T*>(in) + offset;
  for (int64_t i = 0; i < count; ++i) out[i * out_stride] = static_cast<double>(p[i * stride]);
}
template <kernels::Float16Kind kKind>
void ToDouble16(const void* in, int64_t offset, int64_t count, int64_t stride, double* out,
                int64_t out_stride) {
  const uint16_t* p = static_cast<const uint16_t*>(in) + offset;
  for (int64_t i = 0; i < count; ++i) {
    out[i * out_stride] = static_cast<double>(kernels::Widen16One(kKind, p[i * stride]));
  }
}
template <typename T>
void FromDouble(const double* in, void* out, int64_t offset, int64_t count) {
  T* p = static_cast<T*>(out) + offset;
  for (int64_t i = 0; i < count; ++i) p[i] = static_cast<T>(in[i]);
}
template <kernels::Float16Kind kKind>
void FromDouble16(const double* in, void* out, int64_t offset, int64_t count) {
  uint16_t* p = static_cast<uint16_t*>(out) + offset;
  for (int64_t i = 0; i < count; ++i) {
    p[i] = kKind == kernels::Float16Kind::kHalf ? kernels::DoubleToHalfBits(in[i])
                                                : kernels::DoubleToBFloat16Bits(in[i]);
  }
}

struct FloatConverters {
  ToDoubleFn to = nullptr;
  FromDoubleFn from = nullptr;
};

FloatConverters ConvertersFor(DType dt) {
  switch (dt) {
    case DType::kFloat32: return {ToDouble<float>, FromDouble<float>};
    case DType::kFloat64: return {ToDouble<double>, FromDouble<double>};
    case DType::kFloat16:
      return {ToDouble16<kernels::Float16Kind::kHalf>, FromDouble16<kernels::Float16Kind::kHalf>};
    case DType::kBFloat16:
      return {ToDouble16<kernels::Float16Kind::kBFloat16>,
              FromDouble16<kernels::Float16Kind::kBFloat16>};
    default: return {};
  }
}

const std::initializer_list<DType> kFloatTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                                  DType::kBFloat16};

// Reads a scalar (or one-element) int32/int64 input.
int64_t ScalarInt(PrepareContext& ctx, int i, const char* what) {
  const Tensor& t = ctx.RequireValue(i);
  if (t.num_elements() != 1) {
    ctx.Fail(std::string(what) + " must be a scalar, got shape " + DimsToString(t.dims()));
  }
  return TensorToInt64s(t)[0];
}

// Signals are processed in fixed groups of kSignalsPerTask (boundaries depend on the sizes only);
// every signal has its own slice of one scratch buffer (`per_signal` doubles), so tasks never share
// memory.
constexpr int64_t kSignalsPerTask = 16;

// ------------------------------------------------------------------------------------------ DFT

class DftOp final : public Op {
 public:
  explicit DftOp(const OpInit& init)
      : axis_input_(init.opset() >= 20),
        axis_attr_(init.GetInt("axis", 1)),
        inverse_(init.GetInt("inverse", 0) != 0),
        onesided_(init.GetInt("onesided", 0) != 0) {
    if (axis_input_ && init.Has("axis")) {
      init.Fail("axis is an input from opset 20, not an attribute");
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, kFloatTypes);
    if (ctx.has_input(1)) ctx.RequireDType(1, {DType::kInt32, DType::kInt64});
    if (axis_input_ && ctx.has_input(2)) ctx.RequireDType(2, {DType::kInt64});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  std::vector<int> ValueInputs() const override {
    if (axis_input_) return {1, 2};
    return {1};
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(xd.size());
    if (r < 2) ctx.Fail("input must have rank >= 2 ([..., signal, 1 or 2])");
    const int64_t comp = xd[r - 1];
    if (comp != 1 && comp != 2) {
      ctx.Fail("the last dim must be 1 (real) or 2 (complex), got " + std::to_string(comp));
    }
    int64_t axis = axis_attr_;
    if (axis_input_) axis = ctx.has_input(2) ? ScalarInt(ctx, 2, "axis") : -2;
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r - 2) {
      ctx.Fail("axis " + std::to_string(axis_input_ && ctx.has_input(2) ? ScalarInt(ctx, 2, "axis")
                                                                        : axis_attr_) +
               " is out of range: it must name a signal dim in [-" + std::to_string(r) + ", -2] or [0, " +
               std::to_string(r - 2) + "]");
    }
    const int64_t n_in = xd[axis];
    // inverse + onesided is the complex-to-real inverse (numpy's irfft): the input holds the
    // leading n_in = length / 2 + 1 bins of a Hermitian spectrum, the output `length` real values
    // (last dim 1); length defaults to 2 * (n_in - 1).
    const bool c2r = inverse_ && onesided_;
    const int64_t length = ctx.has_input(1) ? ScalarInt(ctx, 1, "dft_length")
                                            : (c2r ? 2 * (n_in - 1) : n_in);
    if (length < 1) ctx.Fail("dft_length must be >= 1, got " + std::to_string(length));
    if (onesided_ && comp == 2 && !inverse_) {
      ctx.Fail("onesided = 1 needs a real input (last dim 1)");
    }
    const int64_t bins = c2r ? length : onesided_ ? length / 2 + 1 : length;
    const int64_t out_comp = c2r ? 1 : 2;
    Dims yd = xd;
    yd[axis] = bins;
    yd[r - 1] = out_comp;
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, yd);

    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= xd[i];
    for (int64_t i = axis + 1; i < r - 1; ++i) inner *= xd[i];
    const int64_t signals = outer * inner;
    const FloatConverters conv = ConvertersFor(dt);
    auto twiddle = std::make_shared<std::vector<double>>(static_cast<size_t>(2 * length));
    kernels::DftTwiddles(length, twiddle->data());
    const bool inverse = inverse_;
    // Input samples read: for c2r the bins 0..length/2 (the rest follows by symmetry).
    const int64_t used = std::min(n_in, c2r ? length / 2 + 1 : length);
    const int64_t in_len = c2r ? length : used;  // complex values handed to the transform
    // Per signal: input (2 * in_len) and output (2 * bins) doubles.
    const int64_t per_signal = 2 * in_len + 2 * bins;
    return [=](RunContext& rc) {
      if (signals == 0) return;
      const int64_t tasks = (signals + kSignalsPerTask - 1) / kSignalsPerTask;
      Tensor scratch = rc.Scratch(DType::kFloat64, {signals * per_signal});
      double* buf = scratch.data<double>();
      const void* x = rc.input(0).raw_data();
      void* y = rc.output(0).raw_data();
      rc.parallel().For(tasks, [&](int64_t tb, int64_t te) {
        for (int64_t task = tb; task < te; ++task) {
          const int64_t s_end = std::min(signals, (task + 1) * kSignalsPerTask);
          for (int64_t s = task * kSignalsPerTask; s < s_end; ++s) {
            double* in = buf + s * per_signal;
            double* out = in + 2 * in_len;
            const int64_t o = s / inner, i = s % inner;
            // Element (o, t, i, c) of x is at ((o * n_in + t) * inner + i) * comp + c.
            const int64_t base = (o * n_in * inner + i) * comp;
            conv.to(x, base, used, inner * comp, in, 2);
            if (comp == 2) {
              conv.to(x, base + 1, used, inner * comp, in + 1, 2);
            } else {
              for (int64_t t = 0; t < used; ++t) in[2 * t + 1] = 0.0;
            }
            if (c2r) {
              // Bins beyond the input are zero; the upper half mirrors the lower one conjugated;
              // bin 0 (and length / 2 for even length) must be real: their imaginary parts drop.
              for (int64_t k = used; k <= length / 2; ++k) in[2 * k] = in[2 * k + 1] = 0.0;
              in[1] = 0.0;
              if (length % 2 == 0) in[length + 1] = 0.0;
              for (int64_t k = length / 2 + 1; k < length; ++k) {
                in[2 * k] = in[2 * (length - k)];
                in[2 * k + 1] = -in[2 * (length - k) + 1];
              }
            }
            kernels::DftF64(in, in_len, length, bins, inverse, twiddle->data(), out);
            if (c2r) {
              for (int64_t k = 0; k < bins; ++k) {
                conv.from(out + 2 * k, y, (o * bins + k) * inner + i, 1);
              }
            } else {
              for (int64_t k = 0; k < bins; ++k) {
                conv.from(out + 2 * k, y, ((o * bins + k) * inner + i) * 2, 2);
              }
            }
          }
        }
      });
    };
  }

 private:
  bool axis_input_;  // axis is optional input 2 (opset 20 on), not the attribute axis_attr_
  int64_t axis_attr_;
  bool inverse_;
  bool onesided_;
};

// ----------------------------------------------------------------------------------------- STFT

class StftOp final : public Op {
 public:
  explicit StftOp(const OpInit& init) : onesided_(init.GetInt("onesided", 1) != 0) {}

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, kFloatTypes);
    ctx.RequireDType(1, {DType::kInt32, DType::kInt64});
    if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
    if (ctx.has_input(3)) ctx.RequireDType(3, {DType::kInt32, DType::kInt64});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  std::vector<int> ValueInputs() const override { return {1, 3}; }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    if (xd.size() != 3 || (xd[2] != 1 && xd[2] != 2)) {
      ctx.Fail("signal must have shape [batch, signal_length, 1 or 2]");
    }
    const int64_t batch = xd[0], sig_len = xd[1], comp = xd[2];
    const int64_t step = ScalarInt(ctx, 1, "frame_step");
    if (step < 1) ctx.Fail("frame_step must be >= 1, got " + std::to_string(step));
    const bool has_window = ctx.has_input(2);
    int64_t frame_length = -1;
    if (has_window) {
      if (ctx.input_dims(2).size() != 1) ctx.Fail("window must be 1-D");
      frame_length = ctx.input_dims(2)[0];
    }
    if (ctx.has_input(3)) {
      const int64_t fl = ScalarInt(ctx, 3, "frame_length");
      if (has_window && fl != frame_length) {
        ctx.Fail("frame_length " + std::to_string(fl) + " differs from the window length " +
                 std::to_string(frame_length));
      }
      frame_length = fl;
    }
    if (frame_length < 0) frame_length = sig_len;  // neither given: one frame of the whole signal
    if (frame_length < 1 || frame_length > sig_len) {
      ctx.Fail("frame_length " + std::to_string(frame_length) + " must be in [1, signal_length = " +
               std::to_string(sig_len) + "]");
    }
    if (onesided_ && comp == 2) ctx.Fail("onesided = 1 needs a real signal (last dim 1)");
    const int64_t frames = (sig_len - frame_length) / step + 1;
    const int64_t bins = onesided_ ? frame_length / 2 + 1 : frame_length;
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, {batch, frames, bins, 2});
    const FloatConverters conv = ConvertersFor(dt);
    auto twiddle = std::make_shared<std::vector<double>>(static_cast<size_t>(2 * frame_length));
    kernels::DftTwiddles(frame_length, twiddle->data());
    const int64_t signals = batch * frames;
    // Per signal: windowed frame (2 * frame_length) and spectrum (2 * bins) doubles; plus the
    // window once at the front of the scratch buffer.
    const int64_t per_signal = 2 * frame_length + 2 * bins;
    return [=](RunContext& rc) {
      if (signals == 0) return;
      const int64_t tasks = (signals + kSignalsPerTask - 1) / kSignalsPerTask;
      Tensor scratch = rc.Scratch(DType::kFloat64, {frame_length + signals * per_signal});
      double* window = scratch.data<double>();
      double* buf = window + frame_length;
      if (has_window) {
        conv.to(rc.input(2).raw_data(), 0, frame_length, 1, window, 1);
      } else {
        std::fill(window, window + frame_length, 1.0);
      }
      const void* x = rc.input(0).raw_data();
      void* y = rc.output(0).raw_data();
      rc.parallel().For(tasks, [&](int64_t tb, int64_t te) {
        for (int64_t task = tb; task < te; ++task) {
          const int64_t s_end = std::min(signals, (task + 1) * kSignalsPerTask);
          for (int64_t s = task * kSignalsPerTask; s < s_end; ++s) {
            double* in = buf + s * per_signal;
            double* out = in + 2 * frame_length;
            const int64_t b = s / frames, f = s % frames;
            const int64_t base = (b * sig_len + f * step) * comp;
            conv.to(x, base, frame_length, comp, in, 2);
            if (comp == 2) {
              conv.to(x, base + 1, frame_length, comp, in + 1, 2);
            } else {
              for (int64_t t = 0; t < frame_length; ++t) in[2 * t + 1] = 0.0;
            }
            for (int64_t t = 0; t < frame_length; ++t) {
              in[2 * t] *= window[t];
              in[2 * t + 1] *= window[t];
            }
            kernels::DftF64(in, frame_length, frame_length, bins, false, twiddle->data(), out);
            conv.from(out, y, s * bins * 2, 2 * bins);
          }
        }
      });
    };
  }

 private:
  bool onesided_;
};

// -------------------------------------------------------------------------------------- Windows

enum class WindowKind { kHann, kHamming, kBlackman };

class WindowOp final : public Op {
 public:
  WindowOp(const OpInit& init, WindowKind kind)
      : kind_(kind), periodic_(init.GetInt("periodic", 1) != 0) {
    const int64_t odt = init.GetInt("output_datatype", 1);
    const DType dt = static_cast<DType>(odt);
    const bool ok = odt >= 1 && odt <= 26 && (IsFloatDType(dt) || IsIntegerDType(dt));
    if (!ok) init.Fail("output_datatype " + std::to_string(odt) + " is not a numeric type");
    out_dtype_ = dt;
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kInt32, DType::kInt64});
    ctx.set_output_dtype(0, out_dtype_);
  }

  std::vector<int> ValueInputs() const override { return {0}; }

  RunFn Prepare(PrepareContext& ctx) const override {
    const int64_t size = ScalarInt(ctx, 0, "size");
    if (size < 0) ctx.Fail("size must be >= 0, got " + std::to_string(size));
    ctx.set_output(0, out_dtype_, {size});
    // Computed once here; the run only copies the bytes.
    std::vector<double> w(static_cast<size_t>(size));
    const double denom = static_cast<double>(periodic_ ? size : size - 1);
    for (int64_t n = 0; n < size; ++n) {
      if (denom <= 0) {  // a symmetric window of size 1
        w[n] = 1.0;
        continue;
      }
      const double a = 2.0 * M_PI * static_cast<double>(n) / denom;
      switch (kind_) {
        case WindowKind::kHann: w[n] = 0.5 - 0.5 * std::cos(a); break;
        case WindowKind::kHamming: w[n] = 25.0 / 46.0 - 21.0 / 46.0 * std::cos(a); break;
        case WindowKind::kBlackman: w[n] = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2.0 * a); break;
      }
    }
    Tensor out(out_dtype_, {size});
    FromDoubleFn from = ConvertersFor(out_dtype_).from;
    if (from != nullptr) {
      from(w.data(), out.raw_data(), 0, size);
    } else {
      StoreIntegers(w, &out);
    }
    auto bytes = std::make_shared<Tensor>(std::move(out));
    return [bytes](RunContext& rc) {
      if (bytes->byte_size() > 0) std::memcpy(rc.output(0).raw_data(), bytes->raw_data(), bytes->byte_size());
    };
  }

 private:
  // Integer outputs truncate toward zero, as a cast does.
  static void StoreIntegers(const std::vector<double>& w, Tensor* out) {
    const int64_t n = static_cast<int64_t>(w.size());
    switch (out->dtype()) {
      case DType::kInt8: FromDouble<int8_t>(w.data(), out->raw_data(), 0, n); break;
      case DType::kUInt8: FromDouble<uint8_t>(w.data(), out->raw_data(), 0, n); break;
      case DType::kInt16: FromDouble<int16_t>(w.data(), out->raw_data(), 0, n); break;
      case DType::kUInt16: FromDouble<uint16_t>(w.data(), out->raw_data(), 0, n); break;
      case DType::kInt32: FromDouble<int32_t>(w.data(), out->raw_data(), 0, n); break;
      case DType::kUInt32: FromDouble<uint32_t>(w.data(), out->raw_data(), 0, n); break;
      case DType::kInt64: FromDouble<int64_t>(w.data(), out->raw_data(), 0, n); break;
      case DType::kUInt64: FromDouble<uint64_t>(w.data(), out->raw_data(), 0, n); break;
      default: break;
    }
  }

  WindowKind kind_;
  bool periodic_;
  DType out_dtype_ = DType::kFloat32;
};

template <WindowKind kKind>
OpFactory WindowFactory() {
  return [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<WindowOp>(init, kKind);
  };
}

}  // namespace

void RegisterSignalOps(OpRegistry& registry) {
  registry.Register("", "DFT", 17, MakeFactory<DftOp>());
  registry.Register("", "DFT", 20, MakeFactory<DftOp>());
  registry.Register("", "STFT", 17, MakeFactory<StftOp>());
  registry.Register("", "HannWindow", 17, WindowFactory<WindowKind::kHann>());
  registry.Register("", "HammingWindow", 17, WindowFactory<WindowKind::kHamming>());
  registry.Register("", "BlackmanWindow", 17, WindowFactory<WindowKind::kBlackman>());
}

}  // namespace simplecpp::graph
