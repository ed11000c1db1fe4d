// simplecpp.fused QdqBinary (version 1), written by the quantized-pattern fusion pass (pattern 7
// of graph/passes/quant_fusion.h) for QuantizeLinear(op(DequantizeLinear(a), DequantizeLinear(b)))
// with per-tensor 8-bit parameters:
//
//   QdqBinary(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point)
//     attribute op: "Add", "Sub", "Mul" or "Div"; a, b uint8 / int8 (numpy broadcasting),
//     scales float32 and zero points of the data's dtype, one element each; y has y_zero_point's
//     dtype.
//
// Every element goes through the unfused graph's own float32 steps (each IEEE-rounded, no
// contraction): kernels::QdqBinary8 does them in registers, one pass per run; tails and short
// runs run the DequantizeLinear kernel (or its 256-entry table), the float32 binary op and the
// QuantizeLinear kernel on blocks that stay in L1. So the bytes are identical to the unfused
// graph's; what goes away is the float32 tensors between the nodes (3 bytes moved per element
// instead of about 27).
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/broadcast.h"
#include "graph/ops/quant/quant_ops_internal.h"
#include "graph/registry.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/quant/byte_lookup.h"
#include "kernels/quant/quantize.h"

namespace simplecpp::graph {
namespace quant_fused {
namespace {

using quant_ops::FirstScaleAsF32;
using quant_ops::FirstZeroPointAsI32;
using quant_ops::IsOneElement;
using quant_ops::ScalesAsF32;
using quant_ops::ZeroPointsAsI32;

// Elements per block: three float32 blocks of 1 KiB each stay in L1.
constexpr int64_t kBlock = 256;
// Stretches shorter than this are dequantized through the 256-entry table, one load per
// element, instead of a kernel call (a squeeze-and-excitation Mul's runs are a channel's few
// pixels).
constexpr int64_t kMinKernelRun = 32;

// The per-tensor parameters, and y's 8-bit range.
using QdqParams = kernels::QdqBinaryParams;

// The DequantizeLinear kernel's value for each of the 256 bit patterns (the same float32 values
// the kernel gives element by element).
using DequantTable = std::array<float, 256>;
void Dequantize(bool is_signed, float scale, int32_t zp, const uint8_t* src, int64_t n,
                float* out) {
  if (is_signed) {
    kernels::DequantizeI8ToF32(reinterpret_cast<const int8_t*>(src), n, &scale, 0, &zp, 0, out);
  } else {
    kernels::DequantizeU8ToF32(src, n, &scale, 0, &zp, 0, out);
  }
}
DequantTable MakeDequantTable(bool is_signed, float scale, int32_t zp) {
  uint8_t all[256];
  for (int v = 0; v < 256; ++v) all[v] = static_cast<uint8_t>(v);
  DequantTable table;
  Dequantize(is_signed, scale, zp, all, 256, table.data());
  return table;
}

// One operand: its bytes, signedness and parameters, and its DequantTable.
struct Operand {
  const uint8_t* q = nullptr;
  bool is_signed = false;
  float scale = 1.0f;
  int32_t zp = 0;
  const float* table = nullptr;

  Operand(const void* data, bool sign, float s, int32_t z, const DequantTable& t)
      : q(static_cast<const uint8_t*>(data)), is_signed(sign), scale(s), zp(z), table(t.data()) {}
  void Dequantize(const uint8_t* src, int64_t n, float* out) const {
    quant_fused::Dequantize(is_signed, scale, zp, src, n, out);
  }
  // out[j] = the dequantized element offset + j * step, j < n.
  void Fill(int64_t offset, int64_t step, int64_t n, float* out) const {
    if (step == 0) {
      std::fill(out, out + n, table[q[offset]]);
    } else if (n >= kMinKernelRun) {
      Dequantize(q + offset, n, out);
    } else {
      for (int64_t j = 0; j < n; ++j) out[j] = table[q[offset + j]];
    }
  }
};

// Runs from this length on go through kernels::QdqBinary8 (whole vectors in one pass).
constexpr int64_t kMinFusedRun = 32;
// Runs from this length on where one operand is a single element (a per-channel scale over a
// channel's pixels) go through a 256-entry table of the result per byte of the other operand,
// built by that same kernel: a byte lookup per element instead of the float steps.
constexpr int64_t kMinTableRun = 1024;

// Output elements gathered from consecutive runs into blocks: both operands dequantized, then the
// binary op and the quantization per block.
class BlockWriter {
 public:
  BlockWriter(const Operand& a, const Operand& b, kernels::BinaryOp op, const QdqParams& p,
              bool y_signed, void* y)
      : a_(a), b_(b), op_(op), p_(p), y_signed_(y_signed), y_(y) {
    fused_op_ = op == kernels::BinaryOp::kAdd   ? kernels::QdqBinaryOp::kAdd
                : op == kernels::BinaryOp::kSub ? kernels::QdqBinaryOp::kSub
                : op == kernels::BinaryOp::kMul ? kernels::QdqBinaryOp::kMul
                                                : kernels::QdqBinaryOp::kDiv;
  }
  ~BlockWriter() { Flush(); }

  // Output elements [o, o + n) from a's and b's elements in[0] + j * steps[0] (b: in[1], ...).
  // Runs of at least kMinFusedRun take the one-pass kernel for their whole vectors.
  void Add(int64_t o, const int64_t* in, const int64_t* steps, int64_t n) {
    if (n >= kMinTableRun && AddThroughTable(o, in, steps, n)) return;
    int64_t j = 0;
    if (n >= kMinFusedRun) {
      Flush();  // the pending block's outputs come before o
      const size_t yo = static_cast<size_t>(o);
      j = kernels::QdqBinary8(fused_op_, a_.is_signed, a_.q + in[0], steps[0], b_.is_signed,
                              b_.q + in[1], steps[1], p_, y_signed_,
                              static_cast<uint8_t*>(y_) + yo, n);
    }
    while (j < n) {
      if (count_ == kBlock || (count_ > 0 && o + j != start_ + count_)) Flush();
      if (count_ == 0) start_ = o + j;
      const int64_t m = std::min(kBlock - count_, n - j);
      a_.Fill(in[0] + j * steps[0], steps[0], m, fa_ + count_);
      b_.Fill(in[1] + j * steps[1], steps[1], m, fb_ + count_);
      count_ += m;
      j += m;
    }
  }

  // Runs [first, first + count) of n elements, run r's operands starting at r * a_run and
  // r * b_run, through one kernel call for their whole vectors. Returns the elements done per run.
  int64_t AddRuns(int64_t first, int64_t count, int64_t a_run, int64_t b_run, const int64_t* steps,
                  int64_t n) {
    Flush();  // nothing pending is written after these runs
    kernels::QdqBinaryRuns runs;
    runs.count = count;
    runs.a_run = a_run;
    runs.b_run = b_run;
    runs.out_run = n;
    return kernels::QdqBinary8Runs(fused_op_, a_.is_signed, a_.q + first * a_run, steps[0],
                                   b_.is_signed, b_.q + first * b_run, steps[1], p_, y_signed_,
                                   static_cast<uint8_t*>(y_) + first * n, n, runs);
  }

  // One operand the same element over the run, the other dense: the kernel's results for the
  // 256 bytes of the dense one, then a lookup. false (nothing written) where the kernel does not
  // take the parameters (it then leaves the 256 values to the caller's float steps).
  bool AddThroughTable(int64_t o, const int64_t* in, const int64_t* steps, int64_t n) {
    const bool a_dense = steps[0] == 1 && steps[1] == 0;
    const bool b_dense = steps[0] == 0 && steps[1] == 1;
    if (!a_dense && !b_dense) return false;
    uint8_t every[256], table[256];
    for (int v = 0; v < 256; ++v) every[v] = static_cast<uint8_t>(v);
    const uint8_t* a = a_dense ? every : a_.q + in[0];
    const uint8_t* b = b_dense ? every : b_.q + in[1];
    if (kernels::QdqBinary8(fused_op_, a_.is_signed, a, a_dense ? 1 : 0, b_.is_signed, b,
                            b_dense ? 1 : 0, p_, y_signed_, table, 256) != 256) {
      return false;
    }
    Flush();  // the pending block's outputs come before o
    const uint8_t* dense = a_dense ? a_.q + in[0] : b_.q + in[1];
    kernels::LookupBytes(table, dense, static_cast<uint8_t*>(y_) + o, n);
    return true;
  }

  void Flush() {
    if (count_ == 0) return;
    kernels::BinaryF32(op_, fa_, 1, fb_, 1, fy_, count_);
    if (y_signed_) {
      kernels::QuantizeF32ToI8(fy_, count_, &p_.y_scale, 0, &p_.y_zp, 0, p_.lo, p_.hi,
                               static_cast<int8_t*>(y_) + start_);
    } else {
      kernels::QuantizeF32ToU8(fy_, count_, &p_.y_scale, 0, &p_.y_zp, 0, p_.lo, p_.hi,
                               static_cast<uint8_t*>(y_) + start_);
    }
    count_ = 0;
  }

 private:
  const Operand& a_;
  const Operand& b_;
  kernels::BinaryOp op_;
  QdqParams p_;
  bool y_signed_;
  void* y_;
  kernels::QdqBinaryOp fused_op_;
  int64_t start_ = 0, count_ = 0;
  float fa_[kBlock], fb_[kBlock], fy_[kBlock];
};

class QdqBinaryOp final : public Op {
 public:
  explicit QdqBinaryOp(const OpInit& init) {
    const std::string op = init.GetString("op", "");
    if (op == "Add") {
      op_ = kernels::BinaryOp::kAdd;
    } else if (op == "Sub") {
      op_ = kernels::BinaryOp::kSub;
    } else if (op == "Mul") {
      op_ = kernels::BinaryOp::kMul;
    } else if (op == "Div") {
      op_ = kernels::BinaryOp::kDiv;
    } else {
      init.Fail("op must be Add, Sub, Mul or Div, got '" + op + "'");
    }
    if (init.num_inputs() != 8) {
      init.Fail("QdqBinary takes 8 inputs, got " + std::to_string(init.num_inputs()));
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    for (int i = 0; i < 8; ++i) ctx.RequireInput(i);
    ctx.RequireDType(0, {DType::kUInt8, DType::kInt8});
    ctx.RequireDType(3, {DType::kUInt8, DType::kInt8});
    ctx.RequireDType(7, {DType::kUInt8, DType::kInt8});
    for (int i : {1, 4, 6}) ctx.RequireDType(i, {DType::kFloat32});
    ctx.RequireSameDType(0, 2);
    ctx.RequireSameDType(3, 5);
    ctx.set_output_dtype(0, ctx.input_dtype(7));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    for (int i : {1, 2, 4, 5, 6, 7}) {
      if (!IsOneElement(ctx.input_dims(i))) {
        ctx.Fail("input " + std::to_string(i) + " must be one element (per tensor), got shape " +
                 DimsToString(ctx.input_dims(i)));
      }
    }
    Dims out_dims;
    std::string why;
    if (!BroadcastShape({ctx.input_dims(0), ctx.input_dims(3)}, &out_dims, &why)) ctx.Fail(why);
    const DType yt = ctx.input_dtype(7);
    ctx.set_output(0, yt, out_dims);
    const BroadcastPlan plan({ctx.input_dims(0), ctx.input_dims(3)}, out_dims);
    const bool a_signed = ctx.input_dtype(0) == DType::kInt8;
    const bool b_signed = ctx.input_dtype(3) == DType::kInt8;
    const bool y_signed = yt == DType::kInt8;
    const kernels::BinaryOp op = op_;
    // The fusion pass only writes constant parameters: read once here (a model naming the op
    // with computed parameters gets them read per run).
    bool constant = true;
    for (int i : {1, 2, 4, 5, 6, 7}) constant = constant && ctx.input_value(i) != nullptr;
    auto read = [y_signed](auto&& input) {
      QdqParams p;
      p.a_scale = FirstScaleAsF32(input(1));
      p.a_zp = FirstZeroPointAsI32(input(2));
      p.b_scale = FirstScaleAsF32(input(4));
      p.b_zp = FirstZeroPointAsI32(input(5));
      p.y_scale = FirstScaleAsF32(input(6));
      p.y_zp = FirstZeroPointAsI32(input(7));
      p.lo = y_signed ? -128 : 0;
      p.hi = y_signed ? 127 : 255;
      return p;
    };
    QdqParams fixed;
    // The operands' dequantization tables, made once with constant parameters.
    std::shared_ptr<const std::array<DequantTable, 2>> fixed_tables;
    if (constant) {
      fixed = read([&](int i) -> const Tensor& { return *ctx.input_value(i); });
      fixed_tables = std::make_shared<const std::array<DequantTable, 2>>(
          std::array<DequantTable, 2>{MakeDequantTable(a_signed, fixed.a_scale, fixed.a_zp),
                                      MakeDequantTable(b_signed, fixed.b_scale, fixed.b_zp)});
    }
    return [plan, a_signed, b_signed, y_signed, op, constant, fixed, fixed_tables,
            read](RunContext& rc) {
      const QdqParams p =
          constant ? fixed : read([&](int i) -> const Tensor& { return rc.input(i); });
      std::array<DequantTable, 2> run_tables;
      if (!constant) {
        run_tables[0] = MakeDequantTable(a_signed, p.a_scale, p.a_zp);
        run_tables[1] = MakeDequantTable(b_signed, p.b_scale, p.b_zp);
      }
      const std::array<DequantTable, 2>& tables = constant ? *fixed_tables : run_tables;
      const Operand a(rc.input(0).raw_data(), a_signed, p.a_scale, p.a_zp, tables[0]);
      const Operand b(rc.input(3).raw_data(), b_signed, p.b_scale, p.b_zp, tables[1]);
      void* y = rc.output(0).raw_data();
      const int64_t steps[2] = {plan.step(0), plan.step(1)};
      const bool many_runs_per_call = plan.runs_evenly_spaced() && plan.run_length() < kMinTableRun;
      if (plan.run_length() >= kBlock && !many_runs_per_call) {
        // Long runs: the plan's own tasks (pieces of runs), each run a whole number of blocks.
        plan.Run(rc.parallel(), [&](int64_t o, const int64_t* in, int64_t n) {
          BlockWriter(a, b, op, p, y_signed, y).Add(o, in, steps, n);
        });
        return;
      }
      // Short runs, or evenly spaced ones short of the table's length (a per-channel operand
      // over small images): blocks span runs; tasks are ranges of whole runs, fixed by the shapes.
      const int64_t runs = plan.num_runs();
      const int64_t run_length = std::max<int64_t>(1, plan.run_length());
      const int64_t per_task = std::max<int64_t>(1, BroadcastPlan::kTaskElements / run_length);
      const kernels::Parallel& par =
          kernels::ParallelForElements(rc.parallel(), 3 * plan.num_elements());
      par.For((runs + per_task - 1) / per_task, [&](int64_t t0, int64_t t1) {
        BlockWriter w(a, b, op, p, y_signed, y);
        const int64_t first = t0 * per_task, end = std::min(runs, t1 * per_task);
        // Evenly spaced runs (a per-channel operand): their whole vectors in one kernel call,
        // then each run's tail.
        int64_t done = 0;
        if (run_length >= kMinFusedRun && plan.runs_evenly_spaced()) {
          done = w.AddRuns(first, end - first, plan.run_stride(0), plan.run_stride(1), steps,
                           run_length);
        }
        plan.ForEachRun(first, end, [&](int64_t o, const int64_t* in, int64_t n) {
          if (done >= n) return;
          const int64_t rest[2] = {in[0] + done * steps[0], in[1] + done * steps[1]};
          w.Add(o + done, rest, steps, n - done);
        });
      });
    };
  }

 private:
  kernels::BinaryOp op_ = kernels::BinaryOp::kAdd;
};

}  // namespace

void RegisterQdqBinaryOp(OpRegistry& registry) {
  registry.Register("simplecpp.fused", "QdqBinary", 1, MakeFactory<QdqBinaryOp>());
}

}  // namespace quant_fused
}  // namespace simplecpp::graph
