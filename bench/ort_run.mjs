// ONNX Runtime (onnxruntime-node, CPU) side of bench/run_models.sh and bench/real_models.sh.
//
//   node ort_run.mjs inputs MODEL DIR
//       Writes one .npy per model input into DIR with deterministic data (float: uniform [-1, 1)
//       from a fixed LCG, float16 inputs the same values rounded to half; integers 0..9; bool 0/1;
//       symbolic dims = 1) and prints NAME=PATH per line, for `simplecpp run --input NAME=PATH`,
//       so both runtimes see identical inputs.
//   node ort_run.mjs run MODEL DIR --threads T --repeat N [--input NAME=FILE]... [--compare OURS_DIR]
//       [--opt LEVEL] [--save OUT_DIR] [--reference REF_DIR]
//       Reads the inputs back from DIR (input_K.npy, K the input's index), or, with --input, from
//       the named files (then DIR is unused: pass -), runs one warm-up and N timed runs (intra-op
//       threads T, sequential execution, graph optimizations LEVEL: all (default), extended,
//       basic or disabled) and prints "load_first_run X ms" (InferenceSession.create + the
//       warm-up run, timed inside node: no node start-up or module load) and, when N > 0,
//       "median X ms". With --compare, also prints the largest |ours - ort| per output
//       (OURS_DIR/output_K.npy from simplecpp run; float16 outputs are compared as the values
//       their bits encode) as "max_abs_diff NAME VALUE TYPE". --save writes ORT's outputs as
//       OUT_DIR/output_K.npy; --reference compares ORT's outputs (and, with --compare, ours) with
//       REF_DIR/output_K.npy (e.g. ORT's outputs of the float32 model, for a converted variant)
//       and prints "ref_abs_diff ort|ours NAME MAX MEAN" (largest and mean absolute difference).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { NPY, halfToNumber, numberToHalf, readNpy, writeNpy } from './npy.mjs';
import { option, options } from './args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, 'package.json'));
const ort = require('onnxruntime-node');

function generate(type, dims, seed) {
  const n = dims.reduce((a, b) => a * b, 1);
  const data = new NPY[type][1](n);
  let s = (seed * 2654435761 + 1) >>> 0;
  for (let i = 0; i < n; ++i) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const unit = (s >>> 8) / 16777216;
    if (type === 'float32' || type === 'float64') data[i] = -1 + 2 * unit;
    else if (type === 'float16') data[i] = numberToHalf(-1 + 2 * unit);
    else if (type === 'int64') data[i] = BigInt(Math.floor(unit * 10));
    else if (type === 'bool') data[i] = Math.floor(unit * 2);
    else data[i] = Math.floor(unit * 10);
  }
  return data;
}

async function main() {
  const [mode, model, dir, ...rest] = process.argv.slice(2);
  if (!mode || !model || !dir) {
    console.error('usage: node ort_run.mjs inputs MODEL DIR | run MODEL DIR --threads T --repeat N '
      + '[--input NAME=FILE]... [--compare DIR] [--opt LEVEL] [--save DIR] [--reference DIR]');
    process.exit(2);
  }
  const threads = Number(option(rest, '--threads', '1'));
  const tLoad = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: option(rest, '--opt', 'all'),
  });
  if (mode === 'inputs') {
    fs.mkdirSync(dir, { recursive: true });
    session.inputMetadata.forEach((meta, i) => {
      if (!meta.isTensor || !NPY[meta.type]) throw new Error(`input ${meta.name}: unsupported type ${meta.type}`);
      const dims = meta.shape.map((d) => (typeof d === 'number' && d > 0 ? d : 1));
      const file = path.join(dir, `input_${i}.npy`);
      writeNpy(file, meta.type, dims, generate(meta.type, dims, i + 1));
      console.log(`${meta.name}=${file}`);
    });
    return;
  }
  if (mode !== 'run') throw new Error(`unknown mode ${mode}`);
  const repeat = Number(option(rest, '--repeat', '20'));
  const named = new Map(options(rest, '--input').map((s) => {
    const eq = s.indexOf('=');
    if (eq <= 0) throw new Error(`--input ${s}: expected NAME=FILE`);
    return [s.slice(0, eq), s.slice(eq + 1)];
  }));
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    let file = path.join(dir, `input_${i}.npy`);
    if (named.size) {
      if (!named.has(name)) throw new Error(`no --input for model input ${name}`);
      file = named.get(name);
      named.delete(name);
    }
    const { type, dims, data } = readNpy(file);
    feeds[name] = new ort.Tensor(type, data, dims);
  });
  if (named.size) throw new Error(`--input ${[...named.keys()][0]} is not a model input`);
  let outputs = await session.run(feeds);  // warm-up
  console.log(`load_first_run ${(Number(process.hrtime.bigint() - tLoad) / 1e6).toFixed(4)} ms`);
  const times = [];
  for (let r = 0; r < repeat; ++r) {
    const t0 = process.hrtime.bigint();
    outputs = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  if (times.length) {
    times.sort((a, b) => a - b);
    const median = times.length % 2 ? times[(times.length - 1) / 2]
      : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
    console.log(`median ${median.toFixed(4)} ms`);
  }
  const value = (type, data, i) => (type === 'float16' && data instanceof Uint16Array
    ? halfToNumber(data[i]) : Number(data[i]));
  // Largest and mean |a - b| over two outputs ({type, data} each), as text; 'SIZE-MISMATCH' when
  // the sizes differ.
  const diffs = (a, b) => {
    if (a.data.length !== b.data.length) return ['SIZE-MISMATCH', 'SIZE-MISMATCH'];
    let max = 0, sum = 0;
    for (let i = 0; i < a.data.length; ++i) {
      const d = Math.abs(value(a.type, a.data, i) - value(b.type, b.data, i));
      max = Math.max(max, d);
      sum += d;
    }
    return [max.toExponential(2), (sum / Math.max(1, a.data.length)).toExponential(2)];
  };
  const compare = option(rest, '--compare', null);
  const reference = option(rest, '--reference', null);
  const save = option(rest, '--save', null);
  if (save) fs.mkdirSync(save, { recursive: true });
  session.outputNames.forEach((name, k) => {
    const theirs = outputs[name];
    const file = `output_${k}.npy`;
    if (save) writeNpy(path.join(save, file), theirs.type, theirs.dims, theirs.data);
    const ours = compare ? readNpy(path.join(compare, file)) : null;
    if (ours) console.log(`max_abs_diff ${name} ${diffs(ours, theirs)[0]} ${theirs.type}`);
    if (reference) {
      const ref = readNpy(path.join(reference, file));
      console.log(`ref_abs_diff ort ${name} ${diffs(theirs, ref).join(' ')}`);
      if (ours) console.log(`ref_abs_diff ours ${name} ${diffs(ours, ref).join(' ')}`);
    }
  });
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
