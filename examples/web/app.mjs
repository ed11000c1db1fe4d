// The example page: runs the built-in CNN or a picked .onnx file with the JS package (served under
// pkg/) on generated inputs, shows the outputs and timings, and leaves them on window for tests:
//   window.simplecppReady   true once the module is instantiated
//   window.simplecppResult  {model, source, inputs, outputs: {name: {dims, dtype, data}}, timings}
//   window.simplecppError   the message of the last failure (also logged with console.error)
import {SimpleCpp} from './pkg/index.mjs';
import {runModel} from './run_model.mjs';

const FIRST_VALUES = 8;
const $ = (id) => document.getElementById(id);

function setStatus(text, isError = false) {
  $('status').textContent = text;
  $('status').classList.toggle('error', isError);
}

function fail(e) {
  const message = e && e.message ? e.message : String(e);
  window.simplecppError = message;
  setStatus(`error: ${message}`, true);
  console.error('simplecpp example:', message);
}

function row(cells, className = []) {
  const tr = document.createElement('tr');
  cells.forEach((text, i) => {
    const td = document.createElement('td');
    td.textContent = text;
    if (className[i]) td.className = className[i];
    tr.append(td);
  });
  return tr;
}

const shape = (dims) => `[${dims.join(', ')}]`;
const formatValue = (x) => (typeof x === 'number' && !Number.isInteger(x) ? x.toPrecision(6) : String(x));
const ms = (x) => `${x.toFixed(2)} ms`;

function render(result) {
  $('model-name').textContent = `${result.model} (${result.source})`;
  const inputs = $('inputs').tBodies[0];
  inputs.replaceChildren(...Object.entries(result.inputs).map(([name, t]) => row([name, t.dtype, shape(t.dims)])));
  const outputs = $('outputs').tBodies[0];
  outputs.replaceChildren(...Object.entries(result.outputs).map(([name, t]) => {
    const first = t.data.slice(0, FIRST_VALUES).map(formatValue).join(', ');
    const more = t.data.length > FIRST_VALUES ? `, ... (${t.data.length} values)` : '';
    return row([name, t.dtype, shape(t.dims), first + more], [null, null, null, 'values']);
  }));
  const tm = result.timings;
  $('timings').tBodies[0].replaceChildren(
      row(['module instantiation (page load)', ms(tm.createMs)]),
      row(['model load (loadModel + createSession)', ms(tm.loadMs)]),
      row(['first run', ms(tm.firstRunMs)]),
      row([`median of ${tm.runs} further runs`, ms(tm.medianRunMs)]));
  $('result').hidden = false;
}

let sc = null;
let createMs = 0;

// Runs `getBytes()` (-> {bytes, source}) as model `label`, with the buttons off meanwhile.
async function run(label, getBytes) {
  window.simplecppResult = undefined;
  window.simplecppError = undefined;
  $('run-builtin').disabled = $('model-file').disabled = true;
  setStatus(`running ${label}...`);
  try {
    const {bytes, source} = await getBytes();
    // Let the status line paint before the (synchronous) runs take the main thread.
    await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
    const r = runModel(sc, bytes);
    const result = {model: label, source, ...r, timings: {createMs, ...r.timings}};
    render(result);
    setStatus(`${label}: ${Object.keys(result.outputs).length} output(s), median run ${ms(result.timings.medianRunMs)}`);
    window.simplecppResult = result;
  } catch (e) {
    fail(e);
  } finally {
    $('run-builtin').disabled = $('model-file').disabled = false;
  }
}

// The built-in CNN: from the module when it was built with its demo models
// (SIMPLECPP_WASM_JS_BUILTINS=ON), else models/cnn.onnx from the server (the CLI's export-builtin).
async function builtinCnn() {
  if (sc.builtinModelNames().includes('cnn')) return {bytes: sc.builtinModel('cnn'), source: 'built into the module'};
  const response = await fetch('models/cnn.onnx');
  if (!response.ok) {
    throw new Error('this module has no built-in models and the server has no models/cnn.onnx ' +
                    '(serve.mjs --models DIR, with DIR/cnn.onnx from `simplecpp export-builtin cnn DIR/cnn.onnx`)');
  }
  return {bytes: new Uint8Array(await response.arrayBuffer()), source: 'models/cnn.onnx'};
}

$('run-builtin').addEventListener('click', () => run('builtin CNN', builtinCnn));
$('model-file').addEventListener('change', (event) => {
  const file = event.target.files[0];
  if (file) run(file.name, async () => ({bytes: new Uint8Array(await file.arrayBuffer()), source: 'picked file'}));
});

try {
  const t0 = performance.now();
  sc = await SimpleCpp.create();
  createMs = performance.now() - t0;
  const names = sc.builtinModelNames();
  setStatus(`ready (module instantiated in ${ms(createMs)}; built-in models: ${names.length ? names.join(', ') : 'none, the CNN comes from models/cnn.onnx'})`);
  $('run-builtin').disabled = $('model-file').disabled = false;
  window.simplecppReady = true;
} catch (e) {
  fail(e);
}
