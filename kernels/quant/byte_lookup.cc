// Byte table lookup (kernels/quant/byte_lookup.h). A plain loop: a 256-entry table has no SIMD form
// on most targets (x86 before AVX-512 VBMI, WebAssembly), and the loads from a 256-byte table that
// sits in L1 run at about one element per cycle, a small cost next to the float passes over
// memory the lookup replaces.
#include "kernels/quant/byte_lookup.h"

namespace simplecpp::kernels {

void LookupBytes(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint8_t a = table[x[i]], b = table[x[i + 1]], c = table[x[i + 2]], d = table[x[i + 3]];
    y[i] = a;
    y[i + 1] = b;
    y[i + 2] = c;
    y[i + 3] = d;
  }
  for (; i < n; ++i) y[i] = table[x[i]];
}

}  // namespace simplecpp::kernels
