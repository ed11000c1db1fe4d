// ONNX Runtime (onnxruntime-node, CPU) side of the decoder benchmark: the same greedy loop as
// `simplecpp generate` on the same .onnx file.
//
//   node ort_generate.mjs MODEL --prompt 1,2,3 --tokens N [--threads T] [--opt LEVEL] [--warmup]
//
// One prefill run on the prompt, then N decode runs each feeding the previous argmax token;
// present.{i}.* of a run become past_key_values.{i}.* of the next (ORT tensors passed as they
// are); attention_mask / position_ids are fed when the model has them. Prints the N + 1 generated
// ids, the prefill time and the decode tokens/s (session creation not counted), in the format of
// `simplecpp generate`. --warmup: one untimed prefill first.
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { halfToNumber } from './npy.mjs';
import { option } from './args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, 'package.json'));
const ort = require('onnxruntime-node');

function row(values) {
  return new ort.Tensor('int64', BigInt64Array.from(values, (v) => BigInt(v)), [1, values.length]);
}

async function main() {
  const args = process.argv.slice(2);
  const model = args[0];
  const promptText = option(args, '--prompt');
  if (!model || !promptText) {
    console.error('usage: node ort_generate.mjs MODEL --prompt 1,2,3 --tokens N [--threads T] [--opt LEVEL]');
    process.exit(2);
  }
  const prompt = promptText.split(',').map(Number);
  const steps = Number(option(args, '--tokens', '16'));
  const threads = Number(option(args, '--threads', '1'));
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: option(args, '--opt', 'all'),
  });
  const meta = session.inputMetadata || [];
  const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const feeds = {};
  for (const name of pastNames) {
    const m = Array.isArray(meta) ? meta.find((x) => x.name === name) : null;
    const dims = m && m.shape ? m.shape.map((d) => (typeof d === 'number' ? d : 0)) : null;
    if (!dims || dims.length !== 4) throw new Error(`cannot read the shape of ${name}`);
    dims[0] = 1;
    dims[2] = 0;
    const half = m.type === 'float16';
    feeds[name] = new ort.Tensor(half ? 'float16' : 'float32', half ? new Uint16Array(0) : new Float32Array(0), dims);
  }
  const hasMask = session.inputNames.includes('attention_mask');
  const hasPos = session.inputNames.includes('position_ids');
  if (args.includes('--warmup')) {
    // One untimed prefill, as `simplecpp generate --warmup` does.
    const warm = { ...feeds, input_ids: row(prompt) };
    if (hasMask) warm.attention_mask = row(new Array(prompt.length).fill(1));
    if (hasPos) warm.position_ids = row(prompt.map((_, i) => i));
    await session.run(warm);
  }
  let ids = prompt;
  const generated = [];
  let prefillMs = 0;
  let decodeMs = 0;
  for (let step = 0; step <= steps; ++step) {
    const past = feeds[pastNames[0]].dims[2];
    feeds.input_ids = row(ids);
    if (hasMask) feeds.attention_mask = row(new Array(past + ids.length).fill(1));
    if (hasPos) feeds.position_ids = row(ids.map((_, i) => past + i));
    const t0 = performance.now();
    const out = await session.run(feeds);
    const logits = out.logits;
    const vocab = logits.dims[2];
    const base = (logits.dims[1] - 1) * vocab;
    const value = logits.type === 'float16' && logits.data instanceof Uint16Array
      ? (j) => halfToNumber(logits.data[base + j]) : (j) => logits.data[base + j];
    let best = 0;
    for (let j = 1; j < vocab; ++j) if (value(j) > value(best)) best = j;
    const ms = performance.now() - t0;
    if (step === 0) prefillMs = ms; else decodeMs += ms;
    for (const name of pastNames) feeds[name] = out[name.replace('past_key_values.', 'present.')];
    generated.push(best);
    ids = [best];
  }
  console.log(`prompt: ${prompt.length} tokens, layers: ${pastNames.length / 2}, threads: ${threads}`);
  console.log(`generated: ${generated.join(',')}`);
  console.log(`prefill: ${prefillMs.toFixed(2)} ms (${prompt.length} tokens)`);
  if (steps > 0) {
    console.log(`decode: ${steps} steps in ${decodeMs.toFixed(2)} ms, ${(1000 * steps / decodeMs).toFixed(2)} tokens/s`);
  }
}

main().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
