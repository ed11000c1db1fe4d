// .npy files and float16 bits for the benchmark scripts (ort_run.mjs, real_inputs.mjs): no
// dependencies, so it loads without onnxruntime-node.
import fs from 'node:fs';

export const NPY = {  // ORT type -> [numpy descr, typed array]
  float32: ['<f4', Float32Array], float64: ['<f8', Float64Array], int64: ['<i8', BigInt64Array],
  int32: ['<i4', Int32Array], int8: ['|i1', Int8Array], uint8: ['|u1', Uint8Array],
  bool: ['|b1', Uint8Array], float16: ['<f2', Uint16Array],
};

// IEEE half bits -> number, and number -> half bits (round to nearest even), for float16 tensors
// (held as their raw bits in a Uint16Array).
export function halfToNumber(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
export function numberToHalf(v) {
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

export function writeNpy(file, type, dims, data) {
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

export function readNpy(file) {
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
