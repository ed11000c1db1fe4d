// Batch structure of matmul-family products (graph/ops/batched_matmul.h).
#include "graph/ops/batched_matmul.h"

#include <algorithm>
#include <string>

namespace simplecpp::graph {

BatchedMatMulShape ResolveBatchedMatMul(const PrepareContext& ctx, const Dims& da, const Dims& db) {
  if (da.empty() || db.empty()) ctx.Fail("inputs must have rank >= 1 (scalars are not allowed)");
  BatchedMatMulShape s;
  const bool a_vec = da.size() == 1, b_vec = db.size() == 1;
  s.m = a_vec ? 1 : da[da.size() - 2];
  s.k = da.back();
  const int64_t kb = b_vec ? db[0] : db[db.size() - 2];
  s.n = b_vec ? 1 : db.back();
  if (s.k != kb) {
    ctx.Fail("inner dimensions differ: A " + DimsToString(da) + " has K = " + std::to_string(s.k) +
             ", B " + DimsToString(db) + " has K = " + std::to_string(kb));
  }
  const Dims ba(da.begin(), da.end() - (a_vec ? 1 : 2));
  const Dims bb(db.begin(), db.end() - (b_vec ? 1 : 2));
  const size_t nb = std::max(ba.size(), bb.size());
  Dims batch(nb);
  std::vector<int64_t> a_stride(nb, 0), b_stride(nb, 0);  // in matrices
  int64_t sa = 1, sb = 1;
  for (size_t i = nb; i-- > 0;) {
    const int64_t ia = static_cast<int64_t>(i) - static_cast<int64_t>(nb - ba.size());
    const int64_t ib = static_cast<int64_t>(i) - static_cast<int64_t>(nb - bb.size());
    const int64_t xa = ia >= 0 ? ba[ia] : 1;
    const int64_t xb = ib >= 0 ? bb[ib] : 1;
    if (xa != xb && xa != 1 && xb != 1) {
      ctx.Fail("batch dimensions of A " + DimsToString(da) + " and B " + DimsToString(db) +
               " do not broadcast");
    }
    batch[i] = xa == 1 ? xb : xa;
    a_stride[i] = xa == 1 ? 0 : sa;
    b_stride[i] = xb == 1 ? 0 : sb;
    sa *= xa;
    sb *= xb;
  }
  s.out_dims = batch;
  if (!a_vec) s.out_dims.push_back(s.m);
  if (!b_vec) s.out_dims.push_back(s.n);
  s.num_batches = CheckedNumElements(batch);
  s.b_batches = sb;
  auto offsets = std::make_shared<std::vector<std::pair<int64_t, int64_t>>>();
  offsets->reserve(static_cast<size_t>(s.num_batches));
  std::vector<int64_t> idx(nb, 0);
  for (int64_t t = 0; t < s.num_batches; ++t) {
    int64_t oa = 0, ob = 0;
    for (size_t i = 0; i < nb; ++i) {
      oa += idx[i] * a_stride[i];
      ob += idx[i] * b_stride[i];
    }
    offsets->emplace_back(oa, ob);
    for (size_t i = nb; i-- > 0;) {
      if (++idx[i] < batch[i]) break;
      idx[i] = 0;
    }
  }
  s.offsets = std::move(offsets);
  return s;
}

}  // namespace simplecpp::graph
