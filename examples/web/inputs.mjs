// Deterministic model inputs, shared by the page (app.mjs) and the browser test under node, so that
// both feed exactly the same values. One 32-bit LCG (Numerical Recipes constants 1664525,
// 1013904223) per input, seeded 1, 2, ... in the model's input order; integer arithmetic only, so
// every JS engine produces the same stream. Per dtype:
//   float32/float64: (top 24 bits of the state) / 2^24 * 2 - 1, a value in [-1, 1) that float32
//                    holds exactly;
//   integer types:   (state >>> 28) % 10, i.e. 0..9 (small enough to be valid indices/ids);
//   bool:            the state's top bit.
// Unknown (symbolic) dims are 1. Other dtypes (float16, bfloat16, float8, 4-bit, complex, string)
// have no generator: makeFeeds throws and the page says so.
// No import of the package: the page and the test each load it from their own place.

function lcg(seed) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state;
  };
}

// The typed array of each dtype with a generator (the package's DTYPES agree).
const ARRAYS = {
  float32: Float32Array, float64: Float64Array, bool: Uint8Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array,
};

/** n deterministic values of dtype `name` from seed, as that dtype's typed array. */
export function generateData(name, n, seed) {
  const Array_ = ARRAYS[name];
  if (!Array_) throw new Error(`no input generator for dtype ${name}`);
  const next = lcg(seed);
  if (name === 'float32' || name === 'float64') {
    return Array_.from({length: n}, () => (next() >>> 8) / 2 ** 24 * 2 - 1);
  }
  if (name === 'bool') return Uint8Array.from({length: n}, () => next() >>> 31);
  const ints = Array.from({length: n}, () => (next() >>> 28) % 10);
  const big = Array_ === BigInt64Array || Array_ === BigUint64Array;
  return Array_.from(ints, big ? (x) => BigInt(x) : (x) => x);
}

/** Feeds for model.inputs ({name, dtype, dims}): {name: {data, dims, dtype}}. */
export function makeFeeds(inputs) {
  const feeds = {};
  inputs.forEach((v, k) => {
    if (v.sequence || v.optional) throw new Error(`input ${v.name}: sequences and optionals have no generator`);
    const dims = (v.dims || []).map((d) => (d < 0 ? 1 : d));
    const n = dims.reduce((a, b) => a * b, 1);
    feeds[v.name] = {data: generateData(v.dtype, n, k + 1), dims, dtype: v.dtype};
  });
  return feeds;
}
