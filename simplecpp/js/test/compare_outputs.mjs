// Compares the CLI outputs (output_K.pb) of two runs folder by folder: integer outputs must be
// identical, float outputs within |a - e| <= atol + rtol |e| (default: the conformance tolerance,
// rtol 1e-3, atol 1e-5). Prints the max abs/rel difference per output; exit code 1 on any excess.
// Usage: node compare_outputs.mjs EXPECTED_DIR ACTUAL_DIR [--rtol R] [--atol A]
import {existsSync} from 'node:fs';
import path from 'node:path';

import {compareTensors, readTensorProtoFile} from './onnx_proto.mjs';

const argv = process.argv.slice(2);
const opts = {rtol: 1e-3, atol: 1e-5};
const dirs = [];
for (let i = 0; i < argv.length; ++i) {
  if (argv[i] === '--rtol') opts.rtol = Number(argv[++i]);
  else if (argv[i] === '--atol') opts.atol = Number(argv[++i]);
  else dirs.push(argv[i]);
}
if (dirs.length !== 2) {
  console.error('usage: compare_outputs.mjs EXPECTED_DIR ACTUAL_DIR [--rtol R] [--atol A]');
  process.exit(2);
}
let ok = true;
let k = 0;
for (; existsSync(path.join(dirs[0], `output_${k}.pb`)); ++k) {
  const expected = readTensorProtoFile(path.join(dirs[0], `output_${k}.pb`));
  const actualFile = path.join(dirs[1], `output_${k}.pb`);
  if (!existsSync(actualFile)) {
    console.log(`output_${k} (${expected.name}): missing in ${dirs[1]}`);
    ok = false;
    continue;
  }
  const actual = readTensorProtoFile(actualFile);
  let c;
  if (actual.dtype !== expected.dtype || actual.name !== expected.name) {
    c = {ok: false, maxAbs: NaN, maxRel: NaN, mismatches: NaN,
      message: `dtype/name ${actual.dtype}/${actual.name} != ${expected.dtype}/${expected.name}`};
  } else {
    c = compareTensors(actual, expected, opts);
  }
  console.log(`output_${k} ${expected.name} dtype ${expected.dtype} [${expected.dims}]: ` +
              `max abs diff ${c.maxAbs.toExponential(3)}, max rel diff ${c.maxRel.toExponential(3)}, ` +
              `${c.mismatches} values outside tolerance${c.ok ? '' : ': ' + c.message}`);
  ok = ok && c.ok;
}
if (k === 0) {
  console.log(`no output_K.pb in ${dirs[0]}`);
  ok = false;
}
process.exit(ok ? 0 : 1);
