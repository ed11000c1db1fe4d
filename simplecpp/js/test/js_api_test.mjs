// Test of the JavaScript API (index.mjs over the wasm module) under node:
//  1. the built-in models run through the JS API and match the CLI's output_K.pb for the same
//     model bytes and inputs (the native CLI when --cli names one; a .js CLI runs under node),
//     within the conformance tolerance (rtol 1e-3, atol 1e-5). The model bytes come from the
//     module (sc.builtinModel) when it was built with them (SIMPLECPP_WASM_JS_BUILTINS), else
//     from the CLI's export-builtin (--cli is then required);
//  2. every dtype the C API takes round-trips through an Identity model with its typed array;
//  3. error paths throw SimpleCppError with the library's message, and the module keeps working;
//  4. dispose() frees memory (repeated load/run/dispose does not grow the heap).
// Usage: node js_api_test.mjs --package DIR [--cli PATH] [--work-dir DIR]
//   DIR holds index.mjs, simplecpp.mjs, simplecpp.wasm (build-wasm/js, or the npm package folder).
import {execFileSync} from 'node:child_process';
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';

import {compareTensors, makeSingleNodeModel, readTensorProtoFile,
  writeTensorProtoFile} from './onnx_proto.mjs';

function parseArgs(argv) {
  const args = {package: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'),
    cli: '', workDir: path.join(os.tmpdir(), `simplecpp-js-test-${process.pid}`)};
  for (let i = 0; i < argv.length; ++i) {
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      return argv[++i];
    };
    if (argv[i] === '--package') args.package = path.resolve(next());
    else if (argv[i] === '--cli') args.cli = next();
    else if (argv[i] === '--work-dir') args.workDir = path.resolve(next());
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
const {SimpleCpp, SimpleCppError, DTYPES} = await import(pathToFileURL(path.join(args.package, 'index.mjs')).href);

let checks = 0;
let failures = 0;
function check(cond, what) {
  ++checks;
  if (!cond) {
    ++failures;
    console.error(`FAIL: ${what}`);
  }
}
function expectThrows(fn, pattern, what, code) {
  ++checks;
  try {
    fn();
  } catch (e) {
    const ok = e instanceof SimpleCppError && e instanceof Error && pattern.test(e.message) &&
        (code === undefined || e.code === code);
    if (!ok) {
      ++failures;
      console.error(`FAIL: ${what}: threw ${e && e.name} code ${e && e.code}: ${e && e.message}`);
    } else {
      console.log(`ok   ${what}: ${e.codeName}: ${e.message.split('\n')[0].slice(0, 110)}`);
    }
    return;
  }
  ++failures;
  console.error(`FAIL: ${what}: did not throw`);
}

// Deterministic inputs: xorshift32 floats in [-1, 1).
function randomFloats(n, seed) {
  let s = seed >>> 0 || 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; ++i) {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    out[i] = (s / 2 ** 32) * 2 - 1;
  }
  return out;
}

// Floats in [-1, 1); integers 0..9 (as the CLI generates them); bool 0/1.
function randomData(dtype, n, seed) {
  const f = randomFloats(n, seed);
  if (dtype.name === 'float32' || dtype.name === 'float64') return dtype.arrayType.from(f);
  if (dtype.name === 'bool') return Uint8Array.from(f, (x) => (x > 0 ? 1 : 0));
  const k = Array.from(f, (x) => Math.floor((x + 1) * 5));
  if (dtype.arrayType === BigInt64Array || dtype.arrayType === BigUint64Array) {
    return dtype.arrayType.from(k, (x) => BigInt(x));
  }
  if (dtype.arrayType === Uint16Array) throw new Error(`no generator for ${dtype.name} inputs`);
  return dtype.arrayType.from(k);
}

// Runs the CLI (native binary, or a .js file under this node).
function runCli(cliArgs) {
  const isJs = args.cli.endsWith('.js') || args.cli.endsWith('.mjs');
  const [cmd, argv] = isJs ? [process.execPath, [args.cli, ...cliArgs]] : [args.cli, cliArgs];
  return execFileSync(cmd, argv, {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']});
}

const sc = await SimpleCpp.create();
mkdirSync(args.workDir, {recursive: true});

// The built-in models: from the module when it has them, else from the CLI.
const moduleNames = sc.builtinModelNames();
const moduleHasBuiltins = moduleNames.length > 0;
function cliBuiltinNames() {
  // "unknown built-in model 'x' (known: cnn, transformer, ...)" on stderr.
  try {
    runCli(['export-builtin', 'no-such-model', path.join(args.workDir, 'none.onnx')]);
  } catch (e) {
    const m = /known: ([^)]*)\)/.exec(String(e.stderr || ''));
    if (m) return m[1].split(',').map((x) => x.trim()).filter((x) => x);
  }
  throw new Error('the CLI did not list its built-in models');
}
if (!moduleHasBuiltins && !args.cli) {
  throw new Error('this module has no built-in models: pass --cli so they come from export-builtin');
}
// The llama decoders (~110 M float32 parameters) need a KV-cache loop, not random inputs; they
// are tested natively (tests/simplecpp/api/llama_test.cc).
const names = (moduleHasBuiltins ? moduleNames : cliBuiltinNames()).filter((n) => !n.startsWith('llama'));
console.log(`built-in models from the ${moduleHasBuiltins ? 'module' : 'CLI'}: ${names.join(', ')}`);
function builtinBytes(name) {
  if (moduleHasBuiltins) return sc.builtinModel(name);
  const file = path.join(args.workDir, `${name}-cli-export.onnx`);
  runCli(['export-builtin', name, file]);
  return new Uint8Array(readFileSync(file));
}

// ---- 1. built-in models against the CLI ----
check(names.includes('cnn') && names.includes('transformer'), `builtin names ${names}`);
for (const name of names) {
  const bytes = builtinBytes(name);
  check(bytes instanceof Uint8Array && bytes.length > 100, `${name}: builtin model bytes`);
  const model = sc.loadModel(bytes);
  console.log(`${name}: inputs ${JSON.stringify(model.inputs)} outputs ${JSON.stringify(model.outputs)}`);
  check(model.inputs.length >= 1 && model.outputs.length >= 1, `${name}: has inputs and outputs`);
  const feeds = {};
  let seed = 7;
  for (const v of model.inputs) {
    check(DTYPES[v.dtype] && Array.isArray(v.dims), `${name}: input ${v.name} described`);
    const dims = v.dims.map((d) => (d < 0 ? 1 : d));
    feeds[v.name] = {data: randomData(DTYPES[v.dtype], dims.reduce((a, b) => a * b, 1), seed++), dims};
  }
  const session = model.createSession();
  const out = session.run(feeds);
  const again = session.run(feeds);  // a session runs many times, same result
  check(Object.keys(out).length === model.outputs.length, `${name}: one result per output`);
  for (const v of model.outputs) {
    const r = out[v.name];
    check(r && r.dtype === v.dtype && r.data instanceof DTYPES[v.dtype].arrayType,
          `${name}: output ${v.name} has dtype ${v.dtype} and its typed array`);
    check(r.dims.every((d, i) => v.dims[i] < 0 || d === v.dims[i]), `${name}: output dims ${r.dims} match ${v.dims}`);
    check(r.data.every((x, i) => Object.is(x, again[v.name].data[i])), `${name}: repeated run identical`);
  }

  if (args.cli) {
    const dir = path.join(args.workDir, name);
    mkdirSync(dir, {recursive: true});
    // The CLI runs the bytes this module exported; they must equal the CLI's own export (the
    // model builder is deterministic) when the CLI knows the model. (Bytes that came from the
    // CLI need no comparison.)
    const modelFile = path.join(dir, `${name}.onnx`);
    writeFileSync(modelFile, bytes);
    const cliModel = path.join(dir, `${name}-cli.onnx`);
    let exported = false;
    if (moduleHasBuiltins) {
      try {
        runCli(['export-builtin', name, cliModel]);
        exported = true;
      } catch (e) {
        console.log(`${name}: the CLI cannot export it (${String(e.stderr || e).trim()}): byte comparison skipped`);
      }
    }
    if (exported) {
      check(Buffer.compare(readFileSync(cliModel), Buffer.from(bytes)) === 0,
            `${name}: wasm builtinModel bytes equal the CLI's export-builtin`);
    }
    const cliArgs = ['run', modelFile, '--output-dir', dir, '--threads', '1'];
    for (const v of model.inputs) {
      const file = path.join(dir, `input_${v.name}.pb`);
      writeTensorProtoFile(file, feeds[v.name], DTYPES[v.dtype].code, v.name);
      cliArgs.push('--input', `${v.name}=${file}`);
    }
    runCli(cliArgs);
    model.outputs.forEach((v, k) => {
      const file = path.join(dir, `output_${k}.pb`);
      check(existsSync(file), `${name}: CLI wrote ${file}`);
      const expected = readTensorProtoFile(file);
      const c = compareTensors(out[v.name], expected);
      console.log(`${name}: ${v.name} vs CLI: max abs diff ${c.maxAbs.toExponential(3)}, ` +
                  `max rel diff ${c.maxRel.toExponential(3)}, ${c.mismatches} outside tolerance`);
      check(c.ok, `${name}: ${v.name} matches the CLI (${c.message})`);
    });
  } else {
    console.log(`${name}: no --cli given, golden comparison skipped`);
  }
  session.dispose();
  model.dispose();
}

// ---- 2. every dtype through Identity ----
function sampleData(d, n) {
  const A = d.arrayType;
  const len = n * d.elementsPerValue;
  if (A === BigInt64Array) return BigInt64Array.from({length: len}, (_, i) => BigInt(i * 1e12) - 3n);
  if (A === BigUint64Array) return BigUint64Array.from({length: len}, (_, i) => 2n ** 63n + BigInt(i));
  if (A === Float32Array || A === Float64Array) return A.from({length: len}, (_, i) => i * 0.25 - 1.5);
  if (d.name === 'bool') return Uint8Array.from({length: len}, (_, i) => i & 1);
  return A.from({length: len}, (_, i) => (i * 37 + 11) & 0x7f);
}
const coreDtypes = ['float32', 'uint8', 'int8', 'uint16', 'int16', 'int32', 'int64', 'bool', 'float16',
  'float64', 'uint32', 'uint64', 'bfloat16'];
const dtypeResults = [];
for (const d of Object.values(DTYPES)) {
  if (d.elementsPerValue === 0) continue;  // 4/2-bit types: packed, checked below by byte size only
  const dims = [2, 3];
  const bytes = makeSingleNodeModel({opType: 'Identity',
    inputs: [{name: 'x', dtype: d.code, dims}], outputs: [{name: 'y', dtype: d.code, dims}]});
  const data = sampleData(d, 6);
  try {
    const model = sc.loadModel(bytes);
    check(model.inputs[0].dtype === d.name, `${d.name}: model input dtype reported`);
    const session = model.createSession();
    const y = session.run({x: {data, dims}}).y;
    check(y.dtype === d.name && y.data instanceof d.arrayType && y.dims.join() === '2,3' &&
          y.data.length === data.length && y.data.every((v, i) => v === data[i]),
          `${d.name}: Identity round-trips a ${d.arrayType.name}`);
    session.dispose();
    model.dispose();
    dtypeResults.push(`${d.name}:ok`);
  } catch (e) {
    // The API must still fail cleanly; core dtypes must work.
    check(e instanceof SimpleCppError, `${d.name}: failure is a SimpleCppError (${e})`);
    check(!coreDtypes.includes(d.name), `${d.name}: Identity runs (${e.message})`);
    dtypeResults.push(`${d.name}:unsupported(${e.codeName})`);
  }
}
console.log(`dtypes: ${dtypeResults.join(' ')}`);

// ---- 3. error paths ----
expectThrows(() => sc.loadModel(new Uint8Array([0x0a, 0xff, 0xff, 0x01, 0x02])), /./,
             'bad model bytes', 2);
expectThrows(() => sc.loadModel(new Uint8Array(0)), /./, 'empty model bytes');
expectThrows(() => sc.loadModel('not bytes'), /Uint8Array/, 'loadModel of a string', 1);
expectThrows(() => sc.builtinModel('no-such-model'), /no-such-model/, 'unknown built-in model');
if (!moduleHasBuiltins) {
  expectThrows(() => sc.builtinModel('cnn'), /SIMPLECPP_WASM_JS_BUILTINS/,
               'built-in model of a module built without them');
}
{
  const model = sc.loadModel(makeSingleNodeModel({opType: 'Relu',
    inputs: [{name: 'x', dtype: 1, dims: [2, 3]}], outputs: [{name: 'y', dtype: 1, dims: [2, 3]}]}));
  const session = model.createSession();
  const x = {data: new Float32Array([-1, 2, -3, 4, -5, 6]), dims: [2, 3]};
  expectThrows(() => session.run({nope: x}), /./, 'unknown input name', 1);
  expectThrows(() => session.run({x}, ['nope']), /nope/, 'unknown output name');
  expectThrows(() => session.run({x: {data: new Float32Array(5), dims: [2, 3]}}), /bytes/,
               'data size does not match dims', 1);
  expectThrows(() => session.run({x: {data: new Float64Array(6), dims: [2, 3]}}), /Float32Array/,
               'typed array of the wrong dtype', 1);
  expectThrows(() => session.run({x: {data: new Float32Array(6), dims: [2, -3]}}), /dimension/,
               'negative dimension');
  expectThrows(() => session.run({x: {data: new Int32Array(6), dims: [2, 3], dtype: 'int32'}}), /./,
               'input of the wrong dtype', undefined);
  expectThrows(() => session.run({x: {data: new Float32Array(6), dims: [2, 3], dtype: 'quux'}}), /quux/,
               'unknown dtype name', 1);
  expectThrows(() => model.createSession({threads: 4}), /thread/, 'threads other than 1', 1);
  // Still usable after errors; plain arrays are accepted.
  const y = session.run({x: {data: [-1, 2, -3, 4, -5, 6], dims: [2, 3]}}).y;
  check(y.data.join() === '0,2,0,4,0,6', `Relu after errors gives ${Array.from(y.data)}`);
  session.dispose();
  session.dispose();  // idempotent
  expectThrows(() => session.run({x}), /disposed/, 'run after dispose', 1);
  model.dispose();
  expectThrows(() => model.createSession(), /disposed/, 'createSession after dispose', 1);
}

// ---- 4. dispose frees memory ----
{
  const bytes = builtinBytes('cnn');
  const probe = sc.loadModel(bytes);
  const v = probe.inputs[0];
  probe.dispose();
  const feeds = {};
  feeds[v.name] = {data: randomFloats(v.dims.reduce((a, b) => a * b, 1), 3), dims: v.dims};
  const heapAfter = [];
  for (let i = 0; i < 30; ++i) {
    const model = sc.loadModel(bytes);
    const session = model.createSession();
    session.run(feeds);
    session.dispose();
    model.dispose();
    if (i === 5 || i === 29) heapAfter.push(sc._w.u8.length);
  }
  check(heapAfter[0] === heapAfter[1], `heap stable over load/run/dispose cycles (${heapAfter})`);
}

// ---- 5. greedy decoding with a KV cache (model.createDecoder) ----
{
  const model = sc.loadModel(builtinBytes('llama-tiny-int4'));
  const prompt = [5, 17, 3, 42, 9];
  const steps = 6;
  // Reference without a cache: every step runs the whole sequence from an empty past.
  const session = model.createSession();
  const pasts = model.inputs.filter((v) => v.name.startsWith('past_key_values.'));
  const hasMask = model.inputs.some((v) => v.name === 'attention_mask');
  const sequence = [...prompt];
  const expected = [];
  let vocab = 0;
  for (let step = 0; step < steps; ++step) {
    const feeds = {input_ids: {data: BigInt64Array.from(sequence, (t) => BigInt(t)), dims: [1, sequence.length]}};
    for (const v of pasts) feeds[v.name] = {data: new Float32Array(0), dims: [1, v.dims[1], 0, v.dims[3]]};
    if (hasMask) feeds.attention_mask = {data: new BigInt64Array(sequence.length).fill(1n), dims: [1, sequence.length]};
    const logits = session.run(feeds, ['logits']).logits;
    vocab = logits.dims[2];
    const base = (logits.dims[1] - 1) * vocab;
    let best = 0;
    for (let j = 1; j < vocab; ++j) if (logits.data[base + j] > logits.data[base + best]) best = j;
    expected.push(best);
    sequence.push(best);
  }
  session.dispose();

  const decoder = model.createDecoder();
  check(decoder.vocabSize === vocab, `decoder vocabSize ${decoder.vocabSize} is logits' last dim ${vocab}`);
  const r = decoder.generate(prompt, {maxTokens: steps});
  check(r.tokens.join() === expected.join(),
        `decoder tokens ${r.tokens} equal the cache-free reference ${expected}`);
  check(r.prefillMs > 0 && r.decodeMs > 0, `decoder timings ${r.prefillMs} / ${r.decodeMs} ms`);
  check(decoder.generate(prompt, {maxTokens: steps, warmup: true}).tokens.join() === expected.join(),
        'decoder: a second call (with a warm-up) starts from an empty cache');
  const stop = expected[1];
  check(decoder.generate(prompt, {maxTokens: steps, stopToken: stop}).tokens.join() ===
            expected.slice(0, expected.indexOf(stop) + 1).join(),
        'decoder: generation ends after the stop token');
  check(decoder.generate(prompt, {maxTokens: 0}).tokens.length === 0, 'decoder: maxTokens 0');
  if (args.cli) {
    // The CLI's generate (--tokens counts the steps after the prefill's token).
    const out = runCli(['generate', '--builtin', 'llama-tiny-int4', '--prompt', prompt.join(','),
                        '--tokens', String(steps - 1)]);
    const line = out.split('\n').find((l) => l.startsWith('generated:')) || '';
    check(line.trim() === `generated: ${expected.join(',')}`, `the CLI's generate printed '${line.trim()}'`);
  }
  expectThrows(() => decoder.generate([]), /at least one token/, 'decoder: empty prompt', 1);
  expectThrows(() => decoder.generate([vocab]), /outside the vocabulary/, 'decoder: token outside the vocabulary', 1);
  expectThrows(() => decoder.generate(prompt, {maxTokens: -1}), /maxTokens/, 'decoder: negative maxTokens', 1);
  expectThrows(() => model.createDecoder({threads: 2}), /thread/, 'decoder: threads other than 1', 1);
  decoder.dispose();
  decoder.dispose();  // idempotent
  expectThrows(() => decoder.generate(prompt), /disposed/, 'generate after dispose', 1);
  model.dispose();
  const relu = sc.loadModel(makeSingleNodeModel({opType: 'Relu',
    inputs: [{name: 'x', dtype: 1, dims: [2]}], outputs: [{name: 'y', dtype: 1, dims: [2]}]}));
  expectThrows(() => relu.createDecoder(), /input_ids/, 'decoder of a model that is no decoder', 1);
  relu.dispose();
}

console.log(`${checks - failures}/${checks} checks passed`);
process.exit(failures ? 1 : 0);
