// Seeded, realistic inputs for bench/real_models.sh and tests/models/real_models_check.sh: what
// the real models see in use, not uniform noise (it changes what the kernels see: sparsity after
// ReLU / HardSwish, saturation of the sigmoids, LSTM gates).
//
//   node real_inputs.mjs KIND DIR [--seed S]
//
// KIND:
//   det      x [1,3,480,640]: a page-like image (light background with smooth gradients and a
//            faint vignette, a few lines of dark glyph-like strokes, a little sensor noise), RGB in
//            0..255, then ImageNet-normalized: (v/255 - mean[c]) / std[c].
//   rec      x [1,3,48,320]: a text line (light, slightly uneven background, dark glyph strokes
//            filling most of the height), then (v/255 - 0.5) / 0.5.
//   cls      x [1,3,48,192]: the same kind of text line, 192 wide, same normalization.
//   silero   input [1,512]: 32 ms of voiced speech at 16 kHz (f0 ~ 120-200 Hz with vibrato and
//            8 harmonics shaped by two formant peaks, a syllable envelope, a little noise, peak
//            ~0.3); state [2,1,128] zeros; sr int64 scalar 16000.
//
// Writes DIR/NAME.npy (float32, int64 as declared) and, for every float32 input, DIR/NAME.f16.npy
// (the same values rounded to half, for the float16 variants), and prints NAME per line.
import fs from 'node:fs';
import path from 'node:path';
import { numberToHalf, writeNpy } from './npy.mjs';

// mulberry32: small, seeded, deterministic on every platform.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A grey image (one plane; the channels get small tints later) with drawing helpers.
class Canvas {
  constructor(h, w, fill) {
    this.h = h; this.w = w;
    this.v = new Float64Array(h * w).fill(fill);
  }
  // Darkens toward `ink` along a segment of half-width r, anti-aliased over one pixel.
  stroke(x0, y0, x1, y1, r, ink) {
    const minX = Math.max(0, Math.floor(Math.min(x0, x1) - r - 1));
    const maxX = Math.min(this.w - 1, Math.ceil(Math.max(x0, x1) + r + 1));
    const minY = Math.max(0, Math.floor(Math.min(y0, y1) - r - 1));
    const maxY = Math.min(this.h - 1, Math.ceil(Math.max(y0, y1) + r + 1));
    const dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy || 1e-9;
    for (let y = minY; y <= maxY; ++y) {
      for (let x = minX; x <= maxX; ++x) {
        const t = Math.min(1, Math.max(0, ((x - x0) * dx + (y - y0) * dy) / len2));
        const ex = x - (x0 + t * dx), ey = y - (y0 + t * dy);
        const cover = Math.min(1, Math.max(0, r + 0.5 - Math.sqrt(ex * ex + ey * ey)));
        if (cover > 0) {
          const i = y * this.w + x;
          this.v[i] += (ink - this.v[i]) * cover;
        }
      }
    }
  }
  // One glyph in the box [x, x+gw] x [top, top+gh]: 2-4 strokes from a small stroke vocabulary
  // (stems, bars, diagonals, hooks), as CJK and Latin glyphs are built.
  glyph(rand, x, top, gw, gh, r, ink) {
    const n = 2 + Math.floor(rand() * 3);
    for (let s = 0; s < n; ++s) {
      const kind = Math.floor(rand() * 4);
      const a = rand(), b = rand();
      if (kind === 0) {  // stem
        const cx = x + gw * (0.15 + 0.7 * a);
        this.stroke(cx, top + gh * 0.1 * b, cx, top + gh * (0.7 + 0.3 * b), r, ink);
      } else if (kind === 1) {  // bar
        const cy = top + gh * (0.1 + 0.8 * a);
        this.stroke(x + gw * 0.1 * b, cy, x + gw * (0.6 + 0.4 * b), cy, r, ink);
      } else if (kind === 2) {  // diagonal
        this.stroke(x + gw * 0.2 * a, top + gh * (0.2 + 0.2 * b), x + gw * (0.7 + 0.3 * b),
                    top + gh * (0.8 + 0.2 * a), r, ink);
      } else {  // hook: a short bar and a stem
        const cx = x + gw * (0.3 + 0.5 * a), cy = top + gh * (0.2 + 0.3 * b);
        this.stroke(x + gw * 0.1, cy, cx, cy, r, ink);
        this.stroke(cx, cy, cx - gw * 0.15, top + gh * 0.95, r, ink);
      }
    }
  }
  // A line of glyphs with word gaps from x0 to x1.
  textLine(rand, x0, x1, top, gh, r, ink) {
    let x = x0;
    while (x < x1) {
      const gw = gh * (0.6 + 0.4 * rand());
      if (x + gw > x1) break;
      this.glyph(rand, x, top, gw, gh, r, ink + 25 * rand());
      x += gw + gh * (rand() < 0.15 ? 0.8 : 0.15);
    }
  }
}

// RGB planes from the grey canvas: a slight per-channel tint and sensor noise, clamped to 0..255,
// then (v/255 - mean[c]) / std[c].
function normalize(canvas, rand, mean, std, tint) {
  const { h, w, v } = canvas;
  const out = new Float32Array(3 * h * w);
  for (let c = 0; c < 3; ++c) {
    for (let i = 0; i < h * w; ++i) {
      const noise = (rand() + rand() + rand() - 1.5) * 4;  // ~ N(0, 2) grey levels
      const p = Math.min(255, Math.max(0, v[i] * tint[c] + noise));
      out[c * h * w + i] = (p / 255 - mean[c]) / std[c];
    }
  }
  return out;
}

function detImage(rand) {
  const h = 480, w = 640;
  const cv = new Canvas(h, w, 0);
  const gx = 10 * (rand() - 0.5), gy = 20 * (rand() - 0.5);
  for (let y = 0; y < h; ++y) {
    for (let x = 0; x < w; ++x) {
      const u = x / w - 0.5, t = y / h - 0.5;
      // paper: light, a linear illumination gradient, a low-frequency ripple, a vignette
      cv.v[y * w + x] = 225 + gx * u * 2 + gy * t * 2 + 6 * Math.sin(2 * Math.PI * (u * 1.3 + t * 0.7))
        - 40 * (u * u + t * t);
    }
  }
  // a darker header block, like a banner or a photo on the page
  for (let y = 20; y < 90; ++y) for (let x = 40; x < 280; ++x) cv.v[y * w + x] -= 60 + 30 * (x - 40) / 240;
  const lines = 6 + Math.floor(rand() * 3);
  let top = 110;
  for (let l = 0; l < lines && top < h - 40; ++l) {
    const gh = 16 + Math.floor(rand() * 14);
    const x0 = 30 + rand() * 40, x1 = w - 30 - rand() * 260;
    cv.textLine(rand, x0, x1, top, gh, gh > 24 ? 1.6 : 1.1, 25 + 30 * rand());
    top += gh + 14 + rand() * 22;
  }
  cv.textLine(rand, 60, 260, 40, 26, 1.8, 245);  // light text on the dark block
  return normalize(cv, rand, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225], [1.0, 0.98, 0.95]);
}

function lineImage(rand, w) {
  const h = 48;
  const cv = new Canvas(h, w, 0);
  const base = 215 + 20 * rand(), slope = 15 * (rand() - 0.5);
  for (let y = 0; y < h; ++y) {
    for (let x = 0; x < w; ++x) cv.v[y * w + x] = base + slope * (x / w) + 4 * Math.sin(y / 7 + x / 40);
  }
  const gh = 30 + Math.floor(rand() * 8);
  cv.textLine(rand, 4 + rand() * 6, w - 4, (h - gh) / 2, gh, 1.5, 20 + 30 * rand());
  const half = [0.5, 0.5, 0.5];
  return normalize(cv, rand, half, half, [1.0, 0.99, 0.97]);
}

function speech(rand) {
  const n = 512, sr = 16000;
  const out = new Float32Array(n);
  const f0 = 120 + 80 * rand();
  const formants = [[500 + 300 * rand(), 90], [1200 + 900 * rand(), 120]];
  const phases = Array.from({ length: 8 }, () => 2 * Math.PI * rand());
  let phase = 0;
  for (let i = 0; i < n; ++i) {
    const t = i / sr;
    phase += 2 * Math.PI * f0 * (1 + 0.02 * Math.sin(2 * Math.PI * 5 * t)) / sr;
    let s = 0;
    for (let k = 1; k <= 8; ++k) {
      const f = k * f0;
      let gain = 1 / k;
      for (const [fc, bw] of formants) gain += 2 / (1 + ((f - fc) / bw) ** 2) / k;
      s += gain * Math.sin(k * phase + phases[k - 1]);
    }
    // syllable envelope: the frame sits on the rising half of a ~200 ms syllable
    const env = 0.35 + 0.65 * Math.sin(Math.PI * (0.15 + 0.6 * i / n)) ** 2;
    out[i] = s * env;
  }
  let peak = 0;
  for (const s of out) peak = Math.max(peak, Math.abs(s));
  const scale = 0.3 / peak;
  for (let i = 0; i < n; ++i) out[i] = out[i] * scale + 0.01 * (rand() + rand() + rand() - 1.5);
  return out;
}

function main() {
  const args = process.argv.slice(2);
  const [kind, dir] = args;
  const seedAt = args.indexOf('--seed');
  const seed = seedAt >= 0 ? Number(args[seedAt + 1]) : 2024;
  if (!kind || !dir) {
    console.error('usage: node real_inputs.mjs det|rec|cls|silero DIR [--seed S]');
    process.exit(2);
  }
  const rand = rng(seed);
  let tensors;
  if (kind === 'det') tensors = [['x', 'float32', [1, 3, 480, 640], detImage(rand)]];
  else if (kind === 'rec') tensors = [['x', 'float32', [1, 3, 48, 320], lineImage(rand, 320)]];
  else if (kind === 'cls') tensors = [['x', 'float32', [1, 3, 48, 192], lineImage(rand, 192)]];
  else if (kind === 'silero') {
    tensors = [['input', 'float32', [1, 512], speech(rand)],
      ['state', 'float32', [2, 1, 128], new Float32Array(256)],
      ['sr', 'int64', [], BigInt64Array.of(16000n)]];
  } else {
    console.error(`real_inputs: unknown kind ${kind}`);
    process.exit(2);
  }
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, type, dims, data] of tensors) {
    writeNpy(path.join(dir, `${name}.npy`), type, dims, data);
    if (type === 'float32') {
      writeNpy(path.join(dir, `${name}.f16.npy`), 'float16', dims, Uint16Array.from(data, numberToHalf));
    }
    console.log(name);
  }
}

main();
