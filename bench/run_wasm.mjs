// WebAssembly latency: simplecpp's JS package (simplecpp-wasm, built by the CMake target
// simplecpp_wasm) vs onnxruntime-web (wasm execution provider, 1 thread, SIMD) in the same node
// process, on the same model bytes and identical inputs. Side of bench/run_wasm.sh.
//
//   node run_wasm.mjs --package DIR [--repeat N] [--rounds R] LABEL=MODEL.onnx[@NAME=FILE.npy...] ...
//
// DIR holds simplecpp's index.mjs + simplecpp.mjs + simplecpp.wasm (e.g. build-wasm/js).
// Inputs: every model input gets deterministic data (float: uniform [-1, 1) from a fixed LCG,
// integers 0..9, bool 0/1; unknown dims = 1), or, for an input named after '@' in the model's
// argument, the array of that .npy file (real models: an image of the size they are used at);
// the same typed arrays are fed to both runtimes. Per
// model: one warm-up run each, then R rounds alternating the runtimes, each round N timed runs;
// a round's figure is the median of its N runs, the reported figure the median over rounds.
// Prints a markdown table (median ms, ratio ours/ORT-web, max |ours - ORT-web| over the outputs).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, takeOption } from './args.mjs';
import { halfToNumber, readNpy } from './npy.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, 'package.json'));

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
  int8: Int8Array, uint8: Uint8Array, bool: Uint8Array,
};

function generate(dtype, dims, seed) {
  const n = dims.reduce((a, b) => a * b, 1);
  const Array_ = ARRAYS[dtype];
  if (!Array_) throw new Error(`unsupported input dtype ${dtype}`);
  const data = new Array_(n);
  let s = (seed * 2654435761 + 1) >>> 0;
  for (let i = 0; i < n; ++i) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const unit = (s >>> 8) / 16777216;
    if (dtype === 'float32' || dtype === 'float64') data[i] = -1 + 2 * unit;
    else if (dtype === 'int64') data[i] = BigInt(Math.floor(unit * 10));
    else if (dtype === 'bool') data[i] = Math.floor(unit * 2);
    else data[i] = Math.floor(unit * 10);
  }
  return data;
}

async function timeRuns(repeat, run) {
  const times = [];
  for (let r = 0; r < repeat; ++r) {
    const t0 = process.hrtime.bigint();
    await run();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(times);
}

async function main() {
  const args = process.argv.slice(2);
  const pkg = takeOption(args, '--package', null);
  const repeat = Number(takeOption(args, '--repeat', '100'));
  const rounds = Number(takeOption(args, '--rounds', '5'));
  if (!pkg || args.length === 0) {
    console.error('usage: node run_wasm.mjs --package DIR [--repeat N] [--rounds R] ' +
                  'LABEL=MODEL.onnx[@NAME=FILE.npy...] ...');
    process.exit(2);
  }
  const { SimpleCpp } = await import(pathToFileURL(path.resolve(pkg, 'index.mjs')).href);
  const ort = require('onnxruntime-web');
  ort.env.wasm.numThreads = 1;   // no worker threads: one core, like our single-threaded module
  if ('simd' in ort.env.wasm) ort.env.wasm.simd = true;
  ort.env.wasm.proxy = false;

  const t0 = performance.now();
  const sc = await SimpleCpp.create();
  const oursInit = performance.now() - t0;

  console.log(`simplecpp-wasm: ${pkg} (init ${oursInit.toFixed(1)} ms); onnxruntime-web ${ort.env.versions?.web ?? ''}` +
              ` (wasm EP, numThreads 1); ${rounds} rounds x ${repeat} runs`);
  console.log('');
  console.log('| model | simplecpp-wasm median ms | ORT-web median ms | ratio (ours/ORT-web) | max abs diff |');
  console.log('|---|---|---|---|---|');
  for (const arg of args) {
    const [spec, ...inputSpecs] = arg.split('@');
    const eq = spec.indexOf('=');
    const label = spec.slice(0, eq);
    const file = spec.slice(eq + 1);
    const inputFiles = new Map(inputSpecs.map((s) => [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)]));
    const bytes = new Uint8Array(fs.readFileSync(file));

    const model = sc.loadModel(bytes);
    const session = model.createSession();
    const ortSession = await ort.InferenceSession.create(bytes, {
      executionProviders: ['wasm'], graphOptimizationLevel: 'all', executionMode: 'sequential',
    });
    const oursFeeds = {};
    const ortFeeds = {};
    model.inputs.forEach((input, i) => {
      if (inputFiles.has(input.name)) {
        const { type, dims, data } = readNpy(inputFiles.get(input.name));
        oursFeeds[input.name] = { data, dims, dtype: type };
        ortFeeds[input.name] = new ort.Tensor(type, data, dims);
        return;
      }
      const dims = (input.dims || [1]).map((d) => (d > 0 ? d : 1));
      const data = generate(input.dtype, dims, i + 1);
      oursFeeds[input.name] = { data, dims, dtype: input.dtype };
      ortFeeds[input.name] = new ort.Tensor(input.dtype, data, dims);
    });
    // Warm-up (and the outputs compared).
    const oursOut = session.run(oursFeeds);
    const ortOut = await ortSession.run(ortFeeds);
    let diff = 0;
    for (const name of Object.keys(ortOut)) {
      const a = oursOut[name].data;
      const b = ortOut[name].data;
      if (a.length !== b.length) { diff = NaN; break; }
      // float16 outputs are compared as the values their bits encode.
      const value = ortOut[name].type === 'float16' ? halfToNumber : Number;
      for (let i = 0; i < a.length; ++i) diff = Math.max(diff, Math.abs(value(a[i]) - value(b[i])));
    }
    const ours = [];
    const theirs = [];
    for (let r = 0; r < rounds; ++r) {
      ours.push(await timeRuns(repeat, () => session.run(oursFeeds)));
      theirs.push(await timeRuns(repeat, () => ortSession.run(ortFeeds)));
    }
    const mo = median(ours);
    const mt = median(theirs);
    console.log(`| ${label} | ${mo.toFixed(3)} | ${mt.toFixed(3)} | ${(mo / mt).toFixed(2)} | ` +
                `${Number.isNaN(diff) ? 'SIZE-MISMATCH' : diff.toExponential(2)} |`);
    session.dispose();
    model.dispose();
    await ortSession.release();
  }
}

main().catch((e) => { console.error(e.stack || e.message || e); process.exit(1); });
