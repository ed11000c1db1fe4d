// Greedy decoding in WebAssembly: simplecpp's JS package vs onnxruntime-web 1.30 (wasm EP, 1
// thread, SIMD) in the same node process, on the same decoder file, with the loop of
// `simplecpp generate`: a prompt, then N decode steps each feeding the previous argmax token,
// present.{i}.* moved into past_key_values.{i}.* (attention_mask fed when the model has it).
//
//   node wasm_generate.mjs --package DIR [--prompt 1,2,3] [--tokens N] [--rounds R] MODEL.onnx
//
// DIR holds simplecpp's index.mjs + simplecpp.mjs + simplecpp.wasm (build-wasm/js). Per runtime:
// one untimed prefill (weight preparation), then R rounds alternating the runtimes, each a timed
// prefill + N decode steps; prints the medians over rounds of the prefill ms and decode tokens/s,
// and whether both generated the same tokens. simplecpp is timed twice: the loop above over
// session.run (every run copies the cache into and out of WebAssembly memory), and the package's
// decoder (model.createDecoder().generate: the cache stays inside). onnxruntime-web is resolved from bench/node_modules.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, takeOption } from './args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, 'package.json'));

function argmaxLast(data, dims) {
  const vocab = dims[2];
  const base = (dims[1] - 1) * vocab;
  let best = 0;
  for (let i = 1; i < vocab; ++i) if (data[base + i] > data[base + best]) best = i;
  return best;
}

const ids = (values) => BigInt64Array.from(values, (v) => BigInt(v));

// One generation: prefill of `prompt`, then `steps` decode runs. `run(feeds)` takes and returns
// {name: {data, dims}}; `pastDims` are the cache dims with past length 0.
async function generate(run, pastNames, pastDims, hasMask, prompt, steps) {
  const past = {};
  for (const name of pastNames) past[name] = { data: new Float32Array(0), dims: pastDims[name] };
  let next = prompt;
  const tokens = [];
  let prefillMs = 0;
  let decodeMs = 0;
  for (let step = 0; step <= steps; ++step) {
    const pastLen = past[pastNames[0]].dims[2];
    const feeds = { ...past, input_ids: { data: ids(next), dims: [1, next.length] } };
    if (hasMask) feeds.attention_mask = { data: ids(new Array(pastLen + next.length).fill(1)), dims: [1, pastLen + next.length] };
    const t0 = performance.now();
    const out = await run(feeds);
    const ms = performance.now() - t0;
    if (step === 0) prefillMs = ms; else decodeMs += ms;
    const token = argmaxLast(out.logits.data, out.logits.dims);
    tokens.push(token);
    for (const name of pastNames) past[name] = out[name.replace('past_key_values.', 'present.')];
    next = [token];
  }
  return { tokens, prefillMs, tokensPerS: steps / (decodeMs / 1000) };
}

async function main() {
  const args = process.argv.slice(2);
  const pkg = takeOption(args, '--package');
  const prompt = takeOption(args, '--prompt', Array.from({ length: 32 }, (_, i) => i + 1).join(',')).split(',').map(Number);
  const steps = Number(takeOption(args, '--tokens', '32'));
  const rounds = Number(takeOption(args, '--rounds', '3'));
  const file = args[0];
  if (!pkg || !file) {
    console.error('usage: node wasm_generate.mjs --package DIR [--prompt 1,2,3] [--tokens N] [--rounds R] MODEL.onnx');
    process.exit(2);
  }
  const bytes = new Uint8Array(fs.readFileSync(file));
  const { SimpleCpp } = await import(pathToFileURL(path.resolve(pkg, 'index.mjs')).href);
  const ort = require('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  if ('simd' in ort.env.wasm) ort.env.wasm.simd = true;
  ort.env.wasm.proxy = false;

  const sc = await SimpleCpp.create();
  let t0 = performance.now();
  const model = sc.loadModel(bytes);
  const session = model.createSession();
  const oursLoadMs = performance.now() - t0;
  t0 = performance.now();
  const ortSession = await ort.InferenceSession.create(bytes, {
    executionProviders: ['wasm'], graphOptimizationLevel: 'all', executionMode: 'sequential',
  });
  const ortLoadMs = performance.now() - t0;

  const pastNames = model.inputs.map((v) => v.name).filter((n) => n.startsWith('past_key_values.'));
  const pastDims = {};
  for (const v of model.inputs) {
    if (pastNames.includes(v.name)) pastDims[v.name] = v.dims.map((d, i) => (i === 0 ? 1 : i === 2 ? 0 : d));
  }
  const hasMask = model.inputs.some((v) => v.name === 'attention_mask');

  const ours = async (feeds) => session.run(feeds);
  const theirs = async (feeds) => {
    const f = {};
    for (const [name, t] of Object.entries(feeds)) {
      f[name] = new ort.Tensor(t.data instanceof BigInt64Array ? 'int64' : 'float32', t.data, t.dims);
    }
    const out = await ortSession.run(f);
    const r = {};
    for (const [name, t] of Object.entries(out)) r[name] = { data: t.data, dims: t.dims };
    return r;
  };

  // The package's own decoder (model.createDecoder): the cache stays in WebAssembly memory.
  const decoder = model.createDecoder();
  const viaDecoder = async () => {
    const r = decoder.generate(prompt, {maxTokens: steps + 1});
    return { tokens: r.tokens, prefillMs: r.prefillMs, tokensPerS: steps / (r.decodeMs / 1000) };
  };

  // Warm-up prefills (weight preparation on first run), untimed.
  await generate(ours, pastNames, pastDims, hasMask, prompt, 0);
  await generate(theirs, pastNames, pastDims, hasMask, prompt, 0);
  decoder.generate(prompt, {maxTokens: 1});
  const o = [], t = [], d = [];
  for (let r = 0; r < rounds; ++r) {
    o.push(await generate(ours, pastNames, pastDims, hasMask, prompt, steps));
    d.push(await viaDecoder());
    t.push(await generate(theirs, pastNames, pastDims, hasMask, prompt, steps));
  }
  const same = o[0].tokens.join(',') === t[0].tokens.join(',');
  console.log(`${path.basename(file)}: prompt ${prompt.length} tokens, ${steps} decode steps, ${rounds} rounds (medians)`);
  console.log(`  simplecpp-wasm session.run loop: load ${oursLoadMs.toFixed(0)} ms | prefill ${median(o.map((x) => x.prefillMs)).toFixed(1)} ms | decode ${median(o.map((x) => x.tokensPerS)).toFixed(1)} tokens/s`);
  console.log(`  simplecpp-wasm decoder: prefill ${median(d.map((x) => x.prefillMs)).toFixed(1)} ms | decode ${median(d.map((x) => x.tokensPerS)).toFixed(1)} tokens/s (same tokens as the run loop: ${d[0].tokens.join(',') === o[0].tokens.join(',') ? 'yes' : 'no'})`);
  console.log(`  onnxruntime-web: load ${ortLoadMs.toFixed(0)} ms | prefill ${median(t.map((x) => x.prefillMs)).toFixed(1)} ms | decode ${median(t.map((x) => x.tokensPerS)).toFixed(1)} tokens/s`);
  console.log(`  same tokens: ${same ? 'yes' : 'no'} (ours ${o[0].tokens.slice(0, 8).join(',')}..., ORT-web ${t[0].tokens.slice(0, 8).join(',')}...)`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
