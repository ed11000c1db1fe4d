// The JS package in a real browser: serves examples/web (examples/web/serve.mjs) with the package
// under pkg/, opens it in headless chromium through playwright-core, clicks "Run builtin CNN", then
// picks the same model as a file, and checks that
//   1. both page results equal the same model run under node through the same package
//      (index.mjs) and the same code (examples/web/run_model.mjs, inputs.mjs): same output names,
//      dtypes and dims, and bit-identical values (the same .wasm on the same inputs does the same
//      float operations in the same order; NaN counts as equal to NaN);
//   2. the page logged no console error, threw no page error and had no failed request.
// The built-in CNN comes from the module when it was built with SIMPLECPP_WASM_JS_BUILTINS=ON, else
// from the CLI's export-builtin (--cli; the page then fetches it as models/cnn.onnx).
// Usage: node browser_test.mjs --package DIR [--cli PATH] [--playwright DIR] [--chromium PATH]
//          [--screenshot FILE] [--work-dir DIR] [--timeout-ms N]
//   --package DIR     index.mjs + simplecpp.mjs + simplecpp.wasm (default: this package folder)
//   --playwright DIR  an npm prefix whose node_modules holds playwright-core (default: node's
//                     own resolution)
//   --chromium PATH   default /usr/bin/chromium (Debian's)
// Exits 1 on any failure.
import {execFileSync} from 'node:child_process';
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {createRequire} from 'node:module';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const WEB = path.resolve(HERE, '../../../examples/web');

function parseArgs(argv) {
  const args = {package: path.resolve(HERE, '..'), cli: '', playwright: '', chromium: '/usr/bin/chromium',
    screenshot: '', workDir: '', timeoutMs: 60000};
  for (let i = 0; i < argv.length; ++i) {
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      return argv[++i];
    };
    if (argv[i] === '--package') args.package = path.resolve(value());
    else if (argv[i] === '--cli') args.cli = value();
    else if (argv[i] === '--playwright') args.playwright = path.resolve(value());
    else if (argv[i] === '--chromium') args.chromium = value();
    else if (argv[i] === '--screenshot') args.screenshot = path.resolve(value());
    else if (argv[i] === '--work-dir') args.workDir = path.resolve(value());
    else if (argv[i] === '--timeout-ms') args.timeoutMs = Number(value());
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return args;
}

const started = performance.now();
const args = parseArgs(process.argv.slice(2));
const {SimpleCpp} = await import(pathToFileURL(path.join(args.package, 'index.mjs')).href);
const {runModel} = await import(pathToFileURL(path.join(WEB, 'run_model.mjs')).href);
const {startServer} = await import(pathToFileURL(path.join(WEB, 'serve.mjs')).href);
// playwright-core is a CommonJS package: require it from the given npm prefix.
const {chromium} = args.playwright ?
    createRequire(path.join(args.playwright, 'package.json'))('playwright-core') :
    await import('playwright-core');

let failures = 0;
function check(cond, what) {
  if (cond) {
    console.log(`ok   ${what}`);
  } else {
    ++failures;
    console.error(`FAIL: ${what}`);
  }
}

// Compares a page result with node's: names, dtypes, dims, and every value bit for bit.
function compareResults(browser, node, label) {
  const names = Object.keys(node.outputs);
  check(JSON.stringify(Object.keys(browser.outputs)) === JSON.stringify(names),
        `${label}: output names ${JSON.stringify(Object.keys(browser.outputs))} (node: ${JSON.stringify(names)})`);
  for (const name of names) {
    const b = browser.outputs[name];
    const n = node.outputs[name];
    if (!b) continue;
    check(b.dtype === n.dtype && JSON.stringify(b.dims) === JSON.stringify(n.dims),
          `${label}: ${name} is ${b.dtype} [${b.dims}] (node: ${n.dtype} [${n.dims}])`);
    let mismatches = 0;
    let maxAbs = 0;
    const count = Math.max(b.data.length, n.data.length);
    for (let i = 0; i < count; ++i) {
      // Object.is: -0 differs from 0, NaN equals NaN; 64-bit integers are decimal strings.
      if (!Object.is(b.data[i], n.data[i])) {
        ++mismatches;
        if (typeof b.data[i] === 'number' && typeof n.data[i] === 'number') {
          maxAbs = Math.max(maxAbs, Math.abs(b.data[i] - n.data[i]));
        }
      }
    }
    check(mismatches === 0, `${label}: ${name}: ${n.data.length} values bit-identical to node` +
          (mismatches ? ` (${mismatches} differ, max abs diff ${maxAbs})` : ''));
  }
}

const workDir = args.workDir || mkdtempSync(path.join(os.tmpdir(), 'simplecpp-browser-test-'));
const modelsDir = path.join(workDir, 'models');
mkdirSync(modelsDir, {recursive: true});
const modelFile = path.join(modelsDir, 'cnn.onnx');

// The CNN's bytes, and the source the page must report for them.
const sc = await SimpleCpp.create();
const moduleHasCnn = sc.builtinModelNames().includes('cnn');
let bytes;
if (moduleHasCnn) {
  bytes = sc.builtinModel('cnn');
  writeFileSync(modelFile, bytes);
} else {
  if (!args.cli) throw new Error('this module has no built-in models: pass --cli so that cnn comes from export-builtin');
  const isJs = /\.m?js$/.test(args.cli);
  const [cmd, argv] = isJs ? [process.execPath, [args.cli]] : [args.cli, []];
  execFileSync(cmd, [...argv, 'export-builtin', 'cnn', modelFile], {stdio: ['ignore', 'ignore', 'inherit']});
  bytes = new Uint8Array(readFileSync(modelFile));
}
const expectedSource = moduleHasCnn ? 'built into the module' : 'models/cnn.onnx';
console.log(`cnn: ${bytes.length} bytes, ${expectedSource === 'models/cnn.onnx' ? `from ${args.cli}` : 'from the module'}`);
const reference = runModel(sc, bytes);

const server = await startServer({packageDir: args.package, modelsDir});
let browser = null;
const problems = [];  // console errors, page errors, failed requests
const timings = {};
try {
  const launchStart = performance.now();
  browser = await chromium.launch({executablePath: args.chromium, args: ['--no-sandbox']});
  const page = await browser.newPage({viewport: {width: 1000, height: 900}});
  timings.launchMs = performance.now() - launchStart;
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
    else if (msg.type() === 'warning') console.log(`page warning: ${msg.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });

  const pageStart = performance.now();
  await page.goto(server.url);
  await page.waitForFunction(() => window.simplecppReady || window.simplecppError, null, {timeout: args.timeoutMs});
  timings.pageReadyMs = performance.now() - pageStart;
  check(await page.evaluate(() => window.simplecppReady === true),
        `page ready (${await page.evaluate(() => window.simplecppError || 'no error')})`);

  // Clears the page's last result, does `action`, and waits for the result it produces.
  const nextResult = async (label, action) => {
    await page.evaluate(() => {
      window.simplecppResult = undefined;
      window.simplecppError = undefined;
    });
    await action();
    await page.waitForFunction(() => window.simplecppResult || window.simplecppError, null, {timeout: args.timeoutMs});
    const {result, error} = await page.evaluate(() => ({result: window.simplecppResult, error: window.simplecppError}));
    check(!error && result, `${label}: the page produced a result${error ? ` (error: ${error})` : ''}`);
    return result;
  };

  const builtin = await nextResult('builtin CNN', () => page.click('#run-builtin'));
  if (builtin) {
    check(builtin.source === expectedSource, `builtin CNN: source '${builtin.source}' (expected '${expectedSource}')`);
    compareResults(builtin, reference, 'builtin CNN');
    timings.browser = builtin.timings;
  }

  const picked = await nextResult('picked cnn.onnx', () => page.setInputFiles('#model-file', modelFile));
  if (picked) {
    check(picked.model === 'cnn.onnx' && picked.source === 'picked file',
          `picked file: reported as ${picked.model} (${picked.source})`);
    compareResults(picked, reference, 'picked cnn.onnx');
  }

  if (args.screenshot) {
    await page.screenshot({path: args.screenshot, fullPage: true});
    console.log(`screenshot: ${args.screenshot}`);
  }
} finally {
  if (browser) await browser.close();
  await server.close();
  if (!args.workDir) rmSync(workDir, {recursive: true, force: true});
}

for (const p of problems) console.error(p);
check(problems.length === 0, `no console errors, page errors or failed requests (${problems.length})`);

const f = (x) => (x === undefined ? '-' : `${x.toFixed(2)} ms`);
const b = timings.browser || {};
const n = reference.timings;
console.log(`timings         browser      node`);
console.log(`  model load    ${f(b.loadMs).padEnd(12)} ${f(n.loadMs)}`);
console.log(`  first run     ${f(b.firstRunMs).padEnd(12)} ${f(n.firstRunMs)}`);
console.log(`  median run    ${f(b.medianRunMs).padEnd(12)} ${f(n.medianRunMs)}   (of ${n.runs})`);
console.log(`  browser: module instantiation ${f(b.createMs)}, chromium launch ${f(timings.launchMs)}, ` +
            `page ready ${f(timings.pageReadyMs)}`);
console.log(`browser test: ${failures ? `${failures} FAILED` : 'passed'} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
process.exit(failures ? 1 : 0);
