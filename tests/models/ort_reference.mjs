// Runs an ONNX model with onnxruntime-node and writes its outputs, as the independent reference
// for tests/models/real_models_test.cc (and the memory comparison in tests/models/README.md).
//   node ort_reference.mjs MODEL.onnx DIR
// DIR/inputs.json: [{"name", "dtype" ("float32"|"int64"|"int32"|"uint8"|"int8"), "dims", "file"}], files of raw
// little-endian data in DIR. Writes DIR/outputs.json ([{"name", "dims", "file"}]) and raw float32
// files. onnxruntime-node is resolved from $SIMPLECPP_ORT_NODE_DIR (a folder holding
// node_modules/onnxruntime-node), default bench/. One intra-op thread, all graph optimizations
// off except the basic ones, so ORT's numbers stay close to the plain op definitions.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const [modelPath, dir] = process.argv.slice(2);
if (!modelPath || !dir) {
  console.error('usage: node ort_reference.mjs MODEL.onnx DIR');
  process.exit(2);
}
const base = process.env.SIMPLECPP_ORT_NODE_DIR || path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../bench');
const require = createRequire(path.join(path.resolve(base), 'package.json'));
const ort = require('onnxruntime-node');

const session = await ort.InferenceSession.create(modelPath, {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  graphOptimizationLevel: process.env.SIMPLECPP_ORT_OPT || 'basic',
});
const feeds = {};
for (const inp of JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8'))) {
  const buf = fs.readFileSync(path.join(dir, inp.file));
  const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength).slice();
  const arrays = { int64: BigInt64Array, int32: Int32Array, uint8: Uint8Array, int8: Int8Array, float32: Float32Array };
  if (!arrays[inp.dtype]) throw new Error(`input ${inp.name}: dtype ${inp.dtype} not handled`);
  const data = new arrays[inp.dtype](bytes.buffer);
  feeds[inp.name] = new ort.Tensor(inp.dtype, data, inp.dims);
}
const results = await session.run(feeds);
const manifest = [];
let k = 0;
for (const name of session.outputNames) {
  const t = results[name];
  const data = t.type === 'float32' ? t.data : Float32Array.from(t.data, Number);
  const file = `output_${k++}.raw`;
  fs.writeFileSync(path.join(dir, file), Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  manifest.push({ name, dims: t.dims.map(Number), file });
}
fs.writeFileSync(path.join(dir, 'outputs.json'), JSON.stringify(manifest));
