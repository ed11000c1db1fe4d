// Writes the integer-quantization golden models of scripts/wasm-golden.sh: one-node models of the
// int8 ops with fixed weights, zero points and scales (initializers) and seeded random inputs that
// include the extreme values (0, 255, -128, 127; saturating floats), in every zero-point layout
// the ops allow. Their outputs are integers (or exactly determined floats), so the native and the
// WebAssembly builds must agree bit for bit.
// Usage: node make_golden_models.mjs OUT_DIR
// Writes OUT_DIR/NAME.onnx and OUT_DIR/NAME/INPUT.pb, and prints one line per model:
//   NAME<TAB>INPUT=FILE[<TAB>INPUT=FILE...]
import {mkdirSync, writeFileSync} from 'node:fs';
import path from 'node:path';

import {makeSingleNodeModel, writeTensorProtoFile} from './onnx_proto.mjs';

const FLOAT = 1, UINT8 = 2, INT8 = 3, INT32 = 6;
const ARRAYS = {[FLOAT]: Float32Array, [UINT8]: Uint8Array, [INT8]: Int8Array, [INT32]: Int32Array};

// SplitMix-like 32-bit generator (deterministic across node versions).
let state = 0x5eed1234;
function next() {
  state = (state + 0x9e3779b9) >>> 0;
  let z = state;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}
const uniform = (lo, hi) => lo + (hi - lo) * (next() / 4294967296);
const count = (dims) => dims.reduce((a, b) => a * b, 1);

// Random integers over the dtype's whole range, with its extremes at the first positions.
function intData(dtype, dims) {
  const [lo, hi] = dtype === UINT8 ? [0, 255] : dtype === INT8 ? [-128, 127] : [-1000000, 1000000];
  const a = new ARRAYS[dtype](count(dims));
  for (let i = 0; i < a.length; ++i) a[i] = lo + (next() % (hi - lo + 1));
  const extremes = [lo, hi, lo, hi, 0];
  for (let i = 0; i < Math.min(extremes.length, a.length); ++i) a[i] = extremes[i];
  return a;
}
function floatData(dims, lo, hi) {
  return Float32Array.from({length: count(dims)}, () => uniform(lo, hi));
}
const init = (name, dtype, dims, data) => ({name, dtype, dims, data});
const scalar = (name, dtype, value) => init(name, dtype, [], ARRAYS[dtype].of(value));

const models = [];
function model(name, {opType, inputs, outputs, attributes = {}, opset = 21, inputData = {}}) {
  models.push({name, opType, inputs, outputs, attributes, opset, inputData});
}

// MatMulInteger: u8 x s8, scalar a_zero_point, per-column b_zero_point, batched A.
model('matmul_integer_u8s8', {
  opType: 'MatMulInteger',
  inputs: [{name: 'a', dtype: UINT8, dims: [2, 37, 300]},
    init('b', INT8, [300, 129], intData(INT8, [300, 129])), scalar('a_zp', UINT8, 131),
    init('b_zp', INT8, [129], intData(INT8, [129]))],
  outputs: [{name: 'y', dtype: INT32, dims: [2, 37, 129]}],
});
// s8 x u8, per-row a_zero_point, scalar b_zero_point.
model('matmul_integer_s8u8', {
  opType: 'MatMulInteger',
  inputs: [{name: 'a', dtype: INT8, dims: [17, 64]},
    init('b', UINT8, [64, 33], intData(UINT8, [64, 33])),
    init('a_zp', INT8, [17], intData(INT8, [17])), scalar('b_zp', UINT8, 255)],
  outputs: [{name: 'y', dtype: INT32, dims: [17, 33]}],
});
// u8 x u8 without zero points, numpy batch broadcasting of both sides; B a run-time input.
model('matmul_integer_u8u8_broadcast', {
  opType: 'MatMulInteger',
  inputs: [{name: 'a', dtype: UINT8, dims: [3, 1, 5, 70]}, {name: 'b', dtype: UINT8, dims: [2, 70, 19]}],
  outputs: [{name: 'y', dtype: INT32, dims: [3, 2, 5, 19]}],
});
// ConvInteger: u8 x s8, per-output-channel w_zero_point, pads, strides, dilations.
model('conv_integer_u8s8', {
  opType: 'ConvInteger',
  inputs: [{name: 'x', dtype: UINT8, dims: [1, 8, 19, 23]},
    init('w', INT8, [16, 8, 3, 3], intData(INT8, [16, 8, 3, 3])), scalar('x_zp', UINT8, 7),
    init('w_zp', INT8, [16], intData(INT8, [16]))],
  outputs: [{name: 'y', dtype: INT32, dims: [1, 16, 10, 21]}],
  attributes: {pads: [1, 1, 1, 1], strides: [2, 1], dilations: [1, 2]},
});
// Depthwise u8 x u8, SAME_UPPER padding (padded positions act as x_zero_point).
model('conv_integer_depthwise_u8u8', {
  opType: 'ConvInteger',
  inputs: [{name: 'x', dtype: UINT8, dims: [2, 8, 17, 17]},
    init('w', UINT8, [8, 1, 3, 3], intData(UINT8, [8, 1, 3, 3])), scalar('x_zp', UINT8, 200),
    scalar('w_zp', UINT8, 3)],
  outputs: [{name: 'y', dtype: INT32, dims: [2, 8, 9, 9]}],
  attributes: {group: 8, strides: [2, 2], auto_pad: 'SAME_UPPER'},
});
// QLinearMatMul: per-column b scale and zero point, uint8 output (rounding, saturation).
model('qlinear_matmul_u8s8', {
  opType: 'QLinearMatMul',
  inputs: [{name: 'a', dtype: UINT8, dims: [37, 300]}, scalar('a_scale', FLOAT, 0.02),
    scalar('a_zp', UINT8, 128), init('b', INT8, [300, 65], intData(INT8, [300, 65])),
    init('b_scale', FLOAT, [65], floatData([65], 0.001, 0.01)),
    init('b_zp', INT8, [65], new Int8Array(65)), scalar('y_scale', FLOAT, 0.75),
    scalar('y_zp', UINT8, 100)],
  outputs: [{name: 'y', dtype: UINT8, dims: [37, 65]}],
});
// QLinearConv: per-channel w scale, int32 bias, uint8 output.
model('qlinear_conv_u8s8', {
  opType: 'QLinearConv',
  inputs: [{name: 'x', dtype: UINT8, dims: [1, 8, 17, 17]}, scalar('x_scale', FLOAT, 0.05),
    scalar('x_zp', UINT8, 120), init('w', INT8, [12, 8, 3, 3], intData(INT8, [12, 8, 3, 3])),
    init('w_scale', FLOAT, [12], floatData([12], 0.002, 0.02)),
    init('w_zp', INT8, [12], new Int8Array(12)), scalar('y_scale', FLOAT, 0.4),
    scalar('y_zp', UINT8, 90), init('bias', INT32, [12], intData(INT32, [12]))],
  outputs: [{name: 'y', dtype: UINT8, dims: [1, 12, 17, 17]}],
  attributes: {pads: [1, 1, 1, 1]},
});
// DynamicQuantizeLinear: scale (a float division), zero point, uint8 output.
model('dynamic_quantize_linear', {
  opType: 'DynamicQuantizeLinear',
  inputs: [{name: 'x', dtype: FLOAT, dims: [1000]}],
  outputs: [{name: 'y', dtype: UINT8, dims: [1000]}, {name: 'y_scale', dtype: FLOAT, dims: []},
    {name: 'y_zp', dtype: UINT8, dims: []}],
  inputData: {x: floatData([1000], -3.7, 1.9)},
});
// QuantizeLinear per axis (int8 zero points) and blocked (opset 21 block_size); saturating inputs.
model('quantize_linear_per_axis', {
  opType: 'QuantizeLinear',
  inputs: [{name: 'x', dtype: FLOAT, dims: [4, 33, 5]},
    init('scale', FLOAT, [33], floatData([33], 0.01, 0.05)), init('zp', INT8, [33], intData(INT8, [33]))],
  outputs: [{name: 'y', dtype: INT8, dims: [4, 33, 5]}],
  attributes: {axis: -2},
  inputData: {x: floatData([4, 33, 5], -4, 4)},
});
model('quantize_linear_blocked', {
  opType: 'QuantizeLinear',
  inputs: [{name: 'x', dtype: FLOAT, dims: [4, 64]},
    init('scale', FLOAT, [4, 4], floatData([4, 4], 0.01, 0.05)),
    init('zp', UINT8, [4, 4], intData(UINT8, [4, 4]))],
  outputs: [{name: 'y', dtype: UINT8, dims: [4, 64]}],
  attributes: {axis: 1, block_size: 16},
  inputData: {x: floatData([4, 64], -4, 4)},
});
model('dequantize_linear_per_axis', {
  opType: 'DequantizeLinear',
  inputs: [{name: 'x', dtype: INT8, dims: [4, 33, 5]},
    init('scale', FLOAT, [33], floatData([33], 0.01, 0.05)), init('zp', INT8, [33], intData(INT8, [33]))],
  outputs: [{name: 'y', dtype: FLOAT, dims: [4, 33, 5]}],
  attributes: {axis: 1},
});

const outDir = process.argv[2];
if (!outDir) {
  console.error('usage: node make_golden_models.mjs OUT_DIR');
  process.exit(2);
}
for (const m of models) {
  const dir = path.join(outDir, m.name);
  mkdirSync(dir, {recursive: true});
  writeFileSync(path.join(outDir, `${m.name}.onnx`), makeSingleNodeModel(m));
  const args = [];
  for (const v of m.inputs) {
    if (v.data || !v.name) continue;
    const data = m.inputData[v.name] ?? intData(v.dtype, v.dims);
    const file = path.join(dir, `${v.name}.pb`);
    writeTensorProtoFile(file, {data, dims: v.dims}, v.dtype, v.name);
    args.push(`${v.name}=${file}`);
  }
  console.log([m.name, ...args].join('\t'));
}
