// Loads a model, runs it on the generated inputs (inputs.mjs) and times it: the steps the page
// takes, shared with the browser test so that node runs the very same code on the same inputs.
import {makeFeeds} from './inputs.mjs';

const now = () => performance.now();

function median(values) {
  const s = values.slice().sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

// A result tensor as plain data that survives structured cloning and JSON-like transfer (the test
// reads it out of the page): numbers stay numbers (float32 values convert exactly), 64-bit
// integers become decimal strings.
function plainTensor(t) {
  const data = Array.from(t.data, (x) => (typeof x === 'bigint' ? x.toString() : x));
  return {dims: t.dims.slice(), dtype: t.dtype, data};
}

/**
 * Runs the ONNX model `bytes` with the SimpleCpp instance `sc`: one first run, then `repeats`
 * timed runs. Returns {inputs: {name: {dims, dtype}}, outputs: {name: {dims, dtype, data}},
 * timings: {loadMs (loadModel + createSession), firstRunMs, medianRunMs, runs}}.
 */
export function runModel(sc, bytes, {repeats = 5} = {}) {
  const t0 = now();
  const model = sc.loadModel(bytes);
  let session;
  try {
    session = model.createSession();
    const loadMs = now() - t0;
    const feeds = makeFeeds(model.inputs);
    const t1 = now();
    const out = session.run(feeds);
    const firstRunMs = now() - t1;
    const times = [];
    for (let i = 0; i < repeats; ++i) {
      const t = now();
      session.run(feeds);
      times.push(now() - t);
    }
    const inputs = {};
    for (const [name, f] of Object.entries(feeds)) inputs[name] = {dims: f.dims, dtype: f.dtype};
    const outputs = {};
    for (const [name, t] of Object.entries(out)) outputs[name] = plainTensor(t);
    return {
      inputs,
      outputs,
      timings: {loadMs, firstRunMs, medianRunMs: times.length ? median(times) : firstRunMs, runs: repeats},
    };
  } finally {
    if (session) session.dispose();
    model.dispose();
  }
}
