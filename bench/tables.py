#!/usr/bin/env python3
"""Markdown tables (medians and ratios) from the benchmark JSON files of bench/run_all.sh.

    python3 bench/tables.py OUT_DIR      (reads OUT_DIR/*.json, prints markdown)
"""
import glob
import os
import sys

import bench_json


def fmt(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def gemm_tables(rows):
    get = lambda fam, **a: (bench_json.find(rows, fam, **a) or {}).get("GFLOP/s")
    out = ["### float32 GEMM (GFLOP/s, median; B constant and prepacked where the library can)", "",
           "| M | K | N | threads | simplecpp | oneDNN | OpenBLAS | Eigen | ours / oneDNN | ours / OpenBLAS |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    shapes = [(s, s, s) for s in (64, 128, 256, 512, 1024)]
    shapes += [(m, k, n) for m in (1, 4, 16) for k, n in ((768, 768), (768, 3072), (3072, 768))]
    for t in (1, 2):
        for m, k, n in shapes:
            a = dict(M=m, K=k, N=n, threads=t)
            ours, dnnl, blas = get("GemmSimplecpp", **a), get("GemmOneDNN", **a), get("GemmOpenBLAS", **a)
            eig = get("GemmEigen", **a)
            if ours is None and dnnl is None:
                continue
            out.append(f"| {m} | {k} | {n} | {t} | {fmt(ours)} | {fmt(dnnl)} | {fmt(blas)} | {fmt(eig)} "
                       f"| {ratio(ours, dnnl)} | {ratio(ours, blas)} |")
    return out


def cpu_rate(r, ops):
    """Ops per second of a 1-thread run from the main thread's CPU time: on the shared machine
    this leaves out the time the thread waited for a core (it still pays for caches other
    processes evicted), so it is far steadier than wall-clock time."""
    return None if not r or not r.get("cpu_ns") else ops / r["cpu_ns"]


def gemm_cpu_table(rows):
    out = ["### float32 GEMM, 1 thread, GFLOP/s from CPU time (load-independent view)", "",
           "| M | K | N | simplecpp | oneDNN | OpenBLAS | Eigen | ours / oneDNN | ours / OpenBLAS |",
           "|---|---|---|---|---|---|---|---|---|"]
    shapes = [(s, s, s) for s in (64, 128, 256, 512, 1024)]
    shapes += [(m, k, n) for m in (1, 4, 16) for k, n in ((768, 768), (768, 3072), (3072, 768))]
    for m, k, n in shapes:
        a = dict(M=m, K=k, N=n, threads=1)
        v = [cpu_rate(bench_json.find(rows, f, **a), 2.0 * m * n * k)
             for f in ("GemmSimplecpp", "GemmOneDNN", "GemmOpenBLAS", "GemmEigen")]
        if v[0] is None and v[1] is None:
            continue
        out.append(f"| {m} | {k} | {n} | {fmt(v[0])} | {fmt(v[1])} | {fmt(v[2])} | {fmt(v[3])} "
                   f"| {ratio(v[0], v[1])} | {ratio(v[0], v[2])} |")
    return out


def qgemm_tables(rows):
    get = lambda fam, **a: (bench_json.find(rows, fam, **a) or {}).get("GOP/s")
    out = ["### int8 GEMM, uint8 A x int8 B -> int32 (GOP/s, median)", "",
           "| M | K | N | threads | simplecpp | oneDNN u8s8s32 | ours / oneDNN |", "|---|---|---|---|---|---|---|"]
    shapes = [(512, 512, 512), (1024, 1024, 1024)]
    shapes += [(m, k, n) for m in (1, 4, 16) for k, n in ((768, 768), (768, 3072), (3072, 768))]
    for t in (1, 2):
        for m, k, n in shapes:
            a = dict(M=m, K=k, N=n, threads=t)
            ours, dnnl = get("QGemmSimplecpp", **a), get("QGemmOneDNN", **a)
            if ours is None and dnnl is None:
                continue
            out.append(f"| {m} | {k} | {n} | {t} | {fmt(ours)} | {fmt(dnnl)} | {ratio(ours, dnnl)} |")
    return out


def conv_tables(rows):
    out = ["### Conv, batch 1 (GFLOP/s, median)", "",
           "| shape | threads | simplecpp (Conv op) | oneDNN | XNNPACK | ours / oneDNN "
           "| ours / XNNPACK | simplecpp float16 | ours f16 / ours f32 |",
           "|---|---|---|---|---|---|---|---|---|"]
    families = ("ConvSimplecpp", "ConvOneDNN", "ConvXNNPACK", "ConvSimplecppF16")
    shapes = sorted({r["args"]["shape"] for r in rows if r["family"].startswith("Conv")})
    for t in (1, 2):
        for s in shapes:
            rs = {f: bench_json.find(rows, f, shape=s, threads=t) for f in families}
            label = next((r["label"] for r in rs.values() if r), str(s))
            ours, dnnl, xnn, half = (rs[f]["GFLOP/s"] if rs[f] else None for f in families)
            out.append(f"| {label} | {t} | {fmt(ours)} | {fmt(dnnl)} | {fmt(xnn)} | {ratio(ours, dnnl)} "
                       f"| {ratio(ours, xnn)} | {fmt(half)} | {ratio(half, ours)} |")
    return out


def elementwise_tables(rows):
    out = ["### Element-wise kernels, 1 thread (million elements/s by CPU time, median)", "",
           "| op | shape | simplecpp | Eigen | ours / Eigen |", "|---|---|---|---|---|"]
    for op in ("Softmax", "LayerNorm", "Gelu", "Add"):
        for r in rows:
            if r["family"] != op + "Simplecpp":
                continue
            e = bench_json.find(rows, op + "Eigen", **r["args"])
            ours = r.get("items_per_second")
            eig = e.get("items_per_second") if e else None
            shape = " x ".join(str(v) for v in r["args"].values())
            out.append(f"| {op} | {shape} | {fmt(ours and ours / 1e6, 0)} | {fmt(eig and eig / 1e6, 0)} "
                       f"| {ratio(ours, eig)} |")
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    load = lambda prefix: bench_json.load(sorted(glob.glob(os.path.join(d, prefix + "*.json"))))
    lines = []
    for prefix, fn in (("gemm", gemm_tables), ("gemm", gemm_cpu_table), ("qgemm", qgemm_tables), ("conv", conv_tables),
                       ("elementwise", elementwise_tables)):
        rows = load(prefix + "_")
        if rows:
            lines += fn(rows) + [""]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
