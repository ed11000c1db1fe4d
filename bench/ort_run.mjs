// ONNX Runtime (onnxruntime-node, CPU) side of bench/run_models.sh.
//
//   node ort_run.mjs inputs MODEL DIR
//       Writes one .npy per model input into DIR with deterministic data (float: uniform [-1, 1)
//       from a fixed LCG, float16 inputs the same values rounded to half; integers 0..9; bool 0/1;
//       symbolic dims = 1) and prints NAME=PATH per line, for `simplecpp run --input NAME=PATH`,
//       so both runtimes see identical inputs.
//   node ort_run.mjs run MODEL DIR --threads T --repeat N [--compare OURS_DIR]
//       Reads the inputs back from DIR, runs one warm-up and N timed runs (intra-op threads T,
//       sequential execution, all graph optimizations) and prints "median X ms". With --compare,
//       also prints the largest |ours - ort| per output (OURS_DIR/output_K.npy from simplecpp run;
//       float16 outputs are compared as the values their bits encode).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, 'package.json'));
const ort = require('onnxruntime-node');

const NPY = {  // ORT type -> [numpy descr, typed array]
  float32: ['<f4', Float32Array], float64: ['<f8', Float64Array], int64: ['<i8', BigInt64Array],
  int32: ['<i4', Int32Array], int8: ['|i1', Int8Array], uint8: ['|u1', Uint8Array],
  bool: ['|b1', Uint8Array], float16: ['<f2', Uint16Array],
};

// IEEE half bits -> number, and number -> half bits (round to nearest even), for float16 tensors
// (held as their raw bits in a Uint16Array).
function halfToNumber(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function numberToHalf(v) {
  f32[0] = v;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {  // subnormal half
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let r = mant >>> shift;
    const rem = mant & ((1 << shift) - 1), half = 1 << (shift - 1);
    if (rem > half || (rem === half && (r & 1))) r += 1;
    return sign | r;
  }
  let r = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (r & 1))) r += 1;
  return sign | r;
}

function writeNpy(file, type, dims, data) {
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${NPY[type][0]}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(pre, 0);
  pre[6] = 1; pre[7] = 0; pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)[1];
  const dims = shapeText.split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const type = Object.keys(NPY).find((t) => NPY[t][0] === descr);
  if (!type) throw new Error(`${file}: unsupported npy dtype ${descr}`);
  const body = buf.subarray(start + hlen);
  const copy = new Uint8Array(body.length);
  copy.set(body);
  return { type, dims, data: new NPY[type][1](copy.buffer) };
}

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

function option(args, name, fallback) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
}

async function main() {
  const [mode, model, dir, ...rest] = process.argv.slice(2);
  if (!mode || !model || !dir) {
    console.error('usage: node ort_run.mjs inputs MODEL DIR | run MODEL DIR --threads T --repeat N [--compare DIR]');
    process.exit(2);
  }
  const threads = Number(option(rest, '--threads', '1'));
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all',
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
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    const { type, dims, data } = readNpy(path.join(dir, `input_${i}.npy`));
    feeds[name] = new ort.Tensor(type, data, dims);
  });
  let outputs = await session.run(feeds);  // warm-up
  const times = [];
  for (let r = 0; r < repeat; ++r) {
    const t0 = process.hrtime.bigint();
    outputs = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  const median = times.length % 2 ? times[(times.length - 1) / 2]
    : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
  console.log(`median ${median.toFixed(4)} ms`);
  const compare = option(rest, '--compare', null);
  if (compare) {
    session.outputNames.forEach((name, k) => {
      const mine = readNpy(path.join(compare, `output_${k}.npy`));
      const ours = mine.data;
      const theirs = outputs[name].data;
      const value = (type, data, i) => (type === 'float16' && data instanceof Uint16Array
        ? halfToNumber(data[i]) : Number(data[i]));
      let diff = 0;
      for (let i = 0; i < theirs.length; ++i) {
        diff = Math.max(diff, Math.abs(value(mine.type, ours, i) - value(outputs[name].type, theirs, i)));
      }
      const sameSize = ours.length === theirs.length;
      console.log(`max_abs_diff ${name} ${sameSize ? diff.toExponential(2) : 'SIZE-MISMATCH'}`);
    });
  }
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
