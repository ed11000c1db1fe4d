// Minimal protobuf reading/writing for the JS tests and scripts/wasm-golden.sh: TensorProto .pb
// files (the CLI's output_K.pb, test inputs) and tiny one-node ONNX models. Only the fields those
// need: TensorProto {dims 1, data_type 2, float_data 4, int32_data 5, int64_data 7, name 8,
// raw_data 9, double_data 10, uint64_data 11}.
import {readFileSync, writeFileSync} from 'node:fs';

// ---- writing ----

function varint(out, value) {
  let v = BigInt.asUintN(64, BigInt(value));
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
}

class Writer {
  constructor() {
    this.bytes = [];
  }
  varintField(field, value) {
    varint(this.bytes, (field << 3) | 0);
    varint(this.bytes, value);
    return this;
  }
  bytesField(field, data) {
    varint(this.bytes, (field << 3) | 2);
    varint(this.bytes, data.length);
    for (const b of data) this.bytes.push(b);
    return this;
  }
  stringField(field, s) {
    return this.bytesField(field, new TextEncoder().encode(s));
  }
  fixed32FloatField(field, value) {
    varint(this.bytes, (field << 3) | 5);
    const b = new Uint8Array(new Float32Array([value]).buffer);
    for (const x of b) this.bytes.push(x);
    return this;
  }
  messageField(field, writer) {
    return this.bytesField(field, writer.bytes);
  }
  finish() {
    return Uint8Array.from(this.bytes);
  }
}

/** Serializes {data (typed array), dims, dtype code} as a TensorProto with raw_data. */
export function serializeTensorProto(tensor, dtypeCode, name) {
  const w = new Writer();
  for (const d of tensor.dims) w.varintField(1, d);
  w.varintField(2, dtypeCode);
  if (name) w.stringField(8, name);
  const d = tensor.data;
  w.bytesField(9, new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
  return w.finish();
}

export function writeTensorProtoFile(path, tensor, dtypeCode, name) {
  writeFileSync(path, serializeTensorProto(tensor, dtypeCode, name));
}

function valueInfo(name, dtypeCode, dims) {
  const shape = new Writer();
  for (const d of dims) shape.messageField(1, new Writer().varintField(1, d));
  const tensorType = new Writer().varintField(1, dtypeCode).messageField(2, shape);
  return new Writer().stringField(1, name).messageField(2, new Writer().messageField(1, tensorType));
}

// AttributeProto {name 1, f 2, i 3, s 4, floats 7, ints 8, type 20} from a JS value: an integer
// (INT), a non-integer number (FLOAT; write 1.0 as {float: 1}), a string (STRING), an array of
// integers (INTS) or {floats: [...]} (FLOATS).
function attribute(name, value) {
  const w = new Writer().stringField(1, name);
  if (typeof value === 'string') return w.stringField(4, value).varintField(20, 3);
  if (Array.isArray(value)) {
    for (const v of value) w.varintField(8, v);
    return w.varintField(20, 7);
  }
  if (typeof value === 'object' && value.floats) {
    for (const v of value.floats) w.fixed32FloatField(7, v);
    return w.varintField(20, 6);
  }
  if (typeof value === 'object' && value.float !== undefined) {
    return w.fixed32FloatField(2, value.float).varintField(20, 1);
  }
  if (Number.isInteger(value)) return w.varintField(3, value).varintField(20, 2);
  return w.fixed32FloatField(2, value).varintField(20, 1);
}

/**
 * A one-node model: op(inputs...) -> outputs.
 * inputs: the node's inputs in order, [{name, dtype, dims}] for a graph input, [{name, dtype,
 * dims, data (typed array)}] for an initializer, {name: ''} for a left-out optional input.
 * outputs: [{name, dtype, dims}]. attributes: {name: value} (see attribute()). domain: the
 * node's op domain ('' = ai.onnx; another domain gets opset version 1 too).
 */
export function makeSingleNodeModel({opType, inputs, outputs, opset = 21, attributes = {},
  domain = ''}) {
  const node = new Writer();
  for (const v of inputs) node.stringField(1, v.name);
  for (const v of outputs) node.stringField(2, v.name);
  node.stringField(3, 'n0').stringField(4, opType);
  for (const [name, value] of Object.entries(attributes)) node.messageField(5, attribute(name, value));
  if (domain) node.stringField(7, domain);
  const graph = new Writer().messageField(1, node).stringField(2, 'g');
  for (const t of inputs) {
    if (t.data) graph.bytesField(5, serializeTensorProto({data: t.data, dims: t.dims}, t.dtype, t.name));
  }
  for (const v of inputs) {
    if (v.name && !v.data) graph.messageField(11, valueInfo(v.name, v.dtype, v.dims));
  }
  for (const v of outputs) graph.messageField(12, valueInfo(v.name, v.dtype, v.dims));
  const model = new Writer()
      .varintField(1, 10)  // ir_version
      .stringField(2, 'simplecpp-js-test')
      .messageField(7, graph)
      .messageField(8, new Writer().stringField(1, '').varintField(2, opset));
  if (domain) model.messageField(8, new Writer().stringField(1, domain).varintField(2, 1));
  return model.finish();
}

// ---- reading ----

class Reader {
  constructor(bytes) {
    this.b = bytes;
    this.p = 0;
  }
  done() {
    return this.p >= this.b.length;
  }
  varint() {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.p >= this.b.length) throw new Error('truncated varint');
      const byte = this.b[this.p++];
      result |= BigInt(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return result;
      shift += 7n;
    }
  }
  bytes() {
    const n = Number(this.varint());
    if (this.p + n > this.b.length) throw new Error('truncated field');
    const out = this.b.subarray(this.p, this.p + n);
    this.p += n;
    return out;
  }
  skip(wireType) {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.p += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.p += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
  }
}

// Typed array class per TensorProto data type for raw_data (bool and 8-bit types as bytes).
const RAW_ARRAY = {
  1: Float32Array, 2: Uint8Array, 3: Int8Array, 4: Uint16Array, 5: Int16Array, 6: Int32Array,
  7: BigInt64Array, 9: Uint8Array, 10: Uint16Array, 11: Float64Array, 12: Uint32Array,
  13: BigUint64Array, 16: Uint16Array,
};

/** Parses a TensorProto: {name, dtype (code), dims, data (typed array)}. */
export function parseTensorProto(bytes) {
  const r = new Reader(bytes);
  const dims = [];
  let dtype = 0;
  let name = '';
  let raw = null;
  const typed = [];  // values of float_data/int32_data/int64_data/double_data/uint64_data
  const readRepeated = (wireType, readOne) => {
    if (wireType === 2) {
      const sub = new Reader(r.bytes());
      while (!sub.done()) typed.push(readOne(sub));
    } else {
      typed.push(readOne(r));
    }
  };
  const f32 = (rd) => {
    const v = new DataView(rd.b.buffer, rd.b.byteOffset + rd.p, 4).getFloat32(0, true);
    rd.p += 4;
    return v;
  };
  const f64 = (rd) => {
    const v = new DataView(rd.b.buffer, rd.b.byteOffset + rd.p, 8).getFloat64(0, true);
    rd.p += 8;
    return v;
  };
  while (!r.done()) {
    const key = Number(r.varint());
    const field = key >>> 3;
    const wireType = key & 7;
    if (field === 1) {
      if (wireType === 2) {
        const sub = new Reader(r.bytes());
        while (!sub.done()) dims.push(Number(BigInt.asIntN(64, sub.varint())));
      } else {
        dims.push(Number(BigInt.asIntN(64, r.varint())));
      }
    } else if (field === 2 && wireType === 0) {
      dtype = Number(r.varint());
    } else if (field === 8 && wireType === 2) {
      name = new TextDecoder().decode(r.bytes());
    } else if (field === 9 && wireType === 2) {
      raw = r.bytes();
    } else if (field === 4) {
      readRepeated(wireType, f32);
    } else if (field === 10) {
      readRepeated(wireType, f64);
    } else if (field === 5 || field === 7 || field === 11) {
      readRepeated(wireType, (rd) => rd.varint());
    } else {
      r.skip(wireType);
    }
  }
  const ArrayType = RAW_ARRAY[dtype];
  if (!ArrayType) throw new Error(`TensorProto data type ${dtype} is not handled by this reader`);
  let data;
  if (raw) {
    const copy = raw.slice();
    data = new ArrayType(copy.buffer, 0, copy.byteLength / ArrayType.BYTES_PER_ELEMENT);
  } else if (ArrayType === BigInt64Array) {
    data = BigInt64Array.from(typed, (v) => BigInt.asIntN(64, v));
  } else if (ArrayType === BigUint64Array) {
    data = BigUint64Array.from(typed, (v) => BigInt.asUintN(64, v));
  } else {
    data = ArrayType.from(typed, (v) => (typeof v === 'bigint' ? Number(BigInt.asIntN(32, v)) : v));
  }
  return {name, dtype, dims, data};
}

export function readTensorProtoFile(path) {
  return parseTensorProto(new Uint8Array(readFileSync(path)));
}

// ---- comparison ----

const FLOAT_CODES = new Set([1, 10, 11, 16]);

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}
function bf16ToFloat(h) {
  return new Float32Array(new Uint32Array([h << 16]).buffer)[0];
}

/** Values as JS numbers (float16/bfloat16 decoded), for float comparisons. */
export function toNumbers(data, dtypeCode) {
  if (dtypeCode === 10) return Array.from(data, halfToFloat);
  if (dtypeCode === 16) return Array.from(data, bf16ToFloat);
  return Array.from(data, Number);
}

/**
 * Compares a result {data, dims} against an expected TensorProto-like {data, dims, dtype}.
 * Floats: |a - e| <= atol + rtol * |e| (NaN matches NaN); other dtypes: identical.
 * Returns {ok, maxAbs, maxRel, mismatches, message}.
 */
export function compareTensors(actual, expected, {rtol = 1e-3, atol = 1e-5} = {}) {
  const res = {ok: true, maxAbs: 0, maxRel: 0, mismatches: 0, message: ''};
  if (actual.dims.length !== expected.dims.length ||
      actual.dims.some((d, i) => d !== expected.dims[i])) {
    return {...res, ok: false, message: `dims [${actual.dims}] != expected [${expected.dims}]`};
  }
  if (actual.data.length !== expected.data.length) {
    return {...res, ok: false, message: `${actual.data.length} values != expected ${expected.data.length}`};
  }
  if (!FLOAT_CODES.has(expected.dtype)) {
    for (let i = 0; i < expected.data.length; ++i) {
      if (actual.data[i] !== expected.data[i]) {
        if (!res.mismatches) res.message = `first difference at ${i}: ${actual.data[i]} != ${expected.data[i]}`;
        ++res.mismatches;
      }
    }
    res.ok = res.mismatches === 0;
    return res;
  }
  const a = toNumbers(actual.data, expected.dtype);
  const e = toNumbers(expected.data, expected.dtype);
  for (let i = 0; i < e.length; ++i) {
    if (Number.isNaN(a[i]) && Number.isNaN(e[i])) continue;
    const diff = Math.abs(a[i] - e[i]);
    const rel = e[i] !== 0 ? diff / Math.abs(e[i]) : diff === 0 ? 0 : Infinity;
    res.maxAbs = Math.max(res.maxAbs, diff);
    if (rel !== Infinity) res.maxRel = Math.max(res.maxRel, rel);
    if (!(diff <= atol + rtol * Math.abs(e[i]))) {
      if (!res.mismatches) res.message = `first difference at ${i}: ${a[i]} vs expected ${e[i]}`;
      ++res.mismatches;
    }
  }
  res.ok = res.mismatches === 0;
  return res;
}
