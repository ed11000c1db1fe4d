// Ops that move bytes without converting values:
//   BitCast (26): reinterprets the bits of each element as the dtype `to` of the same bit width
//     (the buffer is copied unchanged; packed 4-/2-bit tensors keep their packing, so int4 <->
//     uint4 <-> float4e2m1 and int2 <-> uint2 work too). Strings are not allowed.
//   TensorScatter (24): the KV-cache update. past_cache and present_cache are
//     [batch, D1, ..., max_seq (at `axis`), ..., Dn]; update is the same but with seq_len <= max_seq
//     at `axis`. For every prefix p = (b, ...) of the dims before `axis` and s < seq_len:
//       present[p, pos, ...] = update[p, s, ...],  pos = write_indices[b] + s
//     (mode "circular": pos modulo max_seq). write_indices ([batch], int64) defaults to zeros.
//     In "linear" mode a write beyond max_seq (or a negative index) is a run-time error.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/registry.h"

namespace simplecpp::graph {
namespace {

// ---------------------------------------------------------------------------------------- BitCast

class BitCastOp final : public Op {
 public:
  explicit BitCastOp(const OpInit& init) {
    const int64_t to = init.RequireInt("to");
    if (to < 0 || to > INT32_MAX || !IsKnownDType(static_cast<int32_t>(to))) {
      init.Fail("'to' = " + std::to_string(to) + " is not a known data type");
    }
    to_ = static_cast<DType>(to);
    if (to_ == DType::kString) init.Fail("'to' may not be string");
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    const DType from = ctx.input_dtype(0);
    if (from == DType::kString || DTypeBits(from) == 0) {
      ctx.Unsupported("BitCast does not take " + DTypeName(from) + " input");
    }
    if (DTypeBits(from) != DTypeBits(to_)) {
      ctx.Fail("BitCast needs the same bit width: " + DTypeName(from) + " has " +
               std::to_string(DTypeBits(from)) + " bits, " + DTypeName(to_) + " has " +
               std::to_string(DTypeBits(to_)));
    }
    ctx.set_output_dtype(0, to_);
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output(0, to_, ctx.input_dims(0));
    return [](RunContext& rc) {
      const Tensor& x = rc.input(0);
      Tensor& y = rc.output(0);
      if (x.byte_size() > 0) std::memcpy(y.raw_data(), x.raw_data(), x.byte_size());
    };
  }

 private:
  DType to_ = DType::kUndefined;
};

// ---------------------------------------------------------------------------------- TensorScatter

class TensorScatterOp final : public Op {
 public:
  explicit TensorScatterOp(const OpInit& init) : axis_(init.GetInt("axis", -2)) {
    const std::string mode = init.GetString("mode", "linear");
    if (mode == "circular") {
      circular_ = true;
    } else if (mode != "linear") {
      init.Fail("mode must be 'linear' or 'circular', got '" + mode + "'");
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    ctx.RequireInput(1);
    ctx.RequireSameDType(0, 1);
    const DType dt = ctx.input_dtype(0);
    if (dt != DType::kString && DTypeSize(dt) == 0) {
      ctx.Unsupported("TensorScatter does not support dtype " + DTypeName(dt) + " yet");
    }
    if (ctx.has_input(2)) ctx.RequireDType(2, {DType::kInt64});
    ctx.set_output_dtype(0, dt);
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& pd = ctx.input_dims(0);
    const Dims& ud = ctx.input_dims(1);
    const int64_t r = static_cast<int64_t>(pd.size());
    if (r < 2) ctx.Fail("past_cache must have rank >= 2 ([batch, ..., max_sequence_length, ...])");
    const int64_t axis = NormalizeAxis(axis_, r, [&](const std::string& m) { ctx.Fail(m); });
    if (axis == 0) ctx.Fail("axis may not be the batch axis 0");
    if (ud.size() != pd.size()) ctx.Fail("update must have the rank of past_cache");
    for (int64_t i = 0; i < r; ++i) {
      if (i != axis && ud[i] != pd[i]) {
        ctx.Fail("update must match past_cache in every dim but axis " + std::to_string(axis));
      }
    }
    const int64_t max_seq = pd[axis];
    const int64_t seq = ud[axis];
    if (seq > max_seq) {
      ctx.Fail("update's sequence length " + std::to_string(seq) + " exceeds max_sequence_length " +
               std::to_string(max_seq));
    }
    const int64_t batch = pd[0];
    const bool has_indices = ctx.has_input(2);
    if (has_indices && ctx.input_dims(2) != Dims{batch}) {
      ctx.Fail("write_indices must have shape [batch] = " + DimsToString({batch}));
    }
    int64_t outer = 1;  // prefixes: product of dims [0, axis)
    for (int64_t i = 0; i < axis; ++i) outer *= pd[i];
    const int64_t per_batch = batch > 0 ? outer / batch : 0;  // prefixes per batch entry
    int64_t inner = 1;
    for (int64_t i = axis + 1; i < r; ++i) inner *= pd[i];
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, pd);
    const bool circular = circular_;
    if (dt == DType::kString) {
      return [=](RunContext& rc) {
        std::vector<std::string>& y = rc.output(0).strings();
        y = rc.input(0).strings();
        const std::vector<std::string>& u = rc.input(1).strings();
        Scatter(rc, has_indices, circular, outer, per_batch, max_seq, seq, inner,
                [&](int64_t dst, int64_t src, int64_t n) {
                  for (int64_t k = 0; k < n; ++k) y[dst + k] = u[src + k];
                });
      };
    }
    const size_t esize = DTypeSize(dt);
    return [=](RunContext& rc) {
      const Tensor& past = rc.input(0);
      Tensor& out = rc.output(0);
      if (past.byte_size() > 0) std::memcpy(out.raw_data(), past.raw_data(), past.byte_size());
      const uint8_t* u = static_cast<const uint8_t*>(rc.input(1).raw_data());
      uint8_t* y = static_cast<uint8_t*>(out.raw_data());
      Scatter(rc, has_indices, circular, outer, per_batch, max_seq, seq, inner,
              [&](int64_t dst, int64_t src, int64_t n) {
                std::memcpy(y + dst * esize, u + src * esize, static_cast<size_t>(n) * esize);
              });
    };
  }

 private:
  // Calls copy(dst_elem, src_elem, count) for every (prefix, s) row after checking the index.
  template <typename Copy>
  static void Scatter(RunContext& rc, bool has_indices, bool circular, int64_t outer,
                      int64_t per_batch, int64_t max_seq, int64_t seq, int64_t inner,
                      const Copy& copy) {
    const int64_t* wi = has_indices ? rc.input(2).data<int64_t>() : nullptr;
    if (seq == 0) return;  // nothing to write (max_seq may be 0 too)
    for (int64_t p = 0; p < outer; ++p) {
      const int64_t b = p / per_batch;
      const int64_t start = wi ? wi[b] : 0;
      if (!circular && (start < 0 || start > max_seq - seq)) {
        rc.Fail("write_indices[" + std::to_string(b) + "] = " + std::to_string(start) +
                " with sequence length " + std::to_string(seq) +
                " writes outside max_sequence_length " + std::to_string(max_seq) +
                " (linear mode)");
      }
      // Circular: reduce the start first so start + s cannot overflow.
      const int64_t base = circular ? ((start % max_seq) + max_seq) % max_seq : start;
      for (int64_t s = 0; s < seq; ++s) {
        int64_t pos = base + s;
        if (circular && pos >= max_seq) pos -= max_seq;
        copy((p * max_seq + pos) * inner, (p * seq + s) * inner, inner);
      }
    }
  }

  int64_t axis_;
  bool circular_ = false;
};

}  // namespace

void RegisterBitCastOps(OpRegistry& registry) {
  registry.Register("", "BitCast", 26, MakeFactory<BitCastOp>());
  registry.Register("", "TensorScatter", 24, MakeFactory<TensorScatterOp>());
}

}  // namespace simplecpp::graph
