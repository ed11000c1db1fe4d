// simplecpp's JavaScript API: an ES module over the C API (simplecpp_c.h) compiled to WebAssembly
// (simplecpp.mjs + simplecpp.wasm, built by the CMake target simplecpp_wasm). Runs in node and in
// browsers.
//
//   const sc = await SimpleCpp.create();
//   const model = sc.loadModel(bytes);              // Uint8Array with an ONNX ModelProto
//   const session = model.createSession();
//   const out = session.run({x: {data: new Float32Array(3072), dims: [1, 3, 32, 32]}});
//   out.probabilities  // {data: Float32Array, dims: [1, 10], dtype: 'float32'}
//   session.dispose(); model.dispose();
//
// Tensors are {data, dims, dtype}: data is the typed array of the dtype (DTYPES below: float16 and
// bfloat16 as Uint16Array bit patterns, int64 as BigInt64Array, bool as Uint8Array of 0/1, float8
// and 4/2-bit types as Uint8Array raw bytes, complex as interleaved Float32/Float64Array). Errors
// are SimpleCppError (an Error) carrying the library's message and code. Every object that owns
// WebAssembly memory has dispose(); outputs are plain JS copies and need none.
import createSimpleCppModule from './simplecpp.mjs';

// ONNX TensorProto.DataType number -> name and typed-array class (elementsPerValue > 1 for
// complex: two floats per element; 0 for sub-byte types stored packed in a Uint8Array).
const DTYPE_TABLE = [
  [1, 'float32', Float32Array, 1],
  [2, 'uint8', Uint8Array, 1],
  [3, 'int8', Int8Array, 1],
  [4, 'uint16', Uint16Array, 1],
  [5, 'int16', Int16Array, 1],
  [6, 'int32', Int32Array, 1],
  [7, 'int64', BigInt64Array, 1],
  [9, 'bool', Uint8Array, 1],
  [10, 'float16', Uint16Array, 1],
  [11, 'float64', Float64Array, 1],
  [12, 'uint32', Uint32Array, 1],
  [13, 'uint64', BigUint64Array, 1],
  [14, 'complex64', Float32Array, 2],
  [15, 'complex128', Float64Array, 2],
  [16, 'bfloat16', Uint16Array, 1],
  [17, 'float8e4m3fn', Uint8Array, 1],
  [18, 'float8e4m3fnuz', Uint8Array, 1],
  [19, 'float8e5m2', Uint8Array, 1],
  [20, 'float8e5m2fnuz', Uint8Array, 1],
  [21, 'uint4', Uint8Array, 0],
  [22, 'int4', Uint8Array, 0],
  [23, 'float4e2m1', Uint8Array, 0],
  [24, 'float8e8m0', Uint8Array, 1],
  [25, 'uint2', Uint8Array, 0],
  [26, 'int2', Uint8Array, 0],
];

/** dtype name -> {code, name, arrayType, elementsPerValue}; e.g. DTYPES.float16.arrayType === Uint16Array. */
export const DTYPES = Object.freeze(Object.fromEntries(DTYPE_TABLE.map(
    ([code, name, arrayType, elementsPerValue]) =>
      [name, Object.freeze({code, name, arrayType, elementsPerValue})])));
const DTYPE_BY_CODE = new Map(Object.values(DTYPES).map((d) => [d.code, d]));
// The dtype a feed gets from its typed array alone (when neither feed.dtype nor the model says).
const DTYPE_BY_ARRAY = new Map([
  [Float32Array, DTYPES.float32], [Float64Array, DTYPES.float64], [Int8Array, DTYPES.int8],
  [Uint8Array, DTYPES.uint8], [Int16Array, DTYPES.int16], [Uint16Array, DTYPES.uint16],
  [Int32Array, DTYPES.int32], [Uint32Array, DTYPES.uint32], [BigInt64Array, DTYPES.int64],
  [BigUint64Array, DTYPES.uint64],
]);

/** Status codes of the C API (SC_ERR_*), by number. */
export const ERROR_CODES = Object.freeze({
  1: 'INVALID_ARGUMENT', 2: 'INVALID_MODEL', 3: 'UNSUPPORTED', 4: 'RUNTIME',
  5: 'LIMIT_EXCEEDED', 6: 'IO', 7: 'INTERNAL',
});

/** An error from the library: message is the library's, code its SC_ERR_* number. */
export class SimpleCppError extends Error {
  constructor(message, code) {
    super(message);
    this.name = 'SimpleCppError';
    this.code = code;
    this.codeName = ERROR_CODES[code] || 'UNKNOWN';
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function dtypeOf(nameOrCode) {
  const d = typeof nameOrCode === 'number' ? DTYPE_BY_CODE.get(nameOrCode) : DTYPES[nameOrCode];
  if (!d) throw new SimpleCppError(`unknown dtype ${String(nameOrCode)}`, 1);
  return d;
}

// Thin layer over the raw module: memory helpers and status handling.
class Wasm {
  constructor(mod) {
    this.m = mod;
  }

  // Views are re-read on every use: memory growth replaces the buffer.
  get u8() {
    return this.m.HEAPU8;
  }
  view() {
    return new DataView(this.m.HEAPU8.buffer);
  }

  malloc(size) {
    const p = this.m._malloc(Math.max(size, 1)) >>> 0;
    if (!p) throw new SimpleCppError(`out of WebAssembly memory (allocating ${size} bytes)`, 5);
    return p;
  }
  free(p) {
    if (p) this.m._free(p);
  }

  getPtr(p) {
    return this.view().getUint32(p, true);
  }
  getI64(p) {
    return this.view().getBigInt64(p, true);
  }

  cString(p) {
    const u8 = this.u8;
    let end = p;
    while (u8[end] !== 0) ++end;
    return decoder.decode(u8.subarray(p, end));
  }
  // A malloc'd NUL-terminated UTF-8 copy of s.
  newCString(s) {
    const bytes = encoder.encode(String(s));
    const p = this.malloc(bytes.length + 1);
    this.u8.set(bytes, p);
    this.u8[p + bytes.length] = 0;
    return p;
  }
  newBytes(bytes) {
    const p = this.malloc(bytes.byteLength);
    this.u8.set(bytes, p);
    return p;
  }

  // Throws SimpleCppError for a non-NULL sc_status* (freeing it).
  check(status) {
    status >>>= 0;
    if (!status) return;
    const code = this.m._sc_status_code(status);
    const message = this.cString(this.m._sc_status_message(status) >>> 0);
    this.m._sc_status_free(status);
    throw new SimpleCppError(message, code);
  }
  // Same for the helpers of js_extras.cc, which return a malloc'd message or NULL.
  checkMessage(message, code = 1) {
    message >>>= 0;
    if (!message) return;
    const text = this.cString(message);
    this.free(message);
    throw new SimpleCppError(text, code);
  }

  // Calls fn(outPtr) with `size` bytes of scratch memory for out-parameters.
  withOut(size, fn) {
    const out = this.malloc(size);
    try {
      this.u8.fill(0, out, out + size);
      return fn(out);
    } finally {
      this.free(out);
    }
  }

  // Runs a js_extras.cc helper that returns JSON through a char** out-parameter.
  json(fn) {
    return this.withOut(4, (out) => {
      this.checkMessage(fn(out));
      const p = this.getPtr(out);
      try {
        return JSON.parse(this.cString(p));
      } finally {
        this.free(p);
      }
    });
  }
}

// The model's inputs (isInput) or outputs as the C API describes them: {name, dtype (code),
// sequence, optional, dims (null when undeclared), dimParams}.
function readValues(w, handle, isInput) {
  const m = w.m;
  const fns = isInput ?
      [m._sc_model_input_count, m._sc_model_input_name, m._sc_model_input_type,
       m._sc_model_input_dims, m._sc_model_input_dim_name] :
      [m._sc_model_output_count, m._sc_model_output_name, m._sc_model_output_type,
       m._sc_model_output_dims, m._sc_model_output_dim_name];
  const [countFn, nameFn, typeFn, dimsFn, dimNameFn] = fns;
  const count = w.withOut(8, (out) => {
    w.check(countFn(handle, out));
    return Number(w.getI64(out));
  });
  const values = [];
  for (let i = 0; i < count; ++i) {
    const index = BigInt(i);
    const name = w.withOut(4, (out) => {
      w.check(nameFn(handle, index, out));
      return w.cString(w.getPtr(out));
    });
    // kind (int32) at 0, dtype (int32) at 4, rank (int64) at 8.
    const [kind, code, rank] = w.withOut(16, (out) => {
      w.check(typeFn(handle, index, out, out + 4, out + 8));
      const view = w.view();
      return [view.getInt32(out, true), view.getInt32(out + 4, true), Number(w.getI64(out + 8))];
    });
    let dims = null;
    let dimParams = null;
    if (rank >= 0) {
      dims = w.withOut(8 * Math.max(rank, 1), (out) => {
        w.check(dimsFn(handle, index, out, BigInt(rank)));
        return Array.from({length: rank}, (_, k) => Number(w.getI64(out + 8 * k)));
      });
      dimParams = Array.from({length: rank}, (_, k) => w.withOut(4, (out) => {
        w.check(dimNameFn(handle, index, BigInt(k), out));
        return w.cString(w.getPtr(out));
      }));
    }
    values.push({name, dtype: code, sequence: kind === 1, optional: kind === 2, dims, dimParams});
  }
  return values;
}

function describeValue(v) {
  const d = DTYPE_BY_CODE.get(v.dtype);
  return Object.freeze({
    name: v.name,
    dtype: d ? d.name : v.dtype === 8 ? 'string' : `dtype(${v.dtype})`,
    // A sequence (dtype is its element dtype) or optional value: run() handles tensors only.
    sequence: v.sequence,
    optional: v.optional,
    // -1 for unknown dims (their symbolic names in dimParams); null when no shape is declared.
    dims: v.dims ? Object.freeze(v.dims.slice()) : null,
    dimParams: v.dimParams ? Object.freeze(v.dimParams.slice()) : null,
  });
}

/** Entry point: owns one WebAssembly instance. */
export class SimpleCpp {
  /**
   * Instantiates the WebAssembly module. options.wasmBinary (ArrayBuffer/Uint8Array) or
   * options.locateFile(path, prefix) override where simplecpp.wasm comes from (default: next to
   * simplecpp.mjs).
   */
  static async create(options = {}) {
    const moduleArg = {};
    if (options.wasmBinary) moduleArg.wasmBinary = options.wasmBinary;
    if (options.locateFile) moduleArg.locateFile = options.locateFile;
    if (typeof process === 'object' && process.versions && process.versions.node) {
      // See src/pre.js: the module's node code needs require() and __dirname.
      const {createRequire} = await import('node:module');
      const {fileURLToPath} = await import('node:url');
      const path = await import('node:path');
      moduleArg.nodeRequire = createRequire(import.meta.url);
      moduleArg.nodeDirname = path.dirname(fileURLToPath(import.meta.url));
      // Node 18+ has fetch(), which the module would try on the .wasm path and fail: read it here.
      if (!moduleArg.wasmBinary) {
        const {readFileSync} = await import('node:fs');
        const file = options.locateFile ? options.locateFile('simplecpp.wasm', moduleArg.nodeDirname + '/') :
            path.join(moduleArg.nodeDirname, 'simplecpp.wasm');
        moduleArg.wasmBinary = readFileSync(file);
      }
    }
    const mod = await createSimpleCppModule(moduleArg);
    return new SimpleCpp(new Wasm(mod));
  }

  constructor(wasm) {
    this._w = wasm;
  }

  /** Loads an ONNX model from its bytes (Uint8Array, ArrayBuffer or another typed array). */
  loadModel(bytes) {
    let u8;
    if (bytes instanceof Uint8Array) u8 = bytes;
    else if (bytes instanceof ArrayBuffer) u8 = new Uint8Array(bytes);
    else if (ArrayBuffer.isView(bytes)) u8 = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    else throw new SimpleCppError('loadModel needs a Uint8Array or ArrayBuffer with ONNX bytes', 1);
    const w = this._w;
    const data = w.newBytes(u8);
    try {
      const handle = w.withOut(4, (out) => {
        w.check(w.m._sc_model_load_bytes(data, u8.byteLength, out));
        return w.getPtr(out);
      });
      return new Model(w, handle);
    } finally {
      w.free(data);
    }
  }

  /**
   * Names of the built-in demo models ('cnn', 'transformer', ...); empty when the module was built
   * without them (the default: CMake option SIMPLECPP_WASM_JS_BUILTINS).
   */
  builtinModelNames() {
    const w = this._w;
    return w.json((out) => w.m._scjs_builtin_model_names(out));
  }

  /** The built-in model `name` as ONNX bytes (Uint8Array), e.g. sc.loadModel(sc.builtinModel('cnn')). */
  builtinModel(name) {
    const w = this._w;
    const namePtr = w.newCString(name);
    try {
      return w.withOut(8, (out) => {
        w.checkMessage(w.m._scjs_builtin_model(namePtr, out, out + 4));
        const p = w.getPtr(out);
        const size = w.getPtr(out + 4);
        try {
          return w.u8.slice(p, p + size);
        } finally {
          w.free(p);
        }
      });
    } finally {
      w.free(namePtr);
    }
  }
}

/** A loaded model: inputs/outputs ({name, dtype, dims, dimParams}), createSession(), dispose(). */
export class Model {
  constructor(wasm, handle) {
    this._w = wasm;
    this._h = handle;
    try {
      this.inputs = Object.freeze(readValues(wasm, handle, true).map(describeValue));
      this.outputs = Object.freeze(readValues(wasm, handle, false).map(describeValue));
    } catch (e) {
      this.dispose();
      throw e;
    }
  }

  _handle() {
    if (!this._h) throw new SimpleCppError('the model has been disposed', 1);
    return this._h;
  }

  /**
   * A session for running the model. The WebAssembly build has no threads: options.threads
   * other than 1 is refused.
   */
  createSession(options = {}) {
    const threads = options.threads === undefined ? 1 : options.threads;
    if (threads !== 1) {
      throw new SimpleCppError('the WebAssembly build runs on one thread (threads must be 1)', 1);
    }
    const w = this._w;
    const handle = w.withOut(4, (out) => {
      w.check(w.m._sc_session_create(this._handle(), threads, out));
      return w.getPtr(out);
    });
    return new Session(w, handle, this);
  }

  /**
   * A decoder for greedy text generation with a KV cache (the model must use onnxruntime-genai's
   * names: input_ids, past_key_values.N.key|value, logits, present.N.key|value). The cache stays
   * in WebAssembly memory between the runs of one generate() call. One thread, as createSession.
   */
  createDecoder(options = {}) {
    const threads = options.threads === undefined ? 1 : options.threads;
    if (threads !== 1) {
      throw new SimpleCppError('the WebAssembly build runs on one thread (threads must be 1)', 1);
    }
    const w = this._w;
    const handle = w.withOut(4, (out) => {
      w.check(w.m._sc_decoder_create(this._handle(), threads, out));
      return w.getPtr(out);
    });
    return new Decoder(w, handle);
  }

  /** Frees the model's WebAssembly memory (sessions created from it stay usable). */
  dispose() {
    if (this._h) this._w.m._sc_model_free(this._h);
    this._h = 0;
  }
}

// Resolves a feed's dtype and typed array: feed.dtype, else the model's declared dtype, else the
// typed array's own kind. Plain arrays are converted to the dtype's typed array.
function feedTensor(name, feed, declared) {
  if (feed === null || typeof feed !== 'object' || !('data' in feed) || !('dims' in feed)) {
    throw new SimpleCppError(`input '${name}' must be {data, dims[, dtype]}`, 1);
  }
  let dtype;
  if (feed.dtype !== undefined) dtype = dtypeOf(feed.dtype);
  else if (declared && DTYPES[declared.dtype]) dtype = DTYPES[declared.dtype];
  else if (ArrayBuffer.isView(feed.data)) dtype = DTYPE_BY_ARRAY.get(feed.data.constructor);
  if (!dtype) throw new SimpleCppError(`input '${name}': cannot tell its dtype; give feed.dtype`, 1);
  let data = feed.data;
  if (Array.isArray(data)) {
    const big = dtype.arrayType === BigInt64Array || dtype.arrayType === BigUint64Array;
    data = dtype.arrayType.from(data, big ? (x) => BigInt(x) : (x) => (typeof x === 'boolean' ? +x : x));
  } else if (!(data instanceof dtype.arrayType)) {
    const got = data && data.constructor ? data.constructor.name : typeof data;
    throw new SimpleCppError(
        `input '${name}' has dtype ${dtype.name}, which needs a ${dtype.arrayType.name} (got ${got})`, 1);
  }
  const dims = Array.from(feed.dims, (d) => {
    const n = Number(d);
    if (!Number.isSafeInteger(n) || n < 0) {
      throw new SimpleCppError(`input '${name}': bad dimension ${String(d)}`, 1);
    }
    return n;
  });
  return {dtype, data, dims};
}

/** A session: run(feeds[, outputNames]) -> {name: {data, dims, dtype}}; dispose(). */
export class Session {
  constructor(wasm, handle, model) {
    this._w = wasm;
    this._h = handle;
    this._inputs = new Map(model.inputs.map((v) => [v.name, v]));
    this._outputNames = model.outputs.map((v) => v.name);
  }

  /**
   * Runs the model. feeds: {inputName: {data, dims[, dtype]}}; outputNames: the outputs wanted
   * (default: all, in the model's order). Returns {outputName: {data, dims, dtype}}.
   */
  run(feeds, outputNames = this._outputNames) {
    if (!this._h) throw new SimpleCppError('the session has been disposed', 1);
    if (feeds === null || typeof feeds !== 'object') {
      throw new SimpleCppError('run needs an object {inputName: {data, dims}}', 1);
    }
    const w = this._w;
    const m = w.m;
    const names = Object.keys(feeds);
    const nIn = names.length;
    const nOut = outputNames.length;
    const allocs = [];  // freed at the end
    const tensors = [];  // sc_tensor* to free at the end (inputs and outputs)
    const alloc = (size) => {
      const p = w.malloc(size);
      allocs.push(p);
      return p;
    };
    try {
      const inNames = alloc(4 * nIn);
      const inTensors = alloc(4 * nIn);
      for (let i = 0; i < nIn; ++i) {
        const {dtype, data, dims} = feedTensor(names[i], feeds[names[i]], this._inputs.get(names[i]));
        const dimsPtr = alloc(8 * dims.length);
        const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
        const dataPtr = alloc(bytes.byteLength);
        w.u8.set(bytes, dataPtr);
        const v = w.view();
        dims.forEach((d, k) => v.setBigInt64(dimsPtr + 8 * k, BigInt(d), true));
        const t = w.withOut(4, (out) => {
          w.check(m._sc_tensor_create(dtype.code, dimsPtr, BigInt(dims.length), dataPtr,
                                      bytes.byteLength, out));
          return w.getPtr(out);
        });
        tensors.push(t);
        const namePtr = w.newCString(names[i]);
        allocs.push(namePtr);
        w.view().setUint32(inNames + 4 * i, namePtr, true);
        w.view().setUint32(inTensors + 4 * i, t, true);
      }
      const outNames = alloc(4 * nOut);
      const outTensors = alloc(4 * nOut);
      for (let i = 0; i < nOut; ++i) {
        const namePtr = w.newCString(outputNames[i]);
        allocs.push(namePtr);
        w.view().setUint32(outNames + 4 * i, namePtr, true);
        w.view().setUint32(outTensors + 4 * i, 0, true);
      }
      const status = m._sc_session_run(this._h, inNames, inTensors, BigInt(nIn), outNames,
                                       BigInt(nOut), outTensors);
      for (let i = 0; i < nOut; ++i) {
        const t = w.getPtr(outTensors + 4 * i);
        if (t) tensors.push(t);
      }
      w.check(status);
      const result = {};
      for (let i = 0; i < nOut; ++i) {
        result[outputNames[i]] = this._readTensor(w.getPtr(outTensors + 4 * i));
      }
      return result;
    } finally {
      for (const t of tensors) m._sc_tensor_free(t);
      for (const p of allocs) w.free(p);
    }
  }

  // Copies an sc_tensor* into {data, dims, dtype}.
  _readTensor(t) {
    const w = this._w;
    const m = w.m;
    const code = m._sc_tensor_dtype(t);
    const dtype = DTYPE_BY_CODE.get(code);
    if (!dtype) throw new SimpleCppError(`output of dtype ${code} has no JavaScript form`, 3);
    const rank = Number(m._sc_tensor_rank(t));
    const dims = w.withOut(8 * Math.max(rank, 1), (out) => {
      w.check(m._sc_tensor_dims(t, out, BigInt(rank)));
      return Array.from({length: rank}, (_, k) => Number(w.getI64(out + 8 * k)));
    });
    const size = m._sc_tensor_byte_size(t) >>> 0;
    const src = m._sc_tensor_data(t) >>> 0;
    const copy = w.u8.slice(src, src + size);  // fresh, aligned ArrayBuffer
    const data = dtype.arrayType === Uint8Array ? copy :
        new dtype.arrayType(copy.buffer, 0, size / dtype.arrayType.BYTES_PER_ELEMENT);
    return {data, dims, dtype: dtype.name};
  }

  /** Frees the session's WebAssembly memory. */
  dispose() {
    if (this._h) this._w.m._sc_session_free(this._h);
    this._h = 0;
  }
}

/**
 * Greedy decoding with a KV cache (simplecpp::Decoder): generate(prompt[, options]) ->
 * {tokens, prefillMs, decodeMs}; dispose().
 */
export class Decoder {
  constructor(wasm, handle) {
    this._w = wasm;
    this._h = handle;
    this.vocabSize = wasm.withOut(8, (out) => {
      wasm.check(wasm.m._sc_decoder_vocab_size(handle, out));
      return Number(wasm.getI64(out));
    });
  }

  /**
   * Generates from `prompt` (an array of token ids, at least one). options.maxTokens (default
   * 16): how many tokens to generate, the prefill's included; options.stopToken: generation ends
   * after this token; options.warmup: one untimed prefill first (weights are prepared on the first
   * run). The next token is the argmax of the last logits row.
   */
  generate(prompt, options = {}) {
    if (!this._h) throw new SimpleCppError('the decoder has been disposed', 1);
    const ids = Array.from(prompt, (t) => {
      const n = Number(t);
      if (!Number.isSafeInteger(n)) throw new SimpleCppError(`prompt token ${String(t)} is not an integer`, 1);
      return n;
    });
    const maxTokens = options.maxTokens === undefined ? 16 : Number(options.maxTokens);
    if (!Number.isSafeInteger(maxTokens) || maxTokens < 0) {
      throw new SimpleCppError('maxTokens must be a whole number >= 0', 1);
    }
    const stopToken = options.stopToken === undefined ? -1 : Number(options.stopToken);
    const w = this._w;
    const promptPtr = w.malloc(8 * Math.max(ids.length, 1));
    const tokensPtr = w.malloc(8 * Math.max(maxTokens, 1));
    try {
      ids.forEach((t, k) => w.view().setBigInt64(promptPtr + 8 * k, BigInt(t), true));
      return w.withOut(24, (out) => {
        w.check(w.m._sc_decoder_generate(this._h, promptPtr, BigInt(ids.length), BigInt(maxTokens),
                                         BigInt(stopToken), options.warmup ? 1 : 0, tokensPtr,
                                         out, out + 8, out + 16));
        const count = Number(w.getI64(out));
        const v = w.view();
        const tokens = Array.from({length: count}, (_, k) => Number(v.getBigInt64(tokensPtr + 8 * k, true)));
        return {tokens, prefillMs: v.getFloat64(out + 8, true), decodeMs: v.getFloat64(out + 16, true)};
      });
    } finally {
      w.free(promptPtr);
      w.free(tokensPtr);
    }
  }

  /** Frees the decoder's WebAssembly memory. */
  dispose() {
    if (this._h) this._w.m._sc_decoder_free(this._h);
    this._h = 0;
  }
}

export default SimpleCpp;
