#!/usr/bin/env python3
"""Writes bench/gemm.svg (GFLOP/s of float32 GEMM, simplecpp vs peers) from bench_gemm JSON output.

    python3 bench/plot_gemm.py OUT.svg GEMM_JSON...

Standard library only (matplotlib is not installed on the project machines): the SVG is drawn by
hand. Left panel: square M=K=N, 1 thread (solid) and 2 threads (dashed). Right panel: the
transformer shapes (M tokens x KxN weights), 1 thread.
"""
import sys

import bench_json

LIBS = [("GemmSimplecpp", "simplecpp", "#d62728"), ("GemmOneDNN", "oneDNN", "#1f77b4"),
        ("GemmOpenBLAS", "OpenBLAS", "#2ca02c"), ("GemmEigen", "Eigen", "#9467bd")]
SQUARE = [64, 128, 256, 512, 1024]
SKINNY = [(m, k, n) for m in (1, 4, 16) for (k, n) in ((768, 768), (768, 3072), (3072, 768))]


def panel(out, x0, y0, w, h, title, xlabels, series, ymax):
    """series: list of (name, color, dashed, [y or None per x])."""
    out.append(f'<text x="{x0 + w / 2}" y="{y0 - 12}" text-anchor="middle" font-size="14">{title}</text>')
    out.append(f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#444"/>')
    step = 50 if ymax > 200 else 25
    t = 0
    while t <= ymax:
        y = y0 + h - h * t / ymax
        out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{t}</text>')
        t += step
    n = len(xlabels)
    xs = [x0 + w * (i + 0.5) / n for i in range(n)]
    for x, lab in zip(xs, xlabels):
        for j, line in enumerate(lab.split("\n")):
            out.append(f'<text x="{x:.1f}" y="{y0 + h + 16 + 12 * j}" text-anchor="middle" font-size="10">{line}</text>')
    for name, color, dashed, ys in series:
        pts = [(x, y0 + h - h * v / ymax) for x, v in zip(xs, ys) if v is not None]
        if not pts:
            continue
        dash = ' stroke-dasharray="6,4"' if dashed else ""
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        for x, y in pts:
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"/>')


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows = bench_json.load(sys.argv[2:])
    rate = lambda r: r.get("GFLOP/s") if r else None
    sq, sk = [], []
    for fam, name, color in LIBS:
        for t in (1, 2):
            ys = [rate(bench_json.find(rows, fam, M=s, K=s, N=s, threads=t)) for s in SQUARE]
            if any(v is not None for v in ys):
                sq.append((f"{name} {t}T", color, t == 2, ys))
        ys = [rate(bench_json.find(rows, fam, M=m, K=k, N=n, threads=1)) for m, k, n in SKINNY]
        if any(v is not None for v in ys):
            sk.append((name, color, False, ys))
    ymax = max([v for s in sq + sk for v in s[3] if v is not None] + [50])
    ymax = (int(ymax / 50) + 1) * 50
    W, H = 1100, 460
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           '<text x="20" y="200" font-size="12" transform="rotate(-90 20 200)">GFLOP/s (median)</text>']
    panel(out, 70, 50, 420, 300, "float32 GEMM, square M=K=N", [str(s) for s in SQUARE], sq, ymax)
    panel(out, 600, 50, 460, 300, "transformer shapes, 1 thread (M, KxN)",
          [f"M={m}\n{k}x{n}" for m, k, n in SKINNY], sk, ymax)
    ly = 400
    for i, (name, color, dashed, _) in enumerate(sq):
        x = 70 + (i % 4) * 250
        y = ly + (i // 4) * 18
        dash = ' stroke-dasharray="6,4"' if dashed else ""
        out.append(f'<line x1="{x}" x2="{x + 30}" y1="{y}" y2="{y}" stroke="{color}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{x + 36}" y="{y + 4}" font-size="12">{name}</text>')
    out.append("</svg>")
    with open(sys.argv[1], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
