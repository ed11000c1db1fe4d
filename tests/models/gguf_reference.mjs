// Reads a GGUF file with @huggingface/gguf (an independent parser) and prints its header,
// metadata and tensor table as canonical text, the independent reference of
// tests/models/gguf_node_test.cc (which prints the same text from simplecpp's reader).
//   node gguf_reference.mjs FILE.gguf
// @huggingface/gguf is resolved from $SIMPLECPP_ORT_NODE_DIR (a folder holding node_modules),
// default bench/.
// Lines: "version V", "tensor_count N", "kv_count M", "data_offset D", then one
// "kv KEY TYPE VALUE" per metadata entry (file order) and one
// "tensor NAME type=T dims=[d0,d1,...] offset=O" per tensor. Values: integers in decimal, floats
// as the hex of their IEEE bits (f32:xxxxxxxx, f64:xxxxxxxxxxxxxxxx), bools true/false, strings
// as JSON, arrays as [TYPE:v,v,...].
import { createRequire } from 'node:module';
import path from 'node:path';

const file = process.argv[2];
if (!file) {
  console.error('usage: node gguf_reference.mjs FILE.gguf');
  process.exit(2);
}
const base = process.env.SIMPLECPP_ORT_NODE_DIR || path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../bench');
const require = createRequire(path.join(path.resolve(base), 'package.json'));
const { gguf } = require('@huggingface/gguf');

const { tensorInfos, tensorDataOffset, typedMetadata } = await gguf(path.resolve(file), {
  allowLocalFile: true,
  typedMetadata: true,
});

function hex(n, digits) { return n.toString(16).padStart(digits, '0'); }
function format(type, value) {
  switch (type) {
    case 6: { const b = new DataView(new ArrayBuffer(4)); b.setFloat32(0, value, true); return 'f32:' + hex(b.getUint32(0, true), 8); }
    case 12: { const b = new DataView(new ArrayBuffer(8)); b.setFloat64(0, value, true); return 'f64:' + hex(b.getBigUint64(0, true), 16); }
    case 7: return value ? 'true' : 'false';
    case 8: return JSON.stringify(value);
    default: return String(value);
  }
}

const lines = [];
lines.push(`version ${typedMetadata.version.value}`);
lines.push(`tensor_count ${typedMetadata.tensor_count.value}`);
lines.push(`kv_count ${typedMetadata.kv_count.value}`);
lines.push(`data_offset ${tensorDataOffset}`);
for (const [key, entry] of Object.entries(typedMetadata)) {
  if (key === 'version' || key === 'tensor_count' || key === 'kv_count') continue;
  let text;
  if (entry.type === 9) {
    text = `[${entry.subType}:` + entry.value.map((v) => format(entry.subType, v)).join(',') + ']';
  } else {
    text = format(entry.type, entry.value);
  }
  lines.push(`kv ${key} ${entry.type} ${text}`);
}
for (const t of tensorInfos) {
  lines.push(`tensor ${t.name} type=${t.dtype} dims=[${t.shape.join(',')}] offset=${t.offset}`);
}
process.stdout.write(lines.join('\n') + '\n');
